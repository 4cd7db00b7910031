/* Derived datatypes through every protocol: a strided send received
 * contiguous and the reverse, derived to derived, for messages of 1 byte to
 * 8 MiB (eager, rendezvous with single copy, and the pipelined copy path when
 * run with FERRY_CMA=0 or small cells), truncation, Get_elements on partial
 * receives, MPI_BOTTOM with absolute addresses, and Type_free while an
 * operation using the type is pending.
 *
 * Ranks pair up (0-1, 2-3, ...); an odd last rank talks to itself. */
#include "dtcheck.h"

static int peer;

static unsigned char val(long i, int salt)
{
    return (unsigned char)(i * 7 + salt + (i >> 10));
}

/* A vector of blocks of bl bytes at stride 3*bl, about nbytes of data. */
static void strided(long nbytes, int bl, int salt)
{
    long nblocks = (nbytes + bl - 1) / bl;
    long bytes = nblocks * bl;
    MPI_Datatype v;
    OK(MPI_Type_vector((int)nblocks, bl, 3 * bl, MPI_BYTE, &v));
    OK(MPI_Type_commit(&v));
    long span = (nblocks - 1) * 3 * bl + bl;
    unsigned char *sparse = malloc((size_t)span), *flat = malloc((size_t)bytes);
    MPI_Status st;
    int sender = dt_rank <= peer;   /* first direction: the lower rank sends strided */
    for (int dir = 0; dir < 2; dir++, sender = !sender) {
        if (peer == dt_rank) {
            /* alone: strided -> flat and flat -> strided in one Sendrecv */
            for (long i = 0; i < span; i++)
                sparse[i] = val(i, salt);
            memset(flat, 0, (size_t)bytes);
            OK(MPI_Sendrecv(sparse, 1, v, dt_rank, 1, flat, (int)bytes, MPI_BYTE, dt_rank, 1, MPI_COMM_WORLD, &st));
            for (long k = 0; k < bytes; k++)
                if (flat[k] != val((k / bl) * 3 * bl + k % bl, salt)) {
                    CHECK(0, "self strided->flat %ld bytes: byte %ld", bytes, k);
                    break;
                }
            memset(sparse, 0xEE, (size_t)span);
            OK(MPI_Sendrecv(flat, (int)bytes, MPI_BYTE, dt_rank, 2, sparse, 1, v, dt_rank, 2, MPI_COMM_WORLD, &st));
            for (long i = 0; i < span; i++) {
                unsigned char want = (i % (3 * bl)) < bl ? val(i, salt) : 0xEE;
                if (sparse[i] != want) {
                    CHECK(0, "self flat->strided %ld bytes: byte %ld", bytes, i);
                    break;
                }
            }
            break;
        }
        if (sender) {
            /* dir 0: strided send, contiguous receive; dir 1: contiguous send, strided receive */
            if (dir == 0) {
                for (long i = 0; i < span; i++)
                    sparse[i] = val(i, salt);
                OK(MPI_Send(sparse, 1, v, peer, 10 + dir, MPI_COMM_WORLD));
            } else {
                for (long k = 0; k < bytes; k++)
                    flat[k] = val((k / bl) * 3 * bl + k % bl, salt);
                OK(MPI_Send(flat, (int)bytes, MPI_BYTE, peer, 10 + dir, MPI_COMM_WORLD));
            }
        } else if (dir == 0) {
            memset(flat, 0, (size_t)bytes);
            OK(MPI_Recv(flat, (int)bytes, MPI_BYTE, peer, 10 + dir, MPI_COMM_WORLD, &st));
            for (long k = 0; k < bytes; k++)
                if (flat[k] != val((k / bl) * 3 * bl + k % bl, salt)) {
                    CHECK(0, "strided->contiguous %ld bytes: byte %ld is %d", bytes, k, flat[k]);
                    break;
                }
        } else {
            memset(sparse, 0xEE, (size_t)span);
            OK(MPI_Recv(sparse, 1, v, peer, 10 + dir, MPI_COMM_WORLD, &st));
            for (long i = 0; i < span; i++) {
                unsigned char want = (i % (3 * bl)) < bl ? val(i, salt) : 0xEE;
                if (sparse[i] != want) {
                    CHECK(0, "contiguous->strided %ld bytes: byte %ld is %d, expected %d", bytes, i, sparse[i], want);
                    break;
                }
            }
            int n;
            OK(MPI_Get_count(&st, v, &n));
            CHECK(n == 1, "Get_count %d", n);
        }
    }
    free(sparse);
    free(flat);
    OK(MPI_Type_free(&v));
}

