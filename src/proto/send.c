/* Sender side of the protocols, and the per-peer queues of packets waiting
 * for transport space.
 *
 * Packets to one peer leave in the order they were queued (the receiver
 * matches in arrival order, so reordering here would break non-overtaking).
 * The fast path writes straight into the transport when the peer's queue is
 * empty; otherwise the operation is appended and ferry_proto_progress_sends()
 * moves it out as space frees up. */
#include "proto/proto.h"
#include "proto/ladder.h"
#include "proto/rndv_adapt.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/datatype.h"
#include "core/request.h"
#include "core/runtime.h"
#include "core/util.h"
#include "transport/transport.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum out_kind { OUT_EAGER, OUT_RTS, OUT_DATA, OUT_PUSH, OUT_CTRL };

struct out_op {
    enum out_kind kind;
    struct ferry_request *req;
    size_t offset;             /* OUT_DATA, OUT_PUSH: position reached in the message */
    size_t end;                /* OUT_DATA, OUT_PUSH: where the op's part of the message ends */
    uint64_t raddr;            /* OUT_PUSH: the receiver's buffer */
    int push_failed;           /* OUT_PUSH: single copy was refused; the rest goes as DATA */
    int reported;              /* OUT_PUSH: PUSHED is sent */
    struct ferry_pkt ctrl;     /* OUT_CTRL: the packet to send */
    struct out_op *next;
};

struct out_queue {
    struct out_op *head, *tail;
};

static struct out_queue *queues;   /* per world rank */
static long queued_ops;             /* total ops in all queues, to skip the scan when idle */
static long push_pieces;            /* OUT_PUSH pieces written (progress made without finishing an op) */
static long sends_inflight;         /* send requests started, not complete, and cancels not answered */
static uint32_t last_msg_id;        /* numbers cancellable messages (msg_id); 0 is never used */
static struct out_op *op_pool;
static size_t *payload_cap;         /* per world rank: the transport's largest payload, 0 until asked */
static int *rndv_to;                /* per world rank: rendezvous sends to it not yet done */
static int *rndv_since;             /* per world rank: rendezvous sends to it started since the last
                                     * rendezvous receive from it was matched */

void ferry_proto_init(void)
{
    ferry_ladder_init();
    ferry_rndv_adapt_init();
    /* indexed by uid (runtime.h) */
    queues = ferry_xcalloc((size_t)ferry_rt.npeers, sizeof *queues);
    payload_cap = ferry_xcalloc((size_t)ferry_rt.npeers, sizeof *payload_cap);
    rndv_to = ferry_xcalloc((size_t)ferry_rt.npeers, sizeof *rndv_to);
    rndv_since = ferry_xcalloc((size_t)ferry_rt.npeers, sizeof *rndv_since);
}

void ferry_proto_finalize(void)
{
    ferry_rndv_adapt_finalize();
    free(queues);
    queues = NULL;
    free(payload_cap);
    payload_cap = NULL;
    free(rndv_to);
    rndv_to = NULL;
    free(rndv_since);
    rndv_since = NULL;
    while (op_pool) {
        struct out_op *o = op_pool;
        op_pool = o->next;
        free(o);
    }
}

/* Asked on every send. The transport's packet size is fixed after MPI_Init,
 * so it is asked once per peer rather than through the ops table each time;
 * the ladder's limit is read each time, as MPIX_Ferry_p2p_set (ferry-tune)
 * changes it at run time. */
static __attribute__((noinline)) size_t ask_payload_cap(int peer)
{
    return payload_cap[peer] = ferry_rt.peers[peer].tr->max_payload(peer);
}

/* inline on this file's message paths, which call it for every send */
static inline size_t eager_max(int peer)
{
    size_t cap = payload_cap[peer];
    if (FERRY_UNLIKELY(cap == 0))
        cap = ask_payload_cap(peer);
    return FERRY_MIN(ferry_ladder.eager_behind_max, cap);
}

size_t ferry_proto_eager_max(int peer)
{
    return eager_max(peer);
}

