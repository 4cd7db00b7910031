/* dyn_spawn: dynamic processes (MPI-3.1 chapter 10).
 *
 * The job (the parents):
 *   1. MPI_Comm_get_parent is MPI_COMM_NULL.
 *   2. MPI_Comm_spawn of this program ("child") with 2 processes: the
 *      errcodes are MPI_SUCCESS, the intercommunicator's remote group has 2.
 *      Every parent and child exchange messages of 0 B, 1 KiB, 200 KiB and
 *      4 MiB both ways (the payloads name sender and receiver); a wildcard
 *      receive gets MPI_SOURCE right; a bcast from parent 0 to the children
 *      and one back from child 1 (MPI_ROOT / MPI_PROC_NULL), an allreduce
 *      over the intercommunicator (each side gets the other's sum);
 *      Intercomm_merge (parents low) gives parents first, and an allreduce
 *      on it sums every process's world rank + 1000 * side, a ring, and a
 *      window over both worlds (a put ring under fences, Fetch_and_op on
 *      one counter under a lock), MPI_COMM_TYPE_SHARED (both worlds: one
 *      node) and a shared window read directly; the children's world is theirs alone
 *      (size 2). Then MPI_Comm_disconnect.
 *   3. MPI_Comm_spawn_multiple of two programs (this one as "multi" with
 *      1 and 2 processes; the first named without a directory and found
 *      through a "path" info, the second with 300 arguments holding spaces,
 *      commas, '=' and '%', and a "wdir" info): each child checks its
 *      MPI_APPNUM, its arguments and (second) its directory, the
 *      children's world has 3 ranks, and they send their appnum and world
 *      rank to parent 0.
 *   4. Spawning a program that does not exist fails with MPI_ERR_SPAWN
 *      (errors returned), errcodes all MPI_ERR_SPAWN, the job goes on (not
 *      under Open MPI, whose mpirun ends the job).
 *   5. With 2 or more parents: ports. Rank 0 opens a port and sends its
 *      name to the others; the even ranks accept on it, the odd ones
 *      connect: the two halves get an intercommunicator and exchange
 *      messages. Closing the port; connecting to a closed port fails with
 *      MPI_ERR_PORT (not checked under Open MPI, which waits forever). On the way, name publishing: rank 0 publishes the port,
 *      the last rank looks it up; after MPI_Unpublish_name a lookup is
 *      MPI_ERR_NAME and a second unpublish MPI_ERR_SERVICE (not under Open
 *      MPI, which needs an ompi-server for names).
 *   6. With 2 or more parents: MPI_Comm_join of ranks 0 and 1 over a UNIX
 *      socket pair they set up themselves; a message each way.
 * Large messages between the worlds are pulled with Cross Memory Attach by
 * their receiver; with the argument "nocma" the parents do not pull (Ferry's
 * FERRY_CMA=0), so the children's messages reach them in DATA packets.
 */
#include "common.h"
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int rank, size;
static const size_t sizes[] = {0, 1024, 200 * 1024, 4 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Both directions between every parent and every child of intercomm ic;
 * `side` 0 for parents, 1 for children. */
static void exchange(MPI_Comm ic, int side)
{
    int me, rsize;
    CHECK_RC(MPI_Comm_rank(ic, &me));
    CHECK_RC(MPI_Comm_remote_size(ic, &rsize));
    char *buf = tc_malloc(sizes[NSIZES - 1]);
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        for (int step = 0; step < 2; step++) {
            int sending = step == side;   /* parents send first */
            for (int r = 0; r < rsize; r++) {
                uint64_t salt = 7919u * (uint64_t)s + (sending ? 1000u * (uint64_t)me + (uint64_t)r
                                                               : 1000u * (uint64_t)r + (uint64_t)me);
                if (sending) {
                    tc_fill(buf, n, side, salt);
                    CHECK_RC(MPI_Send(buf, (int)n, MPI_BYTE, r, 10 + (int)s, ic));
                } else {
                    MPI_Status st;
                    memset(buf, 0, n);
                    CHECK_RC(MPI_Recv(buf, (int)n, MPI_BYTE, r, 10 + (int)s, ic, &st));
                    CHECK(tc_count(&st, MPI_BYTE) == (int)n, "size %zu from %d: got %d bytes", n, r,
                          tc_count(&st, MPI_BYTE));
                    CHECK_PAT(buf, n, !side, salt, "size %zu from remote %d", n, r);
                }
            }
        }
    }
    free(buf);
    /* wildcard source: every remote process sends its rank */
    for (int r = 0; r < rsize; r++)
        CHECK_RC(MPI_Send(&me, 1, MPI_INT, r, 99, ic));
    int seen = 0;
    for (int r = 0; r < rsize; r++) {
        int v = -1;
        MPI_Status st;
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 99, ic, &st));
        CHECK(v == st.MPI_SOURCE && v >= 0 && v < rsize, "wildcard: value %d from MPI_SOURCE %d", v, st.MPI_SOURCE);
        seen |= 1 << v;
    }
    CHECK(seen == (1 << rsize) - 1, "wildcard receives saw ranks 0x%x", seen);
}

