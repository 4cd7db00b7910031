/* Shared helpers for the Ferry test programs.
 *
 * Only the standard MPI C API is used here, so every test program builds and
 * runs unchanged against Ferry, MPICH and Open MPI (see run_with_peer.sh).
 *
 *   CHECK(cond, fmt, ...)  on failure: print "FAIL [rank R] file:line: (cond) msg"
 *                          to stderr and MPI_Abort(MPI_COMM_WORLD, 1).
 *   CHECK_RC(call)         CHECK that an MPI call returned MPI_SUCCESS.
 *   tc_fill / tc_check     fill / verify a buffer with a pattern that depends on
 *                          the byte position, the sender rank and a salt, so a
 *                          shifted, duplicated, truncated, stale or foreign
 *                          payload is detected at the exact byte.
 *   tc_init / tc_finish    MPI_Init + rank/size, and the single summary line +
 *                          MPI_Finalize.
 */
#ifndef FERRY_TESTS_COMMON_H
#define FERRY_TESTS_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define TC_UNUSED __attribute__((unused))
#define TC_NORETURN __attribute__((noreturn))
#define TC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TC_UNUSED
#define TC_NORETURN
#define TC_PRINTF(a, b)
#endif

/* Are MPI handles plain integers (MPICH ABI, which Ferry follows)?  Only then
 * can a test forge a "garbage" handle value without dereferencing a wild
 * pointer (Open MPI handles are pointers). */
#define TC_INT_HANDLES                                                          \
    _Generic((MPI_Comm)0, int: 1, unsigned int: 1, long: 1, unsigned long: 1, \
             default: 0)

static int tc_rank_ = -1, tc_size_ = -1;

static TC_UNUSED int tc_world_rank(void)
{
    int init = 0, fin = 0, r = -1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    else
        r = tc_rank_;
    return r;
}

static TC_UNUSED TC_NORETURN TC_PRINTF(4, 5) void
tc_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL [rank %d] %s:%d: (%s) %s\n", tc_world_rank(), file, line,
            cond, msg);
    fflush(stderr);
    fflush(stdout);
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define CHECK(cond, ...)                                                 \
    do {                                                                 \
        if (!(cond))                                                     \
            tc_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);             \
    } while (0)

static TC_UNUSED const char *tc_errstr(int rc)
{
    static char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    s[0] = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "(no error string)");
    s[MPI_MAX_ERROR_STRING] = 0;
    return s;
}

#define CHECK_RC(call)                                                   \
    do {                                                                 \
        int tc_rc_ = (call);                                             \
        if (tc_rc_ != MPI_SUCCESS)                                       \
            tc_fail(__FILE__, __LINE__, #call, "returned %d: %s", tc_rc_, \
                    tc_errstr(tc_rc_));                                  \
    } while (0)

/* ---- position + rank dependent pattern -------------------------------- */

static inline uint64_t tc_mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dULL;
    x ^= x >> 33;
    return x;
}

static inline uint64_t tc_word(uint64_t w, int rank, uint64_t salt)
{
    return tc_mix(w * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)(rank + 1) << 44) ^
                  (salt * 0xD6E8FEB86659FD93ULL));
}

/* expected byte at position i of a buffer filled by `rank` with `salt` */
static inline unsigned char tc_pat(size_t i, int rank, uint64_t salt)
{
    return (unsigned char)(tc_word(i >> 3, rank, salt) >> ((i & 7) * 8));
}

static TC_UNUSED void tc_fill(void *buf, size_t n, int rank, uint64_t salt)
{
    unsigned char *p = (unsigned char *)buf;
    size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 8 <= n; i += 8) {
        uint64_t v = tc_word(i >> 3, rank, salt);
        memcpy(p + i, &v, 8);
    }
#endif
    for (; i < n; i++)
        p[i] = tc_pat(i, rank, salt);
}

/* index of the first byte that differs from the pattern, or -1 */
static TC_UNUSED long long tc_check(const void *buf, size_t n, int rank, uint64_t salt)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 8 <= n; i += 8) {
        uint64_t v = tc_word(i >> 3, rank, salt);
        if (memcmp(p + i, &v, 8) != 0)
            break;
    }
