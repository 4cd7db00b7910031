/* Shared-memory collectives for communicators whose ranks all run on this
 * node: barrier, bcast, reduce, allreduce, gather, scatter, allgather and
 * alltoall through a segment the communicator's ranks map, with per-rank
 * flags on their own cache lines and increasing sequence numbers instead of
 * messages.
 *
 * Segment (one per communicator for its blocking collectives and one for its
 * nonblocking ones, which run in an order of their own (coll/sched.h);
 * created at an early collective of its kind that wants it, so that every
 * rank creates it at the same point: a blocking call creates it at once, a
 * nonblocking one starts its creation; named
 * /ferry-<jobid>-c<ctx>-<n>, mode 0600, unlinked as soon as every rank
 * mapped it):
 *
 *     struct shm_ctl               futex word and sleeper count (oversubscribed)
 *     struct shm_line line[n]      rank r writes only line[r]:
 *                                    red     last op whose reduced block r published
 *                                    done    last op r has finished reading
 *     struct shm_post post[n][depth]  rank r's post of step s in post[r][s mod depth]:
 *                                    seq     last op whose input r has posted there
 *                                    data    that input, if it fits (56 bytes)
 *     char data[n][2 * slot]       rank r's data, step s in area s mod depth
 *
 * Every shared-memory step on a communicator gets the next sequence number s
 * (the same on every rank: ranks start collectives in the same order); a
 * message too large for a slot is cut into chunks, one sequence number each,
 * so large operations pipeline. A rank's two slots are cut into `depth`
 * step areas (FERRY_COLL_SHM_CHUNK bytes each with a CPU per rank, a slot
 * each when oversubscribed); step s uses area s mod depth. A rank runs its
 * steps in order. Data of step s is rewritten at step s + depth only, once
 * every rank's done >= s. Flag stores are release stores after the data,
 * flag loads acquire loads before it.
 *
 * The algorithms are flat: every rank posts its part, readers copy straight
 * into the user's buffers (the reductions reduce from the slots straight into
 * the user's result buffer, combining the ranks in the order of the
 * point-to-point algorithm the call would otherwise take, so that a call
 * gives the same bits before and after the segment exists: red_order.h);
 * allreduce of larger vectors is a
 * reduce-scatter (each rank reduces one block of every chunk) plus an
 * allgather. One synchronization step per chunk (two for the large
 * allreduce) matters most when ranks share CPUs.
 *
 * Each operation is a resumable state machine (op_run). A blocking call runs
 * it directly, without a schedule (ferry_coll calls shm_direct); a
 * nonblocking call runs it as a poll step of a schedule, so it advances from
 * the progress engine like every nonblocking collective. Waiting: with a CPU
 * per rank spin (progressing point-to-point traffic now and then);
 * oversubscribed, spin briefly, yield a few times, then sleep on the
 * segment's futex until a rank publishes a flag (FERRY_COLL_SHM_YIELDS); a
 * barrier's waiters keep polling instead while every rank on their CPU has
 * arrived (mates_have_work). */
#include "coll/coll_impl.h"
#include "transport/shm/segment.h"
#include "core/biglock.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/progress.h"
#include "core/request.h"
#include "core/runtime.h"
#include "core/util.h"
#include "proto/proto.h"
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct shm_line {
    uint64_t red, done;
    uint64_t blocked;   /* oversubscribed: the barrier step whose arrivals r waits for (0: none) */
    uint64_t role;      /* the last barrier step r arrived at and waits in as its lead or last rank */
    int32_t cpu;        /* ... and the CPU r ran on then */
    char pad[FERRY_CACHELINE - 4 * sizeof(uint64_t) - sizeof(int32_t)];
};

/* Rank r's post of step s: the step's sequence number once r's input is
 * there, and the input itself when it fits (one cache line carries both). */
#define POST_BYTES (FERRY_CACHELINE - sizeof(uint64_t))
struct shm_post {
    uint64_t seq;
    char data[POST_BYTES];
};
static_assert(sizeof(struct shm_post) == FERRY_CACHELINE, "one post line");
static_assert(sizeof(struct shm_line) == FERRY_CACHELINE, "one flag line per rank");

struct shm_ctl {
    uint32_t bell;       /* bumped (and woken) when a flag changes while someone sleeps */
    uint32_t sleepers;   /* ranks in (or about to enter) FUTEX_WAIT on bell */
    char pad[FERRY_CACHELINE - 2 * sizeof(uint32_t)];
};
static_assert(sizeof(struct shm_ctl) == FERRY_CACHELINE, "one control line");

/* Per-communicator state in this process. Communicators are told apart by
 * their context id (never reused); an entry lives until its communicator's
 * last reference goes (ferry_coll_comm_free), so operations still running on
 * a communicator the user freed keep their segment. */
struct shm_comm {
    uint32_t ctx;
    struct ferry_comm *comm;
    int nb;            /* the segment of the nonblocking collectives */
    int n, rank;
    char *base;
    size_t len;
    size_t slot;       /* bytes of one slot (a multiple of 64); a rank's data area is 2 slots */
    size_t step;       /* bytes of the area one step uses (2 * slot / depth) */
    unsigned depth;    /* steps whose data can be in flight per rank */
    uint64_t seq;      /* last sequence number handed out */
    uint64_t mydone;   /* last step this rank finished (its own done flag) */
    uint64_t safe;     /* every rank's done was >= this when last looked at */
    int may_sleep;     /* oversubscribed: waiters may sleep, publishers must wake */
    char *scratch;     /* 2 * slot bytes of private memory */
    /* reductions: the order of the point-to-point algorithm the call would
     * otherwise take (red_order.h). Every tree built is kept until the
     * segment goes (a nonblocking call in flight holds its own); the last
     * call's key per kind (reduce, allreduce) finds its tree at once. */
    struct red_tree **trees;
    int ntrees;
    struct red_cache {
        const struct red_tree *tree;
        size_t bytes;
        int root, commute;
    } red[2];
    const void **fold_in;   /* n input pointers */
    char *fold_tmp;         /* fold_blocks blocks of FOLD_BLOCK bytes: the deepest tree's */
    int fold_blocks;        /* temporaries, and a copy of an in-place input */
    int uses;          /* eligible blocking collectives so far (lazy creation) */
    int failed;        /* creation failed: never retried */
    int attaching;     /* the creation schedule is running (started by a nonblocking call) */
    uint64_t tickets;  /* calls that deferred their choice of algorithm (shm_defer) ... */
    uint64_t turn;     /* ... and how many of them have chosen */
    struct shm_comm *next;
};
static struct shm_comm *comms;

#define LAZY_USES 3   /* default rules create a segment at this many eligible blocking calls */

