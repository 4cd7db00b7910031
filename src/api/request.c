/* Completion calls: Wait/Test and their any/all/some forms, Request_free,
 * Request_get_status, Cancel, Test_cancelled, and the persistent-request
 * Start/Startall. */
#include "api/check.h"
#include "api/p2p_internal.h"
#include "core/match.h"
#include "core/progress.h"
#include "proto/proto.h"
#include "core/util.h"
#include <stdlib.h>

static void empty_status(MPI_Status *st)
{
    if (st != MPI_STATUS_IGNORE) {
        int err = st->MPI_ERROR;
        ferry_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        st->MPI_ERROR = err;
    }
}

/* Look up a handle that must be a request; MPI_REQUEST_NULL gives NULL and rc 0. */
static int lookup(MPI_Request h, struct ferry_request **r, const char *fn)
{
    *r = NULL;
    int rc = check_init(fn);
    if (rc || h == MPI_REQUEST_NULL)
        return rc;
    *r = ferry_request_get(h);
    if (!*r || (*r)->kind == FERRY_REQ_MESSAGE)
        return ferry_error(NULL, MPI_ERR_REQUEST, fn, "invalid request handle 0x%x", (unsigned)h);
    return MPI_SUCCESS;
}

/* r completed: report its status, release it (or deactivate a persistent
 * one) and clear the user's handle. Returns the operation's error class. */
static int retire(struct ferry_request *r, MPI_Request *h, MPI_Status *st)
{
    ferry_request_status_out(r, st);
    int err = r->status.MPI_ERROR;
    if (r->persistent) {
        r->active = 0;
    } else {
        ferry_request_free(r);
        *h = MPI_REQUEST_NULL;
    }
    return err;
}

static int op_error(struct ferry_request *r, int err, const char *fn)
{
    if (r->kind == FERRY_REQ_GREQ)
        return ferry_error(NULL, err, fn, "generalized request: query_fn or free_fn returned error %d", err);
    return ferry_api_truncated(r, err, fn);
}

/* Several requests were completed, one failed: MPI_ERR_IN_STATUS. */
static int in_status_error(struct ferry_request *r, const char *fn)
{
    if (r->kind == FERRY_REQ_GREQ)
        return ferry_error(NULL, MPI_ERR_IN_STATUS, fn, "a generalized request failed with error %d",
                           r->status.MPI_ERROR);
    return ferry_error(r->comm, MPI_ERR_IN_STATUS, fn, "a request failed: message from rank %d truncated",
                       r->status.MPI_SOURCE);
}

/* r is complete and about to be reported. A generalized request's status
 * comes from its query_fn; when the report also releases it (everything but
 * Request_get_status), free_fn runs right after, and its error counts when
 * query_fn had none (MPI-3.1 12.2). */
static void collect(struct ferry_request *r, int releasing)
{
    if (r->kind != FERRY_REQ_GREQ)
        return;
    int err = ferry_greq_query(r);
    if (releasing) {
        int ferr = ferry_greq_free(r);
        if (!err && ferr)
            r->status.MPI_ERROR = ferr;
    }
}

/* Is there anything to wait for? Null handles and inactive persistent
 * requests are not. */
static int pending(struct ferry_request *r)
{
    return r && (!r->persistent || r->active);
}

#pragma weak MPI_Wait = PMPI_Wait
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    FERRY_API_ENTER();
    struct ferry_request *r;
    if (!request)
        return ferry_error(NULL, MPI_ERR_REQUEST, "MPI_Wait", "request pointer is NULL");
    int rc = lookup(*request, &r, "MPI_Wait");
    if (rc)
        return rc;
    if (!pending(r)) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    ferry_request_wait(r);
    collect(r, 1);
    int err = r->status.MPI_ERROR;
    if (err)
        err = op_error(r, err, "MPI_Wait");
    retire(r, request, status);
    return err;
}