/* Collectives over the intercommunicator. */
static void inter_colls(MPI_Comm ic, int side)
{
    int me, lsize, rsize;
    CHECK_RC(MPI_Comm_rank(ic, &me));
    CHECK_RC(MPI_Comm_size(ic, &lsize));
    CHECK_RC(MPI_Comm_remote_size(ic, &rsize));
    int v[4] = {-1, -1, -1, -1};
    /* parent 0 to the children */
    if (side == 0) {
        int x[4] = {11, 22, 33, 44};
        CHECK_RC(MPI_Bcast(me == 0 ? x : v, 4, MPI_INT, me == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
    } else {
        CHECK_RC(MPI_Bcast(v, 4, MPI_INT, 0, ic));
        CHECK(v[0] == 11 && v[3] == 44, "bcast from parent 0: %d %d", v[0], v[3]);
    }
    /* the last child to the parents */
    if (side == 1) {
        int x = 555;
        CHECK_RC(MPI_Bcast(&x, 1, MPI_INT, me == lsize - 1 ? MPI_ROOT : MPI_PROC_NULL, ic));
    } else {
        int x = 0;
        CHECK_RC(MPI_Bcast(&x, 1, MPI_INT, rsize - 1, ic));
        CHECK(x == 555, "bcast from the last child: %d", x);
    }
    /* each group gets the sum over the other */
    int mine = (side + 1) * 100 + me, sum = -1, want = 0;
    for (int r = 0; r < rsize; r++)
        want += (!side + 1) * 100 + r;
    CHECK_RC(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic));
    CHECK(sum == want, "intercommunicator allreduce: %d, want %d", sum, want);
}

static void merged(MPI_Comm ic, int side)
{
    MPI_Comm m;
    int me, lsize, rsize, mrank, msize;
    CHECK_RC(MPI_Comm_rank(ic, &me));
    CHECK_RC(MPI_Comm_size(ic, &lsize));
    CHECK_RC(MPI_Comm_remote_size(ic, &rsize));
    CHECK_RC(MPI_Intercomm_merge(ic, side, &m));
    CHECK_RC(MPI_Comm_rank(m, &mrank));
    CHECK_RC(MPI_Comm_size(m, &msize));
    int nparents = side ? rsize : lsize;
    CHECK(msize == lsize + rsize, "merged size %d, want %d", msize, lsize + rsize);
    CHECK(mrank == (side ? nparents + me : me), "merged rank %d (side %d, rank %d)", mrank, side, me);
    int v = mrank + 1000 * side, sum = -1, want = 0;
    for (int r = 0; r < msize; r++)
        want += r + 1000 * (r >= nparents);
    CHECK_RC(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, m));
    CHECK(sum == want, "merged allreduce %d, want %d", sum, want);
    /* a ring on the merged communicator */
    int right = (mrank + 1) % msize, left = (mrank + msize - 1) % msize, got = -1;
    CHECK_RC(MPI_Sendrecv(&mrank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, m, MPI_STATUS_IGNORE));
    CHECK(got == left, "merged ring: got %d from %d", got, left);
    /* one-sided over both worlds: a put ring under fences, then every
     * process adds 1 to a counter at rank 0 with Fetch_and_op under a lock */
    int *base;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(1000 * sizeof(int), sizeof(int), MPI_INFO_NULL, m, &base, &win));
    for (int i = 0; i < 1000; i++)
        base[i] = -1;
    CHECK_RC(MPI_Win_fence(0, win));
    int src[1000];
    for (int i = 0; i < 1000; i++)
        src[i] = mrank * 10000 + i;
    CHECK_RC(MPI_Put(src, 1000, MPI_INT, right, 0, 1000, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int i = 0; i < 1000; i++)
        CHECK(base[i] == left * 10000 + i, "put from merged rank %d: [%d] = %d", left, i, base[i]);
    CHECK_RC(MPI_Barrier(m));   /* everybody checked before the counter changes */
    int one = 1, old = -1;
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_RC(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 999, MPI_SUM, win));
    CHECK_RC(MPI_Win_unlock(0, win));
    CHECK(old >= (msize - 1) * 10000 + 999 && old < (msize - 1) * 10000 + 999 + msize, "fetched %d", old);
    CHECK_RC(MPI_Barrier(m));
    if (mrank == 0)
        CHECK(base[999] == (msize - 1) * 10000 + 999 + msize, "counter %d after %d increments", base[999], msize);
    CHECK_RC(MPI_Win_free(&win));
    /* every process runs on this node: one shared-memory communicator, and
     * a shared window whose segments each process reads directly */
    MPI_Comm sh;
    int shsize = 0;
    CHECK_RC(MPI_Comm_split_type(m, MPI_COMM_TYPE_SHARED, mrank, MPI_INFO_NULL, &sh));
    CHECK_RC(MPI_Comm_size(sh, &shsize));
    CHECK(shsize == msize, "MPI_COMM_TYPE_SHARED over both worlds has %d of %d", shsize, msize);
    int *mine;
    CHECK_RC(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, sh, &mine, &win));
    CHECK_RC(MPI_Win_lock_all(0, win));
    *mine = 7000 + mrank;
    CHECK_RC(MPI_Win_sync(win));
    CHECK_RC(MPI_Barrier(sh));
    CHECK_RC(MPI_Win_sync(win));
    for (int r = 0; r < shsize; r++) {
        MPI_Aint sz;
        int du, *theirs;
        CHECK_RC(MPI_Win_shared_query(win, r, &sz, &du, &theirs));
        CHECK(*theirs == 7000 + r, "shared window of rank %d holds %d", r, *theirs);
    }
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Win_free(&win));
    CHECK_RC(MPI_Comm_free(&sh));
    CHECK_RC(MPI_Barrier(m));
    CHECK_RC(MPI_Comm_free(&m));
}