/* Derived on both sides with the same signature but different layouts:
 * the sender's struct {int; double[2]} with padding, the receiver's
 * separate int and double arrays through an hindexed-by-address struct. */
struct rec {
    int i;
    double d[2];
};

static void derived_both(int n)
{
    MPI_Datatype srec, rtype;
    int bl[2] = {1, 2};
    MPI_Aint disp[2] = {offsetof(struct rec, i), offsetof(struct rec, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, bl, disp, ty, &srec));
    OK(MPI_Type_commit(&srec));
    int *ri = malloc((size_t)n * sizeof *ri);
    double *rd = malloc((size_t)n * 2 * sizeof *rd);
    /* receive type: element k is ri[k], rd[2k], rd[2k+1], at absolute
     * addresses: one element of a struct over MPI_BOTTOM */
    int *bls = malloc((size_t)n * 2 * sizeof *bls);
    MPI_Aint *ds = malloc((size_t)n * 2 * sizeof *ds);
    MPI_Datatype *tys = malloc((size_t)n * 2 * sizeof *tys);
    for (int k = 0; k < n; k++) {
        bls[2 * k] = 1;
        bls[2 * k + 1] = 2;
        OK(MPI_Get_address(&ri[k], &ds[2 * k]));
        OK(MPI_Get_address(&rd[2 * k], &ds[2 * k + 1]));
        tys[2 * k] = MPI_INT;
        tys[2 * k + 1] = MPI_DOUBLE;
    }
    OK(MPI_Type_create_struct(2 * n, bls, ds, tys, &rtype));
    OK(MPI_Type_commit(&rtype));
    struct rec *s = malloc((size_t)n * sizeof *s);
    MPI_Status st;
    int from = dt_rank <= peer ? dt_rank : peer, to = dt_rank <= peer ? peer : dt_rank;
    if (dt_rank == from) {
        for (int k = 0; k < n; k++) {
            s[k].i = k * 3 + 1;
            s[k].d[0] = k + 0.5;
            s[k].d[1] = -k - 0.25;
        }
    }
    if (dt_rank == from && dt_rank == to) {
        memset(ri, 0, (size_t)n * sizeof *ri);
        OK(MPI_Sendrecv(s, n, srec, dt_rank, 3, MPI_BOTTOM, 1, rtype, dt_rank, 3, MPI_COMM_WORLD, &st));
    } else if (dt_rank == from) {
        OK(MPI_Send(s, n, srec, to, 3, MPI_COMM_WORLD));
    } else {
        memset(ri, 0, (size_t)n * sizeof *ri);
        OK(MPI_Recv(MPI_BOTTOM, 1, rtype, from, 3, MPI_COMM_WORLD, &st));
    }
    if (dt_rank == to) {
        for (int k = 0; k < n; k++)
            if (ri[k] != k * 3 + 1 || rd[2 * k] != k + 0.5 || rd[2 * k + 1] != -k - 0.25) {
                CHECK(0, "struct -> MPI_BOTTOM struct, n %d: element %d is %d %g %g", n, k, ri[k], rd[2 * k],
                      rd[2 * k + 1]);
                break;
            }
        int elems;
        OK(MPI_Get_elements(&st, rtype, &elems));
        CHECK(elems == 3 * n, "Get_elements %d, expected %d", elems, 3 * n);
    }
    /* and back: sent from MPI_BOTTOM, received into the struct array */
    if (dt_rank == to)
        for (int k = 0; k < n; k++) {
            ri[k] = -k;
            rd[2 * k] = k * 0.125;
            rd[2 * k + 1] = 1e10 + k;
        }
    memset(s, 0, (size_t)n * sizeof *s);
    if (dt_rank == from && dt_rank == to)
        OK(MPI_Sendrecv(MPI_BOTTOM, 1, rtype, dt_rank, 4, s, n, srec, dt_rank, 4, MPI_COMM_WORLD, &st));
    else if (dt_rank == to)
        OK(MPI_Send(MPI_BOTTOM, 1, rtype, from, 4, MPI_COMM_WORLD));
    else
        OK(MPI_Recv(s, n, srec, to, 4, MPI_COMM_WORLD, &st));
    if (dt_rank == from)
        for (int k = 0; k < n; k++)
            if (s[k].i != -k || s[k].d[0] != k * 0.125 || s[k].d[1] != 1e10 + k) {
                CHECK(0, "MPI_BOTTOM struct -> struct, n %d: element %d is %d %g %g", n, k, s[k].i, s[k].d[0],
                      s[k].d[1]);
                break;
            }
    free(s);
    free(ri);
    free(rd);
    free(bls);
    free(ds);
    free(tys);
    OK(MPI_Type_free(&srec));
    OK(MPI_Type_free(&rtype));
}

