/* Helpers shared by the MPI-IO entry points (file.c, file_rw.c). */
#ifndef FERRY_API_FILE_INTERNAL_H
#define FERRY_API_FILE_INTERNAL_H
#include "api/check.h"
#include "io/file.h"

/* MPI is initialized and h is an open file; else the error, raised on
 * MPI_FILE_NULL's handler (MPI-3.1 13.7: errors not tied to a valid file). */
static inline int check_file(MPI_File h, struct ferry_file **f, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    *f = ferry_file_lookup(h);
    if (!*f) {
        rc = ferry_file_error(NULL, MPI_ERR_FILE, fn, h == MPI_FILE_NULL ? "file is MPI_FILE_NULL"
                                                                         : "invalid file handle %p", (void *)h);
        /* callers go on when this is 0: without a file they must not, even
         * where the handler reset the code */
        return rc ? rc : MPI_ERR_FILE;
    }
    return MPI_SUCCESS;
}

#endif
