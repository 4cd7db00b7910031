/* Rendezvous both ways: single copy or the pipeline, by measurement (see
 * rndv_adapt.h for why).
 *
 * What is timed is a period: it opens when the receiver matches an RTS
 * from the peer while no period with that peer is open, takes in the
 * receives of the same size class matched while it is open (at most
 * PERIOD_MAX, all with the period's mechanism), and ends when they are all
 * complete and so are this rank's rendezvous sends to the peer (an
 * exchange: the caller waits for both). Its sample is the period's time
 * per byte received, which is what the application sees: for a ping-pong
 * or an exchange a period is one message, for a windowed stream it is the
 * window. Timing only the first message of a window, as before, made
 * single copy look twice as slow as it is: its pulls of the whole window
 * share the copy loop, so the first one ends late, while the rings carry
 * messages in order (bi-directional bandwidth 2-4 MiB 15 GB/s through the
 * rings against 38-47 GB/s with single copy).
 * Per peer and size class (powers of two) the cost per byte of each
 * mechanism is kept; the cheaper one is used, and the other is tried again
 * once it has gone unmeasured for `gap` seconds. A retry that confirms the
 * loser lost by more than 25% doubles the gap (up to GAP_MAX), which bounds
 * the price of retrying a mechanism that is far slower in the current
 * phase to a few percent of the time spent in such messages.
 *
 * A mechanism is (re)measured with a burst of at least BURST messages in
 * at least BLOCK_PERIODS periods, and the cheapest period counts: the
 * first message after a switch is often cold (the rings' or the target's
 * lines elsewhere; a 128 KiB exchange through the rings measured 474
 * ns/KiB cold, against 287 for single copy and about 55 for the rings
 * warm), and one cold sample per retry kept the faster mechanism from ever
 * winning; the first window of fresh buffers is cold as a whole.
 * The mechanism in use is judged the same way: the cheapest period of each
 * run of RUN messages becomes its cost. A retry's burst of windows of large
 * messages can take longer than the gap itself (a window of 64 4 MiB
 * messages through the rings is 15 ms), so the gap is also at least
 * GAP_PER_BURST times the last retry's length, which keeps the price of
 * retries a few percent whatever the messages' size. Noise only ever
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
#define BURST 4        /* timed messages per (re)measurement; the cheapest period counts */
#define RUN 8          /* timed messages of the mechanism in use per update of its cost; ditto */
#define BLOCK_PERIODS 2  /* ... and at least this many periods: a window's worth of cold first touches
                          * (pulled single copy of a fresh 4 MiB window: 4000 ns/KiB, warm 120) */
#define LOSS_MARGIN 1.25 /* a retry that loses by more than this doubles the gap */
#define GAP_PER_BURST 16  /* the gap is at least this many times the last retry's length */
#define PERIOD_MAX 64  /* receives timed together at most (a window of ferry-bench's and OSU's bibw) */
#define TIMED 1        /* rndv_counted of a receive: it belongs to the open period */

struct adapt_class {
    double cost[2];   /* seconds per byte, SINGLE and PIPE; valid once when[] is set */
    double when[2];   /* when each was last measured (0: never) */
    double first;     /* when single copy was first measured */
    double gap;       /* current retry gap for the mechanism not in use */
    int last_best;    /* the cheaper one at the last measurement */
    int in_burst;     /* the timed messages (re)measure burst_mech, not the one in use */
    int burst_mech;
    double burst_t0;  /* when the burst began */
    int block_n;      /* messages in the current block (a burst of BURST, else a run of RUN) ... */
    int block_periods; /* ... its periods ... */
    double block_min; /* ... and the cheapest of them */
    int reported;     /* the comparison was logged */
};

struct adapt_peer {
    int open;                      /* a period is being timed */
    int members;                   /* its receives in progress */
    int joined;                    /* its receives so far */
    double t0;                     /* when it opened */
    size_t bytes;                  /* its receives' bytes */
    int which, cls;                /* its mechanism and size class */
    int exchange;                  /* its receives are done; the sample ends when this
                                    * rank's rendezvous sends to the peer are done too */
    int reports;                   /* comparisons logged (FERRY_VERBOSE), at most 8 */
    struct adapt_class cls_state[CLASSES];
};

static struct adapt_peer **peers;   /* per world rank, allocated on first use */

void ferry_rndv_adapt_init(void)
{
    peers = ferry_xcalloc((size_t)ferry_rt.npeers, sizeof *peers);   /* indexed by uid */
}