#endif
    for (; i < n; i++)
        if (p[i] != tc_pat(i, rank, salt))
            return (long long)i;
    return -1;
}

/* CHECK that buf[0..n) holds the pattern of (rank, salt); names the byte. */
#define CHECK_PAT(buf, n, rank, salt, ...)                                     \
    do {                                                                       \
        const unsigned char *tc_b_ = (const unsigned char *)(buf);             \
        long long tc_bad_ = tc_check(tc_b_, (n), (rank), (salt));              \
        if (tc_bad_ >= 0) {                                                    \
            char tc_what_[512];                                                \
            snprintf(tc_what_, sizeof tc_what_, __VA_ARGS__);                  \
            tc_fail(__FILE__, __LINE__, "payload pattern",                     \
                    "%s: byte %lld of %zu is 0x%02x, expected 0x%02x "         \
                    "(sender %d, salt %llu)",                                  \
                    tc_what_, tc_bad_, (size_t)(n), tc_b_[tc_bad_],            \
                    tc_pat((size_t)tc_bad_, (rank), (salt)), (int)(rank),      \
                    (unsigned long long)(salt));                               \
        }                                                                      \
    } while (0)

/* CHECK that n bytes at buf all equal byte c (guard areas). */
#define CHECK_BYTES(buf, n, c, ...)                                            \
    do {                                                                       \
        const unsigned char *tc_g_ = (const unsigned char *)(buf);             \
        for (size_t tc_i_ = 0; tc_i_ < (size_t)(n); tc_i_++)                   \
            if (tc_g_[tc_i_] != (unsigned char)(c)) {                          \
                char tc_what_[512];                                            \
                snprintf(tc_what_, sizeof tc_what_, __VA_ARGS__);              \
                tc_fail(__FILE__, __LINE__, "guard bytes",                     \
                        "%s: byte %zu is 0x%02x, expected 0x%02x", tc_what_,   \
                        tc_i_, tc_g_[tc_i_], (unsigned)(unsigned char)(c));    \
            }                                                                  \
    } while (0)

static TC_UNUSED void *tc_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    CHECK(p != NULL, "malloc(%zu) failed", n);
    return p;
}

static TC_UNUSED void tc_init(int *argc, char ***argv, int *rank, int *size)
{
    CHECK_RC(MPI_Init(argc, argv));
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank_));
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &tc_size_));
    *rank = tc_rank_;
    *size = tc_size_;
}

/* Barrier (so that rank 0 only reports once everybody got here), one summary
 * line from rank 0, MPI_Finalize.  Returns the exit status for main(). */
static TC_UNUSED int tc_finish(const char *name)
{
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (tc_rank_ == 0) {
        printf("%s: OK (%d rank%s)\n", name, tc_size_, tc_size_ == 1 ? "" : "s");
        fflush(stdout);
    }
    CHECK_RC(MPI_Finalize());
    return 0;
}

/* Known deviations of the peer MPIs used to validate this suite (not Ferry).
 * Decided at run time from MPI_Get_library_version, so a binary compiled
 * against MPICH's mpi.h but running on Ferry (the ABI tests) is still held to
 * the standard.  Returns the MPICH version as major*100+minor, 0 otherwise. */
static TC_UNUSED int tc_mpich_version(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, maj = 0, min = 0;
    if (MPI_Get_library_version(v, &len) != MPI_SUCCESS)
        return 0;
    if (strncmp(v, "MPICH Version:", 14) != 0)
        return 0;
    if (sscanf(v + 14, " %d.%d", &maj, &min) != 2)
        return 0;
    return maj * 100 + min;
}

static TC_UNUSED int tc_is_open_mpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(v, &len) != MPI_SUCCESS)
        return 0;
    return strncmp(v, "Open MPI", 8) == 0;
}

/* status helpers */
static TC_UNUSED int tc_count(const MPI_Status *st, MPI_Datatype t)
{
    int c = -12345;
    CHECK_RC(MPI_Get_count(st, t, &c));
    return c;
}

#endif
