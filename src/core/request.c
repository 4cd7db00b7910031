/* Request objects (see request.h). Freed requests go to a free list so the
 * message path does not call malloc, and each object keeps its handle for
 * life: the handle table is written once per object, not once per message
 * (a freed request's handle field is MPI_REQUEST_NULL, so a stale handle
 * still finds nothing). */
#include "core/request.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/handle.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>

/* A request is zeroed when it is freed (new objects come from calloc), not
 * when it is taken: a stream of small Isends then makes no zeroing stores
 * between one packet's publication and the next. Each publication waits for
 * the ring's head line to come back from the polling receiver, and the
 * stores behind it in the store buffer wait with it; the frees come in a
 * batch at Waitall, after the last packet (2 ranks, interleaved runs,
 * medians: message rate at 0 B 8.2M against 6.4M msg/s in 6 runs, 10.0M
 * against 7.7M in 5 more; bandwidth at 1 B 7.9 against 5.8 MB/s; latency
 * and bi-directional bandwidth unchanged). Up to 256 bytes the zeroing is inline
 * stores, beyond it a call to memset (the sender's small-message rate fell
 * 15% when the struct grew to 264 bytes). */
_Static_assert(sizeof(struct ferry_request) <= 256, "a request fits the inline zeroing");

static struct ferry_objtab table;
static struct ferry_request *free_list;
long ferry_requests_active;

void ferry_request_init(void)
{
    ferry_objtab_init(&table, FERRY_OBJ_REQUEST, 1);
}

void ferry_request_finalize(void)
{
    /* every object, in use or on the free list, has its slot */
    for (int i = table.first_index; i < table.top; i++)
        free(table.slot[i]);
    free_list = NULL;
    ferry_objtab_destroy(&table);
}

struct ferry_request *ferry_request_new(enum ferry_req_kind kind)
{
    struct ferry_request *r = free_list;
    MPI_Request h;
    if (FERRY_LIKELY(r != NULL)) {
        free_list = r->next;
        r->next = NULL;
        h = r->own_handle;
    } else {
        r = ferry_xcalloc(1, sizeof *r);
        h = ferry_objtab_add(&table, r);
    }
    r->kind = kind;
    r->handle = h;
    r->own_handle = h;
    return r;
}

struct ferry_request *ferry_request_get(MPI_Request h)
{
    struct ferry_request *r = ferry_objtab_get(&table, h);
    return r && r->handle == h ? r : NULL;
}

void ferry_request_setup(struct ferry_request *r, void *buf, size_t count, struct ferry_datatype *dt,
                         struct ferry_comm *comm, int peer, int tag, uint32_t ctx, enum ferry_send_mode mode)
{
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    ferry_dt_retain(dt);   /* Type_free during the operation must not free it */
    r->comm = comm;
    comm->refs++;
    r->peer = peer;
    r->tag = tag;
    r->ctx = ctx;
    r->mode = mode;
}

void ferry_request_free(struct ferry_request *r)
{
    if (!r->complete) {
        /* still in flight (Request_free on an active request): released when
         * the protocol layer completes it */
        r->user_freed = 1;
        return;
    }
    if (r->proto_refs) {
        /* someone else still points at it: recycled on the last unref */
        r->user_freed = 1;
        return;
    }
    r->handle = MPI_REQUEST_NULL;
    if (r->comm)
        ferry_comm_release(r->comm);
    if (r->dt)
        ferry_dt_release(r->dt);
    if (r->inner)
        ferry_request_unref(r->inner);
    free(r->owned_buf);
    MPI_Request own = r->own_handle;
    memset(r, 0, sizeof *r);   /* here, not in ferry_request_new: see the top */
    r->own_handle = own;
    r->handle = MPI_REQUEST_NULL;
    r->next = free_list;
    free_list = r;
}

void ferry_request_ref(struct ferry_request *r)
{
    r->proto_refs++;
}

void ferry_request_unref(struct ferry_request *r)
{
    if (--r->proto_refs == 0 && r->user_freed && r->complete)
        ferry_request_free(r);
}

void ferry_request_start(struct ferry_request *r)
{
    ferry_requests_active++;
    r->complete = 0;
}

void ferry_request_done_now(struct ferry_request *r)
{
    ferry_request_start(r);
    ferry_status_set(&r->status, MPI_UNDEFINED, MPI_UNDEFINED, MPI_SUCCESS, 0, 0);
    ferry_request_complete(r);
}

/* A child of a FERRY_REQ_PAIR, _PCOLL or _PART completed: the parent reports
 * the receive's (or the collective's) status. */
static void child_done(struct ferry_request *r)
{
    struct ferry_request *p = r->parent;
    r->parent = NULL;
    if (r->kind == FERRY_REQ_RECV || p->kind != FERRY_REQ_PAIR) {
        p->status = r->status;   /* the pair reports its receive */
        p->msg_bytes = r->msg_bytes;
        if (r->kind == FERRY_REQ_RECV)
            p->bytes = r->bytes;   /* the receive buffer's size, for a truncation's report */
        if (p->kind == FERRY_REQ_PART)
            p->status.MPI_TAG = p->tag;   /* the user's tag, not the message's (api/partitioned.c) */
    }
    if (--p->children_left == 0)
        ferry_request_complete(p);
}

void ferry_request_complete(struct ferry_request *r)
{
    r->complete = 1;
    ferry_requests_active--;
    if (r->parent)
        child_done(r);
    if (r->user_freed)
        ferry_request_free(r);
}

void ferry_request_status_out(const struct ferry_request *r, MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    /* MPI_ERROR is only set by the multiple-completion calls; Wait/Test leave
     * it as the user had it. */
    int err = st->MPI_ERROR;
    *st = r->status;
    st->MPI_ERROR = err;
}
