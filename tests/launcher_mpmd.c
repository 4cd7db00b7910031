/* launcher_mpmd: one program of an MPMD job ("mpiexec -n 1 a : -n 2 b").
 *
 * usage: launcher_mpmd LAYOUT APP
 *   LAYOUT  the program number of every world rank, comma separated
 *           ("0,1,1": rank 0 runs the first program, ranks 1-2 the second)
 *   APP     this copy's program number on the command line
 *
 * Each rank checks that MPI_APPNUM is set and equals APP, that the world has
 * as many ranks as LAYOUT names and that LAYOUT gives its own rank APP (the
 * programs' ranks follow one another in command-line order), that the
 * variable FERRY_TEST_APP_ENV that the test passes with -env reads "app<APP>"
 * (each program sees its own -env) and FERRY_TEST_GENV (-genv) reads "all";
 * then the ranks gather every rank's MPI_APPNUM and exchange a message with
 * their neighbours in the world across program boundaries.
 */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    CHECK(argc == 3, "usage: launcher_mpmd LAYOUT APP (got %d arguments)", argc - 1);
    int app = atoi(argv[2]);

    int layout[1024], n = 0;
    for (char *p = argv[1]; *p && n < 1024; n++) {
        layout[n] = (int)strtol(p, &p, 10);
        if (*p == ',')
            p++;
    }
    CHECK(n == size, "the layout names %d ranks, the world has %d", n, size);
    CHECK(layout[rank] == app, "rank %d runs program %d, the layout gives it program %d", rank, app,
          layout[rank]);

    int *appnum = NULL, flag = 0;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    CHECK(flag, "MPI_APPNUM is not set%s", "");
    CHECK(*appnum == app, "MPI_APPNUM is %d in program %d", *appnum, app);

    char want[32];
    snprintf(want, sizeof want, "app%d", app);
    const char *e = getenv("FERRY_TEST_APP_ENV"), *g = getenv("FERRY_TEST_GENV");
    CHECK(e && strcmp(e, want) == 0, "FERRY_TEST_APP_ENV is '%s', not '%s'", e ? e : "(unset)", want);
    CHECK(g && strcmp(g, "all") == 0, "FERRY_TEST_GENV is '%s', not 'all'", g ? g : "(unset)");

    int *all = tc_malloc(sizeof(int) * (size_t)size);
    CHECK_RC(MPI_Allgather(appnum, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        CHECK(all[r] == layout[r], "rank %d reports MPI_APPNUM %d, the layout says %d", r, all[r], layout[r]);
    free(all);

    /* a ring across the programs: each rank sends its (rank, program) on */
    int out[2] = {rank, app}, in[2] = {-1, -1};
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    CHECK_RC(MPI_Sendrecv(out, 2, MPI_INT, next, 7, in, 2, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[0] == prev && in[1] == layout[prev], "got (%d, %d) from rank %d, program %d", in[0], in[1], prev,
          layout[prev]);

    return tc_finish("launcher_mpmd");
}
