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
    /* the root's own block last, copied while the others arrive: in rank
     * order, root 0 copied before it posted a receive (2 ranks, 1 MiB: the
     * copy and the transfer one after the other) */
    for (int i = 0; i < n; i++)
        if (i != r)
            sched_recv(s, blk(a->rbuf, (size_t)i, a->rcount, a->rdt), a->rcount, a->rdt, i);
    if (a->sbuf != MPI_IN_PLACE)
        sched_copy_overlap(s, a->sbuf, a->scount, a->sdt, blk(a->rbuf, (size_t)r, a->rcount, a->rdt), a->rcount,
                           a->rdt);
    return MPI_SUCCESS;
}

/* The root's child (by its relative rank, a power of two) whose subtree's
 * blocks do not lie in one run of the root's buffer because they wrap past
 * rank n - 1; 0 if none. At most one subtree straddles that point. */
static int wrapping_child(int root, int n)
{
    for (int mask = 1; mask < n; mask <<= 1)
        if ((root + mask) % n + subtree(mask, n) > n)
            return mask;
    return 0;
}

/* Binomial tree on ranks relative to root: every rank collects the packed
 * blocks of its subtree in relative-rank order and sends them to its parent
 * in one message. Leaves send straight from their send buffer; the root
 * receives each child's subtree straight into its receive buffer when those
 * blocks lie in one run there, and copies its own block while they arrive. */
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
    if (r == root) {
        int wrap = wrapping_child(root, n);
        char *tmp = wrap ? sched_alloc(s, (size_t)subtree(wrap, n) * B) : NULL;
        for (int mask = 1; mask < n; mask <<= 1) {
            int cs = subtree(mask, n), first = (root + mask) % n;
            if (mask == wrap)
                sched_recv(s, tmp, (size_t)cs * B, byte, first);
            else
                sched_recv(s, blk(a->rbuf, (size_t)first, a->rcount, a->rdt), (size_t)cs * a->rcount, a->rdt, first);
        }
        if (a->sbuf != MPI_IN_PLACE)
            sched_copy_overlap(s, a->sbuf, a->scount, a->sdt, blk(a->rbuf, (size_t)r, a->rcount, a->rdt), a->rcount,
                               a->rdt);
        for (int i = 0; wrap && i < subtree(wrap, n); i++) {
            void *dst = blk(a->rbuf, (size_t)((root + wrap + i) % n), a->rcount, a->rdt);
            sched_copy(s, tmp + (size_t)i * B, B, byte, dst, a->rcount, a->rdt);
        }
        return MPI_SUCCESS;
    }
    char *tmp = sched_alloc(s, (size_t)sub * B);
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
    return MPI_SUCCESS;
}

int gatherv_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root;
    if (r != root) {
        sched_send(s, a->sbuf, a->scount, a->sdt, root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++)   /* own block last, as in gather_linear */
        if (i != r)
            sched_recv(s, blk(a->rbuf, (size_t)a->rdispls[i], 1, a->rdt), (size_t)a->rcounts[i], a->rdt, i);
    if (a->sbuf != MPI_IN_PLACE)
        sched_copy_overlap(s, a->sbuf, a->scount, a->sdt, blk(a->rbuf, (size_t)a->rdispls[r], 1, a->rdt),
                           (size_t)a->rcounts[r], a->rdt);
    return MPI_SUCCESS;
}

int scatter_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root;
    if (r != root) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++)   /* own block last, copied while the sends are out */
        if (i != r)
            sched_send(s, blk(a->sbuf, (size_t)i, a->scount, a->sdt), a->scount, a->sdt, i);
    if (a->rbuf != MPI_IN_PLACE)
        sched_copy_overlap(s, blk(a->sbuf, (size_t)r, a->scount, a->sdt), a->scount, a->sdt, a->rbuf, a->rcount,
                           a->rdt);
    return MPI_SUCCESS;
}

/* Mirror of the binomial gather: every rank receives its subtree's blocks
 * and passes on its children's. The root sends each child's subtree straight
 * from its send buffer when those blocks lie in one run there (packing only
 * the ones that wrap), and copies its own block while the sends are out. */
int scatter_binomial(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root, rel = (r - root + n) % n;
    struct ferry_datatype *byte = sched_byte();
    size_t B = r == root ? ferry_dt_bytes(a->sdt, a->scount) : ferry_dt_bytes(a->rdt, a->rcount);
    int sub = subtree(rel, n);
    int low = rel ? (rel & -rel) : pof2_floor(n) * 2;
    if (r == root) {
        /* pack the wrapping subtree first: a copy waits for the sends before it */
        int wrap = wrapping_child(root, n);
        char *packed = wrap ? sched_alloc(s, (size_t)subtree(wrap, n) * B) : NULL;
        for (int i = 0; wrap && i < subtree(wrap, n); i++)
            sched_copy(s, blk(a->sbuf, (size_t)((root + wrap + i) % n), a->scount, a->sdt), a->scount, a->sdt,
                       packed + (size_t)i * B, B, byte);
        for (int mask = low >> 1; mask > 0; mask >>= 1) {
            if (mask >= n)
                continue;
            int cs = subtree(mask, n), first = (root + mask) % n;
            if (mask == wrap)
                sched_send(s, packed, (size_t)cs * B, byte, first);
            else
                sched_send(s, blk(a->sbuf, (size_t)first, a->scount, a->sdt), (size_t)cs * a->scount, a->sdt, first);
        }
        if (a->rbuf != MPI_IN_PLACE)
            sched_copy_overlap(s, blk(a->sbuf, (size_t)r, a->scount, a->sdt), a->scount, a->sdt, a->rbuf, a->rcount,
                               a->rdt);
        return MPI_SUCCESS;
    }
    if (sub == 1) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, (r - low + n) % n);
        return MPI_SUCCESS;
    }
    char *tmp = sched_alloc(s, (size_t)sub * B);
    sched_recv(s, tmp, (size_t)sub * B, byte, (r - low + n) % n);
    sched_fence(s);
    for (int mask = low >> 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            sched_send(s, tmp + (size_t)mask * B, (size_t)subtree(rel + mask, n) * B, byte, (r + mask) % n);
    sched_copy_overlap(s, tmp, B, byte, a->rbuf, a->rcount, a->rdt);
    return MPI_SUCCESS;
}

int scatterv_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root;
    if (r != root) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++)   /* own block last, as in scatter_linear */
        if (i != r)
            sched_send(s, blk(a->sbuf, (size_t)a->sdispls[i], 1, a->sdt), (size_t)a->scounts[i], a->sdt, i);
    if (a->rbuf != MPI_IN_PLACE)
        sched_copy_overlap(s, blk(a->sbuf, (size_t)a->sdispls[r], 1, a->sdt), (size_t)a->scounts[r], a->sdt,
                           a->rbuf, a->rcount, a->rdt);
    return MPI_SUCCESS;
}
