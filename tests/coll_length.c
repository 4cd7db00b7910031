/* coll_length: a broadcast whose counts differ between the root and the
 * other ranks (an erroneous program, and a common mistake) is reported, not
 * silently half-done: under MPI_ERRORS_RETURN every non-root rank's
 * MPI_Bcast / MPI_Ibcast + Wait returns an error, whether its count is larger
 * than the root's or smaller (the root may not notice). Each case runs on a
 * fresh duplicate of MPI_COMM_WORLD, and afterwards a correct Bcast and an
 * Allreduce on the same duplicate still work (nothing of the bad one is left
 * over). MPICH 4.0.2's errors/coll/bcastlength and ibcastlength check the
 * same (4 ranks); this runs at any count, with several roots. Open MPI 4.1
 * does not report a count larger than the root's and does not survive a
 * mismatch (nothing run there beyond 1 rank).
 */
#include "common.h"

static int rank, size;

static void one_case(int root, int nonblocking, int longer)
{
    MPI_Comm c;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_RC(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int buf[10];
    for (int i = 0; i < 10; i++)
        buf[i] = rank == root ? 1000 + i : -1;
    /* longer: the others expect more than the root sends; else less */
    int n = rank == root ? (longer ? 1 : 10) : (longer ? 10 : 1), rc;
    if (nonblocking) {
        MPI_Request r;
        rc = MPI_Ibcast(buf, n, MPI_INT, root, c, &r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        rc = MPI_Bcast(buf, n, MPI_INT, root, c);
    }
    if (rank != root)
        CHECK(rc != MPI_SUCCESS, "%s root %d: %s count on rank %d (root %d, here %d) not reported",
              nonblocking ? "Ibcast" : "Bcast", root, longer ? "larger" : "smaller", rank, longer ? 1 : 10, n);
    /* the communicator still works */
    int v[3] = {rank == root ? 7 : -1, rank == root ? 8 : -1, rank == root ? 9 : -1};
    CHECK_RC(MPI_Bcast(v, 3, MPI_INT, root, c));
    CHECK(v[0] == 7 && v[1] == 8 && v[2] == 9, "Bcast after the mismatch: %d %d %d", v[0], v[1], v[2]);
    int in = rank + 1, out = 0;
    CHECK_RC(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, c));
    CHECK(out == size * (size + 1) / 2, "Allreduce after the mismatch: %d", out);
    CHECK_RC(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    /* Open MPI 4.1 does not survive a mismatched broadcast: with 3 or more
     * ranks the later collectives hang, with 2 an Ibcast's error goes to
     * MPI_COMM_WORLD's handler (peer deviations) */
    if (tc_is_open_mpi() && size > 1) {
        if (rank == 0)
            printf("coll_length: Open MPI, %d ranks: mismatched broadcasts not run\n", size);
        return tc_finish("coll_length");
    }
    int roots[2] = {0, size - 1};
    for (int k = 0; k < (size > 1 ? 2 : 1); k++)
        for (int nb = 0; nb < 2; nb++)
            for (int longer = 0; longer < 2; longer++)
                one_case(roots[k], nb, longer);
    return tc_finish("coll_length");
}
