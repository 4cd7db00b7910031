/* thread_multiple: MPI_THREAD_MULTIPLE under load, 4 threads per rank.
 *
 * Every thread has its own communicator (dup'd serially by the main thread)
 * and runs on it, at the same time as the other threads do on theirs:
 *   - communicator creation: Comm_dup and Comm_split of its own communicator,
 *     Comm_create_group on MPI_COMM_WORLD with its own tag, an
 *     intercommunicator between the two halves of its communicator and its
 *     merge (concurrent context-id agreements must give distinct ids:
 *     traffic on the new communicators with the same tags then checks
 *     nothing crosses);
 *   - collectives, blocking and nonblocking: Bcast, Allreduce (a vector long
 *     enough for the large-message algorithms), Alltoall, Barrier, Iallreduce
 *     and Ibarrier completed by MPI_Test loops, results checked per element;
 *   - point-to-point on its communicator: a ring of rendezvous-sized
 *     messages and Mprobe/Mrecv of a message whose size the receiver learns;
 *   - one-sided: a window per thread, Put to the next rank between fences.
 * Then two exchanges that need the lock handed over while a call waits:
 *   - thread 0 blocks in MPI_Recv for a message that thread 1 of the same
 *     process sends once thread 0 is about to call MPI_Recv (a flag raised
 *     just before the call, so thread 0 is usually waiting already, and
 *     thread 1's MPI_Send only runs if that wait lets it in);
 *   - thread 2 waits (MPI_Wait) for a receive that thread 3 of the same
 *     process matches with MPI_Ssend, and thread 3 frees nothing of it.
 * A library that does not hold up MPI_THREAD_MULTIPLE corrupts data, fails
 * a check, crashes or hangs (ctest timeout).
 */
#include "common.h"
#include <pthread.h>
#include <stdatomic.h>

#define NT 4
#define VEC 20000   /* Allreduce ints: 80 KB, past the small-vector algorithms */
#define RING 70000  /* ring message bytes: rendezvous */
#define ROUNDS 3

static int rank, size;
static MPI_Comm tcomm[NT];
static atomic_int recv_posted;   /* thread 0 is about to block in MPI_Recv */

static void collectives(int t, MPI_Comm c, int round)
{
    int r, n;
    CHECK_RC(MPI_Comm_rank(c, &r));
    CHECK_RC(MPI_Comm_size(c, &n));
    int salt = t * 100 + round;

    int b[8];
    for (int i = 0; i < 8; i++)
        b[i] = r == n - 1 ? salt * 8 + i : -1;
    CHECK_RC(MPI_Bcast(b, 8, MPI_INT, n - 1, c));
    for (int i = 0; i < 8; i++)
        CHECK(b[i] == salt * 8 + i, "thread %d: bcast[%d] = %d", t, i, b[i]);

    int *v = tc_malloc(VEC * sizeof(int)), *s = tc_malloc(VEC * sizeof(int));
    for (int i = 0; i < VEC; i++)
        v[i] = (r + 1) * (i % 97) + salt;
    CHECK_RC(MPI_Allreduce(v, s, VEC, MPI_INT, MPI_SUM, c));
    for (int i = 0; i < VEC; i++) {
        int want = n * (n + 1) / 2 * (i % 97) + n * salt;
        CHECK(s[i] == want, "thread %d: allreduce[%d] = %d, expected %d", t, i, s[i], want);
    }

    int *a = tc_malloc((size_t)n * 2 * sizeof(int)), *ar = tc_malloc((size_t)n * 2 * sizeof(int));
    for (int j = 0; j < n; j++) {
        a[2 * j] = r * 1000 + j;
        a[2 * j + 1] = salt;
    }
    CHECK_RC(MPI_Alltoall(a, 2, MPI_INT, ar, 2, MPI_INT, c));
    for (int j = 0; j < n; j++)
        CHECK(ar[2 * j] == j * 1000 + r && ar[2 * j + 1] == salt, "thread %d: alltoall from %d: %d %d", t, j,
              ar[2 * j], ar[2 * j + 1]);
    CHECK_RC(MPI_Barrier(c));

    /* nonblocking, completed by test loops (the other threads' calls run
     * between the tests) */
    MPI_Request rq[2];
    int x = r + salt, sum = -1;
    CHECK_RC(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c, &rq[0]));
    CHECK_RC(MPI_Ibarrier(c, &rq[1]));
    for (int done = 0; !done;)
        CHECK_RC(MPI_Testall(2, rq, &done, MPI_STATUSES_IGNORE));
    CHECK(sum == n * (n - 1) / 2 + n * salt, "thread %d: iallreduce %d", t, sum);
    free(v);
    free(s);
    free(a);
    free(ar);
}

