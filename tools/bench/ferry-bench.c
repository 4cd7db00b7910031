/* ferry-bench: point-to-point MPI micro-benchmarks in the style of the OSU
 * micro-benchmarks (written from scratch for Ferry).
 *
 * Portable MPI-3.1 C: the same file builds with Ferry's mpicc, Open MPI's and
 * MPICH's, so one binary per library gives comparable numbers.
 *
 *   mpiexec -n 2 ferry-bench latency            # one test
 *   mpiexec -n 2 ferry-bench latency,bw --csv r.csv
 *   mpiexec -n 2 ferry-bench all --max-size 1M --reps 3
 *   ferry-bench --help
 *
 * Every test is an entry of tests[] below: {name, run function, help, unit,
 * direction, rank requirements, iteration defaults}. The driver loops over
 * sizes and repetitions, takes the median and prints it; a run function only
 * times one repetition at one size. A collective (barrier, allreduce, ...) is
 * one more run function plus one more row of the table.
 *
 * MPI calls used (all the library under test has to provide): MPI_Init,
 * MPI_Finalize, MPI_Comm_rank, MPI_Comm_size, MPI_Get_library_version,
 * MPI_Wtime, MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv, MPI_Waitall,
 * MPI_Barrier, MPI_Abort. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_DATA 100
#define TAG_ACK 101
#define TAG_RESULT 102
#define LARGE_MSG ((size_t)64 * 1024)  /* above this, "large" iteration counts */
#define HUGE_MSG ((size_t)1024 * 1024) /* above this, iterations shrink with size */

/* ------------------------------------------------------------------------ */
/* options and context                                                       */

struct options {
    size_t min_size, max_size;
    unsigned factor;         /* size multiplier between steps (2 = powers of two) */
    long iters;              /* >0: iterations at small sizes, all tests */
    long iters_large;        /* >0: iterations at sizes > 64 KiB, all tests */
    long warmup;             /* >=0: warm-up iterations; <0: iters/10 */
    double scale;            /* multiplies the default iteration counts */
    int reps;                /* repetitions; the median is reported */
    int window;              /* messages in flight for bw/bibw/mr */
    const char *csv;         /* CSV output file or NULL */
    const char *label;       /* library column of the CSV; NULL: derived */
    int quiet;
};

struct bench_ctx {
    MPI_Comm comm;
    int rank, nranks;
    char *sbuf, *rbuf;       /* page-aligned, max_size bytes, touched */
    char ack[64];
    MPI_Request *reqs;       /* 2 * window */
    MPI_Status *stats;       /* 2 * window (a real array, as OSU does) */
    int window;
};

typedef double (*bench_run_fn)(struct bench_ctx *c, size_t size, long iters, long warmup);

struct bench_test {
    const char *name;
    bench_run_fn run;        /* one repetition; returns the value on rank 0 */
    const char *help;
    const char *unit;
    int lower_is_better;
    int min_ranks;
    size_t min_size;         /* smallest meaningful size (bandwidth: 1) */
    int sizeless;            /* 1: run once, size column is 0 (e.g. barrier) */
    long iters_small, iters_large; /* defaults (OSU-like) */
};

static struct options opt = {
    .min_size = 0,
    .max_size = (size_t)16 * 1024 * 1024,
    .factor = 2,
    .iters = 0,
    .iters_large = 0,
    .warmup = -1,
    .scale = 1.0,
    .reps = 5,
    .window = 64,
    .csv = NULL,
    .label = NULL,
    .quiet = 0,
};

static int g_rank = 0;

