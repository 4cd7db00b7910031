/* p2p_probe: MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv,
 * MPI_Imrecv.
 *
 * - Probe reports source/tag/count of the earliest matching message (sizes
 *   0 .. 1 MiB+1, i.e. also rendezvous messages whose data has not moved),
 *   the following Recv gets exactly that message; Probe does not consume.
 * - Iprobe polled until it finds a message (progress, no sleeps); Iprobe for a
 *   tag nobody uses is false.
 * - ANY_SOURCE / ANY_TAG probing of messages from all ranks, then receiving
 *   exactly the probed (source, tag).
 * - Mprobe removes the message from matching: with two messages of the same
 *   (source, tag) queued, Mprobe takes the first, a Probe/Recv then sees the
 *   second, and Mrecv of the handle still delivers the first.  The handle
 *   becomes MPI_MESSAGE_NULL.
 * - Improbe polling, Imrecv + Wait / Test, Mprobe with ANY_SOURCE.
 * - MPI_PROC_NULL: Mprobe/Improbe give MPI_MESSAGE_NO_PROC, Mrecv on it
 *   returns at once with the null-process status.
 * - A rank's message to itself (Issend, eager and rendezvous sizes,
 *   contiguous and strided on either side): the receive that matches it
 *   (Imrecv after Mprobe, Irecv of the queued message, and an Irecv posted
 *   before the Issend) has its data at the first Test (up to 80 KB; MPICH
 *   4.0.2 with UCX leaves larger ones to progress), as
 *   under MPICH: both buffers are in this process, so nothing waits for a
 *   transfer. mpi4py's pkl5 test drops such a request after one Test and
 *   frees its buffer; Ferry wrote into it later, through its ring to itself.
 */
#include "common.h"

static int rank, size;

static const size_t lens[] = {0, 1, 100, 4097, 65537, 1048577};
#define NL (sizeof lens / sizeof lens[0])

