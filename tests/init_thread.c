/* init_thread: MPI_Init_thread and the thread level it reports.
 *
 * usage: init_thread single|funneled|serialized|multiple   (default multiple)
 *
 * Checks provided is a valid level, MPI_Query_thread agrees, MPI_Is_thread_main
 * is true in the main thread.  Then the claimed level is held to its promise:
 *   >= FUNNELED:   the main thread communicates while other threads run.
 *   >= SERIALIZED: a second thread makes MPI calls (main thread joined), a
 *                  request started in one thread is completed in the other,
 *                  and MPI_Is_thread_main is false there.
 *   MULTIPLE:      4 threads per rank exchange messages concurrently with
 *                  their partner threads (blocking and nonblocking, self
 *                  messages for 1 rank) plus concurrent MPI_Iprobe.
 * A library that claims a level it does not implement fails (data corruption,
 * crash or hang -> ctest timeout).
 */
#include "common.h"
#include <pthread.h>

#define NTHREADS 4

static int rank, size;
static int iters;

static const char *lvlname(int l)
{
    return l == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
           : l == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
           : l == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
           : l == MPI_THREAD_MULTIPLE   ? "MPI_THREAD_MULTIPLE"
                                        : "invalid";
}

/* ---------------- FUNNELED: compute threads beside a communicating main */
static void *cruncher(void *arg)
{
    /* bounded work (no spinning: ranks may be oversubscribed) */
    size_t n = 1 << 20;
    unsigned char *b = tc_malloc(n);
    for (int k = 0; k < 4; k++) {
        tc_fill(b, n, k, (uint64_t)(uintptr_t)arg);
        CHECK(tc_check(b, n, k, (uint64_t)(uintptr_t)arg) < 0, "compute thread corrupted");
    }
    free(b);
    return NULL;
}

static void ring_exchange(int salt, size_t len)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    unsigned char *sb = tc_malloc(len), *rb = tc_malloc(len);
    tc_fill(sb, len, rank, (uint64_t)salt);
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(sb, (int)len, MPI_BYTE, to, salt, rb, (int)len, MPI_BYTE, from,
                          salt, MPI_COMM_WORLD, &st));
    CHECK_PAT(rb, len, from, (uint64_t)salt, "ring exchange salt %d", salt);
    free(sb);
    free(rb);
}

/* ---------------- SERIALIZED */
static MPI_Request ser_req;
static unsigned char ser_buf[3000];
static void *serialized_worker(void *arg)
{
    (void)arg;
    int flag = -1;
    CHECK_RC(MPI_Is_thread_main(&flag));
    CHECK(flag == 0, "MPI_Is_thread_main true in a non-main thread");
    ring_exchange(21, 70000);
    /* start a receive here, the main thread completes it */
    int from = (rank + size - 1) % size;
    CHECK_RC(MPI_Irecv(ser_buf, sizeof ser_buf, MPI_BYTE, from, 22, MPI_COMM_WORLD, &ser_req));
    return NULL;
}

