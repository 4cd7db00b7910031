/* p2p_large_2g: one message of more than 2 GiB (exactly 2 ranks).
 *
 * 600,000,000 MPI_INT = 2.4e9 bytes (> 2^31) from rank 0 to rank 1 with
 * blocking Send/Recv, then back from rank 1 to rank 0 with Isend/Irecv into
 * a buffer offset by one int; Get_count and Get_elements report the full
 * count; every element is checked against a position + sender dependent
 * value; a small message afterwards still works.  Needs ~5 GB of memory.
 * Registered only as p2p_large_2g.np2 (label 'large'); with any other number
 * of ranks it fails rather than skips.
 */
#include "common.h"

#define COUNT 600000000
/* cheap (vectorisable) but position and sender dependent: a shifted,
 * truncated or foreign block is detected */
static inline int val(size_t i, int r)
{
    return (int)((uint32_t)i * 0x9E3779B1u + (uint32_t)r * 0x85EBCA77u + (uint32_t)(i >> 20));
}

int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    CHECK(size == 2, "p2p_large_2g must run with exactly 2 ranks, not %d", size);
    CHECK((size_t)COUNT * sizeof(int) > ((size_t)1 << 31), "message not above 2 GiB");
    int *buf = malloc(((size_t)COUNT + 1) * sizeof(int));
    CHECK(buf != NULL, "cannot allocate %zu bytes", ((size_t)COUNT + 1) * sizeof(int));
    MPI_Status st;
    int c = -1, e = -1;
    double t0 = MPI_Wtime();

    /* 0 -> 1, blocking */
    if (rank == 0) {
        for (size_t i = 0; i < COUNT; i++)
            buf[i] = val(i, 0);
        CHECK_RC(MPI_Send(buf, COUNT, MPI_INT, 1, 1, MPI_COMM_WORLD));
    } else {
        memset(buf, 0, (size_t)COUNT * sizeof(int));
        CHECK_RC(MPI_Recv(buf, COUNT, MPI_INT, 0, 1, MPI_COMM_WORLD, &st));
        CHECK_RC(MPI_Get_count(&st, MPI_INT, &c));
        CHECK_RC(MPI_Get_elements(&st, MPI_INT, &e));
        CHECK(c == COUNT && e == COUNT, "Get_count %d Get_elements %d, expected %d", c, e, COUNT);
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 1, "status source %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
        for (size_t i = 0; i < COUNT; i++)
            if (buf[i] != val(i, 0))
                CHECK(0, "0->1: element %zu (byte %zu) is %d, expected %d", i, i * sizeof(int),
                      buf[i], val(i, 0));
    }
    /* 1 -> 0, nonblocking, receive buffer offset by one int */
    MPI_Request r;
    if (rank == 1) {
        for (size_t i = 0; i < COUNT; i++)
            buf[i] = val(i, 1);
        CHECK_RC(MPI_Isend(buf, COUNT, MPI_INT, 0, 2, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        buf[0] = 0x5a5a5a5a;
        CHECK_RC(MPI_Irecv(buf + 1, COUNT, MPI_INT, 1, 2, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Wait(&r, &st));
        CHECK_RC(MPI_Get_count(&st, MPI_INT, &c));
        CHECK(c == COUNT, "Irecv: Get_count %d", c);
        CHECK(buf[0] == 0x5a5a5a5a, "int before the receive buffer was overwritten");
        for (size_t i = 0; i < COUNT; i++)
            if (buf[i + 1] != val(i, 1))
                CHECK(0, "1->0: element %zu is %d, expected %d", i, buf[i + 1], val(i, 1));
    }
    free(buf);
    int x = rank, y = -1;
    CHECK_RC(MPI_Sendrecv(&x, 1, MPI_INT, 1 - rank, 3, &y, 1, MPI_INT, 1 - rank, 3,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(y == 1 - rank, "small message after the big ones: %d", y);
    if (rank == 0)
        printf("p2p_large_2g: 2 x %.2f GB in %.1f s\n", COUNT * 4e-9, MPI_Wtime() - t0);
    CHECK_RC(MPI_Finalize());
    return 0;
}