static struct shm_ctl *ctl(struct shm_comm *m)
{
    return (struct shm_ctl *)m->base;
}
static struct shm_line *line(struct shm_comm *m, int r)
{
    return (struct shm_line *)(m->base + sizeof(struct shm_ctl)) + r;
}
static struct shm_post *post(struct shm_comm *m, int r, uint64_t s)
{
    return (struct shm_post *)(m->base + sizeof(struct shm_ctl) + (size_t)m->n * sizeof(struct shm_line)) +
           (size_t)r * m->depth + s % m->depth;
}
/* r's arrive flag of step s: the last step whose input r has posted in that post line */
static uint64_t *arrive(struct shm_comm *m, int r, uint64_t s)
{
    return &post(m, r, s)->seq;
}
static char *slot(struct shm_comm *m, int r, uint64_t s)
{
    return m->base + sizeof(struct shm_ctl) + (size_t)m->n * (sizeof(struct shm_line) + m->depth * sizeof(struct shm_post)) +
           (size_t)r * 2 * m->slot + (size_t)(s % m->depth) * m->step;
}
static uint64_t get(const uint64_t *f)
{
    return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}
static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}
/* Publish a flag; wake sleepers (oversubscribed only). */
static void put(struct shm_comm *m, uint64_t *f, uint64_t v)
{
    __atomic_store_n(f, v, __ATOMIC_RELEASE);
    if (m->may_sleep) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* store flag, then load sleepers (see shm_wait) */
        if (__atomic_load_n(&ctl(m)->sleepers, __ATOMIC_RELAXED)) {
            __atomic_fetch_add(&ctl(m)->bell, 1, __ATOMIC_SEQ_CST);
            futex(&ctl(m)->bell, FUTEX_WAKE, INT_MAX, NULL);
        }
    }
}
/* every rank's done >= s (cached) */
static int all_done(struct shm_comm *m, uint64_t s)
{
    if (m->safe >= s)
        return 1;
    uint64_t lo = UINT64_MAX;
    for (int i = 0; i < m->n; i++) {
        uint64_t d = get(&line(m, i)->done);
        lo = d < lo ? d : lo;
    }
    m->safe = lo;
    return lo >= s;
}
/* may slot data of step s be written (the readers of step s - depth, which
 * used the same area, are done)? */
static int writable(struct shm_comm *m, uint64_t s)
{
    return s <= m->depth || all_done(m, s - m->depth);
}

static void drop(struct shm_comm *m)
{
    if (m->base)
        munmap(m->base, m->len);
    free(m->scratch);
    for (int k = 0; k < m->ntrees; k++)
        free(m->trees[k]);
    free(m->trees);
    free(m->fold_in);
    free(m->fold_tmp);
    free(m);
}

/* c's state for its blocking (nb = 0) or nonblocking (nb = 1) collectives */
static struct shm_comm *find(struct ferry_comm *c, int nb)
{
    for (struct shm_comm *m = comms; m; m = m->next)
        if (m->comm == c && m->ctx == c->ctx && m->nb == nb)
            return m;
    return NULL;
}

void ferry_coll_comm_free(struct ferry_comm *c)
{
    for (struct shm_comm **pp = &comms; *pp;) {
        struct shm_comm *m = *pp;
        if (m->comm == c && m->ctx == c->ctx) {
            *pp = m->next;
            drop(m);
        } else {
            pp = &m->next;
        }
    }
}

static struct shm_comm *entry(struct ferry_comm *c, int nb)
{
    struct shm_comm *m = find(c, nb);
    if (!m) {
        m = ferry_xcalloc(1, sizeof *m);
        m->ctx = c->ctx, m->comm = c, m->nb = nb, m->n = c->size, m->rank = c->rank;
        m->next = comms;
        comms = m;
    }
    return m;
}

/* every rank of c on this node? */
static int all_local(struct ferry_comm *c)
{
    if (ferry_cfg.coll_fake_ppn > 0 && ferry_cfg.coll_fake_ppn < c->size)
        return 0;
    for (int i = 0; i < c->size; i++)
        if (ferry_rt.peers[c->group->world[i]].local < 0)
            return 0;
    return 1;
}

/* Bytes of one slot for n ranks: FERRY_COLL_SHM_SLOT, less for many ranks
 * (the segment holds 2 n slots). */
static size_t slot_bytes(int n)
{
    size_t b = (size_t)ferry_cfg.coll_shm_slot;
    while (n > 8 && b > 16384) {
        b /= 2;
        n /= 2;
    }
    return b & ~(size_t)(FERRY_CACHELINE - 1);
}

/* ---- creating the segment ------------------------------------------------------ */

/* The collective creation of a communicator's segment, as a schedule: rank 0
 * creates and reserves it, every rank agrees (a p2p allreduce of the MIN of
 * ok), the others map it, every rank agrees again, rank 0 unlinks the name.
 * A blocking call that wants the segment runs the schedule at once; a
 * nonblocking one starts it and leaves it to progress (see shm_defer). */
struct attach {
    struct shm_comm *m;
    int ok, created;
    char name[128];
};

/* Append an agreement on *ok to s: a point-to-point allreduce (MIN). */
static void agree_steps(struct ferry_sched *s, int *ok)
{
    struct ferry_coll_args a = {.sbuf = MPI_IN_PLACE, .rbuf = ok, .rcount = 1,
                                .rdt = ferry_datatype_get(MPI_INT), .op = ferry_op_get(MPI_MIN)};
    allreduce_rd(s, &a);
}

static int attach_create(struct ferry_sched *s, struct sched_step *st)
{
    struct attach *at = st->arg;
    at->ok = 1;
    if (s->comm->rank == 0) {
        int fd = shm_open(at->name, O_CREAT | O_EXCL | O_RDWR, 0600);
        at->created = fd >= 0;
        /* reserve the memory now: a full /dev/shm is an error here, not a SIGBUS later */
        at->ok = fd >= 0 && ftruncate(fd, (off_t)at->m->len) == 0 &&
                 posix_fallocate(fd, 0, (off_t)at->m->len) == 0;
        if (fd >= 0)
            close(fd);
    }
    return 1;
}

static int attach_map(struct ferry_sched *s, struct sched_step *st)
{
    struct attach *at = st->arg;
    struct shm_comm *m = at->m;
    int fd = at->ok ? shm_open(at->name, O_RDWR, 0600) : -1;
    if (fd >= 0) {
        /* populated: no minor fault per page on the first collectives */
        void *p = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
        m->base = p == MAP_FAILED ? NULL : p;
        if (m->base && s->comm->rank == 0)
            ferry_shm_keep_resident(m->base, m->len, "coll: shared-memory segment");
        close(fd);
    }
    at->ok = at->ok && m->base;
    return 1;
}

static int attach_finish(struct ferry_sched *s, struct sched_step *st)
{
    struct attach *at = st->arg;
    struct shm_comm *m = at->m;
    if (at->created)
        shm_unlink(at->name);
    m->attaching = 0;
    if (!at->ok) {
        if (m->base)
            munmap(m->base, m->len);
        m->base = NULL;
        m->failed = 1;
        ferry_log(1, "coll: no shared-memory segment for communicator %u; using point-to-point algorithms",
                  (unsigned)s->comm->ctx);
        return 1;
    }
    m->may_sleep = ferry_rt.oversubscribed;
    m->scratch = ferry_xmalloc(2 * m->step);
    m->fold_in = ferry_xcalloc((size_t)m->n, sizeof *m->fold_in);
    ferry_log(2, "coll: shared-memory segment for communicator %u (%d ranks, %zu KiB)", (unsigned)s->comm->ctx,
              m->n, m->len >> 10);
    return 1;
}

