/* MPI_Pack / Unpack / Pack_size round trips (several items into one buffer,
 * sent as MPI_PACKED), external32 byte order and sizes, Type_match_size and
 * the f90 types. */
#include "dtcheck.h"
#include <float.h>

static void roundtrip(void)
{
    /* a vector of doubles, a struct, and plain ints packed one after the other */
    double dv[30];
    for (int i = 0; i < 30; i++)
        dv[i] = i * 1.5;
    MPI_Datatype vec, st;
    OK(MPI_Type_vector(5, 2, 6, MPI_DOUBLE, &vec));
    OK(MPI_Type_commit(&vec));
    struct s {
        char c;
        long l;
        float f[2];
    } sv[2] = {{'a', -5, {1.0f, 2.0f}}, {'b', 1L << 40, {-3.0f, 4.5f}}};
    int bl[3] = {1, 1, 2};
    MPI_Aint d[3] = {offsetof(struct s, c), offsetof(struct s, l), offsetof(struct s, f)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_LONG, MPI_FLOAT};
    OK(MPI_Type_create_struct(3, bl, d, ty, &st));
    OK(MPI_Type_commit(&st));
    int iv[3] = {7, 8, 9};

    int s1, s2, s3;
    OK(MPI_Pack_size(1, vec, MPI_COMM_WORLD, &s1));
    OK(MPI_Pack_size(2, st, MPI_COMM_WORLD, &s2));
    OK(MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &s3));
    CHECK(s1 >= 80 && s2 >= 2 * 17 && s3 >= 12, "Pack_size %d %d %d", s1, s2, s3);
    int total = s1 + s2 + s3, pos = 0;
    char *buf = malloc((size_t)total);
    OK(MPI_Pack(dv, 1, vec, buf, total, &pos, MPI_COMM_WORLD));
    OK(MPI_Pack(sv, 2, st, buf, total, &pos, MPI_COMM_WORLD));
    OK(MPI_Pack(iv, 3, MPI_INT, buf, total, &pos, MPI_COMM_WORLD));
    CHECK(pos <= total, "packed %d bytes, more than Pack_size said (%d)", pos, total);
    int packed = pos;

    /* send it as MPI_PACKED around the ring and unpack what arrives */
    char *in = malloc((size_t)total);
    MPI_Status st_;
    int next = (dt_rank + 1) % dt_size, prev = (dt_rank + dt_size - 1) % dt_size;
    OK(MPI_Sendrecv(buf, packed, MPI_PACKED, next, 1, in, total, MPI_PACKED, prev, 1, MPI_COMM_WORLD, &st_));
    int got;
    OK(MPI_Get_count(&st_, MPI_PACKED, &got));
    CHECK(got == packed, "received %d packed bytes, sent %d", got, packed);

    double dv2[30];
    struct s sv2[2];
    int iv2[3];
    for (int i = 0; i < 30; i++)
        dv2[i] = -1;
    memset(sv2, 0, sizeof sv2);
    pos = 0;
    OK(MPI_Unpack(in, got, &pos, dv2, 1, vec, MPI_COMM_WORLD));
    OK(MPI_Unpack(in, got, &pos, sv2, 2, st, MPI_COMM_WORLD));
    OK(MPI_Unpack(in, got, &pos, iv2, 3, MPI_INT, MPI_COMM_WORLD));
    CHECK(pos == got, "unpacked %d of %d bytes", pos, got);
    for (int i = 0; i < 30; i++) {
        double want = (i % 6) < 2 && i < 26 ? i * 1.5 : -1;
        CHECK(dv2[i] == want, "dv2[%d] = %g, expected %g", i, dv2[i], want);
    }
    for (int k = 0; k < 2; k++)
        CHECK(sv2[k].c == sv[k].c && sv2[k].l == sv[k].l && sv2[k].f[0] == sv[k].f[0] && sv2[k].f[1] == sv[k].f[1],
              "struct %d unpacked wrong", k);
    CHECK(iv2[0] == 7 && iv2[1] == 8 && iv2[2] == 9, "ints unpacked wrong");

    /* errors: Ferry reports a too small buffer (MPICH 4.0 does not check) */
    if (dt_is_ferry) {
        pos = 0;
        CHECK(err_class(MPI_Pack(dv, 1, vec, buf, 79, &pos, MPI_COMM_WORLD)) == MPI_ERR_TRUNCATE,
              "Pack into a small buffer");
        pos = 0;
        CHECK(err_class(MPI_Unpack(in, 10, &pos, dv2, 1, vec, MPI_COMM_WORLD)) == MPI_ERR_TRUNCATE,
              "Unpack from a short buffer");
        pos = 0;
        MPI_Datatype un;
        OK(MPI_Type_contiguous(2, MPI_INT, &un));
        CHECK(err_class(MPI_Pack(iv, 1, un, buf, total, &pos, MPI_COMM_WORLD)) == MPI_ERR_TYPE,
              "Pack with an uncommitted type");
        OK(MPI_Type_free(&un));
    }
    CHECK(err_class(MPI_Pack(iv, -1, MPI_INT, buf, total, &pos, MPI_COMM_WORLD)) == MPI_ERR_COUNT, "negative count");
    free(buf);
    free(in);
    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&st));
}

