/* Shared-memory collectives for communicators whose ranks all run on this
 * node: barrier, bcast, reduce and allreduce of small messages through a
 * segment the communicator's ranks map, with per-rank flags on their own
 * cache lines and increasing sequence numbers instead of messages.
 *
 * Segment (one per communicator, created at the first collective that wants
 * it, which must be a blocking one so that every rank creates it at the same
 * point; named /ferry-<jobid>-c<ctx>-<n>, mode 0600, unlinked as soon as
 * every rank mapped it):
 *
 *     struct shm_line line[n]      rank r writes only line[r]:
 *                                    arrive  last op whose input r has posted
 *                                    rel     last op whose result r published
 *                                    done    last op r has finished
 *     char res[2][SHM_SLOT]        result / broadcast data, by op parity
 *     char slot[n][2][SHM_SLOT]    rank r's input, by op parity
 *
 * Every shared-memory operation on a communicator gets the next sequence
 * number s (the same on every rank: ranks start collectives in the same
 * order); a rank runs its shared-memory operations in that order (op s
 * starts once its own done == s - 1). Buffers alternate by the parity of s,
 * so a buffer of op s is reused by op s + 2 only: whoever writes it first
 * waits until its readers are done with s (done >= s). Flag stores are
 * release stores after the data, flag loads acquire loads before it.
 *
 * The operations are poll steps of an ordinary schedule, so they run as
 * nonblocking collectives too, and the segment is reached only through the
 * steps. Waiting ranks spin, then yield (sched.c); nothing sleeps on a flag.
 * The default rules use them for communicators of 4 or more ranks after a
 * few small collectives, and never with more ranks than CPUs (busy flags are
 * costly there); FERRY_COLL_<NAME>=shm or the tuned table still select them. */
#include "coll/coll_impl.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/util.h"
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SHM_SLOT 8192   /* bytes of data one operation may carry */

struct shm_line {
    uint64_t arrive, rel, done;
    char pad[FERRY_CACHELINE - 3 * sizeof(uint64_t)];
};
static_assert(sizeof(struct shm_line) == FERRY_CACHELINE, "one flag line per rank");

/* Per-communicator state in this process. Communicators are told apart by
 * their context id (never reused); entries of freed communicators are swept
 * when a new segment is made, or dropped by ferry_coll_comm_free. */
struct shm_comm {
    uint32_t ctx;
    struct ferry_comm *comm;
    MPI_Comm handle;
    int n, rank;
    char *base;
    size_t len;
    uint64_t seq;      /* last sequence number handed out */
    int uses;          /* eligible blocking collectives so far (lazy creation) */
    int failed;        /* creation failed: never retried */
    struct shm_comm *next;
};
static struct shm_comm *comms;

#define LAZY_USES 8   /* default rules create a segment after this many eligible calls */

static struct shm_line *line(struct shm_comm *m, int r)
{
    return (struct shm_line *)m->base + r;
}
static char *res(struct shm_comm *m, uint64_t s)
{
    return m->base + (size_t)m->n * sizeof(struct shm_line) + (s & 1) * SHM_SLOT;
}
static char *slot(struct shm_comm *m, int r, uint64_t s)
{
    return m->base + (size_t)m->n * sizeof(struct shm_line) + 2 * SHM_SLOT + ((size_t)r * 2 + (s & 1)) * SHM_SLOT;
}
static uint64_t get(const uint64_t *f)
{
    return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}
static void put(uint64_t *f, uint64_t v)
{
    __atomic_store_n(f, v, __ATOMIC_RELEASE);
}
/* every rank's done >= s */
static int all_done(struct shm_comm *m, uint64_t s)
{
    for (int i = 0; i < m->n; i++)
        if (get(&line(m, i)->done) < s)
            return 0;
    return 1;
}
static int all_arrived(struct shm_comm *m, uint64_t s)
{
    for (int i = 0; i < m->n; i++)
        if (get(&line(m, i)->arrive) < s)
            return 0;
    return 1;
}

