/* Reduction collectives with every algorithm: Reduce (several roots),
 * Allreduce, Reduce_scatter, Reduce_scatter_block, Scan, Exscan, blocking and
 * nonblocking, with and without MPI_IN_PLACE, counts 0 / 1 / small / large,
 * on
 *   int SUM, double MAX, MINLOC on MPI_DOUBLE_INT,
 *   a non-commutative user op (composition of affine maps on MPI_2INT: the
 *     result is only right if ranks are combined in rank order),
 *   a derived vector type of ints with SUM (reduced as its basic type) and
 *     with a commutative user op (which sees the derived type itself); the
 *     holes of the vector type must stay untouched.
 * Every element is checked against a reference folded locally in rank order,
 * and the send buffer must come back unchanged.
 *
 * usage: coll_reduce [quick]   (quick: fewer counts, for the sanitizer run) */
#include "collt.h"

static int rank, size, quick, peer_no_dt_ops;
static MPI_Datatype vec;   /* 2 ints with a hole between them: extent 3 ints */
static MPI_Op affine_op, vmax_op;

enum { C_INT_SUM, C_DBL_MAX, C_MINLOC, C_AFFINE, C_VEC_SUM, C_VEC_USER, NCASES };
static const char *const case_name[] = {"int SUM", "double MAX", "DOUBLE_INT MINLOC", "2INT affine (noncommutative)",
                                        "vector SUM", "vector user MAX"};
#define HOLE (-77777)

struct dint {
    double v;
    int i;
};

static int val(int q, size_t i, int salt)
{
    return (int)(((unsigned)q * 131u + (unsigned)i * 7u + (unsigned)salt) % 17u) - 8;
}

static size_t ext(int cs)
{
    switch (cs) {
    case C_INT_SUM: return sizeof(int);
    case C_DBL_MAX: return sizeof(double);
    case C_MINLOC: return sizeof(struct dint);
    case C_AFFINE: return 2 * sizeof(int);
    default: return 3 * sizeof(int);
    }
}

static MPI_Datatype dtype(int cs)
{
    static const MPI_Datatype t[] = {MPI_INT, MPI_DOUBLE, MPI_DOUBLE_INT, MPI_2INT};
    return cs < C_VEC_SUM ? t[cs] : vec;
}

static MPI_Op op_of(int cs)
{
    static const MPI_Op o[] = {MPI_SUM, MPI_MAX, MPI_MINLOC};
    if (cs < C_AFFINE)
        return o[cs];
    return cs == C_AFFINE ? affine_op : cs == C_VEC_SUM ? MPI_SUM : vmax_op;
}

/* rank q's element i */
static void contrib(int cs, int q, size_t i, void *e)
{
    switch (cs) {
    case C_INT_SUM: *(int *)e = val(q, i, 1); break;
    case C_DBL_MAX: *(double *)e = 0.5 * val(q, i, 2); break;
    case C_MINLOC: ((struct dint *)e)->v = val(q, i, 3) / 4; ((struct dint *)e)->i = (q * 5 + (int)i) % 7; break;
    case C_AFFINE: ((int *)e)[0] = 2 * val(q, i, 4) + 1; ((int *)e)[1] = val(q, i, 5); break;
    default: ((int *)e)[0] = val(q, 2 * i, 6); ((int *)e)[1] = HOLE; ((int *)e)[2] = val(q, 2 * i + 1, 7);
    }
}

/* The affine maps t -> a t + b; x op y = "x, then y" (unsigned arithmetic). */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *x = in, *y = inout;
    for (int k = 0; k < *len; k++, x += 2, y += 2) {
        unsigned a = (unsigned)y[0] * (unsigned)x[0], b = (unsigned)y[0] * (unsigned)x[1] + (unsigned)y[1];
        y[0] = (int)a, y[1] = (int)b;
    }
}

static void vmax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *x = in, *y = inout;
    CHECK(*dt == vec, "user op called with datatype 0x%x, expected the vector type", (unsigned)*dt);
    for (int k = 0; k < *len; k++, x += 3, y += 3) {
        if (x[0] > y[0])
            y[0] = x[0];
        if (x[2] > y[2])
            y[2] = x[2];
    }
}

