/* p2p_basic: the point-to-point calls one by one.
 *
 * all-pairs Sendrecv (incl. self), a blocking Send/Recv token ring,
 * Sendrecv_replace, zero-byte messages (also with a NULL buffer),
 * MPI_PROC_NULL for every call kind (status: MPI_PROC_NULL / MPI_ANY_TAG /
 * count 0, buffer untouched), Get_count / Get_elements / status fields with
 * wildcards and larger receive buffers, Ssend / Issend synchronous semantics
 * (an Issend cannot complete before the receive is posted), Rsend / Irsend to
 * pre-posted receives, Bsend / Ibsend with Buffer_attach / Buffer_detach
 * (Bsend is local: completes although the receive is posted only later;
 * detach hands back the buffer), Isend/Irecv completed with MPI_Test polling.
 */
#include "common.h"

static int rank, size;

static void all_pairs(void)
{
    enum { N = 37 };
    for (int d = 0; d < size; d++) {
        int to = (rank + d) % size, from = (rank - d + size) % size;
        unsigned char sb[N], rb[N + 8];
        tc_fill(sb, N, rank, 1000 + (uint64_t)d);
        memset(rb, 0xEE, sizeof rb);
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv(sb, N, MPI_BYTE, to, d, rb, N + 8, MPI_BYTE, from, d,
                              MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == d, "status source %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
        CHECK(tc_count(&st, MPI_BYTE) == N, "count %d", tc_count(&st, MPI_BYTE));
        CHECK_PAT(rb, N, from, 1000 + (uint64_t)d, "all-pairs distance %d", d);
        CHECK_BYTES(rb + N, 8, 0xEE, "bytes past the message were written");
    }
}

static void token_ring(void)
{
    int token = -1;
    if (size == 1)
        return;
    for (int round = 0; round < 5; round++) {
        if (rank == 0) {
            token = round * 100;
            CHECK_RC(MPI_Send(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
            CHECK_RC(MPI_Recv(&token, 1, MPI_INT, size - 1, 3, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
            CHECK(token == round * 100 + size - 1, "token %d after round %d", token, round);
        } else {
            CHECK_RC(MPI_Recv(&token, 1, MPI_INT, rank - 1, 3, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
            CHECK(token == round * 100 + rank - 1, "token %d at rank %d", token, rank);
            token++;
            CHECK_RC(MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD));
        }
    }
}

static void sendrecv_replace(void)
{
    enum { N = 5000 };
    int *a = tc_malloc(sizeof(int) * N);
    for (int s = 1; s <= 3; s++) {
        for (int i = 0; i < N; i++)
            a[i] = rank * 100000 + i;
        int to = (rank + s) % size, from = (rank - s % size + size) % size;
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv_replace(a, N, MPI_INT, to, 40 + s, from, 40 + s, MPI_COMM_WORLD,
                                      &st));
        CHECK(st.MPI_SOURCE == from && tc_count(&st, MPI_INT) == N,
              "Sendrecv_replace status source %d count %d", st.MPI_SOURCE,
              tc_count(&st, MPI_INT));
        for (int i = 0; i < N; i++)
            CHECK(a[i] == from * 100000 + i, "Sendrecv_replace a[%d] = %d", i, a[i]);
    }
    free(a);
}

static void zero_byte(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int dummy = 7, rb = 42;
    MPI_Status st;
    MPI_Request rq[2];
    /* blocking, with a real buffer */
    CHECK_RC(MPI_Sendrecv(&dummy, 0, MPI_INT, to, 50, &rb, 1, MPI_INT, from, 50, MPI_COMM_WORLD,
                          &st));
    CHECK(tc_count(&st, MPI_INT) == 0 && st.MPI_SOURCE == from && st.MPI_TAG == 50,
          "zero-byte: count %d source %d tag %d", tc_count(&st, MPI_INT), st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK(rb == 42, "zero-byte message modified the buffer");
    /* NULL buffers with count 0, nonblocking, wildcard receive */
    CHECK_RC(MPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 51, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Isend(NULL, 0, MPI_BYTE, to, 51, MPI_COMM_WORLD, &rq[1]));
    MPI_Status sts[2];
    CHECK_RC(MPI_Waitall(2, rq, sts));
    CHECK(tc_count(&sts[0], MPI_BYTE) == 0 && sts[0].MPI_SOURCE == from,
          "NULL zero-byte: count %d source %d", tc_count(&sts[0], MPI_BYTE), sts[0].MPI_SOURCE);
    /* zero-byte followed by non-zero on the same tag keeps order */
    int v = 99 + rank, got = -1;
    CHECK_RC(MPI_Isend(NULL, 0, MPI_INT, to, 52, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Isend(&v, 1, MPI_INT, to, 52, MPI_COMM_WORLD, &rq[1]));
    CHECK_RC(MPI_Recv(&got, 1, MPI_INT, from, 52, MPI_COMM_WORLD, &st));
    CHECK(tc_count(&st, MPI_INT) == 0 && got == -1, "zero-byte overtaken: count %d got %d",
          tc_count(&st, MPI_INT), got);
    CHECK_RC(MPI_Recv(&got, 1, MPI_INT, from, 52, MPI_COMM_WORLD, &st));
    CHECK(got == 99 + from, "second message %d", got);
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
}

static void check_null_status(const MPI_Status *st, const char *what)
{
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d, expected MPI_PROC_NULL", what,
          st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d, expected MPI_ANY_TAG", what, st->MPI_TAG);
    CHECK(tc_count(st, MPI_INT) == 0, "%s: count %d", what, tc_count(st, MPI_INT));
}

static void proc_null(void)
{
    int buf[4] = {1, 2, 3, 4};
    MPI_Status st;
    MPI_Request rq;
    CHECK_RC(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    CHECK_RC(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    CHECK_RC(MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    CHECK_RC(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_null_status(&st, "Recv(MPI_PROC_NULL)");
    CHECK(buf[0] == 1 && buf[3] == 4, "Recv(MPI_PROC_NULL) modified the buffer");
    CHECK_RC(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Wait(&rq, &st));
    /* MPICH < 4.2 reports source 0 / tag 0 here (pmodels/mpich#6805) */
    int v = tc_mpich_version();
    if (v == 0 || v >= 402)
        check_null_status(&st, "Irecv(MPI_PROC_NULL)");
    CHECK_RC(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
    int flag = 0;
    while (!flag)
        CHECK_RC(MPI_Test(&rq, &flag, &st));
    CHECK(rq == MPI_REQUEST_NULL, "completed request not freed");
    CHECK_RC(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT, MPI_PROC_NULL, 1,
                          MPI_COMM_WORLD, &st));
    check_null_status(&st, "Sendrecv(MPI_PROC_NULL)");
    CHECK_RC(MPI_Sendrecv_replace(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1,
                                  MPI_COMM_WORLD, &st));
    check_null_status(&st, "Sendrecv_replace(MPI_PROC_NULL)");
    CHECK(buf[0] == 1 && buf[3] == 4, "PROC_NULL exchange modified the buffer");
    CHECK_RC(MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_null_status(&st, "Probe(MPI_PROC_NULL)");
    flag = 0;
    CHECK_RC(MPI_Iprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 1, "Iprobe(MPI_PROC_NULL) flag 0");
    check_null_status(&st, "Iprobe(MPI_PROC_NULL)");
    CHECK_RC(MPI_Issend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Irsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

static void counts_and_status(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    double sb[10], rb[64];
    for (int i = 0; i < 10; i++)
        sb[i] = rank + i * 0.5;
    for (int n = 0; n <= 10; n += 5) {
        MPI_Request rq;
        MPI_Status st;
        CHECK_RC(MPI_Isend(sb, n, MPI_DOUBLE, to, 60 + n, MPI_COMM_WORLD, &rq));
        CHECK_RC(MPI_Recv(rb, 64, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 60 + n, "wildcard status source %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
        int c = -1, e = -1;
        CHECK_RC(MPI_Get_count(&st, MPI_DOUBLE, &c));
        CHECK_RC(MPI_Get_elements(&st, MPI_DOUBLE, &e));
        CHECK(c == n && e == n, "Get_count %d Get_elements %d expected %d", c, e, n);
        CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &c));
        CHECK(c == n * 8, "Get_count(MPI_BYTE) %d expected %d", c, n * 8);
        CHECK_RC(MPI_Get_count(&st, MPI_INT, &c));
        CHECK(c == n * 2, "Get_count(MPI_INT) %d expected %d", c, n * 2);
        for (int i = 0; i < n; i++)
            CHECK(rb[i] == from + i * 0.5, "rb[%d] = %g", i, rb[i]);
        CHECK_RC(MPI_Wait(&rq, &st));
    }
    /* The wildcard receives above may legally match any message sent to this
     * rank: nobody may start the next phase (whose messages would match them)
     * until every rank has finished its wildcard receives. */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
}

static void synchronous(void)
{
    if (size == 1) {
        /* Issend to self completes once the receive is posted */
        int v = 5, g = 0;
        MPI_Request rq;
        CHECK_RC(MPI_Issend(&v, 1, MPI_INT, 0, 70, MPI_COMM_WORLD, &rq));
        int flag = 1;
        CHECK_RC(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "Issend to self completed before any receive was posted");
        CHECK_RC(MPI_Recv(&g, 1, MPI_INT, 0, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(g == 5, "got %d", g);
        return;
    }
    /* pairs (even, odd): the even rank Issends, checks it is not complete,
     * then tells the odd rank to post the receive. Then roles swap. */
    int partner = rank ^ 1;
    if (partner >= size)
        return;
    for (int role = 0; role < 2; role++) {
        int sender = (rank % 2) == role;
        for (int big = 0; big < 2; big++) {
            size_t len = big ? 200000 : 4;
            unsigned char *b = tc_malloc(len);
            if (sender) {
                MPI_Request rq;
                tc_fill(b, len, rank, 70 + (uint64_t)big);
                CHECK_RC(MPI_Issend(b, (int)len, MPI_BYTE, partner, 71, MPI_COMM_WORLD, &rq));
                for (int i = 0; i < 50; i++) {
                    int flag = 1;
                    CHECK_RC(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
                    CHECK(flag == 0, "Issend (%zu bytes) completed before the receive was posted",
                          len);
                }
                CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, partner, 72, MPI_COMM_WORLD));
                CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                /* blocking Ssend to a receive that is posted */
                CHECK_RC(MPI_Ssend(b, (int)len, MPI_BYTE, partner, 73, MPI_COMM_WORLD));
            } else {
                CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, partner, 72, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE));
                CHECK_RC(MPI_Recv(b, (int)len, MPI_BYTE, partner, 71, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE));
                CHECK_PAT(b, len, partner, 70 + (uint64_t)big, "Issend payload");
                memset(b, 0, len);
                CHECK_RC(MPI_Recv(b, (int)len, MPI_BYTE, partner, 73, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE));
                CHECK_PAT(b, len, partner, 70 + (uint64_t)big, "Ssend payload");
            }
            free(b);
        }
    }
}

static void ready(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int big = 0; big < 2; big++) {
        size_t len = big ? 300001 : 16;
        unsigned char *sb = tc_malloc(len), *rb = tc_malloc(len);
        MPI_Request rr, sr;
        /* post the receive, tell the sender, who then Rsends */
        CHECK_RC(MPI_Irecv(rb, (int)len, MPI_BYTE, from, 80, MPI_COMM_WORLD, &rr));
        CHECK_RC(MPI_Sendrecv(NULL, 0, MPI_BYTE, from, 81, NULL, 0, MPI_BYTE, to, 81,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        tc_fill(sb, len, rank, 80 + (uint64_t)big);
        if (big)
            CHECK_RC(MPI_Rsend(sb, (int)len, MPI_BYTE, to, 80, MPI_COMM_WORLD));
        else {
            CHECK_RC(MPI_Irsend(sb, (int)len, MPI_BYTE, to, 80, MPI_COMM_WORLD, &sr));
            CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        }
        CHECK_RC(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        CHECK_PAT(rb, len, from, 80 + (uint64_t)big, "Rsend payload");
        free(sb);
        free(rb);
    }
}

static void buffered(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    const int nmsg = 6;
    size_t lens[6] = {0, 1, 100, 4096, 65536, 150001};
    size_t total = 0;
    for (int i = 0; i < nmsg; i++)
        total += lens[i] + MPI_BSEND_OVERHEAD + 16;
    char *bbuf = tc_malloc(total);
    CHECK_RC(MPI_Buffer_attach(bbuf, (int)total));
    unsigned char *sb = tc_malloc(150001), *rb = tc_malloc(150001);
    MPI_Request rq = MPI_REQUEST_NULL;
    for (int i = 0; i < nmsg; i++) {
        tc_fill(sb, lens[i], rank, 90 + (uint64_t)i);
        if (i % 2)
            CHECK_RC(MPI_Bsend(sb, (int)lens[i], MPI_BYTE, to, 90, MPI_COMM_WORLD));
        else {
            CHECK_RC(MPI_Ibsend(sb, (int)lens[i], MPI_BYTE, to, 90, MPI_COMM_WORLD, &rq));
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        /* the data was copied: scribbling over the user buffer is harmless */
        memset(sb, 0xA5, lens[i]);
    }
    /* every Bsend completed locally before the receiver posted anything:
     * it only starts receiving after this message */
    CHECK_RC(MPI_Sendrecv(NULL, 0, MPI_BYTE, to, 91, NULL, 0, MPI_BYTE, from, 91,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < nmsg; i++) {
        MPI_Status st;
        CHECK_RC(MPI_Recv(rb, 150001, MPI_BYTE, from, 90, MPI_COMM_WORLD, &st));
        CHECK(tc_count(&st, MPI_BYTE) == (int)lens[i], "Bsend #%d: count %d expected %zu", i,
              tc_count(&st, MPI_BYTE), lens[i]);
        CHECK_PAT(rb, lens[i], from, 90 + (uint64_t)i, "Bsend message #%d", i);
    }
    void *back = NULL;
    int back_size = -1;
    CHECK_RC(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == bbuf && back_size == (int)total, "Buffer_detach gave %p/%d, attached %p/%zu",
          back, back_size, (void *)bbuf, total);
    /* attach again, use, detach */
    CHECK_RC(MPI_Buffer_attach(bbuf, (int)total));
    tc_fill(sb, 1000, rank, 95);
    CHECK_RC(MPI_Bsend(sb, 1000, MPI_BYTE, to, 95, MPI_COMM_WORLD));
    CHECK_RC(MPI_Recv(rb, 1000, MPI_BYTE, from, 95, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_PAT(rb, 1000, from, 95, "Bsend after re-attach");
    CHECK_RC(MPI_Buffer_detach(&back, &back_size));
    free(bbuf);
    free(sb);
    free(rb);
}

static void nonblocking_test_poll(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    size_t len = 100003;
    unsigned char *sb = tc_malloc(len), *rb = tc_malloc(len);
    tc_fill(sb, len, rank, 111);
    MPI_Request rq[2];
    CHECK_RC(MPI_Irecv(rb, (int)len, MPI_BYTE, from, 111, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Isend(sb, (int)len, MPI_BYTE, to, 111, MPI_COMM_WORLD, &rq[1]));
    int done[2] = {0, 0};
    while (!done[0] || !done[1])
        for (int i = 0; i < 2; i++)
            if (!done[i]) {
                MPI_Status st;
                CHECK_RC(MPI_Test(&rq[i], &done[i], &st));
                if (done[i]) {
                    CHECK(rq[i] == MPI_REQUEST_NULL, "MPI_Test did not free the request");
                    if (i == 0)
                        CHECK(st.MPI_SOURCE == from && tc_count(&st, MPI_BYTE) == (int)len,
                              "Test status source %d count %d", st.MPI_SOURCE,
                              tc_count(&st, MPI_BYTE));
                }
            }
    CHECK_PAT(rb, len, from, 111, "Isend/Irecv with Test polling");
    /* Test on MPI_REQUEST_NULL: flag true, empty status */
    MPI_Request nr = MPI_REQUEST_NULL;
    MPI_Status st;
    int flag = 0;
    CHECK_RC(MPI_Test(&nr, &flag, &st));
    CHECK(flag == 1 && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "Test(MPI_REQUEST_NULL): flag %d source %d tag %d", flag, st.MPI_SOURCE, st.MPI_TAG);
    CHECK_RC(MPI_Wait(&nr, &st));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "Wait(MPI_REQUEST_NULL): source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    all_pairs();
    token_ring();
    sendrecv_replace();
    zero_byte();
    proc_null();
    counts_and_status();
    synchronous();
    ready();
    buffered();
    nonblocking_test_poll();
    all_pairs();
    return tc_finish("p2p_basic");
}
