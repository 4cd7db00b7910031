/* Helpers shared by the datatype tests: failure reporting, and reference
 * type maps computed by the tests themselves (a list of {offset, length} in
 * type-map order) against which a datatype is checked byte by byte.
 * The tests build with any MPI (Ferry or MPICH's mpicc) so that the tests
 * themselves can be validated against MPICH. */
#ifndef DTCHECK_H
#define DTCHECK_H
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dt_errors;
static int dt_rank, dt_size;
static int dt_is_ferry;   /* some checks are Ferry's choices where MPICH does not check */

static inline void dt_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void dt_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rank %d: %s:%d: FAIL: ", dt_rank, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (++dt_errors > 40) {
        fprintf(stderr, "rank %d: too many failures\n", dt_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond))                                       \
            dt_fail(__FILE__, __LINE__, __VA_ARGS__);      \
    } while (0)
/* An MPI call that must succeed. */
#define OK(call)                                                                   \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != MPI_SUCCESS)                                                    \
            dt_fail(__FILE__, __LINE__, "%s returned %d", #call, rc_);             \
    } while (0)

static inline int err_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

static inline void dt_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &dt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dt_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    dt_is_ferry = strstr(v, "Ferry") != NULL;
}

/* Collect the failure counts at rank 0 with point-to-point only (the test
 * must not depend on collectives), print the verdict, finalize. Every rank
 * exits non-zero when it saw a failure, rank 0 when any rank did. */
