/* Node-aware composition: a stage among the ranks of each node (SPACE_NODE)
 * and a stage among one leader per node (SPACE_LEADERS, the lowest rank of
 * each node). Today every rank runs on one node, so the leader stage is
 * empty unless FERRY_COLL_FAKE_PPN cuts the communicator into pretend nodes
 * of consecutive ranks (which is how the tests exercise it). Running across
 * nodes needs the node of every rank: node_of() is the one place to teach. */
#include "coll/coll_impl.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/util.h"
#include <stdlib.h>

/* Ranks per node when the communicator's node map is known: pretend nodes,
 * or everything on this node. 0 when unknown. */
static int node_span(struct ferry_comm *c)
{
    if (ferry_cfg.coll_fake_ppn > 0)
        return (int)FERRY_MIN((long)c->size, ferry_cfg.coll_fake_ppn);
    for (int i = 0; i < c->size; i++)
        if (ferry_rt.peers[c->group->world[i]].local < 0)
            return 0;
    return c->size;
}

int hier_available(struct ferry_comm *c)
{
    return !c->remote && node_span(c) > 0;
}

/* Node of comm rank i (nodes are runs of `span` consecutive ranks). */
static int node_of(int i, int span)
{
    return i / span;
}

struct hier {
    int span, nodes, node, leader;   /* leader: this rank leads its node */
};

int hier_setup(struct ferry_sched *s)
{
    struct ferry_comm *c = s->comm;
    int span = node_span(c), n = c->size;
    if (span <= 0)
        return MPI_ERR_INTERN;
    int node = node_of(c->rank, span), first = node * span;
    int cnt = FERRY_MIN(span, n - first);
    sched_sub(s, SPACE_NODE, cnt, c->group->world + first);
    if (c->rank == first) {
        int nodes = (n + span - 1) / span;
        int *w = ferry_xmalloc((size_t)nodes * sizeof(int));
        for (int i = 0; i < nodes; i++)
            w[i] = c->group->world[i * span];
        sched_sub(s, SPACE_LEADERS, nodes, w);
        free(w);
    }
    return MPI_SUCCESS;
}

static void info(struct ferry_sched *s, struct hier *h)
{
    struct ferry_comm *c = s->comm;
    h->span = node_span(c);
    h->nodes = (c->size + h->span - 1) / h->span;
    h->node = node_of(c->rank, h->span);
    h->leader = c->rank == h->node * h->span;
}

/* Allreduce: reduce to each node's leader, allreduce among leaders,
 * broadcast within each node. */
int allreduce_hier(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct hier h;
    struct red R;
    int rc = hier_setup(s);
    if (rc)
        return rc;
    info(s, &h);
    red_init(s, a->op, a->rdt, a->rcount, &R);
    sched_use(s, SPACE_NODE);
    void *acc = build_reduce_binomial(s, &R, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, NULL, 0);
    sched_fence(s);
    if (h.leader && h.nodes > 1) {
        sched_use(s, SPACE_LEADERS);
        struct ferry_coll_args b = {.sbuf = MPI_IN_PLACE, .rbuf = acc, .rcount = R.n, .rdt = R.unit, .op = a->op};
        allreduce_rd(s, &b);
        sched_fence(s);
    }
    sched_use(s, SPACE_NODE);
    void *res = h.leader ? acc : R.dt == R.unit ? a->rbuf : sched_tmp(s, R.unit, R.n);
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
    int rc = hier_setup(s);
    if (rc)
        return rc;
    info(s, &h);
    int r = s->comm->rank, root = a->root, rnode = node_of(root, h.span), rleader = rnode * h.span;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    sched_use(s, SPACE_NODE);
    void *acc = build_reduce_binomial(s, &R, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, NULL, 0);
    sched_fence(s);
    if (h.leader && h.nodes > 1) {
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
    int rc = hier_setup(s);
    if (rc)
        return rc;
    info(s, &h);
    int rnode = node_of(a->root, h.span);
    sched_use(s, SPACE_NODE);
    if (h.node == rnode) {
        build_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, a->root - rnode * h.span);
        sched_fence(s);
    }
    if (h.leader && h.nodes > 1) {
        sched_use(s, SPACE_LEADERS);
        build_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, rnode);
        sched_fence(s);
    }
    sched_use(s, SPACE_NODE);
    if (h.node != rnode)
        build_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, 0);
    sched_use(s, SPACE_MAIN);
    return MPI_SUCCESS;
}