/* Truncation with a derived receive type, and Get_elements / Get_count on
 * receives that fill part of the buffer. */
static void partial(void)
{
    int from = dt_rank <= peer ? dt_rank : peer, to = dt_rank <= peer ? peer : dt_rank;
    MPI_Datatype v;   /* 3 blocks of 2 ints, stride 3: 6 ints per element */
    OK(MPI_Type_vector(3, 2, 3, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    int sbuf[40], rbuf[40];
    for (int i = 0; i < 40; i++)
        sbuf[i] = 1000 + i;
    static const int counts[4] = {7, 12, 1, 0};   /* ints sent */
    for (int c = 0; c < 4; c++) {
        MPI_Status st;
        MPI_Request rq;
        for (int i = 0; i < 40; i++)
            rbuf[i] = -1;
        if (dt_rank == to)
            OK(MPI_Irecv(rbuf, 2, v, from, 20 + c, MPI_COMM_WORLD, &rq));
        if (dt_rank == from)
            OK(MPI_Send(sbuf, counts[c], MPI_INT, to, 20 + c, MPI_COMM_WORLD));
        if (dt_rank != to)
            continue;
        OK(MPI_Wait(&rq, &st));
        int n = counts[c], got = 0;
        for (int e = 0; e < 2; e++)
            for (int b = 0; b < 3; b++)
                for (int j = 0; j < 2; j++) {
                    int pos = e * 8 + b * 3 + j;   /* extent of v: 8 ints (blocks 0..1, 3..4, 6..7) */
                    int want = got < n ? 1000 + got : -1;
                    CHECK(rbuf[pos] == want, "partial %d ints: rbuf[%d] = %d, expected %d", n, pos, rbuf[pos], want);
                    got++;
                }
        int elems, count;
        MPI_Count elems_x;
        OK(MPI_Get_elements(&st, v, &elems));
        OK(MPI_Get_elements_x(&st, v, &elems_x));
        OK(MPI_Get_count(&st, v, &count));
        CHECK(elems == n && elems_x == n, "Get_elements %d / %ld after %d ints", elems, (long)elems_x, n);
        int want_count = n % 6 ? MPI_UNDEFINED : n / 6;
        CHECK(count == want_count, "Get_count %d after %d ints, expected %d", count, n, want_count);
    }
    /* a struct {int; double} receive of int, double, int */
    MPI_Datatype id, sent;
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, bl, d, ty, &id));
    OK(MPI_Type_commit(&id));
    int bl3[3] = {1, 1, 1};
    MPI_Aint d3[3] = {0, 8, 16};
    MPI_Datatype ty3[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
    OK(MPI_Type_create_struct(3, bl3, d3, ty3, &sent));
    OK(MPI_Type_commit(&sent));
    struct {
        int a;
        double b;
        int c;
    } out = {5, 2.5, 6};
    struct {
        int a;
        double b;
    } in[3];
    memset(in, 0, sizeof in);
    MPI_Status st;
    if (dt_rank == from && dt_rank == to)
        OK(MPI_Sendrecv(&out, 1, sent, dt_rank, 30, in, 3, id, dt_rank, 30, MPI_COMM_WORLD, &st));
    else if (dt_rank == from)
        OK(MPI_Send(&out, 1, sent, to, 30, MPI_COMM_WORLD));
    else
        OK(MPI_Recv(in, 3, id, from, 30, MPI_COMM_WORLD, &st));
    if (dt_rank == to) {
        int elems, count;
        OK(MPI_Get_elements(&st, id, &elems));
        OK(MPI_Get_count(&st, id, &count));
        CHECK(elems == 3 && count == MPI_UNDEFINED, "struct partial: Get_elements %d Get_count %d", elems, count);
        CHECK(in[0].a == 5 && in[0].b == 2.5 && in[1].a == 6 && in[1].b == 0, "struct partial data");
    }
    /* truncation: 2 elements of v (12 ints) into 1 element */
    if (dt_rank == from && dt_rank != to) {
        OK(MPI_Send(sbuf, 2, v, to, 40, MPI_COMM_WORLD));
    } else if (dt_rank == to) {
        for (int i = 0; i < 40; i++)
            rbuf[i] = -1;
        int rc;
        if (dt_rank == from) {
            MPI_Request sr;
            OK(MPI_Isend(sbuf, 2, v, to, 40, MPI_COMM_WORLD, &sr));
            rc = MPI_Recv(rbuf, 1, v, from, 40, MPI_COMM_WORLD, &st);
            OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        } else {
            rc = MPI_Recv(rbuf, 1, v, from, 40, MPI_COMM_WORLD, &st);
        }
        CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "truncated receive returned class %d", err_class(rc));
        static const int pos[6] = {0, 1, 3, 4, 6, 7}, src[6] = {0, 1, 3, 4, 6, 7};
        for (int k = 0; k < 6 && dt_is_ferry; k++)   /* MPI leaves the contents undefined; Ferry fills what fits */
            CHECK(rbuf[pos[k]] == 1000 + src[k], "truncated: rbuf[%d] = %d", pos[k], rbuf[pos[k]]);
        for (int i = 8; i < 40; i++)
            CHECK(rbuf[i] == -1, "truncated: rbuf[%d] = %d written past the receive", i, rbuf[i]);
        CHECK(rbuf[2] == -1 && rbuf[5] == -1, "truncated: gaps written");
    }
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&id));
    OK(MPI_Type_free(&sent));
}

