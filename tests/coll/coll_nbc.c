/* Nonblocking collectives: many in flight at once on one communicator and
 * on two, completed in reverse order and through Waitall / Waitany /
 * Testall / Waitsome, mixed with user point-to-point traffic (same tags,
 * ANY_SOURCE / ANY_TAG receives must not see collective traffic), and real
 * progress: a rank blocked in MPI_Recv must keep its collectives moving so
 * that a peer that waits for the collective can send what it waits for.
 * Also blocking and nonblocking collectives started in different orders on
 * different ranks, which MPICH and Open MPI keep apart (apart, roles_apart). */
#include "collt.h"

static int rank, size;

static int ival(int q, int i, int salt)
{
    return (q * 7 + i * 13 + salt * 101) % 1000;
}

/* ---- many different collectives in flight ---------------------------------- */
static void many_kinds(MPI_Comm comm, int salt)
{
    enum { K = 257, BIG = 40000 };
    int n = size, r = rank;
    int *bc = tc_malloc(BIG * sizeof(int)), *ar_in = tc_malloc(K * sizeof(int)), *ar_out = tc_malloc(K * sizeof(int));
    int *a2a_in = tc_malloc((size_t)n * 3 * sizeof(int)), *a2a_out = tc_malloc((size_t)n * 3 * sizeof(int));
    int *ag = tc_malloc((size_t)n * 2 * sizeof(int)), mine[2] = {ival(r, 0, salt), ival(r, 1, salt)};
    int sc_in = ival(r, 9, salt), sc_out = -1, ex_out = -1;
    for (int i = 0; i < BIG; i++)
        bc[i] = r == n - 1 ? ival(n - 1, i, salt) : -1;
    for (int i = 0; i < K; i++)
        ar_in[i] = ival(r, i, salt);
    for (int q = 0; q < n; q++)
        for (int j = 0; j < 3; j++)
            a2a_in[q * 3 + j] = r * 1000 + q * 10 + j + salt;
    MPI_Request req[7];
    CHECK_RC(MPI_Ibcast(bc, BIG, MPI_INT, n - 1, comm, &req[0]));
    CHECK_RC(MPI_Iallreduce(ar_in, ar_out, K, MPI_INT, MPI_SUM, comm, &req[1]));
    CHECK_RC(MPI_Ialltoall(a2a_in, 3, MPI_INT, a2a_out, 3, MPI_INT, comm, &req[2]));
    CHECK_RC(MPI_Ibarrier(comm, &req[3]));
    CHECK_RC(MPI_Iallgather(mine, 2, MPI_INT, ag, 2, MPI_INT, comm, &req[4]));
    CHECK_RC(MPI_Iscan(&sc_in, &sc_out, 1, MPI_INT, MPI_SUM, comm, &req[5]));
    CHECK_RC(MPI_Iexscan(&sc_in, &ex_out, 1, MPI_INT, MPI_MAX, comm, &req[6]));
    /* complete in reverse order */
    for (int i = 6; i >= 0; i--)
        CHECK_RC(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
    for (int i = 0; i < BIG; i++)
        CHECK(bc[i] == ival(n - 1, i, salt), "Ibcast element %d: %d", i, bc[i]);
    for (int i = 0; i < K; i++) {
        int want = 0;
        for (int q = 0; q < n; q++)
            want += ival(q, i, salt);
        CHECK(ar_out[i] == want, "Iallreduce element %d: %d, expected %d", i, ar_out[i], want);
    }
    for (int q = 0; q < n; q++)
        for (int j = 0; j < 3; j++)
            CHECK(a2a_out[q * 3 + j] == q * 1000 + r * 10 + j + salt, "Ialltoall from %d[%d]", q, j);
    for (int q = 0; q < n; q++)
        CHECK(ag[2 * q] == ival(q, 0, salt) && ag[2 * q + 1] == ival(q, 1, salt), "Iallgather block %d", q);
    int want = 0, wmax = -1;
    for (int q = 0; q <= r; q++)
        want += ival(q, 9, salt);
    for (int q = 0; q < r; q++)
        wmax = ival(q, 9, salt) > wmax ? ival(q, 9, salt) : wmax;
    CHECK(sc_out == want, "Iscan: %d, expected %d", sc_out, want);
    CHECK(r == 0 || ex_out == wmax, "Iexscan: %d, expected %d", ex_out, wmax);
    free(bc), free(ar_in), free(ar_out), free(a2a_in), free(a2a_out), free(ag);
}

/* ---- the same collective many times in flight ------------------------------- */
static void many_same(MPI_Comm comm)
{
    enum { M = 64 };
    int in[M], out[M];
    MPI_Request req[M];
    for (int i = 0; i < M; i++) {
        in[i] = rank + i;
        CHECK_RC(MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, comm, &req[i]));
    }
    /* mix the completion calls */
    int idx, flag = 0, outcount, indices[M];
    CHECK_RC(MPI_Waitany(M, req, &idx, MPI_STATUS_IGNORE));
    CHECK(idx >= 0 && idx < M, "Waitany index %d", idx);
    CHECK_RC(MPI_Waitsome(M, req, &outcount, indices, MPI_STATUSES_IGNORE));
    while (!flag)
        CHECK_RC(MPI_Testall(M, req, &flag, MPI_STATUSES_IGNORE));
    for (int i = 0; i < M; i++)
        CHECK(out[i] == size * (size - 1) / 2 + size * i, "Iallreduce #%d: %d", i, out[i]);
}

