/* ferry-machine-limits: what this machine can do at best, without MPI, so that
 * MPI numbers can be read as a fraction of it.
 *
 *   cacheline_lat  one-way latency of a cache-line ping-pong between two
 *                  processes pinned to two different cores (shared anonymous
 *                  mmap + fork, C11 atomics); the floor of any intra-node
 *                  small-message latency.                                  [us]
 *   memcpy_bw      memcpy bandwidth per size, same buffers every time
 *                  (hot, like the MPI benchmarks' reused buffers).       [MB/s]
 *   cma_bw         process_vm_readv bandwidth per size: a forked child on
 *                  the other core reads the parent's buffer (the single-copy
 *                  path MPI libraries use for large messages); "n/a" when the
 *                  kernel refuses (EPERM under ptrace restrictions, ENOSYS). [MB/s]
 *   yield_switch   one hand-over of a CPU between two processes pinned to it,
 *                  each spinning on a shared flag with sched_yield between
 *                  looks: what a rank waiting for a rank on its own CPU pays
 *                  at least once per exchange when ranks outnumber CPUs (the
 *                  floor of an oversubscribed barrier: one hand-over per
 *                  extra rank on a CPU).                                   [us]
 *
 * Output: a human table on stdout, and with --csv FILE rows of
 * library,test,size,value,unit with library = "machine" (1 MB = 1e6 B).
 * Each value is the best of --reps repetitions (--median: their median). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* spin-wait hint: on x86 `pause` keeps the spinning core from flooding the
 * line with loads and avoids the pipeline flush on exit from the loop; it
 * roughly halves the measured one-way latency against a bare spin */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() ((void)0)
#endif

#define MAX_SIZES 64
#define MAX_REPS 101

static size_t min_size = 1, max_size = (size_t)16 << 20;
static unsigned factor = 2;
static int reps = 5;
static double scale = 1.0;
static int core_a = -1, core_b = -1;
static FILE *csv;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The statistic over repetitions: by default the best one (a limit is what
 * the machine can do, and on a shared machine the best repetition is the one
 * least disturbed); --median for the median. */
static int use_median = 0;

static double summarize(double *v, int n, int lower_is_better)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    if (use_median) return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return lower_is_better ? v[0] : v[n - 1];
}

static void emit(const char *test, size_t size, double value, const char *unit, int valid)
{
    if (valid)
        printf("  %-14s %12zu %14.3f %s\n", test, size, value, unit);
    else
        printf("  %-14s %12zu %14s %s\n", test, size, "n/a", unit);
    fflush(stdout);
    if (csv) {
        if (valid)
            fprintf(csv, "machine,%s,%zu,%.6g,%s\n", test, size, value, unit);
        else
            fprintf(csv, "machine,%s,%zu,n/a,%s\n", test, size, unit);
        fflush(csv);
    }
}

static int pin(int cpu)
{
    if (cpu < 0) return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

/* the first two CPUs this process may run on, unless --cores said */
static void choose_cores(void)
{
    if (core_a >= 0 && core_b >= 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set)) continue;
        if (core_a < 0) core_a = c;
        else if (core_b < 0) { core_b = c; break; }
    }
}

static size_t next_size(size_t s)
{
    if (s == 0) return 1;
    if (s > max_size / factor) return 0;
    return s * factor;
}

static long iters_for_bytes(size_t size, double budget, long lo, long hi)
{
    double it = budget * scale / (double)(size ? size : 1);
    if (it < (double)lo) it = (double)lo;
    if (it > (double)hi) it = (double)hi;
    return (long)it;
}

/* ------------------------------------------------------------------------ */
/* cache-line ping-pong                                                      */

struct pingpong_shm {
    _Alignas(128) atomic_long flag;     /* the line that bounces */
    _Alignas(128) atomic_int go;
};

/* Two processes hand the flag back and forth, the parent on cpu_parent and
 * the child on cpu_child, each waiting for its turn with a pause
 * (yield = 0) or sched_yield (yield = 1); emits the time per hand-over. */
static void flag_pingpong(const char *test, size_t size, double budget, int cpu_parent, int cpu_child, int yield)
{
    const long iters = iters_for_bytes(1, budget, 1000, (long)budget);
    const long warm = iters / 10;
    struct pingpong_shm *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) {
        perror("mmap");
        emit(test, size, 0, "us", 0);
        return;
    }
    atomic_store(&s->flag, 0);
    atomic_store(&s->go, 0);
    const long total = (long)reps * (warm + iters);
    pin(cpu_parent);   /* before the fork: the child starts there too */
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        emit(test, size, 0, "us", 0);
        return;
    }
