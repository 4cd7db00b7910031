/* Errors: every API entry point reports failure through ferry_error(), which
 * runs the error handler of the communicator involved (MPI_COMM_WORLD's when
 * none is). MPI_ERRORS_ARE_FATAL prints one line naming the rank, the MPI
 * function and the reason, and aborts the job; MPI_ERRORS_RETURN returns the
 * error class to the caller. Ferry's error codes are its error classes. */
#ifndef FERRY_ERROR_H
#define FERRY_ERROR_H
#include <mpi.h>
#include <stdarg.h>

struct ferry_comm;

/* Raise error class `cls` in function `fn` (e.g. "MPI_Send") on comm (NULL:
 * MPI_COMM_WORLD). Returns cls when the handler returns. */
int ferry_error(struct ferry_comm *comm, int cls, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* What MPI_ERRORS_ARE_FATAL does: print one line naming the rank, fn, msg
 * and the class, and abort the job (for objects other than communicators,
 * whose handlers the caller runs itself: files). */
_Noreturn void ferry_error_abort(int cls, const char *fn, const char *msg);
/* The same with a printf-style reason (the caller's va_list; never returns). */
_Noreturn void ferry_error_abortv(int cls, const char *fn, const char *fmt, va_list ap);
/* For functions Ferry does not implement yet. */
int ferry_unsupported(const char *mpi_function_name);
const char *ferry_error_class_string(int cls);

/* Classes, codes and strings added by the application (user_errors.c). */
int ferry_user_error_class_add(void);
/* A new code in class cls (predefined, or added). */
int ferry_user_error_code_add(int cls);
/* Is cls an added class? */
int ferry_user_error_is_class(int cls);
/* Class of an error code, predefined or added; -1 for an unknown value. */
int ferry_error_class_of(int code);
/* Set the string of an added class or code; -1 when it is not one. */
int ferry_user_error_set_string(int code, const char *s);
/* String of an added class or code ("" until set), NULL when it is not one. */
const char *ferry_user_error_string(int code);
/* The largest error class in use (the MPI_LASTUSEDCODE attribute). */
int ferry_error_last_used_code(void);
void ferry_user_errors_finalize(void);
/* Remove an added code (want_class 0) or class (1): 0 done, -1 not such an
 * added code/class, -2 a class that still has codes. */
int ferry_user_error_remove(int code, int want_class);
/* Forget an added code's or class's string: 0, or -1 when not added. */
int ferry_user_error_remove_string(int code);

void ferry_errhandler_init(void);
/* Valid errhandler handle? */
int ferry_errhandler_valid(MPI_Errhandler eh);
void ferry_errhandler_retain(MPI_Errhandler eh);
void ferry_errhandler_release(MPI_Errhandler eh);
/* User handler for a comm (Comm_create_errhandler). */
MPI_Errhandler ferry_errhandler_new(MPI_Comm_errhandler_function *fn);
/* The function of a user handler (every kind has this shape in the MPICH
 * ABI: a pointer to an int handle, the code, varargs); NULL for the
 * predefined ones. */
MPI_Comm_errhandler_function *ferry_errhandler_fn(MPI_Errhandler eh);

#endif
