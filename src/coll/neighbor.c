/* Neighborhood collectives: every rank receives one block from each
 * in-neighbor and sends one to each out-neighbor, all at once. Neighbors come
 * from the communicator's process topology (ferry_topo_neighbors). Blocks
 * from the same neighbor listed twice are matched in list order. */
#include "coll/coll_impl.h"

struct nbrs {
    int indeg, outdeg;
    const int *in, *out;
};

static int nbrs(struct ferry_sched *s, struct nbrs *nb)
{
    return ferry_topo_neighbors(s->comm, &nb->indeg, &nb->in, &nb->outdeg, &nb->out);
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
    for (int i = 0; i < nb.outdeg; i++)
        sched_send(s, blk(a->sbuf, (size_t)i, a->scount, a->sdt), a->scount, a->sdt, nb.out[i]);
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
    for (int i = 0; i < nb.outdeg; i++)
        sched_send(s, blk(a->sbuf, (size_t)a->sdispls[i], 1, a->sdt), (size_t)a->scounts[i], a->sdt, nb.out[i]);
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
    for (int i = 0; i < nb.outdeg; i++)
        sched_send(s, (const char *)a->sbuf + a->sdispls_a[i], (size_t)a->scounts[i], a->sdts[i], nb.out[i]);
    return MPI_SUCCESS;
}
