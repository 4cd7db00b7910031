/* The schedule engine (see sched.h). */
#include "coll/sched.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/op.h"
#include "core/progress.h"
#include "core/request.h"
#include "core/runtime.h"
#include "core/util.h"
#include "proto/proto.h"
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define TAG_SEQ_BITS 27
#define TAG_SEQ_MASK ((1 << TAG_SEQ_BITS) - 1)

static struct ferry_sched *running;   /* started, not finished */
static int hook_on;

struct ferry_datatype *sched_byte(void)
{
    static struct ferry_datatype *byte;
    if (!byte)
        byte = ferry_datatype_get(MPI_BYTE);
    return byte;
}

/* Finished schedules kept with their step and buffer arrays: a
 * nonblocking collective of a few bytes otherwise spent a fifth of its time
 * in malloc and free. */
enum { POOL_MAX = 8 };
static struct ferry_sched *pool;   /* linked through next */
static int pooled;

/* Nonblocking collectives run in an order of their own (sched.h), and so do
 * agreements (MPIX_Comm_agree / iagree), as in ULFM: each has its own
 * sequence and a tag bit that no other tag has (the spaces use the two bits
 * above the sequence). */
#define TAG_NBC (1 << 29)
#define TAG_AGREE (1 << 30)
_Static_assert(SPACE_COUNT <= 4 && (3 << TAG_SEQ_BITS) < TAG_NBC, "space bits stay below TAG_NBC");

static struct ferry_sched *sched_make(struct ferry_comm *c, int tag);

struct ferry_sched *sched_new(struct ferry_comm *c, int nb)
{
    if (!nb)
        return sched_make(c, (int)(c->coll_seq++ & TAG_SEQ_MASK));
    struct ferry_sched *s = sched_make(c, (int)(c->nbc_seq++ & TAG_SEQ_MASK) | TAG_NBC);
    s->nb = 1;
    return s;
}

struct ferry_sched *sched_new_agree(struct ferry_comm *c)
{
    return sched_make(c, (int)(c->agree_seq++ & TAG_SEQ_MASK) | TAG_AGREE);
}

static struct ferry_sched *sched_make(struct ferry_comm *c, int tag)
{
    struct ferry_sched *s = pool;
    struct sched_step *steps = NULL;
    void **mem = NULL;
    int cap = 0, memcap = 0;
    if (s) {
        pool = s->next;
        pooled--;
        steps = s->steps, cap = s->cap, mem = s->mem, memcap = s->memcap;
    } else {
        s = ferry_xmalloc(sizeof *s);
    }
    memset(s, 0, offsetof(struct ferry_sched, arena));
    s->steps = steps, s->cap = cap, s->mem = mem, s->memcap = memcap;
    s->comm = c;
    c->refs++;
    s->sub[SPACE_MAIN] = c;
    s->tag = tag;
    s->space = SPACE_MAIN;
    s->rank = c->rank;
    s->size = ferry_comm_peer_count(c);
    s->send_peer = -1;
    return s;
}

void sched_set_op(struct ferry_sched *s, struct ferry_op *op)
{
    ferry_op_retain(op);
    s->op = op;
}

void sched_use(struct ferry_sched *s, int sp)
{
    struct ferry_comm *c = s->sub[sp];
    s->space = sp;
    s->rank = c->rank;
    s->size = sp == SPACE_MAIN ? ferry_comm_peer_count(c) : c->size;
}

void sched_sub(struct ferry_sched *s, int sp, int n, const int *world_ranks)
{
    if (s->sub[sp])
        ferry_comm_release(s->sub[sp]);
    if (sp == SPACE_LOCAL && s->comm->local_comm) {
        /* the intercommunicator's own intracommunicator over its local group */
        s->sub[sp] = s->comm->local_comm;
        s->sub[sp]->refs++;
        return;
    }
    struct ferry_group *g;
    if (sp == SPACE_LOCAL) {
        g = s->comm->group;
        g->refs++;
    } else {
        g = ferry_group_new(n, world_ranks);
    }
    s->sub[sp] = ferry_comm_new(g, s->comm->ctx, MPI_ERRORS_RETURN);
}

