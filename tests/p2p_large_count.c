/* p2p_large_count: the MPI-4 large-count (_c) functions with small counts,
 * each against its int form (the name says p2p; it covers every family).
 *
 * Point-to-point: every send mode (Send/Ssend/Rsend/Bsend, I and _init
 * forms) into a pre-posted receive, every receive (Recv, Irecv, Recv_init,
 * Mprobe + Mrecv, Improbe + Imrecv) of an Isend, Sendrecv(_replace) and
 * Isendrecv(_replace), in a ring, int and _c forms alike: the data, and
 * Get_count(_c) / Get_elements(_c). Buffer_attach_c / detach_c. A negative
 * count is MPI_ERR_COUNT for the _c forms too.
 *
 * Datatypes: each constructor in its int and _c form with the same
 * arguments: size, extent and true extent (int, _x and _c queries), the
 * envelope (the _c type lists large counts, as MPICH does, and the int
 * envelope query refuses it) and contents, Pack/Unpack(_c),
 * Pack_size(_c), Pack_external(_c) give the same bytes, and a message
 * sent with one type arrives intact through the other.
 *
 * Collectives: every blocking and nonblocking collective with a _c form,
 * neighborhood ones on a periodic ring, in four forms (int, _c, I int,
 * I _c) from the same input: the results are identical. Reduce_local_c,
 * and a user op from Op_create_c (MPI_Count length) against MPI_SUM.
 *
 * MPICH 4.0.2 (the peer that validates this test) crashes in
 * Pack_external_size on struct types and leaves Isendrecv's status unset:
 * with it those are not checked.
 *
 * On Ferry only (other MPIs would run them): a v-form count above INT_MAX,
 * Reduce_scatter_block_c above INT_MAX and MPI_Buffer_detach of a buffer
 * attached with more than INT_MAX bytes give MPI_ERR_COUNT.
 *
 * These are MPI-4 functions: built against an MPI-3 library (Open MPI 4.1)
 * the program only says so. */
#include "common.h"
#include <limits.h>

#if MPI_VERSION >= 4 || defined(FERRY_MPI_H_INCLUDED)
static int rank, size, to, from, on_ferry, on_mpich;
static MPI_Comm comm = MPI_COMM_WORLD;

#define N 37   /* ints per point-to-point message */

static int err_class(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* ---- point-to-point --------------------------------------------------------------- */

static void check_status(const MPI_Status *st, MPI_Count n, const char *what)
{
    int c = -1, e = -1;
    MPI_Count cc = -1, ce = -1;
    CHECK_RC(MPI_Get_count(st, MPI_INT, &c));
    CHECK_RC(MPI_Get_count_c(st, MPI_INT, &cc));
    CHECK_RC(MPI_Get_elements(st, MPI_INT, &e));
    CHECK_RC(MPI_Get_elements_c(st, MPI_INT, &ce));
    CHECK(c == n && cc == n && e == n && ce == n, "%s: Get_count %d, _c %lld, Get_elements %d, _c %lld; expected %lld",
          what, c, (long long)cc, e, (long long)ce, (long long)n);
}

/* Send variant v (0..11: Send Ssend Rsend Bsend Isend Issend Irsend Ibsend,
 * then the four _init forms) in the int or _c form into a receive posted
 * before (an Irecv), so that every mode completes even to itself. */
static void sends(int large)
{
    static const char *names[] = {"Send", "Ssend", "Rsend", "Bsend", "Isend", "Issend", "Irsend", "Ibsend",
                                  "Send_init", "Ssend_init", "Rsend_init", "Bsend_init"};
    int sb[N], rb[N + 1];
    for (int v = 0; v < 12; v++) {
        int tag = 100 + v;
        char what[64];
        snprintf(what, sizeof what, "MPI_%s%s", names[v], large ? "_c" : "");
        tc_fill(sb, sizeof sb, rank, (uint64_t)tag + 1000u * (uint64_t)large);
        memset(rb, 0, sizeof rb);
        MPI_Request rr, sr = MPI_REQUEST_NULL;
        MPI_Status st;
        CHECK_RC(MPI_Irecv(rb, N + 1, MPI_INT, from, tag, comm, &rr));
        CHECK_RC(MPI_Barrier(comm));   /* Rsend: every receive is posted */
        switch (v) {
        case 0: CHECK_RC(large ? MPI_Send_c(sb, N, MPI_INT, to, tag, comm) : MPI_Send(sb, N, MPI_INT, to, tag, comm)); break;
        case 1: CHECK_RC(large ? MPI_Ssend_c(sb, N, MPI_INT, to, tag, comm) : MPI_Ssend(sb, N, MPI_INT, to, tag, comm)); break;
        case 2: CHECK_RC(large ? MPI_Rsend_c(sb, N, MPI_INT, to, tag, comm) : MPI_Rsend(sb, N, MPI_INT, to, tag, comm)); break;
        case 3: CHECK_RC(large ? MPI_Bsend_c(sb, N, MPI_INT, to, tag, comm) : MPI_Bsend(sb, N, MPI_INT, to, tag, comm)); break;
        case 4: CHECK_RC(large ? MPI_Isend_c(sb, N, MPI_INT, to, tag, comm, &sr) : MPI_Isend(sb, N, MPI_INT, to, tag, comm, &sr)); break;
        case 5: CHECK_RC(large ? MPI_Issend_c(sb, N, MPI_INT, to, tag, comm, &sr) : MPI_Issend(sb, N, MPI_INT, to, tag, comm, &sr)); break;
        case 6: CHECK_RC(large ? MPI_Irsend_c(sb, N, MPI_INT, to, tag, comm, &sr) : MPI_Irsend(sb, N, MPI_INT, to, tag, comm, &sr)); break;
        case 7: CHECK_RC(large ? MPI_Ibsend_c(sb, N, MPI_INT, to, tag, comm, &sr) : MPI_Ibsend(sb, N, MPI_INT, to, tag, comm, &sr)); break;
        case 8: CHECK_RC(large ? MPI_Send_init_c(sb, N, MPI_INT, to, tag, comm, &sr) : MPI_Send_init(sb, N, MPI_INT, to, tag, comm, &sr)); break;
        case 9: CHECK_RC(large ? MPI_Ssend_init_c(sb, N, MPI_INT, to, tag, comm, &sr) : MPI_Ssend_init(sb, N, MPI_INT, to, tag, comm, &sr)); break;
        case 10: CHECK_RC(large ? MPI_Rsend_init_c(sb, N, MPI_INT, to, tag, comm, &sr) : MPI_Rsend_init(sb, N, MPI_INT, to, tag, comm, &sr)); break;
        case 11: CHECK_RC(large ? MPI_Bsend_init_c(sb, N, MPI_INT, to, tag, comm, &sr) : MPI_Bsend_init(sb, N, MPI_INT, to, tag, comm, &sr)); break;
        }
        if (v >= 8)
            CHECK_RC(MPI_Start(&sr));
        if (sr != MPI_REQUEST_NULL)
            CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        if (v >= 8)
            CHECK_RC(MPI_Request_free(&sr));
        CHECK_RC(MPI_Wait(&rr, &st));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag, "%s: status source %d tag %d", what, st.MPI_SOURCE,
              st.MPI_TAG);
        check_status(&st, N, what);
        CHECK_PAT(rb, sizeof sb, from, (uint64_t)tag + 1000u * (uint64_t)large, "%s", what);
        CHECK_BYTES(rb + N, sizeof(int), 0, "%s wrote past the message", what);
    }
}

