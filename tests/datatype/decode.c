/* MPI_Type_get_envelope / get_contents: the envelope counts of every
 * combiner, and a round trip: rebuild each type from its contents
 * (recursively) and compare the type maps of the original and the rebuilt
 * type byte by byte through Pack and Unpack. */
#include "dtcheck.h"

static MPI_Datatype rebuild(MPI_Datatype t);

static int expect_counts(int comb, const int *ints, int *ni, int *na, int *nd)
{
    int n = ints ? ints[0] : 0;
    switch (comb) {
    case MPI_COMBINER_DUP: *ni = 0, *na = 0, *nd = 1; return 1;
    case MPI_COMBINER_CONTIGUOUS: *ni = 1, *na = 0, *nd = 1; return 1;
    case MPI_COMBINER_VECTOR: *ni = 3, *na = 0, *nd = 1; return 1;
    case MPI_COMBINER_HVECTOR: *ni = 2, *na = 1, *nd = 1; return 1;
    case MPI_COMBINER_INDEXED: *ni = 2 * n + 1, *na = 0, *nd = 1; return 1;
    case MPI_COMBINER_HINDEXED: *ni = n + 1, *na = n, *nd = 1; return 1;
    case MPI_COMBINER_INDEXED_BLOCK: *ni = n + 2, *na = 0, *nd = 1; return 1;
    case MPI_COMBINER_HINDEXED_BLOCK: *ni = 2, *na = n, *nd = 1; return 1;
    case MPI_COMBINER_STRUCT: *ni = n + 1, *na = n, *nd = n; return 1;
    case MPI_COMBINER_SUBARRAY: *ni = 3 * n + 2, *na = 0, *nd = 1; return 1;
    case MPI_COMBINER_DARRAY: *ni = 4 * ints[2] + 4, *na = 0, *nd = 1; return 1;
    case MPI_COMBINER_RESIZED: *ni = 0, *na = 2, *nd = 1; return 1;
    }
    return 0;
}

static MPI_Datatype rebuild(MPI_Datatype t)
{
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    if (comb == MPI_COMBINER_NAMED)
        return t;
    int *i = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *a = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *d = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    MPI_Datatype *sub = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    OK(MPI_Type_get_contents(t, ni, na, nd, i, a, d));
    int eni, ena, end;
    if (expect_counts(comb, i, &eni, &ena, &end))
        CHECK(ni == eni && na == ena && nd == end, "combiner %d: envelope %d %d %d, expected %d %d %d", comb, ni, na,
              nd, eni, ena, end);
    else
        CHECK(0, "unexpected combiner %d", comb);
    for (int k = 0; k < nd; k++)
        sub[k] = rebuild(d[k]);
    MPI_Datatype r = MPI_DATATYPE_NULL;
    int n = ni ? i[0] : 0;
    switch (comb) {
    case MPI_COMBINER_DUP: OK(MPI_Type_dup(sub[0], &r)); break;
    case MPI_COMBINER_CONTIGUOUS: OK(MPI_Type_contiguous(i[0], sub[0], &r)); break;
    case MPI_COMBINER_VECTOR: OK(MPI_Type_vector(i[0], i[1], i[2], sub[0], &r)); break;
    case MPI_COMBINER_HVECTOR: OK(MPI_Type_create_hvector(i[0], i[1], a[0], sub[0], &r)); break;
    case MPI_COMBINER_INDEXED: OK(MPI_Type_indexed(n, i + 1, i + 1 + n, sub[0], &r)); break;
    case MPI_COMBINER_HINDEXED: OK(MPI_Type_create_hindexed(n, i + 1, a, sub[0], &r)); break;
    case MPI_COMBINER_INDEXED_BLOCK: OK(MPI_Type_create_indexed_block(n, i[1], i + 2, sub[0], &r)); break;
    case MPI_COMBINER_HINDEXED_BLOCK: OK(MPI_Type_create_hindexed_block(n, i[1], a, sub[0], &r)); break;
    case MPI_COMBINER_STRUCT: OK(MPI_Type_create_struct(n, i + 1, a, sub, &r)); break;
    case MPI_COMBINER_SUBARRAY:
        OK(MPI_Type_create_subarray(n, i + 1, i + 1 + n, i + 1 + 2 * n, i[1 + 3 * n], sub[0], &r));
        break;
    case MPI_COMBINER_DARRAY: {
        int nd_ = i[2];
        OK(MPI_Type_create_darray(i[0], i[1], nd_, i + 3, i + 3 + nd_, i + 3 + 2 * nd_, i + 3 + 3 * nd_,
                                  i[3 + 4 * nd_], sub[0], &r));
        break;
    }
    case MPI_COMBINER_RESIZED: OK(MPI_Type_create_resized(sub[0], a[0], a[1], &r)); break;
    }
    /* the returned derived types are the caller's to free */
    for (int k = 0; k < nd; k++) {
        int ci, ca, cd, cc;
        OK(MPI_Type_get_envelope(d[k], &ci, &ca, &cd, &cc));
        if (cc != MPI_COMBINER_NAMED) {
            OK(MPI_Type_free(&d[k]));
            OK(MPI_Type_free(&sub[k]));
        }
    }
    free(i);
    free(a);
    free(d);
    free(sub);
    return r;
}

