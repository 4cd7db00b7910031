/* mpi4_persistent: MPI-4.0 persistent collectives and partitioned
 * communication.
 *
 * Persistent collectives
 * 1 Bcast_init, Allreduce_init, Alltoallv_init, Gather_init, Barrier_init
 *   and Neighbor_allgather_init on a ring, each started 5 times with new
 *   data in the buffers (the request reads them at Start, not at Init),
 *   results checked element by element; the _c form of Allreduce.
 * 2 Matching follows the order of the Init calls, not of the Starts: two
 *   Bcasts from different roots initialized in the same order everywhere,
 *   started in opposite orders on even and odd ranks.
 * 3 Request_free of inactive requests clears the handles. On Ferry, the
 *   Alltoallv's count and displacement arrays are overwritten after Init
 *   (Ferry copies them; mpi4py relies on that).
 *
 * Partitioned communication (a ring: each rank sends to rank+1, receives
 * from rank-1)
 * 4 Partitions marked ready in reverse order, by Pready_range and
 *   Pready_list, over 4 rounds; the receiver has a different partition
 *   count than the sender; Parrived polled until every partition is in;
 *   the status names the source and the user's tag.
 * 5 Matching by Init order: three sends with the same tag whose partitions
 *   become ready in the opposite order; three sends with different tags
 *   initialized in the opposite order of the receives.
 * 6 Errors (MPI_ERRORS_RETURN): Pready of an out-of-range partition and of
 *   a partition already ready (MPI_ERR_ARG; on MPICH and Open MPI only the
 *   out-of-range call is checked, and only that it fails); Pready on an inactive request,
 *   Parrived on a send request (MPI_ERR_REQUEST); Precv_init with
 *   MPI_ANY_SOURCE (MPI_ERR_RANK); Psend_init of 0 partitions (MPI_ERR_ARG);
 *   Cancel and Request_free of an active partitioned request
 *   (MPI_ERR_REQUEST; the request then completes with every element); a
 *   partitioned receive smaller than the message (MPI_ERR_TRUNCATE).
 *
 * Built against an MPI-3 library (Open MPI 4.1, used to validate the tests)
 * the program only says so.
 */
#include "common.h"

#if MPI_VERSION >= 4 || defined(FERRY_MPI_H_INCLUDED)
static int rank, size;