static void free_sched(struct ferry_sched *s)
{
    for (int i = 0; i < s->nsteps; i++) {
        if (s->steps[i].at)
            ferry_dt_release(s->steps[i].at);
        if (s->steps[i].bt)
            ferry_dt_release(s->steps[i].bt);
    }
    for (int i = 0; i < s->nmem; i++)
        free(s->mem[i]);
    for (int i = SPACE_MAIN + 1; i < SPACE_COUNT; i++)
        if (s->sub[i])
            ferry_comm_release(s->sub[i]);
    if (s->op)
        ferry_op_release(s->op);
    ferry_comm_release(s->comm);
    if (pooled < POOL_MAX) {
        s->next = pool;
        pool = s;
        pooled++;
        return;
    }
    free(s->mem);
    free(s->steps);
    free(s);
}

void sched_discard(struct ferry_sched *s)
{
    free_sched(s);
}

void *sched_alloc(struct ferry_sched *s, size_t bytes)
{
    size_t at = (s->arena_used + 15) & ~(size_t)15;
    if (bytes <= sizeof s->arena - at) {
        s->arena_used = at + bytes;
        return s->arena + at;
    }
    if (s->nmem == s->memcap) {
        s->memcap = s->memcap ? 2 * s->memcap : 4;
        s->mem = ferry_xrealloc(s->mem, (size_t)s->memcap * sizeof *s->mem);
    }
    void *p = ferry_xmalloc(bytes ? bytes : 1);
    s->mem[s->nmem++] = p;
    return p;
}

void *sched_tmp(struct ferry_sched *s, struct ferry_datatype *dt, size_t n)
{
    if (n == 0)
        return sched_alloc(s, 0);
    /* element i's data lies in [i * ext + true_lb, + true_extent); reductions
     * on pair types may also touch [i * ext, (i + 1) * ext) */
    MPI_Aint ext = dt->extent > 0 ? dt->extent : 0;
    MPI_Aint lo = FERRY_MIN(dt->true_lb, 0);
    MPI_Aint hi = FERRY_MAX(ext * (MPI_Aint)(n - 1) + dt->true_lb + dt->true_extent, ext * (MPI_Aint)n);
    return (char *)sched_alloc(s, (size_t)(hi - lo)) - lo;
}

static struct sched_step *add(struct ferry_sched *s, int kind)
{
    if (s->nsteps == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->steps = ferry_xrealloc(s->steps, (size_t)s->cap * sizeof *s->steps);
    }
    struct sched_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    st->space = (uint8_t)s->space;
    return st;
}

/* Steps hold references on their datatypes: the application may free a
 * type while a nonblocking collective still uses it. */
static struct ferry_datatype *ref(struct ferry_datatype *dt)
{
    ferry_dt_retain(dt);
    return dt;
}

void sched_send(struct ferry_sched *s, const void *buf, size_t count, struct ferry_datatype *dt, int peer)
{
    struct sched_step *st = add(s, ST_SEND);
    st->a = buf;
    st->an = count;
    st->at = ref(dt);
    st->peer = peer;
    if (s->send_peer < 0)
        s->send_space = s->space, s->send_peer = peer;
    else if (peer != s->send_peer || s->space != s->send_space)
        s->fanout = 1;
}

void sched_recv(struct ferry_sched *s, void *buf, size_t count, struct ferry_datatype *dt, int peer)
{
    struct sched_step *st = add(s, ST_RECV);
    st->a = buf;
    st->an = count;
    st->at = ref(dt);
    st->peer = peer;
}

void sched_send_exact(struct ferry_sched *s, const void *buf, size_t count, struct ferry_datatype *dt, int peer)
{
    sched_send(s, buf, count, dt, peer);
    s->steps[s->nsteps - 1].exact = 1;
}

void sched_send_consumed(struct ferry_sched *s)
{
    s->steps[s->nsteps - 1].consume = 1;
}

void sched_recv_exact(struct ferry_sched *s, void *buf, size_t count, struct ferry_datatype *dt, int peer)
{
    sched_recv(s, buf, count, dt, peer);
    s->steps[s->nsteps - 1].exact = 1;
}