/* Type_free while a send and a receive using the type are pending. */
static void free_pending(void)
{
    const int n = 1 << 18;   /* 1 MiB of ints sent: rendezvous */
    int from = dt_rank <= peer ? dt_rank : peer, to = dt_rank <= peer ? peer : dt_rank;
    int *sbuf = malloc((size_t)n * 2 * sizeof *sbuf), *rbuf = malloc((size_t)n * 2 * sizeof *rbuf);
    for (int round = 0; round < 2; round++) {
        int count = round == 0 ? n : 5;   /* rendezvous, then eager */
        MPI_Datatype v;
        MPI_Request rq[2];
        int nrq = 0;
        OK(MPI_Type_vector(count, 1, 2, MPI_INT, &v));
        OK(MPI_Type_commit(&v));
        for (int i = 0; i < 2 * n; i++) {
            sbuf[i] = i;
            rbuf[i] = -1;
        }
        if (dt_rank == to)
            OK(MPI_Irecv(rbuf, 1, v, from, 50 + round, MPI_COMM_WORLD, &rq[nrq++]));
        if (dt_rank == from)
            OK(MPI_Isend(sbuf, 1, v, to, 50 + round, MPI_COMM_WORLD, &rq[nrq++]));
        OK(MPI_Type_free(&v));
        /* build and free other types so that a freed object would be reused */
        for (int k = 0; k < 4; k++) {
            MPI_Datatype junk;
            OK(MPI_Type_vector(k + 2, 1, 5, MPI_CHAR, &junk));
            OK(MPI_Type_commit(&junk));
            OK(MPI_Type_free(&junk));
        }
        MPI_Status sts[2];
        OK(MPI_Waitall(nrq, rq, sts));
        if (dt_rank == to) {
            for (int i = 0; i < 2 * count; i++) {
                int want = i % 2 ? -1 : i;
                if (rbuf[i] != want) {
                    CHECK(0, "Type_free while pending (%d ints): rbuf[%d] = %d, expected %d", count, i, rbuf[i],
                          want);
                    break;
                }
            }
        }
    }
    free(sbuf);
    free(rbuf);
}

