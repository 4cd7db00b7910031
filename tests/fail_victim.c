/* fail_victim: the MPI side of the launcher / failure tests; run by
 * fail_driver.py, which checks exit status, timing, messages, leftovers.
 *
 * usage: fail_victim MODE DIR|LINE
 *   kill   all ranks exchange in a ring forever (100 B and 256 KiB messages,
 *          the big ones in flight with Isend); at iteration 50 the victim
 *          (highest rank) writes "pid time" to DIR/victim, prints its pid and
 *          raises SIGKILL with a 4 MiB Isend still in flight.
 *   abort  same, the victim calls MPI_Abort(MPI_COMM_WORLD, 3) right after
 *          printing its line, without flushing stdout.
 *   exit0  same, the victim calls exit(0) without MPI_Finalize.
 *   fatal  under the default MPI_ERRORS_ARE_FATAL the victim prints a line
 *          (not flushed) and calls MPI_Send to rank size+1000; the others
 *          wait in MPI_Recv from it.
 *   exit7  everybody finalizes; the highest rank then exits with status 7.
 *   nofinalize  the victim sends an int to every other rank and returns from
 *          main without MPI_Finalize (as some old test programs do); each
 *          other rank receives it, waits until the victim's process is gone
 *          (reaped by the launcher), prints "bystander: rank R received V
 *          after the victim exited" and returns without MPI_Finalize too:
 *          the launcher must let them finish (their lines reach the output)
 *          rather than kill them when the victim exits.
 *   spawnkill  kill, over the job and 2 processes it spawns (MPI_Comm_spawn of
 *          itself), merged into one communicator with the job's ranks first:
 *          the victim is the last spawned process, and ranks are merged ranks.
 *   stdin  rank 0 reads one line from stdin and compares it with LINE.
 * Every rank writes its pid to DIR/pid.RANK first (not in stdin mode), so
 * the driver can check that no rank outlives the job. In kill, abort, exit0
 * and fatal modes every other rank prints "bystander: rank R ..." without
 * flushing before the victim fails: the job is killed, and the line must
 * still reach the output (stdout is a pipe: a launcher's MPI makes it line-
 * buffered or unbuffered, as Open MPI's and MPICH's do).
 */
#define _GNU_SOURCE
#include "common.h"
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static double realtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void write_file(const char *dir, const char *name, const char *fmt, ...)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL, "cannot write %s", tmp);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    CHECK(fclose(f) == 0, "write %s", tmp);
    CHECK(rename(tmp, path) == 0, "rename %s", tmp);
}

