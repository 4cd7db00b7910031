/* Intercommunicators: Intercomm_create, Intercomm_merge, and the
 * intercommunicator forms of Comm_split and Comm_create.
 *
 * Construction: each local group first reduces its members' next free
 * context ids to its leader; the two leaders exchange (over the peer
 * communicator, or over the intercommunicator itself) that maximum and what
 * else the other side needs (group members, split table, merge order); each
 * leader broadcasts the answer to its group. Every process of both groups
 * then reserves the same ids: the new communicator's context is unique in
 * all of them (under MPI_THREAD_MULTIPLE the ids go through the confirmed
 * agreement of core/comm.c). Messages travel in management contexts
 * (comm.h), so they never meet user traffic. */
#include "api/check.h"
#include "api/comm_internal.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>

#define TAG_IC_REDUCE (-201)
#define TAG_IC_BCAST  (-202)
#define TAG_IC_TABLE  (-203)

/* Intercomm_create's members: a local group (lc) and its leader, who reaches
 * the other group's leader through pc with the caller's tag. */
struct ic_arg {
    struct ferry_comm *lc, *pc;
    int local_leader, remote_leader, tag;
};

/* The maximum of *v over both groups: a binomial reduction to each leader,
 * the leaders swap theirs, each broadcasts the larger to its group. */
static void ic_max(void *arg, uint32_t *v)
{
    struct ic_arg *a = arg;
    struct ferry_comm *lc = a->lc;
    ferry_comm_mgmt_reduce_max(lc, v, a->local_leader, TAG_IC_REDUCE);
    if (lc->rank == a->local_leader) {
        uint32_t theirs;
        ferry_comm_mgmt_sendrecv(a->pc, v, sizeof *v, a->remote_leader, &theirs, sizeof theirs, a->remote_leader,
                                 a->tag);
        if (theirs > *v)
            *v = theirs;
    }
    ferry_comm_mgmt_bcast(lc, v, sizeof *v, a->local_leader, TAG_IC_BCAST);
}

#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Intercomm_create";
    struct ferry_comm *lc, *pc = NULL;
    int rc = check_comm(local_comm, &lc, fn);
    if (rc || (rc = ferry_api_need_intra(lc, fn)))
        return rc;
    if (local_leader < 0 || local_leader >= lc->size)
        return ferry_error(lc, MPI_ERR_RANK, fn, "invalid local leader %d (communicator has %d ranks)", local_leader,
                           lc->size);
    if (tag < 0 || tag > FERRY_TAG_UB)
        return ferry_error(lc, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    if (!newintercomm)
        return ferry_error(lc, MPI_ERR_ARG, fn, "newintercomm pointer is NULL");
    int leader = lc->rank == local_leader;
    if (leader) {
        /* peer_comm and remote_leader only matter at the leader */
        if ((rc = check_comm(peer_comm, &pc, fn)))
            return rc;
        if (remote_leader < 0 || remote_leader >= ferry_comm_peer_count(pc))
            return ferry_error(lc, MPI_ERR_RANK, fn, "invalid remote leader %d", remote_leader);
        if (ferry_comm_world_rank(pc, remote_leader) == ferry_rt.self)
            return ferry_error(lc, MPI_ERR_RANK, fn, "the remote leader is this process");
    }

    /* 1. the context ids, agreed over both groups (ic_max) */
    struct ic_arg arg = {lc, pc, local_leader, remote_leader, tag};
    uint32_t ctx = ferry_comm_agree_ctx_with(ic_max, &arg, 4);
    int n = lc->size;
    /* 2. leaders swap their group sizes and members' world ranks */
    int hdr[1] = {0};   /* remote group size */
    int *rworld = NULL;
    if (leader) {
        int theirs;
        ferry_comm_mgmt_sendrecv(pc, &n, sizeof n, remote_leader, &theirs, sizeof theirs, remote_leader, tag);
        rworld = ferry_xmalloc((size_t)theirs * sizeof(int) + 1);
        ferry_comm_mgmt_sendrecv(pc, lc->group->world, (size_t)n * sizeof(int), remote_leader, rworld,
                                 (size_t)theirs * sizeof(int), remote_leader, tag);
        hdr[0] = theirs;
    }
    /* 3. the leader tells its group */
    ferry_comm_mgmt_bcast(lc, hdr, sizeof hdr, local_leader, TAG_IC_BCAST);
    if (!leader)
        rworld = ferry_xmalloc((size_t)hdr[0] * sizeof(int) + 1);
    ferry_comm_mgmt_bcast(lc, rworld, (size_t)hdr[0] * sizeof(int), local_leader, TAG_IC_BCAST);

    for (int i = 0; i < hdr[0]; i++)
        if (ferry_group_rank_of(lc->group, rworld[i]) != MPI_UNDEFINED) {
            int w = rworld[i];
            free(rworld);
            return ferry_error(lc, MPI_ERR_COMM, fn, "the local and remote groups overlap (world rank %d in both)", w);
        }
    struct ferry_group *remote = ferry_group_new(hdr[0], rworld);
    free(rworld);
    lc->group->refs++;
    *newintercomm = ferry_intercomm_new(lc->group, remote, ctx, lc->errhandler)->handle;
    return MPI_SUCCESS;
}