/* A message of `bytes` the ladder sends eagerly only to a receiver behind in
 * a stream (ferry_ladder.eager_behind_max): whether this peer instead waits
 * for it (has taken every packet we sent but at most one header-only packet,
 * shm_caught_up; the same test as streamed eager's),
 * so that it goes by rendezvous. Not while ranks outnumber CPUs: the pull
 * would wait for this rank to be scheduled again. */
static int to_waiting_receiver(int peer, size_t bytes)
{
    if (bytes <= ferry_ladder.eager_max || ferry_rt.oversubscribed || queues[peer].head)
        return 0;
    const struct ferry_transport *tr = ferry_rt.peers[peer].tr;
    if (!tr->caught_up || !tr->caught_up(peer))
        return 0;
    if (FERRY_UNLIKELY(ferry_verbose >= 1)) {
        static int logged;
        if (!logged++)
            ferry_log(1, "message of %zu bytes to rank %d, which waits for it: rendezvous (eager only behind a "
                      "stream above %zu bytes)", bytes, peer, ferry_ladder.eager_max);
    }
    return 1;
}

static void fill_envelope(struct ferry_pkt *p, const struct ferry_request *r, enum ferry_pkt_type type)
{
    p->type = (uint8_t)type;
    p->flags = r->mode == FERRY_MODE_SYNC ? FERRY_PKT_FLAG_SYNC : 0;
    p->msg_id = r->msg_id;
    p->src = r->comm->rank;
    p->tag = r->tag;
    p->ctx = r->ctx;
    p->msg_bytes = r->bytes;
    p->offset = 0;
    p->sreq = (uint64_t)(uintptr_t)r;
    p->rreq = 0;
    p->addr = 0;
    p->payload = 0;
}

/* Eager messages up to FERRY_PKT_INLINE_MAX bytes ride inside the header's
 * cache line: the receiver then reads a single line per message. */
static inline size_t eager_payload_bytes(size_t bytes)
{
    return bytes <= FERRY_PKT_INLINE_MAX ? 0 : bytes;
}

/* Where an eager message's bytes go in packet p (whose envelope is filled). */
static inline void *eager_payload(struct ferry_pkt *p, size_t bytes)
{
    if (bytes <= FERRY_PKT_INLINE_MAX) {
        p->flags |= FERRY_PKT_FLAG_INLINE;
        p->payload = 0;
        return p->inline_data;
    }
    p->payload = (uint32_t)bytes;
    return p + 1;
}

/* Write an eager message's bytes into packet p (envelope filled) and publish
 * it. From FERRY_EAGER_STREAM bytes up, on a transport whose consumer reads
 * the packet in place, to a receiver that has taken every earlier packet
 * but at most one header-only one (it waits for this one: a ping-pong, a
 * message after a pause; tr->caught_up), the packet
 * is published after its first piece and every further piece through the
 * header's `offset`: the receiver copies a piece out while the next goes in,
 * where it would otherwise start after the whole packet was written (two
 * copies one after the other; 16 KiB ping-pong 2.5 against 2.9 us round
 * trip). Behind in a stream of packets, the receiver would only find the
 * packet sooner to spin on its header line, slowing the writer
 * (bi-directional bandwidth at 16 KiB 16.7 against 18.4 GB/s). The release
 * store of `offset` orders the piece's bytes before it, for the receiver's
 * acquire load (recv.c, eager_copy). The slot stays ours until the receiver
 * consumes the packet, which it does only once `offset` reaches the
 * message's size. Not while ranks outnumber CPUs: the receiver, once it sees
 * the packet, waits on this rank, which may then be off its CPU. */
