/* Communicator and group objects (see comm.h). */
#include "core/comm.h"
#include "transport/sock/sock.h"
#include "coll/coll.h"
#include "core/attr.h"
#include "core/biglock.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/info.h"
#include "core/progress.h"
#include "core/request.h"
#include "core/runtime.h"
#include "core/topo.h"
#include "core/util.h"
#include "proto/proto.h"
#include <assert.h>
#include <stdlib.h>
#include <string.h>

static struct ferry_objtab comms, groups;
struct ferry_comm *ferry_comm_world, *ferry_comm_self;
struct ferry_group *ferry_group_empty;
/* Next context id this process has not used; world uses 0/1, self 2/3.
 * Blocking agreements take ids below FERRY_CTX_NB_BASE, nonblocking ones
 * (Comm_idup) ids from there on, each space with its own counter: a blocking
 * agreement reads the counter when it starts and reserves when it ends, and
 * the progress it makes while waiting may settle nonblocking agreements, which
 * therefore must not take ids it could settle on. */
static uint32_t next_ctx = 4, next_nb_ctx = FERRY_CTX_NB_BASE;

/* Internal tags in the management context (user tags are >= 0). */
#define TAG_AGREE_REDUCE  (-101)
#define TAG_AGREE_BCAST   (-102)
#define TAG_INTER_HDR     (-103)
#define TAG_INTER_DATA    (-104)
#define TAG_INTER_BCAST   (-105)

/* ---- groups ---------------------------------------------------------------- */

struct ferry_group *ferry_group_new(int n, const int *world)
{
    struct ferry_group *g = ferry_xcalloc(1, sizeof *g);
    g->refs = 1;
    g->size = n;
    g->world = ferry_xmalloc((size_t)(n ? n : 1) * sizeof(int));
    memcpy(g->world, world, (size_t)n * sizeof(int));
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (FERRY_UNLIKELY(!ferry_rt.peers[world[i]].tr))
            ferry_sock_add_peer(world[i]);   /* a process of another world, met through a group */
    for (int i = 0; i < n; i++)
        if (world[i] == ferry_rt.self) {
            g->rank = i;
            break;
        }
    g->handle = ferry_objtab_add(&groups, g);
    return g;
}

void ferry_group_release(struct ferry_group *g)
{
    if (g == ferry_group_empty)
        return;
    if (--g->refs > 0)
        return;
    ferry_objtab_remove(&groups, g->handle);
    free(g->world);
    free(g);
}

struct ferry_group *ferry_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return ferry_group_empty;
    return ferry_objtab_get(&groups, h);
}

int ferry_group_rank_of(const struct ferry_group *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return i;
    return MPI_UNDEFINED;
}

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

int ferry_group_relation(const struct ferry_group *a, const struct ferry_group *b)
{
    if (a->size != b->size)
        return MPI_UNEQUAL;
    if (!memcmp(a->world, b->world, (size_t)a->size * sizeof(int)))
        return MPI_IDENT;
    /* same members in another order? (a group has no duplicates) */
    int *sa = ferry_xmalloc((size_t)a->size * sizeof(int) + 1), *sb = ferry_xmalloc((size_t)b->size * sizeof(int) + 1);
    memcpy(sa, a->world, (size_t)a->size * sizeof(int));
    memcpy(sb, b->world, (size_t)b->size * sizeof(int));
    qsort(sa, (size_t)a->size, sizeof(int), cmp_int);
    qsort(sb, (size_t)b->size, sizeof(int), cmp_int);
    int same = !memcmp(sa, sb, (size_t)a->size * sizeof(int));
    free(sa);
    free(sb);
    return same ? MPI_SIMILAR : MPI_UNEQUAL;
}

/* ---- communicators ----------------------------------------------------------- */

struct ferry_comm *ferry_comm_new(struct ferry_group *g, uint32_t ctx, MPI_Errhandler eh)
{
    struct ferry_comm *c = ferry_xcalloc(1, sizeof *c);
    c->refs = 1;
    c->ctx = ctx;
    c->group = g;
    c->rank = g->rank;
    c->size = g->size;
    c->errhandler = eh;
    c->coll_barrier_next = c->coll_barrier_root = -1;
    ferry_errhandler_retain(eh);
    c->handle = ferry_objtab_add(&comms, c);
    return c;
}