/* Start creating c's segment (collective over c): run the schedule now
 * (blocking; returns 0 when the segment is there) or leave it to progress. */
static int attach(struct ferry_comm *c, struct shm_comm *m, int blocking)
{
    struct ferry_sched *s = sched_new(c, m->nb);
    struct attach *at = sched_alloc(s, sizeof *at);   /* (not zeroed) */
    *at = (struct attach){.m = m};   /* created stays 0 on every rank but the creator */
    char job[64];
    size_t i = 0;
    for (const char *p = ferry_rt.jobid; *p && i < sizeof job - 1; p++)
        job[i++] = (*p == '/' || *p == ' ') ? '_' : *p;
    job[i] = 0;
    snprintf(at->name, sizeof at->name, "/ferry-%s-c%u-%u", job, (unsigned)c->ctx, (unsigned)s->tag);
    m->slot = slot_bytes(c->size);
    /* steps of FERRY_COLL_SHM_CHUNK bytes pipeline large messages with a CPU
     * per rank; oversubscribed, every step is a synchronization that needs
     * all ranks scheduled: fewer, larger ones (a slot each) */
    size_t chunk = ferry_rt.oversubscribed ? m->slot : (size_t)ferry_cfg.coll_shm_chunk;
    chunk = FERRY_MIN(chunk, m->slot) & ~(size_t)(FERRY_CACHELINE - 1);
    m->depth = (unsigned)(2 * m->slot / FERRY_MAX(chunk, (size_t)4096));
    m->step = 2 * m->slot / m->depth & ~(size_t)(FERRY_CACHELINE - 1);
    m->len = sizeof(struct shm_ctl) + (size_t)c->size * (sizeof(struct shm_line) + m->depth * sizeof(struct shm_post)) +
             (size_t)c->size * 2 * m->slot;
    m->attaching = 1;
    sched_poll(s, attach_create, at, 0);
    agree_steps(s, &at->ok);
    sched_poll(s, attach_map, at, 0);
    agree_steps(s, &at->ok);
    sched_poll(s, attach_finish, at, 0);
    if (blocking)
        return sched_run(s) || !m->base ? -1 : 0;
    struct ferry_request *r;
    sched_start(s, &r);
    ferry_request_free(r);   /* nobody waits for it: released when it completes */
    return -1;
}

/* ---- which calls the algorithms serve ------------------------------------------- */

/* The unit a reduction works on, if the shm algorithms can reduce it: packed
 * units, so that slot chunks are unit arrays (no padded pair types). */
static struct ferry_datatype *red_unit(const struct ferry_coll_args *a)
{
    struct ferry_datatype *unit;
    size_t per;
    if (!a->op || !a->rdt || ferry_op_unit(a->op, a->rdt, 0, &unit, &per))
        return NULL;
    if (!ferry_dt_is_contig(unit, 1) || (size_t)unit->extent != unit->size || unit->size == 0 ||
        unit->true_lb != 0)
        return NULL;
    if (a->op->kind == FERRY_OP_USER && !ferry_dt_is_contig(a->rdt, a->rcount))
        return NULL;
    return unit;
}

/* Bytes per rank the call moves (the key of FERRY_COLL_SHM_MAX), the same on
 * every rank; -1 if the shm algorithm cannot serve it. */
static long call_size(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a)
{
    switch (kind) {
    case FERRY_COLL_BARRIER:
    case FERRY_COLL_BCAST:
    case FERRY_COLL_GATHER:
    case FERRY_COLL_SCATTER:
    case FERRY_COLL_ALLGATHER:
    case FERRY_COLL_ALLTOALL:
        return (long)coll_call_bytes(kind, c, a);
    case FERRY_COLL_REDUCE:
    case FERRY_COLL_ALLREDUCE:
        return red_unit(a) ? (long)coll_call_bytes(kind, c, a) : -1;
    default:
        return -1;
    }
}

static long size_limit(enum ferry_coll_kind kind, const struct ferry_comm *c)
{
    if (kind == FERRY_COLL_BARRIER)
        return LONG_MAX;
    if (ferry_rt.oversubscribed) {
        if (ferry_cfg.coll_shm_oversub_max >= 0)
            return ferry_cfg.coll_shm_oversub_max;
        switch (kind) {   /* see FERRY_COLL_SHM_OVERSUB_MAX */
        case FERRY_COLL_SCATTER: return 32 * 1024;
        case FERRY_COLL_ALLTOALL: return 32 * 1024;
        case FERRY_COLL_BCAST: return 2 * 1024 * 1024;
        case FERRY_COLL_REDUCE:
        case FERRY_COLL_ALLGATHER: return LONG_MAX;
        default: return 512 * 1024;
        }
    }
    long limit;
    switch (kind) {
    case FERRY_COLL_REDUCE:
    case FERRY_COLL_ALLREDUCE: limit = ferry_cfg.coll_shm_reduce_max; break;
    case FERRY_COLL_GATHER: limit = ferry_cfg.coll_shm_gather_max; break;
    case FERRY_COLL_ALLGATHER: limit = ferry_cfg.coll_shm_allgather_max; break;
    default: limit = ferry_cfg.coll_shm_max;
    }
    if (c->size != 2)
        return limit;
    if (kind == FERRY_COLL_REDUCE)   /* see FERRY_COLL_SHM_PAIR_REDUCE_MAX */
        return ferry_cfg.coll_shm_pair_reduce_max < 0 ? LONG_MAX : ferry_cfg.coll_shm_pair_reduce_max;
    return FERRY_MIN(limit, ferry_cfg.coll_shm_pair_max);
}

/* FERRY_COLL_PAIR_REDUCE_P2P_MIN/MAX */
static int pair_reduce_p2p(enum ferry_coll_kind kind, const struct ferry_comm *c, long bytes)
{
    return kind == FERRY_COLL_REDUCE && c->size == 2 && !ferry_rt.oversubscribed &&
           ferry_cfg.coll_pair_reduce_p2p_min >= 0 && bytes >= ferry_cfg.coll_pair_reduce_p2p_min &&
           bytes <= ferry_cfg.coll_pair_reduce_p2p_max;
}

/* Ranks outnumber CPUs: a scatter whose blocks go eagerly (above 4 KiB) is
 * faster point to point (linear): each of the root's sends wakes its
 * receiver, which copies its block out on the other CPU while the root
 * writes the next one, where the shared-memory scatter publishes all the
 * blocks at once. 4 ranks on 2 CPUs, 6 interleaved runs, 8 KiB: 2.2 against
 * 2.8 us, 16 KiB 3.6 against 5.2; 8 ranks 4.3 against 5.3 and 5.9 against
 * 9.7. Up to 4 KiB the shared-memory scatter was as fast or faster, and so
 * it was for blocks just above the eager limit (32 KiB: 9.8 against 13.3 at
 * 4 ranks), which point to point take a rendezvous each. */
