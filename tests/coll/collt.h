/* Helpers shared by the collective tests (tests/coll/).
 *
 * Every program runs unchanged on Ferry and on MPICH (to validate the tests):
 * on Ferry it loops over every algorithm of a collective, forcing each in
 * turn with MPIX_Ferry_coll_set(); elsewhere that symbol is absent (a weak
 * reference) and only the MPI library's own choice ("auto") runs. */
#ifndef FERRY_TESTS_COLLT_H
#define FERRY_TESTS_COLLT_H
#include "../common.h"

int MPIX_Ferry_coll_set(const char *collective, const char *algorithm) __attribute__((weak));

/* Number of entries of a NULL-terminated algorithm list to run. */
static TC_UNUSED int ct_nalgs(const char *const *algs)
{
    int n = 0;
    while (algs[n])
        n++;
    return MPIX_Ferry_coll_set ? n : 1;
}

/* Force algorithm alg ("auto": automatic) for collective coll. */
static TC_UNUSED void ct_force(const char *coll, const char *alg)
{
    if (MPIX_Ferry_coll_set)
        CHECK(MPIX_Ferry_coll_set(coll, alg) == MPI_SUCCESS, "MPIX_Ferry_coll_set(%s, %s)", coll, alg);
}

/* Algorithms of each collective ("auto" first). Kept in step with
 * src/coll/select.c: forcing an unknown name fails the test. */
static const char *const ct_barrier[] = {"auto", "dissemination", "binomial", "shm", NULL};
static const char *const ct_bcast[] = {"auto", "binomial", "scatter_allgather", "chain", "hier", "shm", NULL};
static const char *const ct_gather[] = {"auto", "binomial", "linear", "shm", NULL};
static const char *const ct_gatherv[] = {"auto", "linear", NULL};
static const char *const ct_scatter[] = {"auto", "binomial", "linear", "shm", NULL};
static const char *const ct_scatterv[] = {"auto", "linear", NULL};
static const char *const ct_allgather[] = {"auto", "ring", "recursive_doubling", "bruck", "linear", "shm", NULL};
static const char *const ct_allgatherv[] = {"auto", "ring", "linear", NULL};
static const char *const ct_alltoall[] = {"auto", "pairwise", "linear", "bruck", "shm", NULL};
static const char *const ct_alltoallv[] = {"auto", "pairwise", "linear", NULL};
static const char *const ct_alltoallw[] = {"auto", "pairwise", "linear", NULL};
static const char *const ct_reduce[] = {"auto", "binomial", "redscat_gather", "hier", "shm", NULL};
static const char *const ct_allreduce[] = {"auto", "recursive_doubling", "redscat_allgather", "ring", "reduce_bcast",
                                           "hier", "shm", NULL};
static const char *const ct_reduce_scatter[] = {"auto", "reduce_scatterv", "ring", "pairwise", NULL};
static const char *const ct_scan[] = {"auto", "recursive_doubling", "linear", NULL};

/* Wait for a nonblocking collective, mostly by polling with MPI_Test so
 * progress from Test is exercised too. */
static TC_UNUSED void ct_wait(MPI_Request *req)
{
    int flag = 0;
    for (int i = 0; i < 3 && !flag; i++)
        CHECK_RC(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
    if (!flag)
        CHECK_RC(MPI_Wait(req, MPI_STATUS_IGNORE));
    CHECK(*req == MPI_REQUEST_NULL, "request not freed on completion");
}

#endif
