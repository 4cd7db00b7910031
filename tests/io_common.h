/* Helpers for the MPI-IO tests: a per-job file name in $TMPDIR (or /tmp),
 * chosen by rank 0 and broadcast. */
#ifndef FERRY_TESTS_IO_COMMON_H
#define FERRY_TESTS_IO_COMMON_H
#include "common.h"
#include <unistd.h>

static TC_UNUSED void io_name(char *name, size_t len, const char *tag)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        const char *dir = getenv("TMPDIR");
        if (!dir || !*dir)
            dir = "/tmp";
        snprintf(name, len, "%s/ferry-%s-%d-%d", dir, tag, (int)getpid(), rand() % 100000);
    }
    CHECK_RC(MPI_Bcast(name, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD));
}

static TC_UNUSED int io_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}
#endif
