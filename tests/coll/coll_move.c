/* Data-movement collectives with every algorithm: Barrier, Bcast, Gather(v),
 * Scatter(v), Allgather(v), Alltoall(v,w), blocking and nonblocking, roots
 * 0 / last / middle, MPI_IN_PLACE where allowed, block sizes 0 / small /
 * odd / large, and these type pairs (sender's type, receiver's type):
 *   int/int, vector/int, int/vector (a vector of 2 ints with a hole: the
 *   receiver's holes must stay untouched), byte/byte (odd byte counts).
 * Every receive buffer is compared byte for byte with an image built locally:
 * each data element is a function of (source rank, destination rank, index,
 * call number), holes and gaps keep their fill byte.
 *
 * usage: coll_move [quick] */
#include "collt.h"

static int rank, size, quick, call;
static MPI_Datatype vec;

enum { L_INT, L_VEC, L_BYTE };
struct mode {
    int s, r;   /* layouts of the send and receive sides */
};
static const struct mode modes[] = {{L_INT, L_INT}, {L_VEC, L_INT}, {L_INT, L_VEC}, {L_BYTE, L_BYTE}};
static const char *const mode_name[] = {"int/int", "vector/int", "int/vector", "byte/byte"};
#define NMODES 4
#define FILL 0xEE

static MPI_Datatype ltype(int l)
{
    return l == L_INT ? MPI_INT : l == L_VEC ? vec : MPI_BYTE;
}
/* data elements per element of the layout's type */
static int lper(int l)
{
    return l == L_VEC ? 2 : 1;
}
/* byte offset of data element i */
static size_t loff(int l, size_t i)
{
    return l == L_INT ? 4 * i : l == L_VEC ? 4 * ((i / 2) * 3 + (i % 2) * 2) : i;
}
/* bytes holding n data elements (n even for vectors) */
static size_t lbytes(int l, size_t n)
{
    return l == L_VEC ? 12 * (n / 2) : l == L_INT ? 4 * n : n;
}
static int lcount(int l, size_t n)
{
    return (int)(n / (size_t)lper(l));
}

static int value(int src, int dst, size_t i)
{
    return (int)((unsigned)(src + 1) * 1000003u ^ (unsigned)(dst + 2) * 7919u ^ (unsigned)i * 31u ^
                 (unsigned)call * 0x9E3779B1u);
}

static void put(int l, void *buf, size_t i, int v)
{
    if (l == L_BYTE)
        ((unsigned char *)buf)[i] = (unsigned char)v;
    else
        memcpy((char *)buf + loff(l, i), &v, 4);
}

/* write n elements (src -> dst) at data element `first` of buf */
static void put_block(int l, void *buf, size_t first, size_t n, int src, int dst)
{
    for (size_t i = 0; i < n; i++)
        put(l, buf, first + i, value(src, dst, i));
}

static void *fresh(size_t bytes)
{
    void *p = tc_malloc(bytes + 16);
    memset(p, FILL, bytes + 16);
    return p;
}

static const char *what_fn, *what_alg;
static int what_mode, what_nb, what_ip, what_root;
static size_t what_k;

static void compare(const void *got, const void *want, size_t bytes)
{
    if (!memcmp(got, want, bytes + 16))
        return;
    size_t b = 0;
    while (((const unsigned char *)got)[b] == ((const unsigned char *)want)[b])
        b++;
    tc_fail(__FILE__, __LINE__, "result", "%s alg=%s types=%s k=%zu nb=%d in_place=%d root=%d: byte %zu of %zu is 0x%02x, "
            "expected 0x%02x", what_fn, what_alg, mode_name[what_mode], what_k, what_nb, what_ip, what_root, b, bytes,
            ((const unsigned char *)got)[b], ((const unsigned char *)want)[b]);
}

static void done(MPI_Request *req)
{
    if (*req != MPI_REQUEST_NULL)
        ct_wait(req);
}