/* Receive variant v (Recv Irecv Recv_init Mrecv Imrecv) in the int or _c
 * form of a message sent with Isend. */
static void recvs(int large)
{
    static const char *names[] = {"Recv", "Irecv", "Recv_init", "Mrecv", "Imrecv"};
    int sb[N], rb[N + 1];
    for (int v = 0; v < 5; v++) {
        int tag = 200 + v, flag = 0;
        char what[64];
        snprintf(what, sizeof what, "MPI_%s%s", names[v], large ? "_c" : "");
        tc_fill(sb, sizeof sb, rank, (uint64_t)tag + 1000u * (uint64_t)large);
        memset(rb, 0, sizeof rb);
        MPI_Request sr, rr = MPI_REQUEST_NULL;
        MPI_Message msg;
        MPI_Status st;
        CHECK_RC(MPI_Isend(sb, N, MPI_INT, to, tag, comm, &sr));
        switch (v) {
        case 0:
            CHECK_RC(large ? MPI_Recv_c(rb, N + 1, MPI_INT, from, tag, comm, &st)
                           : MPI_Recv(rb, N + 1, MPI_INT, from, tag, comm, &st));
            break;
        case 1:
            CHECK_RC(large ? MPI_Irecv_c(rb, N + 1, MPI_INT, from, tag, comm, &rr)
                           : MPI_Irecv(rb, N + 1, MPI_INT, from, tag, comm, &rr));
            break;
        case 2:
            CHECK_RC(large ? MPI_Recv_init_c(rb, N + 1, MPI_INT, from, tag, comm, &rr)
                           : MPI_Recv_init(rb, N + 1, MPI_INT, from, tag, comm, &rr));
            CHECK_RC(MPI_Start(&rr));
            break;
        case 3:
            CHECK_RC(MPI_Mprobe(from, tag, comm, &msg, &st));
            CHECK_RC(large ? MPI_Mrecv_c(rb, N + 1, MPI_INT, &msg, &st) : MPI_Mrecv(rb, N + 1, MPI_INT, &msg, &st));
            break;
        case 4:
            while (!flag)
                CHECK_RC(MPI_Improbe(from, tag, comm, &flag, &msg, &st));
            CHECK_RC(large ? MPI_Imrecv_c(rb, N + 1, MPI_INT, &msg, &rr) : MPI_Imrecv(rb, N + 1, MPI_INT, &msg, &rr));
            break;
        }
        if (rr != MPI_REQUEST_NULL)
            CHECK_RC(MPI_Wait(&rr, &st));
        if (v == 2)
            CHECK_RC(MPI_Request_free(&rr));
        CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag, "%s: status source %d tag %d", what, st.MPI_SOURCE,
              st.MPI_TAG);
        check_status(&st, N, what);
        CHECK_PAT(rb, sizeof sb, from, (uint64_t)tag + 1000u * (uint64_t)large, "%s", what);
        CHECK_BYTES(rb + N, sizeof(int), 0, "%s wrote past the message", what);
    }
}

/* Sendrecv, Sendrecv_replace, Isendrecv, Isendrecv_replace (contiguous: see
 * p2p_isendrecv for MPICH 4.0.2's troubles with the others). */
