/* Requests: one object per point-to-point operation in flight.
 *
 * A request is born active, is completed by the protocol layer (which fills
 * in its status), and is freed by Wait/Test or Request_free. Persistent
 * requests go back to inactive on completion instead of being freed. The
 * protocol layer refers to requests across processes by their address (the
 * "cookie" in RTS/CTS/FIN packets); a request stays allocated while any such
 * reference is outstanding, even if the user freed it. */
#ifndef FERRY_REQUEST_H
#define FERRY_REQUEST_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

struct ferry_comm;
struct ferry_datatype;
struct ferry_unexp;

enum ferry_req_kind {
    FERRY_REQ_SEND,
    FERRY_REQ_RECV,
    FERRY_REQ_MESSAGE,   /* an MPI_Message from Mprobe/Improbe: holds a matched unexpected message */
    FERRY_REQ_COLL,      /* a nonblocking collective: completed by its schedule (coll/sched.c) */
    FERRY_REQ_GREQ,      /* a generalized request: completed by MPI_Grequest_complete (api/grequest.c) */
    FERRY_REQ_PAIR,      /* Isendrecv(_replace): completes when its send and receive (children) have */
    FERRY_REQ_PCOLL,     /* a persistent collective (api/coll_persistent.c): each Start runs the
                          * nonblocking collective as its one child */
    FERRY_REQ_PART,      /* a partitioned send or receive (api/partitioned.c): each Start posts one
                          * message of all partitions as its child */
    FERRY_REQ_IO,        /* a nonblocking file operation (api/file_rw.c): the I/O is done when it
                          * starts, so it is born complete with its status filled in */
};

enum ferry_send_mode { FERRY_MODE_STANDARD, FERRY_MODE_SYNC, FERRY_MODE_READY, FERRY_MODE_BUFFERED };

struct ferry_request {
    MPI_Request handle;      /* the user's handle; MPI_REQUEST_NULL once freed */
    MPI_Request own_handle;  /* the object's handle-table slot, kept for life */
    enum ferry_req_kind kind;
    int proto_refs;          /* other holders besides the user (an Ibsend request holding the send of
                              * its buffered copy): the object is only recycled when this is 0 */
    /* flags, one byte each: the whole request stays within 256 bytes, which
     * the compiler zeroes with inline stores (see CMakeLists.txt) */
    uint8_t complete;        /* nothing in flight: set by the protocol layer when the operation is
                              * done; inactive persistent requests are complete too */
    uint8_t persistent;      /* Send_init / Recv_init */
    uint8_t active;          /* persistent: started and not yet completed by Wait/Test */
    uint8_t user_freed;      /* Request_free on an active request: free on completion */
    uint8_t cancel_pending;  /* send: CANCEL sent, reply not in yet; completion waits for it */
    uint8_t op_done;         /* send with a cancel pending: the transfer itself has finished */
    uint8_t greq_fortran;    /* FERRY_REQ_GREQ: the callbacks are Fortran subroutines
                              * (MPII_Grequest_set_lang_f77) */
    uint8_t rndv_counted;    /* send: counted among the rendezvous sends to its peer in flight;
                              * recv: timed in the open period of its peer (rndv_adapt.c) */
    uint8_t consume;         /* the receiver reads the data right after (a collective's reduction).
                              * recv: a rendezvous message is pulled whole with single copy;
                              * send: from FERRY_COLL_PULL_MIN bytes it goes by rendezvous */
    uint8_t fanout;          /* send: one of a collective's sends from this rank to several
                              * receivers, or made while it copies a block of its own
                              * (its RTS carries FERRY_PKT_FLAG_FANOUT) */

    /* arguments */
    void *buf;
    size_t count;
    struct ferry_datatype *dt;
    struct ferry_comm *comm;
    int peer;                /* comm rank, MPI_ANY_SOURCE, or MPI_PROC_NULL */
    int tag;
    uint32_t ctx;
    enum ferry_send_mode mode;