/* ---- a communicator that only ever sees nonblocking collectives ------------ */
/* One of the calls starts creating the shared-memory segment; the calls
 * started meanwhile (a blocking one among them) choose their algorithm once
 * every rank knows the outcome, in call order. 12-byte allreduces occur only
 * here: the ctest coll.nbc_only checks that they came to use the segment. */
static void nonblocking_only(void)
{
    enum { R = 8, N = 3 };
    MPI_Comm comm;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    int in[R][N], out[R][N], bc[R][N];
    MPI_Request req[3 * R];
    for (int k = 0; k < R; k++) {
        for (int i = 0; i < N; i++) {
            in[k][i] = rank * 10 + k + i;
            out[k][i] = -1;
            bc[k][i] = rank == k % size ? 1000 * k + i : -1;
        }
        CHECK_RC(MPI_Iallreduce(in[k], out[k], N, MPI_INT, MPI_SUM, comm, &req[3 * k]));
        CHECK_RC(MPI_Ibcast(bc[k], N, MPI_INT, k % size, comm, &req[3 * k + 1]));
        CHECK_RC(MPI_Ibarrier(comm, &req[3 * k + 2]));
        if (k == R / 2) {   /* a blocking call while earlier ones may still be choosing */
            int x = rank, y = -1;
            CHECK_RC(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, comm));
            CHECK(y == size - 1, "blocking Allreduce among nonblocking ones: %d", y);
        }
    }
    CHECK_RC(MPI_Waitall(3 * R, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < R; k++)
        for (int i = 0; i < N; i++) {
            int want = 10 * size * (size - 1) / 2 + size * (k + i);
            CHECK(out[k][i] == want, "Iallreduce %d element %d: %d, expected %d", k, i, out[k][i], want);
            CHECK(bc[k][i] == 1000 * k + i, "Ibcast %d element %d: %d", k, i, bc[k][i]);
        }
    CHECK_RC(MPI_Comm_free(&comm));
}

/* The creation a nonblocking call started may be finished on one rank and
 * still running on another when the next blocking call comes: one rank runs
 * it directly, another through a deferred schedule. Their later
 * point-to-point collectives (Scan has no shared-memory algorithm) must
 * still match. On fresh communicators, so each one creates its segment. */
static void attach_races(void)
{
    for (int it = 0; it < 20; it++) {
        MPI_Comm comm;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        MPI_Request req[3];
        int x = rank + it, sum = -1, all = -1, scan = -1;
        CHECK_RC(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &req[0]));
        CHECK_RC(MPI_Ibarrier(comm, &req[1]));
        CHECK_RC(MPI_Ibarrier(comm, &req[2]));   /* starts the creation */
        CHECK_RC(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
        CHECK_RC(MPI_Allreduce(&x, &all, 1, MPI_INT, MPI_MAX, comm));
        CHECK_RC(MPI_Scan(&x, &scan, 1, MPI_INT, MPI_SUM, comm));
        CHECK(sum == size * (size - 1) / 2 + size * it && all == size - 1 + it &&
                  scan == rank * (rank + 1) / 2 + (rank + 1) * it,
              "iteration %d: Iallreduce %d, Allreduce %d, Scan %d", it, sum, all, scan);
        CHECK_RC(MPI_Comm_free(&comm));
    }
}

/* ---- blocking and nonblocking collectives in orders of their own ------------ */
/* MPI wants every rank to call a communicator's collectives in one order, so
 * a program that starts nonblocking collectives before blocking ones on one
 * rank and after them on the others is erroneous; MPICH and Open MPI run it
 * anyway (their nonblocking collectives take tags of their own) and programs
 * rely on that: mpi4py's Iagree falls back to an Iallreduce, which its test
 * starts on one rank before a Barrier that the others enter first. */