/* y = x op y, x from lower ranks */
static void combine(int cs, const void *x, void *y)
{
    int one = 1;
    MPI_Datatype t = vec;
    switch (cs) {
    case C_INT_SUM: *(int *)y += *(const int *)x; break;
    case C_DBL_MAX: if (*(const double *)x > *(double *)y) *(double *)y = *(const double *)x; break;
    case C_MINLOC: {
        const struct dint *a = x;
        struct dint *b = y;
        if (a->v < b->v || (a->v == b->v && a->i < b->i))
            *b = *a;
        break;
    }
    case C_AFFINE: affine((void *)x, y, &one, &t); break;
    case C_VEC_SUM: ((int *)y)[0] += ((const int *)x)[0]; ((int *)y)[2] += ((const int *)x)[2]; break;
    default: vmax((void *)x, y, &one, &t);
    }
}

/* reduction of element i over ranks [lo, hi) */
static void expect(int cs, size_t i, int lo, int hi, void *e)
{
    unsigned char t[64];
    contrib(cs, lo, i, e);
    for (int q = lo + 1; q < hi; q++) {
        contrib(cs, q, i, t);
        combine(cs, e, t);
        memcpy(e, t, ext(cs));
    }
}

static int same(int cs, const void *a, const void *b)
{
    switch (cs) {
    case C_INT_SUM: return *(const int *)a == *(const int *)b;
    case C_DBL_MAX: return *(const double *)a == *(const double *)b;
    case C_MINLOC: return ((const struct dint *)a)->v == ((const struct dint *)b)->v &&
                          ((const struct dint *)a)->i == ((const struct dint *)b)->i;
    case C_AFFINE: return !memcmp(a, b, 2 * sizeof(int));
    default: return ((const int *)a)[0] == ((const int *)b)[0] && ((const int *)a)[2] == ((const int *)b)[2] &&
                    ((const int *)a)[1] == HOLE;
    }
}

static void fill(int cs, void *buf, size_t count, size_t first, int q)
{
    for (size_t i = 0; i < count; i++)
        contrib(cs, q, first + i, (char *)buf + i * ext(cs));
}

/* Inputs: the send buffer (or the receive buffer for MPI_IN_PLACE) holds
 * rank's contribution; otherwise the receive buffer holds another rank's
 * data (reading it instead of the send buffer shows), holes included. */
static const void *inputs(int cs, char *sb, char *rb, size_t count, int in_place)
{
    fill(cs, sb, count, 0, rank);
    fill(cs, rb, count, 0, in_place ? rank : rank + 1000);
    return in_place ? MPI_IN_PLACE : sb;
}

static const char *what_fn, *what_alg;
static int what_root, what_inplace, what_nb;

/* buf holds elements [first, first + count) of the reduction over [lo, hi) */
static void verify(int cs, const void *buf, size_t count, size_t first, int lo, int hi)
{
    unsigned char e[64];
    for (size_t i = 0; i < count; i++) {
        const void *got = (const char *)buf + i * ext(cs);
        expect(cs, first + i, lo, hi, e);
        if (!same(cs, got, e)) {
            const int *g = got, *x = (const int *)e;
            tc_fail(__FILE__, __LINE__, "result", "%s alg=%s case=%s count=%zu root=%d in_place=%d nb=%d: element %zu "
                    "(ints %d %d %d) expected (%d %d %d)", what_fn, what_alg, case_name[cs], count, what_root,
                    what_inplace, what_nb, first + i, g[0], ext(cs) > 4 ? g[1] : 0, ext(cs) > 8 ? g[2] : 0, x[0],
                    ext(cs) > 4 ? x[1] : 0, ext(cs) > 8 ? x[2] : 0);
        }
    }
}

static void finish(MPI_Request *req)
{
    if (*req != MPI_REQUEST_NULL)
        ct_wait(req);
}

/* The send buffer is input only: after the call it still holds this rank's
 * contribution (an algorithm must not use it as scratch). */
static void verify_input(int cs, const char *sb, size_t count, int in_place)
{
    unsigned char e[64];
    for (size_t i = 0; !in_place && i < count; i++) {
        contrib(cs, rank, i, e);
        if (!same(cs, sb + i * ext(cs), e))
            tc_fail(__FILE__, __LINE__, "send buffer", "%s alg=%s case=%s count=%zu nb=%d: element %zu of the "
                    "send buffer changed", what_fn, what_alg, case_name[cs], count, what_nb, i);
    }
}