static void expect_bytes(const char *what, const unsigned char *got, const char *hex, MPI_Aint n)
{
    char s[256] = "";
    for (MPI_Aint i = 0; i < n && 2 * i + 2 < (MPI_Aint)sizeof s; i++)
        sprintf(s + 2 * i, "%02x", got[i]);
    CHECK(strcmp(s, hex) == 0, "%s: external32 %s, expected %s", what, s, hex);
}

static void ext32(void)
{
    unsigned char out[256];
    MPI_Aint pos, size;
    static const struct {
        MPI_Datatype t;
        const char *name;
        MPI_Aint size;
    } sizes[] = {
        {MPI_CHAR, "char", 1}, {MPI_SHORT, "short", 2}, {MPI_INT, "int", 4}, {MPI_LONG, "long", 4},
        {MPI_LONG_LONG, "long long", 8}, {MPI_FLOAT, "float", 4}, {MPI_DOUBLE, "double", 8},
        {MPI_LONG_DOUBLE, "long double", 16}, {MPI_UNSIGNED_LONG, "unsigned long", 4}, {MPI_INT64_T, "int64", 8},
        {MPI_C_DOUBLE_COMPLEX, "double complex", 16}, {MPI_AINT, "aint", 8}, {MPI_C_BOOL, "bool", 1},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        OK(MPI_Pack_external_size("external32", 3, sizes[i].t, &size));
        CHECK(size == 3 * sizes[i].size, "Pack_external_size(3, %s) = %ld, expected %ld", sizes[i].name, (long)size,
              (long)(3 * sizes[i].size));
    }
    int iv[2] = {0x01020304, -2};
    pos = 0;
    OK(MPI_Pack_external("external32", iv, 2, MPI_INT, out, sizeof out, &pos));
    CHECK(pos == 8, "position %ld", (long)pos);
    expect_bytes("int", out, "01020304fffffffe", pos);
    short sv = 0x0a0b;
    pos = 0;
    OK(MPI_Pack_external("external32", &sv, 1, MPI_SHORT, out, sizeof out, &pos));
    expect_bytes("short", out, "0a0b", pos);
    long lv[2] = {-2, 0x11223344};
    pos = 0;
    OK(MPI_Pack_external("external32", lv, 2, MPI_LONG, out, sizeof out, &pos));
    expect_bytes("long", out, "fffffffe11223344", pos);
    double dv = 1.0;
    pos = 0;
    OK(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, out, sizeof out, &pos));
    expect_bytes("double", out, "3ff0000000000000", pos);
    float fv = -2.0f;
    pos = 0;
    OK(MPI_Pack_external("external32", &fv, 1, MPI_FLOAT, out, sizeof out, &pos));
    expect_bytes("float", out, "c0000000", pos);
    long double ld = 1.0L;
    pos = 0;
    OK(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, out, sizeof out, &pos));
    expect_bytes("long double", out, "3fff0000000000000000000000000000", pos);
    long double ld2 = 0;
    MPI_Aint ipos = 0;
    OK(MPI_Unpack_external("external32", out, pos, &ipos, &ld2, 1, MPI_LONG_DOUBLE));
    CHECK(ld2 == 1.0L, "long double round trip");

    /* a vector of ints */
    {
        int x[6] = {0x10203040, 1, -3, 2, 0x7f, 3};
        MPI_Datatype vi;
        OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vi));
        OK(MPI_Type_commit(&vi));
        OK(MPI_Pack_external_size("external32", 1, vi, &size));
        CHECK(size == 12, "Pack_external_size(vector of 3 ints) %ld", (long)size);
        pos = 0;
        OK(MPI_Pack_external("external32", x, 1, vi, out, sizeof out, &pos));
        expect_bytes("vector of int", out, "10203040fffffffd0000007f", pos);
        int y[6] = {0};
        ipos = 0;
        OK(MPI_Unpack_external("external32", out, pos, &ipos, y, 1, vi));
        CHECK(y[0] == x[0] && y[2] == x[2] && y[4] == x[4] && y[1] == 0 && y[3] == 0 && y[5] == 0,
              "external32 vector round trip");
        OK(MPI_Type_free(&vi));
    }
    if (!dt_is_ferry)   /* MPICH 4.0.2 crashes in Pack_external_size on struct types */
        return;
    /* a derived type: a struct {short; double} in a vector, round trip */
    struct sd {
        short s;
        double d;
    } a[4] = {{1, 0.5}, {-2, 1e300}, {3, -0.0}, {0x7fff, 2.25}}, b[4];
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct sd, s), offsetof(struct sd, d)};
    MPI_Datatype ty[2] = {MPI_SHORT, MPI_DOUBLE}, t, v;
    OK(MPI_Type_create_struct(2, bl, disp, ty, &t));
    OK(MPI_Type_vector(2, 1, 2, t, &v));   /* elements 0 and 2 */
    OK(MPI_Type_commit(&v));
    OK(MPI_Pack_external_size("external32", 1, v, &size));
    CHECK(size == 2 * 10, "Pack_external_size(vector of struct) %ld", (long)size);
    pos = 0;
    OK(MPI_Pack_external("external32", a, 1, v, out, sizeof out, &pos));
    CHECK(pos == 20, "position %ld", (long)pos);
    /* element 0 of a: short 1 then double 0.5; element 2: 3, -0.0 */
    expect_bytes("vector of struct", out, "00013fe000000000000000038000000000000000", 20);
    memset(b, 0, sizeof b);
    ipos = 0;
    OK(MPI_Unpack_external("external32", out, pos, &ipos, b, 1, v));
    CHECK(ipos == pos, "unpack position %ld", (long)ipos);
    for (int k = 0; k < 4; k++) {
        if (k == 0 || k == 2)
            CHECK(b[k].s == a[k].s && b[k].d == a[k].d, "external32 round trip of element %d", k);
        else
            CHECK(b[k].s == 0 && b[k].d == 0, "element %d written", k);
    }
    if (dt_is_ferry) {
        pos = 0;
        CHECK(err_class(MPI_Pack_external("external32", iv, 2, MPI_INT, out, 7, &pos)) == MPI_ERR_TRUNCATE,
              "Pack_external into a small buffer");
        pos = 0;
        CHECK(err_class(MPI_Pack_external("native", iv, 2, MPI_INT, out, 8, &pos)) == MPI_ERR_UNSUPPORTED_DATAREP,
              "Pack_external with datarep native");
    }
    OK(MPI_Type_free(&t));
    OK(MPI_Type_free(&v));
}

