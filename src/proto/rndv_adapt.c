/* Rendezvous both ways: single copy or the pipeline, by measurement (see
 * rndv_adapt.h for why).
 *
 * What is timed: from the moment the receiver matched the RTS (and chose)
 * to the receive's completion, or to that of this rank's rendezvous sends
 * to the same peer if those end later (an exchange), for a receive that
 * started while no other rendezvous receive from that peer was in
 * progress, so that the time is the message's own and not a queue's. In
 * an exchange or a ping-pong every message qualifies; in a windowed stream
 * the first of each window does.
 * Per peer and size class (powers of two) the cost per byte of each
 * mechanism is kept; the cheaper one is used, and the other is tried again
 * once it has gone unmeasured for `gap` seconds. A retry that confirms the
 * loser lost by more than 2x doubles the gap (up to GAP_MAX), which bounds
 * the price of retrying a mechanism that is far slower in the current
 * phase to a few percent of the time spent in such messages.
 *
 * A mechanism is (re)measured with a burst of BURST timed messages, and the
 * cheapest of them counts: the first message after a switch is often cold
 * (the rings' or the target's lines elsewhere; a 128 KiB exchange through
 * the rings measured 474 ns/KiB cold, against 287 for single copy and about
 * 55 for the rings warm), and one cold sample per retry kept the faster
 * mechanism from ever winning. The mechanism in use is judged the same way:
 * the cheapest of each run of RUN samples becomes its cost. Noise only ever
 * adds time (a descheduled peer, another core's traffic), so a minimum is the
 * fair estimate; a running mean for the one in use against a minimum for the
 * other made the choice flip to the slower one (a 32 KiB ping-pong's samples
 * ranged over 100-7500 ns/KiB, and 1 MiB exchanges took 111 us against 85
 * with the rings alone). */
#include "proto/rndv_adapt.h"
#include "core/config.h"
#include "core/request.h"
#include "core/runtime.h"
#include "core/util.h"
#include "proto/proto.h"
#include <stdlib.h>

enum { SINGLE, PIPE };
#define CLASS_MIN 15   /* 32 KiB: below, rendezvous messages share the first class */
#define CLASSES 12     /* up to 64 MiB; larger ones share the last class */
#define GAP_MIN 0.02   /* seconds a mechanism may go unmeasured before it is tried again */
#define GAP_MAX 0.64
#define BURST 4        /* timed messages per (re)measurement; the cheapest counts */
#define RUN 8          /* samples of the mechanism in use per update of its cost; the cheapest counts */

struct adapt_class {
    double cost[2];   /* seconds per byte, SINGLE and PIPE; valid once when[] is set */
    double when[2];   /* when each was last measured (0: never) */
    double gap;       /* current retry gap for the mechanism not in use */
    int last_best;    /* the cheaper one at the last measurement */
    int in_burst;     /* the timed messages (re)measure burst_mech, not the one in use */
    int burst_mech;
    int block_n;      /* samples in the current block (a burst of BURST, else a run of RUN) ... */
    double block_min; /* ... and the cheapest of them */
    int reported;     /* the comparison was logged */
};

struct adapt_peer {
    int inflight;                  /* counted rendezvous receives from this peer in progress */
    struct ferry_request *timed;   /* the receive being timed, if any */
    double t0;
    size_t bytes;
    int which, cls;
    int exchange;                  /* the timed receive is done; the sample ends when this
                                    * rank's rendezvous sends to the peer are done too */
    int reports;                   /* comparisons logged (FERRY_VERBOSE), at most 8 */
    struct adapt_class cls_state[CLASSES];
};

static struct adapt_peer **peers;   /* per world rank, allocated on first use */

void ferry_rndv_adapt_init(void)
{
    peers = ferry_xcalloc((size_t)ferry_rt.world_size, sizeof *peers);
}

void ferry_rndv_adapt_finalize(void)
{
    if (!peers)
        return;
    for (int i = 0; i < ferry_rt.world_size; i++)
        free(peers[i]);
    free(peers);
    peers = NULL;
}

static int size_class(size_t bytes)
{
    int c = 0;
    while (c < CLASSES - 1 && bytes >= ((size_t)1 << (CLASS_MIN + c + 1)))
        c++;
    return c;
}