static void run_reduce(int cs, size_t count, int root, int in_place, int nb)
{
    size_t e = ext(cs);
    char *sb = tc_malloc(count * e), *rb = tc_malloc(count * e + 1);
    MPI_Request req = MPI_REQUEST_NULL;
    what_root = root, what_inplace = in_place, what_nb = nb;
    const void *s = inputs(cs, sb, rb, count, in_place && rank == root);
    if (nb)
        CHECK_RC(MPI_Ireduce(s, rb, (int)count, dtype(cs), op_of(cs), root, MPI_COMM_WORLD, &req));
    else
        CHECK_RC(MPI_Reduce(s, rb, (int)count, dtype(cs), op_of(cs), root, MPI_COMM_WORLD));
    finish(&req);
    if (rank == root)
        verify(cs, rb, count, 0, 0, size);
    verify_input(cs, sb, count, in_place && rank == root);
    free(sb);
    free(rb);
}

static void run_allreduce(int cs, size_t count, int in_place, int nb)
{
    what_inplace = in_place, what_nb = nb;
    size_t e = ext(cs);
    char *sb = tc_malloc(count * e), *rb = tc_malloc(count * e + 1);
    MPI_Request req = MPI_REQUEST_NULL;
    const void *s = inputs(cs, sb, rb, count, in_place);
    if (nb)
        CHECK_RC(MPI_Iallreduce(s, rb, (int)count, dtype(cs), op_of(cs), MPI_COMM_WORLD, &req));
    else
        CHECK_RC(MPI_Allreduce(s, rb, (int)count, dtype(cs), op_of(cs), MPI_COMM_WORLD));
    finish(&req);
    verify(cs, rb, count, 0, 0, size);
    verify_input(cs, sb, count, in_place);
    free(sb);
    free(rb);
}

/* Reduce_scatter with irregular counts (some zero), or _block with count each. */
static void run_reduce_scatter(int cs, size_t count, int block, int in_place, int nb)
{
    what_inplace = in_place, what_nb = nb;
    size_t e = ext(cs);
    int *counts = tc_malloc((size_t)size * sizeof(int));
    size_t total = 0, first = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = block ? (int)count : (int)(count == 0 ? 0 : (count * (size_t)(i % 3)) / 2 + (size_t)(i == 1));
        if (i < rank)
            first += (size_t)counts[i];
        total += (size_t)counts[i];
    }
    char *sb = tc_malloc(total * e), *rb = tc_malloc(total * e + 1);
    MPI_Request req = MPI_REQUEST_NULL;
    const void *s = inputs(cs, sb, rb, total, in_place);
    if (block && nb)
        CHECK_RC(MPI_Ireduce_scatter_block(s, rb, (int)count, dtype(cs), op_of(cs), MPI_COMM_WORLD, &req));
    else if (block)
        CHECK_RC(MPI_Reduce_scatter_block(s, rb, (int)count, dtype(cs), op_of(cs), MPI_COMM_WORLD));
    else if (nb)
        CHECK_RC(MPI_Ireduce_scatter(s, rb, counts, dtype(cs), op_of(cs), MPI_COMM_WORLD, &req));
    else
        CHECK_RC(MPI_Reduce_scatter(s, rb, counts, dtype(cs), op_of(cs), MPI_COMM_WORLD));
    finish(&req);
    verify(cs, rb, (size_t)counts[rank], first, 0, size);
    verify_input(cs, sb, total, in_place);
    free(counts);
    free(sb);
    free(rb);
}

static void run_scan(int cs, size_t count, int exclusive, int in_place, int nb)
{
    what_inplace = in_place, what_nb = nb;
    size_t e = ext(cs);
    char *sb = tc_malloc(count * e), *rb = tc_malloc(count * e + 1);
    MPI_Request req = MPI_REQUEST_NULL;
    const void *s = inputs(cs, sb, rb, count, in_place);
    if (exclusive && nb)
        CHECK_RC(MPI_Iexscan(s, rb, (int)count, dtype(cs), op_of(cs), MPI_COMM_WORLD, &req));
    else if (exclusive)
        CHECK_RC(MPI_Exscan(s, rb, (int)count, dtype(cs), op_of(cs), MPI_COMM_WORLD));
    else if (nb)
        CHECK_RC(MPI_Iscan(s, rb, (int)count, dtype(cs), op_of(cs), MPI_COMM_WORLD, &req));
    else
        CHECK_RC(MPI_Scan(s, rb, (int)count, dtype(cs), op_of(cs), MPI_COMM_WORLD));
    finish(&req);
    if (!exclusive)
        verify(cs, rb, count, 0, 0, rank + 1);
    else if (rank > 0)
        verify(cs, rb, count, 0, 0, rank);
    verify_input(cs, sb, count, in_place);
    free(sb);
    free(rb);
}

