/* MPICH's extended generalized requests (MPIX_Grequest_start and request
 * classes), which MPICH's ROMIO uses for nonblocking I/O and MPICH-built
 * libraries may call: a generalized request whose operation advances when
 * MPI polls it. Ferry calls its poll_fn on every progress pass (every
 * MPI_Test, every turn of a wait loop) until the request is complete;
 * poll_fn calls MPI_Grequest_complete once the operation has finished.
 * wait_fn, MPICH's way for MPI_Wait to block in the operation instead of
 * polling it, is accepted and not called: polling alone completes the
 * request. A class (MPIX_Grequest_class_create) is a stored set of the five
 * callbacks that MPIX_Grequest_class_allocate starts requests with; classes
 * live until MPI_Finalize (MPICH has no call to free one).
 *
 * The poll and wait functions ride in the request's owned_buf, which
 * ferry_request_free frees with it. A polled request leaves the poll list in
 * MPI_Grequest_complete, which comes before the request can be freed. */
#include "api/check.h"
#include "api/p2p_internal.h"
#include "core/progress.h"

struct greq_ext {
    MPIX_Grequest_poll_function *poll;
    MPIX_Grequest_wait_function *wait;
};

struct greq_class {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    MPIX_Grequest_poll_function *poll;
    MPIX_Grequest_wait_function *wait;
};

static struct ferry_request **polled;   /* incomplete requests with a poll_fn */
static int npolled, polled_cap;
static struct greq_class *classes;      /* class handle i + 1 is classes[i] */
static int nclasses;

/* Progress hook: give each incomplete request's poll_fn a turn. A poll_fn
 * that completes a request takes it off the list (ferry_greq_unpoll), so the
 * slot is looked at again; one that calls MPI_Test comes back here and finds
 * the hook busy. */
static int poll_greqs(void)
{
    static int busy;
    if (!npolled || busy)
        return 0;
    busy = 1;
    int work = 0;
    for (int i = 0; i < npolled;) {
        struct ferry_request *r = polled[i];
        const struct greq_ext *x = r->owned_buf;
        int before = npolled;
        MPI_Status scratch;
        x->poll(r->greq_state, &scratch);
        if (npolled < before)
            work++;
        else
            i++;
    }
    busy = 0;
    return work;
}

void ferry_greq_unpoll(struct ferry_request *r)
{
    for (int i = 0; i < npolled; i++)
        if (polled[i] == r) {
            polled[i] = polled[--npolled];
            return;
        }
}

/* After the caller's check_init. */
static int start(const struct greq_class *k, void *extra_state, MPI_Request *request, const char *fn)
{
    if (!request)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "request pointer is NULL");
    struct ferry_request *r = ferry_greq_new(k->query, k->free, k->cancel, extra_state);
    *request = r->handle;
    struct greq_ext *x = ferry_xmalloc(sizeof *x);
    x->poll = k->poll;
    x->wait = k->wait;
    r->owned_buf = x;
    if (k->poll) {
        if (npolled == polled_cap) {
            polled_cap = polled_cap ? 2 * polled_cap : 16;
            polled = ferry_xrealloc(polled, (size_t)polled_cap * sizeof *polled);
        }
        polled[npolled++] = r;
        ferry_progress_add_hook(poll_greqs);   /* once: it keeps no duplicates */
    }
    return MPI_SUCCESS;
}

#pragma weak MPIX_Grequest_start = PMPIX_Grequest_start
int PMPIX_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                         MPI_Grequest_cancel_function *cancel_fn, MPIX_Grequest_poll_function *poll_fn,
                         MPIX_Grequest_wait_function *wait_fn, void *extra_state, MPI_Request *request)
{
    FERRY_API_ENTER();
    int rc = check_init("MPIX_Grequest_start");
    if (rc)
        return rc;
    const struct greq_class k = {query_fn, free_fn, cancel_fn, poll_fn, wait_fn};
    return start(&k, extra_state, request, "MPIX_Grequest_start");
}

#pragma weak MPIX_Grequest_class_create = PMPIX_Grequest_class_create
int PMPIX_Grequest_class_create(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                                MPI_Grequest_cancel_function *cancel_fn, MPIX_Grequest_poll_function *poll_fn,
                                MPIX_Grequest_wait_function *wait_fn, MPIX_Grequest_class *greq_class)
{
    FERRY_API_ENTER();
    int rc = check_init("MPIX_Grequest_class_create");
    if (rc)
        return rc;
    if (!greq_class)
        return ferry_error(NULL, MPI_ERR_ARG, "MPIX_Grequest_class_create", "greq_class pointer is NULL");
    classes = ferry_xrealloc(classes, (size_t)(nclasses + 1) * sizeof *classes);
    classes[nclasses++] = (struct greq_class){query_fn, free_fn, cancel_fn, poll_fn, wait_fn};
    *greq_class = nclasses;
    return MPI_SUCCESS;
}

#pragma weak MPIX_Grequest_class_allocate = PMPIX_Grequest_class_allocate
int PMPIX_Grequest_class_allocate(MPIX_Grequest_class greq_class, void *extra_state, MPI_Request *request)
{
    FERRY_API_ENTER();
    const char *fn = "MPIX_Grequest_class_allocate";
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (greq_class < 1 || greq_class > nclasses)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "%d is not a generalized request class", greq_class);
    return start(&classes[greq_class - 1], extra_state, request, fn);
}