/* The second program of spawn_multiple gets many arguments, with spaces,
 * commas, '=' and '%' in them. */
#define NMANY 300
static char *many_arg(int i)
{
    static char args[NMANY][24];
    if (!args[i][0])
        snprintf(args[i], sizeof args[i], i % 3 ? "a%d,b=%%%d" : "x y %d", i, i);
    return args[i];
}

static int child(int argc, char **argv)
{
    int wr, ws;
    CHECK_RC(MPI_Init(&argc, &argv));
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &wr));
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &ws));
    tc_rank_ = wr;
    MPI_Comm parent;
    CHECK_RC(MPI_Comm_get_parent(&parent));
    CHECK(parent != MPI_COMM_NULL, "spawned, but MPI_Comm_get_parent is MPI_COMM_NULL");
    int inter = 0, rsize = 0, me = -1;
    CHECK_RC(MPI_Comm_test_inter(parent, &inter));
    CHECK_RC(MPI_Comm_remote_size(parent, &rsize));
    CHECK_RC(MPI_Comm_rank(parent, &me));
    CHECK(inter && me == wr, "parent: inter %d, rank %d (world rank %d)", inter, me, wr);
    if (strcmp(argv[1], "child") == 0) {
        CHECK(argc == 3 && atoi(argv[2]) == rsize, "argv[2] '%s', %d parents", argc > 2 ? argv[2] : "", rsize);
        CHECK(ws == 2, "the children's world has %d ranks, want 2", ws);
        exchange(parent, 1);
        inter_colls(parent, 1);
        merged(parent, 1);
    } else {   /* multi: argv[2] is the expected appnum */
        int *appnum, flag = 0;
        CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
        CHECK(flag && *appnum == atoi(argv[2]), "appnum %d, want %s", flag ? *appnum : -1, argv[2]);
        CHECK(ws == 3, "the children's world has %d ranks, want 3", ws);
        CHECK(argc == (*appnum ? NMANY + 3 : 3), "%d arguments for appnum %d", argc, *appnum);
        for (int i = 0; *appnum && i < NMANY; i++)
            CHECK(strcmp(argv[3 + i], many_arg(i)) == 0, "argument %d: '%s', want '%s'", i, argv[3 + i], many_arg(i));
        if (*appnum == 1) {
            char cwd[256];
            CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/tmp") == 0, "wdir: started in %s", cwd);
        }
        int msg[2] = {*appnum, wr};
        CHECK_RC(MPI_Send(msg, 2, MPI_INT, 0, 7, parent));
    }
    CHECK_RC(MPI_Comm_disconnect(&parent));
    CHECK(parent == MPI_COMM_NULL, "disconnect left the handle");
    CHECK_RC(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent after disconnect is not MPI_COMM_NULL");
    CHECK_RC(MPI_Finalize());
    return 0;
}