static int oversub_scatter_p2p(enum ferry_coll_kind kind, const struct ferry_comm *c, const struct ferry_coll_args *a,
                               long bytes)
{
    return kind == FERRY_COLL_SCATTER && ferry_rt.oversubscribed && ferry_cfg.coll_shm_oversub_max < 0 &&
           bytes > 4096 && (size_t)bytes <= ferry_proto_eager_max(ferry_comm_world_rank(c, a->root));
}

int shm_usable(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a, int blocking,
               int forced)
{
    if (!ferry_cfg.coll_shm || c->remote || c->size < 2)
        return 0;
    long bytes = call_size(kind, c, a);
    if (bytes < 0 || (!forced && (bytes > size_limit(kind, c) || pair_reduce_p2p(kind, c, bytes) ||
                                  oversub_scatter_p2p(kind, c, a, bytes))))
        return 0;
    int nb = !blocking;
    struct shm_comm *m = find(c, nb);
    if (m && m->base)
        return 1;
    if ((m && (m->failed || m->attaching)) || !all_local(c))
        return 0;
    /* by default only for a communicator that keeps using collectives; not
     * for the handful of agreements that set up a window or a file (a
     * segment costs page faults: Win_allocate + Win_free took 413 us with
     * one, 12 in MPICH) */
    if (!forced && (c->coll_setup || ++entry(c, nb)->uses < LAZY_USES))
        return 0;
    /* a nonblocking call only starts the creation and takes another
     * algorithm; the nonblocking calls after it wait for the outcome
     * (shm_defer) */
    return attach(c, entry(c, nb), blocking) == 0;
}

/* ---- calls started while the segment is being created ------------------------- */

/* A nonblocking call started the segment's creation; until every rank knows
 * the outcome, a nonblocking call that might take a shared-memory algorithm
 * cannot choose
 * (the choice must be the same on every rank, and shared-memory operations
 * take sequence numbers in call order). Such a call defers its choice to a
 * first poll step: once the creation finished and every call deferred before
 * it has chosen, it selects and builds its algorithm into its schedule. */
struct deferred {
    enum ferry_coll_kind kind;
    struct ferry_coll_args a;
    uint64_t ticket;
};

int shm_deferring(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a)
{
    struct shm_comm *m = find(c, 1);
    return m && (m->attaching || m->turn != m->tickets) && call_size(kind, c, a) >= 0;
}

static int choose_deferred(struct ferry_sched *s, struct sched_step *st)
{
    struct deferred *d = st->arg;
    struct shm_comm *m = find(s->comm, 1);
    if (m->attaching || m->turn != d->ticket)
        return 0;
    int rc = coll_build_chosen(d->kind, s, &d->a);
    m->turn++;
    if (rc && !s->err)
        s->err = rc;
    if (d->a.op)
        ferry_op_release(d->a.op);
    return 1;
}

int shm_defer(struct ferry_sched *s, enum ferry_coll_kind kind, const struct ferry_coll_args *a)
{
    struct shm_comm *m = find(s->comm, 1);
    struct deferred *d = sched_alloc(s, sizeof *d);
    d->kind = kind, d->a = *a, d->ticket = m->tickets++;
    struct sched_step *st = sched_poll(s, choose_deferred, d, 0);
    /* the step holds the call's datatypes and op until the algorithm does */
    if (a->sdt)
        ferry_dt_retain(st->at = a->sdt);
    if (a->rdt)
        ferry_dt_retain(st->bt = a->rdt);
    if (a->op)
        ferry_op_retain(a->op);
    return MPI_SUCCESS;
}

/* ---- the operations ------------------------------------------------------------ */

/* One collective call; lives on the stack (blocking) or in the schedule's
 * memory (nonblocking). */
struct shm_op {
    struct shm_comm *m;
    enum ferry_coll_kind kind;
    struct ferry_coll_args a;
    struct ferry_datatype *unit;   /* reductions */
    const struct red_tree *tree;   /* ... their order */
    uint64_t seq0;                 /* sequence number of chunk 0 */
    size_t total;                  /* bytes per rank block (reductions: of the vector) */
    size_t chunk;                  /* bytes per chunk (slot space per block) */
    size_t cu;                     /* large allreduce: bytes of input per chunk (then result block) */
    int nchunks, k;                /* chunks, current chunk */
    int phase, idx;                /* position inside the current chunk */
    int big;                       /* allreduce: reduce-scatter + allgather */
    int inl;                       /* the data of each rank's (single) step rides in its post line */
    int lead, last;                /* barrier: the rank that leaves first / last (-1: none) */
    int keep_cpu;                  /* barrier: nobody sharing our CPU has work: poll, do not yield */
    unsigned polls;                /* ... polls so far */
    double yield_since;            /* oversubscribed wait: see ferry_yielded_enough */
};

/* Where rank r's data of step s is. */
static char *area(const struct shm_op *o, int r, uint64_t s)
{
    return o->inl ? post(o->m, r, s)->data : slot(o->m, r, s);
}

/* Scatter and alltoall: where, in rank owner's area, the piece for rank
 * dest is. A slot keeps a place for every rank; a post line, which small
 * calls use, skips the owner's own block (the owner copies that one
 * itself), so that with 2 ranks a post line carries a 56-byte block. */
static size_t block_at(const struct shm_op *o, int owner, int dest)
{
    return (size_t)(o->inl && dest > owner ? dest - 1 : dest) * o->chunk;
}

/* Bytes of a slot a writer asks ownership of before it copies into it (the
 * readers of an earlier call hold its lines; see SHM_PREFETCH_PACKET in the
 * shared-memory transport), for copies from SHM_COLL_PREFETCH_MIN bytes. 2
 * ranks, 6 interleaved runs, medians against none: bcast 2 KiB 0.56 against
 * 0.68 us, gather 1 KiB 0.35 against 0.47, allgather 1 KiB 0.68 against
 * 0.88, alltoall 1 KiB 0.67 against 0.81, 4 KiB 5-10% faster; below 1 KiB
 * allgather was slower (512 B 0.76 against 0.65), so no prefetch there; 4
 * ranks on 2 CPUs unchanged. */
#define SHM_COLL_PREFETCH 4096
#define SHM_COLL_PREFETCH_MIN 1024

/* Bytes [off, off + len) of the packed stream of (buf, count, dt) to out. */
static void get_bytes(const void *buf, size_t count, struct ferry_datatype *dt, size_t off, void *out, size_t len)
{
    if (!len)
        return;
    if (len >= SHM_COLL_PREFETCH_MIN)
        ferry_prefetch_range_for_write(out, len, SHM_COLL_PREFETCH);
    if (ferry_dt_is_contig(dt, count))
        memcpy(out, ferry_dt_contig_ptr(dt, buf) + off, len);
    else
        ferry_dt_pack(dt, buf, off, out, len);
}
/* ... and back. */
static void put_bytes(void *buf, size_t count, struct ferry_datatype *dt, size_t off, const void *in, size_t len)
{
    if (!len)
        return;
    if (ferry_dt_is_contig(dt, count))
        memcpy((char *)ferry_dt_contig_ptr(dt, buf) + off, in, len);
    else
        ferry_dt_unpack(dt, buf, off, in, len);
}