#pragma weak MPI_Test = PMPI_Test
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    FERRY_API_ENTER();
    struct ferry_request *r;
    if (!request || !flag)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Test", "NULL request or flag pointer");
    int rc = lookup(*request, &r, "MPI_Test");
    if (rc)
        return rc;
    if (!pending(r)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!r->complete)
        ferry_progress();
    *flag = r->complete;
    if (!r->complete)
        return MPI_SUCCESS;
    collect(r, 1);
    int err = r->status.MPI_ERROR;
    if (err)
        err = op_error(r, err, "MPI_Test");
    retire(r, request, status);
    return err;
}

/* Validate an array of request handles up front: a bad one is reported
 * before anything completes, so nothing is lost. */
static int lookup_all(int n, MPI_Request reqs[], struct ferry_request **out, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (n < 0)
        return ferry_error(NULL, MPI_ERR_COUNT, fn, "negative count %d", n);
    if (n > 0 && !reqs)
        return ferry_error(NULL, MPI_ERR_REQUEST, fn, "request array is NULL");
    for (int i = 0; i < n; i++)
        if ((rc = lookup(reqs[i], &out[i], fn)))
            return rc;
    return MPI_SUCCESS;
}

#define STACK_REQS 64
/* Small arrays live on the stack; large ones on the heap. */
static struct ferry_request **req_array(int n, struct ferry_request **stack)
{
    return n <= STACK_REQS ? stack : ferry_xmalloc((size_t)n * sizeof(struct ferry_request *));
}
static void req_array_free(struct ferry_request **a, struct ferry_request **stack)
{
    if (a != stack)
        free(a);
}

static MPI_Status *status_at(MPI_Status *statuses, int i)
{
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

/* Shared by Waitall and Testall once everything is complete. */
static int retire_all(int n, MPI_Request reqs[], struct ferry_request **rs, MPI_Status statuses[], const char *fn)
{
    int any_err = 0;
    struct ferry_request *first_bad = NULL;
    for (int i = 0; i < n; i++) {
        MPI_Status *st = status_at(statuses, i);
        if (!pending(rs[i])) {
            empty_status(st);
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = MPI_SUCCESS;
            continue;
        }
        collect(rs[i], 1);
        int err = rs[i]->status.MPI_ERROR;
        if (err && !first_bad) {
            first_bad = rs[i];
            any_err = 1;
        }
        ferry_request_status_out(rs[i], st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
    }
    int rc = MPI_SUCCESS;
    if (any_err)
        rc = in_status_error(first_bad, fn);
    for (int i = 0; i < n; i++)
        if (pending(rs[i]))
            retire(rs[i], &reqs[i], MPI_STATUS_IGNORE);
    return rc;
}

#pragma weak MPI_Waitall = PMPI_Waitall
int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    FERRY_API_ENTER();
    struct ferry_request *stack[STACK_REQS], **rs = req_array(count, stack);
    int rc = lookup_all(count, reqs, rs, "MPI_Waitall");
    if (!rc) {
        for (int i = 0; i < count; i++)
            if (pending(rs[i]))
                ferry_request_wait_batch(rs[i], count - i);
        rc = retire_all(count, reqs, rs, statuses, "MPI_Waitall");
    }
    req_array_free(rs, stack);
    return rc;
}

#pragma weak MPI_Testall = PMPI_Testall
int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    FERRY_API_ENTER();
    struct ferry_request *stack[STACK_REQS], **rs = req_array(count, stack);
    int rc = lookup_all(count, reqs, rs, "MPI_Testall");
    if (!rc)
        rc = check_out(flag, "flag", "MPI_Testall");
    if (!rc) {
        ferry_progress();
        *flag = 1;
        for (int i = 0; i < count; i++)
            if (pending(rs[i]) && !rs[i]->complete)
                *flag = 0;
        if (*flag)
            rc = retire_all(count, reqs, rs, statuses, "MPI_Testall");
    }
    req_array_free(rs, stack);
    return rc;
}

/* One pass over the array: index of a completed pending request, -1 if none
 * is complete, MPI_UNDEFINED if none is pending. */
static int find_done(int n, struct ferry_request **rs)
{
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (!pending(rs[i]))
            continue;
        any = 1;
        if (rs[i]->complete)
            return i;
    }
    return any ? -1 : MPI_UNDEFINED;
}