static void die(const char *fmt, const char *arg)
{
    if (g_rank == 0) {
        fprintf(stderr, "ferry-bench: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n");
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* ------------------------------------------------------------------------ */
/* helpers                                                                   */

/* Collect one double from each rank of `ranks` (a predicate) at rank 0. */
static int is_first_half(int r, int n) { return r < n / 2; }

static void gather_to_root(struct bench_ctx *c, double mine, int participates,
                           double *sum, double *max, int *count)
{
    /* point-to-point gather so that only basic calls are needed */
    if (c->rank == 0) {
        double s = participates ? mine : 0.0, m = participates ? mine : 0.0;
        int k = participates ? 1 : 0;
        for (int r = 1; r < c->nranks; r++) {
            double v[2];
            MPI_Recv(v, 2, MPI_DOUBLE, r, TAG_RESULT, c->comm, MPI_STATUS_IGNORE);
            if (v[0] != 0.0) {
                s += v[1];
                if (v[1] > m) m = v[1];
                k++;
            }
        }
        *sum = s;
        *max = m;
        *count = k;
    } else {
        double v[2] = {participates ? 1.0 : 0.0, mine};
        MPI_Send(v, 2, MPI_DOUBLE, 0, TAG_RESULT, c->comm);
    }
}

/* ------------------------------------------------------------------------ */
/* tests                                                                     */

/* Ping-pong between ranks a and b; returns elapsed seconds at rank a
 * (0 elsewhere). */
static double pingpong(struct bench_ctx *c, int a, int b, size_t size, long iters, long warmup)
{
    double t0 = 0.0;
    int cnt = (int)size;
    if (c->rank == a) {
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            MPI_Send(c->sbuf, cnt, MPI_CHAR, b, TAG_DATA, c->comm);
            MPI_Recv(c->rbuf, cnt, MPI_CHAR, b, TAG_DATA, c->comm, MPI_STATUS_IGNORE);
        }
        return MPI_Wtime() - t0;
    } else if (c->rank == b) {
        for (long i = 0; i < warmup + iters; i++) {
            MPI_Recv(c->rbuf, cnt, MPI_CHAR, a, TAG_DATA, c->comm, MPI_STATUS_IGNORE);
            MPI_Send(c->sbuf, cnt, MPI_CHAR, a, TAG_DATA, c->comm);
        }
    }
    return 0.0;
}

static double run_latency(struct bench_ctx *c, size_t size, long iters, long warmup)
{
    MPI_Barrier(c->comm);
    double t = pingpong(c, 0, 1, size, iters, warmup);
    return t * 1e6 / (2.0 * (double)iters);
}

/* Rank i of the first half pairs with i + n/2; average one-way latency. */
static double run_multi_lat(struct bench_ctx *c, size_t size, long iters, long warmup)
{
    int half = c->nranks / 2;
    int me = c->rank;
    double lat = 0.0;
    MPI_Barrier(c->comm);
    if (me < half) {
        lat = pingpong(c, me, me + half, size, iters, warmup) * 1e6 / (2.0 * (double)iters);
    } else if (me < 2 * half) {
        pingpong(c, me - half, me, size, iters, warmup);
    }
    double sum, max;
    int k;
    gather_to_root(c, lat, is_first_half(me, c->nranks), &sum, &max, &k);
    return c->rank == 0 && k > 0 ? sum / k : 0.0;
}

/* Windowed stream from `src` to `dst`: window Isends, then a 4-byte ack.
 * Returns elapsed seconds at src. */
static double stream(struct bench_ctx *c, int src, int dst, size_t size, long iters, long warmup)
{
    double t0 = 0.0;
    int cnt = (int)size, w = c->window;
    if (c->rank == src) {
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            for (int j = 0; j < w; j++)
                MPI_Isend(c->sbuf, cnt, MPI_CHAR, dst, TAG_DATA, c->comm, &c->reqs[j]);
            MPI_Waitall(w, c->reqs, c->stats);
            MPI_Recv(c->ack, 4, MPI_CHAR, dst, TAG_ACK, c->comm, MPI_STATUS_IGNORE);
        }
        return MPI_Wtime() - t0;
    } else if (c->rank == dst) {
        for (long i = 0; i < warmup + iters; i++) {
            for (int j = 0; j < w; j++)
                MPI_Irecv(c->rbuf, cnt, MPI_CHAR, src, TAG_DATA, c->comm, &c->reqs[j]);
            MPI_Waitall(w, c->reqs, c->stats);
            MPI_Send(c->ack, 4, MPI_CHAR, src, TAG_ACK, c->comm);
        }
    }
    return 0.0;
}

static double run_bw(struct bench_ctx *c, size_t size, long iters, long warmup)
{
    MPI_Barrier(c->comm);
    double t = stream(c, 0, 1, size, iters, warmup);
    if (c->rank != 0) return 0.0;
    return (double)size * (double)c->window * (double)iters / t / 1e6;
}

static double run_bibw(struct bench_ctx *c, size_t size, long iters, long warmup)
{
    int cnt = (int)size, w = c->window;
    double t0 = 0.0;
    MPI_Barrier(c->comm);
    if (c->rank <= 1) {
        int peer = 1 - c->rank;
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            for (int j = 0; j < w; j++)
                MPI_Irecv(c->rbuf, cnt, MPI_CHAR, peer, TAG_DATA, c->comm, &c->reqs[j]);
            for (int j = 0; j < w; j++)
                MPI_Isend(c->sbuf, cnt, MPI_CHAR, peer, TAG_DATA, c->comm, &c->reqs[w + j]);
            MPI_Waitall(2 * w, c->reqs, c->stats);
        }
    }
    if (c->rank != 0) return 0.0;
    double t = MPI_Wtime() - t0;
    return 2.0 * (double)size * (double)w * (double)iters / t / 1e6;
}