/* The group with high = false comes first; when both groups pass the same
 * value, the group whose first member has the lower world rank does. */
#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Intercomm_merge";
    struct ferry_comm *c;
    int rc = check_comm(intercomm, &c, fn);
    if (rc)
        return rc;
    if (!c->remote)
        return ferry_error(c, MPI_ERR_COMM, fn, "not an intercommunicator");
    if (!newintracomm)
        return ferry_error(c, MPI_ERR_ARG, fn, "newintracomm pointer is NULL");
    int mine = high != 0, *theirs;
    size_t nt;
    uint32_t ctx = ferry_comm_inter_exchange_ctx(c, 2, &mine, sizeof mine, (void **)&theirs, &nt);
    int rhigh = *theirs;
    free(theirs);
    int local_first = mine != rhigh ? !mine : c->group->world[0] < c->remote->world[0];
    struct ferry_group *first = local_first ? c->group : c->remote, *second = local_first ? c->remote : c->group;
    int n = first->size + second->size;
    int *w = ferry_xmalloc((size_t)n * sizeof(int));
    memcpy(w, first->world, (size_t)first->size * sizeof(int));
    memcpy(w + first->size, second->world, (size_t)second->size * sizeof(int));
    struct ferry_group *g = ferry_group_new(n, w);
    free(w);
    *newintracomm = ferry_comm_new(g, ctx, c->errhandler)->handle;
    return MPI_SUCCESS;
}

/* ---- Comm_split / Comm_create on intercommunicators ---------------------- */

struct ckey {
    int color, key, rank;
};

static int cmp_ckey(const void *a, const void *b)
{
    const struct ckey *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

/* World ranks of g's members whose table entry has this color, in (key, rank) order. */
static int *members(const struct ferry_group *g, const int *table, int color, int *count)
{
    struct ckey *k = ferry_xmalloc((size_t)g->size * sizeof *k + 1);
    int n = 0;
    for (int i = 0; i < g->size; i++)
        if (table[2 * i] == color)
            k[n++] = (struct ckey){color, table[2 * i + 1], i};
    qsort(k, (size_t)n, sizeof *k, cmp_ckey);
    int *w = ferry_xmalloc((size_t)n * sizeof(int) + 1);
    for (int i = 0; i < n; i++)
        w[i] = g->world[k[i].rank];
    free(k);
    *count = n;
    return w;
}

void ferry_api_intercomm_split(struct ferry_comm *c, int color, int key, struct ferry_comm **out)
{
    struct ferry_comm *lc = c->local_comm;
    int n = lc->size;
    /* every local member's (color, key), by local rank: ring allgather */
    int *table = ferry_xmalloc((size_t)n * 2 * sizeof(int));
    table[2 * lc->rank] = color;
    table[2 * lc->rank + 1] = key;
    for (int s = 0; s < n - 1; s++) {
        int sblk = (lc->rank - s + n) % n, rblk = (lc->rank - s - 1 + n) % n;
        ferry_comm_mgmt_sendrecv(lc, table + 2 * sblk, 2 * sizeof(int), (lc->rank + 1) % n, table + 2 * rblk,
                                 2 * sizeof(int), (lc->rank - 1 + n) % n, TAG_IC_TABLE);
    }
    void *rt;
    size_t nrt;
    uint32_t ctx = ferry_comm_inter_exchange_ctx(c, 4, table, (size_t)n * 2 * sizeof(int), &rt, &nrt);
    *out = NULL;
    if (color != MPI_UNDEFINED) {
        int nl, nr;
        int *lw = members(c->group, table, color, &nl);
        int *rw = members(c->remote, rt, color, &nr);
        if (nr > 0)
            *out = ferry_intercomm_new(ferry_group_new(nl, lw), ferry_group_new(nr, rw), ctx, c->errhandler);
        free(lw);
        free(rw);
    }
    free(rt);
    free(table);
}

void ferry_api_intercomm_create(struct ferry_comm *c, struct ferry_group *g, struct ferry_comm **out)
{
    void *rt;
    size_t nrt;
    uint32_t ctx = ferry_comm_inter_exchange_ctx(c, 4, g->world, (size_t)g->size * sizeof(int), &rt, &nrt);
    int nr = (int)(nrt / sizeof(int));
    *out = NULL;
    if (g->rank != MPI_UNDEFINED && nr > 0) {
        g->refs++;
        *out = ferry_intercomm_new(g, ferry_group_new(nr, rt), ctx, c->errhandler);
    }
    free(rt);
}