static void sendrecvs(int large)
{
    static const char *names[] = {"Sendrecv", "Sendrecv_replace", "Isendrecv", "Isendrecv_replace"};
    int sb[N], rb[N + 1];
    for (int v = 0; v < 4; v++) {
        int tag = 300 + v;
        char what[64];
        snprintf(what, sizeof what, "MPI_%s%s", names[v], large ? "_c" : "");
        uint64_t salt = (uint64_t)tag + 1000u * (uint64_t)large;
        tc_fill(sb, sizeof sb, rank, salt);
        memset(rb, 0, sizeof rb);
        if (v % 2)
            tc_fill(rb, sizeof sb, rank, salt);   /* replace: sent from and received into rb */
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Status st;
        switch (v) {
        case 0:
            CHECK_RC(large ? MPI_Sendrecv_c(sb, N, MPI_INT, to, tag, rb, N + 1, MPI_INT, from, tag, comm, &st)
                           : MPI_Sendrecv(sb, N, MPI_INT, to, tag, rb, N + 1, MPI_INT, from, tag, comm, &st));
            break;
        case 1:
            CHECK_RC(large ? MPI_Sendrecv_replace_c(rb, N, MPI_INT, to, tag, from, tag, comm, &st)
                           : MPI_Sendrecv_replace(rb, N, MPI_INT, to, tag, from, tag, comm, &st));
            break;
        case 2:
            CHECK_RC(large ? MPI_Isendrecv_c(sb, N, MPI_INT, to, tag, rb, N + 1, MPI_INT, from, tag, comm, &r)
                           : MPI_Isendrecv(sb, N, MPI_INT, to, tag, rb, N + 1, MPI_INT, from, tag, comm, &r));
            break;
        case 3:
            CHECK_RC(large ? MPI_Isendrecv_replace_c(rb, N, MPI_INT, to, tag, from, tag, comm, &r)
                           : MPI_Isendrecv_replace(rb, N, MPI_INT, to, tag, from, tag, comm, &r));
            break;
        }
        if (r != MPI_REQUEST_NULL)
            CHECK_RC(MPI_Wait(&r, &st));
        if (v < 2 || !on_mpich) {   /* MPICH 4.0.2 leaves Isendrecv's status unset */
            CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag, "%s: status source %d tag %d", what, st.MPI_SOURCE,
                  st.MPI_TAG);
            check_status(&st, N, what);
        }
        CHECK_PAT(rb, sizeof sb, from, salt, "%s", what);
        CHECK_BYTES(rb + N, sizeof(int), 0, "%s wrote past the message", what);
    }
}

static void p2p(void)
{
    /* three buffered sends in flight at most (Bsend, Ibsend, Bsend_init) */
    MPI_Count bsize = 3 * ((MPI_Count)N * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD) + 64;
    char *bbuf = tc_malloc((size_t)bsize);
    CHECK_RC(MPI_Buffer_attach_c(bbuf, bsize));
    for (int large = 0; large < 2; large++) {
        sends(large);
        recvs(large);
        sendrecvs(large);
    }
    void *back = NULL;
    MPI_Count got = -1;
    CHECK_RC(MPI_Buffer_detach_c(&back, &got));
    CHECK(back == bbuf && got == bsize, "Buffer_detach_c gave %p, %lld; attached %p, %lld", back, (long long)got,
          (void *)bbuf, (long long)bsize);
    int igot = -1;   /* the int forms on the same buffer */
    CHECK_RC(MPI_Buffer_attach(bbuf, (int)bsize));
    CHECK_RC(MPI_Buffer_detach(&back, &igot));
    CHECK(back == bbuf && igot == (int)bsize, "Buffer_detach gave %p, %d", back, igot);
    if (on_ferry) {   /* an attached size the int detach cannot report: it fails, the buffer stays */
        MPI_Count huge = (MPI_Count)INT_MAX + 2;
        CHECK_RC(MPI_Buffer_attach_c(bbuf, huge));
        int rc = MPI_Buffer_detach(&back, &igot);
        CHECK(err_class(rc) == MPI_ERR_COUNT, "Buffer_detach of %lld bytes: %d, expected MPI_ERR_COUNT",
              (long long)huge, rc);
        CHECK_RC(MPI_Buffer_detach_c(&back, &got));
        CHECK(back == bbuf && got == huge, "Buffer_detach_c after the failed Buffer_detach: %p, %lld", back,
              (long long)got);
    }
    free(bbuf);

    /* negative counts */
    int x = 0, rc;
    MPI_Request r;
    rc = MPI_Send_c(&x, -1, MPI_INT, to, 1, comm);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Send_c with count -1: %d", rc);
    rc = MPI_Recv_c(&x, -1, MPI_INT, from, 1, comm, MPI_STATUS_IGNORE);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Recv_c with count -1: %d", rc);
    rc = MPI_Isend_c(&x, -5, MPI_INT, to, 1, comm, &r);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Isend_c with count -5: %d", rc);
    rc = MPI_Irecv_c(&x, -5, MPI_INT, from, 1, comm, &r);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Irecv_c with count -5: %d", rc);
}

/* ---- datatypes -------------------------------------------------------------------- */

struct tpair {
    const char *name;
    MPI_Datatype ti, tc;   /* built by the int and the _c constructor */
    int combiner;
    MPI_Count ni, nc, nd;  /* the _c type's envelope */
    MPI_Count counts[16];  /* its large counts */
};

