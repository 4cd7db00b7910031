/* Reduction collectives: reduce, allreduce, reduce_scatter(_block), scan and
 * exscan. They work on arrays of units (see core/op.h): a rank's
 * contribution is first brought into a unit array (the user's result buffer
 * itself when its layout is already that), reduced there, and copied out. */
#include "coll/coll_impl.h"
#include "core/util.h"

void red_init(struct ferry_sched *s, struct ferry_op *op, struct ferry_datatype *dt, size_t count, struct red *r)
{
    if (!s->op)
        sched_set_op(s, op);
    if (ferry_op_unit(op, dt, 0, &r->unit, &r->per) != MPI_SUCCESS) {
        r->unit = dt;   /* checked by the caller; keep going harmlessly */
        r->per = 1;
    }
    r->dt = dt;
    r->count = count;
    r->n = count * r->per;
    r->commute = op->commute;
}

void *red_acc(struct ferry_sched *s, const struct red *r, const void *src, void *dst)
{
    if (dst && r->dt == r->unit) {
        if (src != dst)
            sched_copy(s, src, r->count, r->dt, dst, r->count, r->dt);
        return dst;
    }
    void *acc = sched_tmp(s, r->unit, r->n);
    sched_copy(s, src, r->count, r->dt, acc, r->n, r->unit);
    return acc;
}

void red_out(struct ferry_sched *s, const struct red *r, void *acc, void *dst)
{
    if (acc != dst)
        sched_copy(s, acc, r->n, r->unit, dst, r->count, r->dt);
}

/* unit array p, unit index i */
static void *U(const struct red *r, const void *p, size_t i)
{
    return sched_at(p, i, r->unit->extent);
}

static const void *contribution(const struct ferry_coll_args *a)
{
    return a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
}

/* ---- reduce ------------------------------------------------------------------ */

void *build_reduce_binomial(struct ferry_sched *s, const struct red *R, const void *src, void *dst, int root)
{
    int n = s->size, r = s->rank;
    int vroot = R->commute ? root : 0;   /* non-commutative: tree over ranks in order */
    int rel = (r - vroot + n) % n;
    int forward = vroot != root;         /* vroot passes the result on to root */
    int leaf = rel != 0 && ((rel & 1) || rel + 1 >= n);
    if (leaf) {
        sched_send(s, src, R->count, R->dt, (r - (rel & -rel) + n) % n);
        sched_send_consumed(s);   /* the parent reduces it */
        if (forward && r == root) {
            sched_fence(s);
            sched_recv(s, dst, R->count, R->dt, vroot);
        }
        return NULL;
    }
    void *acc, *tmp = NULL;
    int mask = 1;
    if (r == root && dst && dst != src && R->dt == R->unit && rel + 1 < n) {
        /* the first child's vector goes straight into the result buffer,
         * then dst = src op dst (own contribution first: the order holds for
         * non-commutative ops too): no copy of src, no temporary when there
         * is one child (2 ranks) */
        acc = dst;
        sched_recv(s, dst, R->n, R->unit, (r + 1) % n);
        sched_reduce(s, src, dst, R->n, R->unit, 0);
        mask = 2;
    } else {
        acc = red_acc(s, R, src, r == root ? dst : NULL);
    }
    for (; mask < n; mask <<= 1) {
        if (rel & mask) {
            sched_fence(s);
            sched_send(s, acc, R->n, R->unit, (r - mask + n) % n);
            sched_send_consumed(s);
            break;
        }
        if (rel + mask < n) {
            if (!tmp)
                tmp = sched_tmp(s, R->unit, R->n);
            sched_recv(s, tmp, R->n, R->unit, (r + mask) % n);
            sched_reduce(s, tmp, acc, R->n, R->unit, 1);   /* acc = acc op (ranks above) */
        }
    }
    if (forward) {
        sched_fence(s);
        if (r == vroot)
            sched_send(s, acc, R->n, R->unit, root);
        else if (r == root)
            sched_recv(s, dst, R->count, R->dt, vroot);
        return NULL;
    }
    if (r == root) {
        if (dst)
            red_out(s, R, acc, dst);
        return acc;
    }
    return NULL;
}