struct ferry_comm *ferry_intercomm_new(struct ferry_group *local, struct ferry_group *remote, uint32_t ctx,
                                       MPI_Errhandler eh)
{
    struct ferry_comm *c = ferry_comm_new(local, ctx, eh);
    c->remote = remote;
    local->refs++;
    c->local_comm = ferry_comm_new(local, ctx + 2, eh);
    return c;
}

struct ferry_comm *ferry_comm_shell(struct ferry_comm *c, uint32_t ctx, MPI_Errhandler eh)
{
    c->group->refs++;
    if (c->remote) {
        c->remote->refs++;
        return ferry_intercomm_new(c->group, c->remote, ctx, eh);
    }
    return ferry_comm_new(c->group, ctx, eh);
}

int ferry_comm_dup_private(struct ferry_comm *c, MPI_Errhandler eh, struct ferry_comm **out)
{
    uint32_t ctx;
    *out = NULL;
    int rc = ferry_comm_agree_ctx_n(c, &ctx, c->remote ? 4 : 2);
    if (rc)
        return rc;
    *out = ferry_comm_shell(c, ctx, eh);
    (*out)->topo = ferry_topo_dup(c->topo);
    return MPI_SUCCESS;
}

void ferry_comm_set_ctx(struct ferry_comm *c, uint32_t ctx)
{
    c->ctx = ctx;
    if (c->local_comm)
        c->local_comm->ctx = ctx + 2;
}

void ferry_comm_release(struct ferry_comm *c)
{
    if (--c->refs > 0)
        return;
    if (c != ferry_comm_world && c != ferry_comm_self)
        ferry_objtab_remove(&comms, c->handle);
    ferry_errhandler_release(c->errhandler);
    ferry_group_release(c->group);
    if (c->remote)
        ferry_group_release(c->remote);
    if (c->local_comm)
        ferry_comm_release(c->local_comm);
    ferry_topo_free(c->topo);
    ferry_attr_list_drop(&c->attrs);
    if (c->info)
        ferry_info_free(c->info);
    ferry_coll_comm_free(c);   /* its shared-memory collective segment, if any */
    free(c);
}

struct ferry_comm *ferry_comm_get(MPI_Comm h)
{
    if (h == MPI_COMM_WORLD)
        return ferry_comm_world;
    if (h == MPI_COMM_SELF)
        return ferry_comm_self;
    return ferry_objtab_get(&comms, h);
}

/* ---- management-context point-to-point --------------------------------------- */

static struct ferry_request *mg_start(struct ferry_comm *c, void *buf, size_t n, int peer, int tag, int send)
{
    struct ferry_request *r = ferry_request_new(send ? FERRY_REQ_SEND : FERRY_REQ_RECV);
    ferry_request_setup(r, buf, n, ferry_datatype_get(MPI_BYTE), c, peer, tag, FERRY_CTX_MGMT(c),
                        FERRY_MODE_STANDARD);
    if (send)
        ferry_proto_isend(r);
    else
        ferry_proto_irecv(r);
    return r;
}

static void mg_finish(struct ferry_request *r)
{
    ferry_request_wait(r);
    ferry_request_free(r);
}

void ferry_comm_mgmt_send(struct ferry_comm *c, const void *buf, size_t n, int dest, int tag)
{
    if (dest != MPI_PROC_NULL)
        mg_finish(mg_start(c, (void *)buf, n, dest, tag, 1));
}

void ferry_comm_mgmt_recv(struct ferry_comm *c, void *buf, size_t n, int src, int tag)
{
    if (src != MPI_PROC_NULL)
        mg_finish(mg_start(c, buf, n, src, tag, 0));
}

void ferry_comm_mgmt_sendrecv(struct ferry_comm *c, const void *sbuf, size_t sn, int dest, void *rbuf, size_t rn,
                              int src, int tag)
{
    struct ferry_request *rr = src != MPI_PROC_NULL ? mg_start(c, rbuf, rn, src, tag, 0) : NULL;
    struct ferry_request *sr = dest != MPI_PROC_NULL ? mg_start(c, (void *)sbuf, sn, dest, tag, 1) : NULL;
    if (sr)
        mg_finish(sr);
    if (rr)
        mg_finish(rr);
}

/* Trees over "virtual ranks" 0..n-1 of c: virtual rank i is c's rank
 * map[i] (map NULL: identity); `me` is this process's virtual rank. */
struct vgroup {
    struct ferry_comm *c;
    int n, me;
    const int *map;
};

