/* p2p_greq: generalized requests (MPI-3.1 12.2).
 *
 * 1 an incomplete one: Test / Request_get_status say not complete and call
 *   nothing; after Grequest_complete, Request_get_status reports query_fn's
 *   status without freeing, Wait reports it and calls free_fn exactly once,
 *   with the right extra_state, after query_fn.
 * 2 Request_free before Grequest_complete: free_fn runs at the complete, not
 *   before; Request_free of a complete one: free_fn runs there.
 * 3 Cancel: cancel_fn is told whether the request is complete; query_fn's
 *   cancelled flag is what Test_cancelled reports.
 * 4 mixed with point-to-point requests in Waitall, Testall, Waitany,
 *   Testany, Waitsome, Testsome (incomplete ones hold the others back only
 *   where they must).
 * 5 errors: query_fn's error is Wait's (and Request_get_status's) error,
 *   free_fn's when query_fn had none; Waitall reports MPI_ERR_IN_STATUS
 *   with the code in the status.
 *
 * 6 MPICH's extension (Ferry and MPICH only): MPIX_Grequest_start's poll_fn
 *   runs from MPI_Test and MPI_Wait until it completes the request; requests
 *   of a class (MPIX_Grequest_class_create/_allocate) complete in Waitall;
 *   an unknown class is MPI_ERR_ARG (Ferry's header build).
 *
 * Peer deviations (the peers validate this test): MPICH 4.0.2 runs free_fn
 * at Request_free even before Grequest_complete (12.2 says at whichever of
 * the two comes last); Open MPI drops free_fn's error.
 */
#include "common.h"

enum { MAXG = 16 };
struct gstate {
    int id;
    int queries, frees, cancels;
    int last_cancel_complete;
    int order;          /* 1 when free_fn ran after at least one query_fn */
    int query_err, free_err;
    int cancelled;      /* set by cancel_fn, reported by query_fn */
    MPI_Request req;    /* 6: the request poll_fn completes */
    int polls, polls_left;
};
static struct gstate gs[MAXG];
static int rank, size;

static int query_fn(void *extra, MPI_Status *st)
{
    struct gstate *g = extra;
    g->queries++;
    st->MPI_SOURCE = 1000 + g->id;
    st->MPI_TAG = 2000 + g->id;
    MPI_Status_set_elements(st, MPI_INT, g->id);
    MPI_Status_set_cancelled(st, g->cancelled);
    return g->query_err;
}

static int free_fn(void *extra)
{
    struct gstate *g = extra;
    g->frees++;
    g->order = g->queries > 0;
    return g->free_err;
}

static int cancel_fn(void *extra, int complete)
{
    struct gstate *g = extra;
    g->cancels++;
    g->last_cancel_complete = complete;
    if (!complete)
        g->cancelled = 1;
    return MPI_SUCCESS;
}

static MPI_Request start(int id)
{
    MPI_Request r;
    memset(&gs[id], 0, sizeof gs[id]);
    gs[id].id = id;
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &gs[id], &r));
    CHECK(r != MPI_REQUEST_NULL, "Grequest_start gave MPI_REQUEST_NULL");
    return r;
}

static void check_status(const MPI_Status *st, int id, const char *what)
{
    int n = -1, c = -1;
    CHECK(st->MPI_SOURCE == 1000 + id && st->MPI_TAG == 2000 + id, "%s: status source %d tag %d, expected %d %d",
          what, st->MPI_SOURCE, st->MPI_TAG, 1000 + id, 2000 + id);
    CHECK_RC(MPI_Get_count(st, MPI_INT, &n));
    CHECK(n == id, "%s: count %d, expected %d", what, n, id);
    CHECK_RC(MPI_Test_cancelled(st, &c));
    CHECK(c == gs[id].cancelled, "%s: Test_cancelled %d, expected %d", what, c, gs[id].cancelled);
}