#define WAIT_UNTIL(cond) do { while (!(cond)) { if (yield) sched_yield(); else cpu_relax(); } } while (0)
    if (pid == 0) {
        pin(cpu_child);
        atomic_store(&s->go, 1);
        for (long i = 0; i < total; i++) {
            WAIT_UNTIL(atomic_load_explicit(&s->flag, memory_order_acquire) == 2 * i + 1);
            atomic_store_explicit(&s->flag, 2 * i + 2, memory_order_release);
        }
        _exit(0);
    }
    WAIT_UNTIL(atomic_load(&s->go));
    double v[MAX_REPS];
    long i = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = 0;
        for (long k = 0; k < warm + iters; k++, i++) {
            if (k == warm) t0 = now();
            atomic_store_explicit(&s->flag, 2 * i + 1, memory_order_release);
            WAIT_UNTIL(atomic_load_explicit(&s->flag, memory_order_acquire) == 2 * i + 2);
        }
        v[r] = (now() - t0) * 1e6 / (2.0 * (double)iters);
    }
#undef WAIT_UNTIL
    waitpid(pid, NULL, 0);
    munmap(s, sizeof *s);
    emit(test, size, summarize(v, reps, 1), "us", 1);
}

static void cacheline_latency(void)
{
    if (core_a < 0 || core_b < 0)
        fprintf(stderr, "machine-limits: fewer than two usable CPUs; ping-pong is not pinned\n");
    flag_pingpong("cacheline_lat", 64, 200000.0, core_a, core_b, 0);
}

/* ------------------------------------------------------------------------ */
/* CPU hand-over between two processes on one CPU                            */

/* Both on core_a: each look at the flag that finds the other's turn gives
 * the CPU away, so every hand-over is one context switch. */
static void yield_switch(void)
{
    flag_pingpong("yield_switch", 0, 50000.0, core_a, core_a, 1);
}

/* ------------------------------------------------------------------------ */
/* memcpy                                                                    */

/* through a volatile pointer so the compiler cannot drop or shorten copies */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

static void memcpy_bw(char *src, char *dst)
{
    for (size_t size = min_size; size; size = next_size(size)) {
        long iters = iters_for_bytes(size, 256.0 * (1 << 20), 8, 1000000);
        double v[MAX_REPS];
        for (int r = 0; r < reps; r++) {
            copy_fn(dst, src, size); /* warm */
            double t0 = now();
            for (long i = 0; i < iters; i++) copy_fn(dst, src, size);
            double t = now() - t0;
            v[r] = (double)size * (double)iters / t / 1e6;
        }
        emit("memcpy_bw", size, summarize(v, reps, 0), "MB/s", 1);
    }
}

/* ------------------------------------------------------------------------ */
/* process_vm_readv                                                          */

struct cma_shm {
    int err;                  /* errno of the first failure, 0 if none */
    int n;
    size_t size[MAX_SIZES];
    double mbps[MAX_SIZES];
};

static void cma_bw(char *parent_buf)
{
    struct cma_shm *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) {
        perror("mmap");
        return;
    }
    memset(s, 0, sizeof *s);
#ifdef PR_SET_PTRACER
    /* Yama ptrace_scope=1 only lets ancestors read a process: allow the child */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        s->err = errno;
    } else if (pid == 0) {
        pin(core_b);
        char *dst = NULL;
        if (posix_memalign((void **)&dst, 4096, max_size)) _exit(1);
        memset(dst, 1, max_size);
        for (size_t size = min_size; size && s->n < MAX_SIZES; size = next_size(size)) {
            long iters = iters_for_bytes(size, 256.0 * (1 << 20), 8, 20000);
            double v[MAX_REPS];
            for (int r = 0; r < reps; r++) {
                double t0 = 0;
                for (long i = -1; i < iters; i++) { /* i = -1: warm-up */
                    if (i == 0) t0 = now();
                    size_t done = 0;
                    while (done < size) {
                        struct iovec l = {dst + done, size - done};
                        struct iovec rm = {parent_buf + done, size - done};
                        ssize_t got = process_vm_readv(parent, &l, 1, &rm, 1, 0);
                        if (got <= 0) {
                            s->err = got < 0 ? errno : EIO;
                            _exit(0);
                        }
                        done += (size_t)got;
                    }
                }
                v[r] = (double)size * (double)iters / (now() - t0) / 1e6;
            }
            s->size[s->n] = size;
            s->mbps[s->n] = summarize(v, reps, 0);
            s->n++;
        }
        _exit(0);
    } else {
        int st;
        waitpid(pid, &st, 0);
    }
    if (s->err)
        fprintf(stderr, "machine-limits: process_vm_readv: %s; cma_bw reported as n/a\n",
                strerror(s->err));
    int k = 0;
    for (size_t size = min_size; size; size = next_size(size), k++) {
        int ok = !s->err && k < s->n && s->size[k] == size;
        emit("cma_bw", size, ok ? s->mbps[k] : 0.0, "MB/s", ok);
    }
    munmap(s, sizeof *s);
}

