/* Receiver side of the protocols: dispatch of arriving packets, delivery into
 * posted receives or the unexpected queue, and the rendezvous receive (pull
 * with single copy, or CTS and reassembly of DATA packets). */
#include "proto/proto.h"
#include "proto/ladder.h"
#include "proto/rndv_adapt.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/datatype.h"
#include "core/biglock.h"
#include "core/match.h"
#include "core/progress.h"
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

/* A shorter message than the receive's capacity that ends inside a basic
 * element of the receive type (3 chars into ints): the type signatures cannot
 * match, and the last element is only partly written. */
static int partial_element(const struct ferry_datatype *dt, size_t got, size_t cap)
{
    return got < cap && ferry_dt_elements(dt, got) == MPI_UNDEFINED;
}

/* Receive capacity is r->bytes; a longer message is truncated to it and the
 * receive reports MPI_ERR_TRUNCATE (the excess is dropped, never written). A
 * shorter one that ends inside a basic element reports MPI_ERR_TYPE (as
 * MPICH does). */
static void finish_recv(struct ferry_request *r, int src, int tag, size_t msg_bytes)
{
    size_t got = FERRY_MIN(msg_bytes, r->bytes);
    int err = msg_bytes > r->bytes                   ? MPI_ERR_TRUNCATE
              : partial_element(r->dt, got, r->bytes) ? MPI_ERR_TYPE
                                                      : MPI_SUCCESS;
    if (r->rndv_counted)
        ferry_rndv_adapt_done(r);
    r->msg_bytes = msg_bytes;   /* for the error report */
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

/* A rendezvous receive got n more bytes (DATA, a split pull's piece, or the
 * sender's PUSHED share); complete once the whole message is in -- and, for
 * split single copy, PUSHED is in (it may report 0 bytes, and nothing may
 * refer to the request after it completes). */
static void rndv_landed(struct ferry_request *r, size_t n)
{
    r->done_bytes += n;
    if (r->done_bytes == r->msg_bytes && !r->split_left)
        finish_recv(r, r->status.MPI_SOURCE, r->status.MPI_TAG, r->msg_bytes);
}

/* CTS: stream me DATA [offset, end) (end 0: to the end of the message), or
 * with FLAG_SPLIT write [0, offset) to addr (see packet.h). */
static void send_cts(int peer, uint64_t sreq, struct ferry_request *r, size_t offset, size_t end, int split,
                     uint64_t addr)
{
    struct ferry_pkt p;
    memset(&p, 0, sizeof p);
    p.type = FERRY_PKT_CTS;
    p.flags = split ? FERRY_PKT_FLAG_SPLIT : 0;
    p.msg_bytes = end;
    p.sreq = sreq;
    p.rreq = (uint64_t)(uintptr_t)r;
    p.offset = offset;
    p.addr = addr;
    ferry_proto_send_ctrl(peer, &p);
}

/* Single copy in progress: the receiver pulls the sender's contiguous buffer
 * one FERRY_CMA_CHUNK piece per progress call, so a large pull never holds up
 * other traffic (or a test of another request) for longer than one piece. A
 * split pull reads only the tail [from, n) while the sender writes the head. */
struct pull {
    struct ferry_request *r;  /* sender (world_peer), envelope (status) and size (msg_bytes) are in r */
    uint64_t addr, sreq;      /* sender's buffer and request cookie */
    size_t n, done;           /* pull up to n bytes (capped at the receive size); position reached */
    size_t end;               /* split: what the sender streams if this pull fails ([done, end); 0: to the end) */
    int split;                /* split single copy: pieces count into r->done_bytes */
    struct pull *next;
};
static struct pull *pulls;

int ferry_proto_pulling(void)
{
    return pulls != NULL;
}

/* One piece of p; returns 1 when p is finished (done, or fallen back to the
 * copy path: nothing is lost, the sender then streams what is missing --
 * the whole message, or a split's tail from where the pull stopped). */
static int pull_step(struct pull *p)
{
    struct ferry_request *r = p->r;
    int peer = r->world_peer;
    const struct ferry_transport *tr = ferry_rt.peers[peer].tr;
    char *dst = (char *)ferry_dt_contig_ptr(r->dt, r->buf);
    size_t len = FERRY_MIN((size_t)ferry_cfg.cma_chunk, p->n - p->done);
    int rc = len ? tr->pull(peer, dst + p->done, p->addr + p->done, len) : 0;
    if (rc) {
        ferry_log(1, "single copy from rank %d failed (%s); using the copy path with that rank from now on",
                  peer, strerror(-rc));
        tr->disable_pull(peer);
        send_cts(peer, p->sreq, r, p->split ? p->done : 0, p->split ? p->end : 0, 0, 0);
        return 1;
    }
    p->done += len;
    if (p->split)
        r->done_bytes += len;
    if (p->done < p->n)
        return 0;
    send_ctrl(peer, FERRY_PKT_FIN, p->sreq, 0);
    if (p->split)
        rndv_landed(r, 0);
    else
        finish_recv(r, r->status.MPI_SOURCE, r->status.MPI_TAG, r->msg_bytes);
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

/* Pull [from, n) of the message r matched (r->world_peer, r->status and
 * r->msg_bytes set) from the sender's buffer at addr; end: see struct pull. */
static void start_pull(struct ferry_request *r, uint64_t addr, uint64_t sreq, size_t from, size_t n, size_t end,
                       int split)
{
    struct pull *p = ferry_xmalloc(sizeof *p);
    *p = (struct pull){.r = r, .addr = addr, .sreq = sreq, .n = n, .done = from, .end = end, .split = split};
    /* the first piece now (a message of one piece completes here) */
    if (pull_step(p)) {
        free(p);
    } else {
        p->next = pulls;
        pulls = p;
    }
}

/* Ranks outnumber CPUs: up to 2 ranks per CPU the rings beat the receiver's
 * lone pull (the sender's copy-in and the receiver's copy-out overlap on two
 * CPUs); beyond, single copy (a pipeline needs both ends on a CPU at once).
 * Not when large messages go both ways between the pair (an alltoall, an
 * exchange): then every rank has copies of its own to make, the CPUs are
 * busy anyway, and the rings' two copies of each byte cost twice the work of
 * one. Nor when the sender sends to several receivers at once (fanout: a
 * scatter's root): through the rings it would copy every receiver's bytes
 * in alone, while pulling receivers copy on both CPUs and leave its CPU to
 * them (4 ranks on 2 CPUs, scatter 256 KiB, 8 interleaved runs: 47 against
 * 72 us; Open MPI 54). FERRY_RNDV_OVERSUB; hand-set thresholds win. */
static int oversub_takes_rings(int both, int fanout)
{
    if (!ferry_rt.oversubscribed || ferry_ladder_forced())
        return 0;
    if (ferry_cfg.rndv_oversub >= 0)
        return (int)ferry_cfg.rndv_oversub;
    /* on one CPU nothing overlaps: the rings' two copies against one (2 ranks
     * under taskset on one CPU, one-way 1-4 MiB, 3 interleaved runs: 4.7-6.3
     * against 15.4-19.6 GB/s) */
    return !both && !fanout && ferry_rt.local_cpus >= 2 && ferry_rt.local_size <= 2 * ferry_rt.local_cpus;
}

/* A rendezvous message this rank sent itself: the sending request and its
 * buffer are in this process, so the receive copies the data now and both
 * requests complete here (the sender as on FIN), as MPICH does with a
 * message to self. Through the ring to itself, the CTS and the DATA would
 * each wait for a later progress pass: a receive tested once would stay
 * incomplete, and mpi4py's pkl5 tests free the buffer of such a request
 * after one Test and so had it written after it was freed. */
static void self_rndv(struct ferry_request *r, uint64_t sreq, size_t bytes)
{
    struct ferry_request *s = (struct ferry_request *)(uintptr_t)sreq;
    ferry_dt_copy(s->buf, s->count, s->dt, r->buf, r->count, r->dt);
    finish_recv(r, r->status.MPI_SOURCE, r->status.MPI_TAG, bytes);
    struct ferry_pkt fin;
    memset(&fin, 0, sizeof fin);
    fin.type = FERRY_PKT_FIN;
    fin.sreq = sreq;
    ferry_proto_on_fin(ferry_rt.self, &fin);
}

/* The receive r matched a rendezvous message announced by an RTS. */
static void start_rndv(struct ferry_request *r, int src_world, int src, int tag, size_t bytes, uint64_t sreq,
                       uint64_t addr, int fanout)
{
    const struct ferry_transport *tr = ferry_rt.peers[src_world].tr;
    r->world_peer = src_world;
    r->msg_bytes = bytes;
    r->done_bytes = 0;
    r->status.MPI_SOURCE = src;
    r->status.MPI_TAG = tag;
    if (src_world == ferry_rt.self) {
        self_rndv(r, sreq, bytes);
        return;
    }
    if (bytes == 0) {
        send_ctrl(src_world, FERRY_PKT_FIN, sreq, 0);
        finish_recv(r, src, tag, 0);
        return;
    }
    /* single copy where the ladder's cost model says it beats the pipelined
     * copy through the rings (ladder.h), both buffers are contiguous and the
     * peer allows it */
    enum ferry_mech m = FERRY_MECH_PIPELINE;
    if (addr && tr->pull && tr->can_pull(src_world) && ferry_dt_is_contig(r->dt, r->count)) {
        m = ferry_ladder_rndv(bytes);
        /* A reduction reads the data right after (r->consume): pulled whole,
         * at any size (the sender may have chosen rendezvous for that,
         * FERRY_COLL_PULL_MIN), and never split, even with hand-set
         * thresholds: the sender's half would first take the buffer's lines
         * from this rank's cache, then hand them back (2-rank reduce,
         * binomial, 64 KiB: 6.0-7.1 us pulled against 10.0-10.5 split;
         * 256 KiB 20-22 against 31) */
        if (r->consume && (m == FERRY_MECH_SPLIT || !ferry_ladder_forced()))
            m = FERRY_MECH_CMA;
    }
    /* truncated: the receiver alone decides what lands. Ranks outnumber
     * CPUs: the sender's half would wait until the sender is scheduled (it
     * may sleep) */
    if (m == FERRY_MECH_SPLIT && (bytes > r->bytes || ferry_rt.oversubscribed || !tr->push))
        m = FERRY_MECH_CMA;   /* (a transport that pulls but cannot push: the sender has no half) */
    /* This rank's own rendezvous sends to the peer are in flight (a
     * bidirectional stream, an exchange): the peer's core is busy pulling
     * them, so its half of a split copy buys no parallelism, only a second
     * system call and a PUSHED packet per message; pulled single copy.
     * Bi-directional bandwidth, 4 interleaved runs: 32 KiB 21-28 GB/s
     * pulled against 16-24 split, 512 KiB 45-51 against 35-45. A ping-pong
     * keeps split: there the sender waits with nothing else to copy. */
    if (m == FERRY_MECH_SPLIT && ferry_proto_rndv_sends_to(src_world) > 0 && !ferry_ladder_forced())
        m = FERRY_MECH_CMA;
    /* Nor when the sender's core has other copies to make (fanout: a
     * scatter's root, which sends to several receivers or copies its own
     * block meanwhile): its half would come after them (2 ranks, scatter
     * 1 MiB, 5 interleaved runs: 135 us split) */
    if (m == FERRY_MECH_SPLIT && fanout && !ferry_ladder_forced())
        m = FERRY_MECH_CMA;
    int both = ferry_proto_rndv_both_ways(src_world);
    if (m == FERRY_MECH_CMA && oversub_takes_rings(both, fanout)) {
        static int logged;
        if (!logged++)
            ferry_log(1, "rendezvous with %d local ranks on %d CPUs: through the rings (FERRY_RNDV_OVERSUB)",
                      ferry_rt.local_size, ferry_rt.local_cpus);
        m = FERRY_MECH_PIPELINE;
    } else if (m == FERRY_MECH_CMA && ferry_rt.oversubscribed && (both || fanout) &&
               FERRY_UNLIKELY(ferry_verbose >= 1)) {
        static int logged[2];   /* each reason once: both ways (an alltoall's sends fan out too), fan-out */
        if (!logged[!both]++)
            ferry_log(1, both ? "rendezvous both ways with rank %d while ranks outnumber CPUs: single copy"
                              : "rendezvous from rank %d, which sends to several ranks at once, while ranks "
                                "outnumber CPUs: single copy",
                      src_world);
    }
    /* Large messages both ways between the pair (an exchange, a
     * bidirectional stream, a ping-pong; see ferry_proto_rndv_both_ways):
     * single copy or both directions through the rings, each core copying
     * into its outgoing ring and out of its incoming one from cache. Which
     * is faster changes with the VM's phases (rndv_adapt.h), so by default
     * it is measured; FERRY_RNDV_BOTH_WAYS=1 always takes the rings, 0 never.
     * Never oversubscribed: the pipeline waits for the peer to be scheduled. */
    if (m != FERRY_MECH_PIPELINE && !ferry_rt.oversubscribed && !ferry_ladder_forced()) {
        if (ferry_cfg.rndv_both_ways < 0) {
            m = ferry_rndv_adapt_choose(r, bytes, m, both);
        } else if (both && ferry_cfg.rndv_both_ways) {
            static int logged;
            if (!logged++)
                ferry_log(1, "rendezvous both ways with rank %d: through the rings (FERRY_RNDV_BOTH_WAYS)",
                          src_world);
            m = FERRY_MECH_PIPELINE;
        }
    }
    switch (m) {
    case FERRY_MECH_SPLIT: {
        /* the sender writes the head [0, h), this rank pulls the tail; h on a
         * cache line so neither copy shares a line with the other */
        size_t h = (size_t)((double)bytes * (double)ferry_cfg.split_share / 100.0) & ~(size_t)63;
        r->split_left = 1;   /* PUSHED to come */
        send_cts(src_world, sreq, r, h, 0, 1, (uint64_t)(uintptr_t)ferry_dt_contig_ptr(r->dt, r->buf));
        start_pull(r, addr, sreq, h, bytes, 0, 1);
        return;
    }
    case FERRY_MECH_CMA:
        start_pull(r, addr, sreq, 0, FERRY_MIN(bytes, r->bytes), 0, 0);
        return;
    default:
        send_cts(src_world, sreq, r, 0, 0, 0, 0);
        return;
    }
}

static void recv_from_unexp(struct ferry_request *r, struct ferry_unexp *u)
{
    if (u->rndv) {
        start_rndv(r, u->world_src, u->src, u->tag, u->bytes, u->sreq, u->addr, u->fanout);
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

/* Where an EAGER packet's message is: inside the header, or after it. */
static const void *eager_data(const struct ferry_pkt *pkt)
{
    return (pkt->flags & FERRY_PKT_FLAG_INLINE) ? (const void *)pkt->inline_data : (const void *)(pkt + 1);
}

/* Copy the first n bytes of an EAGER packet's message to buf: unpacked as
 * dt describes, or as plain bytes when dt is NULL. A streamed packet
 * (FERRY_PKT_FLAG_STREAM, send.c's eager_write) is copied piece by piece
 * behind its sender: the acquire load of `offset` pairs with the sender's
 * release store, so the bytes below it are written. Returns only when the
 * whole payload is written, n smaller or not: the caller then hands the
 * packet's slot back to the sender. */
static void eager_copy(const struct ferry_pkt *pkt, struct ferry_datatype *dt, void *buf, size_t n)
{
    const char *src = eager_data(pkt);
    size_t done = 0, total = (size_t)pkt->msg_bytes;
    if (!(pkt->flags & FERRY_PKT_FLAG_STREAM))
        done = total;
    size_t copied = 0;
    for (;;) {
        size_t upto = FERRY_MIN(done, n);
        if (upto > copied) {
            if (dt)
                ferry_dt_unpack(dt, buf, copied, src + copied, upto - copied);
            else
                memcpy((char *)buf + copied, src + copied, upto - copied);
            copied = upto;
        }
        if (done >= total)   /* (never above total from a sound sender; no endless wait if it were) */
            return;
        size_t now;
        while ((now = (size_t)__atomic_load_n(&pkt->offset, __ATOMIC_ACQUIRE)) == done)
            cpu_relax();
        done = now;
    }
}

/* Polls of the source's ring before recv_now gives up and leaves the wait to
 * the full path (a few microseconds: a ping-pong reply is back well within). */
#define RECV_NOW_POLLS 512

/* The blocking receive's fast path. Nothing else to match against (both
 * queues empty), so the next packet from the source is the oldest message
 * it has sent us that nobody has taken: if it is eager and this receive
 * accepts it, it is this receive's message (MPI's ordering rule). Saves the
 * request, the posted queue and the full progress loop: 0-byte ping-pong
 * one way 0.128 -> 0.113 us (medians) on the development VM. Only with a
 * CPU of our own (oversubscribed, spinning on one ring keeps the CPU from
 * the sender), one thread in MPI, and no queued sends or pulls that polling
 * only this ring would hold up. */
int ferry_proto_recv_now(struct ferry_comm *c, void *buf, size_t count, struct ferry_datatype *dt, int src, int tag,
                         MPI_Status *status)
{
    if (src < 0 || ferry_rt.oversubscribed || ferry_biglock_on || pulls || ferry_proto_sends_queued() ||
        !ferry_match_idle())
        return 0;
    int peer = ferry_comm_world_rank(c, src);
    const struct ferry_transport *tr = ferry_rt.peers[peer].tr;
    if (!tr->peek)
        return 0;
    const struct ferry_pkt *pkt;
    for (int i = 0; !(pkt = tr->peek(peer)); i++) {
        if (i == RECV_NOW_POLLS)
            return 0;
        cpu_relax();
    }
    size_t cap = ferry_dt_bytes(dt, count);
    if (pkt->type != FERRY_PKT_EAGER || !ferry_match_ok(pkt->ctx, pkt->src, pkt->tag, c->ctx, src, tag) ||
        pkt->msg_bytes > cap || partial_element(dt, (size_t)pkt->msg_bytes, cap))
        return 0;   /* poll() will handle it (a truncation or type mismatch is reported there) */
    eager_copy(pkt, dt, buf, (size_t)pkt->msg_bytes);
    if (status != MPI_STATUS_IGNORE)   /* MPI_ERROR stays as the user had it (ferry_request_status_out) */
        ferry_status_set(status, pkt->src, pkt->tag, status->MPI_ERROR, (size_t)pkt->msg_bytes, 0);
    tr->consume(peer);
    return 1;
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
    struct ferry_request *r = ferry_posted_take(pkt->ctx, pkt->src, pkt->tag);
    if (r) {
        eager_copy(pkt, r->dt, r->buf, FERRY_MIN((size_t)pkt->msg_bytes, r->bytes));
        finish_recv(r, pkt->src, pkt->tag, pkt->msg_bytes);
        return;
    }
    struct ferry_unexp *u = ferry_unexp_new((size_t)pkt->msg_bytes);
    u->ctx = pkt->ctx;
    u->src = pkt->src;
    u->tag = pkt->tag;
    u->world_src = src;
    u->msg_id = pkt->msg_id;
    u->bytes = pkt->msg_bytes;
    eager_copy(pkt, NULL, u->data, u->bytes);
    ferry_unexp_add(u);
}

static void on_rts(int src, const struct ferry_pkt *pkt)
{
    struct ferry_request *r = ferry_posted_take(pkt->ctx, pkt->src, pkt->tag);
    if (r) {
        start_rndv(r, src, pkt->src, pkt->tag, pkt->msg_bytes, pkt->sreq, pkt->addr,
                   !!(pkt->flags & FERRY_PKT_FLAG_FANOUT));
        return;
    }
    struct ferry_unexp *u = ferry_unexp_new(0);
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
    u->fanout = (pkt->flags & FERRY_PKT_FLAG_FANOUT) != 0;
    ferry_unexp_add(u);
}

static void on_data(int src, const struct ferry_pkt *pkt)
{
    (void)src;
    struct ferry_request *r = (struct ferry_request *)(uintptr_t)pkt->rreq;
    size_t off = pkt->offset, n = pkt->payload;
    if (off < r->bytes)
        ferry_dt_unpack(r->dt, r->buf, off, pkt + 1, FERRY_MIN(n, r->bytes - off));
    rndv_landed(r, n);
}

/* Split single copy: the sender's share of the message is in our buffer,
 * or it declined to copy it. */
static void on_pushed(int src, const struct ferry_pkt *pkt)
{
    (void)src;   /* the sender is r->world_peer */
    struct ferry_request *r = (struct ferry_request *)(uintptr_t)pkt->rreq;
    r->split_left = 0;
    if (pkt->flags & FERRY_PKT_FLAG_DECLINED) {
        /* the sender's core is busy: pull its share [0, msg_bytes) too (a
         * second pull, with its own FIN -- the sender waits for both) */
        start_pull(r, pkt->addr, pkt->sreq, 0, pkt->msg_bytes, pkt->msg_bytes, 1);
        return;
    }
    rndv_landed(r, pkt->offset);
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
    [FERRY_PKT_PUSHED] = on_pushed,
};

void ferry_proto_receive(int src, const struct ferry_pkt *pkt)
{
    if (FERRY_UNLIKELY(pkt->type == 0 || pkt->type >= FERRY_PKT_TYPE_COUNT))
        ferry_fatal("corrupt packet type %u from rank %d", pkt->type, src);
    handlers[pkt->type](src, pkt);
}
