/* Reproducible reductions: MPI strongly recommends that a reduction give the
 * same result whenever it is applied to the same arguments in the same
 * order. Floating-point sums are not associative, so every algorithm that a
 * call may take must combine the ranks in the same order; Ferry's calls take
 * point-to-point algorithms until a communicator's shared-memory segment
 * exists (its third eligible collective) and the shared-memory ones after.
 *
 * For vectors of doubles whose sums depend on the order of the additions
 * (magnitudes from 1e-8 to 1e8, both signs), at sizes below and above every
 * threshold of the default rules (flat and reduce-scatter shared-memory
 * allreduce, recursive doubling, Rabenseifner, binomial reduce), the test
 * checks bit for bit that
 *   - eight calls of MPI_Allreduce give the same result, and so do
 *     MPI_IN_PLACE calls and MPI_Iallreduce;
 *   - eight calls of MPI_Reduce to each of three roots give the same result
 *     at that root (in place too);
 *   - every rank gets the same allreduce result.
 * It also checks that the order matters for the data (a rank-order sum and a
 * reversed one differ somewhere), so that a test that passed would not pass
 * by accident, and the result against a local sum within rounding. */
#include "collt.h"
#include <math.h>

#define CALLS 8

static int rank, size;
/* Peer deviation: MPICH 4.0.2 crashes in an MPI_IN_PLACE reduce to a non-zero
 * root from 8 KiB (it takes MPI_IN_PLACE for a buffer): skipped there. */
static int peer_inplace_root_bug;

/* element i of rank q's vector */
static double val(int q, size_t i)
{
    uint64_t x = ((uint64_t)q + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)i + 7) * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    double mant = (double)(x & 0xFFFFF) / (double)0x100000 + 0.5;   /* [0.5, 1.5) */
    int ex = (int)((x >> 20) % 17) - 8;                                 /* 1e-8 .. 1e8 */
    return ((x >> 40) & 1 ? -mant : mant) * pow(10.0, ex);
}

static void fill(double *v, size_t n, int q)
{
    for (size_t i = 0; i < n; i++)
        v[i] = val(q, i);
}

static void same_bits(const double *a, const double *b, size_t n, const char *what, size_t count, int call)
{
    for (size_t i = 0; i < n; i++)
        CHECK(!memcmp(&a[i], &b[i], sizeof(double)), "%s, %zu doubles, call %d: element %zu is %.17g, first call %.17g",
              what, count, call, i, b[i], a[i]);
}

/* the result is a sum of the ranks' values, whatever the order: within the
 * rounding of a sum of `size` terms */
static void near_sum(const double *r, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        double s = 0, mag = 0;
        for (int q = 0; q < size; q++) {
            s += val(q, i);
            mag += fabs(val(q, i));
        }
        CHECK(fabs(r[i] - s) <= mag * 1e-13, "%s: element %zu is %.17g, expected about %.17g", what, i, r[i], s);
    }
}

static void allreduce_case(MPI_Comm comm, size_t count, double *in, double *first, double *out)
{
    const int n = (int)count;
    CHECK_RC(MPI_Allreduce(in, first, n, MPI_DOUBLE, MPI_SUM, comm));
    near_sum(first, count, "MPI_Allreduce");
    for (int c = 1; c < CALLS; c++) {
        memset(out, 0, count * sizeof(double));
        CHECK_RC(MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm));
        same_bits(first, out, count, "MPI_Allreduce", count, c);
    }
    for (int c = 0; c < 3; c++) {
        memcpy(out, in, count * sizeof(double));
        CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_SUM, comm));
        same_bits(first, out, count, "MPI_Allreduce in place", count, c);
    }
    for (int c = 0; c < 3; c++) {
        MPI_Request req;
        memset(out, 0, count * sizeof(double));
        CHECK_RC(MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm, &req));
        ct_wait(&req);
        same_bits(first, out, count, "MPI_Iallreduce", count, c);
    }
    /* every rank holds the same bits: rank 0's result against each rank's */
    memcpy(out, first, count * sizeof(double));
    CHECK_RC(MPI_Bcast(out, n, MPI_DOUBLE, 0, comm));
    same_bits(out, first, count, "MPI_Allreduce on this rank against rank 0", count, 0);
}

static void reduce_case(MPI_Comm comm, size_t count, int root, double *in, double *first, double *out)
{
    const int n = (int)count;
    CHECK_RC(MPI_Reduce(in, first, n, MPI_DOUBLE, MPI_SUM, root, comm));
    if (rank == root)
        near_sum(first, count, "MPI_Reduce");
    for (int c = 1; c < CALLS; c++) {
        memset(out, 0, count * sizeof(double));
        CHECK_RC(MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm));
        if (rank == root)
            same_bits(first, out, count, "MPI_Reduce", count, c);
    }
    for (int c = 0; c < 3 && !(peer_inplace_root_bug && root != 0); c++) {
        if (rank == root) {
            memcpy(out, in, count * sizeof(double));
            CHECK_RC(MPI_Reduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_SUM, root, comm));
            same_bits(first, out, count, "MPI_Reduce in place", count, c);
        } else {
            CHECK_RC(MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm));
        }
    }
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    peer_inplace_root_bug = tc_mpich_version() != 0;
    /* 8 bytes to 2 MiB: every size class of the default rules */
    static const size_t counts[] = {1, 3, 100, 1024, 1025, 2048, 4100, 8192, 8200, 65536, 262144};
    const size_t ncounts = sizeof counts / sizeof counts[0], most = counts[ncounts - 1];
    double *in = malloc(most * sizeof(double)), *first = malloc(most * sizeof(double)),
           *out = malloc(most * sizeof(double));
    CHECK(in && first && out, "out of memory");

    /* the data is order-sensitive: summed in rank order and in reverse
     * order, some element differs (with 3 or more ranks) */
    if (size >= 3) {
        size_t differ = 0;
        for (size_t i = 0; i < 4096; i++) {
            double up = 0, down = 0;
            for (int q = 0; q < size; q++)
                up += val(q, i);
            for (int q = size - 1; q >= 0; q--)
                down += val(q, i);
            differ += memcmp(&up, &down, sizeof up) != 0;
        }
        CHECK(differ > 0, "no element's sum depends on the order: the test data proves nothing");
    }

    for (size_t k = 0; k < ncounts; k++) {
        size_t count = counts[k];
        fill(in, count, rank);
        /* a fresh communicator per case: its first calls take the
         * point-to-point algorithms, the later ones shared memory */
        MPI_Comm comm;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        allreduce_case(comm, count, in, first, out);
        CHECK_RC(MPI_Comm_free(&comm));
        int roots[3] = {0, size - 1, size / 2};
        for (int j = 0; j < 3; j++) {
            CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
            reduce_case(comm, count, roots[j], in, first, out);
            CHECK_RC(MPI_Comm_free(&comm));
        }
    }
    free(in);
    free(first);
    free(out);
    tc_finish("coll_repro");
    return 0;
}
