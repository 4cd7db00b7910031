/* ferry-bench: point-to-point and collective MPI micro-benchmarks in the
 * style of the OSU micro-benchmarks (written from scratch for Ferry).
 *
 * Portable MPI-3.1 C: the same file builds with Ferry's mpicc, Open MPI's and
 * MPICH's, so one binary per library gives comparable numbers.
 *
 *   mpiexec -n 2 ferry-bench latency            # one test
 *   mpiexec -n 2 ferry-bench latency,bw --csv r.csv
 *   mpiexec -n 2 ferry-bench all --max-size 1M --reps 3
 *   mpiexec -n 4 ferry-bench coll --coll-max-size 64K --time-limit 20
 *   ferry-bench --help
 *
 * Every test is an entry of tests[] below: {name, run function, help, unit,
 * direction, rank requirements, iteration defaults, kind}. The driver loops
 * over sizes and repetitions, takes the median and prints it; a run function
 * only times one repetition at one size.
 *
 * Collectives (OSU style): per call, t = Wtime around the collective alone,
 * an untimed MPI_Barrier between iterations (none for barrier itself); the
 * per-rank average per call, MPI_Reduce(MAX) over ranks to rank 0, median
 * over repetitions. Nonblocking forms also measure overlap: t_pure (start +
 * wait), then "start; compute for t_pure with MPI_Test every --test-interval
 * us; wait" whose time is t_overall; t_compute counts the compute only (not
 * the MPI_Test calls); overlap = max(0, 1 - (t_overall - t_compute) / t_pure).
 * Sizes of collectives are bytes per rank (reductions: MPI_FLOAT, MPI_SUM,
 * size / 4 elements; the others MPI_CHAR). --time-limit caps the iterations
 * of a collective so that one repetition at one size takes about that long
 * (oversubscribed runs of slow libraries stay bounded).
 *
 * MPI calls used (all the library under test has to provide): MPI_Init,
 * MPI_Finalize, MPI_Comm_rank, MPI_Comm_size, MPI_Get_library_version,
 * MPI_Wtime, MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv, MPI_Waitall,
 * MPI_Barrier, MPI_Abort; for the collective tests also MPI_Bcast,
 * MPI_Reduce, MPI_Allreduce, MPI_Gather, MPI_Scatter, MPI_Allgather,
 * MPI_Alltoall, MPI_Ibarrier, MPI_Ibcast, MPI_Iallreduce, MPI_Iallgather,
 * MPI_Ialltoall, MPI_Test, MPI_Wait. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_DATA 100
#define TAG_ACK 101
#define TAG_RESULT 102
#define LARGE_MSG ((size_t)64 * 1024)  /* above this, "large" iteration counts */
#define HUGE_MSG ((size_t)1024 * 1024) /* above this, iterations shrink with size */
#define COLL_LARGE_MSG ((size_t)8 * 1024) /* collectives: "large" above this (OSU) */

/* ------------------------------------------------------------------------ */
/* options and context                                                       */

struct options {
    size_t min_size, max_size;
    size_t coll_min_size, coll_max_size; /* sizes of collectives (bytes per rank) */
    int coll_min_set, coll_max_set;      /* given explicitly (else --min/max-size or 4..1M) */
    int min_set, max_set;
    unsigned factor;         /* size multiplier between steps (2 = powers of two) */
    long iters;              /* >0: iterations at small sizes, all tests */
    long iters_large;        /* >0: iterations at sizes > 64 KiB, all tests */
    long warmup;             /* >=0: warm-up iterations; <0: iters/10 */
    double scale;            /* multiplies the default iteration counts */
    int reps;                /* repetitions; the median is reported */
    int window;              /* messages in flight for bw/bibw/mr */
    double time_limit;       /* >0: collectives: ms per repetition per size (caps iters) */
    long min_iters;          /* floor of the iterations --time-limit leaves */
    double test_interval;    /* nonblocking overlap: us of compute between MPI_Test */
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
    char *csbuf, *crbuf;     /* collectives: coll_max_size * nranks each, or NULL */
    long used_iters;         /* iterations the last repetition timed */
    struct {                 /* --time-limit: the plan of the last (test, size) */
        int valid, op, nb;
        size_t size;
        long iters_in, iters, warmup;
    } plan;
    double extra[2];         /* nonblocking tests, rank 0: t_pure (us), overlap (%) */
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
    int kind;                /* KIND_P2P, KIND_COLL, KIND_NBC (nonblocking + overlap) */
};
enum { KIND_P2P, KIND_COLL, KIND_NBC };

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
    .coll_min_size = 4,
    .coll_max_size = (size_t)1024 * 1024,
    .time_limit = 0.0,
    .min_iters = 10,
    .test_interval = 5.0,
    .csv = NULL,
    .label = NULL,
    .quiet = 0,
};