static void make_types(struct tpair *p, int *np)
{
    int n = 0;
#define PAIR(nm, comb, ni_, nc_, nd_, ...)                                                                   \
    p[n] = (struct tpair){.name = nm, .combiner = comb, .ni = ni_, .nc = nc_, .nd = nd_, .counts = {__VA_ARGS__}}; \
    n++
    PAIR("contiguous", MPI_COMBINER_CONTIGUOUS, 0, 1, 1, 5);
    CHECK_RC(MPI_Type_contiguous(5, MPI_INT, &p[n - 1].ti));
    CHECK_RC(MPI_Type_contiguous_c(5, MPI_INT, &p[n - 1].tc));
    PAIR("vector", MPI_COMBINER_VECTOR, 0, 3, 1, 3, 2, 4);
    CHECK_RC(MPI_Type_vector(3, 2, 4, MPI_INT, &p[n - 1].ti));
    CHECK_RC(MPI_Type_vector_c(3, 2, 4, MPI_INT, &p[n - 1].tc));
    PAIR("hvector", MPI_COMBINER_HVECTOR, 0, 3, 1, 3, 2, 20);
    CHECK_RC(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &p[n - 1].ti));
    CHECK_RC(MPI_Type_create_hvector_c(3, 2, 20, MPI_INT, &p[n - 1].tc));
    {
        int bl[3] = {2, 1, 3}, d[3] = {0, 4, 9};
        MPI_Count blc[3] = {2, 1, 3}, dc[3] = {0, 4, 9};
        PAIR("indexed", MPI_COMBINER_INDEXED, 0, 7, 1, 3, 2, 1, 3, 0, 4, 9);
        CHECK_RC(MPI_Type_indexed(3, bl, d, MPI_INT, &p[n - 1].ti));
        CHECK_RC(MPI_Type_indexed_c(3, blc, dc, MPI_INT, &p[n - 1].tc));
        MPI_Aint hd[3] = {0, 16, 40};
        MPI_Count hdc[3] = {0, 16, 40};
        PAIR("hindexed", MPI_COMBINER_HINDEXED, 0, 7, 1, 3, 2, 1, 3, 0, 16, 40);
        CHECK_RC(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &p[n - 1].ti));
        CHECK_RC(MPI_Type_create_hindexed_c(3, blc, hdc, MPI_INT, &p[n - 1].tc));
        int bd[3] = {0, 5, 9};
        MPI_Count bdc[3] = {0, 5, 9};
        PAIR("indexed_block", MPI_COMBINER_INDEXED_BLOCK, 0, 5, 1, 3, 2, 0, 5, 9);
        CHECK_RC(MPI_Type_create_indexed_block(3, 2, bd, MPI_INT, &p[n - 1].ti));
        CHECK_RC(MPI_Type_create_indexed_block_c(3, 2, bdc, MPI_INT, &p[n - 1].tc));
        MPI_Aint hbd[3] = {0, 24, 48};
        MPI_Count hbdc[3] = {0, 24, 48};
        PAIR("hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, 0, 5, 1, 3, 2, 0, 24, 48);
        CHECK_RC(MPI_Type_create_hindexed_block(3, 2, hbd, MPI_INT, &p[n - 1].ti));
        CHECK_RC(MPI_Type_create_hindexed_block_c(3, 2, hbdc, MPI_INT, &p[n - 1].tc));
    }
    {
        int bl[3] = {1, 2, 1};
        MPI_Aint d[3] = {0, 8, 24};
        MPI_Count blc[3] = {1, 2, 1}, dc[3] = {0, 8, 24};
        MPI_Datatype ts[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        PAIR("struct", MPI_COMBINER_STRUCT, 0, 7, 3, 3, 1, 2, 1, 0, 8, 24);
        CHECK_RC(MPI_Type_create_struct(3, bl, d, ts, &p[n - 1].ti));
        CHECK_RC(MPI_Type_create_struct_c(3, blc, dc, ts, &p[n - 1].tc));
    }
    {
        int sz[2] = {6, 5}, sub[2] = {3, 2}, st[2] = {1, 2};
        MPI_Count szc[2] = {6, 5}, subc[2] = {3, 2}, stc[2] = {1, 2};
        PAIR("subarray", MPI_COMBINER_SUBARRAY, 2, 6, 1, 6, 5, 3, 2, 1, 2);
        CHECK_RC(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &p[n - 1].ti));
        CHECK_RC(MPI_Type_create_subarray_c(2, szc, subc, stc, MPI_ORDER_C, MPI_INT, &p[n - 1].tc));
        int gs[2] = {6, 5}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
        int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 1};
        MPI_Count gsc[2] = {6, 5};
        PAIR("darray", MPI_COMBINER_DARRAY, 10, 2, 1, 6, 5);
        CHECK_RC(MPI_Type_create_darray(2, 1, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &p[n - 1].ti));
        CHECK_RC(MPI_Type_create_darray_c(2, 1, 2, gsc, dist, darg, ps, MPI_ORDER_C, MPI_INT, &p[n - 1].tc));
    }
    PAIR("resized", MPI_COMBINER_RESIZED, 0, 2, 1, -4, 16);
    CHECK_RC(MPI_Type_create_resized(MPI_INT, -4, 16, &p[n - 1].ti));
    CHECK_RC(MPI_Type_create_resized_c(MPI_INT, -4, 16, &p[n - 1].tc));
#undef PAIR
    *np = n;
}