/* Oversubscribed, a rank waiting for a barrier's arrivals yields its CPU
 * only to a rank that can use it: one that (last we heard) runs on the same
 * CPU and is not itself waiting for this barrier's arrivals. When every rank
 * sharing our CPU has arrived, yielding only passes the CPU around among
 * waiters (a context switch each, 1.5-2 us on the development VM) while the
 * arrival that ends the barrier comes from another CPU: keep polling. The
 * CPUs are hints (a rank may have moved), so shm_wait yields now and then
 * regardless (ferry_keep_cpu_yields). */
static int mates_have_work(struct shm_comm *m, uint64_t s)
{
    int cpu = sched_getcpu();
    struct shm_line *me = line(m, m->rank);
    if (me->blocked != s || me->cpu != cpu) {
        __atomic_store_n(&me->cpu, cpu, __ATOMIC_RELAXED);
        __atomic_store_n(&me->blocked, s, __ATOMIC_RELAXED);
    }
    for (int i = 0; i < m->n; i++) {
        struct shm_line *l = line(m, i);
        if (i != m->rank && __atomic_load_n(&l->cpu, __ATOMIC_RELAXED) == cpu &&
            __atomic_load_n(&l->blocked, __ATOMIC_RELAXED) != s)
            return 1;
    }
    return 0;
}

/* Barrier, flat: every rank posts its arrival and leaves once it has seen
 * every arrival. Release: the lead posts (its "arrival") only once it has
 * seen the others', and they leave on seeing the lead's post: one more
 * hand-over, but the lead leaves first, so that a collective rooted there
 * after the barrier finds its root's data already posted instead of waiting
 * for the root to be scheduled (oversubscribed, each such wait is a context
 * switch). Flat with a last rank: that rank also waits for the others to
 * have left (their done flags), so that a gather or reduce to it after the
 * barrier finds their data posted.
 *
 * The roles come from each rank's own prediction, which is the same on every
 * rank when the ranks call their collectives in one order. Programs that
 * start nonblocking collectives at different points among the blocking ones
 * (sched.h) can leave two ranks each taking itself for the lead, or for the
 * last rank, each waiting for the other: so a rank in such a role first says
 * so (its role flag: it has arrived), and the others count that as arrived,
 * or as left. The flag wakes no sleeper (no system call on the usual path):
 * a rank that only waits for it, in such a program, wakes at the sleep's
 * timeout. */
static int arrived_or_role(struct shm_comm *m, int r, uint64_t s)
{
    return get(arrive(m, r, s)) >= s || get(&line(m, r)->role) >= s;
}

static int barrier_step(struct shm_op *o, uint64_t s, size_t off, size_t len)
{
    struct shm_comm *m = o->m;
    o->keep_cpu = 0;
    if (o->lead >= 0 && m->rank == o->lead) {
        if (o->phase == 0) {
            __atomic_store_n(&line(m, m->rank)->role, s, __ATOMIC_RELEASE);
            o->phase = 1;
        }
        for (; o->idx < m->n; o->idx++)
            if (o->idx != o->lead && !arrived_or_role(m, o->idx, s))
                return 0;
        put(m, arrive(m, m->rank, s), s);
        return 1;
    }
    if (o->phase == 0) {
        put(m, arrive(m, m->rank, s), s);
        o->phase = 1;
    }
    if (o->lead >= 0)
        return get(arrive(m, o->lead, s)) >= s;
    if (o->phase == 1) {
        for (; o->idx < m->n; o->idx++)
            if (get(arrive(m, o->idx, s)) < s) {
                if (m->may_sleep)
                    o->keep_cpu = !mates_have_work(m, s);
                return 0;
            }
        if (m->rank != o->last)
            return 1;
        __atomic_store_n(&line(m, m->rank)->role, s, __ATOMIC_RELEASE);
        o->phase = 2;
        o->idx = 0;
    }
    for (; o->idx < m->n; o->idx++)
        if (o->idx != m->rank && get(&line(m, o->idx)->done) < s && get(&line(m, o->idx)->role) < s)
            return 0;
    return 1;
}

/* Who leaves a barrier first (o->lead, releasing the others) or last
 * (o->last), -1: nobody in particular. The barrier prepares for the
 * collective that followed the previous barrier on the communicator (coll.c's
 * prediction): leaving first, a bcast or scatter root has its data posted
 * before the others look; leaving last, a gather or reduce root finds theirs
 * posted. Oversubscribed, that saves a context switch per call; with a CPU
 * per rank, the ranks that wait for the root's data (or the root that waits
 * for theirs) wait less, and barrier plus call take about as long as with
 * the flat barrier (FERRY_COLL_SHM_BARRIER has the numbers). */
static void barrier_roles(struct shm_op *o)
{
    struct ferry_comm *c = o->m->comm;
    int next = c->coll_barrier_next, root = c->coll_barrier_root;
    o->lead = o->last = -1;
    switch (ferry_cfg.coll_shm_barrier) {
    case FERRY_SHM_BARRIER_FLAT:
        return;
    case FERRY_SHM_BARRIER_RELEASE:
        o->lead = root >= 0 ? root : 0;
        return;
    default:
        if (root < 0)
            return;
        if (next == FERRY_COLL_BCAST || next == FERRY_COLL_SCATTER || next == FERRY_COLL_SCATTERV)
            o->lead = root;
        else
            o->last = root;
    }
}

static int bcast_step(struct shm_op *o, uint64_t s, size_t off, size_t len)
{
    struct shm_comm *m = o->m;
    const struct ferry_coll_args *a = &o->a;
    if (m->rank == a->root) {
        if (!writable(m, s))
            return 0;
        get_bytes(a->rbuf, a->rcount, a->rdt, off, area(o, m->rank, s), len);
        put(m, arrive(m, m->rank, s), s);
        return 1;
    }
    if (get(arrive(m, a->root, s)) < s)
        return 0;
    put_bytes(a->rbuf, a->rcount, a->rdt, off, area(o, a->root, s), len);
    return 1;
}

/* This rank's contribution of a reduction. */
static const void *contrib(const struct ferry_coll_args *a)
{
    return a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
}

#define FOLD_BLOCK 8192   /* bytes of the result reduced at a time */

/* Input i of a fold: slot i's chunk at uoff, or own for rank `self` when own != NULL. */
static const char *fold_input(struct shm_op *o, uint64_t s, size_t uoff, const void *own, int self, int i)
{
    return i == self && own ? (const char *)own : area(o, i, s) + uoff;
}

/* d = the reduction of the n inputs (fold_input i) over nu units, in the
 * order of o->tree. d may be own (an in-place reduction's result buffer). */
