/* Allgather and allgatherv algorithms. */
#include "coll/coll_impl.h"
#include "core/util.h"

/* Put this rank's contribution into its block of the receive buffer. */
static void own_block(struct ferry_sched *s, const struct ferry_coll_args *a, void *dst, size_t rcount)
{
    if (a->sbuf != MPI_IN_PLACE)
        sched_copy(s, a->sbuf, a->scount, a->sdt, dst, rcount, a->rdt);
}

/* The first step of ring and recursive doubling: send this rank's block to
 * `to` (straight from the send buffer) and receive block `from` from rank
 * `from`, then copy the own block into place. The peer reads the send
 * buffer, not a block this rank is writing (2-rank allgather of 128 KiB with
 * single copy: 21.5 us against 28-30 with the copy first). The copy waits
 * for the pair: a single-copy receive is this rank's own work, so the copy
 * cannot hide behind it; run alongside (sched_copy_overlap) it measured
 * slower at 16-64 KiB in interleaved runs. One rank: the copy. */
static void first_step(struct ferry_sched *s, const struct ferry_coll_args *a, int to, int from)
{
    void *mine = blk(a->rbuf, (size_t)s->rank, a->rcount, a->rdt);
    if (s->size > 1) {
        if (a->sbuf != MPI_IN_PLACE)
            sched_send(s, a->sbuf, a->scount, a->sdt, to);
        else
            sched_send(s, mine, a->rcount, a->rdt, to);
        sched_recv(s, blk(a->rbuf, (size_t)from, a->rcount, a->rdt), a->rcount, a->rdt, from);
    }
    own_block(s, a, mine, a->rcount);
    sched_fence(s);
}

/* Ring: in step i pass block r - i to the right, receive block r - i - 1
 * from the left. n - 1 steps, bandwidth-optimal; works on the receive
 * buffer directly. */
int allgather_ring(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank;
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    first_step(s, a, right, left);
    for (int i = 1; i < n - 1; i++) {
        int sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;
        sched_send(s, blk(a->rbuf, (size_t)sb, a->rcount, a->rdt), a->rcount, a->rdt, right);
        sched_recv(s, blk(a->rbuf, (size_t)rb, a->rcount, a->rdt), a->rcount, a->rdt, left);
        sched_fence(s);
    }
    return MPI_SUCCESS;
}

/* Recursive doubling (power-of-two ranks): in step k exchange the 2^k
 * blocks gathered so far with rank r ^ 2^k. log2(n) steps. */
int allgather_rd(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank;
    first_step(s, a, r ^ 1, r ^ 1);
    for (int mask = 2; mask < n; mask <<= 1) {
        int partner = r ^ mask;
        size_t mine = (size_t)(r & ~(mask - 1)), theirs = (size_t)(partner & ~(mask - 1));
        sched_send(s, blk(a->rbuf, mine, a->rcount, a->rdt), (size_t)mask * a->rcount, a->rdt, partner);
        sched_recv(s, blk(a->rbuf, theirs, a->rcount, a->rdt), (size_t)mask * a->rcount, a->rdt, partner);
        sched_fence(s);
    }
    return MPI_SUCCESS;
}

/* Bruck: ceil(log2 n) steps for any n. Block i of a packed buffer holds
 * rank r + i's data; in the step of distance d send the first min(d, n - d)
 * blocks to r - d and append as many from r + d. */
int allgather_bruck(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank;
    struct ferry_datatype *byte = sched_byte();
    size_t B = ferry_dt_bytes(a->rdt, a->rcount);
    char *tmp = sched_alloc(s, (size_t)n * B);
    if (a->sbuf != MPI_IN_PLACE)
        sched_copy(s, a->sbuf, a->scount, a->sdt, tmp, B, byte);
    else
        sched_copy(s, blk(a->rbuf, (size_t)r, a->rcount, a->rdt), a->rcount, a->rdt, tmp, B, byte);
    for (int d = 1; d < n; d <<= 1) {
        size_t k = (size_t)FERRY_MIN(d, n - d);
        sched_send(s, tmp, k * B, byte, (r - d + n) % n);
        sched_recv(s, tmp + (size_t)d * B, k * B, byte, (r + d) % n);
        sched_fence(s);
    }
    for (int i = a->sbuf == MPI_IN_PLACE ? 1 : 0; i < n; i++)
        sched_copy(s, tmp + (size_t)i * B, B, byte, blk(a->rbuf, (size_t)((r + i) % n), a->rcount, a->rdt),
                   a->rcount, a->rdt);
    return MPI_SUCCESS;
}

/* Everyone sends its block to everyone at once: one step, n - 1 messages
 * per rank; for few ranks and small blocks. */
int allgather_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank;
    void *mine = blk(a->rbuf, (size_t)r, a->rcount, a->rdt);
    own_block(s, a, mine, a->rcount);
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        sched_recv(s, blk(a->rbuf, (size_t)from, a->rcount, a->rdt), a->rcount, a->rdt, from);
        sched_send(s, mine, a->rcount, a->rdt, to);
    }
    return MPI_SUCCESS;
}

static void *vblk(const struct ferry_coll_args *a, int i)
{
    return blk(a->rbuf, (size_t)a->rdispls[i], 1, a->rdt);
}

int allgatherv_ring(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank;
    own_block(s, a, vblk(a, r), (size_t)a->rcounts[r]);
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int i = 0; i < n - 1; i++) {
        int sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;
        sched_send(s, vblk(a, sb), (size_t)a->rcounts[sb], a->rdt, right);
        sched_recv(s, vblk(a, rb), (size_t)a->rcounts[rb], a->rdt, left);
        sched_fence(s);
    }
    return MPI_SUCCESS;
}

int allgatherv_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank;
    own_block(s, a, vblk(a, r), (size_t)a->rcounts[r]);
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        sched_recv(s, vblk(a, from), (size_t)a->rcounts[from], a->rdt, from);
        sched_send(s, vblk(a, r), (size_t)a->rcounts[r], a->rdt, to);
    }
    return MPI_SUCCESS;
}
