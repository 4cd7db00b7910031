/* Gather and scatter algorithms (and their v forms). */
#include "coll/coll_impl.h"
#include "core/util.h"

/* Size of the subtree of relative rank rel in a binomial tree over n ranks. */
static int subtree(int rel, int n)
{
    if (rel == 0)
        return n;
    return FERRY_MIN(rel & -rel, n - rel);
}

int gather_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root;
    if (r != root) {
        sched_send(s, a->sbuf, a->scount, a->sdt, root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++) {
        void *dst = blk(a->rbuf, (size_t)i, a->rcount, a->rdt);
        if (i != r)
            sched_recv(s, dst, a->rcount, a->rdt, i);
        else if (a->sbuf != MPI_IN_PLACE)
            sched_copy(s, a->sbuf, a->scount, a->sdt, dst, a->rcount, a->rdt);
    }
    return MPI_SUCCESS;
}

/* Binomial tree on ranks relative to root: every rank collects the packed
 * blocks of its subtree in relative-rank order and sends them to its parent
 * in one message. Leaves send straight from their send buffer. */
int gather_binomial(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root, rel = (r - root + n) % n;
    struct ferry_datatype *byte = sched_byte();
    size_t B = r == root ? ferry_dt_bytes(a->rdt, a->rcount) : ferry_dt_bytes(a->sdt, a->scount);
    int sub = subtree(rel, n);
    int parent = (r - (rel & -rel) + n) % n;
    if (r != root && sub == 1) {
        sched_send(s, a->sbuf, a->scount, a->sdt, parent);
        return MPI_SUCCESS;
    }
    char *tmp = sched_alloc(s, (size_t)sub * B);
    if (r != root)
        sched_copy(s, a->sbuf, a->scount, a->sdt, tmp, B, byte);
    for (int mask = 1; mask < n; mask <<= 1) {
        if (rel & mask) {
            sched_fence(s);
            sched_send(s, tmp, (size_t)sub * B, byte, parent);
            return MPI_SUCCESS;
        }
        if (rel + mask < n)
            sched_recv(s, tmp + (size_t)mask * B, (size_t)subtree(rel + mask, n) * B, byte, (r + mask) % n);
    }
    /* root: unpack block i of relative rank i */
    for (int i = 1; i < n; i++)
        sched_copy(s, tmp + (size_t)i * B, B, byte, blk(a->rbuf, (size_t)((i + root) % n), a->rcount, a->rdt),
                   a->rcount, a->rdt);
    if (a->sbuf != MPI_IN_PLACE)
        sched_copy(s, a->sbuf, a->scount, a->sdt, blk(a->rbuf, (size_t)r, a->rcount, a->rdt), a->rcount, a->rdt);
    return MPI_SUCCESS;
}

int gatherv_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root;
    if (r != root) {
        sched_send(s, a->sbuf, a->scount, a->sdt, root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++) {
        void *dst = blk(a->rbuf, (size_t)a->rdispls[i], 1, a->rdt);
        if (i != r)
            sched_recv(s, dst, (size_t)a->rcounts[i], a->rdt, i);
        else if (a->sbuf != MPI_IN_PLACE)
            sched_copy(s, a->sbuf, a->scount, a->sdt, dst, (size_t)a->rcounts[i], a->rdt);
    }
    return MPI_SUCCESS;
}

int scatter_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root;
    if (r != root) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++) {
        const void *src = blk(a->sbuf, (size_t)i, a->scount, a->sdt);
        if (i != r)
            sched_send(s, src, a->scount, a->sdt, i);
        else if (a->rbuf != MPI_IN_PLACE)
            sched_copy(s, src, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt);
    }
    return MPI_SUCCESS;
}

/* Mirror of the binomial gather: the root packs the blocks in relative-rank
 * order, every rank receives its subtree's blocks and passes on its
 * children's. */
int scatter_binomial(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root, rel = (r - root + n) % n;
    struct ferry_datatype *byte = sched_byte();
    size_t B = r == root ? ferry_dt_bytes(a->sdt, a->scount) : ferry_dt_bytes(a->rdt, a->rcount);
    int sub = subtree(rel, n);
    int low = rel ? (rel & -rel) : pof2_floor(n) * 2;
    char *tmp;
    if (r == root) {
        tmp = sched_alloc(s, (size_t)n * B);
        for (int i = 1; i < n; i++)
            sched_copy(s, blk(a->sbuf, (size_t)((i + root) % n), a->scount, a->sdt), a->scount, a->sdt,
                       tmp + (size_t)i * B, B, byte);
        if (a->rbuf != MPI_IN_PLACE)
            sched_copy(s, blk(a->sbuf, (size_t)r, a->scount, a->sdt), a->scount, a->sdt, a->rbuf, a->rcount, a->rdt);
    } else if (sub == 1) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, (r - low + n) % n);
        return MPI_SUCCESS;
    } else {
        tmp = sched_alloc(s, (size_t)sub * B);
        sched_recv(s, tmp, (size_t)sub * B, byte, (r - low + n) % n);
        sched_fence(s);
    }
    for (int mask = low >> 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            sched_send(s, tmp + (size_t)mask * B, (size_t)subtree(rel + mask, n) * B, byte, (r + mask) % n);
    if (r != root)
        sched_copy(s, tmp, B, byte, a->rbuf, a->rcount, a->rdt);
    return MPI_SUCCESS;
}

int scatterv_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root;
    if (r != root) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++) {
        const void *src = blk(a->sbuf, (size_t)a->sdispls[i], 1, a->sdt);
        if (i != r)
            sched_send(s, src, (size_t)a->scounts[i], a->sdt, i);
        else if (a->rbuf != MPI_IN_PLACE)
            sched_copy(s, src, (size_t)a->scounts[i], a->sdt, a->rbuf, a->rcount, a->rdt);
    }
    return MPI_SUCCESS;
}