static int vrank(const struct vgroup *v, int i)
{
    return v->map ? v->map[i] : i;
}

/* Binomial tree rooted at virtual rank 0. */
static void v_bcast(const struct vgroup *v, void *buf, size_t len, int tag)
{
    int mask = 1;
    while (mask < v->n) {
        if (v->me & mask) {
            ferry_comm_mgmt_recv(v->c, buf, len, vrank(v, v->me - mask), tag);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (v->me + mask < v->n)
            ferry_comm_mgmt_send(v->c, buf, len, vrank(v, v->me + mask), tag);
        mask >>= 1;
    }
}

static void v_reduce_max(const struct vgroup *v, uint32_t *val, int tag)
{
    for (int mask = 1; mask < v->n; mask <<= 1) {
        if (v->me & mask) {
            ferry_comm_mgmt_send(v->c, val, sizeof *val, vrank(v, v->me - mask), tag);
            return;
        }
        if (v->me + mask < v->n) {
            uint32_t other;
            ferry_comm_mgmt_recv(v->c, &other, sizeof other, vrank(v, v->me + mask), tag);
            if (other > *val)
                *val = other;
        }
    }
}

void ferry_comm_mgmt_bcast(struct ferry_comm *c, void *buf, size_t n, int root, int tag)
{
    int *map = ferry_xmalloc((size_t)c->size * sizeof(int));
    for (int i = 0; i < c->size; i++)
        map[i] = (i + root) % c->size;
    struct vgroup v = {c, c->size, (c->rank - root + c->size) % c->size, map};
    v_bcast(&v, buf, n, tag);
    free(map);
}

void ferry_comm_mgmt_reduce_max(struct ferry_comm *c, uint32_t *val, int root, int tag)
{
    int *map = ferry_xmalloc((size_t)c->size * sizeof(int));
    for (int i = 0; i < c->size; i++)
        map[i] = (i + root) % c->size;
    struct vgroup v = {c, c->size, (c->rank - root + c->size) % c->size, map};
    v_reduce_max(&v, val, tag);
    free(map);
}

void ferry_comm_mgmt_allreduce_max(struct ferry_comm *c, uint32_t *val, int tag)
{
    struct vgroup v = {c, c->size, c->rank, NULL};
    v_reduce_max(&v, val, tag);
    v_bcast(&v, val, sizeof *val, tag);
}

void ferry_comm_mgmt_alltoallv_int(struct ferry_comm *c, const int *sbuf, const int *scount, const int *sdispl,
                                   int **rbuf, int *rcount, int tag)
{
    int n = c->size, r = c->rank;
    rcount[r] = scount[r];
    for (int k = 1; k < n; k++) {
        int dst = (r + k) % n, src = (r - k + n) % n;
        ferry_comm_mgmt_sendrecv(c, &scount[dst], sizeof(int), dst, &rcount[src], sizeof(int), src, tag);
    }
    size_t total = 0;
    int *rdispl = ferry_xmalloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        rdispl[i] = (int)total;
        total += (size_t)rcount[i];
    }
    int *out = ferry_xmalloc((total + 1) * sizeof(int));
    memcpy(out + rdispl[r], sbuf + sdispl[r], (size_t)scount[r] * sizeof(int));
    for (int k = 1; k < n; k++) {
        int dst = (r + k) % n, src = (r - k + n) % n;
        ferry_comm_mgmt_sendrecv(c, sbuf + sdispl[dst], (size_t)scount[dst] * sizeof(int), dst, out + rdispl[src],
                                 (size_t)rcount[src] * sizeof(int), src, tag);
    }
    free(rdispl);
    *rbuf = out;
}

void ferry_comm_inter_exchange(struct ferry_comm *ic, uint32_t *v, const void *mine, size_t nmine, void **theirs,
                               size_t *ntheirs)
{
    struct ferry_comm *lc = ic->local_comm;
    struct vgroup lv = {lc, lc->size, lc->rank, NULL};
    v_reduce_max(&lv, v, TAG_AGREE_REDUCE);
    uint64_t hdr[2] = {*v, nmine}, rhdr[2] = {0, 0};
    char *remote = NULL;
    if (lc->rank == 0) {
        ferry_comm_mgmt_sendrecv(ic, hdr, sizeof hdr, 0, rhdr, sizeof rhdr, 0, TAG_INTER_HDR);
        remote = ferry_xmalloc((size_t)rhdr[1] + 1);
        ferry_comm_mgmt_sendrecv(ic, mine, nmine, 0, remote, (size_t)rhdr[1], 0, TAG_INTER_DATA);
        if (rhdr[0] > *v)
            *v = (uint32_t)rhdr[0];
        rhdr[0] = *v;
    }
    v_bcast(&lv, rhdr, sizeof rhdr, TAG_INTER_BCAST);
    *v = (uint32_t)rhdr[0];
    if (lc->rank != 0)
        remote = ferry_xmalloc((size_t)rhdr[1] + 1);
    v_bcast(&lv, remote, (size_t)rhdr[1], TAG_INTER_BCAST);
    *theirs = remote;
    *ntheirs = (size_t)rhdr[1];
}

