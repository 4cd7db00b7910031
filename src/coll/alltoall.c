/* Alltoall, alltoallv and alltoallw algorithms. The three are reduced to
 * one plan: for every peer i, what to send it (pointer, count, type) and
 * where to receive its data. MPI_IN_PLACE first copies the receive buffer's
 * blocks to packed scratch memory that then serves as the send side. */
#include "coll/coll_impl.h"
#include "core/util.h"

struct xfer {
    const void *sp;
    size_t sc;
    struct ferry_datatype *st;
    void *rp;
    size_t rc;
    struct ferry_datatype *rt;
};

static struct xfer *plan(struct ferry_sched *s, const struct ferry_coll_args *a, enum ferry_coll_kind kind)
{
    int n = s->size;
    struct xfer *x = sched_alloc(s, (size_t)n * sizeof *x);
    for (int i = 0; i < n; i++) {
        struct xfer *e = &x[i];
        switch (kind) {
        case FERRY_COLL_ALLTOALL:
            e->rp = blk(a->rbuf, (size_t)i, a->rcount, a->rdt), e->rc = a->rcount, e->rt = a->rdt;
            if (a->sbuf != MPI_IN_PLACE)
                e->sp = blk(a->sbuf, (size_t)i, a->scount, a->sdt), e->sc = a->scount, e->st = a->sdt;
            break;
        case FERRY_COLL_ALLTOALLV:
            e->rp = blk(a->rbuf, (size_t)a->rdispls[i], 1, a->rdt), e->rc = (size_t)a->rcounts[i], e->rt = a->rdt;
            if (a->sbuf != MPI_IN_PLACE)
                e->sp = blk(a->sbuf, (size_t)a->sdispls[i], 1, a->sdt), e->sc = (size_t)a->scounts[i], e->st = a->sdt;
            break;
        default:   /* alltoallw: byte displacements, a type per peer */
            e->rp = (char *)a->rbuf + a->rdispls[i], e->rc = (size_t)a->rcounts[i], e->rt = a->rdts[i];
            if (a->sbuf != MPI_IN_PLACE)
                e->sp = (const char *)a->sbuf + a->sdispls[i], e->sc = (size_t)a->scounts[i], e->st = a->sdts[i];
        }
    }
    if (a->sbuf == MPI_IN_PLACE) {
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += ferry_dt_bytes(x[i].rt, x[i].rc);
        char *tmp = sched_alloc(s, total);
        for (int i = 0; i < n; i++) {
            size_t b = ferry_dt_bytes(x[i].rt, x[i].rc);
            sched_copy(s, x[i].rp, x[i].rc, x[i].rt, tmp, b, sched_byte());
            x[i].sp = tmp, x[i].sc = b, x[i].st = sched_byte();
            tmp += b;
        }
    }
    return x;
}

/* All sends and receives at once: one step. */
static void linear(struct ferry_sched *s, const struct xfer *x)
{
    int n = s->size, r = s->rank;
    for (int k = 1; k < n; k++) {
        int from = (r - k + n) % n;
        sched_recv(s, x[from].rp, x[from].rc, x[from].rt, from);
    }
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n;
        sched_send(s, x[to].sp, x[to].sc, x[to].st, to);
    }
    sched_copy(s, x[r].sp, x[r].sc, x[r].st, x[r].rp, x[r].rc, x[r].rt);
}

/* Pairwise exchange: in step k send to r + k and receive from r - k, one
 * pair at a time, so memory and contention stay bounded. */
static void pairwise(struct ferry_sched *s, const struct xfer *x)
{
    int n = s->size, r = s->rank;
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        sched_recv(s, x[from].rp, x[from].rc, x[from].rt, from);
        sched_send(s, x[to].sp, x[to].sc, x[to].st, to);
        if (k == 1)   /* this rank's own block, once the first pair is in */
            sched_copy(s, x[r].sp, x[r].sc, x[r].st, x[r].rp, x[r].rc, x[r].rt);
        sched_fence(s);
    }
    if (n == 1)
        sched_copy(s, x[r].sp, x[r].sc, x[r].st, x[r].rp, x[r].rc, x[r].rt);
}

int alltoall_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    linear(s, plan(s, a, FERRY_COLL_ALLTOALL));
    return MPI_SUCCESS;
}

int alltoall_pairwise(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    pairwise(s, plan(s, a, FERRY_COLL_ALLTOALL));
    return MPI_SUCCESS;
}

int alltoallv_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    linear(s, plan(s, a, FERRY_COLL_ALLTOALLV));
    return MPI_SUCCESS;
}

int alltoallv_pairwise(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    pairwise(s, plan(s, a, FERRY_COLL_ALLTOALLV));
    return MPI_SUCCESS;
}

int alltoallw_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    linear(s, plan(s, a, FERRY_COLL_ALLTOALLW));
    return MPI_SUCCESS;
}

int alltoallw_pairwise(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    pairwise(s, plan(s, a, FERRY_COLL_ALLTOALLW));
    return MPI_SUCCESS;
}

/* Bruck: ceil(log2 n) steps for small blocks. Blocks are rotated so that
 * block i is meant for rank r + i; in the step of distance d every block
 * whose index has bit d set moves d ranks on; finally block i came from
 * rank r - i. */
int alltoall_bruck(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank;
    struct ferry_datatype *byte = sched_byte();
    struct xfer *x = plan(s, a, FERRY_COLL_ALLTOALL);
    size_t B = ferry_dt_bytes(a->rdt, a->rcount);
    char *tmp = sched_alloc(s, (size_t)n * B);
    char *sb = sched_alloc(s, (size_t)(n / 2 + 1) * B), *rb = sched_alloc(s, (size_t)(n / 2 + 1) * B);
    for (int i = 0; i < n; i++) {
        const struct xfer *e = &x[(r + i) % n];
        sched_copy(s, e->sp, e->sc, e->st, tmp + (size_t)i * B, B, byte);
    }
    for (int d = 1; d < n; d <<= 1) {
        size_t k = 0;
        for (int i = 1; i < n; i++)
            if (i & d)
                sched_copy(s, tmp + (size_t)i * B, B, byte, sb + k++ * B, B, byte);
        sched_send(s, sb, k * B, byte, (r + d) % n);
        sched_recv(s, rb, k * B, byte, (r - d + n) % n);
        sched_fence(s);
        k = 0;
        for (int i = 1; i < n; i++)
            if (i & d)
                sched_copy(s, rb + k++ * B, B, byte, tmp + (size_t)i * B, B, byte);
    }
    for (int i = 0; i < n; i++) {
        const struct xfer *e = &x[(r - i + n) % n];
        sched_copy(s, tmp + (size_t)i * B, B, byte, e->rp, e->rc, e->rt);
    }
    return MPI_SUCCESS;
}