/* Message rate: ranks [0, n/2) stream to [n/2, n); aggregate messages/s. */
static double run_mr(struct bench_ctx *c, size_t size, long iters, long warmup)
{
    int half = c->nranks / 2, me = c->rank;
    double t = 0.0;
    MPI_Barrier(c->comm);
    if (me < half)
        t = stream(c, me, me + half, size, iters, warmup);
    else if (me < 2 * half)
        stream(c, me - half, me, size, iters, warmup);
    double sum, tmax;
    int k;
    gather_to_root(c, t, is_first_half(me, c->nranks), &sum, &tmax, &k);
    if (c->rank != 0 || tmax <= 0.0) return 0.0;
    return (double)k * (double)iters * (double)c->window / tmax;
}

static const struct bench_test tests[] = {
    {"latency", run_latency,
     "ping-pong ranks 0<->1 (MPI_Send/MPI_Recv); one-way latency = RTT/2",
     "us", 1, 2, 0, 0, 10000, 1000},
    {"bw", run_bw,
     "rank 0 -> 1: window of Isends, Waitall, 4-byte ack; bandwidth (1 MB = 1e6 B)",
     "MB/s", 0, 2, 1, 0, 100, 20},
    {"bibw", run_bibw,
     "ranks 0 <-> 1: both post a window of Irecv+Isend; both directions summed",
     "MB/s", 0, 2, 1, 0, 100, 20},
    {"mr", run_mr,
     "message rate: rank i streams windows to i+n/2 (n/2 pairs); aggregate msgs/s",
     "msg/s", 0, 2, 0, 0, 100, 20},
    {"multi_lat", run_multi_lat,
     "ping-pong of rank i with i+n/2 (n/2 pairs at once); mean one-way latency",
     "us", 1, 2, 0, 0, 10000, 1000},
    /* collectives go here, e.g.
     * {"barrier", run_barrier, "MPI_Barrier over all ranks", "us", 1, 2, 0, 1, 10000, 10000}, */
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

/* ------------------------------------------------------------------------ */
/* driver                                                                    */

static long iters_for(const struct bench_test *t, size_t size)
{
    long it;
    if (size <= LARGE_MSG) {
        it = opt.iters > 0 ? opt.iters : (long)((double)t->iters_small * opt.scale);
    } else {
        it = opt.iters_large > 0 ? opt.iters_large : (long)((double)t->iters_large * opt.scale);
        if (size > HUGE_MSG && opt.iters_large <= 0) {
            /* keep the bytes per repetition bounded for multi-MiB messages */
            long scaled = (long)((double)it * (double)HUGE_MSG / (double)size);
            long lo = it / 16 > 5 ? it / 16 : 5;
            it = scaled > lo ? scaled : lo;
        }
    }
    return it < 1 ? 1 : it;
}

static long warmup_for(long iters)
{
    if (opt.warmup >= 0) return opt.warmup;
    long w = iters / 10;
    return w < 2 ? 2 : w;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) die("bad size '%s'", s);
    switch (toupper((unsigned char)*end)) {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I') end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) die("bad size '%s' (use e.g. 4096, 64K, 16M)", s);
    if (v > (unsigned long long)0x7fffffff) die("size '%s' above INT_MAX", s);
    return (size_t)v;
}

static long parse_long(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end) die(what, s);
    return v;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec -n N ferry-bench TEST[,TEST...]|all [options]\n"
            "tests:\n");
    for (int i = 0; i < NTESTS; i++)
        fprintf(f, "  %-10s %s [%s, %s is better]\n", tests[i].name, tests[i].help,
                tests[i].unit, tests[i].lower_is_better ? "lower" : "higher");
    fprintf(f,
            "  all        every test above\n"
            "options:\n"
            "  --min-size S      smallest message (default 0); suffixes K, M, G\n"
            "  --max-size S      largest message (default 16M)\n"
            "  --factor F        size step multiplier (default 2: 0,1,2,4,...)\n"
            "  --iters N         iterations per repetition at sizes <= 64K (default per test:\n"
            "                    latency 10000, bw 100 windows)\n"
            "  --iters-large N   iterations at sizes > 64K (default latency 1000, bw 20,\n"
            "                    shrinking with size above 1M)\n"
            "  --warmup N        warm-up iterations (default iters/10, at least 2)\n"
            "  --scale X         multiply the default iteration counts by X (e.g. 0.2)\n"
            "  --reps R          repetitions, median reported (default 5)\n"
            "  --window W        messages in flight for bw, bibw, mr (default 64)\n"
            "  --csv FILE        write library,test,size,value,unit rows to FILE\n"
            "  --label NAME      library column of the CSV (default from\n"
            "                    MPI_Get_library_version: ferry, openmpi, mpich, ...)\n"
            "  --quiet           no human table on stdout\n");
}

