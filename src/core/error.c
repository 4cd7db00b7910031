/* Error classes, error handlers and the one place errors are raised. */
#include "core/error.h"
#include "boot/boot.h"
#include "core/comm.h"
#include "core/handle.h"
#include "core/runtime.h"
#include "core/util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct errhandler {
    MPI_Errhandler handle;
    int refs;
    MPI_Comm_errhandler_function *fn;
};
static struct ferry_objtab errhandlers;

static const struct {
    int cls;
    const char *text;
} class_text[] = {
    {MPI_SUCCESS, "no error"},
    {MPI_ERR_BUFFER, "invalid buffer pointer"},
    {MPI_ERR_COUNT, "invalid count argument"},
    {MPI_ERR_TYPE, "invalid datatype"},
    {MPI_ERR_TAG, "invalid tag"},
    {MPI_ERR_COMM, "invalid communicator"},
    {MPI_ERR_RANK, "invalid rank"},
    {MPI_ERR_ROOT, "invalid root"},
    {MPI_ERR_GROUP, "invalid group"},
    {MPI_ERR_OP, "invalid operation"},
    {MPI_ERR_TOPOLOGY, "invalid topology"},
    {MPI_ERR_DIMS, "invalid dimension argument"},
    {MPI_ERR_ARG, "invalid argument"},
    {MPI_ERR_UNKNOWN, "unknown error"},
    {MPI_ERR_TRUNCATE, "message truncated: the receive buffer is smaller than the message"},
    {MPI_ERR_OTHER, "other error"},
    {MPI_ERR_INTERN, "internal error"},
    {MPI_ERR_IN_STATUS, "error code is in the status"},
    {MPI_ERR_PENDING, "pending request"},
    {MPI_ERR_REQUEST, "invalid request"},
    {MPI_ERR_ACCESS, "permission denied"},
    {MPI_ERR_AMODE, "invalid access mode"},
    {MPI_ERR_BAD_FILE, "invalid file name"},
    {MPI_ERR_CONVERSION, "data conversion error"},
    {MPI_ERR_DUP_DATAREP, "data representation already defined"},
    {MPI_ERR_FILE_EXISTS, "file exists"},
    {MPI_ERR_FILE_IN_USE, "file in use"},
    {MPI_ERR_FILE, "invalid file handle"},
    {MPI_ERR_INFO, "invalid info object"},
    {MPI_ERR_INFO_KEY, "invalid info key"},
    {MPI_ERR_INFO_VALUE, "invalid info value"},
    {MPI_ERR_INFO_NOKEY, "info key not defined"},
    {MPI_ERR_IO, "I/O error"},
    {MPI_ERR_NAME, "invalid service name"},
    {MPI_ERR_NO_MEM, "out of memory"},
    {MPI_ERR_NOT_SAME, "collective arguments not identical on all processes"},
    {MPI_ERR_NO_SPACE, "not enough space"},
    {MPI_ERR_NO_SUCH_FILE, "no such file"},
    {MPI_ERR_PORT, "invalid port"},
    {MPI_ERR_QUOTA, "quota exceeded"},
    {MPI_ERR_READ_ONLY, "read-only file or file system"},
    {MPI_ERR_SERVICE, "invalid service"},
    {MPI_ERR_SPAWN, "spawn error"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "unsupported data representation"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "operation not supported by Ferry yet"},
    {MPI_ERR_WIN, "invalid window"},
    {MPI_ERR_BASE, "invalid base address"},
    {MPI_ERR_LOCKTYPE, "invalid lock type"},
    {MPI_ERR_KEYVAL, "invalid keyval"},
    {MPI_ERR_RMA_CONFLICT, "conflicting RMA accesses"},
    {MPI_ERR_RMA_SYNC, "wrong RMA synchronization"},
    {MPI_ERR_SIZE, "invalid size"},
    {MPI_ERR_DISP, "invalid displacement"},
    {MPI_ERR_ASSERT, "invalid assert"},
    {MPI_ERR_RMA_RANGE, "RMA target out of the window"},
    {MPI_ERR_RMA_ATTACH, "cannot attach memory to the window"},
    {MPI_ERR_RMA_SHARED, "memory cannot be shared"},
    {MPI_ERR_RMA_FLAVOR, "wrong window flavor"},
    /* The MPI_T return codes and the MPI-4 classes are in the same numbering
     * (and MPICH's table). Ferry returns some of them (MPI_ERR_SESSION from
     * the session calls, MPI_T_ERR_* from the tool interface), and a program
     * that hands one to MPI_Error_class or MPI_Error_string must get an
     * answer, not a second error (fatal under MPI_ERRORS_ARE_FATAL). */
    {MPI_T_ERR_MEMORY, "MPI_T: out of memory"},
    {MPI_T_ERR_NOT_INITIALIZED, "MPI_T: the tool interface is not initialized"},
    {MPI_T_ERR_CANNOT_INIT, "MPI_T: the tool interface cannot be initialized"},
    {MPI_T_ERR_INVALID_INDEX, "MPI_T: invalid index"},
    {MPI_T_ERR_INVALID_ITEM, "MPI_T: invalid item"},
    {MPI_T_ERR_INVALID_HANDLE, "MPI_T: invalid handle"},
    {MPI_T_ERR_OUT_OF_HANDLES, "MPI_T: out of handles"},
    {MPI_T_ERR_OUT_OF_SESSIONS, "MPI_T: out of sessions"},
    {MPI_T_ERR_INVALID_SESSION, "MPI_T: invalid session"},
    {MPI_T_ERR_CVAR_SET_NOT_NOW, "MPI_T: the control variable cannot be set now"},
    {MPI_T_ERR_CVAR_SET_NEVER, "MPI_T: the control variable cannot be set"},
    {MPI_T_ERR_PVAR_NO_STARTSTOP, "MPI_T: the performance variable cannot be started or stopped"},
    {MPI_T_ERR_PVAR_NO_WRITE, "MPI_T: the performance variable cannot be written"},
    {MPI_T_ERR_PVAR_NO_ATOMIC, "MPI_T: the performance variable cannot be read and written atomically"},
    {MPI_T_ERR_INVALID_NAME, "MPI_T: invalid name"},
    {MPI_T_ERR_INVALID, "MPI_T: invalid use of the tool interface"},
    {MPI_ERR_SESSION, "invalid session"},
    {MPI_ERR_PROC_ABORTED, "communication with an aborted process"},
    {MPI_ERR_VALUE_TOO_LARGE, "value too large to store"},
    {MPI_T_ERR_NOT_SUPPORTED, "MPI_T: not supported"},
};