/* Name publishing: rank 0 publishes the port under a service name with a
 * space in it, the last rank looks it up; unpublished, it is gone. */
static void names(const char *port)
{
    const char *svc = "ferry test service";
    if (rank == 0)
        CHECK_RC(MPI_Publish_name(svc, MPI_INFO_NULL, port));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) {
        char got[MPI_MAX_PORT_NAME] = "";
        CHECK_RC(MPI_Lookup_name(svc, MPI_INFO_NULL, got));
        CHECK(strcmp(got, port) == 0, "looked up '%s', published '%s'", got, port);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK_RC(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        char got[MPI_MAX_PORT_NAME];
        int rc = MPI_Lookup_name(svc, MPI_INFO_NULL, got), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_NAME, "lookup of an unpublished name: %s", tc_errstr(rc));
        rc = MPI_Unpublish_name(svc, MPI_INFO_NULL, port);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SERVICE, "unpublishing twice: %s", tc_errstr(rc));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    }
}

/* A connect with no accept on an open port times out with MPI_ERR_PORT
 * (MPI-3.1 10.4.2; the info key "timeout", MPICH's, sets the time), and an
 * accept that comes later pairs with the next connect, not the one that gave
 * up (its connection still waits in the port's queue). Ranks 0 (the port's
 * owner) and 1. */
