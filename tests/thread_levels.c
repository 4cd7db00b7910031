/* thread_levels: processes at different thread levels work together, and
 * threads spawn at the same time (MPI-3.1 12.4.3: "different processes in
 * MPI_COMM_WORLD may require different levels of thread support").
 *
 * The even world ranks call MPI_Init_thread(MPI_THREAD_MULTIPLE), the odd
 * ones MPI_Init (the rank is read from the launcher's environment before
 * MPI starts). Then, every result checked:
 *   1. 20 Comm_dup + Allreduce + Comm_free, Comm_split by parity, Comm_idup,
 *      Comm_create_group of the even ranks: each creation agrees on a
 *      context id over members of both levels.
 *   2. Intercomm_create between the two halves, an allreduce over it,
 *      Intercomm_merge.
 *   3. Spawn over MPI_COMM_WORLD of 2 children at MPI_THREAD_SINGLE, then of
 *      2 at MPI_THREAD_MULTIPLE: a bcast from parent 0 reaches them, each
 *      child answers parent 0 with its world rank and level.
 *   4. Each MPI_THREAD_MULTIPLE rank runs 2 threads that spawn at the same
 *      time, each over a duplicate of MPI_COMM_SELF of its own, 2 rounds,
 *      children alternately single and multiple: each thread's child gets
 *      that thread's number and sends it back.
 * Before the fix a job of mixed levels hung in its first Comm_dup (a
 * threaded member ran one more round of the context agreement), and two
 * threads spawning at once could each take the other's children (an accept
 * on the wrong port): MPICH's threads/spawn tests failed.
 */
#include "common.h"
#include <pthread.h>
#include <unistd.h>

static int rank, size;
static char exe[4096];

/* The world rank from the launcher (Ferry and hydra: PMI_RANK; Open MPI:
 * OMPI_COMM_WORLD_RANK); 0 without one (singleton). */
static int launcher_rank(void)
{
    const char *names[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (getenv(names[i]))
            return atoi(getenv(names[i]));
    return 0;
}

static int child(int argc, char **argv)
{
    int want = strcmp(argv[2], "multiple") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, got = -1;
    CHECK_RC(MPI_Init_thread(&argc, &argv, want, &got));
    CHECK(want == MPI_THREAD_SINGLE || got == MPI_THREAD_MULTIPLE, "child: provided %d", got);
    int wr;
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &wr));
    MPI_Comm parent;
    CHECK_RC(MPI_Comm_get_parent(&parent));
    CHECK(parent != MPI_COMM_NULL, "child without a parent");
    int token = -1;
    CHECK_RC(MPI_Bcast(&token, 1, MPI_INT, 0, parent));
    int reply[3] = {token, wr, want};
    CHECK_RC(MPI_Send(reply, 3, MPI_INT, 0, 7, parent));
    CHECK_RC(MPI_Comm_disconnect(&parent));
    CHECK_RC(MPI_Finalize());
    return 0;
}

/* Spawn n children at `level` over comm (root 0), bcast token from the root,
 * check every child's answer there. */