const char *ferry_error_class_string(int cls)
{
    for (size_t i = 0; i < sizeof class_text / sizeof class_text[0]; i++)
        if (class_text[i].cls == cls)
            return class_text[i].text;
    return NULL;
}

/* Idempotent, and also run on first use: MPI-4 lets an application create a
 * session error handler before MPI is initialized (to pass it to
 * MPI_Session_init), and the runtime start must not wipe it. */
static int errhandlers_ready;
void ferry_errhandler_init(void)
{
    if (errhandlers_ready)
        return;
    ferry_objtab_init(&errhandlers, FERRY_OBJ_ERRHANDLER, 4);
    errhandlers_ready = 1;
}

int ferry_errhandler_valid(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT ||
           ferry_objtab_get(&errhandlers, eh);
}

void ferry_errhandler_retain(MPI_Errhandler eh)
{
    struct errhandler *e = ferry_objtab_get(&errhandlers, eh);
    if (e)
        e->refs++;
}

void ferry_errhandler_release(MPI_Errhandler eh)
{
    struct errhandler *e = ferry_objtab_get(&errhandlers, eh);
    if (e && --e->refs == 0) {
        ferry_objtab_remove(&errhandlers, eh);
        free(e);
    }
}

MPI_Comm_errhandler_function *ferry_errhandler_fn(MPI_Errhandler eh)
{
    struct errhandler *e = ferry_objtab_get(&errhandlers, eh);
    return e ? e->fn : NULL;
}

MPI_Errhandler ferry_errhandler_new(MPI_Comm_errhandler_function *fn)
{
    ferry_errhandler_init();
    struct errhandler *e = ferry_xcalloc(1, sizeof *e);
    e->refs = 1;
    e->fn = fn;
    e->handle = ferry_objtab_add(&errhandlers, e);
    return e->handle;
}

int ferry_error(struct ferry_comm *comm, int cls, const char *fn, const char *fmt, ...)
{
    if (!comm && ferry_rt.state == FERRY_INITIALIZED)
        comm = ferry_comm_world;
    MPI_Errhandler eh = comm ? comm->errhandler : MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_RETURN)
        return cls;
    /* MPI_ERRORS_ABORT (MPI-4, passed by MPICH-built programs) aborts like
     * MPI_ERRORS_ARE_FATAL: Ferry has no way to abort only part of a job. */
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT) {
        struct errhandler *e = ferry_objtab_get(&errhandlers, eh);
        if (e && e->fn) {
            MPI_Comm h = comm->handle;
            int code = cls;
            e->fn(&h, &code, fn);
            return cls;
        }
    }
    va_list ap;
    va_start(ap, fmt);
    ferry_error_abortv(cls, fn, fmt, ap);
}

void ferry_error_abortv(int cls, const char *fn, const char *fmt, va_list ap)
{
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    ferry_error_abort(cls, fn, msg);
}

void ferry_error_abort(int cls, const char *fn, const char *msg)
{
    char line[600];
    if (ferry_rt.state == FERRY_INITIALIZED)
        snprintf(line, sizeof line, "ferry: rank %d: %s: %s (%s)", ferry_rt.world_rank, fn, msg,
                 ferry_error_class_string(cls) ? ferry_error_class_string(cls) : "error");
    else
        snprintf(line, sizeof line, "ferry: %s: %s (%s)", fn, msg,
                 ferry_error_class_string(cls) ? ferry_error_class_string(cls) : "error");
    fprintf(stderr, "%s\n", line);
    if (ferry_rt.state != FERRY_INITIALIZED)
        exit(1);
    ferry_boot_abort(cls ? cls : 1, line);
}

int ferry_unsupported(const char *mpi_function_name)
{
    return ferry_error(NULL, MPI_ERR_UNSUPPORTED_OPERATION, mpi_function_name,
                       "%s is not implemented in Ferry yet", mpi_function_name);
}