/* ---- context ids ------------------------------------------------------------- */

uint32_t ferry_comm_next_ctx(void)
{
    return next_ctx;
}

void ferry_comm_reserve_ctx(uint32_t ctx, int n)
{
    if (ctx + (uint32_t)n > next_ctx)
        next_ctx = ctx + (uint32_t)n;
    if (next_ctx >= FERRY_CTX_NB_BASE)
        ferry_fatal("out of communicator context ids");
}

uint32_t ferry_comm_next_nb_ctx(void)
{
    return next_nb_ctx;
}

void ferry_comm_reserve_nb_ctx(uint32_t ctx, int n)
{
    if (ctx + (uint32_t)n > next_nb_ctx)
        next_nb_ctx = ctx + (uint32_t)n;
    if (next_nb_ctx >= FERRY_CTX_MGMT_BIT)
        ferry_fatal("out of communicator context ids for nonblocking creation");
}

/* The maximum of *v over every member of parent (both groups of an
 * intercommunicator). */
static void parent_max(void *arg, uint32_t *v)
{
    struct ferry_comm *parent = arg;
    if (parent->remote) {
        void *theirs;
        size_t nt;
        ferry_comm_inter_exchange(parent, v, NULL, 0, &theirs, &nt);
        free(theirs);
    } else {
        ferry_coll_allreduce_max_u32(parent, v);
    }
}

/* ... over the members of a group, reached through a parent with a tag */
struct group_max_arg {
    struct vgroup v;
    int tag;
};
static void group_max(void *arg, uint32_t *v)
{
    struct group_max_arg *g = arg;
    v_reduce_max(&g->v, v, g->tag);
    v_bcast(&g->v, v, sizeof *v, g->tag);
}

/* Agree on n consecutive ids free at every member; max(arg, &v) turns v into
 * its maximum over the members.
 *
 * A process with one thread in MPI at a time allocates nothing while the
 * agreement runs, so the maximum of the members' next free ids is free there.
 *
 * Under MPI_THREAD_MULTIPLE other threads may run agreements of their own on
 * other communicators meanwhile (each hands the lock over while it waits),
 * and two of them must not settle on the same id. Each attempt reserves a
 * fresh block p at once, so concurrent agreements of this process propose
 * different blocks; the candidate v (the largest proposal) is free here if it
 * is p, if nothing was taken since p (the next free id is p + n) or if it
 * lies at or above the next free id; then this member reserves it. A second
 * maximum tells whether any member found v taken, and if one did, all try
 * again (the ids of failed attempts are never used).
 *
 * Members choose their thread level each for itself (MPI-3.1 12.4.3: a
 * spawned child, the other job of a connect, one rank of a job may differ),
 * yet every member must run the same rounds. So the first round's proposals
 * carry AGREE_THREADED (ids stay below it) from members that need the checked
 * protocol: without it in the maximum, that round's v is the answer (one
 * round, as before); with it, every member sees it and all run the checked
 * protocol (one round more for the true maximum). A job of mixed levels hung
 * in its first Comm_dup, and MPICH's threads/spawn tests (threaded parents,
 * children in MPI_Init) broke their connection this way. */
#define AGREE_THREADED 0x80000000u
static_assert(FERRY_CTX_NB_BASE <= AGREE_THREADED, "context ids stay below the flag");