static void spawn_and_check(MPI_Comm comm, int n, const char *level, int token)
{
    char *args[] = {"child", (char *)level, NULL};
    int errs[2] = {-1, -1}, me;
    MPI_Comm ic;
    CHECK_RC(MPI_Comm_spawn(exe, args, n, MPI_INFO_NULL, 0, comm, &ic, errs));
    for (int i = 0; i < n; i++)
        CHECK(errs[i] == MPI_SUCCESS, "spawn %s: errcode %d", level, errs[i]);
    CHECK_RC(MPI_Comm_rank(comm, &me));
    CHECK_RC(MPI_Bcast(&token, 1, MPI_INT, me == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
    if (me == 0) {
        int seen = 0;
        for (int i = 0; i < n; i++) {
            int reply[3];
            CHECK_RC(MPI_Recv(reply, 3, MPI_INT, MPI_ANY_SOURCE, 7, ic, MPI_STATUS_IGNORE));
            CHECK(reply[0] == token, "child %d answered token %d, want %d", reply[1], reply[0], token);
            CHECK(reply[1] >= 0 && reply[1] < n && !(seen & 1 << reply[1]), "child world rank %d", reply[1]);
            int want = strcmp(level, "multiple") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
            CHECK(reply[2] == want, "child level %d, want %d", reply[2], want);
            seen |= 1 << reply[1];
        }
    }
    CHECK_RC(MPI_Comm_disconnect(&ic));
}

struct spawner {
    pthread_t tid;
    MPI_Comm self;
    int token;
};

static void *spawn_thread(void *arg)
{
    struct spawner *s = arg;
    for (int round = 0; round < 2; round++)
        spawn_and_check(s->self, 1, round % 2 ? "multiple" : "single", s->token + round);
    return NULL;
}

static void creations(void)
{
    for (int i = 0; i < 20; i++) {
        MPI_Comm d;
        int sum = -1;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d));
        CHECK(sum == size * (size - 1) / 2, "dup %d: sum %d", i, sum);
        CHECK_RC(MPI_Comm_free(&d));
    }
    MPI_Comm half, idup;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    int hsize, hsum = -1, want = 0;
    CHECK_RC(MPI_Comm_size(half, &hsize));
    for (int r = rank % 2; r < size; r += 2)
        want += r;
    CHECK_RC(MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, half));
    CHECK(hsum == want && hsize == (size + 1 - rank % 2) / 2, "split: sum %d want %d, size %d", hsum, want, hsize);

    MPI_Request req;
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &idup, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int isum = -1;
    CHECK_RC(MPI_Allreduce(&rank, &isum, 1, MPI_INT, MPI_SUM, idup));
    CHECK(isum == size * (size - 1) / 2, "idup: sum %d", isum);
    CHECK_RC(MPI_Comm_free(&idup));

    if (rank % 2 == 0) {
        MPI_Group wg, eg;
        int range[1][3] = {{0, size - 1, 2}};
        CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        CHECK_RC(MPI_Group_range_incl(wg, 1, range, &eg));
        MPI_Comm evens;
        CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, eg, 5, &evens));
        int esum = -1;
        CHECK_RC(MPI_Allreduce(&rank, &esum, 1, MPI_INT, MPI_SUM, evens));
        CHECK(esum == want, "create_group: sum %d want %d", esum, want);
        CHECK_RC(MPI_Comm_free(&evens));
        CHECK_RC(MPI_Group_free(&eg));
        CHECK_RC(MPI_Group_free(&wg));
    }

    if (size >= 2) {   /* 2. */
        MPI_Comm ic, merged;
        CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &ic));
        int other = -1, rsum = 0;
        for (int r = 1 - rank % 2; r < size; r += 2)
            rsum += r;
        CHECK_RC(MPI_Allreduce(&rank, &other, 1, MPI_INT, MPI_SUM, ic));
        CHECK(other == rsum, "intercomm allreduce %d, want %d", other, rsum);
        CHECK_RC(MPI_Intercomm_merge(ic, rank % 2, &merged));
        int msum = -1;
        CHECK_RC(MPI_Allreduce(&rank, &msum, 1, MPI_INT, MPI_SUM, merged));
        CHECK(msum == size * (size - 1) / 2, "merged: sum %d", msum);
        CHECK_RC(MPI_Comm_free(&merged));
        CHECK_RC(MPI_Comm_free(&ic));
    }
    CHECK_RC(MPI_Comm_free(&half));
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "child") == 0)
        return child(argc, argv);
    int threaded = launcher_rank() % 2 == 0, got = -1;
    CHECK_RC(MPI_Init_thread(&argc, &argv, threaded ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &got));
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(rank % 2 == !threaded, "launcher rank %d, world rank %d", launcher_rank(), rank);
    CHECK(!threaded || got == MPI_THREAD_MULTIPLE, "provided %d", got);
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(el > 0, "readlink /proc/self/exe");

    creations();                                            /* 1., 2. */
    spawn_and_check(MPI_COMM_WORLD, 2, "single", 11);       /* 3. */
    spawn_and_check(MPI_COMM_WORLD, 2, "multiple", 12);
    if (threaded) {                                         /* 4. */
        struct spawner sp[2];
        for (int t = 0; t < 2; t++) {
            sp[t].token = 1000 * (rank + 1) + 10 * t;
            CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &sp[t].self));
        }
        for (int t = 0; t < 2; t++)
            CHECK(pthread_create(&sp[t].tid, NULL, spawn_thread, &sp[t]) == 0, "pthread_create");
        for (int t = 0; t < 2; t++) {
            CHECK(pthread_join(sp[t].tid, NULL) == 0, "pthread_join");
            CHECK_RC(MPI_Comm_free(&sp[t].self));
        }
    }
    return tc_finish("thread_levels");
}