static void types(void)
{
    struct tpair p[16];
    int np = 0;
    make_types(p, &np);
    enum { BUF = 4096, OFF = 64 };
    unsigned char *src = tc_malloc(BUF), *a = tc_malloc(BUF), *b = tc_malloc(BUF), *u = tc_malloc(BUF);
    tc_fill(src, BUF, rank, 7);
    for (int k = 0; k < np; k++) {
        const char *nm = p[k].name;
        MPI_Datatype ti = p[k].ti, tc = p[k].tc;
        /* size and extents through the int, _x and _c queries */
        int si;
        MPI_Count sx, sc, lbc, exc, tlbc, texc;
        MPI_Aint lb, ex, tlb, tex;
        CHECK_RC(MPI_Type_size(ti, &si));
        CHECK_RC(MPI_Type_size_x(tc, &sx));
        CHECK_RC(MPI_Type_size_c(tc, &sc));
        CHECK(si == sc && sx == sc, "%s: Type_size %d, _x %lld, _c %lld", nm, si, (long long)sx, (long long)sc);
        CHECK_RC(MPI_Type_get_extent(ti, &lb, &ex));
        CHECK_RC(MPI_Type_get_extent_c(tc, &lbc, &exc));
        CHECK(lb == lbc && ex == exc, "%s: extent %ld/%ld, _c %lld/%lld", nm, (long)lb, (long)ex, (long long)lbc,
              (long long)exc);
        CHECK_RC(MPI_Type_get_true_extent(ti, &tlb, &tex));
        CHECK_RC(MPI_Type_get_true_extent_c(tc, &tlbc, &texc));
        CHECK(tlb == tlbc && tex == texc, "%s: true extent %ld/%ld, _c %lld/%lld", nm, (long)tlb, (long)tex,
              (long long)tlbc, (long long)texc);

        /* envelopes: the int type lists no large counts, the _c type only large counts (but subarray's ndims
         * and order, darray's integers) */
        int ni, na, nd, comb;
        MPI_Count cni, cna, cnc, cnd;
        CHECK_RC(MPI_Type_get_envelope(ti, &ni, &na, &nd, &comb));
        CHECK_RC(MPI_Type_get_envelope_c(ti, &cni, &cna, &cnc, &cnd, &comb));
        CHECK(cni == ni && cna == na && cnc == 0 && cnd == nd && comb == p[k].combiner,
              "%s: int type's envelope_c %lld %lld %lld %lld (combiner %d); envelope %d %d %d", nm, (long long)cni,
              (long long)cna, (long long)cnc, (long long)cnd, comb, ni, na, nd);
        CHECK_RC(MPI_Type_get_envelope_c(tc, &cni, &cna, &cnc, &cnd, &comb));
        CHECK(cni == p[k].ni && cna == 0 && cnc == p[k].nc && cnd == p[k].nd && comb == p[k].combiner,
              "%s: _c type's envelope_c %lld %lld %lld %lld (combiner %d), expected %lld 0 %lld %lld (%d)", nm,
              (long long)cni, (long long)cna, (long long)cnc, (long long)cnd, comb, (long long)p[k].ni,
              (long long)p[k].nc, (long long)p[k].nd, p[k].combiner);
        int rc = MPI_Type_get_envelope(tc, &ni, &na, &nd, &comb);
        CHECK(rc != MPI_SUCCESS && (!on_ferry || err_class(rc) == MPI_ERR_TYPE),
              "%s: int Type_get_envelope of a type with large counts: %d", nm, rc);
        int ints[16];
        MPI_Aint addrs[16];
        MPI_Count counts[16];
        MPI_Datatype dts[16];
        CHECK_RC(MPI_Type_get_contents_c(tc, 16, 16, 16, 16, ints, addrs, counts, dts));
        for (int i = 0; i < p[k].nc; i++)
            CHECK(counts[i] == p[k].counts[i], "%s: large count %d is %lld, expected %lld", nm, i,
                  (long long)counts[i], (long long)p[k].counts[i]);
        for (int i = 0; i < p[k].nd; i++) {
            int named = 0, dn, dc, dd;
            CHECK_RC(MPI_Type_get_envelope(dts[i], &dn, &dc, &dd, &named));
            if (named != MPI_COMBINER_NAMED)
                CHECK_RC(MPI_Type_free(&dts[i]));
        }

        /* pack: the same bytes from both types */
        CHECK_RC(MPI_Type_commit(&p[k].ti));
        CHECK_RC(MPI_Type_commit(&p[k].tc));
        ti = p[k].ti, tc = p[k].tc;
        int psi, pos = 0;
        MPI_Count psc, posc = 0;
        CHECK_RC(MPI_Pack_size(2, ti, comm, &psi));
        CHECK_RC(MPI_Pack_size_c(2, tc, comm, &psc));
        CHECK(psi == psc, "%s: Pack_size %d, _c %lld", nm, psi, (long long)psc);
        memset(a, 0, BUF);
        memset(b, 0, BUF);
        CHECK_RC(MPI_Pack(src + OFF, 2, ti, a, BUF, &pos, comm));
        CHECK_RC(MPI_Pack_c(src + OFF, 2, tc, b, BUF, &posc, comm));
        CHECK(pos == posc && pos == 2 * si && memcmp(a, b, (size_t)pos) == 0, "%s: Pack %d bytes, Pack_c %lld differ",
              nm, pos, (long long)posc);
        memset(u, 0, BUF);
        posc = 0;
        CHECK_RC(MPI_Unpack_c(b, (MPI_Count)pos, &posc, u + OFF, 2, tc, comm));
        CHECK(posc == pos, "%s: Unpack_c consumed %lld of %d bytes", nm, (long long)posc, pos);
        pos = 0;
        CHECK_RC(MPI_Pack(u + OFF, 2, ti, b, BUF, &pos, comm));   /* what Unpack_c placed packs back the same */
        CHECK(memcmp(a, b, (size_t)pos) == 0, "%s: Unpack_c then Pack does not give the packed bytes back", nm);
        MPI_Aint ei = 0, esi;
        MPI_Count ec = 0, esc;
        if (on_mpich && p[k].combiner == MPI_COMBINER_STRUCT)
            goto message;   /* MPICH 4.0.2 crashes in Pack_external_size on struct types */
        CHECK_RC(MPI_Pack_external_size("external32", 2, ti, &esi));
        CHECK_RC(MPI_Pack_external_size_c("external32", 2, tc, &esc));
        CHECK(esi == esc, "%s: Pack_external_size %ld, _c %lld", nm, (long)esi, (long long)esc);
        memset(a, 0, BUF);
        memset(b, 0, BUF);
        CHECK_RC(MPI_Pack_external("external32", src + OFF, 2, ti, a, BUF, &ei));
        CHECK_RC(MPI_Pack_external_c("external32", src + OFF, 2, tc, b, BUF, &ec));
        CHECK(ei == ec && ei == esi && memcmp(a, b, (size_t)ei) == 0, "%s: Pack_external / _c differ", nm);
        ec = 0;
        memset(a, 0, BUF);
        CHECK_RC(MPI_Unpack_external_c("external32", b, esc, &ec, a + OFF, 2, tc));
        CHECK(ec == esc, "%s: Unpack_external_c consumed %lld of %lld bytes", nm, (long long)ec, (long long)esc);

    message:   /* a message sent with the _c type, received with the int one */
        memset(a, 0, BUF);
        CHECK_RC(MPI_Sendrecv_c(src + OFF, 2, tc, to, 400 + k, a + OFF, 2, ti, from, 400 + k, comm,
                                MPI_STATUS_IGNORE));
        pos = 0;
        memset(b, 0, BUF);
        CHECK_RC(MPI_Pack(a + OFF, 2, ti, b, BUF, &pos, comm));
        unsigned char *expect = tc_malloc(BUF), *theirs = tc_malloc(BUF);
        tc_fill(theirs, BUF, from, 7);
        int epos = 0;
        CHECK_RC(MPI_Pack(theirs + OFF, 2, ti, expect, BUF, &epos, comm));
        CHECK(pos == epos && memcmp(b, expect, (size_t)pos) == 0, "%s: message through the _c type differs", nm);
        free(expect);
        free(theirs);
        CHECK_RC(MPI_Type_free(&p[k].ti));
        CHECK_RC(MPI_Type_free(&p[k].tc));
    }
    free(src);
    free(a);
    free(b);
    free(u);
    MPI_Datatype t;
    int rc = MPI_Type_contiguous_c(-1, MPI_INT, &t);
    CHECK(rc != MPI_SUCCESS && (!on_ferry || err_class(rc) == MPI_ERR_COUNT), "Type_contiguous_c(-1): %d", rc);
}