static void lifecycle(void)
{
    MPI_Request r = start(1);
    MPI_Status st;
    int flag = 1;
    CHECK_RC(MPI_Test(&r, &flag, &st));
    CHECK(!flag && r != MPI_REQUEST_NULL, "Test: an incomplete generalized request completed");
    flag = 1;
    CHECK_RC(MPI_Request_get_status(r, &flag, &st));
    CHECK(!flag, "Request_get_status: incomplete request reported complete");
    CHECK(gs[1].queries == 0 && gs[1].frees == 0, "callbacks ran before completion (query %d free %d)",
          gs[1].queries, gs[1].frees);
    CHECK_RC(MPI_Grequest_complete(r));
    CHECK(gs[1].queries == 0 && gs[1].frees == 0, "Grequest_complete called query_fn or free_fn");
    CHECK_RC(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag, "Request_get_status: completed request not complete");
    check_status(&st, 1, "Request_get_status");
    CHECK(gs[1].queries == 1 && gs[1].frees == 0, "Request_get_status: query %d free %d calls", gs[1].queries,
          gs[1].frees);
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "Wait did not free the generalized request");
    check_status(&st, 1, "Wait");
    CHECK(gs[1].queries == 2 && gs[1].frees == 1 && gs[1].order, "Wait: query %d free %d calls, free after query %d",
          gs[1].queries, gs[1].frees, gs[1].order);
    CHECK(gs[1].cancels == 0, "cancel_fn called without MPI_Cancel");

    /* Test completes it too; status ignored still calls query_fn (and free_fn) */
    r = start(2);
    CHECK_RC(MPI_Grequest_complete(r));
    flag = 0;
    CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && r == MPI_REQUEST_NULL, "Test of a completed generalized request");
    CHECK(gs[2].frees == 1, "Test: free_fn called %d times", gs[2].frees);
}