/* ------------------------------------------------------------------------ */

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) goto bad;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I') end++;
    if (*end == 'b' || *end == 'B') end++;
    if (*end) goto bad;
    return (size_t)v;
bad:
    fprintf(stderr, "machine-limits: bad size '%s'\n", s);
    exit(2);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ferry-machine-limits [TEST[,TEST...]|all] [options]\n"
            "tests: cacheline_lat, yield_switch, memcpy_bw, cma_bw (default all)\n"
            "  --min-size S   smallest size for the bandwidth tests (default 1; 0 is skipped)\n"
            "  --max-size S   largest size (default 16M); suffixes K, M, G\n"
            "  --factor F     size step multiplier (default 2)\n"
            "  --reps R       repetitions, the best reported (default 5)\n"
            "  --median       report the median of the repetitions instead of the best\n"
            "  --scale X      multiply the iteration counts by X\n"
            "  --cores A,B    the two CPUs for the two processes (default: first two allowed)\n"
            "  --csv FILE     write library,test,size,value,unit rows (library=machine)\n");
}

int main(int argc, char **argv)
{
    const char *which = "all";
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int has = v != NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (!strcmp(a, "--min-size") && has) { min_size = parse_size(v); i++; }
        else if (!strcmp(a, "--max-size") && has) { max_size = parse_size(v); i++; }
        else if (!strcmp(a, "--factor") && has) { factor = (unsigned)atoi(v); i++; }
        else if (!strcmp(a, "--reps") && has) { reps = atoi(v); i++; }
        else if (!strcmp(a, "--scale") && has) { scale = atof(v); i++; }
        else if (!strcmp(a, "--median")) use_median = 1;
        else if (!strcmp(a, "--csv") && has) { csv_path = v; i++; }
        else if (!strcmp(a, "--cores") && has) {
            if (sscanf(v, "%d,%d", &core_a, &core_b) != 2 || core_a == core_b) {
                fprintf(stderr, "machine-limits: --cores wants two different CPUs, e.g. 0,1\n");
                return 2;
            }
            i++;
        }
        else if (a[0] != '-') which = a;
        else { usage(stderr); return 2; }
    }
    if (min_size == 0) min_size = 1;
    if (factor < 2 || reps < 1 || reps > MAX_REPS || scale <= 0 || min_size > max_size) {
        fprintf(stderr, "machine-limits: bad --factor/--reps/--scale/--min-size\n");
        return 2;
    }
    int all = !strcmp(which, "all");
    int do_cl = all || strstr(which, "cacheline_lat");
    int do_mc = all || strstr(which, "memcpy_bw");
    int do_cma = all || strstr(which, "cma_bw");
    int do_ys = all || strstr(which, "yield_switch");
    if (!do_cl && !do_mc && !do_cma && !do_ys) { usage(stderr); return 2; }

    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) { perror(csv_path); return 2; }
        fprintf(csv, "library,test,size,value,unit\n");
    }
    choose_cores();
    printf("# library: machine (ferry-machine-limits, no MPI)\n");
    printf("# cores %d,%d reps=%d (%s reported) sizes=%zu..%zu x%u\n",
           core_a, core_b, reps, use_median ? "median" : "best", min_size, max_size, factor);
    printf("  %-14s %12s %14s %s\n", "test", "size", "value", "unit");

    if (do_cl) cacheline_latency();
    if (do_ys) yield_switch();

    if (do_mc || do_cma) {
        char *src = NULL, *dst = NULL;
        if (posix_memalign((void **)&src, 4096, max_size) ||
            posix_memalign((void **)&dst, 4096, max_size)) {
            fprintf(stderr, "machine-limits: out of memory\n");
            return 1;
        }
        memset(src, 'a', max_size);
        memset(dst, 'b', max_size);
        pin(core_a);
        if (do_mc) memcpy_bw(src, dst);
        if (do_cma) cma_bw(src);
        free(src);
        free(dst);
    }
    if (csv) fclose(csv);
    return 0;
}