static void sized_types(void)
{
    MPI_Datatype t;
    int size, ni, na, nd, comb;
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t));
    OK(MPI_Type_size(t, &size));
    CHECK(size == 8, "match_size(integer, 8) has size %d", size);
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &t));
    OK(MPI_Type_size(t, &size));
    CHECK(size == 4, "match_size(real, 4) has size %d", size);
    OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
    OK(MPI_Type_size(t, &size));
    CHECK(size == 16, "match_size(complex, 16) has size %d", size);
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t) != MPI_SUCCESS, "match_size(integer, 3) succeeded");

    static const struct {
        int kind, p, r, size;
    } f[] = {{0, 0, 2, 1}, {0, 0, 4, 2}, {0, 0, 9, 4}, {0, 0, 18, 8}, {1, 6, 30, 4}, {1, 15, MPI_UNDEFINED, 8},
             {1, MPI_UNDEFINED, 300, 8}, {1, 30, 4000, 16}, {2, 6, MPI_UNDEFINED, 8}, {2, 15, 300, 16}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].size == 16 && f[i].kind == 1 && !dt_is_ferry)
            continue;   /* MPICH 4.0.2 as packaged has no quad-precision f90 real */
        int rc = f[i].kind == 0   ? MPI_Type_create_f90_integer(f[i].r, &t)
                 : f[i].kind == 1 ? MPI_Type_create_f90_real(f[i].p, f[i].r, &t)
                                  : MPI_Type_create_f90_complex(f[i].p, f[i].r, &t);
        CHECK(rc == MPI_SUCCESS, "f90 case %zu failed", i);
        if (rc)
            continue;
        OK(MPI_Type_size(t, &size));
        CHECK(size == f[i].size, "f90 case %zu: size %d, expected %d", i, size, f[i].size);
        OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
        int want = f[i].kind == 0 ? MPI_COMBINER_F90_INTEGER
                   : f[i].kind == 1 ? MPI_COMBINER_F90_REAL : MPI_COMBINER_F90_COMPLEX;
        CHECK(comb == want && ni == (f[i].kind == 0 ? 1 : 2) && na == 0 && nd == 0, "f90 case %zu: envelope", i);
        int ints[2];
        OK(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
        if (f[i].kind == 0)
            CHECK(ints[0] == f[i].r, "f90 integer contents %d", ints[0]);
        else
            CHECK(ints[0] == f[i].p && ints[1] == f[i].r, "f90 contents %d %d", ints[0], ints[1]);
        /* usable for communication without commit */
        char buf[32] = {0}, rbuf[32];
        OK(MPI_Sendrecv(buf, 1, t, dt_rank, 5, rbuf, 1, t, dt_rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    CHECK(MPI_Type_create_f90_integer(40, &t) != MPI_SUCCESS, "f90_integer(40) succeeded");
    CHECK(MPI_Type_create_f90_real(40, 5000, &t) != MPI_SUCCESS, "f90_real(40, 5000) succeeded");
}

int main(int argc, char **argv)
{
    dt_init(&argc, &argv);
    roundtrip();
    ext32();
    sized_types();
    return dt_finish("dt_pack");
}