static void derive_label(const char *ver, char *out, size_t len)
{
    if (strstr(ver, "Ferry") || strstr(ver, "ferry"))
        snprintf(out, len, "ferry");
    else if (strstr(ver, "Open MPI"))
        snprintf(out, len, "openmpi");
    else if (strstr(ver, "MPICH"))
        snprintf(out, len, "mpich");
    else if (strstr(ver, "MVAPICH"))
        snprintf(out, len, "mvapich");
    else {
        size_t i = 0;
        while (ver[i] && !isspace((unsigned char)ver[i]) && ver[i] != ',' && i + 1 < len) {
            out[i] = (char)tolower((unsigned char)ver[i]);
            i++;
        }
        out[i] = 0;
        if (!i) snprintf(out, len, "unknown");
    }
}

static void fmt_value(char *buf, size_t len, double v)
{
    if (v >= 1e5)
        snprintf(buf, len, "%.0f", v);
    else if (v >= 100)
        snprintf(buf, len, "%.1f", v);
    else
        snprintf(buf, len, "%.3f", v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct bench_ctx c;
    memset(&c, 0, sizeof c);
    c.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(c.comm, &c.rank);
    MPI_Comm_size(c.comm, &c.nranks);
    g_rank = c.rank;

    /* ---- arguments (every rank parses the same argv) ---- */
    const char *testlist = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG() do { if (!v) die("option %s needs a value", a); i++; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (c.rank == 0) usage(stdout);
            MPI_Finalize();
            return 0;
        } else if (!strcmp(a, "--min-size")) { NEED_ARG(); opt.min_size = parse_size(v);
        } else if (!strcmp(a, "--max-size")) { NEED_ARG(); opt.max_size = parse_size(v);
        } else if (!strcmp(a, "--factor")) { NEED_ARG(); opt.factor = (unsigned)parse_long(v, "bad --factor '%s'");
        } else if (!strcmp(a, "--iters")) { NEED_ARG(); opt.iters = parse_long(v, "bad --iters '%s'");
        } else if (!strcmp(a, "--iters-large")) { NEED_ARG(); opt.iters_large = parse_long(v, "bad --iters-large '%s'");
        } else if (!strcmp(a, "--warmup")) { NEED_ARG(); opt.warmup = parse_long(v, "bad --warmup '%s'");
        } else if (!strcmp(a, "--scale")) { NEED_ARG(); opt.scale = atof(v);
        } else if (!strcmp(a, "--reps")) { NEED_ARG(); opt.reps = (int)parse_long(v, "bad --reps '%s'");
        } else if (!strcmp(a, "--window")) { NEED_ARG(); opt.window = (int)parse_long(v, "bad --window '%s'");
        } else if (!strcmp(a, "--csv")) { NEED_ARG(); opt.csv = v;
        } else if (!strcmp(a, "--label")) { NEED_ARG(); opt.label = v;
        } else if (!strcmp(a, "--quiet")) { opt.quiet = 1;
        } else if (a[0] == '-') { die("unknown option '%s' (try --help)", a);
        } else if (!testlist) { testlist = a;
        } else { die("unexpected argument '%s'", a);
        }
#undef NEED_ARG
    }
    if (!testlist) {
        if (c.rank == 0) usage(stderr);
        MPI_Finalize();
        return 2;
    }
    if (opt.factor < 2) die("--factor must be >= 2%s", "");
    if (opt.reps < 1) die("--reps must be >= 1%s", "");
    if (opt.window < 1) die("--window must be >= 1%s", "");
    if (opt.scale <= 0.0) die("--scale must be > 0%s", "");
    if (opt.min_size > opt.max_size) die("--min-size above --max-size%s", "");

    /* which tests */
    int selected[NTESTS] = {0};
    {
        char *list = strdup(testlist), *save = NULL;
        for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int found = 0;
            for (int i = 0; i < NTESTS; i++)
                if (!strcmp(tok, "all") || !strcmp(tok, tests[i].name)) selected[i] = found = 1;
            if (!found) die("unknown test '%s' (try --help)", tok);
        }
        free(list);
    }

    /* ---- library identity ---- */
    char ver[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int verlen = 0;
    MPI_Get_library_version(ver, &verlen);
    ver[verlen < 0 ? 0 : (verlen > MPI_MAX_LIBRARY_VERSION_STRING ? MPI_MAX_LIBRARY_VERSION_STRING : verlen)] = 0;
    ver[strcspn(ver, "\r\n")] = 0;
    for (char *p = ver + strlen(ver); p > ver && isspace((unsigned char)p[-1]); ) *--p = 0;
    char label[64];
    if (opt.label)
        snprintf(label, sizeof label, "%s", opt.label);
    else
        derive_label(ver, label, sizeof label);

    /* ---- buffers: page aligned, touched, reused every iteration ---- */
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) page = 4096;
    size_t blen = opt.max_size < 64 ? 64 : opt.max_size;
    blen = (blen + (size_t)page - 1) / (size_t)page * (size_t)page;
    void *sb = NULL, *rb = NULL;
    if (posix_memalign(&sb, (size_t)page, blen) || posix_memalign(&rb, (size_t)page, blen))
        die("cannot allocate %s bytes of buffers", "2 x max-size");
    c.sbuf = sb;
    c.rbuf = rb;
    memset(c.sbuf, 'a', blen);
    memset(c.rbuf, 'b', blen);
    memset(c.ack, 0, sizeof c.ack);
    c.window = opt.window;
    c.reqs = malloc(2 * (size_t)opt.window * sizeof *c.reqs);
    c.stats = malloc(2 * (size_t)opt.window * sizeof *c.stats);
    if (!c.reqs || !c.stats) die("cannot allocate %s", "requests");

    FILE *csv = NULL;
    if (c.rank == 0 && opt.csv) {
        csv = fopen(opt.csv, "w");
        if (!csv) {
            fprintf(stderr, "ferry-bench: cannot open %s: %s\n", opt.csv, strerror(errno));
            MPI_Abort(c.comm, 2);
        }
        fprintf(csv, "library,test,size,value,unit\n");
        fflush(csv);
    }

    if (c.rank == 0 && !opt.quiet) {
        printf("# library: %s\n", ver);
        printf("# ferry-bench: ranks=%d reps=%d (median reported) window=%d sizes=%zu..%zu x%u label=%s\n",
               c.nranks, opt.reps, opt.window, opt.min_size, opt.max_size, opt.factor, label);
        fflush(stdout);
    }

    double *vals = malloc((size_t)opt.reps * sizeof *vals);
    for (int ti = 0; ti < NTESTS; ti++) {
        if (!selected[ti]) continue;
        const struct bench_test *t = &tests[ti];
        if (c.nranks < t->min_ranks) {
            if (c.rank == 0)
                fprintf(stderr, "ferry-bench: %s needs at least %d ranks, skipped\n", t->name, t->min_ranks);
            continue;
        }
        if (c.rank == 0 && !opt.quiet) {
            printf("\n# test: %s -- %s\n", t->name, t->help);
            printf("# %12s %14s %14s %14s %10s\n", "size", t->unit, "min", "max", "iters");
            fflush(stdout);
        }
        size_t size = opt.min_size < t->min_size ? t->min_size : opt.min_size;
        if (t->sizeless) size = 0;
        while (size <= opt.max_size) {
            long it = iters_for(t, size), wu = warmup_for(it);
            for (int r = 0; r < opt.reps; r++) vals[r] = t->run(&c, size, it, wu);
            if (c.rank == 0) {
                double lo = vals[0], hi = vals[0];
                for (int r = 1; r < opt.reps; r++) {
                    if (vals[r] < lo) lo = vals[r];
                    if (vals[r] > hi) hi = vals[r];
                }
                double med = median(vals, opt.reps);
                if (!opt.quiet) {
                    char a[32], b[32], d[32];
                    fmt_value(a, sizeof a, med);
                    fmt_value(b, sizeof b, lo);
                    fmt_value(d, sizeof d, hi);
                    printf("  %12zu %14s %14s %14s %10ld\n", size, a, b, d, it);
                    fflush(stdout);
                }
                if (csv) {
                    fprintf(csv, "%s,%s,%zu,%.*f,%s\n", label, t->name, size,
                            t->lower_is_better ? 4 : 2, med, t->unit);
                    fflush(csv);
                }
            }
            if (t->sizeless) break;
            if (size == 0)
                size = 1;
            else if (size > opt.max_size / opt.factor)
                break;
            else
                size *= opt.factor;
        }
    }
    MPI_Barrier(c.comm);
    if (csv) fclose(csv);
    free(vals);
    free(c.reqs);
    free(c.stats);
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
