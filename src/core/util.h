/* Small utilities shared by every layer: checked allocation, fatal errors,
 * verbose logging and intrusive FIFO queues. */
#ifndef FERRY_UTIL_H
#define FERRY_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define FERRY_CACHELINE 64
#define FERRY_LIKELY(x)   __builtin_expect(!!(x), 1)
#define FERRY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FERRY_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FERRY_MAX(a, b) ((a) > (b) ? (a) : (b))

void *ferry_xmalloc(size_t n);
void *ferry_xcalloc(size_t n, size_t sz);
void *ferry_xrealloc(void *p, size_t n);
char *ferry_xstrdup(const char *s);

/* Print "ferry: rank R: <message>" and abort the whole job. For internal
 * failures that have no MPI error class (out of memory, broken shared memory). */
void ferry_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Log at FERRY_VERBOSE >= level to stderr, prefixed with the rank. */
void ferry_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern int ferry_verbose;

/* Ask for a line in exclusive state, to write it soon. Without -mprfchw the
 * compiler turns __builtin_prefetch(p, 1) into a plain read prefetch, which
 * leaves another core's copy valid and the store's ownership request for
 * later; x86 processors without PREFETCHW execute the instruction as a NOP. */
static inline void ferry_prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1);
#endif
}

/* The same for every line of [p, p + len), up to `max` bytes: shared memory
 * about to be written that another core read last, whose ownership requests
 * would otherwise wait one after another in the store buffer. */
static inline void ferry_prefetch_range_for_write(const void *p, size_t len, size_t max)
{
    const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)(FERRY_CACHELINE - 1));
    const char *end = (const char *)p + FERRY_MIN(len, max);
    for (; c < end; c += FERRY_CACHELINE)
        ferry_prefetch_for_write(c);
}

/* Seconds on the monotonic clock (MPI_Wtime, and the protocol's own timing). */
static inline double ferry_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* FNV-1a of a NUL-terminated string, started from `seed` mixed into the
 * offset basis (to tell apart hashes of the same string for different uses). */
static inline uint32_t ferry_hash_str(const char *str, uint32_t seed)
{
    uint32_t h = 2166136261u ^ seed;
    for (const char *p = str; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

#endif
