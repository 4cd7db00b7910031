/* p2p_cancel: MPI_Cancel of receives and MPI_Test_cancelled.
 *
 * 1 receives that nothing can match (a communicator nobody sends on; any
 *   source / any tag, specific, large counts) are cancelled: Wait or a Test
 *   loop returns, Test_cancelled is true.
 * 2 a cancelled receive does not swallow a later message: cancel, then the
 *   sender is told to send, the message is received intact by a new receive.
 * 3 of 200 posted receives the odd ones are cancelled, then 100 messages
 *   arrive: they land, in order, in the 100 remaining receives.
 * 4 cancel racing with an arrived message (Probe first): either the cancel
 *   wins and the message is still receivable, or the receive completes with
 *   the right data -- never both, never neither (sizes 8 B and 1 MiB).
 * 5 a persistent receive is started and cancelled, then started again and
 *   gets a real message.
 * 6 cancelling an already completed receive has no effect; Test_cancelled is
 *   false on normally completed receives and sends.
 */
#include "common.h"

static int rank, size, to, from;
static MPI_Comm quiet;

static void handshake(int tag)
{
    /* tell the rank that sends to me (from) that I am ready; learn that the
     * rank I send to (to) is ready */
    CHECK_RC(MPI_Sendrecv(NULL, 0, MPI_BYTE, from, tag, NULL, 0, MPI_BYTE, to, tag,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void cancelled_ok(MPI_Request *r, int use_test, const char *what)
{
    MPI_Status st;
    CHECK_RC(MPI_Cancel(r));
    if (use_test) {
        int flag = 0;
        while (!flag)
            CHECK_RC(MPI_Test(r, &flag, &st));
    } else {
        CHECK_RC(MPI_Wait(r, &st));
    }
    CHECK(*r == MPI_REQUEST_NULL, "%s: request not freed", what);
    int c = 0;
    CHECK_RC(MPI_Test_cancelled(&st, &c));
    CHECK(c == 1, "%s: unmatched receive was not cancelled", what);
}

static void unmatched(void)
{
    static char buf[1 << 20];
    MPI_Request r;
    CHECK_RC(MPI_Irecv(buf, 10, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, quiet, &r));
    cancelled_ok(&r, 0, "Irecv(ANY_SOURCE, ANY_TAG)");
    CHECK_RC(MPI_Irecv(buf, sizeof buf, MPI_BYTE, from, 3, quiet, &r));
    cancelled_ok(&r, 1, "Irecv(from, 3), 1 MiB");
    CHECK_RC(MPI_Irecv(buf, 0, MPI_BYTE, rank, 4, quiet, &r));
    cancelled_ok(&r, 0, "Irecv(self, 4), 0 bytes");
    /* several at once, completed by Waitall */
    MPI_Request rs[8];
    MPI_Status st[8];
    for (int i = 0; i < 8; i++) {
        CHECK_RC(MPI_Irecv(buf + i, 1, MPI_BYTE, i % 2 ? MPI_ANY_SOURCE : from, i, quiet, &rs[i]));
    }
    for (int i = 7; i >= 0; i--)
        CHECK_RC(MPI_Cancel(&rs[i]));
    CHECK_RC(MPI_Waitall(8, rs, st));
    for (int i = 0; i < 8; i++) {
        int c = 0;
        CHECK_RC(MPI_Test_cancelled(&st[i], &c));
        CHECK(c == 1, "Waitall: receive %d not cancelled", i);
    }
}

static void no_swallow(void)
{
    for (int big = 0; big < 2; big++) {
        size_t len = big ? 500001 : 12;
        unsigned char *sb = tc_malloc(len), *rb = tc_malloc(len);
        MPI_Request r;
        CHECK_RC(MPI_Irecv(rb, (int)len, MPI_BYTE, from, 20 + big, MPI_COMM_WORLD, &r));
        cancelled_ok(&r, big, "receive before its message was sent");
        handshake(90);
        tc_fill(sb, len, rank, 20 + (uint64_t)big);
        memset(rb, 0, len);
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv(sb, (int)len, MPI_BYTE, to, 20 + big, rb, (int)len, MPI_BYTE, from,
                              20 + big, MPI_COMM_WORLD, &st));
        int c = 1;
        CHECK_RC(MPI_Test_cancelled(&st, &c));
        CHECK(c == 0, "Test_cancelled true on a normal receive");
        CHECK_PAT(rb, len, from, 20 + (uint64_t)big, "message sent after a cancelled receive");
        free(sb);
        free(rb);
    }
}

static void half_cancelled(void)
{
    enum { N = 200 };
    int in[N], out[N / 2];
    MPI_Request r[N], s[N / 2];
    for (int i = 0; i < N; i++) {
        in[i] = -1;
        CHECK_RC(MPI_Irecv(&in[i], 1, MPI_INT, from, 30, MPI_COMM_WORLD, &r[i]));
    }
    for (int i = 1; i < N; i += 2)
        cancelled_ok(&r[i], i % 4 == 1, "one of many posted receives");
    handshake(91);
    for (int i = 0; i < N / 2; i++) {
        out[i] = rank * 1000 + i;
        CHECK_RC(MPI_Isend(&out[i], 1, MPI_INT, to, 30, MPI_COMM_WORLD, &s[i]));
    }
    MPI_Status st[N];
    CHECK_RC(MPI_Waitall(N, r, st)); /* the odd ones are already null */
    for (int i = 0; i < N; i += 2) {
        int c = 1;
        CHECK_RC(MPI_Test_cancelled(&st[i], &c));
        CHECK(c == 0, "receive %d reported cancelled", i);
        CHECK(in[i] == from * 1000 + i / 2, "receive %d got %d, expected message %d", i, in[i],
              i / 2);
    }
    for (int i = 1; i < N; i += 2)
        CHECK(in[i] == -1, "cancelled receive %d was written (%d)", i, in[i]);
    CHECK_RC(MPI_Waitall(N / 2, s, MPI_STATUSES_IGNORE));
}

static void race(void)
{
    int wins = 0, losses = 0;
    for (int k = 0; k < 6; k++) {
        size_t len = k % 2 ? 1048576 : 8;
        int tag = 40 + k;
        unsigned char *sb = tc_malloc(len), *rb = tc_malloc(len);
        tc_fill(sb, len, rank, (uint64_t)tag);
        memset(rb, 0, len);
        MPI_Request s, r;
        MPI_Status st;
        CHECK_RC(MPI_Isend(sb, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD, &s));
        CHECK_RC(MPI_Probe(from, tag, MPI_COMM_WORLD, &st));
        CHECK_RC(MPI_Irecv(rb, (int)len, MPI_BYTE, from, tag, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Cancel(&r));
        CHECK_RC(MPI_Wait(&r, &st));
        int c = -1;
        CHECK_RC(MPI_Test_cancelled(&st, &c));
        if (c) {
            wins++;
            /* cancelled: the message must still be there */
            int flag = 0;
            CHECK_RC(MPI_Iprobe(from, tag, MPI_COMM_WORLD, &flag, &st));
            CHECK(flag == 1, "cancelled receive took the message with it (%zu bytes)", len);
            CHECK_RC(MPI_Recv(rb, (int)len, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st));
        } else {
            losses++;
        }
        CHECK(st.MPI_SOURCE == from && tc_count(&st, MPI_BYTE) == (int)len,
              "race: status source %d count %d", st.MPI_SOURCE, tc_count(&st, MPI_BYTE));
        CHECK_PAT(rb, len, from, (uint64_t)tag, "race (cancel %s), %zu bytes",
                  c ? "succeeded" : "failed", len);
        CHECK_RC(MPI_Wait(&s, &st));
        c = 1;
        CHECK_RC(MPI_Test_cancelled(&st, &c));
        CHECK(c == 0, "Test_cancelled true on a completed send");
        free(sb);
        free(rb);
    }
    (void)wins;
    (void)losses;
}

static void persistent(void)
{
    int in = -1, out = rank + 500;
    MPI_Request r;
    MPI_Status st;
    CHECK_RC(MPI_Recv_init(&in, 1, MPI_INT, from, 50, MPI_COMM_WORLD, &r));
    for (int k = 0; k < 3; k++) {
        CHECK_RC(MPI_Start(&r));
        CHECK_RC(MPI_Cancel(&r));
        CHECK_RC(MPI_Wait(&r, &st));
        int c = 0;
        CHECK_RC(MPI_Test_cancelled(&st, &c));
        CHECK(c == 1, "started persistent receive not cancelled");
        CHECK(r != MPI_REQUEST_NULL, "Wait freed a persistent request");
    }
    handshake(92);
    CHECK_RC(MPI_Start(&r));
    CHECK_RC(MPI_Send(&out, 1, MPI_INT, to, 50, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r, &st));
    int c = 1;
    CHECK_RC(MPI_Test_cancelled(&st, &c));
    CHECK(c == 0 && in == from + 500, "persistent receive after cancels: cancelled %d value %d", c,
          in);
    CHECK_RC(MPI_Request_free(&r));
}

static void cancel_completed(void)
{
    int in = -1, out = rank + 600;
    MPI_Request r, s;
    MPI_Status st;
    CHECK_RC(MPI_Irecv(&in, 1, MPI_INT, from, 60, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Isend(&out, 1, MPI_INT, to, 60, MPI_COMM_WORLD, &s));
    int flag = 0;
    while (!flag)
        CHECK_RC(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Cancel(&r)); /* too late: no effect */
    CHECK_RC(MPI_Wait(&r, &st));
    int c = 1;
    CHECK_RC(MPI_Test_cancelled(&st, &c));
    CHECK(c == 0 && in == from + 600, "cancel after completion: cancelled %d value %d", c, in);
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    to = (rank + 1) % size;
    from = (rank + size - 1) % size;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &quiet));
    unmatched();
    no_swallow();
    half_cancelled();
    race();
    persistent();
    cancel_completed();
    unmatched();
    CHECK_RC(MPI_Comm_free(&quiet));
    return tc_finish("p2p_cancel");
}