/* count elements of t sent typed and received as bytes, and the reverse,
 * against MPI_Pack / MPI_Unpack of the same data: packets cut the packed
 * stream of nested types at arbitrary offsets. */
static void typed_vs_packed(const char *what, MPI_Datatype t, int count, int tag)
{
    int size;
    MPI_Aint lb, extent, tlb, text;
    OK(MPI_Type_commit(&t));
    OK(MPI_Type_size(t, &size));
    OK(MPI_Type_get_extent(t, &lb, &extent));
    OK(MPI_Type_get_true_extent(t, &tlb, &text));
    size_t span = (size_t)(text + (MPI_Aint)(count - 1) * extent), bytes = (size_t)size * (size_t)count;
    unsigned char *mem = malloc(span), *base = mem - tlb, *ref = malloc(bytes), *flat = malloc(bytes);
    unsigned char *mem2 = malloc(span), *base2 = mem2 - tlb;
    for (size_t k = 0; k < span; k++)
        mem[k] = pattern(k + (size_t)tag);
    int pos = 0;
    OK(MPI_Pack(base, count, t, ref, (int)bytes, &pos, MPI_COMM_WORLD));
    int from = dt_rank <= peer ? dt_rank : peer, to = dt_rank <= peer ? peer : dt_rank;
    MPI_Status st;
    MPI_Request rq;
    /* typed -> bytes */
    memset(flat, 0, bytes);
    if (dt_rank == to)
        OK(MPI_Irecv(flat, (int)bytes, MPI_BYTE, from, tag, MPI_COMM_WORLD, &rq));
    if (dt_rank == from)
        OK(MPI_Send(base, count, t, to, tag, MPI_COMM_WORLD));
    if (dt_rank == to) {
        OK(MPI_Wait(&rq, &st));
        for (size_t k = 0; k < bytes; k++)
            if (flat[k] != ref[k]) {
                CHECK(0, "%s x%d typed->bytes: byte %zu of %zu differs", what, count, k, bytes);
                break;
            }
    }
    /* bytes -> typed: compare with Unpack into the same initial contents.
     * MPICH 4.0.2 (ch4:ucx) reports MPI_ERR_TRUNCATE for a message to self
     * received with these types when the job has more than one process:
     * documented peer deviation, skipped there. */
    int skip = !dt_is_ferry && peer == dt_rank && dt_size > 1;
    memset(mem2, 0xEE, span);
    if (dt_rank == to && !skip)
        OK(MPI_Irecv(base2, count, t, from, tag + 1, MPI_COMM_WORLD, &rq));
    if (dt_rank == from && !skip)
        OK(MPI_Send(ref, (int)bytes, MPI_BYTE, to, tag + 1, MPI_COMM_WORLD));
    if (dt_rank == to && !skip) {
        OK(MPI_Wait(&rq, &st));
        memset(mem, 0xEE, span);
        pos = 0;
        OK(MPI_Unpack(ref, (int)bytes, &pos, base, count, t, MPI_COMM_WORLD));
        for (size_t k = 0; k < span; k++)
            if (mem[k] != mem2[k]) {
                CHECK(0, "%s x%d bytes->typed: byte %zu of the buffer differs", what, count, k);
                break;
            }
    }
    free(mem);
    free(mem2);
    free(ref);
    free(flat);
    OK(MPI_Type_free(&t));
}