static void drop(struct shm_comm *m)
{
    if (m->base)
        munmap(m->base, m->len);
    free(m);
}

static struct shm_comm *find(struct ferry_comm *c)
{
    for (struct shm_comm *m = comms; m; m = m->next)
        if (m->ctx == c->ctx && m->comm == c)
            return m;
    return NULL;
}

/* Forget entries whose communicator is gone. */
static void sweep(void)
{
    struct shm_comm **pp = &comms;
    while (*pp) {
        struct shm_comm *m = *pp;
        struct ferry_comm *c = ferry_comm_get(m->handle);
        if (c != m->comm || !c || c->ctx != m->ctx) {
            *pp = m->next;
            drop(m);
        } else {
            pp = &m->next;
        }
    }
}

void ferry_coll_comm_free(struct ferry_comm *c)
{
    for (struct shm_comm **pp = &comms; *pp; pp = &(*pp)->next)
        if ((*pp)->comm == c && (*pp)->ctx == c->ctx) {
            struct shm_comm *m = *pp;
            *pp = m->next;
            drop(m);
            return;
        }
}

static struct shm_comm *entry(struct ferry_comm *c)
{
    struct shm_comm *m = find(c);
    if (!m) {
        m = ferry_xcalloc(1, sizeof *m);
        m->ctx = c->ctx, m->comm = c, m->handle = c->handle, m->n = c->size, m->rank = c->rank;
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

/* Agree on a flag with a blocking p2p allreduce (MIN) that never selects shm. */
static int agree(struct ferry_comm *c, int ok)
{
    struct ferry_sched *s = sched_new(c);
    struct ferry_coll_args a = {.sbuf = MPI_IN_PLACE, .rbuf = &ok, .rcount = 1,
                                .rdt = ferry_datatype_get(MPI_INT), .op = ferry_op_get(MPI_MIN)};
    allreduce_rd(s, &a);
    sched_run(s);
    return ok;
}

/* Collective over c: create and map the segment. 0 on success. */
static int attach(struct ferry_comm *c, struct shm_comm *m)
{
    sweep();
    char name[128], job[64];
    size_t i = 0;
    for (const char *p = ferry_rt.jobid; *p && i < sizeof job - 1; p++)
        job[i++] = (*p == '/' || *p == ' ') ? '_' : *p;
    job[i] = 0;
    snprintf(name, sizeof name, "/ferry-%s-c%u-%u", job, (unsigned)c->ctx, (unsigned)c->coll_seq);
    m->len = (size_t)c->size * sizeof(struct shm_line) + 2 * SHM_SLOT + (size_t)c->size * 2 * SHM_SLOT;
    int fd = -1, ok = 1;
    if (c->rank == 0) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        /* reserve the memory now: a full /dev/shm is an error here, not a SIGBUS later */
        ok = fd >= 0 && ftruncate(fd, (off_t)m->len) == 0 && posix_fallocate(fd, 0, (off_t)m->len) == 0;
    }
    ok = agree(c, ok);
    if (ok && c->rank != 0)
        fd = shm_open(name, O_RDWR, 0600);
    if (ok && fd >= 0) {
        void *p = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        m->base = p == MAP_FAILED ? NULL : p;
    }
    if (fd >= 0)
        close(fd);
    ok = agree(c, ok && m->base);
    if (c->rank == 0 && fd >= 0)
        shm_unlink(name);
    if (!ok) {
        if (m->base)
            munmap(m->base, m->len);
        m->base = NULL;
        m->failed = 1;
        ferry_log(1, "coll: no shared-memory segment for communicator %u; using point-to-point algorithms",
                  (unsigned)c->ctx);
        return -1;
    }
    return 0;
}

/* Bytes of the call's data as the shm algorithms carry it; 0 if it does not fit. */
static size_t call_size(enum ferry_coll_kind kind, const struct ferry_coll_args *a)
{
    if (kind == FERRY_COLL_BARRIER)
        return 1;
    if (kind == FERRY_COLL_BCAST) {
        size_t b = ferry_dt_bytes(a->rdt, a->rcount);
        return b <= SHM_SLOT ? b + 1 : 0;
    }
    struct ferry_datatype *unit;
    size_t per;
    if (ferry_op_unit(a->op, a->rdt, 0, &unit, &per) || !unit->predefined)
        return 0;
    size_t b = a->rcount * per * (size_t)unit->extent;
    return b <= SHM_SLOT ? b + 1 : 0;
}

int shm_usable(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a, int blocking,
               int forced)
{
    if (!ferry_cfg.coll_shm || c->remote || c->size < 2 || !call_size(kind, a))
        return 0;
    struct shm_comm *m = find(c);
    if (m && m->base)
        return 1;
    if ((m && m->failed) || !blocking || !all_local(c))
        return 0;
    /* by default: with 4 or more ranks (below that the point-to-point
     * algorithms take as few steps), each with a CPU, and a communicator
     * that keeps using small collectives */
    if (!forced && (ferry_rt.oversubscribed || c->size < 4 || ++entry(c)->uses < LAZY_USES))
        return 0;
    return attach(c, entry(c)) == 0;
}

int shm_ready(struct ferry_comm *c)
{
    struct shm_comm *m = find(c);
    return m && m->base;
}

/* ---- the operations: poll steps ------------------------------------------------ */

/* Everything a step needs; lives in the schedule's memory. */
struct shm_op {
    struct shm_comm *m;
    const void *src;   /* this rank's input (user layout) */
    void *dst;         /* result (user layout) */
    size_t count;
    struct ferry_datatype *dt, *unit;
    size_t n;          /* units */
    int root;
};

/* op s may start once this rank finished op s - 1 */
static int my_turn(struct shm_op *o, uint64_t s)
{
    return get(&line(o->m, o->m->rank)->done) >= s - 1;
}

static int finish(struct shm_op *o, uint64_t s)
{
    put(&line(o->m, o->m->rank)->done, s);
    return 1;
}

static int barrier_arrive(struct ferry_sched *sc, struct sched_step *st)
{
    struct shm_op *o = st->arg;
    if (!my_turn(o, st->seq))
        return 0;
    put(&line(o->m, o->m->rank)->arrive, st->seq);
    return 1;
}

static int barrier_leave(struct ferry_sched *sc, struct sched_step *st)
{
    struct shm_op *o = st->arg;
    struct shm_comm *m = o->m;
    if (m->rank == 0) {
        if (!all_arrived(m, st->seq))
            return 0;
        put(&line(m, 0)->rel, st->seq);
    } else if (get(&line(m, 0)->rel) < st->seq) {
        return 0;
    }
    return finish(o, st->seq);
}

/* Input: into this rank's slot (as units), once rank 0 has finished with
 * that slot's previous use. */
static int post_input(struct ferry_sched *sc, struct sched_step *st)
{
    struct shm_op *o = st->arg;
    struct shm_comm *m = o->m;
    uint64_t s = st->seq;
    if (!my_turn(o, s) || (s >= 2 && get(&line(m, 0)->done) < s - 2))
        return 0;
    sched_copy_now(o->src, o->count, o->dt, slot(m, m->rank, s), o->n, o->unit);
    put(&line(m, m->rank)->arrive, s);
    return 1;
}

/* Rank 0 folds the inputs in rank order into res[s] and publishes it. */
static int fold(struct ferry_sched *sc, struct sched_step *st)
{
    struct shm_op *o = st->arg;
    struct shm_comm *m = o->m;
    uint64_t s = st->seq;
    if (!all_arrived(m, s))   /* implies everyone finished s - 1, so res[s] (last read at s - 2) is free */
        return 0;
    char *r = res(m, s);
    size_t bytes = o->n * (size_t)o->unit->extent;
    memcpy(r, slot(m, m->n - 1, s), bytes);
    for (int i = m->n - 2; i >= 0; i--)
        ferry_op_apply(sc->op, slot(m, i, s), r, o->n, o->unit);
    put(&line(m, 0)->rel, s);
    return 1;
}

/* Copy res[s] out once published by `from`. */
static int take_result(struct ferry_sched *sc, struct sched_step *st)
{
    struct shm_op *o = st->arg;
    struct shm_comm *m = o->m;
    uint64_t s = st->seq;
    if (get(&line(m, st->peer)->rel) < s)
        return 0;
    if (o->dst)
        sched_copy_now(res(m, s), o->n, o->unit, o->dst, o->count, o->dt);
    return finish(o, s);
}

static int done_step(struct ferry_sched *sc, struct sched_step *st)
{
    return finish(st->arg, st->seq);
}

static int bcast_root(struct ferry_sched *sc, struct sched_step *st)
{
    struct shm_op *o = st->arg;
    struct shm_comm *m = o->m;
    uint64_t s = st->seq;
    if (!my_turn(o, s) || (s >= 2 && !all_done(m, s - 2)))
        return 0;
    size_t bytes = ferry_dt_bytes(o->dt, o->count);
    if (bytes)
        ferry_dt_pack(o->dt, o->src, 0, res(m, s), bytes);
    put(&line(m, m->rank)->rel, s);
    return finish(o, s);
}

static int bcast_take(struct ferry_sched *sc, struct sched_step *st)
{
    struct shm_op *o = st->arg;
    struct shm_comm *m = o->m;
    uint64_t s = st->seq;
    if (!my_turn(o, s) || get(&line(m, o->root)->rel) < s)
        return 0;
    size_t bytes = ferry_dt_bytes(o->dt, o->count);
    if (bytes)
        ferry_dt_unpack(o->dt, o->dst, 0, res(m, s), bytes);
    return finish(o, s);
}

static struct shm_op *op_new(struct ferry_sched *s, uint64_t *seq)
{
    struct shm_comm *m = find(s->comm);
    struct shm_op *o = sched_alloc(s, sizeof *o);
    memset(o, 0, sizeof *o);
    o->m = m;
    *seq = ++m->seq;
    return o;
}

int barrier_shm(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    uint64_t seq;
    struct shm_op *o = op_new(s, &seq);
    sched_poll(s, barrier_arrive, o, seq);
    sched_poll(s, barrier_leave, o, seq);
    return MPI_SUCCESS;
}

int bcast_shm(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    uint64_t seq;
    struct shm_op *o = op_new(s, &seq);
    o->src = a->rbuf, o->dst = a->rbuf, o->count = a->rcount, o->dt = a->rdt, o->root = a->root;
    ferry_dt_retain(o->dt);   /* released with the steps' types: keep one step referencing it */
    struct sched_step *st = sched_poll(s, s->comm->rank == a->root ? bcast_root : bcast_take, o, seq);
    st->at = o->dt;
    return MPI_SUCCESS;
}

static int reduce_common(struct ferry_sched *s, const struct ferry_coll_args *a, int all)
{
    uint64_t seq;
    struct red R;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    struct shm_op *o = op_new(s, &seq);
    o->src = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    o->count = R.count, o->dt = R.dt, o->unit = R.unit, o->n = R.n;
    int r = s->comm->rank, root = all ? r : a->root;
    o->dst = r == root ? a->rbuf : NULL;
    ferry_dt_retain(o->dt);
    struct sched_step *st = sched_poll(s, post_input, o, seq);
    st->at = o->dt;
    if (r == 0)
        sched_poll(s, fold, o, seq);
    if (r == root)
        sched_poll(s, take_result, o, seq)->peer = 0;
    else
        sched_poll(s, done_step, o, seq);
    return MPI_SUCCESS;
}

int allreduce_shm(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    return reduce_common(s, a, 1);
}

int reduce_shm(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    return reduce_common(s, a, 0);
}