/* ---- bcast ------------------------------------------------------------------- */
static void t_bcast(const struct mode *m, size_t k, int root, int nb)
{
    int l = rank == root ? m->s : m->r;
    void *buf = fresh(lbytes(l, k)), *want = fresh(lbytes(l, k));
    MPI_Request req = MPI_REQUEST_NULL;
    put_block(l, want, 0, k, root, -1);
    if (rank == root)
        put_block(l, buf, 0, k, root, -1);
    if (nb)
        CHECK_RC(MPI_Ibcast(buf, lcount(l, k), ltype(l), root, MPI_COMM_WORLD, &req));
    else
        CHECK_RC(MPI_Bcast(buf, lcount(l, k), ltype(l), root, MPI_COMM_WORLD));
    done(&req);
    compare(buf, want, lbytes(l, k));
    free(buf);
    free(want);
}

/* ---- gather / scatter (v: irregular counts, reversed order, gaps) ------------ */
static size_t vcount(int q, size_t k)
{
    return k == 0 ? 0 : ((size_t)(q % 3) * k / 2 + 2) & ~(size_t)1;
}
/* data-element displacements: blocks in reverse rank order, a gap of 2 */
static size_t vdispl(int q, size_t k)
{
    size_t d = 0;
    for (int j = size - 1; j > q; j--)
        d += vcount(j, k) + 2;
    return d;
}
static size_t vtotal(size_t k)
{
    return vdispl(0, k) + vcount(0, k) + 2;
}

static void t_gather(const struct mode *m, size_t k, int root, int v, int ip, int nb)
{
    size_t mine = v ? vcount(rank, k) : k, tot = v ? vtotal(k) : k * (size_t)size;
    void *sb = fresh(lbytes(m->s, mine)), *rb = NULL, *want = NULL;
    int *rc = NULL, *rd = NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    put_block(m->s, sb, 0, mine, rank, root);
    if (rank == root) {
        rb = fresh(lbytes(m->r, tot)), want = fresh(lbytes(m->r, tot));
        rc = tc_malloc((size_t)size * sizeof(int)), rd = tc_malloc((size_t)size * sizeof(int));
        for (int q = 0; q < size; q++) {
            size_t n = v ? vcount(q, k) : k, at = v ? vdispl(q, k) : (size_t)q * k;
            rc[q] = lcount(m->r, n), rd[q] = lcount(m->r, at);
            put_block(m->r, want, at, n, q, root);
            if (ip && q == root)
                put_block(m->r, rb, at, n, q, root);
        }
    }
    const void *s = ip && rank == root ? MPI_IN_PLACE : sb;
    if (v && nb)
        CHECK_RC(MPI_Igatherv(s, lcount(m->s, mine), ltype(m->s), rb, rc, rd, ltype(m->r), root, MPI_COMM_WORLD,
                              &req));
    else if (v)
        CHECK_RC(MPI_Gatherv(s, lcount(m->s, mine), ltype(m->s), rb, rc, rd, ltype(m->r), root, MPI_COMM_WORLD));
    else if (nb)
        CHECK_RC(MPI_Igather(s, lcount(m->s, k), ltype(m->s), rb, lcount(m->r, k), ltype(m->r), root, MPI_COMM_WORLD,
                             &req));
    else
        CHECK_RC(MPI_Gather(s, lcount(m->s, k), ltype(m->s), rb, lcount(m->r, k), ltype(m->r), root, MPI_COMM_WORLD));
    done(&req);
    if (rank == root)
        compare(rb, want, lbytes(m->r, tot));
    free(sb), free(rb), free(want), free(rc), free(rd);
}