void ferry_rndv_adapt_finalize(void)
{
    if (!peers)
        return;
    for (int i = 0; i < ferry_rt.npeers; i++)
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

static enum ferry_mech mech(int which, enum ferry_mech single)
{
    return which == PIPE ? FERRY_MECH_PIPELINE : single;
}

enum ferry_mech ferry_rndv_adapt_choose(struct ferry_request *r, size_t bytes, enum ferry_mech single, int both)
{
    if (!both)
        return single;
    int peer = r->world_peer;
    struct adapt_peer *p = peers[peer];
    if (!p) {
        p = peers[peer] = ferry_xcalloc(1, sizeof *p);
        for (int c = 0; c < CLASSES; c++)
            p->cls_state[c].gap = GAP_MIN;
    }
    int cls = size_class(bytes);
    if (p->open) {
        if (cls == p->cls && p->joined < PERIOD_MAX) {
            r->rndv_counted = TIMED;
            p->exchange = 0;   /* its end waits for this one now */
            p->members++;
            p->joined++;
            p->bytes += bytes;
            return mech(p->which, single);
        }
        /* not timed: the cheaper one (single copy until both were timed) */
        struct adapt_class *a = &p->cls_state[cls];
        return mech(a->when[SINGLE] && a->when[PIPE] && a->cost[PIPE] < a->cost[SINGLE] ? PIPE : SINGLE, single);
    }
    struct adapt_class *a = &p->cls_state[cls];
    int best = a->when[SINGLE] && a->when[PIPE] && a->cost[PIPE] < a->cost[SINGLE] ? PIPE : SINGLE;
    double t = ferry_now();
    if (!a->in_burst) {
        /* start a burst: single copy (the ladder's choice) until it was
         * measured, then the loser once its gap is over -- the pipeline
         * too, counting from single copy's first measurement, so that a
         * short run of such messages never pays for trying the rings
         * (2 of a quick benchmark's 12 windows of 256 KiB both ways went
         * through the rings at half the speed) */
        int m = -1;
        if (!a->when[SINGLE])
            m = SINGLE;
        else if (t - (a->when[!best] ? a->when[!best] : a->first) > a->gap)
            m = !best;
        if (m >= 0) {
            a->in_burst = 1;
            a->burst_mech = m;
            a->burst_t0 = t;
            a->block_n = a->block_periods = 0;   /* a block of its own: a partial run of the one in use is dropped */
        }
    }
    r->rndv_counted = TIMED;
    p->open = 1;
    p->members = p->joined = 1;
    p->t0 = t;
    p->bytes = bytes;
    p->which = a->in_burst ? a->burst_mech : best;
    p->cls = cls;
    return mech(p->which, single);
}

/* The period with `peer` is over at time t: account its sample. */
static void sample_done(struct adapt_peer *p, int peer, double t)
{
    p->open = 0;
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
    a->block_n += p->joined;
    a->block_periods++;
    if (a->block_n < (a->in_burst ? BURST : RUN) || a->block_periods < BLOCK_PERIODS)
        return;
    a->block_n = a->block_periods = 0;
    int had = a->when[w] != 0;
    if (!a->first)
        a->first = t;
    a->cost[w] = a->block_min;
    a->when[w] = t;
    if (a->in_burst) {
        a->in_burst = 0;
        if (had && a->when[!w]) {
            if (a->cost[w] > LOSS_MARGIN * a->cost[!w])
                a->gap = a->gap * 2 < GAP_MAX ? a->gap * 2 : GAP_MAX;
            else
                a->gap = GAP_MIN;
        }
        if (a->gap < GAP_PER_BURST * (t - a->burst_t0))
            a->gap = GAP_PER_BURST * (t - a->burst_t0);
    }
    /* report the first comparison and the changes of the winner (a few per peer) */
    int best = a->cost[PIPE] < a->cost[SINGLE] ? PIPE : SINGLE;
    if (a->when[!w] && (!a->reported || best != a->last_best) && p->reports < 8) {
        p->reports++;
        a->reported = 1;
        static const char *const what[2] = {"single copy", "the rings"};
        ferry_log(1, "rendezvous both ways with rank %d at %zu bytes: %s (%.0f ns/KiB) rather than %s (%.0f ns/KiB)",
                  peer, p->bytes / (size_t)p->joined, what[best], a->cost[best] * 1024e9, what[!best],
                  a->cost[!best] * 1024e9);
    }
    a->last_best = best;
}

void ferry_rndv_adapt_done(struct ferry_request *r)
{
    r->rndv_counted = 0;
    int peer = r->world_peer;
    struct adapt_peer *p = peers[peer];
    if (--p->members > 0)
        return;
    /* The receives are done, but an exchange is not until this rank's
     * rendezvous sends to the peer are done too: with single copy those
     * wait for the peer's own pull, with the rings both directions move
     * together; the sample covers both, as the caller waits for both.
     * Meanwhile the period still takes in receives: a pulled message is
     * often complete before the next of its window is matched. */
    if (ferry_proto_rndv_sends_to(peer) > 0) {
        p->exchange = 1;
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
