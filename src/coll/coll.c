/* Collective dispatch and the internal collectives the rest of the library
 * uses. */
#include "coll/coll_impl.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/op.h"
#include "core/util.h"

/* Rooted collectives: the root; -1 for the others. */
static int root_of(enum ferry_coll_kind kind, const struct ferry_coll_args *a)
{
    switch (kind) {
    case FERRY_COLL_BCAST:
    case FERRY_COLL_GATHER:
    case FERRY_COLL_GATHERV:
    case FERRY_COLL_SCATTER:
    case FERRY_COLL_SCATTERV:
    case FERRY_COLL_REDUCE:
        return a->root;
    default:
        return -1;
    }
}

/* Remember what follows a barrier: the shared-memory barrier orders its
 * ranks' leaving for the collective that came after the previous
 * one (shm_coll.c). Every rank calls the collectives of a communicator in
 * the same order with the same roots, so every rank predicts the same; in a
 * program whose ranks start nonblocking ones at different points among the
 * blocking ones (sched.h) predictions can differ, and the barrier copes
 * (barrier_step). */
static void note_call(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a)
{
    if (c->coll_after_barrier) {
        c->coll_barrier_next = (int)kind;
        c->coll_barrier_root = root_of(kind, a);
    }
    c->coll_after_barrier = kind == FERRY_COLL_BARRIER;
}

static const struct coll_alg *choose(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a,
                                     int blocking)
{
    const struct coll_alg *alg = coll_select(kind, c, a, blocking);
    if (FERRY_UNLIKELY(ferry_verbose >= 3))
        ferry_log(3, "%s on %d ranks, %zu bytes: %s", ferry_coll_name(kind), c->size, coll_call_bytes(kind, c, a),
                  alg->name);
    return alg;
}

int coll_build_chosen(enum ferry_coll_kind kind, struct ferry_sched *s, const struct ferry_coll_args *a)
{
    return choose(kind, s->comm, a, 0)->build(s, a);
}

int ferry_coll(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a,
               struct ferry_request **req)
{
    struct ferry_sched *s;
    int rc, nb = req != NULL;
    if (c->remote) {
        s = sched_new(c, nb);
        coll_build_fn fn = coll_inter[kind];
        rc = fn ? fn(s, a) : MPI_ERR_COMM;
    } else if (note_call(kind, c, a), nb && shm_deferring(kind, c, a)) {
        s = sched_new(c, 1);
        rc = shm_defer(s, kind, a);
    } else {
        const struct coll_alg *alg = choose(kind, c, a, req == NULL);
        /* blocking calls of the shared-memory algorithms skip the schedule;
         * they still take the call's tag, as a schedule would, so that a
         * blocking call's tag is its number among the blocking calls */
        if (!req && alg->direct) {
            c->coll_seq++;
            return alg->direct(kind, c, a);
        }
        s = sched_new(c, nb);
        rc = alg->build(s, a);
    }
    if (rc) {
        sched_discard(s);
        return rc;
    }
    if (req) {
        sched_start(s, req);
        return MPI_SUCCESS;
    }
    return sched_run(s);
}

__attribute__((weak)) int ferry_topo_neighbors(struct ferry_comm *c, int *indeg, const int **in, int *outdeg,
                                               const int **out)
{
    return MPI_ERR_TOPOLOGY;
}

int ferry_coll_barrier(struct ferry_comm *c)
{
    struct ferry_coll_args a = {0};
    return ferry_coll(FERRY_COLL_BARRIER, c, &a, NULL);
}

int ferry_coll_allgather(struct ferry_comm *c, const void *mine, size_t n, void *all)
{
    struct ferry_datatype *byte = sched_byte();
    struct ferry_coll_args a = {.sbuf = mine, .scount = n, .sdt = byte, .rbuf = all, .rcount = n, .rdt = byte};
    return ferry_coll(FERRY_COLL_ALLGATHER, c, &a, NULL);
}

int ferry_coll_agree(struct ferry_comm *c, int *flag, struct ferry_request **req)
{
    struct ferry_sched *s = sched_new_agree(c);
    struct ferry_coll_args a = {.sbuf = MPI_IN_PLACE, .rbuf = flag, .rcount = 1,
                                .rdt = ferry_datatype_get(MPI_INT), .op = ferry_op_get(MPI_BAND)};
    allreduce_rd(s, &a);
    if (req) {
        sched_start(s, req);
        return MPI_SUCCESS;
    }
    return sched_run(s);
}

int ferry_coll_allreduce_max_u32(struct ferry_comm *c, uint32_t *v)
{
    struct ferry_coll_args a = {.sbuf = MPI_IN_PLACE, .rbuf = v, .rcount = 1,
                                .rdt = ferry_datatype_get(MPI_UINT32_T), .op = ferry_op_get(MPI_MAX)};
    if (c->remote) {
        /* MPI semantics give each group the other group's maximum x; a second
         * round on x gives each group its own maximum y: max(x, y) is global */
        uint32_t x, y;
        a.sbuf = v, a.rbuf = &x;
        int rc = ferry_coll(FERRY_COLL_ALLREDUCE, c, &a, NULL);
        a.sbuf = &x, a.rbuf = &y;
        if (!rc)
            rc = ferry_coll(FERRY_COLL_ALLREDUCE, c, &a, NULL);
        *v = x > y ? x : y;
        return rc;
    }
    return ferry_coll(FERRY_COLL_ALLREDUCE, c, &a, NULL);
}