static void t_scatter(const struct mode *m, size_t k, int root, int v, int ip, int nb)
{
    size_t mine = v ? vcount(rank, k) : k, tot = v ? vtotal(k) : k * (size_t)size;
    void *sb = NULL, *rb = fresh(lbytes(m->r, mine)), *want = fresh(lbytes(m->r, mine));
    int *sc = NULL, *sd = NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    put_block(m->r, want, 0, mine, root, rank);
    if (rank == root) {
        sb = fresh(lbytes(m->s, tot));
        sc = tc_malloc((size_t)size * sizeof(int)), sd = tc_malloc((size_t)size * sizeof(int));
        for (int q = 0; q < size; q++) {
            size_t n = v ? vcount(q, k) : k, at = v ? vdispl(q, k) : (size_t)q * k;
            sc[q] = lcount(m->s, n), sd[q] = lcount(m->s, at);
            put_block(m->s, sb, at, n, root, q);
        }
    }
    void *r = ip && rank == root ? MPI_IN_PLACE : rb;
    if (v && nb)
        CHECK_RC(MPI_Iscatterv(sb, sc, sd, ltype(m->s), r, lcount(m->r, mine), ltype(m->r), root, MPI_COMM_WORLD,
                               &req));
    else if (v)
        CHECK_RC(MPI_Scatterv(sb, sc, sd, ltype(m->s), r, lcount(m->r, mine), ltype(m->r), root, MPI_COMM_WORLD));
    else if (nb)
        CHECK_RC(MPI_Iscatter(sb, lcount(m->s, k), ltype(m->s), r, lcount(m->r, k), ltype(m->r), root,
                              MPI_COMM_WORLD, &req));
    else
        CHECK_RC(MPI_Scatter(sb, lcount(m->s, k), ltype(m->s), r, lcount(m->r, k), ltype(m->r), root,
                             MPI_COMM_WORLD));
    done(&req);
    if (!(ip && rank == root))
        compare(rb, want, lbytes(m->r, mine));
    free(sb), free(rb), free(want), free(sc), free(sd);
}

/* ---- allgather ------------------------------------------------------------------ */
static void t_allgather(const struct mode *m, size_t k, int v, int ip, int nb)
{
    size_t mine = v ? vcount(rank, k) : k, tot = v ? vtotal(k) : k * (size_t)size;
    void *sb = fresh(lbytes(m->s, mine)), *rb = fresh(lbytes(m->r, tot)), *want = fresh(lbytes(m->r, tot));
    int *rc = tc_malloc((size_t)size * sizeof(int)), *rd = tc_malloc((size_t)size * sizeof(int));
    MPI_Request req = MPI_REQUEST_NULL;
    put_block(m->s, sb, 0, mine, rank, -1);
    for (int q = 0; q < size; q++) {
        size_t n = v ? vcount(q, k) : k, at = v ? vdispl(q, k) : (size_t)q * k;
        rc[q] = lcount(m->r, n), rd[q] = lcount(m->r, at);
        put_block(m->r, want, at, n, q, -1);
        if (ip && q == rank)
            put_block(m->r, rb, at, n, q, -1);
    }
    const void *s = ip ? MPI_IN_PLACE : sb;
    if (v && nb)
        CHECK_RC(MPI_Iallgatherv(s, lcount(m->s, mine), ltype(m->s), rb, rc, rd, ltype(m->r), MPI_COMM_WORLD, &req));
    else if (v)
        CHECK_RC(MPI_Allgatherv(s, lcount(m->s, mine), ltype(m->s), rb, rc, rd, ltype(m->r), MPI_COMM_WORLD));
    else if (nb)
        CHECK_RC(MPI_Iallgather(s, lcount(m->s, k), ltype(m->s), rb, lcount(m->r, k), ltype(m->r), MPI_COMM_WORLD,
                                &req));
    else
        CHECK_RC(MPI_Allgather(s, lcount(m->s, k), ltype(m->s), rb, lcount(m->r, k), ltype(m->r), MPI_COMM_WORLD));
    done(&req);
    compare(rb, want, lbytes(m->r, tot));
    free(sb), free(rb), free(want), free(rc), free(rd);
}

/* ---- alltoall ------------------------------------------------------------------- */
/* v: counts depend on (src, dst); w: also the layout per peer alternates */
static size_t acount(int src, int dst, size_t k, int v)
{
    return v ? (k == 0 ? 0 : ((size_t)((src + 2 * dst) % 4) * k / 2) & ~(size_t)1) : k;
}

static size_t lext(int l)
{
    return l == L_INT ? 4 : l == L_VEC ? 12 : 1;
}