void sched_reduce(struct ferry_sched *s, const void *in, void *inout, size_t n, struct ferry_datatype *unit, int rev)
{
    if (n == 0)
        return;
    /* a receive into either operand among the last few steps feeds this
     * reduction: its data is best pulled whole (ferry_request.consume) */
    for (int i = s->nsteps - 1; i >= 0 && i >= s->nsteps - 4; i--) {
        struct sched_step *p = &s->steps[i];
        if (p->kind == ST_RECV && (p->a == in || p->a == inout)) {
            p->consume = 1;
            break;
        }
    }
    struct sched_step *st = add(s, ST_REDUCE);
    st->a = in;
    st->an = n;
    st->at = ref(unit);
    st->b = inout;
    st->rev = (uint8_t)rev;
}

/* The copy step both forms add; overlap: it does not drain the steps before it. */
static void add_copy(struct ferry_sched *s, const void *src, size_t sn, struct ferry_datatype *sdt, void *dst,
                     size_t dn, struct ferry_datatype *ddt, int overlap)
{
    if (src == dst && sn == dn && sdt == ddt)
        return;
    struct sched_step *st = add(s, ST_COPY);
    st->a = src;
    st->an = sn;
    st->at = ref(sdt);
    st->b = dst;
    st->bn = dn;
    st->bt = ref(ddt);
    st->overlap = (uint8_t)overlap;
    /* copying while its sends are out (a scatter's root and its own block):
     * this rank's CPU is taken, as with sends to several receivers */
    if (overlap && s->send_peer >= 0)
        s->fanout = 1;
}

void sched_copy(struct ferry_sched *s, const void *src, size_t sn, struct ferry_datatype *sdt, void *dst, size_t dn,
                struct ferry_datatype *ddt)
{
    add_copy(s, src, sn, sdt, dst, dn, ddt, 0);
}

void sched_copy_overlap(struct ferry_sched *s, const void *src, size_t sn, struct ferry_datatype *sdt, void *dst,
                        size_t dn, struct ferry_datatype *ddt)
{
    add_copy(s, src, sn, sdt, dst, dn, ddt, 1);
}

struct sched_step *sched_poll(struct ferry_sched *s, sched_poll_fn fn, void *arg, uint64_t seq)
{
    struct sched_step *st = add(s, ST_POLL);
    st->poll = fn;
    st->arg = arg;
    st->seq = seq;
    return st;
}

void sched_fence(struct ferry_sched *s)
{
    if (s->nsteps && s->steps[s->nsteps - 1].kind == ST_FENCE)
        return;
    add(s, ST_FENCE);
}

/* ---- running ---------------------------------------------------------------- */

static void run_reduce(struct ferry_sched *s, struct sched_step *st)
{
    struct ferry_op *op = s->op;
    if (st->rev && op->kind == FERRY_OP_USER && !op->commute) {
        /* b = b op a: compute into a, then move the result to b */
        ferry_op_apply(op, st->b, (void *)st->a, st->an, st->at);
        ferry_dt_copy(st->a, st->an, st->at, st->b, st->an, st->at);
    } else {
        ferry_op_apply(op, st->a, st->b, st->an, st->at);
    }
}

static void start_p2p(struct ferry_sched *s, struct sched_step *st)
{
    int send = st->kind == ST_SEND;
    struct ferry_comm *c = s->sub[st->space];
    struct ferry_request *r = ferry_request_new(send ? FERRY_REQ_SEND : FERRY_REQ_RECV);
    size_t n = send && st->exact && s->err ? 0 : st->an;   /* poisoned: see sched_send_exact */
    ferry_request_setup(r, (void *)st->a, n, st->at, c, st->peer, s->tag | (st->space << TAG_SEQ_BITS),
                        c->ctx + 1, FERRY_MODE_STANDARD);
    st->req = r;
    r->consume = st->consume;
    /* a rank that sends to several peers (a scatter's or a bcast's root):
     * with ranks outnumbering CPUs its receivers pull (recv.c) */
    r->fanout = (uint8_t)(send && s->fanout);
    if (send)
        ferry_proto_isend(r);
    else
        ferry_proto_irecv(r);
}