/* ---- collectives ------------------------------------------------------------------ */

#define B 5   /* ints per rank block */
static MPI_Comm ring;   /* periodic 1-D Cartesian: the neighborhood collectives */
static MPI_Request req;
static int form;        /* 0 int, 1 _c, 2 nonblocking int, 3 nonblocking _c */
static MPI_Op myop;
static MPI_Count op_len;   /* the longest length the _c user function was called with */

/* Scalar-count collectives: the blocking (Bl) and nonblocking (Nb) name. */
#define CALL4(Bl, Nb, ...)                                                                    \
    (form == 0 ? MPI_##Bl(__VA_ARGS__) : form == 1 ? MPI_##Bl##_c(__VA_ARGS__)                 \
     : form == 2 ? MPI_##Nb(__VA_ARGS__, &req) : MPI_##Nb##_c(__VA_ARGS__, &req))

/* v forms, as int and as large arrays: gatherv, scatterv, allgatherv and
 * reduce_scatter take gc[i] = 1..3 ints from rank i at gd[i] = 4 * i;
 * alltoallv/w exchange ac[i] = 1..3 ints with rank i (a count symmetric in
 * the two ranks) at ad[i] = 4 * i ints or ab[i] = 16 * i bytes; on the ring
 * each rank sends 1 int to the left and 2 to the right neighbor (so it
 * receives 2 from the left and 1 from the right). */
static int gc[64], gd[64], ac[64], ad[64], ab[64], nsc[2] = {1, 2}, nrc[2] = {2, 1}, nd[2] = {0, 4}, n2[2] = {2, 2};
static MPI_Count gcc[64], acc[64], nscc[2] = {1, 2}, nrcc[2] = {2, 1}, n2c[2] = {2, 2};
static MPI_Aint gdc[64], adc[64], abc[64], ndc[2] = {0, 4}, nbc[2] = {0, 16};
static MPI_Datatype ints[64];

static int c_bcast(const int *s, int *r)
{
    memcpy(r, s, (size_t)size * B * sizeof(int));   /* root's data; the others' is overwritten */
    return CALL4(Bcast, Ibcast, r, size * B, MPI_INT, size - 1, comm);
}
static int c_gather(const int *s, int *r) { return CALL4(Gather, Igather, s, B, MPI_INT, r, B, MPI_INT, size / 2, comm); }
static int c_scatter(const int *s, int *r) { return CALL4(Scatter, Iscatter, s, B, MPI_INT, r, B, MPI_INT, 0, comm); }
static int c_allgather(const int *s, int *r) { return CALL4(Allgather, Iallgather, s, B, MPI_INT, r, B, MPI_INT, comm); }
static int c_alltoall(const int *s, int *r) { return CALL4(Alltoall, Ialltoall, s, B, MPI_INT, r, B, MPI_INT, comm); }
static int c_reduce(const int *s, int *r) { return CALL4(Reduce, Ireduce, s, r, size * B, MPI_INT, MPI_SUM, 0, comm); }
static int c_allreduce(const int *s, int *r) { return CALL4(Allreduce, Iallreduce, s, r, size * B, MPI_INT, MPI_MAX, comm); }
static int c_rsb(const int *s, int *r) { return CALL4(Reduce_scatter_block, Ireduce_scatter_block, s, r, B, MPI_INT, MPI_SUM, comm); }
static int c_scan(const int *s, int *r) { return CALL4(Scan, Iscan, s, r, size * B, MPI_INT, MPI_BXOR, comm); }
static int c_exscan(const int *s, int *r)
{
    if (rank == 0)
        memset(r, 0, (size_t)size * B * sizeof(int));   /* undefined there */
    return CALL4(Exscan, Iexscan, s, r, size * B, MPI_INT, MPI_SUM, comm);
}
static int c_myop(const int *s, int *r) { return CALL4(Allreduce, Iallreduce, s, r, size * B, MPI_INT, myop, comm); }
static int c_nallgather(const int *s, int *r) { return CALL4(Neighbor_allgather, Ineighbor_allgather, s, B, MPI_INT, r, B, MPI_INT, ring); }
static int c_nalltoall(const int *s, int *r) { return CALL4(Neighbor_alltoall, Ineighbor_alltoall, s, B, MPI_INT, r, B, MPI_INT, ring); }

static int c_gatherv(const int *s, int *r)
{
    int n = gc[rank], root = size - 1;
    switch (form) {
    case 0: return MPI_Gatherv(s, n, MPI_INT, r, gc, gd, MPI_INT, root, comm);
    case 1: return MPI_Gatherv_c(s, n, MPI_INT, r, gcc, gdc, MPI_INT, root, comm);
    case 2: return MPI_Igatherv(s, n, MPI_INT, r, gc, gd, MPI_INT, root, comm, &req);
    default: return MPI_Igatherv_c(s, n, MPI_INT, r, gcc, gdc, MPI_INT, root, comm, &req);
    }
}
static int c_scatterv(const int *s, int *r)
{
    int n = gc[rank];
    switch (form) {
    case 0: return MPI_Scatterv(s, gc, gd, MPI_INT, r, n, MPI_INT, 0, comm);
    case 1: return MPI_Scatterv_c(s, gcc, gdc, MPI_INT, r, n, MPI_INT, 0, comm);
    case 2: return MPI_Iscatterv(s, gc, gd, MPI_INT, r, n, MPI_INT, 0, comm, &req);
    default: return MPI_Iscatterv_c(s, gcc, gdc, MPI_INT, r, n, MPI_INT, 0, comm, &req);
    }
}
static int c_allgatherv(const int *s, int *r)
{
    int n = gc[rank];
    switch (form) {
    case 0: return MPI_Allgatherv(s, n, MPI_INT, r, gc, gd, MPI_INT, comm);
    case 1: return MPI_Allgatherv_c(s, n, MPI_INT, r, gcc, gdc, MPI_INT, comm);
    case 2: return MPI_Iallgatherv(s, n, MPI_INT, r, gc, gd, MPI_INT, comm, &req);
    default: return MPI_Iallgatherv_c(s, n, MPI_INT, r, gcc, gdc, MPI_INT, comm, &req);
    }
}
static int c_alltoallv(const int *s, int *r)
{
    switch (form) {
    case 0: return MPI_Alltoallv(s, ac, ad, MPI_INT, r, ac, ad, MPI_INT, comm);
    case 1: return MPI_Alltoallv_c(s, acc, adc, MPI_INT, r, acc, adc, MPI_INT, comm);
    case 2: return MPI_Ialltoallv(s, ac, ad, MPI_INT, r, ac, ad, MPI_INT, comm, &req);
    default: return MPI_Ialltoallv_c(s, acc, adc, MPI_INT, r, acc, adc, MPI_INT, comm, &req);
    }
}
static int c_alltoallw(const int *s, int *r)
{
    switch (form) {
    case 0: return MPI_Alltoallw(s, ac, ab, ints, r, ac, ab, ints, comm);
    case 1: return MPI_Alltoallw_c(s, acc, abc, ints, r, acc, abc, ints, comm);
    case 2: return MPI_Ialltoallw(s, ac, ab, ints, r, ac, ab, ints, comm, &req);
    default: return MPI_Ialltoallw_c(s, acc, abc, ints, r, acc, abc, ints, comm, &req);
    }
}
static int c_reduce_scatter(const int *s, int *r)
{
    switch (form) {
    case 0: return MPI_Reduce_scatter(s, r, gc, MPI_INT, MPI_SUM, comm);
    case 1: return MPI_Reduce_scatter_c(s, r, gcc, MPI_INT, MPI_SUM, comm);
    case 2: return MPI_Ireduce_scatter(s, r, gc, MPI_INT, MPI_SUM, comm, &req);
    default: return MPI_Ireduce_scatter_c(s, r, gcc, MPI_INT, MPI_SUM, comm, &req);
    }
}
static int c_nallgatherv(const int *s, int *r)
{
    switch (form) {
    case 0: return MPI_Neighbor_allgatherv(s, 2, MPI_INT, r, n2, nd, MPI_INT, ring);
    case 1: return MPI_Neighbor_allgatherv_c(s, 2, MPI_INT, r, n2c, ndc, MPI_INT, ring);
    case 2: return MPI_Ineighbor_allgatherv(s, 2, MPI_INT, r, n2, nd, MPI_INT, ring, &req);
    default: return MPI_Ineighbor_allgatherv_c(s, 2, MPI_INT, r, n2c, ndc, MPI_INT, ring, &req);
    }
}
static int c_nalltoallv(const int *s, int *r)
{
    switch (form) {
    case 0: return MPI_Neighbor_alltoallv(s, nsc, nd, MPI_INT, r, nrc, nd, MPI_INT, ring);
    case 1: return MPI_Neighbor_alltoallv_c(s, nscc, ndc, MPI_INT, r, nrcc, ndc, MPI_INT, ring);
    case 2: return MPI_Ineighbor_alltoallv(s, nsc, nd, MPI_INT, r, nrc, nd, MPI_INT, ring, &req);
    default: return MPI_Ineighbor_alltoallv_c(s, nscc, ndc, MPI_INT, r, nrcc, ndc, MPI_INT, ring, &req);
    }
}
static int c_nalltoallw(const int *s, int *r)
{
    switch (form) {
    case 0: return MPI_Neighbor_alltoallw(s, nsc, nbc, ints, r, nrc, nbc, ints, ring);
    case 1: return MPI_Neighbor_alltoallw_c(s, nscc, nbc, ints, r, nrcc, nbc, ints, ring);
    case 2: return MPI_Ineighbor_alltoallw(s, nsc, nbc, ints, r, nrc, nbc, ints, ring, &req);
    default: return MPI_Ineighbor_alltoallw_c(s, nscc, nbc, ints, r, nrcc, nbc, ints, ring, &req);
    }
}

static void user_sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    CHECK(*dt == MPI_INT, "Op_create_c function called with another datatype");
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
    if (*len > op_len)
        op_len = *len;
}