static void fold(struct shm_op *o, uint64_t s, size_t uoff, const void *own, int self, void *d, size_t nu)
{
    struct shm_comm *m = o->m;
    size_t e = o->unit->size;
    /* block by block, so that d and the tree's temporaries stay in L1 */
    size_t bu = FERRY_MAX((size_t)FOLD_BLOCK / e, (size_t)1);
    const void **in = m->fold_in;
    char *own_copy = m->fold_tmp + (size_t)o->tree->depth * FOLD_BLOCK;
    for (size_t u0 = 0; u0 < nu; u0 += bu) {
        size_t k = FERRY_MIN(bu, nu - u0), bo = u0 * e;
        for (int i = 0; i < m->n; i++)
            in[i] = fold_input(o, s, uoff, own, self, i) + bo;
        if (own == d) {   /* the tree reads own after writing d */
            memcpy(own_copy, (const char *)own + bo, k * e);
            in[self] = own_copy;
        }
        red_tree_eval(o->tree, in, (char *)d + bo, k, o->a.op, o->unit, m->fold_tmp);
    }
}

/* The tree of this reduce or allreduce call. */
static const struct red_tree *red_tree_of(struct shm_comm *m, enum ferry_coll_kind kind, const struct ferry_coll_args *a)
{
    struct red_cache *rc = &m->red[kind == FERRY_COLL_ALLREDUCE];
    size_t bytes = coll_call_bytes(kind, m->comm, a);
    int root = kind == FERRY_COLL_REDUCE ? a->root : 0, commute = a->op->commute;
    if (rc->tree && rc->bytes == bytes && rc->root == root && rc->commute == commute)
        return rc->tree;
    int troot;
    enum red_order order = coll_red_order(kind, m->comm, a, !m->nb, &troot);
    const struct red_tree *t = NULL;
    for (int k = 0; k < m->ntrees && !t; k++)
        if (m->trees[k]->order == order && m->trees[k]->root_rank == troot)
            t = m->trees[k];
    if (!t) {
        struct red_tree *nt = red_tree_new(order, m->n, troot);
        m->trees = ferry_xrealloc(m->trees, (size_t)(m->ntrees + 1) * sizeof *m->trees);
        m->trees[m->ntrees++] = nt;
        if (nt->depth + 1 > m->fold_blocks) {
            free(m->fold_tmp);   /* used only inside one fold, never across steps */
            m->fold_blocks = nt->depth + 1;
            m->fold_tmp = ferry_xmalloc((size_t)m->fold_blocks * FOLD_BLOCK);
        }
        t = nt;
    }
    rc->tree = t;
    rc->bytes = bytes;
    rc->root = root;
    rc->commute = commute;
    return t;
}

static int reduce_step(struct shm_op *o, uint64_t s, size_t off, size_t len)
{
    struct shm_comm *m = o->m;
    const struct ferry_coll_args *a = &o->a;
    int me = m->rank, root = a->root;
    if (me != root) {
        if (!writable(m, s))
            return 0;
        get_bytes(contrib(a), a->rcount, a->rdt, off, area(o, me, s), len);
        put(m, arrive(m, me, s), s);
        return 1;
    }
    for (; o->idx < m->n; o->idx++)
        if (o->idx != root && get(arrive(m, o->idx, s)) < s)
            return 0;
    /* own input: in place it is the result buffer (fold copies it aside) */
    const void *own;
    int in_place = a->sbuf == MPI_IN_PLACE, contig = ferry_dt_is_contig(a->rdt, a->rcount);
    void *d = contig ? (char *)ferry_dt_contig_ptr(a->rdt, a->rbuf) + off : m->scratch;
    if (!in_place && contig) {
        own = ferry_dt_contig_ptr(a->rdt, a->sbuf) + off;
    } else if (in_place && contig) {
        own = d;
    } else {
        get_bytes(contrib(a), a->rcount, a->rdt, off, m->scratch + m->step, len);
        own = m->scratch + m->step;
    }
    fold(o, s, 0, own, root, d, len / o->unit->size);
    if (!contig)
        put_bytes(a->rbuf, a->rcount, a->rdt, off, d, len);
    return 1;
}

static int allreduce_step(struct shm_op *o, uint64_t s, size_t off, size_t len)
{
    struct shm_comm *m = o->m;
    const struct ferry_coll_args *a = &o->a;
    int me = m->rank, n = m->n;
    size_t e = o->unit->size;
    if (o->phase == 0) {
        if (!writable(m, s))
            return 0;
        if (!o->big) {
            get_bytes(contrib(a), a->rcount, a->rdt, off, area(o, me, s), len);
        } else {
            /* the others need every block of this rank's input but its own */
            size_t nu = len / e, b = (nu + n - 1) / n;
            size_t lo = FERRY_MIN((size_t)me * b, nu), hi = FERRY_MIN(lo + b, nu);
            get_bytes(contrib(a), a->rcount, a->rdt, off, area(o, me, s), lo * e);
            get_bytes(contrib(a), a->rcount, a->rdt, off + hi * e, area(o, me, s) + hi * e, (nu - hi) * e);
        }
        put(m, arrive(m, me, s), s);
        o->phase = 1;
        o->idx = 0;
    }
    if (o->phase == 1) {
        for (; o->idx < n; o->idx++)
            if (get(arrive(m, o->idx, s)) < s)
                return 0;
        size_t nu = len / e;
        if (!o->big) {
            int contig = ferry_dt_is_contig(a->rdt, a->rcount);
            void *d = contig ? (char *)ferry_dt_contig_ptr(a->rdt, a->rbuf) + off : m->scratch;
            fold(o, s, 0, NULL, -1, d, nu);
            if (!contig)
                put_bytes(a->rbuf, a->rcount, a->rdt, off, d, len);
            return 1;
        }
        /* reduce block `me` of the chunk into this rank's result area */
        size_t b = (nu + n - 1) / n, lo = FERRY_MIN((size_t)me * b, nu), hi = FERRY_MIN(lo + b, nu);
        if (hi > lo) {
            const void *own;
            if (ferry_dt_is_contig(a->rdt, a->rcount)) {
                own = ferry_dt_contig_ptr(a->rdt, contrib(a)) + off + lo * e;
            } else {
                get_bytes(contrib(a), a->rcount, a->rdt, off + lo * e, m->scratch, (hi - lo) * e);
                own = m->scratch;
            }
            fold(o, s, lo * e, own, me, area(o, me, s) + o->cu, hi - lo);
        }
        put(m, &line(m, me)->red, s);
        o->phase = 2;
        o->idx = 0;
    }
    size_t nu = len / e, b = (nu + n - 1) / n;
    for (; o->idx < n; o->idx++) {
        int i = (me + o->idx) % n;
        if (get(&line(m, i)->red) < s)
            return 0;
        size_t lo = FERRY_MIN((size_t)i * b, nu), hi = FERRY_MIN(lo + b, nu);
        put_bytes(a->rbuf, a->rcount, a->rdt, off + lo * e, area(o, i, s) + o->cu, (hi - lo) * e);
    }
    return 1;
}

/* Copy bytes [off, off + len) of one block from (sb, sc, st) to (db, dc, dt). */
static void copy_block(struct shm_comm *m, const void *sb, size_t sc, struct ferry_datatype *st, void *db, size_t dc,
                       struct ferry_datatype *dt, size_t off, size_t len)
{
    if (!len)
        return;
    if (ferry_dt_is_contig(st, sc)) {
        put_bytes(db, dc, dt, off, ferry_dt_contig_ptr(st, sb) + off, len);
    } else {
        get_bytes(sb, sc, st, off, m->scratch, len);
        put_bytes(db, dc, dt, off, m->scratch, len);
    }
}