int reduce_binomial(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct red R;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    build_reduce_binomial(s, &R, contribution(a), s->rank == a->root ? a->rbuf : NULL, a->root);
    return MPI_SUCCESS;
}

/* ---- Rabenseifner's building blocks (commutative ops) ------------------------- */
/* The vector is cut into pof2 blocks. Ranks beyond the largest power of two
 * first fold their data into a neighbour: of the first 2 * rem ranks the even
 * ones hand their vector to the odd ones and sit out. */
struct rab {
    int pof2, rem, newrank;
    size_t *disp;   /* pof2 + 1 unit offsets */
};

static void rab_init(struct ferry_sched *s, const struct red *R, struct rab *b)
{
    int n = s->size;
    b->pof2 = pof2_floor(n);
    b->rem = n - b->pof2;
    int r = s->rank;
    b->newrank = r < 2 * b->rem ? (r & 1 ? r / 2 : -1) : r - b->rem;
    b->disp = sched_alloc(s, (size_t)(b->pof2 + 1) * sizeof(size_t));
    size_t q = R->n / (size_t)b->pof2, extra = R->n % (size_t)b->pof2;
    b->disp[0] = 0;
    for (int i = 0; i < b->pof2; i++)
        b->disp[i + 1] = b->disp[i] + q + ((size_t)i < extra);
}

static int rab_real(const struct rab *b, int newrank)
{
    return newrank < b->rem ? newrank * 2 + 1 : newrank + b->rem;
}

static void rab_fold(struct ferry_sched *s, const struct red *R, const struct rab *b, void *acc, void *tmp)
{
    int r = s->rank;
    if (r >= 2 * b->rem)
        return;
    if (b->newrank < 0) {
        sched_send(s, acc, R->n, R->unit, r + 1);
    } else {
        sched_recv(s, tmp, R->n, R->unit, r - 1);
        sched_reduce(s, tmp, acc, R->n, R->unit, 0);
    }
    sched_fence(s);
}

static void rab_unfold(struct ferry_sched *s, const struct red *R, const struct rab *b, void *acc)
{
    int r = s->rank;
    if (r >= 2 * b->rem)
        return;
    sched_fence(s);
    if (b->newrank < 0)
        sched_recv(s, acc, R->n, R->unit, r + 1);
    else
        sched_send(s, acc, R->n, R->unit, r - 1);
}

/* Recursive halving: at distance d (pof2/2 down to 1) keep the half of the
 * current block range on this rank's side of bit d, send the other half to
 * the partner and reduce what it sends. Ends with block newrank reduced. */
static void rab_redscat(struct ferry_sched *s, const struct red *R, const struct rab *b, void *acc, void *tmp)
{
    int lo = 0, hi = b->pof2;
    for (int d = b->pof2 / 2; d >= 1; d >>= 1) {
        int partner = b->newrank ^ d, mid = lo + (hi - lo) / 2;
        int klo = b->newrank < partner ? lo : mid, khi = b->newrank < partner ? mid : hi;
        int slo = b->newrank < partner ? mid : lo, shi = b->newrank < partner ? hi : mid;
        int peer = rab_real(b, partner);
        size_t kn = b->disp[khi] - b->disp[klo];
        sched_send(s, U(R, acc, b->disp[slo]), b->disp[shi] - b->disp[slo], R->unit, peer);
        sched_recv(s, U(R, tmp, b->disp[klo]), kn, R->unit, peer);
        sched_reduce(s, U(R, tmp, b->disp[klo]), U(R, acc, b->disp[klo]), kn, R->unit, 0);
        lo = klo, hi = khi;
    }
}

/* Recursive doubling allgather of the blocks: at distance d exchange the d
 * blocks held with the partner's d blocks. */
static void rab_allgather(struct ferry_sched *s, const struct red *R, const struct rab *b, void *acc)
{
    for (int d = 1; d < b->pof2; d <<= 1) {
        int partner = b->newrank ^ d, peer = rab_real(b, partner);
        int mlo = b->newrank & ~(d - 1), plo = partner & ~(d - 1);
        sched_send(s, U(R, acc, b->disp[mlo]), b->disp[mlo + d] - b->disp[mlo], R->unit, peer);
        sched_recv(s, U(R, acc, b->disp[plo]), b->disp[plo + d] - b->disp[plo], R->unit, peer);
        sched_fence(s);
    }
}