/* Retire completed requests from s->inflight on; true when none is left. */
static int drain(struct ferry_sched *s)
{
    for (; s->inflight < s->pos; s->inflight++) {
        struct sched_step *st = &s->steps[s->inflight];
        if (st->kind != ST_SEND && st->kind != ST_RECV)
            continue;
        struct ferry_request *r = st->req;
        if (!r->complete)
            return 0;
        if (r->status.MPI_ERROR && !s->err)
            s->err = r->status.MPI_ERROR;
        if (st->exact && st->kind == ST_RECV && !s->err &&
            ferry_status_bytes(&r->status) != ferry_dt_bytes(st->at, st->an))
            s->err = MPI_ERR_OTHER;   /* shorter than this rank's count (longer is MPI_ERR_TRUNCATE above) */
        ferry_request_free(r);
        st->req = NULL;
    }
    return 1;
}

static int polls_waiting;   /* poll steps still waiting after this progress call */
static int polls_yielding; /* ... of which waiting for something this CPU's other ranks may do */

/* Run s as far as it goes; returns 1 when it finished. */
static int advance(struct ferry_sched *s, int *work)
{
    while (s->pos < s->nsteps) {
        struct sched_step *st = &s->steps[s->pos];
        if (st->kind == ST_SEND || st->kind == ST_RECV) {
            start_p2p(s, st);
            s->pos++;
            (*work)++;
            continue;
        }
        /* a local step waits for the sends and receives before it, unless
         * it is a copy that overlaps them */
        if (!st->overlap && !drain(s))
            return 0;
        if (st->kind == ST_POLL) {
            int r = st->poll(s, st);
            if (r != 1) {
                polls_waiting++;
                polls_yielding += r != SCHED_POLL_KEEP_CPU;
                return 0;
            }
            st = &s->steps[s->pos];   /* the poll function may have appended steps (moving the array) */
        }
        if (st->kind == ST_REDUCE)
            run_reduce(s, st);
        else if (st->kind == ST_COPY)
            ferry_dt_copy(st->a, st->an, st->at, st->b, st->bn, st->bt);
        s->pos++;
        (*work)++;
    }
    return drain(s);
}

static void finish(struct ferry_sched *s)
{
    struct ferry_request *r = s->req;
    ferry_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, s->err, 0, 0);
    free_sched(s);
    ferry_request_complete(r);   /* may free r (Request_free'd): last */
}

static int busy;

static int progress_hook(void)
{
    if (busy)
        return 0;
    if (!running) {
        ferry_progress_unrung = 0;
        return 0;
    }
    busy = 1;
    int work = 0;
    polls_waiting = polls_yielding = 0;
    struct ferry_sched **pp = &running;
    while (*pp) {
        struct ferry_sched *s = *pp;
        if (advance(s, &work)) {
            *pp = s->next;
            finish(s);
            work++;
        } else {
            pp = &s->next;
        }
    }
    busy = 0;
    /* Waiting on shared-memory flags, which no doorbell announces: a waiting
     * caller must not sleep on the transport; it yields (oversubscribed)
     * under its own wait policy. No yield here: MPI_Test polls from a
     * compute loop must not give the CPU away. */
    ferry_progress_unrung = !polls_waiting ? 0 : polls_yielding ? FERRY_UNRUNG_YIELD : FERRY_UNRUNG_KEEP_CPU;
    return work;
}

void sched_start(struct ferry_sched *s, struct ferry_request **req)
{
    if (!hook_on) {
        ferry_progress_add_hook(progress_hook);
        hook_on = 1;
    }
    struct ferry_request *r = ferry_request_new(FERRY_REQ_COLL);
    ferry_request_setup(r, NULL, 0, sched_byte(), s->comm, MPI_ANY_SOURCE, MPI_ANY_TAG, s->comm->ctx + 1,
                        FERRY_MODE_STANDARD);
    ferry_request_start(r);
    s->req = r;
    *req = r;
    int work = 0, was_busy = busy;
    busy = 1;
    int done = advance(s, &work);
    busy = was_busy;
    if (done) {
        finish(s);
    } else {
        /* append: schedules advance in the order they were started */
        struct ferry_sched **pp = &running;
        while (*pp)
            pp = &(*pp)->next;
        *pp = s;
    }
}

int sched_run(struct ferry_sched *s)
{
    struct ferry_request *r;
    sched_start(s, &r);
    ferry_request_wait(r);
    int err = r->status.MPI_ERROR;
    ferry_request_free(r);
    return err;
}