static int any_common(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status, int block,
                      const char *fn)
{
    struct ferry_request *stack[STACK_REQS], **rs = req_array(count, stack);
    int rc = lookup_all(count, reqs, rs, fn);
    if (rc || (rc = check_out(index, "index", fn)) || (rc = check_out(flag, "flag", fn)))
        goto out;
    struct ferry_waiter w = {0};
    int i = find_done(count, rs);
    if (i == -1) {
        ferry_progress();
        i = find_done(count, rs);
    }
    while (i == -1 && block) {
        ferry_progress_wait(&w);
        i = find_done(count, rs);
    }
    if (i == MPI_UNDEFINED) {
        *index = MPI_UNDEFINED;
        *flag = 1;
        empty_status(status);
    } else if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
    } else {
        *flag = 1;
        *index = i;
        collect(rs[i], 1);
        int err = rs[i]->status.MPI_ERROR;
        if (err)
            rc = op_error(rs[i], err, fn);
        retire(rs[i], &reqs[i], status);
    }
out:
    req_array_free(rs, stack);
    return rc;
}

#pragma weak MPI_Waitany = PMPI_Waitany
int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    FERRY_API_ENTER();
    int flag;
    return any_common(count, reqs, index, &flag, status, 1, "MPI_Waitany");
}

#pragma weak MPI_Testany = PMPI_Testany
int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    FERRY_API_ENTER();
    return any_common(count, reqs, index, flag, status, 0, "MPI_Testany");
}

static int some_common(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[],
                       int block, const char *fn)
{
    struct ferry_request *stack[STACK_REQS], **rs = req_array(incount, stack);
    int rc = lookup_all(incount, reqs, rs, fn);
    if (rc || (rc = check_out(outcount, "outcount", fn)) || (incount > 0 && (rc = check_out(indices, "indices", fn))))
        goto out;
    struct ferry_waiter w = {0};
    ferry_progress();
    for (;;) {
        int n = 0, any = 0;
        for (int i = 0; i < incount; i++) {
            if (!pending(rs[i]))
                continue;
            any = 1;
            if (rs[i]->complete)
                indices[n++] = i;
        }
        if (!any) {
            *outcount = MPI_UNDEFINED;
            break;
        }
        if (n > 0 || !block) {
            *outcount = n;
            int first_err = 0;
            for (int k = 0; k < n; k++) {
                struct ferry_request *r = rs[indices[k]];
                collect(r, 1);
                int err = r->status.MPI_ERROR;
                MPI_Status *st = status_at(statuses, k);
                if (err && !first_err) {
                    first_err = 1;
                    rc = in_status_error(r, fn);
                }
                retire(r, &reqs[indices[k]], st);
                if (st != MPI_STATUS_IGNORE)
                    st->MPI_ERROR = err;
            }
            break;
        }
        ferry_progress_wait(&w);
    }
out:
    req_array_free(rs, stack);
    return rc;
}

#pragma weak MPI_Waitsome = PMPI_Waitsome
int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    FERRY_API_ENTER();
    return some_common(incount, reqs, outcount, indices, statuses, 1, "MPI_Waitsome");
}

#pragma weak MPI_Testsome = PMPI_Testsome
int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    FERRY_API_ENTER();
    return some_common(incount, reqs, outcount, indices, statuses, 0, "MPI_Testsome");
}

/* Request_free and Cancel act on one request the user still holds: its
 * handle pointer must be valid and the handle not MPI_REQUEST_NULL. */
