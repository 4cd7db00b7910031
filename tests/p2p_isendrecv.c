/* p2p_isendrecv: MPI-4.0 MPI_Isendrecv and MPI_Isendrecv_replace.
 *
 * A ring exchange (to the next rank, from the previous; 1 rank: itself) of
 * 0 B, inline, eager and rendezvous sizes, completed by Wait, a Test loop or
 * Waitall over several at once: the data, the status (source, tag, count)
 * and that the request completes only once both halves have. A receive that
 * cannot complete until the program later sends holds the request back. The
 * replace form with a strided datatype (the send must go out of a copy: the
 * receive overwrites the buffer). MPI_PROC_NULL on either side. A too small
 * receive gives MPI_ERR_TRUNCATE from Wait.
 *
 * MPICH 4.0.2 leaves source, tag and count of Isendrecv's status unset, does
 * not report truncation, and
 * crashes in Isendrecv(_replace) with MPI_PROC_NULL and in Isendrecv_replace
 * with a noncontiguous type: with it (the peer that validates this test)
 * those are not checked, and
 * the replace form runs on every int of the buffer (a contiguous type).
 *
 * These are MPI-4 functions: built against an MPI-3 library (Open MPI 4.1,
 * used to validate the tests) the program only says so.
 */
#include "common.h"

#if MPI_VERSION >= 4 || defined(FERRY_MPI_H_INCLUDED)
static int rank, size, to, from;
static int check_status;   /* not on MPICH, see the top */
static const size_t sizes[] = {0, 1, 32, 33, 1000, 70000, 1 << 21};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void complete(MPI_Request *r, MPI_Status *st, int how)
{
    if (how % 2 == 0) {
        CHECK_RC(MPI_Wait(r, st));
    } else {
        int flag = 0;
        while (!flag)
            CHECK_RC(MPI_Test(r, &flag, st));
    }
    CHECK(*r == MPI_REQUEST_NULL, "completion left the request");
}

static void ring(void)
{
    for (size_t k = 0; k < NSIZES; k++) {
        size_t len = sizes[k];
        int tag = 10 + (int)k;
        unsigned char *sb = tc_malloc(len), *rb = tc_malloc(len + 8);
        tc_fill(sb, len, rank, (uint64_t)tag);
        memset(rb, 0, len + 8);
        MPI_Request r;
        MPI_Status st;
        CHECK_RC(MPI_Isendrecv(sb, (int)len, MPI_BYTE, to, tag, rb, (int)len + 8, MPI_BYTE, from, tag, MPI_COMM_WORLD,
                               &r));
        CHECK(r != MPI_REQUEST_NULL, "Isendrecv gave MPI_REQUEST_NULL");
        complete(&r, &st, (int)k);
        CHECK(!check_status || (st.MPI_SOURCE == from && st.MPI_TAG == tag), "Isendrecv %zu bytes: status source %d tag %d", len,
              st.MPI_SOURCE, st.MPI_TAG);
        CHECK(!check_status || tc_count(&st, MPI_BYTE) == (int)len, "Isendrecv: count %d, expected %zu", tc_count(&st, MPI_BYTE), len);
        CHECK_PAT(rb, len, from, (uint64_t)tag, "Isendrecv of %zu bytes", len);
        CHECK_BYTES(rb + len, 8, 0, "Isendrecv wrote past the message");
        free(sb);
        free(rb);
    }
}

static void many(void)
{
    enum { N = 16 };
    int out[N], in[N];
    MPI_Request r[N];
    MPI_Status st[N];
    for (int i = 0; i < N; i++) {
        out[i] = rank * 100 + i;
        in[i] = -1;
        /* ANY_TAG: messages from one source arrive in order */
        CHECK_RC(MPI_Isendrecv(&out[i], 1, MPI_INT, to, i, &in[i], 1, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD, &r[i]));
    }
    CHECK_RC(MPI_Waitall(N, r, st));
    for (int i = 0; i < N; i++)
        CHECK(in[i] == from * 100 + i && (!check_status || st[i].MPI_TAG == i), "Waitall: pair %d got %d tag %d", i, in[i],
              st[i].MPI_TAG);
}

/* The receive half waits for a message this rank's predecessor sends only
 * after a barrier: the request must not complete before. */
