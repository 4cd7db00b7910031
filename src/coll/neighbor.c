/* Neighborhood collectives: every rank receives one block from each
 * in-neighbor and sends one to each out-neighbor, all at once. Neighbors come
 * from the communicator's process topology (ferry_topo_neighbors). Blocks
 * from the same neighbor listed twice are matched in list order, except on a
 * Cartesian topology (below). */
#include "coll/coll_impl.h"
#include "core/comm.h"
#include "core/topo.h"

struct nbrs {
    int indeg, outdeg;
    const int *in, *out;
};

static int nbrs(struct ferry_sched *s, struct nbrs *nb)
{
    return ferry_topo_neighbors(s->comm, &nb->indeg, &nb->in, &nb->outdeg, &nb->out);
}

/* The out-neighbor block sent k-th. On a Cartesian topology the block for
 * the -1 neighbor of a dimension is received from the +1 direction of that
 * neighbor's own list: in a periodic dimension of size 1 or 2 both
 * neighbors are the same process, and the receiver, which receives from its
 * -1 neighbor first, must get the sender's +1 block first (MPI-4.0 7.6
 * spells this out). So per dimension the +1 block goes first. */
static int send_order(struct ferry_sched *s, int k)
{
    const struct ferry_topo *t = s->comm->topo;
    return t && t->kind == MPI_CART ? k ^ 1 : k;
}

int neighbor_allgather_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct nbrs nb;
    int rc = nbrs(s, &nb);
    if (rc)
        return rc;
    for (int i = 0; i < nb.indeg; i++)
        sched_recv(s, blk(a->rbuf, (size_t)i, a->rcount, a->rdt), a->rcount, a->rdt, nb.in[i]);
    for (int i = 0; i < nb.outdeg; i++)
        sched_send(s, a->sbuf, a->scount, a->sdt, nb.out[i]);
    return MPI_SUCCESS;
}

int neighbor_allgatherv_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct nbrs nb;
    int rc = nbrs(s, &nb);
    if (rc)
        return rc;
    for (int i = 0; i < nb.indeg; i++)
        sched_recv(s, blk(a->rbuf, (size_t)a->rdispls[i], 1, a->rdt), (size_t)a->rcounts[i], a->rdt, nb.in[i]);
    for (int i = 0; i < nb.outdeg; i++)
        sched_send(s, a->sbuf, a->scount, a->sdt, nb.out[i]);
    return MPI_SUCCESS;
}

int neighbor_alltoall_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct nbrs nb;
    int rc = nbrs(s, &nb);
    if (rc)
        return rc;
    for (int i = 0; i < nb.indeg; i++)
        sched_recv(s, blk(a->rbuf, (size_t)i, a->rcount, a->rdt), a->rcount, a->rdt, nb.in[i]);
    for (int k = 0; k < nb.outdeg; k++) {
        int i = send_order(s, k);
        sched_send(s, blk(a->sbuf, (size_t)i, a->scount, a->sdt), a->scount, a->sdt, nb.out[i]);
    }
    return MPI_SUCCESS;
}

int neighbor_alltoallv_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct nbrs nb;
    int rc = nbrs(s, &nb);
    if (rc)
        return rc;
    for (int i = 0; i < nb.indeg; i++)
        sched_recv(s, blk(a->rbuf, (size_t)a->rdispls[i], 1, a->rdt), (size_t)a->rcounts[i], a->rdt, nb.in[i]);
    for (int k = 0; k < nb.outdeg; k++) {
        int i = send_order(s, k);
        sched_send(s, blk(a->sbuf, (size_t)a->sdispls[i], 1, a->sdt), (size_t)a->scounts[i], a->sdt, nb.out[i]);
    }
    return MPI_SUCCESS;
}

int neighbor_alltoallw_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct nbrs nb;
    int rc = nbrs(s, &nb);
    if (rc)
        return rc;
    for (int i = 0; i < nb.indeg; i++)
        sched_recv(s, (char *)a->rbuf + a->rdispls_a[i], (size_t)a->rcounts[i], a->rdts[i], nb.in[i]);
    for (int k = 0; k < nb.outdeg; k++) {
        int i = send_order(s, k);
        sched_send(s, (const char *)a->sbuf + a->sdispls_a[i], (size_t)a->scounts[i], a->sdts[i], nb.out[i]);
    }
    return MPI_SUCCESS;
}
