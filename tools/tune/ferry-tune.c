/* ferry-tune: measure every collective algorithm on this machine and write
 * the table Ferry reads at init from FERRY_COLL_TABLE.
 *
 *   mpiexec -n N ferry-tune [-o FILE] [-a] [-m MAXBYTES] [-t SECONDS] [-c LIST] [-v]
 *
 * For each collective and each message size (powers of 8 from 8 bytes to
 * MAXBYTES), every algorithm is forced in turn (MPIX_Ferry_coll_set) and
 * timed: a warm-up, then repetitions until about SECONDS have passed; the
 * time of a repetition is the slowest rank's. The fastest algorithm wins the
 * size; sizes are turned into byte ranges split halfway (geometrically)
 * between measured sizes, neighbouring ranges with the same winner merge,
 * and the rows are written for exactly N ranks:
 *
 *     allreduce  8  *  0-181  recursive_doubling
 *
 * Run it once per rank count of interest with -a (append) to build a table
 * for several sizes of jobs. Rows name the ranks-per-node range "*": on more
 * than one node, run it with the job shape the table is for.
 *
 * With --p2p it measures the point-to-point cost model instead
 * (p2p_model.c): mpiexec -n 2 ferry-tune --p2p -o FILE, then FERRY_P2P_MODEL=FILE.
 *
 * Sizes are what Ferry's selection keys on: the vector for reductions and
 * bcast, the per-rank block for gather/scatter/allgather/alltoall (the
 * reduce_scatter_block vector is N blocks). */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <unistd.h>
#include "p2p_model.h"

int MPIX_Ferry_coll_set(const char *collective, const char *algorithm);
int MPIX_Ferry_coll_algorithm(const char *collective, int i, const char **name);

static int rank, size;
static double budget = 0.02;
static int verbose;

enum { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_SCATTER, C_ALLGATHER, C_ALLTOALL, C_RSB, C_SCAN,
       C_EXSCAN, NCOLL };
static const char *const names[NCOLL] = {"barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
                                         "allgather", "alltoall", "reduce_scatter_block", "scan", "exscan"};

static char *sbuf, *rbuf;

/* one call of collective c with `bytes` per the table's size convention */
static void call(int c, size_t bytes)
{
    int n = (int)(bytes / sizeof(double));
    switch (c) {
    case C_BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case C_BCAST: MPI_Bcast(sbuf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case C_REDUCE: MPI_Reduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case C_ALLREDUCE: MPI_Allreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case C_GATHER: MPI_Gather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case C_SCATTER: MPI_Scatter(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case C_ALLGATHER: MPI_Allgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD); break;
    case C_ALLTOALL: MPI_Alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD); break;
    case C_RSB: MPI_Reduce_scatter_block(sbuf, rbuf, n / size, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case C_SCAN: MPI_Scan(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case C_EXSCAN: MPI_Exscan(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    }
}

/* seconds per call, the slowest rank's */
static double measure(int c, size_t bytes)
{
    for (int i = 0; i < 3; i++)
        call(c, bytes);
    /* every rank must run the same number of repetitions: rank 0 decides */
    int reps = 1;
    for (;;) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++)
            call(c, bytes);
        double t = MPI_Wtime() - t0, tmax;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        int more = tmax < budget && reps < (1 << 20);
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!more)
            return tmax / reps;
        reps *= tmax > 0 ? (int)fmin(8.0, fmax(2.0, budget / tmax)) : 8;
    }
}

/* is name one of the comma-separated entries of list? */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