static void connect_timeout(const char *port)
{
    MPI_Comm ic;
    if (rank == 1) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Info info;
        CHECK_RC(MPI_Info_create(&info));
        CHECK_RC(MPI_Info_set(info, "timeout", "1"));   /* whole seconds: MPICH reads it with atoi */
        double t0 = MPI_Wtime();
        int rc = MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &ic), cls = -1;
        double waited = MPI_Wtime() - t0;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_PORT, "connect without an accept: %s", tc_errstr(rc));
        CHECK(waited >= 0.99, "connect without an accept gave up after %.3f s, before its timeout 1 s", waited);
        if (!tc_mpich_version()) {   /* MPICH reads the value with atoi */
            CHECK_RC(MPI_Info_set(info, "timeout", "soon"));
            rc = MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &ic);
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_INFO_VALUE, "connect with timeout 'soon': %s", tc_errstr(rc));
        }
        CHECK_RC(MPI_Info_free(&info));
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    }
    if (!tc_mpich_version()) {   /* the root's bad argument fails the call on every member */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Info info;
        CHECK_RC(MPI_Info_create(&info));
        CHECK_RC(MPI_Info_set(info, "timeout", rank == 0 ? "-1" : "1"));
        int rc = MPI_Comm_connect(port, info, 0, MPI_COMM_WORLD, &ic), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_INFO_VALUE, "connect with the root's timeout -1: %s", tc_errstr(rc));
        CHECK_RC(MPI_Info_free(&info));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank > 1)
        return;
    if (rank == 0)
        CHECK_RC(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
    else
        CHECK_RC(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
    int v = 40 + rank, got = -1;
    CHECK_RC(MPI_Sendrecv(&v, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE));
    CHECK(got == 41 - rank, "accept after a timed-out connect: got %d", got);
    CHECK_RC(MPI_Comm_disconnect(&ic));
}

static void ports(void)
{
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0)
        CHECK_RC(MPI_Open_port(MPI_INFO_NULL, port));
    CHECK_RC(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
    if (!tc_is_open_mpi())   /* Open MPI needs an ompi-server for names */
        names(port);
    MPI_Comm half, ic;
    int side = rank % 2, hrank, hsize, rsize;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half));
    CHECK_RC(MPI_Comm_rank(half, &hrank));
    CHECK_RC(MPI_Comm_size(half, &hsize));
    if (side == 0)
        CHECK_RC(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic));
    else
        CHECK_RC(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic));
    CHECK_RC(MPI_Comm_remote_size(ic, &rsize));
    CHECK(rsize == (side ? (size + 1) / 2 : size / 2), "ports: remote size %d", rsize);
    for (int r = 0; r < rsize; r++) {
        int v = 1000 * rank + r, got = -1;
        CHECK_RC(MPI_Sendrecv(&v, 1, MPI_INT, r, 3, &got, 1, MPI_INT, r, 3, ic, MPI_STATUS_IGNORE));
        int sender = side ? 2 * r : 2 * r + 1;   /* the remote rank r's world rank */
        CHECK(got == 1000 * sender + hrank, "ports: got %d from remote %d", got, r);
    }
    CHECK_RC(MPI_Comm_disconnect(&ic));
    CHECK_RC(MPI_Comm_free(&half));
    if (!tc_is_open_mpi())   /* Open MPI 4.1 waits for an accept forever */
        connect_timeout(port);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK_RC(MPI_Close_port(port));
        /* an error of a call without a communicator goes to MPI_COMM_WORLD's
         * handler (MPI-3.1) or MPI_COMM_SELF's (MPI-4.0) */
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc, cls = -1;
        if (!tc_is_open_mpi()) {   /* Open MPI 4.1 waits for the port forever */
            rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_PORT, "connect to a closed port: %s", tc_errstr(rc));
        }
        rc = MPI_Close_port(port);
        CHECK(rc != MPI_SUCCESS || tc_is_open_mpi(), "closing a closed port succeeded");   /* Open MPI: it does */
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
}

static void join(void)
{
    /* rank 0 listens on an abstract socket named after its pid */
    int pid = (int)getpid();
    CHECK_RC(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank > 1)
        return;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int len = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "ferry-test-join-%d", pid);
    socklen_t al = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
    int fd = -1;
    if (rank == 0) {
        int l = socket(AF_UNIX, SOCK_STREAM, 0);
        CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, al) == 0 && listen(l, 1) == 0, "join: listen");
        CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, 1, 4, MPI_COMM_WORLD));
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, al) == 0, "join: connect");
    }
    CHECK(fd >= 0, "join: no socket");
    MPI_Comm ic;
    CHECK_RC(MPI_Comm_join(fd, &ic));
    close(fd);
    int rsize = 0, v = 40 + rank, got = -1;
    CHECK_RC(MPI_Comm_remote_size(ic, &rsize));
    CHECK(rsize == 1, "join: remote size %d", rsize);
    CHECK_RC(MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
    CHECK(got == 40 + !rank, "join: got %d", got);
    CHECK_RC(MPI_Comm_disconnect(&ic));
}