static int lookup_held(MPI_Request *h, struct ferry_request **r, const char *fn)
{
    if (!h)
        return ferry_error(NULL, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    int rc = lookup(*h, r, fn);
    if (!rc && !*r)
        rc = ferry_error(NULL, MPI_ERR_REQUEST, fn, "request is MPI_REQUEST_NULL");
    return rc;
}

/* Freeing or cancelling a partitioned request that is started and not
 * complete is erroneous (MPI-4.0 chapter 4): its partitions may still be marked
 * ready, and the peer's matching operation waits for them. */
static int check_not_active_part(struct ferry_request *r, const char *fn, const char *what)
{
    if (r->kind != FERRY_REQ_PART || !r->active || r->complete)
        return MPI_SUCCESS;
    return ferry_error(r->comm, MPI_ERR_REQUEST, fn, "%s an active partitioned request (started, not complete) is "
                       "erroneous; complete it with MPI_Wait or MPI_Test first", what);
}

#pragma weak MPI_Request_free = PMPI_Request_free
int PMPI_Request_free(MPI_Request *request)
{
    FERRY_API_ENTER();
    struct ferry_request *r;
    int rc = lookup_held(request, &r, "MPI_Request_free");
    if (rc || (rc = check_not_active_part(r, "MPI_Request_free", "freeing")))
        return rc;
    if (r->persistent && !r->active)
        r->complete = 1;
    /* a generalized request's free_fn runs now if it is complete, else at
     * its Grequest_complete */
    int err = r->kind == FERRY_REQ_GREQ && r->complete ? ferry_greq_free(r) : MPI_SUCCESS;
    ferry_request_free(r);
    *request = MPI_REQUEST_NULL;
    if (err)
        return ferry_error(NULL, err, "MPI_Request_free", "generalized request: free_fn returned error %d", err);
    return MPI_SUCCESS;
}

#pragma weak MPI_Request_get_status = PMPI_Request_get_status
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    FERRY_API_ENTER();
    struct ferry_request *r;
    int rc = lookup(request, &r, "MPI_Request_get_status");
    if (rc)
        return rc;
    if ((rc = check_out(flag, "flag", "MPI_Request_get_status")))
        return rc;
    if (!pending(r)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!r->complete)
        ferry_progress();
    *flag = r->complete;
    if (r->complete) {
        collect(r, 0);
        ferry_request_status_out(r, status);
        /* as MPI_Test would: the operation's error (for a generalized
         * request, what query_fn returned) is the call's return code */
        if (r->status.MPI_ERROR)
            return op_error(r, r->status.MPI_ERROR, "MPI_Request_get_status");
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Cancel = PMPI_Cancel
int PMPI_Cancel(MPI_Request *request)
{
    FERRY_API_ENTER();
    struct ferry_request *r;
    int rc = lookup_held(request, &r, "MPI_Cancel");
    if (rc || (rc = check_not_active_part(r, "MPI_Cancel", "cancelling")))
        return rc;
    /* A receive that has not matched is simply taken off the posted queue.
     * A send is asked back from the receiver (ferry_proto_cancel_send); the
     * request then completes when the receiver has answered. An Ibsend or a
     * persistent Bsend request is complete already -- its data sits in the
     * attached buffer -- so the cancel acts on the send of that copy, and the
     * user's request is reopened until the answer comes. */
    if (r->kind == FERRY_REQ_GREQ) {
        /* the application cancels its own operation; its query_fn says
         * whether that worked */
        int err = ferry_greq_cancel(r);
        if (err)
            return ferry_error(NULL, err, "MPI_Cancel", "generalized request: cancel_fn returned error %d", err);
    } else if (r->kind == FERRY_REQ_RECV && !r->complete && ferry_posted_remove(r)) {
        ferry_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 1);
        ferry_request_complete(r);
    } else if (r->kind == FERRY_REQ_SEND && (!r->persistent || r->active)) {
        if (r->mode != FERRY_MODE_BUFFERED) {
            ferry_proto_cancel_send(r);
            /* A send to this very process: its whole cancel round trip is
             * local, so finish it now, as MPICH does; programs (mpi4py's
             * tests) read the status right after MPI_Cancel. */
            while (r->cancel_pending && r->world_peer == ferry_rt.self)
                ferry_progress();
        } else if (r->inner && r->complete && !r->inner->outer && ferry_proto_cancel_send(r->inner)) {
            ferry_request_start(r);
            r->inner->outer = r;
        }
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    FERRY_API_ENTER();
    if (!status || !flag)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Test_cancelled", "NULL status or flag");
    *flag = ferry_status_cancelled(status);
    return MPI_SUCCESS;
}