static void eager_write(const struct ferry_transport *tr, int peer, struct ferry_pkt *p, struct ferry_datatype *dt,
                        const void *buf, size_t bytes)
{
    char *dst = eager_payload(p, bytes);
    size_t chunk = (size_t)ferry_cfg.eager_stream_chunk;
    if (ferry_cfg.eager_stream < 0 || bytes < (size_t)ferry_cfg.eager_stream || bytes <= chunk || !tr->caught_up ||
        ferry_rt.oversubscribed || !tr->caught_up(peer)) {
        ferry_dt_pack(dt, buf, 0, dst, bytes);
        tr->commit(peer, p);
        return;
    }
    if (FERRY_UNLIKELY(ferry_verbose >= 1)) {
        static int logged;
        if (!logged++)
            ferry_log(1, "eager message of %zu bytes to rank %d streamed in %zu-byte pieces (FERRY_EAGER_STREAM)",
                      bytes, peer, chunk);
    }
    p->flags |= FERRY_PKT_FLAG_STREAM;
    ferry_dt_pack(dt, buf, 0, dst, chunk);
    p->offset = chunk;
    tr->commit(peer, p);
    for (size_t off = chunk; off < bytes;) {
        size_t n = FERRY_MIN(chunk, bytes - off);
        ferry_dt_pack(dt, buf, off, dst + off, n);
        off += n;
        __atomic_store_n(&p->offset, (uint64_t)off, __ATOMIC_RELEASE);
    }
}

long ferry_proto_sends_inflight(void)
{
    return sends_inflight;
}

long ferry_proto_sends_queued(void)
{
    return queued_ops;
}

int ferry_proto_rndv_sends_to(int peer)
{
    return rndv_to[peer];
}

int ferry_proto_rndv_both_ways(int peer)
{
    int both = rndv_to[peer] > 0 || rndv_since[peer] > 0;
    rndv_since[peer] = 0;
    return both;
}

static void rndv_uncount(struct ferry_request *r)
{
    if (r->rndv_counted) {
        r->rndv_counted = 0;
        if (!--rndv_to[r->world_peer])
            ferry_rndv_adapt_sends_done(r->world_peer);
    }
}

static void send_done(struct ferry_request *r)
{
    sends_inflight--;
    rndv_uncount(r);
    if (r->cancel_pending) {
        /* the cancel's reply completes it (ferry_proto_on_cancel_reply) */
        r->op_done = 1;
        return;
    }
    ferry_request_complete(r);
}

/* A rendezvous send's transfer is done, or for split single copy one of its
 * two halves (its own share written; the receiver's FIN, or the DATA the
 * receiver asked for when its pull failed). */
static void rndv_event(struct ferry_request *r)
{
    if (r->split_left > 1) {
        r->split_left--;
        return;
    }
    r->split_left = 0;
    send_done(r);
}

/* Split single copy, the sender's share: one FERRY_CMA_CHUNK piece per call
 * (so other traffic keeps moving) written into the receiver's buffer. Once
 * written, or refused, PUSHED tells the receiver how much landed; after a
 * refusal the rest of the share follows as DATA. Returns 1 when finished. */
static int push_step(int peer, struct out_op *op);

/* Try to put one step of op into the transport. Returns 1 when the op is
 * finished (and may be dropped), 0 when the transport is full (or a push
 * has more pieces to write). */
/* An eager message straight into the transport; 0 when its ring is full. */
static int eager_step(int peer, struct ferry_request *r)
{
    const struct ferry_transport *tr = ferry_rt.peers[peer].tr;
    struct ferry_pkt *p = tr->reserve(peer, eager_payload_bytes(r->bytes));
    if (!p)
        return 0;
    fill_envelope(p, r, FERRY_PKT_EAGER);
    eager_write(tr, peer, p, r->dt, r->buf, r->bytes);
    send_done(r);
    return 1;
}