/* Run f in the four forms on the same input; every result equals the int
 * form's (but exscan's on rank 0, which is undefined). */
static void run(const char *name, int (*f)(const int *, int *))
{
    int compare = !(f == c_exscan && rank == 0);
    size_t n = (size_t)(size > 2 ? size : 2) * 4 * B + 64;   /* ints: room for every layout above */
    int *s = tc_malloc(n * sizeof(int)), *ref = tc_malloc(n * sizeof(int)), *r = tc_malloc(n * sizeof(int));
    for (form = 0; form < 4; form++) {
        for (size_t i = 0; i < n; i++)
            s[i] = (int)(tc_word(i, rank, 11) & 0xffff);   /* small: sums do not overflow */
        int *out = form ? r : ref;
        memset(out, 0x5a, n * sizeof(int));
        req = MPI_REQUEST_NULL;
        int rc = f(s, out);
        CHECK(rc == MPI_SUCCESS, "%s (form %d) returned %d: %s", name, form, rc, tc_errstr(rc));
        if (form >= 2)
            CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (form && compare)
            for (size_t i = 0; i < n; i++)
                CHECK(r[i] == ref[i], "%s: the %s form's result differs from the int form's at int %zu: %d, not %d",
                      name, form == 1 ? "_c" : form == 2 ? "nonblocking int" : "nonblocking _c", i, r[i], ref[i]);
    }
    free(s);
    free(ref);
    free(r);
}