int main(int argc, char **argv)
{
    CHECK(argc >= 3, "usage: fail_victim MODE DIR|LINE");
    const char *mode = argv[1], *dir = argv[2];
    tc_init(&argc, &argv, &rank, &size);
    char name[64];

    if (!strcmp(mode, "stdin")) {
        if (rank == 0) {
            char line[4096];
            CHECK(fgets(line, sizeof line, stdin) != NULL, "rank 0 read nothing from stdin");
            line[strcspn(line, "\n")] = 0;
            CHECK(strcmp(line, argv[2]) == 0, "rank 0 read '%s' from stdin, expected '%s'", line,
                  argv[2]);
        }
        return tc_finish("fail_victim stdin");
    }

    /* spawnkill: the ring runs over the job and 2 children it spawns, merged
     * (parents first); the victim is the last child */
    MPI_Comm comm = MPI_COMM_WORLD;
    if (!strcmp(mode, "spawnkill")) {
        MPI_Comm parent, ic;
        CHECK_RC(MPI_Comm_get_parent(&parent));
        char *args[] = {"spawnkill", (char *)dir, NULL};
        if (parent == MPI_COMM_NULL)
            CHECK_RC(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE));
        else
            ic = parent;
        CHECK_RC(MPI_Intercomm_merge(ic, parent != MPI_COMM_NULL, &comm));
        CHECK_RC(MPI_Comm_rank(comm, &rank));
        CHECK_RC(MPI_Comm_size(comm, &size));
        mode = "kill";
    }
    const int victim = size - 1;

    snprintf(name, sizeof name, "pid.%d", rank);
    write_file(dir, name, "%ld\n", (long)getpid());

    if (!strcmp(mode, "nofinalize")) {
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* every pid file is written */
        if (rank == victim) {
            for (int r = 0; r < victim; r++) {
                int v = 1000 + r;
                CHECK_RC(MPI_Send(&v, 1, MPI_INT, r, 5, MPI_COMM_WORLD));
            }
            write_file(dir, "victim", "%ld %.6f\n", (long)getpid(), realtime());
            return 0;
        }
        int v = -1;
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, victim, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(v == 1000 + rank, "received %d from the victim, expected %d", v, 1000 + rank);
        char path[4200];
        snprintf(path, sizeof path, "%s/pid.%d", dir, victim);
        FILE *f = fopen(path, "r");
        long vpid = 0;
        CHECK(f && fscanf(f, "%ld", &vpid) == 1, "cannot read %s", path);
        fclose(f);
        /* a condition polled, not a delay: the victim's exit is reaped */
        while (kill((pid_t)vpid, 0) == 0)
            sched_yield();
        printf("bystander: rank %d received %d after the victim exited\n", rank, v);
        return 0;
    }

    if (!strcmp(mode, "exit7")) {
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Finalize());
        return rank == victim ? 7 : 0;
    }

    if (!strcmp(mode, "fatal")) {
        if (rank != victim)
            printf("bystander: rank %d waits for rank %d\n", rank, victim);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* every pid file is written */
        if (rank == victim) {
            int x = 1;
            write_file(dir, "victim", "%ld %.6f\n", (long)getpid(), realtime());
            printf("victim: rank %d pid %ld calls MPI_Send to rank %d", rank, (long)getpid(),
                   size + 1000);
            /* neither flushed nor ended by a newline (line buffering would
             * write it): the fatal error handler must flush it, as MPI_Abort */
            MPI_Send(&x, 1, MPI_INT, size + 1000, 0, MPI_COMM_WORLD);
            fprintf(stderr, "FAIL [rank %d]: MPI_Send to an invalid rank returned under "
                            "MPI_ERRORS_ARE_FATAL\n", rank);
            return 1;
        }
        int x;
        MPI_Recv(&x, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fprintf(stderr, "FAIL [rank %d]: MPI_Recv from the failed rank returned\n", rank);
        return 1;
    }

    if (!strcmp(mode, "hang")) {
        /* every rank waits for a message nobody sends: the launcher's time
         * limit (MPIEXEC_TIMEOUT) must end the job */
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == victim)
            write_file(dir, "victim", "%ld %.6f\n", (long)getpid(), realtime());
        int x;
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fprintf(stderr, "FAIL [rank %d]: a receive nobody matched returned\n", rank);
        return 1;
    }

    int action = !strcmp(mode, "kill") ? 1 : !strcmp(mode, "abort") ? 2 : !strcmp(mode, "exit0") ? 3 : 0;
    CHECK(action != 0, "unknown mode '%s'", mode);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    const size_t big = 262144, huge = 4 << 20;
    unsigned char *sb = tc_malloc(huge), *rb = tc_malloc(huge);
    memset(sb, rank, huge);
    for (long it = 0;; it++) {
        if (rank == victim && it == 50) {
            MPI_Request r;
            /* a big transfer in flight to the neighbour, then die */
            CHECK_RC(MPI_Isend(sb, (int)huge, MPI_BYTE, to, 77, comm, &r));
            write_file(dir, "victim", "%ld %.6f\n", (long)getpid(), realtime());
            printf("victim: rank %d pid %ld %s at iteration %ld", rank, (long)getpid(),
                   action == 1 ? "raises SIGKILL" : action == 2 ? "calls MPI_Abort(3)"
                                                                : "calls exit(0)",
                   it);
            /* MPI_Abort must flush it itself: no newline, so even a line-
             * buffered stdout still holds it; the other ends leave no chance to */
            if (action != 2)
                fflush(stdout);
            if (action == 1)
                raise(SIGKILL);
            else if (action == 2)
                MPI_Abort(comm, 3);
            else
                exit(0);
            fprintf(stderr, "FAIL [rank %d]: still alive after the failure action\n", rank);
            return 1;
        }
        if (it == 1 && rank != victim)
            printf("bystander: rank %d passed iteration 0\n", rank);   /* the ring: before the victim's 50 */
        size_t len = it % 2 ? big : 100;
        MPI_Request r[2];
        CHECK_RC(MPI_Irecv(rb, (int)huge, MPI_BYTE, from, 1, comm, &r[0]));
        CHECK_RC(MPI_Isend(sb, (int)len, MPI_BYTE, to, 1, comm, &r[1]));
        CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    }
}