static void t_alltoall(const struct mode *m, size_t k, int shape, int ip, int nb)
{
    int v = shape > 0, n = size;
    int *sc = tc_malloc((size_t)n * sizeof(int)), *sd = tc_malloc((size_t)n * sizeof(int));
    int *rc = tc_malloc((size_t)n * sizeof(int)), *rd = tc_malloc((size_t)n * sizeof(int));
    int *sl = tc_malloc((size_t)n * sizeof(int)), *rl = tc_malloc((size_t)n * sizeof(int));
    MPI_Datatype *st = tc_malloc((size_t)n * sizeof(MPI_Datatype)), *rt = tc_malloc((size_t)n * sizeof(MPI_Datatype));
    size_t *sbo = tc_malloc((size_t)n * sizeof(size_t)), *rbo = tc_malloc((size_t)n * sizeof(size_t));
    size_t stot = 0, rtot = 0;
    /* layouts per peer: w mixes int and vector blocks (same type signature) */
    for (int q = 0; q < n; q++) {
        sl[q] = shape == 2 && m->s != L_BYTE ? ((q + rank) % 2 ? L_INT : L_VEC) : m->s;
        rl[q] = shape == 2 && m->r != L_BYTE ? ((q + rank) % 3 ? L_VEC : L_INT) : m->r;
    }
    /* plain: dense blocks; v and w: send blocks in reverse rank order, both
     * sides with gaps of 2 elements */
    for (int j = 0; j < n; j++) {
        int q = v ? n - 1 - j : j;
        sbo[q] = stot;
        stot += lbytes(sl[q], acount(rank, q, k, v) + (v ? 2 : 0));
        rbo[j] = rtot;
        rtot += lbytes(rl[j], acount(j, rank, k, v) + (v ? 2 : 0));
    }
    char *sb = fresh(stot), *rb = fresh(rtot), *want = fresh(rtot);
    for (int q = 0; q < n; q++) {
        size_t ns = acount(rank, q, k, v), nr = acount(q, rank, k, v);
        put_block(sl[q], sb + sbo[q], 0, ns, rank, q);
        put_block(rl[q], want + rbo[q], 0, nr, q, rank);
        if (ip)
            put_block(rl[q], rb + rbo[q], 0, ns, rank, q);
        sc[q] = lcount(sl[q], ns), rc[q] = lcount(rl[q], nr);
        sd[q] = (int)(shape == 2 ? sbo[q] : sbo[q] / lext(sl[q]));
        rd[q] = (int)(shape == 2 ? rbo[q] : rbo[q] / lext(rl[q]));
        st[q] = ltype(sl[q]), rt[q] = ltype(rl[q]);
    }
    MPI_Request req = MPI_REQUEST_NULL;
    const void *s = ip ? MPI_IN_PLACE : sb;
    if (shape == 0) {
        if (nb)
            CHECK_RC(MPI_Ialltoall(s, lcount(m->s, k), ltype(m->s), rb, lcount(m->r, k), ltype(m->r),
                                   MPI_COMM_WORLD, &req));
        else
            CHECK_RC(MPI_Alltoall(s, lcount(m->s, k), ltype(m->s), rb, lcount(m->r, k), ltype(m->r), MPI_COMM_WORLD));
    } else if (shape == 1) {
        if (nb)
            CHECK_RC(MPI_Ialltoallv(s, sc, sd, ltype(m->s), rb, rc, rd, ltype(m->r), MPI_COMM_WORLD, &req));
        else
            CHECK_RC(MPI_Alltoallv(s, sc, sd, ltype(m->s), rb, rc, rd, ltype(m->r), MPI_COMM_WORLD));
    } else {
        if (nb)
            CHECK_RC(MPI_Ialltoallw(s, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD, &req));
        else
            CHECK_RC(MPI_Alltoallw(s, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD));
    }
    done(&req);
    compare(rb, want, rtot);
    free(sc), free(sd), free(rc), free(rd), free(sl), free(rl), free(st), free(rt), free(sbo), free(rbo);
    free(sb), free(rb), free(want);
}