/* Reduce as reduce-scatter (recursive halving) + binomial gather of the
 * blocks to newrank 0, which passes the vector to root if it is not root. */
int reduce_redscat_gather(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct red R;
    struct rab b;
    int r = s->rank, root = a->root;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    rab_init(s, &R, &b);
    void *acc = red_acc(s, &R, contribution(a), r == root ? a->rbuf : NULL);
    void *tmp = sched_tmp(s, R.unit, R.n);
    rab_fold(s, &R, &b, acc, tmp);
    int holder = rab_real(&b, 0);
    if (b.newrank >= 0) {
        rab_redscat(s, &R, &b, acc, tmp);
        sched_fence(s);
        for (int d = 1; d < b.pof2; d <<= 1) {
            int lo = b.newrank;
            if (b.newrank & d) {
                sched_send(s, U(&R, acc, b.disp[lo]), b.disp[lo + d] - b.disp[lo], R.unit, rab_real(&b, b.newrank - d));
                break;
            }
            sched_recv(s, U(&R, acc, b.disp[lo + d]), b.disp[lo + 2 * d] - b.disp[lo + d], R.unit,
                       rab_real(&b, b.newrank + d));
            sched_fence(s);
        }
    }
    sched_fence(s);
    if (holder != root) {
        if (r == holder)
            sched_send(s, acc, R.n, R.unit, root);
        else if (r == root)
            sched_recv(s, a->rbuf, R.count, R.dt, holder);
    } else if (r == root) {
        red_out(s, &R, acc, a->rbuf);
    }
    return MPI_SUCCESS;
}

/* ---- allreduce --------------------------------------------------------------- */

/* Recursive doubling: log2(n) exchanges of the whole vector. Ranks beyond the
 * largest power of two fold into a neighbour first and get the result back at
 * the end. Keeps rank order, so it serves non-commutative ops. */
int allreduce_rd(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct red R;
    struct rab b;
    int r = s->rank;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    b.pof2 = pof2_floor(s->size);
    b.rem = s->size - b.pof2;
    b.newrank = r < 2 * b.rem ? (r & 1 ? r / 2 : -1) : r - b.rem;
    const void *src = contribution(a);
    int d = 1, peer = b.rem == 0 && b.pof2 > 1 ? rab_real(&b, b.newrank ^ 1) : -1;
    void *acc, *tmp = NULL;
    /* The first exchange sends the user's vector and receives the partner's
     * straight into the result buffer: no copy of src first, and no
     * temporary at all with 2 ranks. Not on the upper rank of a pair with a
     * non-commutative op: its reduction (partner's data on the left) is
     * formed in the left operand, which here is the user's send buffer. */
    if (peer >= 0 && src != a->rbuf && R.dt == R.unit && (peer > r || a->op->commute)) {
        acc = a->rbuf;
        sched_send(s, src, R.n, R.unit, peer);
        sched_recv(s, acc, R.n, R.unit, peer);
        sched_reduce(s, src, acc, R.n, R.unit, peer < r);   /* lower ranks' data on the left */
        d = 2;
    } else {
        acc = red_acc(s, &R, src, a->rbuf);
        tmp = sched_tmp(s, R.unit, R.n);
        rab_fold(s, &R, &b, acc, tmp);
    }
    if (b.newrank >= 0) {
        for (; d < b.pof2; d <<= 1) {
            if (!tmp)
                tmp = sched_tmp(s, R.unit, R.n);
            int peer = rab_real(&b, b.newrank ^ d);
            sched_send(s, acc, R.n, R.unit, peer);
            sched_recv(s, tmp, R.n, R.unit, peer);
            /* lower ranks' data goes on the left */
            sched_reduce(s, tmp, acc, R.n, R.unit, peer > r);
        }
    }
    rab_unfold(s, &R, &b, acc);
    sched_fence(s);
    red_out(s, &R, acc, a->rbuf);
    return MPI_SUCCESS;
}

