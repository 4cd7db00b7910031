/* Errors: every API entry point reports failure through ferry_error(), which
 * runs the error handler of the communicator involved (MPI_COMM_WORLD's when
 * none is). MPI_ERRORS_ARE_FATAL prints one line naming the rank, the MPI
 * function and the reason, and aborts the job; MPI_ERRORS_RETURN returns the
 * error class to the caller. Ferry's error codes are its error classes. */
#ifndef FERRY_ERROR_H
#define FERRY_ERROR_H
#include <mpi.h>

struct ferry_comm;

/* Raise error class `cls` in function `fn` (e.g. "MPI_Send") on comm (NULL:
 * MPI_COMM_WORLD). Returns cls when the handler returns. */
int ferry_error(struct ferry_comm *comm, int cls, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* For functions Ferry does not implement yet. */
int ferry_unsupported(const char *mpi_function_name);
const char *ferry_error_class_string(int cls);

void ferry_errhandler_init(void);
/* Valid errhandler handle? */
int ferry_errhandler_valid(MPI_Errhandler eh);
void ferry_errhandler_retain(MPI_Errhandler eh);
void ferry_errhandler_release(MPI_Errhandler eh);
/* User handler for a comm (Comm_create_errhandler). */
MPI_Errhandler ferry_errhandler_new(MPI_Comm_errhandler_function *fn);

#endif