static int op_step(int peer, struct out_op *op)
{
    const struct ferry_transport *tr = ferry_rt.peers[peer].tr;
    struct ferry_request *r = op->req;
    struct ferry_pkt *p;

    switch (op->kind) {
    case OUT_CTRL:
        if (!(p = tr->reserve(peer, 0)))
            return 0;
        ferry_pkt_copy(p, &op->ctrl);
        tr->commit(peer, p);
        return 1;
    case OUT_EAGER:
        return eager_step(peer, r);
    case OUT_RTS:
        if (!(p = tr->reserve(peer, 0)))
            return 0;
        fill_envelope(p, r, FERRY_PKT_RTS);
        if (r->fanout)
            p->flags |= FERRY_PKT_FLAG_FANOUT;
        if (ferry_dt_is_contig(r->dt, r->count))
            p->addr = (uint64_t)(uintptr_t)ferry_dt_contig_ptr(r->dt, r->buf);
        tr->commit(peer, p);
        return 1;   /* the request completes on FIN, or after DATA */
    case OUT_PUSH:
        return push_step(peer, op);
    case OUT_DATA: {
        size_t max = tr->max_payload(peer);
        while (op->offset < op->end) {
            size_t n = FERRY_MIN(max, op->end - op->offset);
            if (!(p = tr->reserve(peer, n)))
                return 0;
            fill_envelope(p, r, FERRY_PKT_DATA);
            p->rreq = r->remote_cookie;
            p->offset = op->offset;
            p->payload = (uint32_t)n;
            ferry_dt_pack(r->dt, r->buf, op->offset, p + 1, n);
            tr->commit(peer, p);
            op->offset += n;
        }
        rndv_event(r);
        return 1;
    }
    }
    return 1;
}

static int push_step(int peer, struct out_op *op)
{
    const struct ferry_transport *tr = ferry_rt.peers[peer].tr;
    struct ferry_request *r = op->req;
    if (!op->push_failed && op->offset < op->end) {
        size_t len = FERRY_MIN((size_t)ferry_cfg.cma_chunk, op->end - op->offset);
        const char *src = (const char *)ferry_dt_contig_ptr(r->dt, r->buf);
        int rc = tr->push && tr->can_pull(peer) ? tr->push(peer, op->raddr + op->offset, src + op->offset, len)
                                                : -EPERM;
        if (rc) {
            if (tr->can_pull(peer)) {
                ferry_log(1, "single copy to rank %d failed (%s); using the copy path with that rank from now on",
                          peer, strerror(-rc));
                tr->disable_pull(peer);
            }
            op->push_failed = 1;
        } else {
            op->offset += len;
            push_pieces++;
            if (op->offset < op->end)
                return 0;
        }
    }
    if (!op->reported) {
        struct ferry_pkt *p = tr->reserve(peer, 0);
        if (!p)
            return 0;
        fill_envelope(p, r, FERRY_PKT_PUSHED);
        p->rreq = r->remote_cookie;
        p->offset = op->offset;   /* bytes written, from the start */
        tr->commit(peer, p);
        op->reported = 1;
    }
    op->kind = OUT_DATA;   /* whatever a refusal left of the share, then done */
    return op_step(peer, op);
}

static void enqueue(int peer, struct out_op *op)
{
    struct out_queue *q = &queues[peer];
    op->next = NULL;
    if (q->tail)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
    queued_ops++;
}

/* A reduction's message its receiver pulls whole (FERRY_COLL_PULL_MIN) */
static int pulled_whole(const struct ferry_request *r)
{
    return r->consume && ferry_cfg.coll_pull_min >= 0 && r->bytes >= (size_t)ferry_cfg.coll_pull_min;
}

static struct out_op *op_new(enum out_kind kind, struct ferry_request *r)
{
    struct out_op *op = op_pool;
    if (op)
        op_pool = op->next;
    else
        op = ferry_xmalloc(sizeof *op);
    op->kind = kind;
    op->req = r;
    op->offset = 0;
    op->end = 0;
    op->raddr = 0;
    op->push_failed = 0;
    op->reported = 0;
    op->next = NULL;
    return op;
}

/* Run op now if nothing is queued ahead of it, else queue it. */
static void submit(int peer, struct out_op *op)
{
    if (!queues[peer].head && op_step(peer, op)) {
        op->next = op_pool;
        op_pool = op;
        return;
    }
    enqueue(peer, op);
}