/* Rabenseifner: reduce-scatter by recursive halving, then allgather by
 * recursive doubling: about 2 * size bytes per rank. Commutative ops. */
int allreduce_redscat_allgather(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct red R;
    struct rab b;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    rab_init(s, &R, &b);
    void *acc = red_acc(s, &R, contribution(a), a->rbuf);
    void *tmp = sched_tmp(s, R.unit, R.n);
    rab_fold(s, &R, &b, acc, tmp);
    if (b.newrank >= 0) {
        rab_redscat(s, &R, &b, acc, tmp);
        sched_fence(s);
        rab_allgather(s, &R, &b, acc);
    }
    rab_unfold(s, &R, &b, acc);
    sched_fence(s);
    red_out(s, &R, acc, a->rbuf);
    return MPI_SUCCESS;
}

/* Block i of n blocks of a vector of len units. */
static size_t ring_off(size_t len, int n, int i)
{
    size_t q = len / (size_t)n, x = len % (size_t)n;
    return q * (size_t)i + FERRY_MIN((size_t)i, x);
}

/* Ring: reduce-scatter around the ring (n - 1 steps), then allgather around
 * it (n - 1 steps). Bandwidth-optimal for long vectors; commutative ops. */
int allreduce_ring(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct red R;
    int n = s->size, r = s->rank;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    void *acc = red_acc(s, &R, contribution(a), a->rbuf);
    void *tmp = sched_tmp(s, R.unit, R.n / (size_t)n + 1);
    int right = (r + 1) % n, left = (r - 1 + n) % n;
#define BLK(i) U(&R, acc, ring_off(R.n, n, (i))), ring_off(R.n, n, (i) + 1) - ring_off(R.n, n, (i))
    for (int i = 0; i < n - 1; i++) {
        int sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;
        size_t rn = ring_off(R.n, n, rb + 1) - ring_off(R.n, n, rb);
        sched_send(s, BLK(sb), R.unit, right);
        sched_recv(s, tmp, rn, R.unit, left);
        sched_reduce(s, tmp, U(&R, acc, ring_off(R.n, n, rb)), rn, R.unit, 0);
    }
    sched_fence(s);
    for (int i = 0; i < n - 1; i++) {
        int sb = (r + 1 - i + n) % n, rb = (r - i + n) % n;
        sched_send(s, BLK(sb), R.unit, right);
        sched_recv(s, BLK(rb), R.unit, left);
        sched_fence(s);
    }
#undef BLK
    red_out(s, &R, acc, a->rbuf);
    return MPI_SUCCESS;
}

/* Binomial reduce to rank 0, then binomial broadcast. Order-preserving. */
int allreduce_reduce_bcast(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct red R;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    build_reduce_binomial(s, &R, contribution(a), s->rank == 0 ? a->rbuf : NULL, 0);
    sched_fence(s);
    build_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, 0);
    return MPI_SUCCESS;
}

/* ---- reduce_scatter ----------------------------------------------------------- */

struct blocks {
    const int *counts;   /* elements of dt per rank */
    size_t *uoff;        /* unit offset of each rank's block, n + 1 entries */
};

static void blocks_init(struct ferry_sched *s, const struct red *R, const int *counts, struct blocks *bl)
{
    int n = s->size;
    bl->counts = counts;
    bl->uoff = sched_alloc(s, (size_t)(n + 1) * sizeof(size_t));
    bl->uoff[0] = 0;
    for (int i = 0; i < n; i++)
        bl->uoff[i + 1] = bl->uoff[i] + (size_t)counts[i] * R->per;
}
#define BN(bl, i) ((bl)->uoff[(i) + 1] - (bl)->uoff[i])

static size_t total(int n, const int *counts)
{
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t += (size_t)counts[i];
    return t;
}

static int *block_counts(struct ferry_sched *s, size_t count)
{
    int *c = sched_alloc(s, (size_t)s->size * sizeof(int));
    for (int i = 0; i < s->size; i++)
        c[i] = (int)count;
    return c;
}