/* Gather's root and allgather: copy every other rank's piece of step s into
 * its block of rbuf as it arrives, starting after our own rank (o->idx counts
 * the ranks done, from 1; returns 0 to be resumed at the first missing one). */
static int collect_blocks(struct shm_op *o, uint64_t s, size_t off, size_t len)
{
    struct shm_comm *m = o->m;
    const struct ferry_coll_args *a = &o->a;
    for (; o->idx < m->n; o->idx++) {
        int i = (m->rank + o->idx) % m->n;
        if (get(arrive(m, i, s)) < s)
            return 0;
        put_bytes(blk(a->rbuf, (size_t)i, a->rcount, a->rdt), a->rcount, a->rdt, off, area(o, i, s), len);
    }
    return 1;
}

static int gather_step(struct shm_op *o, uint64_t s, size_t off, size_t len)
{
    struct shm_comm *m = o->m;
    const struct ferry_coll_args *a = &o->a;
    int me = m->rank, root = a->root;
    if (me != root) {
        if (!writable(m, s))
            return 0;
        get_bytes(a->sbuf, a->scount, a->sdt, off, area(o, me, s), len);
        put(m, arrive(m, me, s), s);
        return 1;
    }
    if (o->phase == 0) {
        if (a->sbuf != MPI_IN_PLACE)
            copy_block(m, a->sbuf, a->scount, a->sdt, blk(a->rbuf, (size_t)me, a->rcount, a->rdt), a->rcount,
                       a->rdt, off, len);
        o->phase = 1;
        o->idx = 1;
    }
    return collect_blocks(o, s, off, len);
}

static int scatter_step(struct shm_op *o, uint64_t s, size_t off, size_t len)
{
    struct shm_comm *m = o->m;
    const struct ferry_coll_args *a = &o->a;
    int me = m->rank, root = a->root;
    if (me == root) {
        if (!writable(m, s))
            return 0;
        for (int i = 0; i < m->n; i++)
            if (i != root)
                get_bytes(blk(a->sbuf, (size_t)i, a->scount, a->sdt), a->scount, a->sdt, off,
                          area(o, me, s) + block_at(o, me, i), len);
        put(m, arrive(m, me, s), s);
        if (a->rbuf != MPI_IN_PLACE)
            copy_block(m, blk(a->sbuf, (size_t)me, a->scount, a->sdt), a->scount, a->sdt, a->rbuf, a->rcount,
                       a->rdt, off, len);
        return 1;
    }
    if (get(arrive(m, root, s)) < s)
        return 0;
    put_bytes(a->rbuf, a->rcount, a->rdt, off, area(o, root, s) + block_at(o, root, me), len);
    return 1;
}

static int allgather_step(struct shm_op *o, uint64_t s, size_t off, size_t len)
{
    struct shm_comm *m = o->m;
    const struct ferry_coll_args *a = &o->a;
    int me = m->rank;
    if (o->phase == 0) {
        if (!writable(m, s))
            return 0;
        char *mine = area(o, me, s);
        if (a->sbuf == MPI_IN_PLACE) {
            get_bytes(blk(a->rbuf, (size_t)me, a->rcount, a->rdt), a->rcount, a->rdt, off, mine, len);
            put(m, arrive(m, me, s), s);
        } else {
            get_bytes(a->sbuf, a->scount, a->sdt, off, mine, len);
            put(m, arrive(m, me, s), s);
            put_bytes(blk(a->rbuf, (size_t)me, a->rcount, a->rdt), a->rcount, a->rdt, off, mine, len);
        }
        o->phase = 1;
        o->idx = 1;
    }
    return collect_blocks(o, s, off, len);
}

static int alltoall_step(struct shm_op *o, uint64_t s, size_t off, size_t len)
{
    struct shm_comm *m = o->m;
    const struct ferry_coll_args *a = &o->a;
    int me = m->rank, n = m->n;
    if (o->phase == 0) {
        if (!writable(m, s))
            return 0;
        int in_place = a->sbuf == MPI_IN_PLACE;
        const void *sb = in_place ? a->rbuf : a->sbuf;
        size_t sc = in_place ? a->rcount : a->scount;
        struct ferry_datatype *st = in_place ? a->rdt : a->sdt;
        char *mine = area(o, me, s);
        for (int j = 0; j < n; j++)
            if (j != me)
                get_bytes(blk(sb, (size_t)j, sc, st), sc, st, off, mine + block_at(o, me, j), len);
        put(m, arrive(m, me, s), s);
        if (!in_place)
            copy_block(m, blk(sb, (size_t)me, sc, st), sc, st, blk(a->rbuf, (size_t)me, a->rcount, a->rdt),
                       a->rcount, a->rdt, off, len);
        o->phase = 1;
        o->idx = 1;
    }
    for (; o->idx < n; o->idx++) {
        int i = (me + o->idx) % n;
        if (get(arrive(m, i, s)) < s)
            return 0;
        put_bytes(blk(a->rbuf, (size_t)i, a->rcount, a->rdt), a->rcount, a->rdt, off,
                  area(o, i, s) + block_at(o, i, me), len);
    }
    return 1;
}

typedef int (*step_fn)(struct shm_op *o, uint64_t s, size_t off, size_t len);

static step_fn step_of(enum ferry_coll_kind kind)
{
    switch (kind) {
    case FERRY_COLL_BARRIER: return barrier_step;
    case FERRY_COLL_BCAST: return bcast_step;
    case FERRY_COLL_REDUCE: return reduce_step;
    case FERRY_COLL_ALLREDUCE: return allreduce_step;
    case FERRY_COLL_GATHER: return gather_step;
    case FERRY_COLL_SCATTER: return scatter_step;
    case FERRY_COLL_ALLGATHER: return allgather_step;
    case FERRY_COLL_ALLTOALL: return alltoall_step;
    default: return NULL;
    }
}