static void point_to_point(int t, MPI_Comm c, int round)
{
    int r, n;
    CHECK_RC(MPI_Comm_rank(c, &r));
    CHECK_RC(MPI_Comm_size(c, &n));
    int to = (r + 1) % n, from = (r + n - 1) % n;
    uint64_t salt = (uint64_t)(t * 100 + round);
    unsigned char *sb = tc_malloc(RING), *rb = tc_malloc(RING);
    tc_fill(sb, RING, r, salt);
    MPI_Request rq[2];
    CHECK_RC(MPI_Irecv(rb, RING, MPI_BYTE, from, 5, c, &rq[0]));
    CHECK_RC(MPI_Isend(sb, RING, MPI_BYTE, to, 5, c, &rq[1]));
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK_PAT(rb, RING, from, salt, "thread %d ring", t);

    /* a message whose size only its sender knows: Mprobe, then Mrecv */
    int len = 100 + 37 * t + round;
    tc_fill(sb, (size_t)len, r, salt + 1);
    CHECK_RC(MPI_Isend(sb, len, MPI_BYTE, to, 6, c, &rq[1]));
    MPI_Message m;
    MPI_Status st;
    CHECK_RC(MPI_Mprobe(from, 6, c, &m, &st));
    int got;
    CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == len, "thread %d: mprobe count %d, expected %d", t, got, len);
    CHECK_RC(MPI_Mrecv(rb, got, MPI_BYTE, &m, &st));
    CHECK_PAT(rb, (size_t)len, from, salt + 1, "thread %d mrecv", t);
    CHECK_RC(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    free(sb);
    free(rb);
}

static void one_sided(int t, MPI_Comm c)
{
    int r, n;
    CHECK_RC(MPI_Comm_rank(c, &r));
    CHECK_RC(MPI_Comm_size(c, &n));
    int *mem;
    MPI_Win w;
    CHECK_RC(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, c, &mem, &w));
    for (int i = 0; i < 64; i++)
        mem[i] = -1;
    int src[64];
    for (int i = 0; i < 64; i++)
        src[i] = r * 10000 + t * 100 + i;
    CHECK_RC(MPI_Win_fence(0, w));
    CHECK_RC(MPI_Put(src, 64, MPI_INT, (r + 1) % n, 0, 64, MPI_INT, w));
    CHECK_RC(MPI_Win_fence(0, w));
    int from = (r + n - 1) % n;
    for (int i = 0; i < 64; i++)
        CHECK(mem[i] == from * 10000 + t * 100 + i, "thread %d: window[%d] = %d", t, i, mem[i]);
    CHECK_RC(MPI_Win_free(&w));
}

/* New communicators made by all threads at once; their traffic uses the
 * same tags, so ids two threads share would mix it up. */
