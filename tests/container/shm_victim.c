/* shm_victim: the MPI side of kill_driver.py (kill -9 of a rank while shared
 * memory is in use). Every rank first writes DIR/pid.R and DIR/jobid.R (the
 * launcher's PMI_JOBID), before MPI_Init, so the driver can check that no
 * rank outlives the job and find the job's /dev/shm names.
 *
 * usage: shm_victim MODE DIR        the victim is the highest rank
 *   p2p       ring exchange forever (100 B, 256 KiB and 4 MiB+3 messages, the
 *             big ones in flight with Isend/Irecv); at iteration 30 the victim
 *             writes DIR/victim ("pid time") and raises SIGKILL with a 4 MiB
 *             send and a 4 MiB receive in flight.
 *   coll      20 checked MPI_Allreduce on a duplicate of MPI_COMM_WORLD first
 *             (the driver forces the shared-memory allreduce), then the p2p
 *             loop with one allreduce on that communicator per iteration.
 *   init      every rank calls MPI_Init; the driver preloads hold_fallocate.so,
 *             which stops the victim inside MPI_Init when it reserves its part
 *             of the node segment (FERRY_SHM_BACKEND=posix: local rank 0 has
 *             created /dev/shm/ferry-<job>-node, the others wait for the
 *             victim in the fence that precedes the unlink). The driver kills
 *             it there.
 *   collinit  every rank initialises; the others start a (forced shared
 *             memory) MPI_Allreduce on a duplicate of MPI_COMM_WORLD, so rank 0
 *             creates /dev/shm/ferry-<job>-c<ctx>-<n> and waits for the
 *             victim, which writes DIR/ready and waits to be killed.
 * After MPI_Init (p2p, coll: after the allreduces) every rank writes the
 * lines of /proc/self/maps that name Ferry shared memory to DIR/maps.R, so
 * the driver can check that the shared memory under test was really mapped.
 */
#define _GNU_SOURCE
#include "common.h"
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

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL, "cannot write %s", tmp);
    fputs(text, f);
    CHECK(fclose(f) == 0, "write %s", tmp);
    CHECK(rename(tmp, path) == 0, "rename %s", tmp);
}

static void write_maps(const char *dir)
{
    char out[16384] = "", line[4096], name[64];
    size_t used = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL, "cannot read /proc/self/maps");
    while (fgets(line, sizeof line, f))
        if ((strstr(line, "/dev/shm/ferry-") || strstr(line, "memfd:ferry")) && used + strlen(line) < sizeof out) {
            memcpy(out + used, line, strlen(line) + 1);
            used += strlen(line);
        }
    fclose(f);
    snprintf(name, sizeof name, "maps.%d", rank);
    write_file(dir, name, out);
}

static void wait_to_be_killed(const char *dir)
{
    write_file(dir, "ready", "ready\n");
    for (;;)
        pause(); /* the driver sends SIGKILL */
}

static void check_allreduce(MPI_Comm c, int it)
{
    long in[2] = {rank + it, 1}, out[2] = {-1, -1};
    CHECK_RC(MPI_Allreduce(in, out, 2, MPI_LONG, MPI_SUM, c));
    CHECK(out[0] == (long)size * (size - 1) / 2 + (long)size * it && out[1] == size,
          "allreduce %d: got %ld %ld", it, out[0], out[1]);
}

int main(int argc, char **argv)
{
    CHECK(argc >= 3, "usage: shm_victim p2p|coll|init|collinit DIR");
    const char *mode = argv[1], *dir = argv[2];
    const char *pr = getenv("PMI_RANK"), *ps = getenv("PMI_SIZE"), *job = getenv("PMI_JOBID");
    CHECK(pr && ps && job, "run me under Ferry's mpiexec (PMI_RANK, PMI_SIZE, PMI_JOBID)");
    rank = atoi(pr);
    size = atoi(ps);
    const int victim = size - 1;
    char name[64], text[256];
    snprintf(name, sizeof name, "pid.%d", rank);
    snprintf(text, sizeof text, "%ld\n", (long)getpid());
    write_file(dir, name, text);
    snprintf(name, sizeof name, "jobid.%d", rank);
    snprintf(text, sizeof text, "%s\n", job);
    write_file(dir, name, text);

    int r2, s2;
    tc_init(&argc, &argv, &r2, &s2);
    CHECK(r2 == rank && s2 == size, "PMI_RANK/PMI_SIZE %d/%d, MPI says %d/%d", rank, size, r2, s2);
    if (!strcmp(mode, "init"))
        CHECK(0, "MPI_Init returned although the victim was held in it (is hold_fallocate.so preloaded?)");

    MPI_Comm c;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    if (!strcmp(mode, "collinit")) {
        if (rank == victim)
            wait_to_be_killed(dir);
        check_allreduce(c, 0);
        CHECK(0, "an allreduce completed without the victim");
    }
    int coll = !strcmp(mode, "coll");
    CHECK(coll || !strcmp(mode, "p2p"), "unknown mode '%s'", mode);
    for (int it = 0; coll && it < 20; it++)
        check_allreduce(c, it);
    write_maps(dir);

    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    const size_t small = 100, big = 262144, huge = (4u << 20) + 3;
    unsigned char *sb = tc_malloc(huge), *rb = tc_malloc(huge), *rs = tc_malloc(big);
    memset(sb, rank, huge);
    for (long it = 0;; it++) {
        MPI_Request q[4];
        CHECK_RC(MPI_Irecv(rb, (int)huge, MPI_BYTE, from, 2, MPI_COMM_WORLD, &q[0]));
        CHECK_RC(MPI_Isend(sb, (int)huge, MPI_BYTE, to, 2, MPI_COMM_WORLD, &q[1]));
        if (rank == victim && it == 30) {
            snprintf(text, sizeof text, "%ld %.6f\n", (long)getpid(), realtime());
            write_file(dir, "victim", text);
            printf("victim: rank %d pid %ld raises SIGKILL at iteration %ld\n", rank, (long)getpid(), it);
            fflush(stdout);
            raise(SIGKILL);
            CHECK(0, "still alive after SIGKILL");
        }
        CHECK_RC(MPI_Sendrecv(sb, (int)small, MPI_BYTE, to, 0, rs, (int)small, MPI_BYTE, from, 0, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Sendrecv(sb, (int)big, MPI_BYTE, to, 1, rs, (int)big, MPI_BYTE, from, 1,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        CHECK(rb[0] == (unsigned char)from && rb[huge - 1] == (unsigned char)from && rs[big - 1] == (unsigned char)from,
              "ring data from %d", from);
        if (coll)
            check_allreduce(c, (int)it);
    }
}