static void persistent_collectives(void)
{
    enum { N = 37, ROUNDS = 5 };
    int bc[N], sum_in[N], sum_out[N], *a2a_s = tc_malloc(sizeof(int) * N * size),
        *a2a_r = tc_malloc(sizeof(int) * N * size), *gat = tc_malloc(sizeof(int) * size), mine = 0;
    int *cnt = tc_malloc(sizeof(int) * size), *dsp = tc_malloc(sizeof(int) * size);
    for (int p = 0; p < size; p++)
        cnt[p] = 1 + (p + rank) % N, dsp[p] = p * N;
    int *rcnt = tc_malloc(sizeof(int) * size);
    for (int p = 0; p < size; p++)
        rcnt[p] = 1 + (rank + p) % N;   /* what p sends me: 1 + (me + p) % N */
    long long big_in[3], big_out[3];

    MPI_Comm ring;
    int periods = 1;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periods, 0, &ring));
    int nb[2], left, right;
    CHECK_RC(MPI_Cart_shift(ring, 0, 1, &left, &right));

    MPI_Request rq[7];
    int root = size - 1;
    CHECK_RC(MPI_Bcast_init(bc, N, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
    CHECK_RC(MPI_Allreduce_init(sum_in, sum_out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
    CHECK_RC(MPI_Alltoallv_init(a2a_s, cnt, dsp, MPI_INT, a2a_r, rcnt, dsp, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &rq[2]));
    /* Ferry copies the count and displacement arrays at Init (bindings such
     * as mpi4py free theirs): scribbled over now, they must not matter.
     * MPI itself asks the caller to keep them, so peers are not tested. */
    int *want_rcnt = tc_malloc(sizeof(int) * size);
    memcpy(want_rcnt, rcnt, sizeof(int) * size);
    if (!tc_mpich_version() && !tc_is_open_mpi())
        for (int p = 0; p < size; p++)
            cnt[p] = rcnt[p] = dsp[p] = -7;
    CHECK_RC(MPI_Gather_init(&mine, 1, MPI_INT, gat, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]));
    CHECK_RC(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &rq[4]));
    CHECK_RC(MPI_Neighbor_allgather_init(&mine, 1, MPI_INT, nb, 1, MPI_INT, ring, MPI_INFO_NULL, &rq[5]));
    CHECK_RC(MPI_Allreduce_init_c(big_in, big_out, 3, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[6]));
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < N; i++) {
            bc[i] = rank == root ? round * 1000 + i : -1;
            sum_in[i] = rank * round + i;
        }
        for (int p = 0; p < size; p++)
            for (int i = 0; i < N; i++)
                a2a_s[p * N + i] = round * 100000 + rank * 1000 + p * 10 + i, a2a_r[p * N + i] = -1;
        mine = rank * 10 + round;
        for (int i = 0; i < 3; i++)
            big_in[i] = (long long)rank * round + ((long long)i << 33);
        nb[0] = nb[1] = -1;
        CHECK_RC(MPI_Startall(7, rq));
        CHECK_RC(MPI_Waitall(7, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < N; i++) {
            CHECK(bc[i] == round * 1000 + i, "round %d bcast[%d] = %d", round, i, bc[i]);
            int want = round * (size * (size - 1) / 2) + size * i;
            CHECK(sum_out[i] == want, "round %d allreduce[%d] = %d, want %d", round, i, sum_out[i], want);
        }
        for (int p = 0; p < size; p++)
            for (int i = 0; i < N; i++) {
                int want = i < want_rcnt[p] ? round * 100000 + p * 1000 + rank * 10 + i : -1;
                CHECK(a2a_r[p * N + i] == want, "round %d alltoallv from %d [%d] = %d, want %d", round, p, i,
                      a2a_r[p * N + i], want);
            }
        if (rank == 0 && tc_mpich_version() != 400)   /* MPICH 4.0: see tests/README.md */
            for (int p = 0; p < size; p++)
                CHECK(gat[p] == p * 10 + round, "round %d gather[%d] = %d", round, p, gat[p]);
        CHECK(nb[0] == left * 10 + round && nb[1] == right * 10 + round,
              "round %d neighbor allgather: %d %d, want %d %d", round, nb[0], nb[1], left * 10 + round,
              right * 10 + round);
        for (int i = 0; i < 3; i++)
            CHECK(big_out[i] == (long long)(size - 1) * round + ((long long)i << 33), "round %d allreduce_c[%d]",
                  round, i);
    }
    for (int i = 0; i < 7; i++) {
        CHECK_RC(MPI_Request_free(&rq[i]));
        CHECK(rq[i] == MPI_REQUEST_NULL, "Request_free left handle %d", i);
    }

    /* 2: two bcasts, started in opposite orders on even and odd ranks */
    int x = rank == 0 ? 11 : -1, y = rank == size - 1 ? 22 : -1;
    MPI_Request two[2];
    CHECK_RC(MPI_Bcast_init(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &two[0]));
    CHECK_RC(MPI_Bcast_init(&y, 1, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &two[1]));
    if (rank % 2) {
        CHECK_RC(MPI_Start(&two[1]));
        CHECK_RC(MPI_Start(&two[0]));
    } else {
        CHECK_RC(MPI_Start(&two[0]));
        CHECK_RC(MPI_Start(&two[1]));
    }
    CHECK_RC(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
    CHECK(x == 11 && y == 22, "bcasts started out of order: x %d y %d", x, y);

    CHECK_RC(MPI_Request_free(&two[0]));
    CHECK_RC(MPI_Request_free(&two[1]));
    CHECK_RC(MPI_Comm_free(&ring));
    free(a2a_s), free(a2a_r), free(gat), free(cnt), free(dsp), free(rcnt), free(want_rcnt);
}

static void partitioned_ring(void)
{
    enum { SPART = 8, RPART = 4, PER = 96, ROUNDS = 4 };
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    double *sbuf = tc_malloc(sizeof(double) * SPART * PER), *rbuf = tc_malloc(sizeof(double) * SPART * PER);
    MPI_Request s, r;
    CHECK_RC(MPI_Psend_init(sbuf, SPART, PER, MPI_DOUBLE, to, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    CHECK_RC(MPI_Precv_init(rbuf, RPART, (MPI_Count)PER * SPART / RPART, MPI_DOUBLE, from, 5, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &r));
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < SPART * PER; i++)
            rbuf[i] = -1;
        CHECK_RC(MPI_Start(&r));
        CHECK_RC(MPI_Start(&s));
        for (int p = SPART - 1; p >= 0; p--) {   /* fill and release partitions back to front */
            for (int i = 0; i < PER; i++)
                sbuf[p * PER + i] = round * 1e6 + rank * 1e4 + p * PER + i;
            if (round % 3 == 0)
                CHECK_RC(MPI_Pready(p, s));
            else if (round % 3 == 1 && p % 2 == 0)
                CHECK_RC(MPI_Pready_range(p, p + 1, s));
            else if (round % 3 == 2 && p == 0) {
                int list[SPART];
                for (int k = 0; k < SPART; k++)
                    list[k] = (k * 3) % SPART;   /* a permutation, 3 and 8 coprime */
                CHECK_RC(MPI_Pready_list(SPART, list, s));
            }
        }
        int arrived = 0;
        while (arrived < RPART) {
            arrived = 0;
            for (int p = 0; p < RPART; p++) {
                int f = 0;
                CHECK_RC(MPI_Parrived(r, p, &f));
                arrived += f;
            }
        }
        MPI_Status st;
        CHECK_RC(MPI_Wait(&r, &st));
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 5, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        int n;
        CHECK_RC(MPI_Get_count(&st, MPI_DOUBLE, &n));
        CHECK(n == SPART * PER, "count %d", n);
        for (int i = 0; i < SPART * PER; i++)
            CHECK(rbuf[i] == round * 1e6 + from * 1e4 + i, "round %d element %d = %g", round, i, rbuf[i]);
        CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
    }
    CHECK_RC(MPI_Request_free(&s));
    CHECK_RC(MPI_Request_free(&r));
    free(sbuf), free(rbuf);
}

static void partitioned_matching(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int sv[3][4], rv[3][4];
    MPI_Request s[3], r[3];
    /* same tag: matched by Init order; partitions become ready 2, 0, 1 */
    for (int k = 0; k < 3; k++)
        CHECK_RC(MPI_Psend_init(sv[k], 2, 2, MPI_INT, to, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &s[k]));
    for (int k = 0; k < 3; k++)
        CHECK_RC(MPI_Precv_init(rv[k], 1, 4, MPI_INT, from, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[k]));
    CHECK_RC(MPI_Startall(3, r));
    CHECK_RC(MPI_Startall(3, s));
    const int order[3] = {2, 0, 1};
    for (int j = 0; j < 3; j++) {
        int k = order[j];
        for (int i = 0; i < 4; i++)
            sv[k][i] = rank * 100 + k * 10 + i;
        CHECK_RC(MPI_Pready_range(0, 1, s[k]));
    }
    CHECK_RC(MPI_Waitall(3, s, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 4; i++)
            CHECK(rv[k][i] == from * 100 + k * 10 + i, "same tag: receive %d [%d] = %d", k, i, rv[k][i]);
    for (int k = 0; k < 3; k++) {
        CHECK_RC(MPI_Request_free(&s[k]));
        CHECK_RC(MPI_Request_free(&r[k]));
    }
    /* different tags, sends initialized in the opposite order */
    for (int k = 2; k >= 0; k--)
        CHECK_RC(MPI_Psend_init(sv[k], 1, 4, MPI_INT, to, 10 + k, MPI_COMM_WORLD, MPI_INFO_NULL, &s[k]));
    for (int k = 0; k < 3; k++)
        CHECK_RC(MPI_Precv_init(rv[k], 1, 4, MPI_INT, from, 10 + k, MPI_COMM_WORLD, MPI_INFO_NULL, &r[k]));
    CHECK_RC(MPI_Startall(3, s));
    CHECK_RC(MPI_Startall(3, r));
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 4; i++)
            sv[k][i] = rank * 1000 + k * 10 + i;
        CHECK_RC(MPI_Pready(0, s[k]));
    }
    MPI_Status st[3];
    CHECK_RC(MPI_Waitall(3, r, st));
    CHECK_RC(MPI_Waitall(3, s, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 3; k++) {
        CHECK(st[k].MPI_TAG == 10 + k, "receive %d: tag %d", k, st[k].MPI_TAG);
        for (int i = 0; i < 4; i++)
            CHECK(rv[k][i] == from * 1000 + k * 10 + i, "tags: receive %d [%d] = %d", k, i, rv[k][i]);
        CHECK_RC(MPI_Request_free(&s[k]));
        CHECK_RC(MPI_Request_free(&r[k]));
    }
}

static void partitioned_errors(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size, b[4] = {0, 1, 2, 3}, c[4];
    MPI_Request s, r, bad;
    /* MPI names no class for a bad partition: Ferry says MPI_ERR_ARG, MPICH
     * MPI_ERR_OTHER; on a peer only the failure itself is checked */
    int peer = tc_mpich_version() != 0 || tc_is_open_mpi();
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Psend_init(b, 2, 2, MPI_INT, to, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    CHECK_RC(MPI_Precv_init(c, 2, 2, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    int rc = MPI_Pready(0, s), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "Pready on an inactive send: class %d", cls);
    CHECK_RC(MPI_Start(&r));
    CHECK_RC(MPI_Start(&s));
    /* Cancel (and, on Ferry, Request_free) of an active partitioned send:
     * an error, and the request still works (MPICH: MPI_ERR_INTERN, and it
     * does not detect the free) */
    rc = MPI_Cancel(&s);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_REQUEST || peer), "Cancel of an active partitioned send: class %d", cls);
    if (!peer) {   /* (the receive may be complete already: the peer's send need not wait) */
        MPI_Request keep = s;
        rc = MPI_Request_free(&s);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_REQUEST && s == keep, "Request_free of an active partitioned send: class %d", cls);
    }
    rc = MPI_Pready(2, s);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_ARG || peer), "Pready of partition 2 of 2: class %d", cls);
    CHECK_RC(MPI_Pready(1, s));
    if (!peer) {   /* erroneous, and MPICH does not detect it */
        rc = MPI_Pready(1, s);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_ARG, "Pready twice: class %d", cls);
    }
    int f;
    rc = MPI_Parrived(s, 0, &f);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "Parrived on a send: class %d", cls);
    CHECK_RC(MPI_Pready(0, s));
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int k = 0; k < 4; k++)
        CHECK(c[k] == k, "partitioned receive after the failed cancel: [%d] = %d", k, c[k]);
    rc = MPI_Precv_init(c, 1, 4, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "Precv_init from MPI_ANY_SOURCE: class %d", cls);
    rc = MPI_Psend_init(b, 0, 4, MPI_INT, to, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "Psend_init of 0 partitions: class %d", cls);
    CHECK_RC(MPI_Request_free(&s));
    CHECK_RC(MPI_Request_free(&r));

    /* a partitioned receive smaller than the message: truncation (MPICH:
     * MPI_ERR_OTHER) */
    int big[6] = {0}, small[4];
    for (int k = 0; k < 6; k++)
        big[k] = 100 * rank + k;
    CHECK_RC(MPI_Psend_init(big, 3, 2, MPI_INT, to, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    CHECK_RC(MPI_Precv_init(small, 2, 2, MPI_INT, from, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK_RC(MPI_Start(&r));
    CHECK_RC(MPI_Start(&s));
    CHECK_RC(MPI_Pready_range(0, 2, s));
    MPI_Status st;
    rc = MPI_Wait(&r, &st);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_TRUNCATE || peer), "partitioned truncation: class %d", cls);
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Request_free(&s));
    CHECK_RC(MPI_Request_free(&r));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    persistent_collectives();
    partitioned_ring();
    partitioned_matching();
    partitioned_errors();
    return tc_finish("mpi4_persistent");
}
#else
int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    if (rank == 0)
        printf("mpi4_persistent: this MPI (MPI_VERSION %d) has no MPI-4 functions, nothing checked\n", MPI_VERSION);
    return tc_finish("mpi4_persistent");
}
#endif