static int g_rank = 0;
static volatile float g_sink; /* keeps the compute loop of the overlap tests */

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

/* ------------------------------------------------------------------------ */
/* collectives                                                               */

enum coll_op { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_SCATTER, C_ALLGATHER,
               C_ALLTOALL };

/* One call of collective `op` with `size` bytes per rank, root 0; with
 * req != NULL its nonblocking form is started instead. csbuf and crbuf hold
 * size * nranks bytes. Reductions: size / 4 MPI_FLOATs, MPI_SUM (as OSU). */
static void coll_call(struct bench_ctx *c, int op, size_t size, MPI_Request *req)
{
    int n = (int)size, nf = (int)(size / sizeof(float));
    char *s = c->csbuf, *r = c->crbuf;
    MPI_Comm comm = c->comm;
    switch (op) {
    case C_BARRIER:
        if (req) MPI_Ibarrier(comm, req);
        else MPI_Barrier(comm);
        break;
    case C_BCAST:
        if (req) MPI_Ibcast(s, n, MPI_CHAR, 0, comm, req);
        else MPI_Bcast(s, n, MPI_CHAR, 0, comm);
        break;
    case C_REDUCE:
        if (req) MPI_Ireduce(s, r, nf, MPI_FLOAT, MPI_SUM, 0, comm, req);
        else MPI_Reduce(s, r, nf, MPI_FLOAT, MPI_SUM, 0, comm);
        break;
    case C_ALLREDUCE:
        if (req) MPI_Iallreduce(s, r, nf, MPI_FLOAT, MPI_SUM, comm, req);
        else MPI_Allreduce(s, r, nf, MPI_FLOAT, MPI_SUM, comm);
        break;
    case C_GATHER:
        if (req) MPI_Igather(s, n, MPI_CHAR, r, n, MPI_CHAR, 0, comm, req);
        else MPI_Gather(s, n, MPI_CHAR, r, n, MPI_CHAR, 0, comm);
        break;
    case C_SCATTER:
        if (req) MPI_Iscatter(s, n, MPI_CHAR, r, n, MPI_CHAR, 0, comm, req);
        else MPI_Scatter(s, n, MPI_CHAR, r, n, MPI_CHAR, 0, comm);
        break;
    case C_ALLGATHER:
        if (req) MPI_Iallgather(s, n, MPI_CHAR, r, n, MPI_CHAR, comm, req);
        else MPI_Allgather(s, n, MPI_CHAR, r, n, MPI_CHAR, comm);
        break;
    case C_ALLTOALL:
        if (req) MPI_Ialltoall(s, n, MPI_CHAR, r, n, MPI_CHAR, comm, req);
        else MPI_Alltoall(s, n, MPI_CHAR, r, n, MPI_CHAR, comm);
        break;
    }
}

/* One untimed iteration as the timed loops do it: the call (started and
 * waited for when nb), then the barrier between iterations (not after a
 * barrier). */