/* Set up o for the call; takes its sequence numbers. */
static void op_init(struct shm_op *o, struct shm_comm *m, enum ferry_coll_kind kind, const struct ferry_coll_args *a)
{
    memset(o, 0, sizeof *o);
    o->m = m;
    o->kind = kind;
    o->a = *a;
    int n = m->n, me = m->rank;
    size_t sl = m->step;
    switch (kind) {
    case FERRY_COLL_BARRIER:
        o->chunk = 1;
        barrier_roles(o);
        break;
    case FERRY_COLL_BCAST:
        o->total = ferry_dt_bytes(a->rdt, a->rcount);
        o->chunk = sl;
        break;
    case FERRY_COLL_REDUCE:
    case FERRY_COLL_ALLREDUCE: {
        o->unit = red_unit(a);
        o->tree = red_tree_of(m, kind, a);
        size_t e = o->unit->size;
        o->total = ferry_dt_bytes(a->rdt, a->rcount);
        o->chunk = sl / e * e;
        if (kind == FERRY_COLL_ALLREDUCE && o->total > (size_t)ferry_cfg.coll_shm_flat_max) {
            /* chunk + its result block (a 1/n share, rounded up) fit in a slot */
            o->big = 1;
            o->chunk = (sl / e - 1) * (size_t)n / (size_t)(n + 1) * e;
            o->cu = o->chunk;
        }
        break;
    }
    case FERRY_COLL_GATHER:
        o->total = me == a->root ? ferry_dt_bytes(a->rdt, a->rcount) : ferry_dt_bytes(a->sdt, a->scount);
        o->chunk = sl;
        break;
    case FERRY_COLL_SCATTER:
        o->total = me == a->root ? ferry_dt_bytes(a->sdt, a->scount) : ferry_dt_bytes(a->rdt, a->rcount);
        o->chunk = sl / (size_t)n;
        break;
    case FERRY_COLL_ALLGATHER:
        o->total = ferry_dt_bytes(a->rdt, a->rcount);
        o->chunk = sl;
        break;
    case FERRY_COLL_ALLTOALL:
        o->total = ferry_dt_bytes(a->rdt, a->rcount);
        o->chunk = sl / (size_t)n;
        break;
    default:
        break;
    }
    /* a small call's data rides in the post lines (scatter and alltoall post
     * a block for each other rank, block_at) */
    size_t need = kind == FERRY_COLL_SCATTER || kind == FERRY_COLL_ALLTOALL ? o->total * (size_t)(n - 1) : o->total;
    if (kind != FERRY_COLL_BARRIER && need <= POST_BYTES && !o->big) {
        o->inl = 1;
        o->chunk = o->total ? o->total : 1;
    }
    o->nchunks = o->total ? (int)((o->total + o->chunk - 1) / o->chunk) : 1;
    o->seq0 = m->seq + 1;
    m->seq += (uint64_t)o->nchunks;
}

/* Advance o; 1 when it finished. */
static int op_run(struct shm_op *o)
{
    struct shm_comm *m = o->m;
    if (o->k == 0 && o->phase == 0 && m->mydone + 1 < o->seq0)
        return 0;   /* an earlier (nonblocking) operation on the communicator is still running */
    step_fn fn = step_of(o->kind);
    while (o->k < o->nchunks) {
        uint64_t s = o->seq0 + (uint64_t)o->k;
        size_t off = (size_t)o->k * o->chunk, len = o->total ? FERRY_MIN(o->chunk, o->total - off) : 0;
        if (!fn(o, s, off, len))
            return 0;
        put(m, &line(m, m->rank)->done, s);
        m->mydone = s;
        o->k++;
        o->phase = 0;
        o->idx = 0;
    }
    return 1;
}

/* One empty turn of a blocking wait. */
static void shm_wait(struct shm_op *o, unsigned *idle)
{
    struct shm_comm *m = o->m;
    ferry_biglock_yield();   /* MPI_THREAD_MULTIPLE: other threads' calls go on meanwhile */
    if (o->keep_cpu && !ferry_keep_cpu_yields(++o->polls)) {
        /* nobody here to yield to (barrier_step) */
        cpu_relax();
        return;
    }
    ++*idle;
    if (!m->may_sleep) {
        /* a CPU of our own: spin; keep point-to-point traffic and
         * nonblocking operations moving now and then */
        cpu_relax();
        if ((*idle & 63) == 0) {
            ferry_progress();
            if (*idle > (unsigned long)ferry_cfg.spin && (*idle & 1023) == 0)
                sched_yield();
        }
        return;
    }
    if (*idle <= (unsigned long)ferry_cfg.coll_shm_spin) {
        cpu_relax();
        return;
    }
    ferry_progress();
    if (*idle <= (unsigned long)(ferry_cfg.coll_shm_spin + ferry_cfg.coll_shm_yields) || ferry_biglock_on ||
        !ferry_yielded_enough(&o->yield_since)) {
        sched_yield();
        return;
    }
    /* sleep until a rank publishes a flag; the timeout is a safety net for
     * point-to-point work that nobody rings this futex for */
    struct shm_ctl *c = ctl(m);
    uint32_t seen = __atomic_load_n(&c->bell, __ATOMIC_ACQUIRE);
    __atomic_fetch_add(&c->sleepers, 1, __ATOMIC_SEQ_CST);   /* then load the flags (see put) */
    if (!op_run(o)) {
        struct timespec ts = {0, 1000 * 1000};
        futex(&c->bell, FUTEX_WAIT, seen, &ts);
    }
    __atomic_fetch_sub(&c->sleepers, 1, __ATOMIC_SEQ_CST);
}

/* FERRY_COLL_<NAME>=shm and the default rules: run a blocking call now. */
int shm_direct(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a)
{
    struct shm_op o;
    op_init(&o, find(c, 0), kind, a);
    unsigned idle = 0;
    while (!op_run(&o)) {
        shm_wait(&o, &idle);
        if (o.k == o.nchunks)
            break;   /* finished inside shm_wait */
    }
    return MPI_SUCCESS;
}

/* ---- nonblocking: a poll step of a schedule -------------------------------------- */

static int poll_op(struct ferry_sched *sc, struct sched_step *st)
{
    struct shm_op *o = st->arg;
    return op_run(o) ? 1 : o->keep_cpu ? SCHED_POLL_KEEP_CPU : 0;
}

static int build(struct ferry_sched *s, const struct ferry_coll_args *a, enum ferry_coll_kind kind)
{
    struct shm_op *o = sched_alloc(s, sizeof *o);
    op_init(o, find(s->comm, s->nb), kind, a);
    if (a->op)
        sched_set_op(s, a->op);
    struct sched_step *st = sched_poll(s, poll_op, o, 0);
    /* the step holds references on the datatypes while the operation runs */
    struct ferry_datatype *t1 = a->rdt ? a->rdt : a->sdt, *t2 = a->rdt ? a->sdt : NULL;
    if (t1)
        ferry_dt_retain(st->at = t1);
    if (t2)
        ferry_dt_retain(st->bt = t2);
    return MPI_SUCCESS;
}

/* The algorithm entries of the selection table (coll_impl.h): one shared-memory
 * operation each, of its kind. */
#define SHM_ENTRY(name, kind)                                               \
    int name##_shm(struct ferry_sched *s, const struct ferry_coll_args *a) \
    {                                                                       \
        return build(s, a, kind);                                           \
    }
SHM_ENTRY(barrier, FERRY_COLL_BARRIER)
SHM_ENTRY(bcast, FERRY_COLL_BCAST)
SHM_ENTRY(reduce, FERRY_COLL_REDUCE)
SHM_ENTRY(allreduce, FERRY_COLL_ALLREDUCE)
SHM_ENTRY(gather, FERRY_COLL_GATHER)
SHM_ENTRY(scatter, FERRY_COLL_SCATTER)
SHM_ENTRY(allgather, FERRY_COLL_ALLGATHER)
SHM_ENTRY(alltoall, FERRY_COLL_ALLTOALL)
