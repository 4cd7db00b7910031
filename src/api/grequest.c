/* Generalized requests (MPI-3.1 12.2): a request whose operation the
 * application runs itself. MPI_Grequest_start hands back an active request,
 * MPI_Grequest_complete marks it complete, and the completion calls treat it
 * like any other request, calling the application back:
 *
 *   query_fn   fills the status whenever a completion call or
 *              Request_get_status reports a complete one; its return value is
 *              the operation's error
 *   free_fn    once, when the request goes away: at the Wait/Test that
 *              completes it, at Request_free of a complete one, or at
 *              Grequest_complete of one already freed
 *   cancel_fn  at MPI_Cancel, told whether it is complete yet
 *
 * Nothing here drives progress: a Wait on a generalized request that nobody
 * completes waits forever, as the standard says. They are not counted in
 * ferry_requests_active, which tracks operations that use datatypes. */
#include "api/check.h"
#include "api/p2p_internal.h"

#pragma weak MPI_Grequest_start = PMPI_Grequest_start
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Grequest_start");
    if (rc)
        return rc;
    if (!request)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Grequest_start", "request pointer is NULL");
    *request = ferry_greq_new(query_fn, free_fn, cancel_fn, extra_state)->handle;
    return MPI_SUCCESS;
}

struct ferry_request *ferry_greq_new(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                                     MPI_Grequest_cancel_function *cancel_fn, void *extra_state)
{
    struct ferry_request *r = ferry_request_new(FERRY_REQ_GREQ);
    r->greq_query = query_fn;
    r->greq_free = free_fn;
    r->greq_cancel = cancel_fn;
    r->greq_state = extra_state;
    r->complete = 0;
    return r;
}

#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete
int PMPI_Grequest_complete(MPI_Request request)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Grequest_complete");
    if (rc)
        return rc;
    struct ferry_request *r = ferry_request_get(request);
    if (!r || r->kind != FERRY_REQ_GREQ)
        return ferry_error(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                           "0x%x is not a generalized request", (unsigned)request);
    if (r->complete)
        return ferry_error(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                           "the generalized request is already complete");
    r->complete = 1;
    if (r->owned_buf)   /* started by MPIX_Grequest_start: polled until now */
        ferry_greq_unpoll(r);
    if (r->user_freed) {
        /* Request_free came first: this is the last the application says
         * about it */
        int err = ferry_greq_free(r);
        ferry_request_free(r);
        if (err)
            return ferry_error(NULL, err, "MPI_Grequest_complete", "free_fn returned error %d", err);
    }
    return MPI_SUCCESS;
}

/* Callbacks a Fortran program registered through MPICH's Fortran binding
 * (it calls MPII_Grequest_set_lang_f77 right after MPI_Grequest_start):
 * subroutines returning their error in a last argument, the status as
 * MPI_STATUS_SIZE integers (the same layout as MPI_Status in this ABI) and
 * the flag as a Fortran LOGICAL. */
typedef void fortran_greq_query(void *extra, MPI_Fint *status, MPI_Fint *ierr);
typedef void fortran_greq_free(void *extra, MPI_Fint *ierr);
typedef void fortran_greq_cancel(void *extra, MPI_Fint *complete, MPI_Fint *ierr);
_Static_assert(sizeof(MPI_Status) == 5 * sizeof(MPI_Fint), "MPI_Status is MPI_STATUS_SIZE Fortran integers");

#pragma weak MPII_Grequest_set_lang_f77 = ferry_mpii_grequest_set_lang_f77
void ferry_mpii_grequest_set_lang_f77(MPI_Request request)
{
    FERRY_API_ENTER();
    struct ferry_request *r = ferry_request_get(request);
    if (r && r->kind == FERRY_REQ_GREQ)
        r->greq_fortran = 1;
}

int ferry_greq_query(struct ferry_request *r)
{
    /* what the status says if query_fn leaves fields alone */
    ferry_status_set(&r->status, MPI_UNDEFINED, MPI_UNDEFINED, MPI_SUCCESS, 0, 0);
    int err = MPI_SUCCESS;
    if (r->greq_query && r->greq_fortran) {
        MPI_Fint ierr = MPI_SUCCESS;
        ((fortran_greq_query *)(void *)r->greq_query)(r->greq_state, (MPI_Fint *)&r->status, &ierr);
        err = ierr;
    } else if (r->greq_query) {
        err = r->greq_query(r->greq_state, &r->status);
    }
    r->status.MPI_ERROR = err;
    return err;
}

int ferry_greq_free(struct ferry_request *r)
{
    MPI_Grequest_free_function *fn = r->greq_free;
    r->greq_free = NULL;   /* once */
    if (fn && r->greq_fortran) {
        MPI_Fint ierr = MPI_SUCCESS;
        ((fortran_greq_free *)(void *)fn)(r->greq_state, &ierr);
        return ierr;
    }
    return fn ? fn(r->greq_state) : MPI_SUCCESS;
}

int ferry_greq_cancel(struct ferry_request *r)
{
    if (r->greq_cancel && r->greq_fortran) {
        MPI_Fint ierr = MPI_SUCCESS, complete = r->complete ? 1 : 0;
        ((fortran_greq_cancel *)(void *)r->greq_cancel)(r->greq_state, &complete, &ierr);
        return ierr;
    }
    return r->greq_cancel ? r->greq_cancel(r->greq_state, r->complete) : MPI_SUCCESS;
}