static void coll_iter(struct bench_ctx *c, int op, size_t size, int nb)
{
    if (nb) {
        MPI_Request q;
        coll_call(c, op, size, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
        coll_call(c, op, size, NULL);
    }
    if (op != C_BARRIER) MPI_Barrier(c->comm);
}

/* Warm-up. With --time-limit, the first repetition at a size also measures
 * what one iteration costs (the fastest of 3 on each rank, max over ranks, so
 * every rank takes the same decision) and *iters shrinks so that a repetition takes about the limit;
 * `cost` is how many plain iterations one timed iteration is worth. The
 * further repetitions at that size reuse the plan (and warm up less). */
static void coll_warmup(struct bench_ctx *c, int op, size_t size, int nb, double cost, long *iters,
                        long warmup)
{
    MPI_Barrier(c->comm);
    if (opt.time_limit <= 0.0) {
        for (long i = 0; i < warmup; i++) coll_iter(c, op, size, nb);
        return;
    }
    if (c->plan.valid && c->plan.op == op && c->plan.nb == nb && c->plan.size == size &&
        c->plan.iters_in == *iters) {
        *iters = c->plan.iters;
        long w = c->plan.warmup > 1 ? c->plan.warmup : 1;
        for (long i = 0; i < w; i++) coll_iter(c, op, size, nb);
        return;
    }
    long iters_in = *iters;
    coll_iter(c, op, size, nb); /* first touch, connections, segments */
    double e = 0.0, emax = 0.0;
    for (int k = 0; k < 3; k++) { /* the fastest of 3: a preemption does not count */
        double t0 = MPI_Wtime();
        coll_iter(c, op, size, nb);
        double t = MPI_Wtime() - t0;
        if (k == 0 || t < e) e = t;
    }
    MPI_Allreduce(&e, &emax, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    long rest = warmup - 4;
    if (emax > 0.0) {
        double budget = opt.time_limit * 1e-3;
        double fit = 0.25 * budget / emax, n = budget / (emax * cost);
        if ((double)rest > fit) rest = (long)fit;
        if ((double)*iters > n) {
            long floor_ = opt.min_iters < *iters ? opt.min_iters : *iters;
            *iters = (long)n > floor_ ? (long)n : floor_;
        }
    }
    for (long i = 0; i < rest; i++) coll_iter(c, op, size, nb);
    c->plan.valid = 1;
    c->plan.op = op;
    c->plan.nb = nb;
    c->plan.size = size;
    c->plan.iters_in = iters_in;
    c->plan.iters = *iters;
    c->plan.warmup = rest;
}

/* Blocking collective: average time per call on each rank, max over ranks. */
static double coll_blocking(struct bench_ctx *c, int op, size_t size, long iters, long warmup)
{
    coll_warmup(c, op, size, 0, 1.0, &iters, warmup);
    double timer = 0.0;
    for (long i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        coll_call(c, op, size, NULL);
        timer += MPI_Wtime() - t0;
        if (op != C_BARRIER) MPI_Barrier(c->comm); /* untimed, as OSU */
    }
    c->used_iters = iters;
    double mine = timer * 1e6 / (double)iters, max = 0.0;
    MPI_Reduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    return max;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Compute for `target` seconds in steps of --test-interval, calling MPI_Test
 * on *req after each step until it completes. Returns the time spent
 * computing (the MPI_Test calls not included). */
static double compute_and_test(double target, MPI_Request *req)
{
    double comp = 0.0, step = opt.test_interval * 1e-6;
    float acc = 1.0f;
    int done = 0;
    while (comp < target) {
        double left = target - comp, want = left < step ? left : step, t1 = now_s(), t2;
        do {
            for (int k = 0; k < 16; k++) acc = acc * 0.999f + 1.0f;
            t2 = now_s();
        } while (t2 - t1 < want);
        comp += t2 - t1;
        if (!done) MPI_Test(req, &done, MPI_STATUS_IGNORE);
    }
    g_sink = acc;
    return comp;
}

/* Nonblocking collective with overlap (OSU style). Returns t_overall (us,
 * max over ranks); rank 0 also gets extra[0] = t_pure (us, max over ranks)
 * and extra[1] = overlap (%). */
static double coll_nonblocking(struct bench_ctx *c, int op, size_t size, long iters, long warmup)
{
    MPI_Request q;
    coll_warmup(c, op, size, 1, 3.0, &iters, warmup);
    double timer = 0.0;
    for (long i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        coll_call(c, op, size, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        timer += MPI_Wtime() - t0;
        if (op != C_BARRIER) MPI_Barrier(c->comm);
    }
    double pure = timer / (double)iters, tp = 0.0;
    MPI_Allreduce(&pure, &tp, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    double tall = 0.0, tcomp = 0.0;
    for (long i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        coll_call(c, op, size, &q);
        tcomp += compute_and_test(tp, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        tall += MPI_Wtime() - t0;
        if (op != C_BARRIER) MPI_Barrier(c->comm);
    }
    c->used_iters = iters;
    double v[2] = {tall / (double)iters, tcomp / (double)iters}, m[2] = {0.0, 0.0};
    MPI_Reduce(v, m, 2, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    if (c->rank == 0) {
        double ov = tp > 0.0 ? 1.0 - (m[0] - m[1]) / tp : 0.0;
        c->extra[0] = tp * 1e6;
        c->extra[1] = (ov < 0.0 ? 0.0 : ov > 1.0 ? 1.0 : ov) * 100.0;
    }
    return m[0] * 1e6;
}

#define COLL_RUN(name, fn, op)                                                           \
    static double run_##name(struct bench_ctx *c, size_t size, long iters, long warmup) \
    {                                                                                    \
        return fn(c, op, size, iters, warmup);                                           \
    }
COLL_RUN(barrier, coll_blocking, C_BARRIER)
COLL_RUN(bcast, coll_blocking, C_BCAST)
COLL_RUN(reduce, coll_blocking, C_REDUCE)
COLL_RUN(allreduce, coll_blocking, C_ALLREDUCE)
COLL_RUN(gather, coll_blocking, C_GATHER)
COLL_RUN(scatter, coll_blocking, C_SCATTER)
COLL_RUN(allgather, coll_blocking, C_ALLGATHER)
COLL_RUN(alltoall, coll_blocking, C_ALLTOALL)
COLL_RUN(ibarrier, coll_nonblocking, C_BARRIER)
COLL_RUN(ibcast, coll_nonblocking, C_BCAST)
COLL_RUN(iallreduce, coll_nonblocking, C_ALLREDUCE)
COLL_RUN(iallgather, coll_nonblocking, C_ALLGATHER)
COLL_RUN(ialltoall, coll_nonblocking, C_ALLTOALL)

static const struct bench_test tests[] = {
    {"latency", run_latency,
     "ping-pong ranks 0<->1 (MPI_Send/MPI_Recv); one-way latency = RTT/2",
     "us", 1, 2, 0, 0, 10000, 1000, KIND_P2P},
    {"bw", run_bw,
     "rank 0 -> 1: window of Isends, Waitall, 4-byte ack; bandwidth (1 MB = 1e6 B)",
     "MB/s", 0, 2, 1, 0, 100, 20, KIND_P2P},
    {"bibw", run_bibw,
     "ranks 0 <-> 1: both post a window of Irecv+Isend; both directions summed",
     "MB/s", 0, 2, 1, 0, 100, 20, KIND_P2P},
    {"mr", run_mr,
     "message rate: rank i streams windows to i+n/2 (n/2 pairs); aggregate msgs/s",
     "msg/s", 0, 2, 0, 0, 100, 20, KIND_P2P},
    {"multi_lat", run_multi_lat,
     "ping-pong of rank i with i+n/2 (n/2 pairs at once); mean one-way latency",
     "us", 1, 2, 0, 0, 10000, 1000, KIND_P2P},
    /* collectives: sizes are bytes per rank; time per call, max over ranks */
    {"barrier", run_barrier, "MPI_Barrier, all ranks", "us", 1, 1, 0, 1, 1000, 1000, KIND_COLL},
    {"bcast", run_bcast, "MPI_Bcast from rank 0", "us", 1, 1, 0, 0, 1000, 100, KIND_COLL},
    {"reduce", run_reduce, "MPI_Reduce to rank 0, MPI_FLOAT MPI_SUM", "us", 1, 1, 4, 0, 1000, 100,
     KIND_COLL},
    {"allreduce", run_allreduce, "MPI_Allreduce, MPI_FLOAT MPI_SUM", "us", 1, 1, 4, 0, 1000, 100,
     KIND_COLL},
    {"gather", run_gather, "MPI_Gather to rank 0, size bytes from each rank", "us", 1, 1, 0, 0,
     1000, 100, KIND_COLL},
    {"scatter", run_scatter, "MPI_Scatter from rank 0, size bytes to each rank", "us", 1, 1, 0, 0,
     1000, 100, KIND_COLL},
    {"allgather", run_allgather, "MPI_Allgather, size bytes from each rank", "us", 1, 1, 0, 0,
     1000, 100, KIND_COLL},
    {"alltoall", run_alltoall, "MPI_Alltoall, size bytes to each rank", "us", 1, 1, 0, 0, 1000,
     100, KIND_COLL},
    /* nonblocking: overall time of start + compute(t_pure) + wait; also t_pure, overlap % */
    {"ibarrier", run_ibarrier, "MPI_Ibarrier + compute + MPI_Wait; overlap", "us", 1, 1, 0, 1,
     1000, 1000, KIND_NBC},
    {"ibcast", run_ibcast, "MPI_Ibcast from rank 0 + compute + MPI_Wait; overlap", "us", 1, 1, 0,
     0, 1000, 100, KIND_NBC},
    {"iallreduce", run_iallreduce, "MPI_Iallreduce (FLOAT SUM) + compute + MPI_Wait; overlap",
     "us", 1, 1, 4, 0, 1000, 100, KIND_NBC},
    {"iallgather", run_iallgather, "MPI_Iallgather + compute + MPI_Wait; overlap", "us", 1, 1, 0,
     0, 1000, 100, KIND_NBC},
    {"ialltoall", run_ialltoall, "MPI_Ialltoall + compute + MPI_Wait; overlap", "us", 1, 1, 0, 0,
     1000, 100, KIND_NBC},
};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

/* ------------------------------------------------------------------------ */
/* driver                                                                    */

static long iters_for(const struct bench_test *t, size_t size)
{
    long it;
    if (size <= (t->kind == KIND_P2P ? LARGE_MSG : COLL_LARGE_MSG)) {
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
            "usage: mpiexec -n N ferry-bench TEST[,TEST...]|p2p|coll|all [options]\n"
            "tests:\n");
    for (int i = 0; i < NTESTS; i++)
        fprintf(f, "  %-10s %s [%s, %s is better]\n", tests[i].name, tests[i].help,
                tests[i].unit, tests[i].lower_is_better ? "lower" : "higher");
    fprintf(f,
            "  p2p        the point-to-point tests (latency ... multi_lat)\n"
            "  coll       the collective tests (barrier ... ialltoall)\n"
            "  all        every test above\n"
            "collectives: sizes are bytes per rank, root 0; the average time per call on each\n"
            "rank, max over ranks (untimed MPI_Barrier between iterations, as OSU). The\n"
            "nonblocking ones report t_overall of start + compute(t_pure) + wait, and in extra\n"
            "columns (CSV tests NAME_pure, NAME_overlap) t_pure of start + wait and\n"
            "overlap = max(0, 1 - (t_overall - t_compute) / t_pure) in %%.\n"
            "options:\n"
            "  --min-size S      smallest message (default 0); suffixes K, M, G\n"
            "  --max-size S      largest message (default 16M)\n"
            "  --coll-min-size S collectives' smallest size per rank (default --min-size if\n"
            "                    given, else 4)\n"
            "  --coll-max-size S collectives' largest size per rank (default --max-size if\n"
            "                    given, else 1M)\n"
            "  --factor F        size step multiplier (default 2: 0,1,2,4,...)\n"
            "  --iters N         iterations per repetition at small sizes (default per test:\n"
            "                    latency 10000, bw 100 windows, collectives 1000)\n"
            "  --iters-large N   iterations above 64K (collectives: above 8K) (default\n"
            "                    latency 1000, bw 20, collectives 100; shrinking above 1M)\n"
            "  --time-limit MS   collectives: fewer iterations where one repetition at one\n"
            "                    size would take longer than MS milliseconds (default 0: off)\n"
            "  --min-iters N     the fewest iterations --time-limit leaves (default 10)\n"
            "  --test-interval U nonblocking: us of compute between MPI_Test calls (default 5)\n"
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
        } else if (!strcmp(a, "--min-size")) { NEED_ARG(); opt.min_size = parse_size(v); opt.min_set = 1;
        } else if (!strcmp(a, "--max-size")) { NEED_ARG(); opt.max_size = parse_size(v); opt.max_set = 1;
        } else if (!strcmp(a, "--coll-min-size")) { NEED_ARG(); opt.coll_min_size = parse_size(v); opt.coll_min_set = 1;
        } else if (!strcmp(a, "--coll-max-size")) { NEED_ARG(); opt.coll_max_size = parse_size(v); opt.coll_max_set = 1;
        } else if (!strcmp(a, "--time-limit")) { NEED_ARG(); opt.time_limit = atof(v);
        } else if (!strcmp(a, "--min-iters")) { NEED_ARG(); opt.min_iters = parse_long(v, "bad --min-iters '%s'");
        } else if (!strcmp(a, "--test-interval")) { NEED_ARG(); opt.test_interval = atof(v);
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
    if (!opt.coll_min_set && opt.min_set) opt.coll_min_size = opt.min_size;
    if (!opt.coll_max_set && opt.max_set) opt.coll_max_size = opt.max_size;
    /* a small --max-size alone (a point-to-point run) must not trip over the collectives' default minimum */
    if (!opt.coll_min_set && opt.coll_min_size > opt.coll_max_size) opt.coll_min_size = opt.coll_max_size;
    if (opt.coll_min_size > opt.coll_max_size) die("--coll-min-size above --coll-max-size%s", "");
    if (opt.min_iters < 1) die("--min-iters must be >= 1%s", "");
    if (opt.test_interval <= 0.0) die("--test-interval must be > 0%s", "");

    /* which tests */
    int selected[NTESTS] = {0};
    {
        char *list = strdup(testlist), *save = NULL;
        for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int found = 0;
            for (int i = 0; i < NTESTS; i++)
                if (!strcmp(tok, "all") || !strcmp(tok, tests[i].name) ||
                    (!strcmp(tok, "p2p") && tests[i].kind == KIND_P2P) ||
                    (!strcmp(tok, "coll") && tests[i].kind != KIND_P2P))
                    selected[i] = found = 1;
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
    int any_p2p = 0, any_coll = 0;
    for (int i = 0; i < NTESTS; i++) {
        if (selected[i] && tests[i].kind == KIND_P2P) any_p2p = 1;
        if (selected[i] && tests[i].kind != KIND_P2P) any_coll = 1;
    }
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) page = 4096;
    size_t blen = !any_p2p || opt.max_size < 64 ? 64 : opt.max_size;
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
    void *csb = NULL, *crb = NULL;
    if (any_coll) {
        if (opt.coll_max_size > (size_t)0x7fffffff / (size_t)c.nranks)
            die("--coll-max-size times the ranks is above INT_MAX%s", "");
        size_t clen = opt.coll_max_size * (size_t)c.nranks;
        clen = clen < 64 ? 64 : clen;
        clen = (clen + (size_t)page - 1) / (size_t)page * (size_t)page;
        if (posix_memalign(&csb, (size_t)page, clen) || posix_memalign(&crb, (size_t)page, clen))
            die("cannot allocate %s bytes of buffers", "2 x coll-max-size x ranks");
        float *fs = csb, *fr = crb; /* real floats for the reductions */
        for (size_t k = 0; k < clen / sizeof(float); k++) {
            fs[k] = 1.0f;
            fr[k] = 0.0f;
        }
        c.csbuf = csb;
        c.crbuf = crb;
    }

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
        if (any_coll)
            printf("# collectives: sizes=%zu..%zu bytes per rank, time-limit=%g ms, min-iters=%ld,"
                   " test-interval=%g us\n", opt.coll_min_size, opt.coll_max_size, opt.time_limit,
                   opt.min_iters, opt.test_interval);
        fflush(stdout);
    }

    double *vals = malloc(3 * (size_t)opt.reps * sizeof *vals);
    double *pures = vals + opt.reps, *ovls = vals + 2 * opt.reps; /* nonblocking extras */
    for (int ti = 0; ti < NTESTS; ti++) {
        if (!selected[ti]) continue;
        const struct bench_test *t = &tests[ti];
        int nbc = t->kind == KIND_NBC;
        if (c.nranks < t->min_ranks) {
            if (c.rank == 0)
                fprintf(stderr, "ferry-bench: %s needs at least %d ranks, skipped\n", t->name, t->min_ranks);
            continue;
        }
        if (c.rank == 0 && !opt.quiet) {
            printf("\n# test: %s -- %s\n", t->name, t->help);
            printf("# %12s %14s %14s %14s %10s", "size", t->unit, "min", "max", "iters");
            if (nbc) printf(" %14s %10s", "pure us", "overlap %");
            printf("\n");
            fflush(stdout);
        }
        size_t lo_size = t->kind == KIND_P2P ? opt.min_size : opt.coll_min_size;
        size_t hi_size = t->kind == KIND_P2P ? opt.max_size : opt.coll_max_size;
        size_t size = lo_size < t->min_size ? t->min_size : lo_size;
        if (t->sizeless) size = 0;
        while (size <= hi_size) {
            long it = iters_for(t, size), wu = warmup_for(it);
            c.used_iters = it;
            for (int r = 0; r < opt.reps; r++) {
                vals[r] = t->run(&c, size, it, wu);
                pures[r] = c.extra[0];
                ovls[r] = c.extra[1];
            }
            if (c.rank == 0) {
                double lo = vals[0], hi = vals[0];
                for (int r = 1; r < opt.reps; r++) {
                    if (vals[r] < lo) lo = vals[r];
                    if (vals[r] > hi) hi = vals[r];
                }
                double med = median(vals, opt.reps);
                double pmed = nbc ? median(pures, opt.reps) : 0.0;
                double omed = nbc ? median(ovls, opt.reps) : 0.0;
                if (!opt.quiet) {
                    char a[32], b[32], d[32], e[32];
                    fmt_value(a, sizeof a, med);
                    fmt_value(b, sizeof b, lo);
                    fmt_value(d, sizeof d, hi);
                    printf("  %12zu %14s %14s %14s %10ld", size, a, b, d, c.used_iters);
                    if (nbc) {
                        fmt_value(e, sizeof e, pmed);
                        printf(" %14s %10.1f", e, omed);
                    }
                    printf("\n");
                    fflush(stdout);
                }
                if (csv) {
                    fprintf(csv, "%s,%s,%zu,%.*f,%s\n", label, t->name, size,
                            t->lower_is_better ? 4 : 2, med, t->unit);
                    if (nbc) {
                        fprintf(csv, "%s,%s_pure,%zu,%.4f,us\n", label, t->name, size, pmed);
                        fprintf(csv, "%s,%s_overlap,%zu,%.2f,%%\n", label, t->name, size, omed);
                    }
                    fflush(csv);
                }
            }
            if (t->sizeless) break;
            if (size == 0)
                size = 1;
            else if (size > hi_size / opt.factor)
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
    free(csb);
    free(crb);
    MPI_Finalize();
    return 0;
}