static void apart_once(MPI_Comm comm, int it)
{
    int r, n;
    CHECK_RC(MPI_Comm_rank(comm, &r));
    CHECK_RC(MPI_Comm_size(comm, &n));
    for (int root = 0; root < n; root++) {
        int x = ival(r, it, root), sum = -1, mx = -1, b = r == root ? 1000 + it : -1, dsum = -1;
        MPI_Request q[4];
        MPI_Comm d = MPI_COMM_NULL;
        CHECK_RC(MPI_Barrier(comm));
        if (r == root) {
            CHECK_RC(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &q[0]));
            CHECK_RC(MPI_Ibcast(&b, 1, MPI_INT, root, comm, &q[1]));
            CHECK_RC(MPI_Ibarrier(comm, &q[2]));
            CHECK_RC(MPI_Comm_idup(comm, &d, &q[3]));
            if (n > 1) {
                int flag = 1;
                CHECK_RC(MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "root %d: Iallreduce done before the others started it", root);
            }
            CHECK_RC(MPI_Barrier(comm));
            CHECK_RC(MPI_Allreduce(&x, &mx, 1, MPI_INT, MPI_MAX, comm));
        } else {
            CHECK_RC(MPI_Barrier(comm));
            CHECK_RC(MPI_Allreduce(&x, &mx, 1, MPI_INT, MPI_MAX, comm));
            CHECK_RC(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &q[0]));
            CHECK_RC(MPI_Ibcast(&b, 1, MPI_INT, root, comm, &q[1]));
            CHECK_RC(MPI_Ibarrier(comm, &q[2]));
            CHECK_RC(MPI_Comm_idup(comm, &d, &q[3]));
        }
        CHECK_RC(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        CHECK_RC(MPI_Allreduce(&x, &dsum, 1, MPI_INT, MPI_SUM, d));
        CHECK_RC(MPI_Comm_free(&d));
        int want_sum = 0, want_max = -1;
        for (int q2 = 0; q2 < n; q2++) {
            want_sum += ival(q2, it, root);
            want_max = ival(q2, it, root) > want_max ? ival(q2, it, root) : want_max;
        }
        CHECK(sum == want_sum && dsum == want_sum && mx == want_max && b == 1000 + it,
              "root %d, round %d: Iallreduce %d, on the Comm_idup copy %d (want %d), Allreduce %d (want %d), "
              "Ibcast %d (want %d)",
              root, it, sum, dsum, want_sum, mx, want_max, b, 1000 + it);
    }
}

/* The shared-memory barrier prepares for the collective that followed the
 * previous barrier (a bcast's root leaves first), as each rank saw it. Here
 * rank 0 saw an Ibcast from 0 follow the first barrier and the others an
 * Ibcast from 1: at the second barrier ranks 0 and 1 both take themselves for
 * the one the others wait for; it must still finish. The same with Ireduce
 * (its root leaves the barrier last). */
