/* Receiver side of the protocols: dispatch of arriving packets, delivery into
 * posted receives or the unexpected queue, and the rendezvous receive (pull
 * with single copy, or CTS and reassembly of DATA packets). */
#include "proto/proto.h"
#include "proto/ladder.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/datatype.h"
#include "core/match.h"
#include "core/request.h"
#include "core/runtime.h"
#include "core/util.h"
#include "transport/transport.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ferry_proto_on_cts(int src, const struct ferry_pkt *pkt);
void ferry_proto_on_fin(int src, const struct ferry_pkt *pkt);
void ferry_proto_on_cancel_reply(int src, const struct ferry_pkt *pkt);

/* Receive capacity is r->bytes; a longer message is truncated to it and the
 * receive reports MPI_ERR_TRUNCATE (the excess is dropped, never written). */
static void finish_recv(struct ferry_request *r, int src, int tag, size_t msg_bytes)
{
    size_t got = FERRY_MIN(msg_bytes, r->bytes);
    int err = msg_bytes > r->bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    ferry_status_set(&r->status, src, tag, err, got, 0);
    ferry_request_complete(r);
}

static void send_ctrl(int peer, enum ferry_pkt_type type, uint64_t sreq, uint64_t rreq)
{
    struct ferry_pkt p;
    memset(&p, 0, sizeof p);
    p.type = (uint8_t)type;
    p.sreq = sreq;
    p.rreq = rreq;
    ferry_proto_send_ctrl(peer, &p);
}

/* Single copy in progress: the receiver pulls the sender's contiguous buffer
 * one FERRY_CMA_CHUNK piece per progress call, so a large pull never holds up
 * other traffic (or a test of another request) for longer than one piece. */
struct pull {
    struct ferry_request *r;
    int peer;                 /* world rank of the sender */
    int src, tag;             /* the message's envelope, for the status */
    uint64_t addr, sreq;      /* sender's buffer and request cookie */
    size_t n, done;           /* bytes to pull (capped at the receive size), pulled so far */
    size_t msg_bytes;
    struct pull *next;
};
static struct pull *pulls;

static void start_cts(struct ferry_request *r, int peer, uint64_t sreq)
{
    send_ctrl(peer, FERRY_PKT_CTS, sreq, (uint64_t)(uintptr_t)r);
}

/* One piece of p; returns 1 when p is finished (done, or fallen back to the
 * copy path: nothing is lost, the sender then streams the whole message). */
static int pull_step(struct pull *p)
{
    const struct ferry_transport *tr = ferry_rt.peers[p->peer].tr;
    char *dst = (char *)ferry_dt_contig_ptr(p->r->dt, p->r->buf);
    size_t len = FERRY_MIN((size_t)ferry_cfg.cma_chunk, p->n - p->done);
    int rc = len ? tr->pull(p->peer, dst + p->done, p->addr + p->done, len) : 0;
    if (rc) {
        ferry_log(1, "single copy from rank %d failed (%s); using the copy path with that rank from now on",
                  p->peer, strerror(-rc));
        tr->disable_pull(p->peer);
        start_cts(p->r, p->peer, p->sreq);
        return 1;
    }
    p->done += len;
    if (p->done < p->n)
        return 0;
    send_ctrl(p->peer, FERRY_PKT_FIN, p->sreq, 0);
    finish_recv(p->r, p->src, p->tag, p->msg_bytes);
    return 1;
}

int ferry_proto_progress_pulls(void)
{
    int work = 0;
    for (struct pull **pp = &pulls; *pp;) {
        struct pull *p = *pp;
        work++;
        if (pull_step(p)) {
            *pp = p->next;
            free(p);
        } else {
            pp = &p->next;
        }
    }
    return work;
}

/* The receive r matched a rendezvous message announced by an RTS. */
static void start_rndv(struct ferry_request *r, int src_world, int src, int tag, size_t bytes, uint64_t sreq,
                       uint64_t addr)
{
    const struct ferry_transport *tr = ferry_rt.peers[src_world].tr;
    r->world_peer = src_world;
    r->msg_bytes = bytes;
    r->done_bytes = 0;
    r->status.MPI_SOURCE = src;
    r->status.MPI_TAG = tag;
    size_t n = FERRY_MIN(bytes, r->bytes);
    /* single copy where the ladder's cost model says it beats the pipelined
     * copy through the rings (ladder.h) */
    if (addr && ferry_ladder_cma(bytes) && tr->pull && tr->can_pull(src_world) &&
        ferry_dt_is_contig(r->dt, r->count)) {
        struct pull *p = ferry_xmalloc(sizeof *p);
        *p = (struct pull){.r = r, .peer = src_world, .src = src, .tag = tag, .addr = addr, .sreq = sreq,
                           .n = n, .msg_bytes = bytes};
        /* the first piece now (a message of one piece completes here) */
        if (pull_step(p)) {
            free(p);
        } else {
            p->next = pulls;
            pulls = p;
        }
        return;
    }
    if (bytes == 0) {
        send_ctrl(src_world, FERRY_PKT_FIN, sreq, 0);
        finish_recv(r, src, tag, 0);
        return;
    }
    start_cts(r, src_world, sreq);
}

