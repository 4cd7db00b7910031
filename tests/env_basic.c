/* env_basic: environment management.
 *
 * MPI_Initialized / MPI_Finalized before, during and after MPI, Get_version and
 * Get_library_version (also before Init and after Finalize), Get_processor_name,
 * Wtime against CLOCK_MONOTONIC, Wtick, Alloc_mem / Free_mem (used as message
 * buffers), Query_thread / Is_thread_main after plain MPI_Init, Comm_rank and
 * Comm_size of MPI_COMM_WORLD and MPI_COMM_SELF, and that the ranks form a
 * permutation of 0..size-1.
 *
 * usage: env_basic [expected_world_size]
 */
#define _GNU_SOURCE
#include "common.h"
#include <time.h>

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check_version(void)
{
    int v = -1, sv = -1, len = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    CHECK_RC(MPI_Get_version(&v, &sv));
#ifndef TC_FOREIGN_MPI_H
    /* (the ABI builds compile against MPICH's mpi.h but run on Ferry) */
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION,
          "MPI_Get_version gave %d.%d, mpi.h says %d.%d", v, sv, MPI_VERSION,
          MPI_SUBVERSION);
#endif
    CHECK(v >= 3, "MPI version %d < 3", v);
    memset(lib, 'x', sizeof lib);
    CHECK_RC(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING,
          "library version length %d", len);
    /* Open MPI 4.1 counts the terminating NUL in resultlen (peer deviation) */
    int slen = (int)strnlen(lib, sizeof lib);
    CHECK(slen == len || (slen == len - 1 && tc_is_open_mpi()),
          "library version: resultlen %d but NUL after %d characters", len, slen);
}