void ferry_proto_isend(struct ferry_request *r)
{
    ferry_request_start(r);
    sends_inflight++;
    if (r->peer == MPI_PROC_NULL) {
        ferry_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        send_done(r);
        return;
    }
    int peer = ferry_comm_world_rank(r->comm, r->peer);
    r->world_peer = peer;
    if (++last_msg_id == 0)
        last_msg_id = 1;
    r->msg_id = last_msg_id;
    r->op_done = 0;
    r->bytes = ferry_dt_bytes(r->dt, r->count);
    r->done_bytes = 0;
    ferry_status_set(&r->status, MPI_UNDEFINED, MPI_UNDEFINED, MPI_SUCCESS, 0, 0);
    int eager = r->mode != FERRY_MODE_SYNC && r->bytes <= eager_max(peer) && !pulled_whole(r) &&
                !to_waiting_receiver(peer, r->bytes);
    if (eager && !queues[peer].head) {
        /* common case: straight into the transport, no queue entry (and no
         * out_op on the stack: its zeroing is ~130 bytes of stores that
         * would wait in the store buffer behind the last packet's head) */
        if (eager_step(peer, r))
            return;
    }
    if (!eager) {
        r->rndv_counted = 1;
        rndv_to[peer]++;
        rndv_since[peer]++;
    }
    submit(peer, op_new(eager ? OUT_EAGER : OUT_RTS, r));
}

int ferry_proto_send_now(struct ferry_comm *c, const void *buf, size_t count, struct ferry_datatype *dt, int dest,
                         int tag)
{
    int peer = ferry_comm_world_rank(c, dest);
    size_t bytes = ferry_dt_bytes(dt, count);
    if (queues[peer].head || bytes > eager_max(peer) || to_waiting_receiver(peer, bytes))
        return 0;
    const struct ferry_transport *tr = ferry_rt.peers[peer].tr;
    struct ferry_pkt *p = tr->reserve(peer, eager_payload_bytes(bytes));
    if (!p)
        return 0;
    p->type = FERRY_PKT_EAGER;
    p->flags = 0;
    p->msg_id = 0;   /* no request, nothing can cancel it */
    p->src = c->rank;
    p->tag = tag;
    p->ctx = c->ctx;
    p->msg_bytes = bytes;
    eager_write(tr, peer, p, dt, buf, bytes);
    return 1;
}

void ferry_proto_send_ctrl(int peer, const struct ferry_pkt *hdr)
{
    struct out_op *op = op_new(OUT_CTRL, NULL);
    op->ctrl = *hdr;
    submit(peer, op);
}

/* CTS: the receiver matched and wants the data streamed [offset, msg_bytes)
 * (0: to the end), or (FLAG_SPLIT) our share [0, offset) written into its
 * buffer. Queued behind whatever is already queued for that peer. A rank
 * that is pulling a message itself leaves its share to the receiver (two
 * busy cores gain nothing from splitting, and one copy per message is less
 * work than two halves): PUSHED with FLAG_DECLINED, and a FIN for each of
 * the receiver's two pulls. */
void ferry_proto_on_cts(int src, const struct ferry_pkt *pkt)
{
    struct ferry_request *r = (struct ferry_request *)(uintptr_t)pkt->sreq;
    r->remote_cookie = pkt->rreq;
    struct out_op *op;
    if (!(pkt->flags & FERRY_PKT_FLAG_SPLIT)) {
        op = op_new(OUT_DATA, r);
        op->offset = pkt->offset;
        op->end = pkt->msg_bytes ? pkt->msg_bytes : r->bytes;
        submit(src, op);
        return;
    }
    /* two events complete it: our share written and the receiver's FIN; or,
     * declined, the FINs of the receiver's two pulls (a pull that fails
     * turns into DATA, whose end counts instead) */
    r->split_left = 2;
    if (ferry_proto_pulling()) {
        ferry_log(2, "split single copy to rank %d: busy pulling, the receiver pulls all %zu bytes", src,
                  (size_t)r->bytes);
        struct ferry_pkt p;
        fill_envelope(&p, r, FERRY_PKT_PUSHED);
        p.flags = FERRY_PKT_FLAG_DECLINED;
        p.rreq = r->remote_cookie;
        p.msg_bytes = pkt->offset;   /* the share the receiver now pulls */
        p.addr = (uint64_t)(uintptr_t)ferry_dt_contig_ptr(r->dt, r->buf);
        ferry_proto_send_ctrl(src, &p);
        return;
    }
    op = op_new(OUT_PUSH, r);
    op->raddr = pkt->addr;
    op->end = pkt->offset;
    submit(src, op);
}