enum { F_REDUCE, F_ALLREDUCE, F_RS, F_RSB, F_SCAN, F_EXSCAN, NFNS };
static const char *const fn_name[] = {"Reduce", "Allreduce", "Reduce_scatter", "Reduce_scatter_block", "Scan",
                                      "Exscan"};
static const char *const fn_coll[] = {"reduce", "allreduce", "reduce_scatter", "reduce_scatter_block", "scan",
                                      "exscan"};
static const char *const *fn_algs(int f)
{
    switch (f) {
    case F_REDUCE: return ct_reduce;
    case F_ALLREDUCE: return ct_allreduce;
    case F_RS: case F_RSB: return ct_reduce_scatter;
    default: return ct_scan;
    }
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    quick = argc > 1 && !strcmp(argv[1], "quick");
    /* Peer deviation: MPICH 4.0 rejects predefined ops on derived types
     * even when built from one basic type (MPI_ERR_OP); Ferry supports them. */
    peer_no_dt_ops = tc_mpich_version() != 0;
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_RC(MPI_Type_commit(&vec));
    CHECK_RC(MPI_Op_create(affine, 0, &affine_op));
    CHECK_RC(MPI_Op_create(vmax, 1, &vmax_op));
    static const size_t counts_full[] = {0, 1, 5, 67, 1000};
    static const size_t counts_quick[] = {0, 1, 67};
    const size_t *counts = quick ? counts_quick : counts_full;
    int ncounts = quick ? 3 : 5;
    int roots[3] = {0, size - 1, size / 2};
    for (int f = 0; f < NFNS; f++) {
        const char *const *algs = fn_algs(f);
        for (int ai = 0; ai < ct_nalgs(algs); ai++) {
            ct_force(fn_coll[f], algs[ai]);
            what_fn = fn_name[f], what_alg = algs[ai];
            for (int cs = 0; cs < NCASES; cs++)
                if (cs != C_VEC_SUM || !peer_no_dt_ops)
                for (int ci = 0; ci < ncounts; ci++)
                    for (int ip = 0; ip < 2; ip++) {
                        int nb = (ci + ip + cs) & 1;
                        what_inplace = ip, what_nb = nb, what_root = -1;
                        switch (f) {
                        case F_REDUCE:
                            for (int k = 0; k < (ci == 2 ? 3 : 1); k++)
                                run_reduce(cs, counts[ci], roots[k], ip, nb);
                            break;
                        case F_ALLREDUCE: run_allreduce(cs, counts[ci], ip, nb); break;
                        case F_RS: run_reduce_scatter(cs, counts[ci], 0, ip, nb); break;
                        case F_RSB: run_reduce_scatter(cs, counts[ci], 1, ip, nb); break;
                        case F_SCAN: run_scan(cs, counts[ci], 0, ip, nb); break;
                        default: run_scan(cs, counts[ci], 1, ip, nb);
                        }
                    }
            /* a large vector: rendezvous-sized messages in every algorithm */
            size_t big = quick ? 20000 : 150000;
            what_inplace = 0, what_nb = 0;
            switch (f) {
            case F_REDUCE: run_reduce(C_INT_SUM, big, size - 1, 0, 0); run_reduce(C_AFFINE, big / 4, 0, 1, 1); break;
            case F_ALLREDUCE:
                run_allreduce(C_INT_SUM, big, 0, 0);
                run_allreduce(peer_no_dt_ops ? C_VEC_USER : C_VEC_SUM, big / 4, 1, 1);
                break;
            case F_RS: run_reduce_scatter(C_INT_SUM, big / (size_t)size, 0, 1, 0); break;
            case F_RSB: run_reduce_scatter(C_DBL_MAX, big / (size_t)size, 1, 0, 1); break;
            case F_SCAN: run_scan(C_INT_SUM, big / 4, 0, 0, 0); break;
            default: run_scan(C_AFFINE, big / 4, 1, 1, 0);
            }
            ct_force(fn_coll[f], "auto");
        }
    }
    CHECK_RC(MPI_Op_free(&affine_op));
    CHECK_RC(MPI_Op_free(&vmax_op));
    CHECK_RC(MPI_Type_free(&vec));
    return tc_finish("coll_reduce");
}