static void roles_apart(void)
{
    if (size < 2)
        return;
    MPI_Comm comm;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    for (int it = 0; it < 8; it++) {   /* the barriers take shared memory from the third */
        int bx = rank == 0 ? 100 + it : -1, by = rank == 1 ? 200 + it : -1;
        MPI_Request q[2];
        if (rank != 0)
            CHECK_RC(MPI_Ibcast(&bx, 1, MPI_INT, 0, comm, &q[0]));
        CHECK_RC(MPI_Barrier(comm));
        if (rank == 0)
            CHECK_RC(MPI_Ibcast(&bx, 1, MPI_INT, 0, comm, &q[0]));
        else
            CHECK_RC(MPI_Ibcast(&by, 1, MPI_INT, 1, comm, &q[1]));
        CHECK_RC(MPI_Barrier(comm));
        if (rank == 0)
            CHECK_RC(MPI_Ibcast(&by, 1, MPI_INT, 1, comm, &q[1]));
        CHECK_RC(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        CHECK(bx == 100 + it && by == 200 + it, "round %d: Ibcast from 0 gave %d, from 1 %d", it, bx, by);
    }
    for (int it = 0; it < 8; it++) {
        int v = rank + it, sx = -1, sy = -1, want = size * (size - 1) / 2 + size * it;
        MPI_Request q[2];
        if (rank != 0)
            CHECK_RC(MPI_Ireduce(&v, &sx, 1, MPI_INT, MPI_SUM, 0, comm, &q[0]));
        CHECK_RC(MPI_Barrier(comm));
        if (rank == 0)
            CHECK_RC(MPI_Ireduce(&v, &sx, 1, MPI_INT, MPI_SUM, 0, comm, &q[0]));
        else
            CHECK_RC(MPI_Ireduce(&v, &sy, 1, MPI_INT, MPI_SUM, 1, comm, &q[1]));
        CHECK_RC(MPI_Barrier(comm));
        if (rank == 0)
            CHECK_RC(MPI_Ireduce(&v, &sy, 1, MPI_INT, MPI_SUM, 1, comm, &q[1]));
        CHECK_RC(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        CHECK((rank != 0 || sx == want) && (rank != 1 || sy == want), "round %d: Ireduce to 0 gave %d, to 1 %d (want %d)",
              it, sx, sy, want);
    }
    CHECK_RC(MPI_Comm_free(&comm));
}

static void apart(void)
{
    /* every allreduce algorithm, the barrier's and bcast's in turn beside it;
     * 4 rounds each, so that both kinds of calls reach their shared-memory
     * segments (created at the third eligible call of each) */
    for (int i = 0; i < ct_nalgs(ct_allreduce); i++) {
        ct_force("allreduce", ct_allreduce[i]);
        ct_force("barrier", ct_barrier[i % ct_nalgs(ct_barrier)]);
        ct_force("bcast", ct_bcast[i % ct_nalgs(ct_bcast)]);
        MPI_Comm comm;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        for (int it = 0; it < 4; it++)
            apart_once(comm, it);
        CHECK_RC(MPI_Comm_free(&comm));
    }
    ct_force("allreduce", "auto");
    ct_force("barrier", "auto");
    ct_force("bcast", "auto");
}

/* ---- user point-to-point alongside ------------------------------------------ */
static void with_p2p(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int token = rank * 3 + 1, got = -1, bin = rank, bout = -1;
    MPI_Request p[2], c;
    MPI_Status st;
    /* wildcard receive posted first: it must match the user's message only */
    CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &p[0]));
    CHECK_RC(MPI_Iallreduce(&bin, &bout, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &c));
    CHECK_RC(MPI_Isend(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &p[1]));
    CHECK_RC(MPI_Wait(&c, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Wait(&p[0], &st));
    CHECK_RC(MPI_Wait(&p[1], MPI_STATUS_IGNORE));
    CHECK(got == left * 3 + 1 && st.MPI_SOURCE == left && st.MPI_TAG == 0, "wildcard receive got %d from %d tag %d",
          got, st.MPI_SOURCE, st.MPI_TAG);
    CHECK(bout == size - 1, "Iallreduce beside p2p: %d", bout);
}

/* ---- progress while blocked elsewhere --------------------------------------- */
static void progress(void)
{
    if (size < 2)
        return;
    enum { K = 50000 };
    int *in = tc_malloc(K * sizeof(int)), *out = tc_malloc(K * sizeof(int)), token = 0;
    for (int i = 0; i < K; i++)
        in[i] = rank + i;
    MPI_Request c;
    CHECK_RC(MPI_Iallreduce(in, out, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &c));
    if (rank == 0) {
        /* the last rank sends only once its Iallreduce completed, which needs
         * this rank's part: this rank's collective must move while it sits in Recv */
        CHECK_RC(MPI_Recv(&token, 1, MPI_INT, size - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == 42, "token %d", token);
        CHECK_RC(MPI_Wait(&c, MPI_STATUS_IGNORE));
    } else if (rank == size - 1) {
        int flag = 0;
        volatile double work = 0;
        while (!flag) {   /* compute, poll */
            for (int i = 0; i < 1000; i++)
                work += i * 0.5;
            CHECK_RC(MPI_Test(&c, &flag, MPI_STATUS_IGNORE));
        }
        token = 42;
        CHECK_RC(MPI_Send(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
    } else {
        CHECK_RC(MPI_Wait(&c, MPI_STATUS_IGNORE));
    }
    for (int i = 0; i < K; i++)
        CHECK(out[i] == size * (size - 1) / 2 + size * i, "Iallreduce element %d: %d", i, out[i]);
    free(in), free(out);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int it = 0; it < 3; it++) {
        many_kinds(MPI_COMM_WORLD, it);
        many_same(dup);
        with_p2p();
        progress();
    }
    nonblocking_only();
    attach_races();
    apart();
    roles_apart();
    /* collectives on two communicators in flight, finished crosswise */
    int a = rank, b = 2 * rank, ra = -1, rb = -1;
    MPI_Request r2[2];
    CHECK_RC(MPI_Iallreduce(&a, &ra, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r2[0]));
    CHECK_RC(MPI_Iallreduce(&b, &rb, 1, MPI_INT, MPI_SUM, dup, &r2[1]));
    CHECK_RC(MPI_Waitall(2, r2, MPI_STATUSES_IGNORE));
    CHECK(ra == size * (size - 1) / 2 && rb == size * (size - 1), "two communicators: %d %d", ra, rb);
    CHECK_RC(MPI_Comm_free(&dup));
    return tc_finish("coll_nbc");
}