/* FIN: the receiver pulled the data (or, split, its part of it) itself. */
void ferry_proto_on_fin(int src, const struct ferry_pkt *pkt)
{
    (void)src;
    rndv_event((struct ferry_request *)(uintptr_t)pkt->sreq);
}

/* MPI_Cancel of a send (MPI-3.1 3.8.4). Whether the message can still be
 * taken back is known only at the receiver: an eager message that has not
 * matched sits in its unexpected queue, a rendezvous one as an RTS there.
 * So ask it: CANCEL goes behind the message on the same ordered channel, the
 * receiver removes the message if it is still unmatched and answers. Until
 * the answer is in, the request is not complete -- an eager send that had
 * completed locally is reopened -- so the Wait/Test that follows reports the
 * outcome. A send that matched meanwhile completes normally. */
int ferry_proto_cancel_send(struct ferry_request *r)
{
    if (r->cancel_pending || !r->msg_id)
        return 0;   /* one cancel at a time; PROC_NULL and unstarted sends have nothing to take back */
    if (r->complete) {
        ferry_request_start(r);
        r->op_done = 1;
    }
    r->cancel_pending = 1;
    sends_inflight++;   /* Finalize waits for the answer */
    struct ferry_pkt p;
    memset(&p, 0, sizeof p);
    p.type = FERRY_PKT_CANCEL;
    p.msg_id = r->msg_id;
    p.src = r->comm->rank;
    p.tag = r->tag;
    p.ctx = r->ctx;
    p.sreq = (uint64_t)(uintptr_t)r;
    ferry_proto_send_ctrl(r->world_peer, &p);
    return 1;
}

void ferry_proto_on_cancel_reply(int src, const struct ferry_pkt *pkt)
{
    (void)src;
    struct ferry_request *r = (struct ferry_request *)(uintptr_t)pkt->sreq;
    r->cancel_pending = 0;
    sends_inflight--;
    if (pkt->flags & FERRY_PKT_FLAG_CANCELLED) {
        r->status.count_hi_and_cancelled |= 1;
        if (!r->op_done) {
            /* a rendezvous whose RTS the receiver dropped: no CTS/FIN will come */
            sends_inflight--;
            rndv_uncount(r);
            r->op_done = 1;
        }
    }
    struct ferry_request *outer = r->outer;
    if (outer) {
        /* an Ibsend / persistent Bsend request waiting on its copy's cancel */
        r->outer = NULL;
        if (pkt->flags & FERRY_PKT_FLAG_CANCELLED)
            outer->status.count_hi_and_cancelled |= 1;
        ferry_request_complete(outer);
    }
    if (r->op_done)
        ferry_request_complete(r);
}

int ferry_proto_progress_sends(void)
{
    if (!queued_ops)
        return 0;
    int moved = 0;
    for (int peer = 0; peer < ferry_rt.peer_end; peer++) {
        struct out_queue *q = &queues[peer];
        while (q->head) {
            struct out_op *op = q->head;
            if (!op_step(peer, op))
                break;
            q->head = op->next;
            if (!q->head)
                q->tail = NULL;
            queued_ops--;
            moved++;
            op->next = op_pool;
            op_pool = op;
        }
    }
    long pieces = push_pieces;
    push_pieces = 0;
    return moved + (int)pieces;
}