static void freeing(void)
{
    MPI_Request r = start(3), keep = r;
    CHECK_RC(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free did not null the handle");
    CHECK(gs[3].frees == 0 || tc_mpich_version(), "free_fn ran at Request_free of an incomplete request");
    CHECK_RC(MPI_Grequest_complete(keep));   /* the handle is still the application's to complete */
    CHECK(gs[3].frees == 1 && gs[3].queries == 0, "after Grequest_complete of a freed request: free %d query %d",
          gs[3].frees, gs[3].queries);

    r = start(4);
    CHECK_RC(MPI_Grequest_complete(r));
    CHECK_RC(MPI_Request_free(&r));
    CHECK(gs[4].frees == 1, "Request_free of a complete request: free_fn called %d times", gs[4].frees);
}

static void cancelling(void)
{
    MPI_Request r = start(5);
    MPI_Status st;
    CHECK_RC(MPI_Cancel(&r));
    CHECK(gs[5].cancels == 1 && gs[5].last_cancel_complete == 0, "Cancel: cancel_fn %d calls, complete=%d",
          gs[5].cancels, gs[5].last_cancel_complete);
    CHECK_RC(MPI_Grequest_complete(r));
    CHECK_RC(MPI_Wait(&r, &st));
    check_status(&st, 5, "cancelled generalized request");

    r = start(6);
    CHECK_RC(MPI_Grequest_complete(r));
    CHECK_RC(MPI_Cancel(&r));
    CHECK(gs[6].cancels == 1 && gs[6].last_cancel_complete == 1, "Cancel after complete: cancel_fn %d calls, complete=%d",
          gs[6].cancels, gs[6].last_cancel_complete);
    CHECK_RC(MPI_Wait(&r, &st));
    check_status(&st, 6, "generalized request cancelled too late");
}

static void mixed(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int out = rank, in = -1;
    MPI_Request rs[4];
    MPI_Status st[4];
    int idx[4], n = -1, flag = -1;

    /* Waitall: two generalized (completed first), a receive and a send */
    rs[0] = start(7);
    rs[1] = start(8);
    CHECK_RC(MPI_Irecv(&in, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &rs[2]));
    CHECK_RC(MPI_Isend(&out, 1, MPI_INT, to, 5, MPI_COMM_WORLD, &rs[3]));
    CHECK_RC(MPI_Testall(4, rs, &flag, st));
    CHECK(!flag && gs[7].queries == 0, "Testall completed with incomplete generalized requests");
    CHECK_RC(MPI_Grequest_complete(rs[1]));
    CHECK_RC(MPI_Grequest_complete(rs[0]));
    CHECK_RC(MPI_Waitall(4, rs, st));
    check_status(&st[0], 7, "Waitall[0]");
    check_status(&st[1], 8, "Waitall[1]");
    CHECK(in == from && st[2].MPI_SOURCE == from, "Waitall: receive got %d from %d", in, st[2].MPI_SOURCE);
    CHECK(gs[7].frees == 1 && gs[8].frees == 1, "Waitall: free_fn calls %d %d", gs[7].frees, gs[8].frees);
    for (int i = 0; i < 4; i++)
        CHECK(rs[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);

    /* Testany / Waitany: only the completed one is reported */
    rs[0] = start(9);
    rs[1] = start(10);
    CHECK_RC(MPI_Testany(2, rs, &idx[0], &flag, &st[0]));
    CHECK(!flag && idx[0] == MPI_UNDEFINED, "Testany: flag %d index %d with nothing complete", flag, idx[0]);
    CHECK_RC(MPI_Grequest_complete(rs[1]));
    CHECK_RC(MPI_Waitany(2, rs, &idx[0], &st[0]));
    CHECK(idx[0] == 1 && rs[1] == MPI_REQUEST_NULL && rs[0] != MPI_REQUEST_NULL, "Waitany: index %d", idx[0]);
    check_status(&st[0], 10, "Waitany");
    CHECK(gs[9].queries == 0 && gs[9].frees == 0, "Waitany touched the incomplete request");
    CHECK_RC(MPI_Grequest_complete(rs[0]));
    CHECK_RC(MPI_Testany(2, rs, &idx[0], &flag, &st[0]));
    CHECK(flag && idx[0] == 0, "Testany: flag %d index %d", flag, idx[0]);
    check_status(&st[0], 9, "Testany");

    /* Testsome / Waitsome */
    rs[0] = start(11);
    rs[1] = start(12);
    rs[2] = start(13);
    CHECK_RC(MPI_Testsome(3, rs, &n, idx, st));
    CHECK(n == 0, "Testsome: %d complete, expected 0", n);
    CHECK_RC(MPI_Grequest_complete(rs[2]));
    CHECK_RC(MPI_Grequest_complete(rs[0]));
    CHECK_RC(MPI_Waitsome(3, rs, &n, idx, st));
    CHECK(n == 2 && idx[0] == 0 && idx[1] == 2, "Waitsome: %d complete (%d %d)", n, idx[0], idx[1]);
    check_status(&st[0], 11, "Waitsome[0]");
    check_status(&st[1], 13, "Waitsome[1]");
    CHECK_RC(MPI_Grequest_complete(rs[1]));
    CHECK_RC(MPI_Testsome(3, rs, &n, idx, st));
    CHECK(n == 1 && idx[0] == 1, "Testsome: %d complete (%d)", n, idx[0]);
    check_status(&st[0], 12, "Testsome");
    CHECK_RC(MPI_Testsome(3, rs, &n, idx, st));
    CHECK(n == MPI_UNDEFINED, "Testsome over null requests: %d", n);
}

static void errors(void)
{
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Request r = start(14);
    MPI_Status st;
    gs[14].query_err = MPI_ERR_OTHER;
    CHECK_RC(MPI_Grequest_complete(r));
    int rc = MPI_Wait(&r, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "Wait: query_fn's error MPI_ERR_OTHER came back as %d (class %d)", rc, cls);
    CHECK(gs[14].frees == 1, "Wait with a failing query_fn: free_fn called %d times", gs[14].frees);

    /* Request_get_status returns query_fn's error as Test would, and
     * leaves the request to be waited for */
    r = start(14);
    gs[14].query_err = MPI_ERR_OTHER;
    CHECK_RC(MPI_Grequest_complete(r));
    int flag = 0;
    rc = MPI_Request_get_status(r, &flag, &st);
    MPI_Error_class(rc, &cls);
    CHECK(flag && cls == MPI_ERR_OTHER, "Request_get_status: query_fn's error MPI_ERR_OTHER came back as %d (class %d)",
          rc, cls);
    CHECK(r != MPI_REQUEST_NULL && gs[14].frees == 0, "Request_get_status freed the request");
    rc = MPI_Wait(&r, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER && gs[14].frees == 1, "Wait after Request_get_status: class %d, %d frees", cls,
          gs[14].frees);

    r = start(15);
    gs[15].free_err = MPI_ERR_ARG;
    CHECK_RC(MPI_Grequest_complete(r));
    rc = MPI_Wait(&r, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG || tc_is_open_mpi(), "Wait: free_fn's error MPI_ERR_ARG came back as %d (class %d)", rc, cls);

    MPI_Request rs[2] = {start(14), start(0)};
    gs[14].query_err = MPI_ERR_OTHER;
    MPI_Status sts[2];
    CHECK_RC(MPI_Grequest_complete(rs[0]));
    CHECK_RC(MPI_Grequest_complete(rs[1]));
    rc = MPI_Waitall(2, rs, sts);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_IN_STATUS, "Waitall with a failing query_fn: %d (class %d)", rc, cls);
    MPI_Error_class(sts[0].MPI_ERROR, &cls);
    CHECK(cls == MPI_ERR_OTHER, "Waitall: status[0].MPI_ERROR %d", sts[0].MPI_ERROR);
    /* the other one completed, or (MPI allows it, MPICH does it) is left
     * pending, still to be waited for */
    CHECK(sts[1].MPI_ERROR == MPI_SUCCESS || sts[1].MPI_ERROR == MPI_ERR_PENDING, "Waitall: status[1].MPI_ERROR %d",
          sts[1].MPI_ERROR);
    if (sts[1].MPI_ERROR == MPI_ERR_PENDING)
        CHECK_RC(MPI_Wait(&rs[1], MPI_STATUS_IGNORE));
    CHECK(rs[1] == MPI_REQUEST_NULL && gs[0].frees == 1, "Waitall: second request not completed");
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

#if defined(FERRY) || defined(MPICH_API_PUBLIC)
/* completes its request on its polls_left-th call */
static int poll_fn(void *extra, MPI_Status *st)
{
    struct gstate *g = extra;
    (void)st;
    g->polls++;
    CHECK(g->polls_left > 0, "poll_fn of request %d called after it completed the request", g->id);
    if (--g->polls_left == 0)
        CHECK_RC(MPI_Grequest_complete(g->req));
    return MPI_SUCCESS;
}

/* blocks until every request given is complete, as ROMIO's do (MPICH's
 * Waitall calls it and waits for it; Ferry polls instead) */
static int wait_fn(int count, void **states, double timeout, MPI_Status *st)
{
    (void)timeout;
    for (int i = 0; i < count; i++)
        while (((struct gstate *)states[i])->polls_left > 0)
            poll_fn(states[i], st);
    return MPI_SUCCESS;
}

static void polled(void)
{
    /* Test polls it (once or more per call) until poll_fn completes it */
    memset(&gs[3], 0, sizeof gs[3]);
    gs[3].id = 3;
    gs[3].polls_left = 5;
    CHECK_RC(MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &gs[3], &gs[3].req));
    MPI_Request r = gs[3].req;
    MPI_Status st;
    int flag = 0, tests = 0;
    while (!flag && tests < 1000) {
        CHECK_RC(MPI_Test(&r, &flag, &st));
        tests++;
    }
    CHECK(flag && r == MPI_REQUEST_NULL, "MPIX request not complete after %d Tests (%d polls)", tests, gs[3].polls);
    CHECK(gs[3].polls == 5 && gs[3].polls_left == 0, "poll_fn called %d times, expected 5", gs[3].polls);
    check_status(&st, 3, "Test of an MPIX request");
    CHECK(gs[3].frees == 1, "MPIX request: free_fn called %d times", gs[3].frees);

    /* a class: two requests, Waitall polls both to completion */
    MPIX_Grequest_class k;
    CHECK_RC(MPIX_Grequest_class_create(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &k));
    MPI_Request rs[2];
    for (int i = 0; i < 2; i++) {
        int id = 4 + i;
        memset(&gs[id], 0, sizeof gs[id]);
        gs[id].id = id;
        gs[id].polls_left = 3 + 7 * i;
        CHECK_RC(MPIX_Grequest_class_allocate(k, &gs[id], &gs[id].req));
        rs[i] = gs[id].req;
    }
    MPI_Status sts[2];
    CHECK_RC(MPI_Waitall(2, rs, sts));
    for (int i = 0; i < 2; i++) {
        int id = 4 + i;
        CHECK(rs[i] == MPI_REQUEST_NULL && gs[id].polls == 3 + 7 * i && gs[id].frees == 1,
              "class request %d: polls %d (expected %d), frees %d", i, gs[id].polls, 3 + 7 * i, gs[id].frees);
        check_status(&sts[i], id, "Waitall of class requests");
    }

#ifdef FERRY
    /* a bad class is reported, not used (MPICH decodes it as a handle
     * without checking: Ferry's header build only) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Request bad = MPI_REQUEST_NULL;
    int rc = MPIX_Grequest_class_allocate(k + 1000, &gs[6], &bad), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && bad == MPI_REQUEST_NULL, "class_allocate of an unknown class: rc %d", rc);
    CHECK(cls == MPI_ERR_ARG, "class_allocate of an unknown class: error class %d, expected MPI_ERR_ARG", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
#endif
}
#else
static void polled(void) {}   /* Open MPI has no MPIX_Grequest_start */
#endif

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    lifecycle();
    freeing();
    cancelling();
    mixed();
    errors();
    polled();
    return tc_finish("p2p_greq");
}
