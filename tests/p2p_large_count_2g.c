/* p2p_large_count_2g: MPI-4 large counts above INT_MAX (exactly 2 ranks).
 *
 * N = INT_MAX + 1001 MPI_CHAR (2.15e9 bytes), every byte checked:
 *  - Send_c / Recv_c from rank 0 to rank 1: Get_count_c and Get_elements_c
 *    give N, the int Get_count and Get_elements MPI_UNDEFINED;
 *  - Type_contiguous_c(N, MPI_CHAR): Type_size_c and the extents are N, the
 *    int Type_size MPI_UNDEFINED; one element of it goes from rank 1 to
 *    rank 0 with Isend_c into an Irecv_c of N MPI_CHAR (Get_count_c: 1 of
 *    the type, N chars);
 *  - Bcast_c of N chars from rank 1;
 *  - Allreduce_c (MPI_IN_PLACE, MPI_SUM) of N unsigned chars.
 * Then a small message still works. Needs about 5 GB of memory (2.15 GB per
 * rank, and the allreduce's temporaries), ~10 s on Ferry. Registered only
 * as p2p_large_count_2g.np2 (label 'large'); with any other number of ranks
 * it fails rather than skips. An MPI-3 library (no _c functions) only says
 * so. */
#include "common.h"
#include <limits.h>

#if MPI_VERSION >= 4 || defined(FERRY_MPI_H_INCLUDED)
#define N ((MPI_Count)INT_MAX + 1001)

/* cheap (vectorisable) but position and rank dependent */
static inline unsigned char val(size_t i, int r)
{
    return (unsigned char)(i * 7 + (size_t)r * 13 + (i >> 24));
}

static void check_counts(const MPI_Status *st, MPI_Datatype t, MPI_Count expect, const char *what)
{
    MPI_Count c = -1, e = -1;
    int ic = 0, ie = 0;
    CHECK_RC(MPI_Get_count_c(st, t, &c));
    CHECK(c == expect, "%s: Get_count_c %lld, expected %lld", what, (long long)c, (long long)expect);
    CHECK_RC(MPI_Get_count(st, t, &ic));
    CHECK(expect > INT_MAX ? ic == MPI_UNDEFINED : ic == expect, "%s: Get_count %d", what, ic);
    if (t == MPI_CHAR) {
        CHECK_RC(MPI_Get_elements_c(st, t, &e));
        CHECK(e == expect, "%s: Get_elements_c %lld", what, (long long)e);
        CHECK_RC(MPI_Get_elements(st, t, &ie));
        CHECK(ie == MPI_UNDEFINED, "%s: Get_elements %d, expected MPI_UNDEFINED", what, ie);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    CHECK(size == 2, "p2p_large_count_2g must run with exactly 2 ranks, not %d", size);
    size_t n = (size_t)N;
    unsigned char *buf = malloc(n + 16);
    CHECK(buf != NULL, "cannot allocate %zu bytes", n + 16);
    MPI_Status st;
    double t0 = MPI_Wtime();

    /* 0 -> 1: Send_c / Recv_c */
    if (rank == 0) {
        tc_fill(buf, n, 0, 1);
        CHECK_RC(MPI_Send_c(buf, N, MPI_CHAR, 1, 1, MPI_COMM_WORLD));
    } else {
        memset(buf, 0, n + 16);
        CHECK_RC(MPI_Recv_c(buf, N + 16, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 1, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        check_counts(&st, MPI_CHAR, N, "Recv_c");
        CHECK_PAT(buf, n, 0, 1, "Send_c of %lld chars", (long long)N);
        CHECK_BYTES(buf + n, 16, 0, "Recv_c wrote past the message");
    }

    /* a contiguous type of N chars */
    MPI_Datatype big;
    CHECK_RC(MPI_Type_contiguous_c(N, MPI_CHAR, &big));
    MPI_Count sz = -1, lb = -1, ext = -1, tlb = -1, text = -1;
    int isz = 0;
    CHECK_RC(MPI_Type_size_c(big, &sz));
    CHECK_RC(MPI_Type_size(big, &isz));
    CHECK_RC(MPI_Type_get_extent_c(big, &lb, &ext));
    CHECK_RC(MPI_Type_get_true_extent_c(big, &tlb, &text));
    CHECK(sz == N && isz == MPI_UNDEFINED && lb == 0 && ext == N && tlb == 0 && text == N,
          "Type_contiguous_c(%lld): size_c %lld, size %d, extent %lld/%lld, true %lld/%lld", (long long)N,
          (long long)sz, isz, (long long)lb, (long long)ext, (long long)tlb, (long long)text);
    CHECK_RC(MPI_Type_commit(&big));
    MPI_Request r;
    if (rank == 1) {
        tc_fill(buf, n, 1, 2);
        CHECK_RC(MPI_Isend_c(buf, 1, big, 0, 2, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        memset(buf, 0, n + 16);
        CHECK_RC(MPI_Irecv_c(buf, N, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Wait(&r, &st));
        check_counts(&st, MPI_CHAR, N, "Irecv_c");
        check_counts(&st, big, 1, "Irecv_c counted in the contiguous type");
        CHECK_PAT(buf, n, 1, 2, "Isend_c of one %lld-byte element", (long long)N);
    }
    CHECK_RC(MPI_Type_free(&big));

    /* Bcast_c from rank 1 */
    if (rank == 1)
        tc_fill(buf, n, 1, 3);
    else
        memset(buf, 0, n);
    CHECK_RC(MPI_Bcast_c(buf, N, MPI_CHAR, 1, MPI_COMM_WORLD));
    CHECK_PAT(buf, n, 1, 3, "Bcast_c of %lld chars", (long long)N);

    /* Allreduce_c in place */
    for (size_t i = 0; i < n; i++)
        buf[i] = val(i, rank);
    CHECK_RC(MPI_Allreduce_c(MPI_IN_PLACE, buf, N, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD));
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (unsigned char)(val(i, 0) + val(i, 1)))
            CHECK(0, "Allreduce_c of %lld: element %zu is %u, expected %u", (long long)N, i, buf[i],
                  (unsigned char)(val(i, 0) + val(i, 1)));
    free(buf);

    int x = rank, y = -1;
    CHECK_RC(MPI_Sendrecv_c(&x, 1, MPI_INT, 1 - rank, 3, &y, 1, MPI_INT, 1 - rank, 3, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
    CHECK(y == 1 - rank, "small message after the big ones: %d", y);
    if (rank == 0)
        printf("p2p_large_count_2g: 4 operations of %.2f GB in %.1f s\n", (double)N * 1e-9, MPI_Wtime() - t0);
    return tc_finish("p2p_large_count_2g");
}
#else
int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    if (rank == 0)
        printf("p2p_large_count_2g: MPI %d.%d has no large-count functions (MPI-4)\n", MPI_VERSION, MPI_SUBVERSION);
    return tc_finish("p2p_large_count_2g");
}
#endif