static void held_back(void)
{
    int out = rank, in = -1, flag = 1;
    MPI_Request r;
    MPI_Status st;
    CHECK_RC(MPI_Isendrecv(&out, 1, MPI_INT, to, 30, &in, 1, MPI_INT, from, 31, MPI_COMM_WORLD, &r));
    for (int i = 0; i < 50; i++) {
        CHECK_RC(MPI_Test(&r, &flag, &st));
        CHECK(!flag, "Isendrecv completed before its receive could match");
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    /* nonblocking: the send half of r is only received below */
    MPI_Request s;
    CHECK_RC(MPI_Isend(&out, 1, MPI_INT, to, 31, MPI_COMM_WORLD, &s));
    int in30 = -1;
    CHECK_RC(MPI_Recv(&in30, 1, MPI_INT, from, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK(in == from && (!check_status || st.MPI_TAG == 31), "held back Isendrecv: got %d tag %d", in, st.MPI_TAG);
    in = in30;
    CHECK(in == from, "the send half of the held back Isendrecv: got %d", in);
}

static void replace(void)
{
    /* every other int of 2*n: a strided type, so the copy is packed */
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(1, 1, 2, MPI_INT, &vec));
    MPI_Datatype strided;
    CHECK_RC(MPI_Type_create_resized(vec, 0, 2 * sizeof(int), &strided));
    CHECK_RC(MPI_Type_commit(&strided));
    const int step = check_status ? 2 : 1;   /* 1: MPICH, contiguous (see the top) */
    MPI_Datatype type = step == 2 ? strided : MPI_INT;
    for (int n = 0; n <= 1 << 17; n = n ? n * 8 : 1) {
        int *buf = tc_malloc((size_t)(2 * n + 1) * sizeof(int));
        for (int i = 0; i < 2 * n; i++)
            buf[i] = i % step ? -7 : rank * 1000000 + i / step;
        MPI_Request r;
        MPI_Status st;
        CHECK_RC(MPI_Isendrecv_replace(buf, step == 2 ? n : 2 * n, type, to, 40, from, 40, MPI_COMM_WORLD, &r));
        complete(&r, &st, n);
        CHECK(!check_status || (st.MPI_SOURCE == from && st.MPI_TAG == 40), "Isendrecv_replace: source %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
        CHECK(!check_status || tc_count(&st, strided) == n, "Isendrecv_replace: count %d, expected %d", tc_count(&st, strided), n);
        for (int i = 0; i < 2 * n; i++) {
            int want = i % step ? -7 : from * 1000000 + i / step;
            CHECK(buf[i] == want, "Isendrecv_replace of %d: buf[%d] = %d, expected %d", n, i, buf[i], want);
        }
        free(buf);
    }
    CHECK_RC(MPI_Type_free(&strided));
    CHECK_RC(MPI_Type_free(&vec));
}

static void proc_null(void)
{
    if (!check_status)
        return;   /* MPICH, see the top */
    int out = 5, in = -1;
    MPI_Request r;
    MPI_Status st;
    CHECK_RC(MPI_Isendrecv(&out, 1, MPI_INT, MPI_PROC_NULL, 1, &in, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(in == -1 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && tc_count(&st, MPI_INT) == 0,
          "Isendrecv from MPI_PROC_NULL: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, tc_count(&st, MPI_INT));
    /* send to PROC_NULL, receive a real message */
    CHECK_RC(MPI_Isendrecv(&out, 1, MPI_INT, MPI_PROC_NULL, 2, &in, 1, MPI_INT, from, 2, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Send(&rank, 1, MPI_INT, to, 2, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(in == from && st.MPI_SOURCE == from, "Isendrecv to PROC_NULL: got %d from %d", in, st.MPI_SOURCE);
    CHECK_RC(MPI_Isendrecv_replace(&in, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(in == from && st.MPI_SOURCE == MPI_PROC_NULL, "Isendrecv_replace with PROC_NULL changed the buffer");
}

static void truncated(void)
{
    int out[4] = {1, 2, 3, 4}, in[2] = {0, 0};
    MPI_Request r;
    MPI_Status st;
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Isendrecv(out, 4, MPI_INT, to, 50, in, 2, MPI_INT, from, 50, MPI_COMM_WORLD, &r));
    int rc = MPI_Wait(&r, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE || !check_status, "Isendrecv into a too small buffer: error %d (class %d)", rc, cls);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    to = (rank + 1) % size;
    from = (rank + size - 1) % size;
    check_status = !tc_mpich_version();
    ring();
    many();
    held_back();
    replace();
    proc_null();
    truncated();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    return tc_finish("p2p_isendrecv");
}
#else
int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    if (rank == 0)
        printf("p2p_isendrecv: this MPI (MPI_VERSION %d) has no MPI_Isendrecv, nothing checked\n", MPI_VERSION);
    return tc_finish("p2p_isendrecv");
}
#endif