static void spawn_missing(void)
{
    MPI_Comm ic;
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int errs4[3] = {0, 0, 0};
    int rc = MPI_Comm_spawn("/nonexistent/ferry-no-such-program", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0,
                            MPI_COMM_WORLD, &ic, errs4), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN, "spawning a missing program: %s", tc_errstr(rc));
    CHECK(errs4[0] == MPI_ERR_SPAWN && errs4[2] == MPI_ERR_SPAWN, "errcodes %d %d", errs4[0], errs4[2]);
    CHECK(ic == MPI_COMM_NULL, "failed spawn gave a communicator");
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "child") == 0 || strcmp(argv[1], "multi") == 0))
        return child(argc, argv);
    /* nocma: the parents never pull single copy (FERRY_CMA=0 read at their
     * MPI_Init), their children still do: both paths across the worlds */
    if (argc > 1 && strcmp(argv[1], "nocma") == 0)
        setenv("FERRY_CMA", "0", 1);
    tc_init(&argc, &argv, &rank, &size);
    static char exe[4096];   /* an absolute path: the wdir of step 3 must not matter */
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(el > 0, "readlink /proc/self/exe");
    argv[0] = exe;
    MPI_Comm parent, ic;
    CHECK_RC(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "the job's MPI_Comm_get_parent is not MPI_COMM_NULL");

    /* 2. */
    char nparents[16];
    snprintf(nparents, sizeof nparents, "%d", size);
    char *args[] = {"child", nparents, NULL};
    int errs[2] = {-1, -1};
    CHECK_RC(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, errs));
    CHECK(errs[0] == MPI_SUCCESS && errs[1] == MPI_SUCCESS, "errcodes %d %d", errs[0], errs[1]);
    int inter = 0, rsize = 0;
    CHECK_RC(MPI_Comm_test_inter(ic, &inter));
    CHECK_RC(MPI_Comm_remote_size(ic, &rsize));
    CHECK(inter && rsize == 2, "spawn: inter %d, remote size %d", inter, rsize);
    exchange(ic, 0);
    inter_colls(ic, 0);
    merged(ic, 0);
    CHECK_RC(MPI_Comm_disconnect(&ic));

    /* 3. */
    char dir[4096], *base = strrchr(argv[0], '/');
    snprintf(dir, sizeof dir, "%.*s", (int)(base - argv[0]), argv[0]);
    char *cmds[2] = {tc_is_open_mpi() ? argv[0] : base + 1, argv[0]};   /* Open MPI 4.1 ignores "path" */
    char *a0[] = {"multi", "0", NULL}, *a1[NMANY + 3] = {"multi", "1"};
    for (int i = 0; i < NMANY; i++)
        a1[2 + i] = many_arg(i);
    char **argvs[2] = {a0, a1};
    int np[2] = {1, 2};
    MPI_Info infos[2];
    CHECK_RC(MPI_Info_create(&infos[0]));
    char path[4200];
    snprintf(path, sizeof path, "/nonexistent:%s:/usr/bin", dir);
    CHECK_RC(MPI_Info_set(infos[0], "path", path));
    CHECK_RC(MPI_Info_create(&infos[1]));
    CHECK_RC(MPI_Info_set(infos[1], "wdir", "/tmp"));
    int errs3[3];
    CHECK_RC(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, size - 1, MPI_COMM_WORLD, &ic, errs3));
    CHECK_RC(MPI_Info_free(&infos[0]));
    CHECK_RC(MPI_Info_free(&infos[1]));
    CHECK_RC(MPI_Comm_remote_size(ic, &rsize));
    CHECK(rsize == 3, "spawn_multiple: remote size %d", rsize);
    if (rank == 0) {
        int seen = 0;
        for (int i = 0; i < 3; i++) {
            int msg[2];
            MPI_Status st;
            CHECK_RC(MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, 7, ic, &st));
            CHECK(msg[1] == st.MPI_SOURCE && msg[0] == (msg[1] >= 1), "multi child %d says appnum %d, rank %d",
                  st.MPI_SOURCE, msg[0], msg[1]);
            seen |= 1 << msg[1];
        }
        CHECK(seen == 7, "spawn_multiple: heard from 0x%x", seen);
    }
    CHECK_RC(MPI_Comm_disconnect(&ic));

    /* 4. (Open MPI 4.1 aborts the job instead) */
    if (!tc_is_open_mpi())
        spawn_missing();

    /* 5., 6. */
    if (size >= 2) {
        ports();
        join();
    }
    return tc_finish("dyn_spawn");
}