static void nested_types(void)
{
    MPI_Datatype ix, st, t;
    int bl[2] = {1, 2}, d[2] = {0, 3};
    OK(MPI_Type_indexed(2, bl, d, MPI_SHORT, &ix));
    int sbl[2] = {2, 1};
    MPI_Aint sd[2] = {0, 24};
    MPI_Datatype sty[2] = {ix, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, sbl, sd, sty, &st));
    OK(MPI_Type_vector(3, 2, 3, st, &t));
    typed_vs_packed("vector(struct(indexed))", t, 1, 100);
    OK(MPI_Type_vector(3, 2, 3, st, &t));
    typed_vs_packed("vector(struct(indexed))", t, 7000, 102);   /* 7000 * 132 bytes */
    OK(MPI_Type_free(&ix));

    /* irregular hindexed of a struct {int; char} */
    enum { NB = 3000 };
    int *hbl = malloc(NB * sizeof *hbl);
    MPI_Aint *hd = malloc(NB * sizeof *hd);
    MPI_Aint at = 0;
    for (int k = 0; k < NB; k++) {
        hbl[k] = 1 + (k * 7) % 5;
        hd[k] = at + (k % 3) * 8;
        at = hd[k] + hbl[k] * 16 + 16;
    }
    OK(MPI_Type_create_hindexed(NB, hbl, hd, st, &t));
    typed_vs_packed("hindexed(struct)", t, 3, 104);
    OK(MPI_Type_free(&st));
    free(hbl);
    free(hd);

    int sizes[3] = {40, 50, 30}, sub[3] = {17, 33, 13}, start[3] = {5, 7, 11};
    OK(MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t));
    typed_vs_packed("subarray", t, 2, 106);
    OK(MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_FLOAT, &t));
    typed_vs_packed("subarray Fortran", t, 1, 108);
    int g[2] = {1001, 777}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int darg[2] = {3, MPI_DISTRIBUTE_DFLT_DARG},
        p[2] = {2, 2};
    OK(MPI_Type_create_darray(4, 3, 2, g, dist, darg, p, MPI_ORDER_C, MPI_INT, &t));
    typed_vs_packed("darray cyclic", t, 1, 110);
    MPI_Datatype c;
    OK(MPI_Type_contiguous(3, MPI_CHAR, &c));
    OK(MPI_Type_create_resized(c, -5, 7, &t));
    OK(MPI_Type_free(&c));
    typed_vs_packed("resized(3 chars, -5, 7)", t, 100000, 112);
}

int main(int argc, char **argv)
{
    dt_init(&argc, &argv);
    peer = dt_rank ^ 1;
    if (peer >= dt_size)
        peer = dt_rank;
    static const long sizes[] = {1, 3, 64, 1000, 4093, 8192, 16384 + 5, 65536, 200000, 1 << 20, 3000001, 8 << 20};
    /* block lengths: the fixed-size copy loops (8, 24) and odd ones that
     * packet boundaries cut through */
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        strided(sizes[i], sizes[i] < 64 ? 1 : sizes[i] < 100000 ? 8 : 24, (int)i);
        strided(sizes[i], sizes[i] < 64 ? 3 : sizes[i] < 100000 ? 7 : 29, (int)i + 50);
    }
    derived_both(1);
    derived_both(700);
    derived_both(100000);
    partial();
    free_pending();
    nested_types();
    return dt_finish("dt_p2p");
}