static inline int dt_finish(const char *name)
{
    int total = dt_errors;
    if (dt_rank == 0) {
        for (int r = 1; r < dt_size; r++) {
            int e = 1;
            if (MPI_Recv(&e, 1, MPI_INT, r, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                e = 1;
            total += e;
        }
        if (total)
            printf("%s: FAILED (%d failures, %d ranks%s)\n", name, total, dt_size, dt_is_ferry ? "" : ", not Ferry");
        else
            printf("%s: OK (%d ranks%s)\n", name, dt_size, dt_is_ferry ? "" : ", not Ferry");
        fflush(stdout);
    } else {
        MPI_Send(&dt_errors, 1, MPI_INT, 0, 999, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}

/* ---- reference type maps ---------------------------------------------------- */

struct tm {
    MPI_Aint *off;
    int *len;
    int n, cap;
};

static inline void tm_add(struct tm *m, MPI_Aint off, int len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->off = realloc(m->off, (size_t)m->cap * sizeof *m->off);
        m->len = realloc(m->len, (size_t)m->cap * sizeof *m->len);
    }
    m->off[m->n] = off;
    m->len[m->n] = len;
    m->n++;
}

static inline void tm_free(struct tm *m)
{
    free(m->off);
    free(m->len);
    memset(m, 0, sizeof *m);
}

static inline long tm_size(const struct tm *m)
{
    long s = 0;
    for (int i = 0; i < m->n; i++)
        s += m->len[i];
    return s;
}

static inline unsigned char pattern(size_t i)
{
    return (unsigned char)((i * 37 + 11) ^ (i >> 8));
}

/* A buffer for count elements of a map with this extent: base is where the
 * type's origin lies; [lo, hi) relative to base holds every data byte. */
struct span {
    unsigned char *mem, *base;
    MPI_Aint lo, hi;
};

static inline struct span span_new(const struct tm *m, MPI_Aint extent, int count, int fill)
{
    struct span s = {0};
    s.lo = 0;
    s.hi = 0;
    for (int e = 0; e < count; e++)
        for (int i = 0; i < m->n; i++) {
            MPI_Aint a = m->off[i] + (MPI_Aint)e * extent;
            if (a < s.lo)
                s.lo = a;
            if (a + m->len[i] > s.hi)
                s.hi = a + m->len[i];
        }
    s.mem = malloc((size_t)(s.hi - s.lo) + 64);
    s.base = s.mem + 32 - s.lo;
    for (MPI_Aint k = 0; k < s.hi - s.lo + 64; k++)
        s.mem[k] = fill < 0 ? pattern((size_t)k) : (unsigned char)fill;
    return s;
}

/* The packed stream of (s.base, count, map). */
static inline unsigned char *ref_pack(const struct tm *m, MPI_Aint extent, int count, const struct span *s)
{
    long size = tm_size(m);
    unsigned char *out = malloc((size_t)(size * count) + 1), *p = out;
    for (int e = 0; e < count; e++)
        for (int i = 0; i < m->n; i++) {
            memcpy(p, s->base + m->off[i] + (MPI_Aint)e * extent, (size_t)m->len[i]);
            p += m->len[i];
        }
    return out;
}

/* Check dst (filled with 0xEE, then unpacked into) against src: data bytes
 * equal, every other byte untouched. */
static inline void check_unpacked(const char *what, const struct tm *m, MPI_Aint extent, int count,
                                  const struct span *src,
                           const struct span *dst)
{
    size_t n = (size_t)(src->hi - src->lo);
    unsigned char *mask = calloc(n, 1);
    for (int e = 0; e < count; e++)
        for (int i = 0; i < m->n; i++)
            memset(mask + (m->off[i] + (MPI_Aint)e * extent - src->lo), 1, (size_t)m->len[i]);
    int bad = 0;
    for (size_t k = 0; k < n && bad < 3; k++) {
        MPI_Aint a = (MPI_Aint)k + src->lo;
        unsigned char want = mask[k] ? src->base[a] : 0xEE;
        if (dst->base[a] != want) {
            dt_fail(__FILE__, __LINE__, "%s: byte at offset %ld is 0x%02x, expected 0x%02x (%s)", what, (long)a,
                    dst->base[a], want, mask[k] ? "data" : "gap");
            bad++;
        }
    }
    free(mask);
}

static inline void first_diff(const char *what, const unsigned char *got, const unsigned char *want, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (got[k] != want[k]) {
            dt_fail(__FILE__, __LINE__, "%s: packed byte %zu of %zu is 0x%02x, expected 0x%02x", what, k, n, got[k],
                    want[k]);
            return;
        }
}

/* Check t against the reference map m with the given lb and extent: sizes,
 * bounds, and Pack / Unpack / a send to self in both directions for 1..3
 * elements, byte by byte. */
static inline void check_map(const char *what, MPI_Datatype t, const struct tm *m, MPI_Aint lb, MPI_Aint extent)
{
    int size;
    MPI_Aint glb, gext, tlb, text;
    long want_size = tm_size(m);
    OK(MPI_Type_size(t, &size));
    CHECK(size == want_size, "%s: size %d, expected %ld", what, size, want_size);
    OK(MPI_Type_get_extent(t, &glb, &gext));
    CHECK(glb == lb && gext == extent, "%s: lb %ld extent %ld, expected %ld %ld", what, (long)glb, (long)gext,
          (long)lb, (long)extent);
    OK(MPI_Type_get_true_extent(t, &tlb, &text));
    if (m->n > 0) {
        MPI_Aint lo = m->off[0], hi = m->off[0] + m->len[0];
        for (int i = 1; i < m->n; i++) {
            if (m->off[i] < lo)
                lo = m->off[i];
            if (m->off[i] + m->len[i] > hi)
                hi = m->off[i] + m->len[i];
        }
        CHECK(tlb == lo && text == hi - lo, "%s: true lb %ld true extent %ld, expected %ld %ld", what, (long)tlb,
              (long)text, (long)lo, (long)(hi - lo));
        MPI_Count clb, cext;
        OK(MPI_Type_get_true_extent_x(t, &clb, &cext));
        CHECK(clb == tlb && cext == text, "%s: Type_get_true_extent_x %lld %lld", what, (long long)clb,
              (long long)cext);
        OK(MPI_Type_get_extent_x(t, &clb, &cext));
        CHECK(clb == glb && cext == gext, "%s: Type_get_extent_x %lld %lld", what, (long long)clb, (long long)cext);
    }
    if (size != want_size || m->n == 0)
        return;
    for (int count = 1; count <= 3; count++) {
        char w[256];
        snprintf(w, sizeof w, "%s x%d", what, count);
        struct span src = span_new(m, extent, count, -1);
        unsigned char *ref = ref_pack(m, extent, count, &src);
        size_t bytes = (size_t)want_size * (size_t)count;
        int psize, pos = 0;
        OK(MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize));
        CHECK((size_t)psize >= bytes, "%s: Pack_size %d < %zu", w, psize, bytes);
        unsigned char *packed = malloc((size_t)psize + 1);
        OK(MPI_Pack(src.base, count, t, packed, psize, &pos, MPI_COMM_WORLD));
        CHECK((size_t)pos == bytes, "%s: Pack position %d, expected %zu", w, pos, bytes);
        first_diff(w, packed, ref, bytes);

        struct span dst = span_new(m, extent, count, 0xEE);
        pos = 0;
        OK(MPI_Unpack(ref, (int)bytes, &pos, dst.base, count, t, MPI_COMM_WORLD));
        CHECK((size_t)pos == bytes, "%s: Unpack position %d, expected %zu", w, pos, bytes);
        check_unpacked(w, m, extent, count, &src, &dst);

        /* through the message path: typed send, byte receive, and back */
        memset(packed, 0, bytes);
        MPI_Status st;
        OK(MPI_Sendrecv(src.base, count, t, dt_rank, 7, packed, (int)bytes, MPI_BYTE, dt_rank, 7, MPI_COMM_WORLD,
                        &st));
        first_diff(w, packed, ref, bytes);
        memset(dst.mem, 0xEE, (size_t)(dst.hi - dst.lo) + 64);
        OK(MPI_Sendrecv(ref, (int)bytes, MPI_BYTE, dt_rank, 8, dst.base, count, t, dt_rank, 8, MPI_COMM_WORLD, &st));
        check_unpacked(w, m, extent, count, &src, &dst);
        int got;
        OK(MPI_Get_count(&st, t, &got));
        CHECK(got == count, "%s: Get_count %d", w, got);
        free(packed);
        free(ref);
        free(src.mem);
        free(dst.mem);
    }
}

#endif
