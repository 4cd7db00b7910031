/* ferry-tune --p2p: measure the point-to-point cost model (proto/ladder.h).
 *
 * Ranks 0 and 1 send messages of sizes 0, 1 KiB, 2 KiB, ... 16 MiB with
 * each mechanism forced in turn (MPIX_Ferry_p2p_set): eager up to one
 * packet's payload, the pipelined copy and single copy (pulled, and split
 * between both ends) at every size. A mechanism's cost at a size is the mean
 * of two times per message: ping-pong one-way (the latency one message sees,
 * with both buffers hot in cache) and streaming (a window of messages in
 * flight one way, the time per message: what bandwidth-bound traffic sees).
 * Either alone misleads: ping-pong favours the pipelined copy, whose two
 * copies run from cache, while a stream of large messages runs it at a
 * fraction of single copy's speed. Each time is the fastest of several
 * repetitions (a repetition that a neighbour's process interrupted is not
 * the machine's cost). Written as "MECHANISM BYTES USEC" lines for
 * FERRY_P2P_MODEL. Other ranks, if any, wait. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "p2p_model.h"

int MPIX_Ferry_p2p_set(const char *mechanism, int peer, size_t *limit);

/* one-way microseconds: the best of `reps` repetitions of `iters` round
 * trips. Separate send and receive buffers, as applications and the OSU
 * benchmarks use: answering from the buffer a message was just pulled into
 * took single copy twice as long (16 KiB: 4.2 against 2.1 us), and the model
 * then kept such messages off single copy. */
static double pingpong(int rank, char *sbuf, char *rbuf, size_t bytes, int iters, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(sbuf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        double t = (MPI_Wtime() - t0) / iters / 2 * 1e6;
        best = t < best ? t : best;
    }
    return best;
}

#define STREAM_WINDOW 8

/* streaming: microseconds per message of a window of STREAM_WINDOW sends
 * rank 0 -> 1 and a zero-byte ack, the best of `reps` repetitions */
static double stream(int rank, char *sbuf, char *rbuf, size_t bytes, int iters, int reps)
{
    MPI_Request req[STREAM_WINDOW];
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            for (int w = 0; w < STREAM_WINDOW; w++) {
                if (rank == 0)
                    MPI_Isend(sbuf, (int)bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[w]);
                else
                    MPI_Irecv(rbuf, (int)bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[w]);
            }
            MPI_Waitall(STREAM_WINDOW, req, MPI_STATUSES_IGNORE);
            if (rank == 0)
                MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
        double t = (MPI_Wtime() - t0) / iters / STREAM_WINDOW * 1e6;
        best = t < best ? t : best;
    }
    return best;
}

int ferry_tune_p2p(int rank, int size, const char *out, size_t maxbytes, int verbose, int quick)
{
    static const char *const mechs[] = {"eager", "pipeline", "cma", "split"};
    const int nmech = (int)(sizeof mechs / sizeof mechs[0]);
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
        fprintf(f, "# Ferry point-to-point cost model (ferry-tune --p2p): microseconds per message for each\n"
                   "# mechanism and size, the mean of ping-pong one-way and streaming (window of %d) times,\n"
                   "# each the best of 5 repetitions; use with FERRY_P2P_MODEL=%s\n",
                STREAM_WINDOW, out);
    /* page-aligned and touched, as an application's buffers would be */
    size_t len = ((maxbytes ? maxbytes : 1) + 4095) & ~(size_t)4095;
    char *sbuf = aligned_alloc(4096, len), *rbuf = aligned_alloc(4096, len);
    memset(sbuf, 1, len);
    memset(rbuf, 2, len);
    if (pair != MPI_COMM_NULL) {
        for (int m = 0; m < nmech; m++) {
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
                pingpong(rank, sbuf, rbuf, bytes, iters / 10 + 1, 1);   /* warm-up */
                double pp = pingpong(rank, sbuf, rbuf, bytes, iters, 5);
                double st = stream(rank, sbuf, rbuf, bytes, iters / STREAM_WINDOW + 1, 5);
                double t = (pp + st) / 2;
                if (f)
                    fprintf(f, "%-8s %9zu %10.3f   # ping-pong %.3f, stream %.3f\n", mechs[m], bytes, t, pp, st);
                if (verbose && rank == 0)
                    printf("  %-8s %9zu B %10.3f us (ping-pong %.3f, stream %.3f)\n", mechs[m], bytes, t, pp, st);
            }
            MPIX_Ferry_p2p_set("auto", 1 - rank, NULL);
        }
        MPI_Comm_free(&pair);
    }
    free(sbuf);
    free(rbuf);
    if (f) {
        fclose(f);
        printf("ferry-tune: point-to-point model written to %s (use FERRY_P2P_MODEL=%s)\n", out, out);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}