uint32_t ferry_comm_agree_ctx_with(void (*max)(void *arg, uint32_t *v), void *arg, int n)
{
    for (;;) {
        uint32_t p = next_ctx;
        if (ferry_biglock_on)
            ferry_comm_reserve_ctx(p, n);
        uint32_t v = p | (ferry_biglock_on ? AGREE_THREADED : 0);
        max(arg, &v);
        if (!(v & AGREE_THREADED)) {
            ferry_comm_reserve_ctx(v, n);
            return v;
        }
        v = p;
        max(arg, &v);
        uint32_t next = next_ctx;
        uint32_t taken = !(v == p || next == p + (uint32_t)n || v >= next);
        if (!taken)
            ferry_comm_reserve_ctx(v, n);
        max(arg, &taken);
        if (!taken)
            return v;
    }
}

int ferry_comm_agree_ctx_n(struct ferry_comm *parent, uint32_t *ctx, int n)
{
    *ctx = ferry_comm_agree_ctx_with(parent_max, parent, n);
    return 0;
}

int ferry_comm_agree_ctx(struct ferry_comm *parent, uint32_t *ctx)
{
    return ferry_comm_agree_ctx_n(parent, ctx, 2);   /* ctx for point-to-point, ctx + 1 for collectives */
}

int ferry_comm_agree_ctx_group(struct ferry_comm *parent, struct ferry_group *g, int tag, uint32_t *ctx)
{
    /* virtual rank i = group rank i, reached through its rank in parent */
    int *map = ferry_xmalloc((size_t)g->size * sizeof(int) + 1);
    for (int i = 0; i < g->size; i++)
        map[i] = ferry_group_rank_of(parent->group, g->world[i]);
    struct group_max_arg a = {{parent, g->size, g->rank, map}, tag};
    *ctx = ferry_comm_agree_ctx_with(group_max, &a, 2);
    free(map);
    return 0;
}

uint32_t ferry_comm_inter_exchange_ctx(struct ferry_comm *ic, int n, const void *mine, size_t nmine, void **theirs,
                                       size_t *ntheirs)
{
    /* the flag as in ferry_comm_agree_ctx_with: threaded members on either
     * side make both run the checked agreement (v may be another thread's) */
    uint32_t v = next_ctx | (ferry_biglock_on ? AGREE_THREADED : 0);
    ferry_comm_inter_exchange(ic, &v, mine, nmine, theirs, ntheirs);
    if (v & AGREE_THREADED)
        return ferry_comm_agree_ctx_with(parent_max, ic, n);
    ferry_comm_reserve_ctx(v, n);
    return v;
}

/* ---- init / finalize -------------------------------------------------------- */

void ferry_comm_init(void)
{
    ferry_objtab_init(&comms, FERRY_OBJ_COMM, 2);
    ferry_objtab_init(&groups, FERRY_OBJ_GROUP, 2);
    ferry_group_empty = ferry_xcalloc(1, sizeof *ferry_group_empty);
    ferry_group_empty->handle = MPI_GROUP_EMPTY;
    ferry_group_empty->refs = 1 << 30;   /* predefined: never freed by users */
    ferry_group_empty->rank = MPI_UNDEFINED;
    ferry_group_empty->world = ferry_xmalloc(sizeof(int));

    int n = ferry_rt.world_size;
    int *ids = ferry_xmalloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        ids[i] = ferry_rt.uid_base + i;
    struct ferry_group *gw = ferry_group_new(n, ids);
    free(ids);
    struct ferry_group *gs = ferry_group_new(1, &ferry_rt.self);

    ferry_comm_world = ferry_xcalloc(1, sizeof *ferry_comm_world);
    *ferry_comm_world = (struct ferry_comm){.handle = MPI_COMM_WORLD, .refs = 1, .ctx = 0, .rank = gw->rank,
                                            .size = n, .group = gw, .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(ferry_comm_world->name, "MPI_COMM_WORLD");
    ferry_comm_self = ferry_xcalloc(1, sizeof *ferry_comm_self);
    *ferry_comm_self = (struct ferry_comm){.handle = MPI_COMM_SELF, .refs = 1, .ctx = 2, .rank = 0, .size = 1,
                                           .group = gs, .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(ferry_comm_self->name, "MPI_COMM_SELF");
    next_ctx = 4;
    next_nb_ctx = FERRY_CTX_NB_BASE;
}

void ferry_comm_finalize(void)
{
    ferry_comm_release(ferry_comm_self);
    ferry_comm_release(ferry_comm_world);
    ferry_comm_world = ferry_comm_self = NULL;
    free(ferry_group_empty->world);
    free(ferry_group_empty);
    ferry_group_empty = NULL;
    ferry_objtab_destroy(&comms);
    ferry_objtab_destroy(&groups);
}