/* Binomial reduce of the whole vector to rank 0, then rank 0 sends every
 * rank its block. Any op (order-preserving). */
static void rs_reduce_scatterv(struct ferry_sched *s, const struct ferry_coll_args *a, const int *counts)
{
    struct red R;
    struct blocks bl;
    int n = s->size, r = s->rank;
    red_init(s, a->op, a->rdt, total(n, counts), &R);
    blocks_init(s, &R, counts, &bl);
    void *acc = build_reduce_binomial(s, &R, contribution(a), NULL, 0);
    sched_fence(s);
    if (r != 0) {
        sched_recv(s, a->rbuf, (size_t)counts[r], R.dt, 0);
        return;
    }
    for (int i = 1; i < n; i++)
        sched_send(s, U(&R, acc, bl.uoff[i]), BN(&bl, i), R.unit, i);
    sched_copy(s, acc, BN(&bl, 0), R.unit, a->rbuf, (size_t)counts[0], R.dt);
}

/* Ring with blocks shifted by one so that rank r ends with block r. */
static void rs_ring(struct ferry_sched *s, const struct ferry_coll_args *a, const int *counts)
{
    struct red R;
    struct blocks bl;
    int n = s->size, r = s->rank;
    red_init(s, a->op, a->rdt, total(n, counts), &R);
    blocks_init(s, &R, counts, &bl);
    void *acc = red_acc(s, &R, contribution(a), NULL);
    size_t maxb = 0;
    for (int i = 0; i < n; i++)
        maxb = FERRY_MAX(maxb, BN(&bl, i));
    void *tmp = sched_tmp(s, R.unit, maxb);
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int i = 0; i < n - 1; i++) {
        int sb = (r - i - 1 + n) % n, rb = (r - i - 2 + 2 * n) % n;
        sched_send(s, U(&R, acc, bl.uoff[sb]), BN(&bl, sb), R.unit, right);
        sched_recv(s, tmp, BN(&bl, rb), R.unit, left);
        sched_reduce(s, tmp, U(&R, acc, bl.uoff[rb]), BN(&bl, rb), R.unit, 0);
    }
    sched_fence(s);
    sched_copy(s, U(&R, acc, bl.uoff[r]), BN(&bl, r), R.unit, a->rbuf, (size_t)counts[r], R.dt);
}

/* Pairwise: in step k send rank r + k its block and reduce the block rank
 * r - k sends for us. */
static void rs_pairwise(struct ferry_sched *s, const struct ferry_coll_args *a, const int *counts)
{
    struct red R;
    struct blocks bl;
    int n = s->size, r = s->rank;
    red_init(s, a->op, a->rdt, total(n, counts), &R);
    blocks_init(s, &R, counts, &bl);
    const void *in = a->sbuf;
    if (R.dt != R.unit || a->sbuf == MPI_IN_PLACE)
        in = red_acc(s, &R, contribution(a), NULL);
    size_t mine = BN(&bl, r);
    void *acc = R.dt == R.unit ? a->rbuf : sched_tmp(s, R.unit, mine);
    void *tmp = sched_tmp(s, R.unit, mine);
    sched_copy(s, U(&R, in, bl.uoff[r]), mine, R.unit, acc, mine, R.unit);
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        sched_send(s, U(&R, in, bl.uoff[to]), BN(&bl, to), R.unit, to);
        sched_recv(s, tmp, mine, R.unit, from);
        sched_reduce(s, tmp, acc, mine, R.unit, 0);
    }
    sched_fence(s);
    if (acc != a->rbuf)
        sched_copy(s, acc, mine, R.unit, a->rbuf, (size_t)counts[r], R.dt);
}

int reduce_scatter_reduce_scatterv(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    rs_reduce_scatterv(s, a, a->rcounts);
    return MPI_SUCCESS;
}
int reduce_scatter_ring(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    rs_ring(s, a, a->rcounts);
    return MPI_SUCCESS;
}
int reduce_scatter_pairwise(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    rs_pairwise(s, a, a->rcounts);
    return MPI_SUCCESS;
}
int reduce_scatter_block_reduce_scatterv(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    rs_reduce_scatterv(s, a, block_counts(s, a->rcount));
    return MPI_SUCCESS;
}
int reduce_scatter_block_ring(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    rs_ring(s, a, block_counts(s, a->rcount));
    return MPI_SUCCESS;
}
int reduce_scatter_block_pairwise(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    rs_pairwise(s, a, block_counts(s, a->rcount));
    return MPI_SUCCESS;
}