static void probe_then_recv(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    unsigned char *sb = tc_malloc((size_t)1048577 * 2), *rb = tc_malloc(1048577);
    MPI_Request rq[NL];
    /* all messages in flight, same tag: probes must report them in order */
    size_t off = 0;
    for (size_t i = 0; i < NL; i++) {
        tc_fill(sb + off, lens[i], rank, 300 + i);
        CHECK_RC(MPI_Isend(sb + off, (int)lens[i], MPI_BYTE, to, 30, MPI_COMM_WORLD, &rq[i]));
        off += lens[i];
    }
    for (size_t i = 0; i < NL; i++) {
        MPI_Status st;
        int c = -1;
        for (int k = 0; k < 2; k++) { /* probing twice does not consume */
            CHECK_RC(MPI_Probe(from, 30, MPI_COMM_WORLD, &st));
            CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &c));
            CHECK(c == (int)lens[i] && st.MPI_SOURCE == from && st.MPI_TAG == 30,
                  "Probe #%zu: count %d source %d tag %d, expected %zu bytes from %d", i, c,
                  st.MPI_SOURCE, st.MPI_TAG, lens[i], from);
        }
        memset(rb, 0, lens[i]);
        CHECK_RC(MPI_Recv(rb, c, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
        CHECK_PAT(rb, lens[i], from, 300 + i, "probed message #%zu", i);
    }
    CHECK_RC(MPI_Waitall((int)NL, rq, MPI_STATUSES_IGNORE));

    /* Iprobe polling */
    int flag = 1;
    CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 31999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0, "Iprobe found a message with a tag nobody sent");
    tc_fill(sb, 65537, rank, 31);
    CHECK_RC(MPI_Isend(sb, 65537, MPI_BYTE, to, 31, MPI_COMM_WORLD, &rq[0]));
    MPI_Status st;
    flag = 0;
    long polls = 0;
    while (!flag) {
        CHECK_RC(MPI_Iprobe(from, 31, MPI_COMM_WORLD, &flag, &st));
        polls++;
    }
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 31 && tc_count(&st, MPI_BYTE) == 65537,
          "Iprobe status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG,
          tc_count(&st, MPI_BYTE));
    CHECK_RC(MPI_Recv(rb, 65537, MPI_BYTE, from, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_PAT(rb, 65537, from, 31, "Iprobed message");
    CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    free(sb);
    free(rb);
}

static void probe_wildcards(void)
{
    /* every rank sends one message with tag 40+rank to every rank */
    int *sv = tc_malloc(sizeof(int) * 2 * (size_t)size);
    MPI_Request *rq = tc_malloc(sizeof(MPI_Request) * (size_t)size);
    for (int d = 0; d < size; d++) {
        sv[2 * d] = rank;
        sv[2 * d + 1] = d;
        CHECK_RC(MPI_Isend(&sv[2 * d], 2, MPI_INT, d, 40 + rank, MPI_COMM_WORLD, &rq[d]));
    }
    size_t nseen = size > 0 ? (size_t)size : 1;   /* (a size GCC can tell is not negative) */
    char *seen = tc_malloc(nseen);
    memset(seen, 0, nseen);
    for (int n = 0; n < size; n++) {
        MPI_Status st;
        int v[2] = {-1, -1};
        CHECK_RC(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int s = st.MPI_SOURCE;
        CHECK(s >= 0 && s < size && !seen[s] && st.MPI_TAG == 40 + s,
              "wildcard probe: source %d tag %d", s, st.MPI_TAG);
        CHECK(tc_count(&st, MPI_INT) == 2, "wildcard probe count %d", tc_count(&st, MPI_INT));
        CHECK_RC(MPI_Recv(v, 2, MPI_INT, s, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(v[0] == s && v[1] == rank, "received (%d,%d) after probing source %d", v[0], v[1], s);
        seen[s] = 1;
    }
    CHECK_RC(MPI_Waitall(size, rq, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    free(seen);
    free(sv);
    free(rq);
}

static void matched_probe(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    size_t big = 300007;
    unsigned char *sb = tc_malloc(big * 2), *rb = tc_malloc(big);
    for (int variant = 0; variant < 4; variant++) {
        /* two messages with the same source and tag: first small, second big
         * (variant odd: first big, second small) */
        size_t l1 = variant % 2 ? big : 33, l2 = variant % 2 ? 33 : big;
        int tag = 50 + variant;
        MPI_Request rq[2];
        tc_fill(sb, l1, rank, 500 + (uint64_t)variant * 2);
        tc_fill(sb + big, l2, rank, 501 + (uint64_t)variant * 2);
        CHECK_RC(MPI_Isend(sb, (int)l1, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_RC(MPI_Isend(sb + big, (int)l2, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[1]));

        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        if (variant < 2) {
            CHECK_RC(MPI_Mprobe(variant ? MPI_ANY_SOURCE : from, tag, MPI_COMM_WORLD, &msg, &st));
        } else {
            int flag = 0;
            while (!flag)
                CHECK_RC(MPI_Improbe(from, variant == 3 ? MPI_ANY_TAG : tag, MPI_COMM_WORLD,
                                     &flag, &msg, &st));
        }
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "no message handle");
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag && tc_count(&st, MPI_BYTE) == (int)l1,
              "variant %d: matched probe source %d tag %d count %d, expected %zu", variant,
              st.MPI_SOURCE, st.MPI_TAG, tc_count(&st, MPI_BYTE), l1);
        /* the first message is out of the queue: a probe now sees the second */
        MPI_Status st2;
        CHECK_RC(MPI_Probe(from, tag, MPI_COMM_WORLD, &st2));
        CHECK(tc_count(&st2, MPI_BYTE) == (int)l2,
              "variant %d: Probe after Mprobe saw %d bytes, expected the second message (%zu)",
              variant, tc_count(&st2, MPI_BYTE), l2);
        /* receive the second one first with a plain Recv */
        CHECK_RC(MPI_Recv(rb, (int)big, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st2));
        CHECK(tc_count(&st2, MPI_BYTE) == (int)l2, "Recv after Mprobe got %d bytes",
              tc_count(&st2, MPI_BYTE));
        CHECK_PAT(rb, l2, from, 501 + (uint64_t)variant * 2, "second message, variant %d", variant);
        /* then the matched first one */
        memset(rb, 0, big);
        if (variant % 2 == 0) {
            CHECK_RC(MPI_Mrecv(rb, (int)l1, MPI_BYTE, &msg, &st2));
        } else {
            MPI_Request r;
            CHECK_RC(MPI_Imrecv(rb, (int)big, MPI_BYTE, &msg, &r));
            CHECK(msg == MPI_MESSAGE_NULL, "Imrecv did not null the message handle");
            if (variant == 1)
                CHECK_RC(MPI_Wait(&r, &st2));
            else {
                int flag = 0;
                while (!flag)
                    CHECK_RC(MPI_Test(&r, &flag, &st2));
            }
        }
        CHECK(msg == MPI_MESSAGE_NULL, "message handle not MPI_MESSAGE_NULL after receive");
        CHECK(st2.MPI_SOURCE == from && st2.MPI_TAG == tag && tc_count(&st2, MPI_BYTE) == (int)l1,
              "Mrecv status source %d tag %d count %d", st2.MPI_SOURCE, st2.MPI_TAG,
              tc_count(&st2, MPI_BYTE));
        CHECK_PAT(rb, l1, from, 500 + (uint64_t)variant * 2, "Mrecv'd first message, variant %d",
                  variant);
        CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    }
    /* zero-byte message via Mprobe/Mrecv */
    {
        MPI_Request r;
        MPI_Message msg;
        MPI_Status st;
        CHECK_RC(MPI_Isend(NULL, 0, MPI_BYTE, to, 60, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Mprobe(from, 60, MPI_COMM_WORLD, &msg, &st));
        CHECK(tc_count(&st, MPI_BYTE) == 0, "zero-byte Mprobe count %d", tc_count(&st, MPI_BYTE));
        CHECK_RC(MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, &st));
        CHECK(st.MPI_SOURCE == from, "zero-byte Mrecv source %d", st.MPI_SOURCE);
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    free(sb);
    free(rb);
}

static void proc_null_probes(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int buf = 5, flag = 0;
    CHECK_RC(MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
          "Mprobe(MPI_PROC_NULL) status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK_RC(MPI_Mrecv(&buf, 1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) left handle %s",
          msg == MPI_MESSAGE_NO_PROC ? "MPI_MESSAGE_NO_PROC" : "?");
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && tc_count(&st, MPI_INT) == 0 && buf == 5,
          "Mrecv(MPI_MESSAGE_NO_PROC): source %d count %d buf %d", st.MPI_SOURCE,
          tc_count(&st, MPI_INT), buf);
    CHECK_RC(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag == 1 && msg == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL): flag %d", flag);
    MPI_Request r;
    CHECK_RC(MPI_Imrecv(&buf, 1, MPI_INT, &msg, &r));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && buf == 5, "Imrecv(MPI_MESSAGE_NO_PROC) source %d",
          st.MPI_SOURCE);
}

/* Check the self message of n ints landed in rb (stride rs ints apart). */
static void check_self(const int *rb, int n, int rs, int salt, const char *how)
{
    for (int i = 0; i < n; i++)
        CHECK(rb[(size_t)i * (size_t)rs] == salt + i, "%s: n %d element %d is %d, expected %d", how, n, i,
              rb[(size_t)i * (size_t)rs], salt + i);
}

static void self_messages(void)
{
    static const int ns[] = {1, 1000, 20000, 300000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int n = ns[k];
        for (int layout = 0; layout < 4; layout++) {
            /* bit 0: strided send, bit 1: strided receive (every second int) */
            int ss = (layout & 1) ? 2 : 1, rs = (layout & 2) ? 2 : 1;
            int *sb = tc_malloc((size_t)n * 2 * sizeof(int)), *rb = tc_malloc((size_t)n * 2 * sizeof(int));
            MPI_Datatype st_t, rt_t;
            CHECK_RC(MPI_Type_vector(n, 1, ss, MPI_INT, &st_t));
            CHECK_RC(MPI_Type_vector(n, 1, rs, MPI_INT, &rt_t));
            CHECK_RC(MPI_Type_commit(&st_t));
            CHECK_RC(MPI_Type_commit(&rt_t));
            for (int how = 0; how < 3; how++) {
                int salt = 1000 * (int)k + 100 * layout + 10 * how;
                for (int i = 0; i < n; i++)
                    sb[(size_t)i * (size_t)ss] = salt + i;
                memset(rb, 0, (size_t)n * 2 * sizeof(int));
                MPI_Request sr, rr;
                MPI_Status st;
                int flag = 0;
                if (how == 2) {
                    CHECK_RC(MPI_Irecv(rb, 1, rt_t, rank, 77, MPI_COMM_WORLD, &rr));
                    CHECK_RC(MPI_Issend(sb, 1, st_t, rank, 77, MPI_COMM_WORLD, &sr));
                } else {
                    CHECK_RC(MPI_Issend(sb, 1, st_t, rank, 77, MPI_COMM_WORLD, &sr));
                    if (how == 0) {
                        MPI_Message msg;
                        CHECK_RC(MPI_Mprobe(rank, 77, MPI_COMM_WORLD, &msg, &st));
                        CHECK_RC(MPI_Imrecv(rb, 1, rt_t, &msg, &rr));
                    } else {
                        /* the message is queued once Iprobe sees it */
                        while (!flag)
                            CHECK_RC(MPI_Iprobe(rank, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                        CHECK_RC(MPI_Irecv(rb, 1, rt_t, rank, 77, MPI_COMM_WORLD, &rr));
                    }
                }
                flag = 0;
                CHECK_RC(MPI_Test(&rr, &flag, &st));
                static const char *hows[] = {"Mprobe+Imrecv", "Iprobe+Irecv", "Irecv+Issend"};
                /* (MPICH 4.0.2 with UCX leaves 1.2 MB self messages to progress) */
                if (n > 20000 && !flag)
                    CHECK_RC(MPI_Wait(&rr, &st));
                else
                    CHECK(flag, "%s from self, %d ints, layout %d: not complete at the first Test", hows[how], n,
                          layout);
                CHECK(st.MPI_SOURCE == rank && st.MPI_TAG == 77 && tc_count(&st, MPI_INT) == n,
                      "%s from self: status source %d tag %d count %d", hows[how], st.MPI_SOURCE, st.MPI_TAG,
                      tc_count(&st, MPI_INT));
                check_self(rb, n, rs, salt, hows[how]);
                CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
            }
            CHECK_RC(MPI_Type_free(&st_t));
            CHECK_RC(MPI_Type_free(&rt_t));
            free(sb);
            free(rb);
        }
    }
    /* a truncated self message: the error, and the sender completes */
    int big[5000] = {0}, small[100];
    MPI_Request sr, rr;
    MPI_Status st;
    int flag = 0;
    CHECK_RC(MPI_Issend(big, 5000, MPI_INT, rank, 78, MPI_COMM_WORLD, &sr));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_RC(MPI_Irecv(small, 100, MPI_INT, rank, 78, MPI_COMM_WORLD, &rr));
    int rc = MPI_Test(&rr, &flag, &st);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(flag && cls == MPI_ERR_TRUNCATE, "truncated self message: flag %d error class %d", flag, cls);
    CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    probe_then_recv();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    probe_wildcards();
    matched_probe();
    proc_null_probes();
    self_messages();
    return tc_finish("p2p_probe");
}