static void t_barrier(int nb)
{
    double in = MPI_Wtime(), out, *all = tc_malloc((size_t)size * sizeof(double));
    if (nb) {
        MPI_Request req;
        CHECK_RC(MPI_Ibarrier(MPI_COMM_WORLD, &req));
        ct_wait(&req);
    } else {
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    }
    out = MPI_Wtime();
    CHECK_RC(MPI_Allgather(&in, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        CHECK(all[q] <= out, "%s alg=%s: left the barrier at %.9f before rank %d entered at %.9f", what_fn, what_alg,
              out, q, all[q]);
    free(all);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    quick = argc > 1 && !strcmp(argv[1], "quick");
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_RC(MPI_Type_commit(&vec));
    static const size_t ks_full[] = {0, 2, 6, 34, 1000}, ks_quick[] = {0, 2, 34};
    const size_t *ks = quick ? ks_quick : ks_full;
    int nks = quick ? 3 : 5;
    size_t big = quick ? 20000 : 100000;   /* data elements: rendezvous-sized blocks */
    int roots[3] = {0, size - 1, size / 2};

    struct {
        const char *fn, *coll;
        const char *const *algs;
    } colls[] = {
        {"Barrier", "barrier", ct_barrier},       {"Bcast", "bcast", ct_bcast},
        {"Gather", "gather", ct_gather},          {"Gatherv", "gatherv", ct_gatherv},
        {"Scatter", "scatter", ct_scatter},       {"Scatterv", "scatterv", ct_scatterv},
        {"Allgather", "allgather", ct_allgather}, {"Allgatherv", "allgatherv", ct_allgatherv},
        {"Alltoall", "alltoall", ct_alltoall},    {"Alltoallv", "alltoallv", ct_alltoallv},
        {"Alltoallw", "alltoallw", ct_alltoallw},
    };
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
        for (int ai = 0; ai < ct_nalgs(colls[c].algs); ai++) {
            ct_force(colls[c].coll, colls[c].algs[ai]);
            what_fn = colls[c].fn, what_alg = colls[c].algs[ai];
            if (c == 0) {
                t_barrier(0);
                t_barrier(1);
                /* a barrier after "barrier; bcast from r" (oversubscribed,
                 * the shared-memory barrier lets rank r release the others)
                 * and after "barrier; reduce to r" (r leaves last); rank
                 * `late` enters last (busy for 20 us first), so that a lead
                 * that left without its arrival is caught */
                for (int r = 0; r < size; r++)
                    for (int late = 0; late < size; late++) {
                        int v = rank == r ? r + 1 : -1, one = 1, sum = 0;
                        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                        if (late & 1) {
                            CHECK_RC(MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, r, MPI_COMM_WORLD));
                            CHECK(rank != r || sum == size, "Reduce to %d between barriers: got %d", r, sum);
                        } else {
                            CHECK_RC(MPI_Bcast(&v, 1, MPI_INT, r, MPI_COMM_WORLD));
                            CHECK(v == r + 1, "Bcast from %d between barriers: got %d", r, v);
                        }
                        if (rank == late)
                            for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 20e-6;)
                                ;
                        t_barrier((r + late) & 1);
                    }
                continue;
            }
            for (int mi = 0; mi < NMODES; mi++)
                for (int ki = 0; ki <= nks; ki++) {
                    size_t k = ki < nks ? ks[ki] : big;
                    if (ki == nks && mi != (int)(c % NMODES))
                        continue;   /* large blocks: one type pair per collective */
                    for (int ip = 0; ip < 2; ip++) {
                        int nb = (ki + ip + mi) & 1, root = roots[(ki + mi) % 3];
                        call++;
                        what_mode = mi, what_k = k, what_nb = nb, what_ip = ip, what_root = root;
                        const struct mode *m = &modes[mi];
                        switch (c) {
                        case 1: if (!ip) t_bcast(m, k, root, nb); break;
                        case 2: t_gather(m, k, root, 0, ip, nb); break;
                        case 3: t_gather(m, k, root, 1, ip, nb); break;
                        case 4: t_scatter(m, k, root, 0, ip, nb); break;
                        case 5: t_scatter(m, k, root, 1, ip, nb); break;
                        case 6: t_allgather(m, k, 0, ip, nb); break;
                        case 7: t_allgather(m, k, 1, ip, nb); break;
                        case 8: if (!ip || m->s == m->r) t_alltoall(m, k, 0, ip, nb); break;
                        /* in place with v/w needs symmetric counts: plain alltoall covers it */
                        case 9: if (!ip) t_alltoall(m, k, 1, ip, nb); break;
                        default: if (!ip) t_alltoall(m, k, 2, ip, nb);
                        }
                    }
                }
            ct_force(colls[c].coll, "auto");
        }
    }
    CHECK_RC(MPI_Type_free(&vec));
    return tc_finish("coll_move");
}
