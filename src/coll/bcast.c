/* Broadcast algorithms. */
#include "coll/coll_impl.h"
#include "core/config.h"
#include "core/util.h"

/* Binomial tree on ranks relative to root: a rank receives from the rank
 * that differs in its lowest set bit, then sends to rank + 2^k for every k
 * below that bit. log2(n) rounds, the whole message each time. Exact sends
 * and receives: a rank whose count differs from its parent's (an erroneous
 * program, a common mistake) gets an error, and so does every rank below it. */
void build_bcast_binomial(struct ferry_sched *s, void *buf, size_t count, struct ferry_datatype *dt, int root)
{
    int n = s->size, r = s->rank, rel = (r - root + n) % n;
    int mask = 1;
    while (mask < n) {
        if (rel & mask) {
            sched_recv_exact(s, buf, count, dt, (r - mask + n) % n);
            sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            sched_send_exact(s, buf, count, dt, (r + mask) % n);
}

int bcast_binomial(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    build_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, a->root);
    return MPI_SUCCESS;
}

/* Bytes [lo, hi) of chunks [i, i + k) when nb bytes are cut into chunks of c. */
static size_t chunk_off(size_t nb, size_t c, size_t i)
{
    return FERRY_MIN(nb, c * i);
}

/* Van de Geijn: binomial scatter of n chunks, then a ring allgather of the
 * chunks. About 2 * size bytes move per rank, independent of n: for large
 * messages. Works on the packed bytes (the user buffer itself if contiguous). */
int bcast_scatter_allgather(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, root = a->root, rel = (r - root + n) % n;
    struct ferry_datatype *byte = sched_byte();
    size_t nb = ferry_dt_bytes(a->rdt, a->rcount);
    if (n == 1 || nb == 0)
        return MPI_SUCCESS;
    int contig = ferry_dt_is_contig(a->rdt, a->rcount);
    char *p;
    if (contig) {
        p = (char *)ferry_dt_contig_ptr(a->rdt, a->rbuf);
    } else {
        p = sched_alloc(s, nb);
        if (r == root)
            sched_copy(s, a->rbuf, a->rcount, a->rdt, p, nb, byte);
    }
    size_t c = (nb + (size_t)n - 1) / (size_t)n;
#define RANGE(i, k) p + chunk_off(nb, c, (size_t)(i)), chunk_off(nb, c, (size_t)(i) + (size_t)(k)) - chunk_off(nb, c, (size_t)(i))
    /* scatter: rank rel gets chunks [rel, rel + lowbit(rel)) */
    int mask = 1;
    while (mask < n) {
        if (rel & mask) {
            sched_recv(s, RANGE(rel, FERRY_MIN(mask, n - rel)), byte, (r - mask + n) % n);
            sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            sched_send(s, RANGE(rel + mask, FERRY_MIN(mask, n - rel - mask)), byte, (r + mask) % n);
    sched_fence(s);
    /* ring allgather: in step i pass on chunk rel - i, receive chunk rel - i - 1;
     * the root has everything and receives into a scratch chunk */
    char *scratch = r == root ? sched_alloc(s, c) : NULL;
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int i = 0; i < n - 1; i++) {
        int sb = (rel - i + n) % n, rb = (rel - i - 1 + n) % n;
        sched_send(s, RANGE(sb, 1), byte, right);
        if (scratch) {
            sched_recv(s, scratch, chunk_off(nb, c, (size_t)rb + 1) - chunk_off(nb, c, (size_t)rb), byte, left);
        } else {
            sched_recv(s, RANGE(rb, 1), byte, left);
        }
        sched_fence(s);
    }
#undef RANGE
    if (!contig && r != root)
        sched_copy(s, p, nb, byte, a->rbuf, a->rcount, a->rdt);
    return MPI_SUCCESS;
}

/* Pipelined chain root -> root+1 -> ...: the message moves in segments so
 * every link of the chain is busy at once. For very large messages. */
int bcast_chain(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank, rel = (r - a->root + n) % n;
    struct ferry_datatype *dt = a->rdt;
    size_t count = a->rcount;
    if (n == 1 || count == 0)
        return MPI_SUCCESS;
    size_t seg = dt->size ? FERRY_MAX((size_t)1, (size_t)ferry_cfg.coll_segment / dt->size) : count;
    size_t nseg = (count + seg - 1) / seg;
    int prev = (r - 1 + n) % n, next = rel < n - 1 ? (r + 1) % n : -1;
#define SEG(k) blk(a->rbuf, (k), seg, dt), FERRY_MIN(seg, count - (k) * seg), dt
    for (size_t k = 0; k <= nseg; k++) {
        if (rel == 0) {
            if (k < nseg)
                sched_send(s, SEG(k), next);
        } else {
            if (k > 0 && next >= 0)
                sched_send(s, SEG(k - 1), next);
            if (k < nseg)
                sched_recv(s, SEG(k), prev);
        }
        sched_fence(s);
    }
#undef SEG
    return MPI_SUCCESS;
}