int main(int argc, char **argv)
{
    int flag = -1, rank, size, expect = argc > 1 ? atoi(argv[1]) : -1;

    /* --- before MPI_Init --- */
    CHECK_RC(MPI_Initialized(&flag));
    CHECK(flag == 0, "MPI_Initialized before MPI_Init gave %d", flag);
    flag = -1;
    CHECK_RC(MPI_Finalized(&flag));
    CHECK(flag == 0, "MPI_Finalized before MPI_Init gave %d", flag);
    check_version();

    tc_init(&argc, &argv, &rank, &size);

    flag = -1;
    CHECK_RC(MPI_Initialized(&flag));
    CHECK(flag == 1, "MPI_Initialized after MPI_Init gave %d", flag);
    flag = -1;
    CHECK_RC(MPI_Finalized(&flag));
    CHECK(flag == 0, "MPI_Finalized while initialized gave %d", flag);
    check_version();

    /* --- world / self --- */
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d size %d", rank, size);
    if (expect > 0)
        CHECK(size == expect, "MPI_COMM_WORLD has %d ranks, launched %d", size, expect);
    int srank = -1, ssize = -1;
    CHECK_RC(MPI_Comm_rank(MPI_COMM_SELF, &srank));
    CHECK_RC(MPI_Comm_size(MPI_COMM_SELF, &ssize));
    CHECK(srank == 0 && ssize == 1, "MPI_COMM_SELF rank %d size %d", srank, ssize);

    /* ranks are a permutation: everybody reports to rank 0 */
    if (rank == 0) {
        char *seen = tc_malloc((size_t)size);
        memset(seen, 0, (size_t)size);
        seen[0] = 1;
        for (int i = 1; i < size; i++) {
            int r = -1;
            MPI_Status st;
            CHECK_RC(MPI_Recv(&r, 1, MPI_INT, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &st));
            CHECK(r == st.MPI_SOURCE, "rank %d claims to be %d", st.MPI_SOURCE, r);
            CHECK(r > 0 && r < size && !seen[r], "duplicate or bad rank %d", r);
            seen[r] = 1;
        }
        free(seen);
    } else {
        CHECK_RC(MPI_Send(&rank, 1, MPI_INT, 0, 11, MPI_COMM_WORLD));
    }

    /* --- threading after plain MPI_Init --- */
    int prov = -1;
    CHECK_RC(MPI_Query_thread(&prov));
    CHECK(prov == MPI_THREAD_SINGLE || prov == MPI_THREAD_FUNNELED ||
              prov == MPI_THREAD_SERIALIZED || prov == MPI_THREAD_MULTIPLE,
          "MPI_Query_thread gave %d", prov);
    flag = -1;
    CHECK_RC(MPI_Is_thread_main(&flag));
    CHECK(flag == 1, "MPI_Is_thread_main in the main thread gave %d", flag);

    /* --- processor name --- */
    char name[MPI_MAX_PROCESSOR_NAME];
    int nlen = -1;
    memset(name, 'x', sizeof name);
    CHECK_RC(MPI_Get_processor_name(name, &nlen));
    CHECK(nlen > 0 && nlen < MPI_MAX_PROCESSOR_NAME, "processor name length %d", nlen);
    CHECK(memchr(name, 0, (size_t)nlen + 1) && (int)strlen(name) == nlen,
          "processor name not NUL-terminated at resultlen %d", nlen);

    /* --- Wtick / Wtime --- */
    double tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick <= 0.01, "MPI_Wtick() = %g", tick);
    double prev = MPI_Wtime();
    for (int i = 0; i < 100000; i++) {
        double t = MPI_Wtime();
        CHECK(t >= prev, "MPI_Wtime went backwards: %.9f after %.9f", t, prev);
        prev = t;
    }
    /* the interval measured by Wtime must agree with CLOCK_MONOTONIC; the
     * bracket [m1 - m0b, m1b - m0] is immune to preemption between the calls */
    double m0 = mono(), w0 = MPI_Wtime(), m0b = mono();
    while (mono() - m0 < 0.03)
        ;
    double m1 = mono(), w1 = MPI_Wtime(), m1b = mono();
    double dw = w1 - w0, slack = 2 * tick + 1e-4;
    CHECK(dw >= (m1 - m0b) - slack && dw <= (m1b - m0) + slack,
          "MPI_Wtime measured %.6f s, CLOCK_MONOTONIC between %.6f and %.6f s", dw,
          m1 - m0b, m1b - m0);

    /* --- Alloc_mem / Free_mem, used as message buffers --- */
    const size_t n = 1 << 20;
    unsigned char *sb = NULL, *rb = NULL;
    void *zero = NULL;
    CHECK_RC(MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &sb));
    CHECK_RC(MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &rb));
    CHECK(sb && rb && sb != rb, "MPI_Alloc_mem returned %p and %p", (void *)sb, (void *)rb);
    CHECK_RC(MPI_Alloc_mem(0, MPI_INFO_NULL, &zero));
    CHECK_RC(MPI_Free_mem(zero));
    for (int k = 0; k < 3; k++) { /* small, medium, large */
        size_t len = k == 0 ? 13 : k == 1 ? 4099 : n;
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        tc_fill(sb, len, rank, 100 + k);
        memset(rb, 0, n);
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv(sb, (int)len, MPI_BYTE, to, k, rb, (int)n, MPI_BYTE, from, k,
                              MPI_COMM_WORLD, &st));
        CHECK(tc_count(&st, MPI_BYTE) == (int)len, "count %d expected %zu",
              tc_count(&st, MPI_BYTE), len);
        CHECK_PAT(rb, len, from, 100 + k, "Alloc_mem buffer, %zu bytes", len);
    }
    CHECK_RC(MPI_Free_mem(sb));
    CHECK_RC(MPI_Free_mem(rb));

    tc_finish("env_basic");

    /* --- after MPI_Finalize --- */
    flag = -1;
    CHECK_RC(MPI_Finalized(&flag));
    CHECK(flag == 1, "MPI_Finalized after MPI_Finalize gave %d", flag);
    flag = -1;
    CHECK_RC(MPI_Initialized(&flag));
    CHECK(flag == 1, "MPI_Initialized after MPI_Finalize gave %d", flag);
    check_version();
    return 0;
}