/* ---------------- MULTIPLE */
struct targ {
    int t;
};
static void *multiple_worker(void *arg)
{
    int t = ((struct targ *)arg)->t;
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int tag = 100 + t;
    size_t lens[3] = {8, 1500, 40000};
    unsigned char *sb = tc_malloc(40000), *rb = tc_malloc(40000);
    for (int i = 0; i < iters; i++) {
        size_t len = lens[i % 3];
        uint64_t salt = (uint64_t)t * 100000 + (uint64_t)i;
        tc_fill(sb, len, rank, salt);
        MPI_Request rq[2];
        MPI_Status st[2];
        if (i % 2 == 0) {
            CHECK_RC(MPI_Irecv(rb, 40000, MPI_BYTE, from, tag, MPI_COMM_WORLD, &rq[0]));
            CHECK_RC(MPI_Isend(sb, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[1]));
            CHECK_RC(MPI_Waitall(2, rq, st));
        } else {
            CHECK_RC(MPI_Sendrecv(sb, (int)len, MPI_BYTE, to, tag, rb, 40000, MPI_BYTE,
                                  from, tag, MPI_COMM_WORLD, &st[0]));
        }
        CHECK(st[0].MPI_SOURCE == from && st[0].MPI_TAG == tag, "thread %d: source %d tag %d",
              t, st[0].MPI_SOURCE, st[0].MPI_TAG);
        CHECK(tc_count(&st[0], MPI_BYTE) == (int)len, "thread %d iter %d: count %d != %zu", t,
              i, tc_count(&st[0], MPI_BYTE), len);
        CHECK_PAT(rb, len, from, salt, "thread %d iteration %d", t, i);
        if (i % 16 == 0) { /* a probe for a tag nobody sends */
            int flag = 1;
            CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &flag,
                                MPI_STATUS_IGNORE));
            CHECK(flag == 0, "thread %d: MPI_Iprobe found a message with unused tag", t);
        }
    }
    free(sb);
    free(rb);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : "multiple";
    int required = !strcmp(want, "single")       ? MPI_THREAD_SINGLE
                   : !strcmp(want, "funneled")   ? MPI_THREAD_FUNNELED
                   : !strcmp(want, "serialized") ? MPI_THREAD_SERIALIZED
                   : !strcmp(want, "multiple")   ? MPI_THREAD_MULTIPLE
                                                 : -1;
    CHECK(required != -1, "unknown level '%s'", want);
    int provided = -12345;
    CHECK_RC(MPI_Init_thread(&argc, &argv, required, &provided));
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size));
    tc_rank_ = rank;
    tc_size_ = size;
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
              provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
          "MPI_Init_thread provided invalid level %d", provided);
    int q = -1;
    CHECK_RC(MPI_Query_thread(&q));
    CHECK(q == provided, "MPI_Query_thread %d != provided %d", q, provided);
    int flag = -1;
    CHECK_RC(MPI_Is_thread_main(&flag));
    CHECK(flag == 1, "MPI_Is_thread_main false in the main thread");
    int init = 0;
    CHECK_RC(MPI_Initialized(&init));
    CHECK(init == 1, "MPI_Initialized false after MPI_Init_thread");

    iters = size > 2 ? 40 : 200;
    ring_exchange(1, 100);

    if (provided >= MPI_THREAD_FUNNELED) {
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            CHECK(pthread_create(&th[i], NULL, cruncher, (void *)(uintptr_t)(i + 1)) == 0,
                  "pthread_create");
        for (int k = 0; k < 10; k++)
            ring_exchange(10 + k, k % 2 ? 300000 : 64);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
    }

    if (provided >= MPI_THREAD_SERIALIZED) {
        pthread_t th;
        CHECK(pthread_create(&th, NULL, serialized_worker, NULL) == 0, "pthread_create");
        pthread_join(th, NULL);
        /* the Irecv the worker posted is completed here */
        unsigned char sb[3000];
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        tc_fill(sb, sizeof sb, rank, 22);
        CHECK_RC(MPI_Send(sb, sizeof sb, MPI_BYTE, to, 22, MPI_COMM_WORLD));
        MPI_Status st;
        CHECK_RC(MPI_Wait(&ser_req, &st));
        CHECK(ser_req == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
        CHECK_PAT(ser_buf, sizeof ser_buf, from, 22, "request started in other thread");
    }

    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t th[NTHREADS];
        struct targ a[NTHREADS];
        for (int t = 0; t < NTHREADS; t++) {
            a[t].t = t;
            CHECK(pthread_create(&th[t], NULL, multiple_worker, &a[t]) == 0, "pthread_create");
        }
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
    }

    ring_exchange(2, 100);
    char summary[200];
    snprintf(summary, sizeof summary, "init_thread (requested %s, provided %s)",
             lvlname(required), lvlname(provided));
    return tc_finish(summary);
}