struct row {
    int coll;
    size_t lo, hi;   /* hi == 0: no upper bound */
    const char *alg;
};

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: mpiexec -n N ferry-tune [-o FILE] [-a] [-m MAXBYTES] [-t SECONDS] [-c coll,coll,...] [-v]\n"
                        "       mpiexec -n 2 ferry-tune --p2p [-o FILE] [-m MAXBYTES] [-v] [--quick]   (point-to-point cost model)\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *out = NULL, *only = NULL;
    int append = 0, opt, p2p = 0;
    size_t maxbytes = 0;
    int quick = 0;
    static const struct option longopts[] = {{"p2p", no_argument, NULL, 'p'}, {"quick", no_argument, NULL, 'q'},
                                             {NULL, 0, NULL, 0}};
    while ((opt = getopt_long(argc, argv, "o:am:t:c:vhpq", longopts, NULL)) != -1) {
        switch (opt) {
        case 'p': p2p = 1; break;
        case 'q': quick = 1; break;
        case 'o': out = optarg; break;
        case 'a': append = 1; break;
        case 'm': maxbytes = strtoull(optarg, NULL, 0); break;
        case 't': budget = atof(optarg); break;
        case 'c': only = optarg; break;
        case 'v': verbose = 1; break;
        default: usage(); MPI_Finalize(); return opt == 'h' ? 0 : 2;
        }
    }
    if (p2p) {
        int rc = ferry_tune_p2p(rank, size, out ? out : "ferry-p2p-model.txt", maxbytes ? maxbytes : 16u << 20,
                                verbose, quick);
        MPI_Finalize();
        return rc;
    }
    if (!out)
        out = "ferry-coll-table.txt";
    if (!maxbytes)
        maxbytes = 1 << 20;
    const char *probe;
    if (MPIX_Ferry_coll_algorithm("allreduce", 0, &probe) != MPI_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "ferry-tune: this MPI library is not Ferry\n");
        MPI_Finalize();
        return 1;
    }
    size_t sizes[32];
    int nsizes = 0;
    for (size_t b = 8; b <= maxbytes && nsizes < 32; b *= 8)
        sizes[nsizes++] = b;
    /* buffers for the largest call: alltoall/allgather/gather move size blocks */
    size_t cap = maxbytes * (size_t)size + 64;
    sbuf = calloc(1, cap);
    rbuf = calloc(1, cap);
    struct row *rows = calloc((size_t)NCOLL * 32, sizeof *rows);
    int nrows = 0;
    for (int c = 0; c < NCOLL; c++) {
        if (only && !listed(only, names[c]))
            continue;
        const char *prev = NULL;
        for (int si = 0; si < (c == C_BARRIER ? 1 : nsizes); si++) {
            size_t bytes = sizes[si];
            if (c == C_RSB)
                bytes = (bytes / sizeof(double) / (size_t)size) * sizeof(double) * (size_t)size;
            const char *best = NULL;
            double tbest = 0;
            const char *alg;
            for (int ai = 0; MPIX_Ferry_coll_algorithm(names[c], ai, &alg) == MPI_SUCCESS; ai++) {
                if (!strcmp(alg, "hier"))   /* the node-aware composition: tuned through its stages */
                    continue;
                MPIX_Ferry_coll_set(names[c], alg);
                double t = measure(c, bytes);
                if (verbose && rank == 0)
                    printf("  %-22s %9zu B  %-20s %10.2f us\n", names[c], bytes, alg, t * 1e6);
                if (!best || t < tbest)
                    best = alg, tbest = t;
            }
            MPIX_Ferry_coll_set(names[c], "auto");
            if (rank == 0)
                printf("%-22s %9zu B: %-20s %10.2f us\n", names[c], bytes, best, tbest * 1e6);
            /* the range of this size reaches halfway (geometrically) to the next */
            size_t lo = si == 0 ? 0 : (size_t)sqrt((double)sizes[si - 1] * (double)sizes[si]) + 1;
            if (c == C_BARRIER) {
                rows[nrows++] = (struct row){c, 0, 0, best};
            } else if (prev && !strcmp(prev, best)) {
                rows[nrows - 1].hi = 0;
            } else {
                if (nrows && rows[nrows - 1].coll == c)
                    rows[nrows - 1].hi = lo - 1;
                rows[nrows++] = (struct row){c, lo, 0, best};
            }
            prev = best;
        }
    }
    if (rank == 0) {
        FILE *f = fopen(out, append ? "a" : "w");
        if (!f) {
            perror(out);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (!append)
            fprintf(f, "# Ferry collective algorithm table (ferry-tune); use with FERRY_COLL_TABLE=%s\n"
                       "# collective            ranks ppn bytes            algorithm\n", out);
        for (int i = 0; i < nrows; i++) {
            char range[64];
            if (rows[i].hi)
                snprintf(range, sizeof range, "%zu-%zu", rows[i].lo, rows[i].hi);
            else
                snprintf(range, sizeof range, "%zu-*", rows[i].lo);
            fprintf(f, "%-23s %-5d *   %-16s %s\n", names[rows[i].coll], size, range, rows[i].alg);
        }
        fclose(f);
        printf("ferry-tune: %d rows for %d ranks written to %s\n", nrows, size, out);
    }
    free(rows);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