/* ---- scan and exscan ------------------------------------------------------------ */

/* Recursive doubling: `partial` holds the reduction over the aligned range of
 * 2^k ranks around r, `res` the prefix; data from lower ranks always goes on
 * the left. log2(n) steps. */
static void scan_rd_common(struct ferry_sched *s, const struct ferry_coll_args *a, int exclusive)
{
    struct red R;
    int n = s->size, r = s->rank;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    const void *src = contribution(a);
    void *partial = sched_tmp(s, R.unit, R.n);
    sched_copy(s, src, R.count, R.dt, partial, R.n, R.unit);
    void *res = R.dt == R.unit ? a->rbuf : sched_tmp(s, R.unit, R.n);
    if (!exclusive && res != src)
        sched_copy(s, src, R.count, R.dt, res, R.n, R.unit);
    void *tmp = sched_tmp(s, R.unit, R.n);
    int have = !exclusive;
    for (int d = 1; d < n; d <<= 1) {
        int peer = r ^ d;
        if (peer >= n)
            continue;
        sched_send(s, partial, R.n, R.unit, peer);
        sched_recv(s, tmp, R.n, R.unit, peer);
        sched_fence(s);
        if (peer < r) {
            if (have)
                sched_reduce(s, tmp, res, R.n, R.unit, 0);
            else
                sched_copy(s, tmp, R.n, R.unit, res, R.n, R.unit);
            have = 1;
            sched_reduce(s, tmp, partial, R.n, R.unit, 0);
        } else {
            sched_reduce(s, tmp, partial, R.n, R.unit, 1);
        }
    }
    sched_fence(s);
    if (have && res != a->rbuf)
        sched_copy(s, res, R.n, R.unit, a->rbuf, R.count, R.dt);
}

/* Chain: receive the prefix from r - 1, combine, pass on to r + 1. */
static void scan_linear_common(struct ferry_sched *s, const struct ferry_coll_args *a, int exclusive)
{
    struct red R;
    int n = s->size, r = s->rank;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    const void *src = contribution(a);
    if (!exclusive) {
        void *res = red_acc(s, &R, src, a->rbuf);
        if (r > 0) {
            void *tmp = sched_tmp(s, R.unit, R.n);
            sched_recv(s, tmp, R.n, R.unit, r - 1);
            sched_reduce(s, tmp, res, R.n, R.unit, 0);
        }
        if (r < n - 1)
            sched_send(s, res, R.n, R.unit, r + 1);
        sched_fence(s);
        red_out(s, &R, res, a->rbuf);
        return;
    }
    void *mine = sched_tmp(s, R.unit, R.n);
    sched_copy(s, src, R.count, R.dt, mine, R.n, R.unit);
    if (r == 0) {
        if (n > 1)
            sched_send(s, mine, R.n, R.unit, 1);
        return;
    }
    void *res = R.dt == R.unit ? a->rbuf : sched_tmp(s, R.unit, R.n);
    sched_recv(s, res, R.n, R.unit, r - 1);
    if (r < n - 1) {
        sched_reduce(s, res, mine, R.n, R.unit, 0);   /* prefix of 0..r */
        sched_send(s, mine, R.n, R.unit, r + 1);
    }
    sched_fence(s);
    red_out(s, &R, res, a->rbuf);
}

int scan_rd(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    scan_rd_common(s, a, 0);
    return MPI_SUCCESS;
}
int exscan_rd(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    scan_rd_common(s, a, 1);
    return MPI_SUCCESS;
}
int scan_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    scan_linear_common(s, a, 0);
    return MPI_SUCCESS;
}
int exscan_linear(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    scan_linear_common(s, a, 1);
    return MPI_SUCCESS;
}
