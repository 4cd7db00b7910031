/* Nonblocking context-id agreement, for MPI_Comm_idup.
 *
 * The blocking agreement (core/comm.c) takes the maximum of every member's
 * next free id: nothing can be allocated while it runs, so the maximum is
 * free everywhere. A nonblocking one runs while the application goes on, and
 * may create other communicators (blocking or not) before it ends, taking ids
 * the agreement is about to settle on. So it proceeds in rounds, each an
 * allreduce-max of {failed, proposal} on the parent's collective sequence:
 *
 *   - every member proposes a fresh id block it reserves at once (its next
 *     free id), so its own proposal stays free whatever happens meanwhile;
 *   - when the round ends the candidate v is the largest proposal; a member
 *     accepts it if v is its own proposal, if it took no other ids since
 *     proposing (v is at or above its own block, which nothing else uses) or
 *     if v is at or above its next free id, and reserves v at once; otherwise
 *     it reports a failure;
 *   - the next round carries the failures: none, and v is the id; some, and
 *     that round's proposals give the next candidate.
 *
 * A member only fails when v falls inside ids it took between proposing and
 * seeing v (several idups in flight at once, or interleaved with other
 * communicator creation), so the second round nearly always ends it. Proposals and
 * accepted candidates of rounds that did not settle are simply never used.
 * Each round's steps are appended by the poll step that ends the round before
 * (the number of rounds is known only as it runs).
 *
 * The ids come from a space of their own (ferry_comm_next_nb_ctx): blocking
 * agreements, which may be waiting while a round ends here, never take them. */
#include "coll/coll_impl.h"
#include "core/comm.h"
#include "core/util.h"

struct agree {
    struct ferry_comm *newcomm;
    int nids;              /* ids to reserve: 2 (intracommunicator) or 4 */
    int round;
    uint32_t mine[2];      /* {this member failed the last candidate, fresh proposal} */
    uint32_t got[2];       /* the maximum of both over the parent */
    uint32_t inter[2];     /* intercommunicator: the other group's maximum */
    uint32_t candidate;
};

static int round_done(struct ferry_sched *s, struct sched_step *st);

/* Reserve a fresh block and append one round of agreement on it. */
static void add_round(struct ferry_sched *s, struct agree *g, uint32_t failed)
{
    uint32_t p = ferry_comm_next_nb_ctx();
    ferry_comm_reserve_nb_ctx(p, g->nids);
    g->mine[0] = failed;
    g->mine[1] = p;
    struct ferry_datatype *u32 = ferry_datatype_get(MPI_UINT32_T);
    struct ferry_coll_args a = {.sbuf = g->mine, .rbuf = g->got, .rcount = 2, .rdt = u32,
                                .op = ferry_op_get(MPI_MAX)};
    sched_use(s, SPACE_MAIN);
    if (s->comm->remote) {
        /* each group gets the other's maximum; a second allreduce on that
         * gives each group its own: the larger of the two is global */
        a.rbuf = g->inter;
        coll_inter[FERRY_COLL_ALLREDUCE](s, &a);
        sched_fence(s);
        sched_use(s, SPACE_MAIN);
        a.sbuf = g->inter;
        a.rbuf = g->got;
        coll_inter[FERRY_COLL_ALLREDUCE](s, &a);
    } else {
        allreduce_rd(s, &a);
    }
    sched_fence(s);
    sched_poll(s, round_done, g, 0);
}

static int round_done(struct ferry_sched *s, struct sched_step *st)
{
    struct agree *g = st->arg;
    if (s->comm->remote) {
        for (int i = 0; i < 2; i++)
            if (g->inter[i] > g->got[i])
                g->got[i] = g->inter[i];
    }
    if (g->round > 0 && g->got[0] == 0) {
        /* nobody failed the last candidate: it is the id */
        ferry_comm_set_ctx(g->newcomm, g->candidate);
        ferry_comm_release(g->newcomm);
        return 1;
    }
    /* v >= this member's proposal p, and the block [p, p + nids) is this
     * agreement's alone: v is free here if it is p, if nothing took ids since
     * p's block (the next free id did not move on), or if v is at or above
     * the next free id */
    uint32_t v = g->got[1], p = g->mine[1], next = ferry_comm_next_nb_ctx();
    int ok = v == p || next == p + (uint32_t)g->nids || v >= next;
    if (ok)
        ferry_comm_reserve_nb_ctx(v, g->nids);
    g->candidate = v;
    g->round++;
    add_round(s, g, !ok);   /* appends after this step: the engine runs it next */
    return 1;
}

int ferry_coll_agree_ctx_start(struct ferry_comm *parent, struct ferry_comm *newcomm, int nids,
                               struct ferry_request **req)
{
    struct ferry_sched *s = sched_new(parent, 1);   /* Comm_idup: a nonblocking collective */
    struct agree *g = sched_alloc(s, sizeof *g);
    *g = (struct agree){.newcomm = newcomm, .nids = nids};
    newcomm->refs++;   /* until its id is set, whatever the application frees */
    add_round(s, g, 0);
    sched_start(s, req);
    return MPI_SUCCESS;
}