static void colls(void)
{
    for (int i = 0; i < 64; i++) {
        gc[i] = i % 3 + 1, gd[i] = 4 * i, ac[i] = (rank + i) % 3 + 1, ad[i] = 4 * i, ab[i] = 16 * i;
        gcc[i] = gc[i], gdc[i] = gd[i], acc[i] = ac[i], adc[i] = ad[i], abc[i] = ab[i];
        ints[i] = MPI_INT;
    }
    int dims[1] = {size}, periods[1] = {1};
    CHECK_RC(MPI_Cart_create(comm, 1, dims, periods, 0, &ring));
    CHECK_RC(MPI_Op_create_c(user_sum_c, 1, &myop));
    run("bcast", c_bcast);
    run("gather", c_gather);
    run("scatter", c_scatter);
    run("allgather", c_allgather);
    run("alltoall", c_alltoall);
    run("reduce", c_reduce);
    run("allreduce", c_allreduce);
    run("reduce_scatter_block", c_rsb);
    run("scan", c_scan);
    run("exscan", c_exscan);
    run("allreduce with an Op_create_c op", c_myop);
    run("gatherv", c_gatherv);
    run("scatterv", c_scatterv);
    run("allgatherv", c_allgatherv);
    run("alltoallv", c_alltoallv);
    run("alltoallw", c_alltoallw);
    run("reduce_scatter", c_reduce_scatter);
    run("neighbor_allgather", c_nallgather);
    run("neighbor_allgatherv", c_nallgatherv);
    run("neighbor_alltoall", c_nalltoall);
    run("neighbor_alltoallv", c_nalltoallv);
    run("neighbor_alltoallw", c_nalltoallw);

    /* the Op_create_c op against MPI_SUM */
    int n = size * B, *s = tc_malloc((size_t)n * sizeof(int)), *a = tc_malloc((size_t)n * sizeof(int)),
        *b = tc_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        s[i] = (int)(tc_word((uint64_t)i, rank, 12) & 0xffff);
    op_len = 0;
    CHECK_RC(MPI_Allreduce_c(s, a, n, MPI_INT, myop, comm));
    CHECK_RC(MPI_Allreduce(s, b, n, MPI_INT, MPI_SUM, comm));
    CHECK(memcmp(a, b, (size_t)n * sizeof(int)) == 0, "Allreduce_c with an Op_create_c op differs from MPI_SUM");
    long long called = op_len, anywhere = 0;   /* some ranks of an algorithm may not reduce */
    CHECK_RC(MPI_Allreduce(&called, &anywhere, 1, MPI_LONG_LONG, MPI_MAX, comm));
    CHECK(size == 1 || anywhere > 0, "the Op_create_c function was never called");
    /* Reduce_local(_c) with it and with MPI_SUM */
    memcpy(a, s, (size_t)n * sizeof(int));
    memcpy(b, s, (size_t)n * sizeof(int));
    op_len = 0;
    CHECK_RC(MPI_Reduce_local_c(s, a, n, MPI_INT, myop));
    CHECK(op_len == n, "Reduce_local_c: the user function got length %lld, not %d", (long long)op_len, n);
    CHECK_RC(MPI_Reduce_local(s, b, n, MPI_INT, MPI_SUM));
    CHECK(memcmp(a, b, (size_t)n * sizeof(int)) == 0, "Reduce_local_c with the Op_create_c op differs");
    memcpy(a, s, (size_t)n * sizeof(int));
    CHECK_RC(MPI_Reduce_local_c(s, a, n, MPI_INT, MPI_SUM));
    CHECK(memcmp(a, b, (size_t)n * sizeof(int)) == 0, "Reduce_local_c with MPI_SUM differs from Reduce_local");
    free(s);
    free(a);
    free(b);
    CHECK_RC(MPI_Op_free(&myop));
    CHECK_RC(MPI_Comm_free(&ring));

    int x = 0, rc = MPI_Bcast_c(&x, -1, MPI_INT, 0, comm);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Bcast_c with count -1: %d", rc);
    if (on_ferry) {   /* what Ferry cannot do yet fails cleanly (other MPIs would try it) */
        MPI_Count big[1] = {(MPI_Count)INT_MAX + 1};
        MPI_Aint d0[1] = {0};
        rc = MPI_Allgatherv_c(&x, 0, MPI_INT, &x, big, d0, MPI_INT, MPI_COMM_SELF);
        CHECK(err_class(rc) == MPI_ERR_COUNT, "Allgatherv_c with a count above INT_MAX: %d", rc);
        rc = MPI_Reduce_scatter_block_c(&x, &x, (MPI_Count)INT_MAX + 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
        CHECK(err_class(rc) == MPI_ERR_COUNT, "Reduce_scatter_block_c above INT_MAX: %d", rc);
    }
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    CHECK_RC(MPI_Get_library_version(v, &len));
    on_ferry = strncmp(v, "Ferry", 5) == 0;
    on_mpich = tc_mpich_version() > 0;
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    to = (rank + 1) % size;
    from = (rank + size - 1) % size;
    p2p();
    types();
    colls();
    return tc_finish("p2p_large_count");
}
#else
int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    if (rank == 0)
        printf("p2p_large_count: MPI %d.%d has no large-count functions (MPI-4)\n", MPI_VERSION, MPI_SUBVERSION);
    return tc_finish("p2p_large_count");
}
#endif