static void creation(int t, MPI_Comm c)
{
    MPI_Comm d, sp, cg;
    CHECK_RC(MPI_Comm_dup(c, &d));
    int r;
    CHECK_RC(MPI_Comm_rank(c, &r));
    CHECK_RC(MPI_Comm_split(c, r % 2, -r, &sp));
    MPI_Group wg, g;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int range[1][3] = {{size - 1, 0, -1}};   /* every rank, reversed */
    CHECK_RC(MPI_Group_range_incl(wg, 1, range, &g));
    CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, g, 1000 + t, &cg));
    MPI_Comm cs[3] = {d, sp, cg};
    for (int k = 0; k < 3; k++) {
        int cr, cn;
        CHECK_RC(MPI_Comm_rank(cs[k], &cr));
        CHECK_RC(MPI_Comm_size(cs[k], &cn));
        int out[3] = {t, k, cr}, in[3] = {-1, -1, -1};
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv(out, 3, MPI_INT, (cr + 1) % cn, 7, in, 3, MPI_INT, MPI_ANY_SOURCE, 7, cs[k], &st));
        CHECK(in[0] == t && in[1] == k && in[2] == (cr + cn - 1) % cn,
              "thread %d: communicator %d got {%d,%d,%d} from %d: ids shared across threads?", t, k, in[0], in[1],
              in[2], st.MPI_SOURCE);
        CHECK_RC(MPI_Comm_free(&cs[k]));
    }
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Group_free(&wg));

    /* an intercommunicator between the low and high halves, and its merge */
    int n;
    CHECK_RC(MPI_Comm_size(c, &n));
    if (n < 2)
        return;
    int h = n / 2, low = r < h;
    MPI_Comm local, ic, merged;
    CHECK_RC(MPI_Comm_split(c, low, r, &local));
    CHECK_RC(MPI_Intercomm_create(local, 0, c, low ? h : 0, 50 + t, &ic));
    CHECK_RC(MPI_Intercomm_merge(ic, !low, &merged));
    int sum = -1, want = low ? (h + n - 1) * (n - h) / 2 : (h - 1) * h / 2;   /* the other half's ranks */
    CHECK_RC(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, ic));
    CHECK(sum == want, "thread %d: intercommunicator allreduce %d, expected %d", t, sum, want);
    int mr, x = r * 10 + t, y = -1;
    CHECK_RC(MPI_Comm_rank(merged, &mr));
    CHECK(mr == r, "thread %d: merged rank %d, expected %d", t, mr, r);
    CHECK_RC(MPI_Sendrecv(&x, 1, MPI_INT, (mr + 1) % n, 8, &y, 1, MPI_INT, (mr + n - 1) % n, 8, merged,
                          MPI_STATUS_IGNORE));
    CHECK(y == (mr + n - 1) % n * 10 + t, "thread %d: merged ring got %d", t, y);
    CHECK_RC(MPI_Comm_free(&merged));
    CHECK_RC(MPI_Comm_free(&ic));
    CHECK_RC(MPI_Comm_free(&local));
}

/* Exchanges within this process that need the waiting call to let the other
 * thread in. */
static void handover(int t)
{
    int x = -1;
    if (t == 0) {
        atomic_store(&recv_posted, 1);
        CHECK_RC(MPI_Recv(&x, 1, MPI_INT, 0, 77, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        CHECK(x == 4242, "thread 0: self message %d", x);
    } else if (t == 1) {
        while (!atomic_load(&recv_posted))
            ;   /* no MPI call before thread 0 blocks in MPI_Recv */
        x = 4242;
        CHECK_RC(MPI_Send(&x, 1, MPI_INT, 0, 77, MPI_COMM_SELF));
    } else if (t == 2) {
        MPI_Request rq;
        CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, 0, 78, MPI_COMM_SELF, &rq));
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(x == 4343, "thread 2: self message %d", x);
    } else {
        x = 4343;
        CHECK_RC(MPI_Ssend(&x, 1, MPI_INT, 0, 78, MPI_COMM_SELF));
    }
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int round = 0; round < ROUNDS; round++) {
        creation(t, tcomm[t]);
        collectives(t, tcomm[t], round);
        point_to_point(t, tcomm[t], round);
    }
    one_sided(t, tcomm[t]);
    handover(t);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d, not MPI_THREAD_MULTIPLE", provided);
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size));
    tc_rank_ = rank;
    for (int t = 0; t < NT; t++)
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++)
        CHECK_RC(MPI_Comm_free(&tcomm[t]));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("thread_multiple: %d ranks x %d threads OK\n", size, NT);
    CHECK_RC(MPI_Finalize());
    return 0;
}
