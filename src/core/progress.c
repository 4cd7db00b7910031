#include "core/progress.h"
#include "core/biglock.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/request.h"
#include "core/util.h"
#include "proto/proto.h"
#include "transport/transport.h"
#include "transport/sock/sock.h"
#include <sched.h>

#define MAX_HOOKS 8
static ferry_progress_hook hooks[MAX_HOOKS];
static int nhooks;
int ferry_progress_unrung;

void ferry_progress_add_hook(ferry_progress_hook fn)
{
    for (int i = 0; i < nhooks; i++)
        if (hooks[i] == fn)
            return;
    if (nhooks < MAX_HOOKS)
        hooks[nhooks++] = fn;
}

int ferry_progress(void)
{
    int n = ferry_transport_shm.poll();
    /* connected to processes of other worlds: their sockets are polled on
     * every 8th call (a poll(2) costs more than the whole shared-memory
     * poll, which would otherwise pay it on every message of this world) */
    static unsigned sock_calls;
    if (FERRY_UNLIKELY(ferry_sock_active) && (sock_calls++ & 7) == 0)
        n += ferry_transport_sock.poll();
    n += ferry_proto_progress_sends();
    n += ferry_proto_progress_pulls();
    for (int i = 0; i < nhooks; i++)
        n += hooks[i]();
    return n;
}

int ferry_yielded_enough(double *since)
{
    if (ferry_cfg.oversub_yield_us <= 0)
        return 1;
    double now = ferry_now();
    if (*since == 0) {
        *since = now;
        return 0;
    }
    return now - *since >= (double)ferry_cfg.oversub_yield_us * 1e-6;
}

/* Oversubscribed, a waiting rank gives the CPU away quickly: a few polls
 * (FERRY_OVERSUB_SPIN), a few yields (FERRY_OVERSUB_YIELDS, then for
 * FERRY_OVERSUB_YIELD_US), then it sleeps until a peer rings it. */
void ferry_progress_wait(struct ferry_waiter *w)
{
    if (ferry_progress()) {
        w->idle = 0;
        w->yield_since = 0;
        return;
    }
    w->idle++;
    /* MPI_THREAD_MULTIPLE: let in the threads queued for the lock (what this
     * one waits for may be theirs to send) */
    ferry_biglock_yield();
    if (!ferry_rt.oversubscribed) {
        /* A CPU of our own: keep polling. After FERRY_SPIN empty polls, yield
         * once in a while in case something else wants this CPU; a yield
         * costs a system call, so not on every poll. */
        if (w->idle > ferry_cfg.spin && (w->idle & 255) == 0) {
            sched_yield();
        } else {
            /* A window of requests is a stream: each empty poll reads the
             * ring's head line, which the sender must take back to publish
             * its next packet; polling less often lets it publish several
             * per transfer (FERRY_STREAM_POLL_PAUSES) */
            long pauses = w->stream ? ferry_cfg.stream_poll_pauses : 1;
            for (long k = 0; k < pauses; k++)
                cpu_relax();
        }
        return;
    }
    /* nothing else on this CPU can publish what we wait for (a barrier whose
     * ranks here have all arrived): keep it, yielding now and then */
    if (ferry_progress_unrung == FERRY_UNRUNG_KEEP_CPU && !ferry_keep_cpu_yields(w->idle)) {
        cpu_relax();
        return;
    }
    /* a nonblocking shared-memory collective waits for flags that ranks
     * sharing our CPUs publish: polling longer only delays them (4 polls:
     * about a quarter of the nonblocking collectives' wait time at 4 ranks on
     * 2 CPUs on the development VM) */
    long spin = ferry_progress_unrung ? FERRY_MIN(ferry_cfg.oversub_spin, 4) : ferry_cfg.oversub_spin;
    /* A wait for one peer that last began a wait on our CPU: it cannot answer
     * before we give the CPU up, so polling only delays it. Ranks migrate, so
     * this is checked once per wait. 4 ranks bound 2 per core, multi-pair
     * latency 0-256 B: 1.4-1.6 us against 2.8-3.2 with the polls. */
    if (w->idle == 1 && ferry_transport_shm.shares_cpu)
        w->same_cpu = ferry_transport_shm.shares_cpu(w->peer_plus1 - 1);
    if (w->same_cpu)
        spin = 0;
    if (w->idle <= spin)
        return;
    /* queued sends wait for ring space and nonblocking shared-memory
     * collectives for flags, which nobody rings for: just yield */
    if (w->idle <= spin + ferry_cfg.oversub_yields || ferry_progress_unrung ||
        ferry_proto_sends_queued() || !ferry_yielded_enough(&w->yield_since))
        sched_yield();
    else if (ferry_sock_active)
        ferry_transport_sock.sleep();   /* a doorbell does not ring for socket data */
    else if (ferry_biglock_on) {
        if (!ferry_biglock_sleep())
            sched_yield();
    } else
        ferry_transport_shm.sleep();
}

void ferry_request_wait(struct ferry_request *r)
{
    ferry_request_wait_batch(r, 1);
}

/* More than this many requests waited for together make a stream. */
#define STREAM_REQUESTS 4

void ferry_request_wait_batch(struct ferry_request *r, int pending)
{
    struct ferry_waiter w = {.stream = pending > STREAM_REQUESTS};
    if (r->kind == FERRY_REQ_SEND && r->peer >= 0)
        w.peer_plus1 = r->world_peer + 1;
    else if (r->kind == FERRY_REQ_RECV && r->peer >= 0 && r->comm)
        w.peer_plus1 = ferry_comm_world_rank(r->comm, r->peer) + 1;
    while (!r->complete)
        ferry_progress_wait(&w);
}
