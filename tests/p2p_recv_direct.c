/* p2p_recv_direct: blocking receives that may take their message straight
 * from the sender's ring (Ferry's recv_now) must obey every matching rule.
 *
 * A  an earlier posted Irecv (MPI_ANY_SOURCE) gets the first message, the
 *    blocking MPI_Recv after it the second -- not the other way round.
 * B  the next message from the source has another tag: the receive skips it
 *    (it stays for the later receive of that tag).
 * C  status of an MPI_ANY_TAG receive: source, tag and count right, and
 *    MPI_ERROR left as the caller set it (MPI_Recv does not set it).
 * D  a message longer than the buffer: MPI_ERR_TRUNCATE (errors return),
 *    and the message after it arrives intact.
 * E  a strided receive type: the bytes land at the type's positions only.
 * F  ping-pong over sizes 0 B .. 4 KiB: every byte of every reply checked.
 * Pairs are (2k, 2k+1), rank 2k sending once the receiver says it is ready
 * (B-E); an odd rank out pairs with itself (Isends to itself, then the
 * receives).
 */
#include "common.h"

static int rank, size;

static void wait_all(int n, MPI_Request *rq)
{
    CHECK_RC(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
}

/* Fill buf with this rank's pattern for salt and Isend it. */
static void isend_filled(unsigned char *buf, int n, uint64_t salt, int to, int tag, MPI_Comm comm, MPI_Request *rq)
{
    tc_fill(buf, (size_t)n, rank, salt);
    CHECK_RC(MPI_Isend(buf, n, MPI_BYTE, to, tag, comm, rq));
}

/* The receiver tells the sender it is about to receive, so that its queues
 * are empty and the message arrives while it waits (the case the fast path
 * takes); with itself as partner there is nothing to wait for. */
static void ready(int partner, int sends, int self)
{
    char t = 0;
    if (self)
        return;
    if (sends)
        CHECK_RC(MPI_Recv(&t, 1, MPI_CHAR, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    else
        CHECK_RC(MPI_Send(&t, 1, MPI_CHAR, partner, 99, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    int partner = (rank % 2 == 0) ? rank + 1 : rank - 1;
    if (partner >= size)
        partner = rank;
    int self = partner == rank;
    int sends = self || rank % 2 == 0, recvs = self || rank % 2 == 1;
    int src = self ? rank : partner, sender = sends ? rank : partner;
    unsigned char sb[4][64], rb[4][64];
    MPI_Request rq[4];

    /* A: posted Irecv first */
    MPI_Request pre = MPI_REQUEST_NULL;
    if (recvs)
        CHECK_RC(MPI_Irecv(rb[0], 64, MPI_BYTE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &pre));
    if (sends) {
        isend_filled(sb[0], 24, 1, partner, 5, MPI_COMM_WORLD, &rq[0]);
        isend_filled(sb[1], 24, 2, partner, 5, MPI_COMM_WORLD, &rq[1]);
    }
    if (recvs) {
        CHECK_RC(MPI_Recv(rb[1], 64, MPI_BYTE, src, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Wait(&pre, MPI_STATUS_IGNORE));
        CHECK_PAT(rb[0], 24, sender, 1, "A: the posted Irecv gets the first message");
        CHECK_PAT(rb[1], 24, sender, 2, "A: the blocking Recv gets the second");
    }
    if (sends)
        wait_all(2, rq);

    /* B: tag 1 then tag 2 sent, tag 2 received first */
    ready(partner, sends, self);
    if (sends) {
        isend_filled(sb[0], 8, 3, partner, 1, MPI_COMM_WORLD, &rq[0]);
        isend_filled(sb[1], 8, 4, partner, 2, MPI_COMM_WORLD, &rq[1]);
    }
    if (recvs) {
        CHECK_RC(MPI_Recv(rb[1], 8, MPI_BYTE, src, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Recv(rb[0], 8, MPI_BYTE, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_PAT(rb[1], 8, sender, 4, "B: tag 2");
        CHECK_PAT(rb[0], 8, sender, 3, "B: tag 1");
    }
    if (sends)
        wait_all(2, rq);

    /* C: status of an MPI_ANY_TAG receive */
    ready(partner, sends, self);
    if (sends)
        isend_filled(sb[0], 13, 5, partner, 9, MPI_COMM_WORLD, &rq[0]);
    if (recvs) {
        MPI_Status st;
        st.MPI_ERROR = -77;
        CHECK_RC(MPI_Recv(rb[0], 64, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int n = -1;
        CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 9 && n == 13 && st.MPI_ERROR == -77,
              "C: status source %d tag %d count %d error %d, expected %d 9 13 -77", st.MPI_SOURCE, st.MPI_TAG, n,
              st.MPI_ERROR, src);
        CHECK_PAT(rb[0], 13, sender, 5, "C: payload");
    }
    if (sends)
        wait_all(1, rq);

    /* D: truncation, then the next message */
    MPI_Comm comm;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    CHECK_RC(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    ready(partner, sends, self);
    if (sends) {
        isend_filled(sb[0], 16, 6, partner, 3, comm, &rq[0]);
        isend_filled(sb[1], 8, 7, partner, 3, comm, &rq[1]);
    }
    if (recvs) {
        int rc = MPI_Recv(rb[0], 8, MPI_BYTE, src, 3, comm, MPI_STATUS_IGNORE), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "D: 16 bytes into 8: error class %d, expected MPI_ERR_TRUNCATE", cls);
        CHECK_RC(MPI_Recv(rb[1], 8, MPI_BYTE, src, 3, comm, MPI_STATUS_IGNORE));
        CHECK_PAT(rb[1], 8, sender, 7, "D: the message after the truncated one");
    }
    if (sends)
        wait_all(2, rq);
    CHECK_RC(MPI_Comm_free(&comm));

    /* E: contiguous send, strided receive */
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(6, 1, 2, MPI_INT, &vec));
    CHECK_RC(MPI_Type_commit(&vec));
    int ints[6], got[12];
    ready(partner, sends, self);
    if (sends) {
        for (int i = 0; i < 6; i++)
            ints[i] = 1000 * rank + i;
        CHECK_RC(MPI_Isend(ints, 6, MPI_INT, partner, 4, MPI_COMM_WORLD, &rq[0]));
    }
    if (recvs) {
        for (int i = 0; i < 12; i++)
            got[i] = -1;
        CHECK_RC(MPI_Recv(got, 1, vec, src, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 12; i++)
            CHECK(got[i] == (i % 2 ? -1 : 1000 * sender + i / 2), "E: int %d is %d", i, got[i]);
    }
    if (sends)
        wait_all(1, rq);
    CHECK_RC(MPI_Type_free(&vec));

    /* F: ping-pong, every size from 0 to 4 KiB in steps, checked both ways */
    if (!self) {
        unsigned char *buf = tc_malloc(4096);
        for (int it = 0; it < 600; it++) {
            size_t n = (size_t)(it * 37) % 4097;
            if (rank % 2 == 0) {
                tc_fill(buf, n, rank, (uint64_t)it);
                CHECK_RC(MPI_Send(buf, (int)n, MPI_BYTE, partner, 6, MPI_COMM_WORLD));
                CHECK_RC(MPI_Recv(buf, 4096, MPI_BYTE, partner, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK_PAT(buf, n, partner, (uint64_t)it + 1, "F: reply %d of %zu bytes", it, n);
            } else {
                CHECK_RC(MPI_Recv(buf, 4096, MPI_BYTE, partner, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK_PAT(buf, n, partner, (uint64_t)it, "F: message %d of %zu bytes", it, n);
                tc_fill(buf, n, rank, (uint64_t)it + 1);
                CHECK_RC(MPI_Send(buf, (int)n, MPI_BYTE, partner, 6, MPI_COMM_WORLD));
            }
        }
        free(buf);
    }
    return tc_finish("p2p_recv_direct");
}