    /* state kept by the protocol layer */
    size_t bytes;            /* packed-stream size of the message (send) or receive capacity (recv) */
    size_t done_bytes;       /* bytes sent (send) / received (recv) so far */
    size_t msg_bytes;        /* recv: the size the sender announced */
    uint64_t remote_cookie;  /* recv: sender's request cookie; send: receiver's cookie after CTS */
    struct ferry_unexp *msg; /* FERRY_REQ_MESSAGE: the message taken off the unexpected queue */
    uint32_t msg_id;         /* send: the number its EAGER/RTS carries, for CANCEL (0: none) */
    int split_left;          /* split single copy. send: events before it is done (its own share
                              * written, and the receiver's FIN or the DATA of its fallback);
                              * recv: 1 until the sender's PUSHED is in */
    int world_peer;          /* world rank of the matched/destination peer */
    int children_left;       /* FERRY_REQ_PAIR, _PCOLL, _PART: children not yet complete */
    struct ferry_request *inner;  /* Ibsend / persistent Bsend: the send of the copy in the attached
                                   * buffer (a proto_refs reference), which is what a cancel acts on */
    struct ferry_request *outer;  /* the buffered-send request whose cancel waits on this send's */

    /* FERRY_REQ_PAIR and its children: a child tells its parent when it
     * completes (the receive hands over its status); the children are
     * internal and free themselves (user_freed) */
    struct ferry_request *parent;
    void *owned_buf;          /* freed with the request (Isendrecv_replace's packed copy) */

    /* FERRY_REQ_GREQ: the application's callbacks (MPI-3.1 12.2) */
    MPI_Grequest_query_function *greq_query;
    MPI_Grequest_free_function *greq_free;
    MPI_Grequest_cancel_function *greq_cancel;
    void *greq_state;

    MPI_Status status;       /* MPI_SOURCE, MPI_TAG, MPI_ERROR, and the byte count */

    struct ferry_request *next;   /* link in the posted-receive queue or a free list */
    struct ferry_request *prev;
};

void ferry_request_init(void);
void ferry_request_finalize(void);
struct ferry_request *ferry_request_new(enum ferry_req_kind kind);
/* NULL when h is not a live request. */
struct ferry_request *ferry_request_get(MPI_Request h);
/* Fill in the operation's arguments; the request holds a reference on comm
 * until it is freed. */
void ferry_request_setup(struct ferry_request *r, void *buf, size_t count, struct ferry_datatype *dt,
                         struct ferry_comm *comm, int peer, int tag, uint32_t ctx, enum ferry_send_mode mode);
/* Drop the request object (after Wait/Test completion or Request_free). */
void ferry_request_free(struct ferry_request *r);
/* Take / drop a proto_refs reference: a freed request is recycled only when
 * the last one is dropped. */
void ferry_request_ref(struct ferry_request *r);
void ferry_request_unref(struct ferry_request *r);
/* The operation has started: counted as in flight until completed. */
void ferry_request_start(struct ferry_request *r);
/* An operation that is finished the moment it starts (buffered sends: the
 * data already sits in the attached buffer). */
void ferry_request_done_now(struct ferry_request *r);
/* Called by the protocol layer when the operation finished. */
void ferry_request_complete(struct ferry_request *r);
/* Copy the request's status out to the user (st may be MPI_STATUS_IGNORE). */
void ferry_request_status_out(const struct ferry_request *r, MPI_Status *st);
/* Operations started (ferry_proto_isend/irecv) and not yet completed. */
extern long ferry_requests_active;

/* Status helpers: MPICH stores the byte count in count_lo + the upper bits of
 * count_hi_and_cancelled, and the cancelled flag in its lowest bit. */
static inline void ferry_status_set(MPI_Status *st, int src, int tag, int err, size_t bytes, int cancelled)
{
    st->MPI_SOURCE = src;
    st->MPI_TAG = tag;
    st->MPI_ERROR = err;
    st->count_lo = (int)(uint32_t)(bytes & 0xffffffffu);
    st->count_hi_and_cancelled = (int)(((uint64_t)bytes >> 32) << 1) | (cancelled ? 1 : 0);
}
static inline size_t ferry_status_bytes(const MPI_Status *st)
{
    return (size_t)(uint32_t)st->count_lo | ((size_t)((uint32_t)st->count_hi_and_cancelled >> 1) << 32);
}
static inline int ferry_status_cancelled(const MPI_Status *st)
{
    return st->count_hi_and_cancelled & 1;
}

#endif