enum ferry_mech ferry_rndv_adapt_choose(struct ferry_request *r, size_t bytes, enum ferry_mech single, int both)
{
    int peer = r->world_peer;
    struct adapt_peer *p = peers[peer];
    if (!p) {
        p = peers[peer] = ferry_xcalloc(1, sizeof *p);
        for (int c = 0; c < CLASSES; c++)
            p->cls_state[c].gap = GAP_MIN;
    }
    /* the receive being timed is counted too: none in progress means none timed */
    int isolated = p->inflight == 0 && !p->exchange;
    r->rndv_counted = 1;
    p->inflight++;
    if (!both)
        return single;
    int cls = size_class(bytes);
    struct adapt_class *a = &p->cls_state[cls];
    int measured = a->when[SINGLE] && a->when[PIPE];
    int best = measured && a->cost[PIPE] < a->cost[SINGLE] ? PIPE : SINGLE;
    if (!isolated)   /* not timed: the cheaper one (single copy until both were timed) */
        return best == PIPE ? FERRY_MECH_PIPELINE : single;
    double t = ferry_now();
    if (!a->in_burst) {
        /* start a burst: single copy (the ladder's choice) until it was
         * measured, then the pipeline, then the loser once its gap is over */
        int m = -1;
        if (!a->when[SINGLE])
            m = SINGLE;
        else if (!a->when[PIPE])
            m = PIPE;
        else if (t - a->when[!best] > a->gap)
            m = !best;
        if (m >= 0) {
            a->in_burst = 1;
            a->burst_mech = m;
            a->block_n = 0;   /* a block of its own: a partial run of the one in use is dropped */
        }
    }
    int pick = a->in_burst ? a->burst_mech : best;
    p->timed = r;
    p->t0 = t;
    p->bytes = bytes;
    p->which = pick;
    p->cls = cls;
    return pick == PIPE ? FERRY_MECH_PIPELINE : single;
}

/* The timed exchange with `peer` is over at time t: account its sample. */
static void sample_done(struct adapt_peer *p, int peer, double t)
{
    p->timed = NULL;
    p->exchange = 0;
    struct adapt_class *a = &p->cls_state[p->cls];
    int w = p->which;
    double cost = (t - p->t0) / (double)p->bytes;
    /* the sample belongs to the current block (a burst in progress is this
     * sample's: no other timed sample of the peer starts before this one
     * ends); the block's cheapest sample becomes w's cost when it is full,
     * replacing the old one, which says nothing about the current phase */
    if (!a->block_n || cost < a->block_min)
        a->block_min = cost;
    if (++a->block_n < (a->in_burst ? BURST : RUN))
        return;
    a->block_n = 0;
    int had = a->when[w] != 0;
    a->cost[w] = a->block_min;
    a->when[w] = t;
    if (a->in_burst) {
        a->in_burst = 0;
        if (had && a->when[!w]) {
            if (a->cost[w] > 2 * a->cost[!w])
                a->gap = a->gap * 2 < GAP_MAX ? a->gap * 2 : GAP_MAX;
            else
                a->gap = GAP_MIN;
        }
    }
    /* report the first comparison and the changes of the winner (a few per peer) */
    int best = a->cost[PIPE] < a->cost[SINGLE] ? PIPE : SINGLE;
    if (a->when[!w] && (!a->reported || best != a->last_best) && p->reports < 8) {
        p->reports++;
        a->reported = 1;
        static const char *const what[2] = {"single copy", "the rings"};
        ferry_log(1, "rendezvous both ways with rank %d at %zu bytes: %s (%.0f ns/KiB) rather than %s (%.0f ns/KiB)",
                  peer, p->bytes, what[best], a->cost[best] * 1024e9, what[!best], a->cost[!best] * 1024e9);
    }
    a->last_best = best;
}

void ferry_rndv_adapt_done(struct ferry_request *r)
{
    r->rndv_counted = 0;
    int peer = r->world_peer;
    struct adapt_peer *p = peers[peer];
    p->inflight--;
    if (p->timed != r)
        return;
    /* The receive is done, but an exchange is not until this rank's
     * rendezvous sends to the peer are done too: with single copy those
     * wait for the peer's own pull, with the rings both directions move
     * together; the sample covers both, as the caller waits for both. */
    if (ferry_proto_rndv_sends_to(peer) > 0) {
        p->exchange = 1;
        p->timed = NULL;
        return;
    }
    sample_done(p, peer, ferry_now());
}

void ferry_rndv_adapt_sends_done(int peer)
{
    struct adapt_peer *p = peers ? peers[peer] : NULL;
    if (p && p->exchange)
        sample_done(p, peer, ferry_now());
}