/* Same type map: size, bounds, and what Pack and Unpack move for 2 elements. */
static void same_map(const char *what, MPI_Datatype x, MPI_Datatype y)
{
    int sx, sy;
    MPI_Aint lx, ex, ly, ey, tlx, tex, tly, tey;
    OK(MPI_Type_size(x, &sx));
    OK(MPI_Type_size(y, &sy));
    OK(MPI_Type_get_extent(x, &lx, &ex));
    OK(MPI_Type_get_extent(y, &ly, &ey));
    OK(MPI_Type_get_true_extent(x, &tlx, &tex));
    OK(MPI_Type_get_true_extent(y, &tly, &tey));
    CHECK(sx == sy && lx == ly && ex == ey && tlx == tly && tex == tey,
          "%s: rebuilt type differs: size %d/%d lb %ld/%ld extent %ld/%ld true %ld+%ld / %ld+%ld", what, sx, sy,
          (long)lx, (long)ly, (long)ex, (long)ey, (long)tlx, (long)tex, (long)tly, (long)tey);
    if (sx != sy || ex != ey || tlx != tly || tex != tey || sx == 0)
        return;
    /* data of element e lies in [tlx + e*ex, tlx + tex + e*ex) */
    MPI_Aint lo = tlx < tlx + ex ? tlx : tlx + ex, hi = tlx + tex > tlx + tex + ex ? tlx + tex : tlx + tex + ex;
    size_t n = (size_t)(hi - lo);
    unsigned char *src = malloc(n), *d1 = malloc(n), *d2 = malloc(n), *p1 = malloc(2 * (size_t)sx),
                  *p2 = malloc(2 * (size_t)sx);
    for (size_t k = 0; k < n; k++)
        src[k] = pattern(k);
    int pos = 0;
    OK(MPI_Pack(src - lo, 2, x, p1, 2 * sx, &pos, MPI_COMM_WORLD));
    pos = 0;
    OK(MPI_Pack(src - lo, 2, y, p2, 2 * sx, &pos, MPI_COMM_WORLD));
    first_diff(what, p2, p1, 2 * (size_t)sx);
    memset(d1, 0xEE, n);
    memset(d2, 0xEE, n);
    pos = 0;
    OK(MPI_Unpack(p1, 2 * sx, &pos, d1 - lo, 2, x, MPI_COMM_WORLD));
    pos = 0;
    OK(MPI_Unpack(p1, 2 * sx, &pos, d2 - lo, 2, y, MPI_COMM_WORLD));
    for (size_t k = 0; k < n; k++)
        if (d1[k] != d2[k]) {
            CHECK(0, "%s: unpacked byte %zu differs", what, k);
            break;
        }
    free(src);
    free(d1);
    free(d2);
    free(p1);
    free(p2);
}