static void recv_from_unexp(struct ferry_request *r, struct ferry_unexp *u)
{
    if (u->rndv) {
        start_rndv(r, u->world_src, u->src, u->tag, u->bytes, u->sreq, u->addr);
    } else {
        ferry_dt_unpack(r->dt, r->buf, 0, u->data, FERRY_MIN(u->bytes, r->bytes));
        finish_recv(r, u->src, u->tag, u->bytes);
    }
    ferry_unexp_free(u);
}

static void recv_begin(struct ferry_request *r)
{
    ferry_request_start(r);
    r->bytes = ferry_dt_bytes(r->dt, r->count);
}

void ferry_proto_mrecv(struct ferry_request *r, struct ferry_unexp *u)
{
    recv_begin(r);
    recv_from_unexp(r, u);
}

void ferry_proto_irecv(struct ferry_request *r)
{
    recv_begin(r);
    if (r->peer == MPI_PROC_NULL) {
        ferry_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        ferry_request_complete(r);
        return;
    }
    struct ferry_unexp *u = ferry_unexp_find(r->ctx, r->peer, r->tag, 1);
    if (u)
        recv_from_unexp(r, u);
    else
        ferry_posted_add(r);
}

static void on_eager(int src, const struct ferry_pkt *pkt)
{
    const void *payload = (pkt->flags & FERRY_PKT_FLAG_INLINE) ? (const void *)pkt->inline_data : (const void *)(pkt + 1);
    struct ferry_request *r = ferry_posted_take(pkt->ctx, pkt->src, pkt->tag);
    if (r) {
        ferry_dt_unpack(r->dt, r->buf, 0, payload, FERRY_MIN((size_t)pkt->msg_bytes, r->bytes));
        finish_recv(r, pkt->src, pkt->tag, pkt->msg_bytes);
        return;
    }
    struct ferry_unexp *u = ferry_xcalloc(1, sizeof *u);
    u->ctx = pkt->ctx;
    u->src = pkt->src;
    u->tag = pkt->tag;
    u->world_src = src;
    u->msg_id = pkt->msg_id;
    u->bytes = pkt->msg_bytes;
    u->data = ferry_xmalloc(u->bytes);
    memcpy(u->data, payload, u->bytes);
    ferry_unexp_add(u);
}

static void on_rts(int src, const struct ferry_pkt *pkt)
{
    struct ferry_request *r = ferry_posted_take(pkt->ctx, pkt->src, pkt->tag);
    if (r) {
        start_rndv(r, src, pkt->src, pkt->tag, pkt->msg_bytes, pkt->sreq, pkt->addr);
        return;
    }
    struct ferry_unexp *u = ferry_xcalloc(1, sizeof *u);
    u->ctx = pkt->ctx;
    u->src = pkt->src;
    u->tag = pkt->tag;
    u->world_src = src;
    u->msg_id = pkt->msg_id;
    u->bytes = pkt->msg_bytes;
    u->rndv = 1;
    u->sync = (pkt->flags & FERRY_PKT_FLAG_SYNC) != 0;
    u->sreq = pkt->sreq;
    u->addr = pkt->addr;
    ferry_unexp_add(u);
}

static void on_data(int src, const struct ferry_pkt *pkt)
{
    struct ferry_request *r = (struct ferry_request *)(uintptr_t)pkt->rreq;
    size_t off = pkt->offset, n = pkt->payload;
    if (off < r->bytes)
        ferry_dt_unpack(r->dt, r->buf, off, pkt + 1, FERRY_MIN(n, r->bytes - off));
    r->done_bytes += n;
    if (r->done_bytes == r->msg_bytes)
        finish_recv(r, r->status.MPI_SOURCE, r->status.MPI_TAG, r->msg_bytes);
}

/* The sender cancels a message (send.c, ferry_proto_cancel_send). CANCEL
 * travels behind the message, so the message has arrived: it is either in
 * the unexpected queue (then it goes, and the sender's request completes as
 * cancelled) or already matched (the send completes normally). */
static void on_cancel(int src, const struct ferry_pkt *pkt)
{
    struct ferry_unexp *u = pkt->msg_id ? ferry_unexp_take_sent(src, pkt->ctx, pkt->tag, pkt->msg_id) : NULL;
    int cancelled = u != NULL;
    if (u)
        ferry_unexp_free(u);
    struct ferry_pkt p;
    memset(&p, 0, sizeof p);
    p.type = FERRY_PKT_CANCEL_REPLY;
    p.flags = cancelled ? FERRY_PKT_FLAG_CANCELLED : 0;
    p.sreq = pkt->sreq;
    ferry_proto_send_ctrl(src, &p);
}

typedef void (*pkt_handler)(int src, const struct ferry_pkt *pkt);
static const pkt_handler handlers[FERRY_PKT_TYPE_COUNT] = {
    [FERRY_PKT_EAGER] = on_eager,
    [FERRY_PKT_RTS] = on_rts,
    [FERRY_PKT_CTS] = ferry_proto_on_cts,
    [FERRY_PKT_DATA] = on_data,
    [FERRY_PKT_FIN] = ferry_proto_on_fin,
    [FERRY_PKT_CANCEL] = on_cancel,
    [FERRY_PKT_CANCEL_REPLY] = ferry_proto_on_cancel_reply,
};

void ferry_proto_receive(int src, const struct ferry_pkt *pkt)
{
    if (FERRY_UNLIKELY(pkt->type == 0 || pkt->type >= FERRY_PKT_TYPE_COUNT))
        ferry_fatal("corrupt packet type %u from rank %d", pkt->type, src);
    handlers[pkt->type](src, pkt);
}
