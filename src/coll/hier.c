/* Node-aware composition: a stage among the ranks of each node (SPACE_NODE)
 * and a stage among one leader per node (SPACE_LEADERS, the lowest rank of
 * each node).
 *
 * The node of every rank comes from node_id(), the one place to teach about
 * multi-node jobs: today every rank runs on this node (ferry_rt.peers[w].local
 * >= 0), so the leader stage is empty unless FERRY_COLL_FAKE_PPN cuts the
 * communicator into pretend nodes of consecutive ranks (which is how the
 * tests exercise it). Once the boot layer knows each world rank's node, return
 * it from node_id() and everything below works with any placement. */
#include "coll/coll_impl.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/util.h"
#include <stdlib.h>

/* Node of comm rank i: an integer shared by the ranks of one node, -1 when
 * not known. */
static int node_id(struct ferry_comm *c, int i)
{
    if (ferry_cfg.coll_fake_ppn > 0)
        return (int)(i / ferry_cfg.coll_fake_ppn);
    return ferry_rt.peers[c->group->world[i]].local >= 0 ? 0 : -1;
}

int hier_available(struct ferry_comm *c)
{
    if (c->remote)
        return 0;
    for (int i = 0; i < c->size; i++)
        if (node_id(c, i) < 0)
            return 0;
    return 1;
}

struct hier {
    int nodes;       /* number of nodes */
    int *node;       /* comm rank -> node index (nodes numbered by their lowest rank) */
    int *leader;     /* node index -> comm rank of its leader (lowest rank) */
    int *pos;        /* comm rank -> rank within its node */
    int me;          /* this rank's node index */
    int is_leader;
};

/* Build the node map and the node / leaders spaces of s. */
static int setup(struct ferry_sched *s, struct hier *h)
{
    struct ferry_comm *c = s->comm;
    int n = c->size;
    int *id = sched_alloc(s, (size_t)n * sizeof(int));
    h->node = sched_alloc(s, (size_t)n * sizeof(int));
    h->pos = sched_alloc(s, (size_t)n * sizeof(int));
    h->leader = sched_alloc(s, (size_t)n * sizeof(int));
    int *count = sched_alloc(s, (size_t)n * sizeof(int));
    h->nodes = 0;
    for (int i = 0; i < n; i++) {
        id[i] = node_id(c, i);
        if (id[i] < 0)
            return MPI_ERR_INTERN;
        int k = 0;
        while (k < h->nodes && id[h->leader[k]] != id[i])
            k++;
        if (k == h->nodes) {
            h->leader[h->nodes++] = i;
            count[k] = 0;
        }
        h->node[i] = k;
        h->pos[i] = count[k]++;
    }
    h->me = h->node[c->rank];
    h->is_leader = h->leader[h->me] == c->rank;
    int *w = ferry_xmalloc((size_t)n * sizeof(int));
    int m = 0;
    for (int i = 0; i < n; i++)
        if (h->node[i] == h->me)
            w[m++] = c->group->world[i];
    sched_sub(s, SPACE_NODE, m, w);
    if (h->is_leader) {
        for (int k = 0; k < h->nodes; k++)
            w[k] = c->group->world[h->leader[k]];
        sched_sub(s, SPACE_LEADERS, h->nodes, w);
    }
    free(w);
    return MPI_SUCCESS;
}

/* Allreduce: reduce to each node's leader, allreduce among leaders,
 * broadcast within each node. */
int allreduce_hier(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct hier h;
    struct red R;
    int rc = setup(s, &h);
    if (rc)
        return rc;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    sched_use(s, SPACE_NODE);
    void *acc = build_reduce_binomial(s, &R, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, NULL, 0);
    sched_fence(s);
    if (h.is_leader && h.nodes > 1) {
        sched_use(s, SPACE_LEADERS);
        struct ferry_coll_args b = {.sbuf = MPI_IN_PLACE, .rbuf = acc, .rcount = R.n, .rdt = R.unit, .op = a->op};
        allreduce_rd(s, &b);
        sched_fence(s);
    }
    sched_use(s, SPACE_NODE);
    void *res = h.is_leader ? acc : R.dt == R.unit ? a->rbuf : sched_tmp(s, R.unit, R.n);
    build_bcast_binomial(s, res, R.n, R.unit, 0);
    sched_fence(s);
    red_out(s, &R, res, a->rbuf);
    sched_use(s, SPACE_MAIN);
    return MPI_SUCCESS;
}

/* Reduce: reduce to each node's leader, reduce among leaders to the leader
 * of root's node, which hands the result to root. */
int reduce_hier(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct hier h;
    struct red R;
    int rc = setup(s, &h);
    if (rc)
        return rc;
    int r = s->comm->rank, root = a->root, rnode = h.node[root], rleader = h.leader[rnode];
    red_init(s, a->op, a->rdt, a->rcount, &R);
    sched_use(s, SPACE_NODE);
    void *acc = build_reduce_binomial(s, &R, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, NULL, 0);
    sched_fence(s);
    if (h.is_leader && h.nodes > 1) {
        sched_use(s, SPACE_LEADERS);
        struct ferry_coll_args b = {.sbuf = MPI_IN_PLACE, .rbuf = acc, .rcount = R.n, .rdt = R.unit, .op = a->op,
                                    .root = rnode};
        reduce_binomial(s, &b);
        sched_fence(s);
    }
    sched_use(s, SPACE_MAIN);
    if (r == rleader && r != root)
        sched_send(s, acc, R.n, R.unit, root);
    else if (r == root && r != rleader)
        sched_recv(s, a->rbuf, R.count, R.dt, rleader);
    else if (r == root)
        red_out(s, &R, acc, a->rbuf);
    return MPI_SUCCESS;
}

/* Bcast: within root's node from root, among leaders from root's node's
 * leader, then within every other node from its leader. */
int bcast_hier(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct hier h;
    int rc = setup(s, &h);
    if (rc)
        return rc;
    int rnode = h.node[a->root];
    sched_use(s, SPACE_NODE);
    if (h.me == rnode) {
        build_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, h.pos[a->root]);
        sched_fence(s);
    }
    if (h.is_leader && h.nodes > 1) {
        sched_use(s, SPACE_LEADERS);
        build_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, rnode);
        sched_fence(s);
    }
    sched_use(s, SPACE_NODE);
    if (h.me != rnode)
        build_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, 0);
    sched_use(s, SPACE_MAIN);
    return MPI_SUCCESS;
}