static void roundtrip(const char *what, MPI_Datatype t)
{
    MPI_Datatype r = rebuild(t);
    OK(MPI_Type_commit(&t));
    OK(MPI_Type_commit(&r));
    same_map(what, t, r);
    OK(MPI_Type_free(&r));
    OK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
    dt_init(&argc, &argv);
    MPI_Datatype t, u, w;
    int ni, na, nd, comb;

    OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "MPI_INT envelope");
    OK(MPI_Type_get_envelope(MPI_FLOAT_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED, "MPI_FLOAT_INT envelope %d", comb);

    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    roundtrip("contiguous", t);
    OK(MPI_Type_vector(4, 2, -3, MPI_DOUBLE, &t));
    roundtrip("vector", t);
    OK(MPI_Type_create_hvector(3, 2, 17, MPI_SHORT, &t));
    roundtrip("hvector", t);
    {
        int bl[3] = {1, 3, 2}, d[3] = {10, 0, 4};
        OK(MPI_Type_indexed(3, bl, d, MPI_FLOAT, &t));
        roundtrip("indexed", t);
        MPI_Aint ad[3] = {-16, 40, 8};
        OK(MPI_Type_create_hindexed(3, bl, ad, MPI_CHAR, &t));
        roundtrip("hindexed", t);
        OK(MPI_Type_create_indexed_block(3, 2, d, MPI_INT, &t));
        roundtrip("indexed_block", t);
        OK(MPI_Type_create_hindexed_block(3, 2, ad, MPI_INT, &t));
        roundtrip("hindexed_block", t);
    }
    {
        int bl[3] = {2, 1, 1};
        MPI_Aint d[3] = {0, 12, 24};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        OK(MPI_Type_create_struct(3, bl, d, ty, &t));
        roundtrip("struct", t);
    }
    OK(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    roundtrip("resized", t);
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &u));
    OK(MPI_Type_dup(u, &t));
    OK(MPI_Type_free(&u));
    roundtrip("dup", t);
    {
        int sizes[3] = {5, 4, 6}, sub[3] = {2, 2, 3}, st[3] = {3, 1, 2};
        OK(MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t));
        roundtrip("subarray", t);
    }
    {
        int g[2] = {9, 7}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
        int darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG},
            p[2] = {2, 3};
        OK(MPI_Type_create_darray(6, 4, 2, g, dist, darg, p, MPI_ORDER_C, MPI_DOUBLE, &t));
        roundtrip("darray", t);
    }
    {
        /* nested: a struct of (vector of resized indexed, subarray), with the
         * inner types freed before decoding */
        int bl[2] = {2, 1}, d[2] = {0, 5};
        OK(MPI_Type_indexed(2, bl, d, MPI_SHORT, &u));
        OK(MPI_Type_create_resized(u, 0, 16, &w));
        OK(MPI_Type_free(&u));
        OK(MPI_Type_vector(3, 2, 4, w, &u));
        OK(MPI_Type_free(&w));
        int sizes[2] = {4, 4}, sub[2] = {2, 3}, st[2] = {1, 0};
        OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_CHAR, &w));
        int sbl[3] = {1, 2, 1};
        MPI_Aint sd[3] = {0, 300, 400};
        MPI_Datatype sty[3] = {u, w, MPI_LONG_DOUBLE};
        OK(MPI_Type_create_struct(3, sbl, sd, sty, &t));
        OK(MPI_Type_free(&u));
        OK(MPI_Type_free(&w));
        roundtrip("nested", t);
    }
    {
        /* get_contents hands back usable handles of freed inner types */
        OK(MPI_Type_vector(2, 1, 3, MPI_INT, &u));
        OK(MPI_Type_contiguous(2, u, &t));
        OK(MPI_Type_free(&u));
        int ints[1];
        MPI_Datatype inner;
        OK(MPI_Type_get_contents(t, 1, 0, 1, ints, NULL, &inner));
        CHECK(ints[0] == 2, "contents %d", ints[0]);
        int size;
        OK(MPI_Type_size(inner, &size));
        CHECK(size == 8, "returned inner type has size %d", size);
        OK(MPI_Type_get_envelope(inner, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && nd == 1, "inner envelope");
        OK(MPI_Type_free(&inner));
        OK(MPI_Type_free(&t));
    }
    return dt_finish("dt_decode");
}
