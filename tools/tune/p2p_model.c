/* ferry-tune --p2p: measure the point-to-point cost model (proto/ladder.h).
 *
 * Ranks 0 and 1 ping-pong messages of sizes 0, 1 KiB, 2 KiB, ... 16 MiB with
 * each mechanism forced in turn (MPIX_Ferry_p2p_set): eager up to one
 * packet's payload, the pipelined copy and single copy at every size. The
 * one-way time of a size is the fastest of several repetitions (a
 * repetition that a neighbour's process interrupted is not the machine's
 * cost). Written as "MECHANISM BYTES USEC" lines for FERRY_P2P_MODEL. Other
 * ranks, if any, wait. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "p2p_model.h"

int MPIX_Ferry_p2p_set(const char *mechanism, int peer, size_t *limit);

/* one-way microseconds: the best of `reps` repetitions of `iters` round trips */
static double pingpong(int rank, char *buf, size_t bytes, int iters, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        double t = (MPI_Wtime() - t0) / iters / 2 * 1e6;
        best = t < best ? t : best;
    }
    return best;
}

int ferry_tune_p2p(int rank, int size, const char *out, size_t maxbytes, int verbose, int quick)
{
    static const char *const mechs[] = {"eager", "pipeline", "cma"};
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "ferry-tune --p2p: needs 2 ranks (mpiexec -n 2)\n");
        return 2;
    }
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    FILE *f = NULL;
    if (rank == 0 && !(f = fopen(out, "w"))) {
        perror(out);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (f)
        fprintf(f, "# Ferry point-to-point cost model (ferry-tune --p2p): one-way microseconds per mechanism\n"
                   "# and message size, best of 5 repetitions; use with FERRY_P2P_MODEL=%s\n", out);
    char *buf = calloc(1, maxbytes ? maxbytes : 1);
    if (pair != MPI_COMM_NULL) {
        for (int m = 0; m < 3; m++) {
            size_t limit;
            MPIX_Ferry_p2p_set(mechs[m], 1 - rank, &limit);
            if (limit == 0 && rank == 0)
                fprintf(stderr, "ferry-tune: %s is not available between ranks 0 and 1; not in the model\n",
                        mechs[m]);
            /* 0 bytes always goes eagerly: the rendezvous curves start at 1 KiB */
            for (size_t bytes = m == 0 ? 0 : 1024; limit && bytes <= maxbytes && bytes <= limit;
                 bytes = bytes * 2 > limit && bytes < limit ? limit : bytes ? bytes * 2 : 1024) {
                /* about the same time per size: many round trips when small */
                int iters = bytes <= 65536 ? 2000 : bytes <= (1u << 20) ? 200 : 20;
                if (quick)   /* a smoke run (tests): the shape of the file, not the machine */
                    iters = iters / 100 + 1;
                MPI_Barrier(pair);
                pingpong(rank, buf, bytes, iters / 10 + 1, 1);   /* warm-up */
                double t = pingpong(rank, buf, bytes, iters, 5);
                if (f)
                    fprintf(f, "%-8s %9zu %10.3f\n", mechs[m], bytes, t);
                if (verbose && rank == 0)
                    printf("  %-8s %9zu B %10.3f us\n", mechs[m], bytes, t);
            }
            MPIX_Ferry_p2p_set("auto", 1 - rank, NULL);
        }
        MPI_Comm_free(&pair);
    }
    free(buf);
    if (f) {
        fclose(f);
        printf("ferry-tune: point-to-point model written to %s (use FERRY_P2P_MODEL=%s)\n", out, out);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}
