/* Environment: Init/Finalize and their queries, Abort, versions, processor
 * name, timers, Alloc_mem/Free_mem. */
#include "api/check.h"
#include "boot/boot.h"
#include "core/init.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int do_init(int required, int *provided, const char *fn)
{
    if (ferry_world_initialized() || ferry_rt.state == FERRY_FINALIZED)
        return ferry_error(NULL, MPI_ERR_OTHER, fn,
                           !ferry_world_finalized() && ferry_rt.state == FERRY_INITIALIZED
                               ? "MPI is already initialized"
                               : "MPI cannot be initialized again after MPI_Finalize");
    /* a session may have brought the runtime up already (MPI-4) */
    return ferry_runtime_start(required, provided, 1);
}

#pragma weak MPI_Init = PMPI_Init
int PMPI_Init(int *argc, char ***argv)
{
    FERRY_API_ENTER();
    return do_init(MPI_THREAD_SINGLE, NULL, "MPI_Init");
}

#pragma weak MPI_Init_thread = PMPI_Init_thread
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    FERRY_API_ENTER();
    return do_init(required, provided, "MPI_Init_thread");
}

#pragma weak MPI_Initialized = PMPI_Initialized
int PMPI_Initialized(int *flag)
{
    FERRY_API_ENTER();
    int rc;
    if ((rc = check_out(flag, "flag", "MPI_Initialized")))
        return rc;
    *flag = ferry_world_initialized();
    return MPI_SUCCESS;
}

#pragma weak MPI_Finalized = PMPI_Finalized
int PMPI_Finalized(int *flag)
{
    FERRY_API_ENTER();
    int rc;
    if ((rc = check_out(flag, "flag", "MPI_Finalized")))
        return rc;
    *flag = ferry_world_finalized();
    return MPI_SUCCESS;
}

#pragma weak MPI_Finalize = PMPI_Finalize
int PMPI_Finalize(void)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Finalize");
    if (rc)
        return rc;
    if (!ferry_world_initialized() || ferry_world_finalized())
        return ferry_error(NULL, MPI_ERR_OTHER, "MPI_Finalize", "MPI_Init was not called (only sessions are open)");
    /* the runtime stays up while sessions are open (MPI-4) */
    ferry_runtime_stop(1);
    return MPI_SUCCESS;
}

#pragma weak MPI_Query_thread = PMPI_Query_thread
int PMPI_Query_thread(int *provided)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Query_thread");
    if (rc)
        return rc;
    if ((rc = check_out(provided, "provided", "MPI_Query_thread")))
        return rc;
    *provided = ferry_rt.thread_level;
    return MPI_SUCCESS;
}

#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main
int PMPI_Is_thread_main(int *flag)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Is_thread_main");
    if (rc)
        return rc;
    if ((rc = check_out(flag, "flag", "MPI_Is_thread_main")))
        return rc;
    *flag = ferry_is_main_thread();
    return MPI_SUCCESS;
}

#pragma weak MPI_Abort = PMPI_Abort
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    FERRY_API_ENTER();
    char msg[160];
    snprintf(msg, sizeof msg, "MPI_Abort called with error code %d", errorcode);
    fprintf(stderr, "ferry: rank %d: %s\n", ferry_rt.world_rank < 0 ? 0 : ferry_rt.world_rank, msg);
    if (ferry_rt.state != FERRY_INITIALIZED)
        exit(errorcode ? errorcode : 1);
    /* MPI_Abort on any communicator takes the whole job down: the launcher
     * kills every rank. */
    ferry_boot_abort(errorcode, msg);
}

#pragma weak MPI_Get_version = PMPI_Get_version
int PMPI_Get_version(int *version, int *subversion)
{
    FERRY_API_ENTER();
    int rc;
    if ((rc = check_out(version, "version", "MPI_Get_version")))
        return rc;
    if ((rc = check_out(subversion, "subversion", "MPI_Get_version")))
        return rc;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_library_version = PMPI_Get_library_version
int PMPI_Get_library_version(char *version, int *resultlen)
{
    FERRY_API_ENTER();
    int rc;
    if ((rc = check_out(version, "version", "MPI_Get_library_version")))
        return rc;
    if ((rc = check_out(resultlen, "resultlen", "MPI_Get_library_version")))
        return rc;
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "Ferry %s (MPI %d.%d, MPICH ABI)", FERRY_VERSION_STRING,
                     MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Get_processor_name");
    if (rc)
        return rc;
    if ((rc = check_out(name, "name", "MPI_Get_processor_name")))
        return rc;
    if ((rc = check_out(resultlen, "resultlen", "MPI_Get_processor_name")))
        return rc;
    snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", ferry_rt.hostname);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Wtime = PMPI_Wtime
double PMPI_Wtime(void)
{
    return ferry_now();
}

#pragma weak MPI_Wtick = PMPI_Wtick
double PMPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Alloc_mem");
    if (rc)
        return rc;
    if (size < 0)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Alloc_mem", "negative size %ld", (long)size);
    void *p = NULL;
    if (posix_memalign(&p, 64, size ? (size_t)size : 1))
        return ferry_error(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "cannot allocate %ld bytes", (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

#pragma weak MPI_Free_mem = PMPI_Free_mem
int PMPI_Free_mem(void *base)
{
    FERRY_API_ENTER();
    free(base);
    return MPI_SUCCESS;
}

/* Profiling control: without a profiling library in between it does nothing. */
#pragma weak MPI_Pcontrol = PMPI_Pcontrol
int PMPI_Pcontrol(const int level, ...)
{
    FERRY_API_ENTER();
    (void)level;
    return MPI_SUCCESS;
}
