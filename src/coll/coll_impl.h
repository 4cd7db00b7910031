/* Internal interface of the collective algorithms: each algorithm is a
 * builder that appends the steps of one collective to a schedule, addressing
 * the schedule's current space (s->rank, s->size), so that composed
 * algorithms (intercommunicators, node-aware) reuse the flat ones. */
#ifndef FERRY_COLL_IMPL_H
#define FERRY_COLL_IMPL_H
#include "coll/coll.h"
#include "coll/red_order.h"
#include "coll/sched.h"
#include "core/datatype.h"
#include "core/op.h"

typedef int (*coll_build_fn)(struct ferry_sched *s, const struct ferry_coll_args *a);

/* What an algorithm needs to be usable. */
enum {
    ALG_COMMUTE = 1,   /* a commutative op */
    ALG_POF2 = 2,      /* a power-of-two number of ranks */
    ALG_HIER = 4,      /* a node map of the communicator (node-aware composition) */
    ALG_SHM = 8,       /* the communicator's shared-memory segment (shm_coll.c) */
};

struct coll_alg {
    const char *name;
    coll_build_fn build;
    unsigned needs;
    /* optional: runs a blocking call directly, without a schedule */
    int (*direct)(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a);
};

/* Algorithm tables, one per collective (select.c reads them). */
struct coll_algs {
    const struct coll_alg *alg;
    int n;
};
extern const struct coll_algs coll_algs[FERRY_COLL_KINDS];

/* Pick the algorithm for a call (select.c); blocking: the call waits for it
 * (only then may a shared-memory segment be created). */
const struct coll_alg *coll_select(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a,
                                   int blocking);
/* The combination order of the point-to-point algorithm a reduce or
 * allreduce call would take without the shared-memory ones, which follow it
 * (red_order.h); *root: the binomial tree's root. */
enum red_order coll_red_order(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a,
                              int blocking, int *root);
/* The size that keys the choice (see the table format in select.c): bytes per
 * rank, the vector for reductions, this rank's block for gather/scatter; 0
 * for the v forms whose counts differ per rank. */
size_t coll_call_bytes(enum ferry_coll_kind kind, const struct ferry_comm *c, const struct ferry_coll_args *a);
/* Load FERRY_COLL_* forcing and the tuned table (once). */
void coll_select_init(void);

/* ---- reductions -------------------------------------------------------------- */
/* How this call's vector is reduced: n units of `unit`. */
struct red {
    struct ferry_datatype *unit;
    size_t per;        /* units per element of dt */
    size_t count;      /* elements of dt */
    size_t n;          /* units: count * per */
    struct ferry_datatype *dt;
    int commute;
};
void red_init(struct ferry_sched *s, struct ferry_op *op, struct ferry_datatype *dt, size_t count, struct red *r);
/* A writable unit array holding this rank's contribution src (count elements
 * of dt); `dst` (the user's result buffer, or NULL) is used in place when its
 * layout is the unit array's. */
void *red_acc(struct ferry_sched *s, const struct red *r, const void *src, void *dst);
/* Copy the result from acc to the user's buffer (nothing when acc is dst). */
void red_out(struct ferry_sched *s, const struct red *r, void *acc, void *dst);

/* ---- builders shared between collectives ----------------------------------- */
/* Binomial broadcast of (buf, count, dt) from root in the current space. */
void build_bcast_binomial(struct ferry_sched *s, void *buf, size_t count, struct ferry_datatype *dt, int root);
/* Binomial reduce of src (this rank's count elements of dt) to root. At root
 * the result goes to dst (user layout) when dst is not NULL; the unit array
 * holding the result is returned at root (NULL elsewhere). Order-preserving
 * when the op is not commutative (then the tree is rooted at rank 0 and 0
 * forwards the result to root). */
void *build_reduce_binomial(struct ferry_sched *s, const struct red *r, const void *src, void *dst, int root);
/* Dissemination barrier in the current space. */
void build_dissemination(struct ferry_sched *s);

/* Builders for intercommunicators (inter.c) */
extern const coll_build_fn coll_inter[FERRY_COLL_KINDS];
/* Node-aware composition (hier.c): is the node of every rank of c known? */
int hier_available(struct ferry_comm *c);
/* Ranks on this node in c, for the selection table. */
int coll_ppn(struct ferry_comm *c);
/* Can the shared-memory algorithm of kind serve this call (blocking: a
 * blocking call, else a nonblocking one, which has a segment of its own)? May
 * create the communicator's segment (collectively; a nonblocking call only
 * starts that); without `forced` only after a few eligible calls. */
int shm_usable(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a, int blocking,
               int forced);
/* Run a blocking call of a shared-memory algorithm (shm_usable said yes). */
int shm_direct(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a);
/* Must this nonblocking call wait for the segment an earlier nonblocking call
 * is creating before it can choose its algorithm? (A blocking call creates
 * its own segment at once.) Then shm_defer builds s as a first step that
 * chooses (coll_build_chosen) when the outcome is known. */
int shm_deferring(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a);
int shm_defer(struct ferry_sched *s, enum ferry_coll_kind kind, const struct ferry_coll_args *a);
/* Select the algorithm of a nonblocking call on an intracommunicator and
 * build it into s (coll.c). */
int coll_build_chosen(enum ferry_coll_kind kind, struct ferry_sched *s, const struct ferry_coll_args *a);

/* Small helpers */
static inline int is_pof2(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}
static inline int pof2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}
/* Start of element-block i of (buf, count per block, dt). */
static inline void *blk(const void *buf, size_t i, size_t count, const struct ferry_datatype *dt)
{
    return (char *)buf + (MPI_Aint)(i * count) * dt->extent;
}

/* Algorithm builders per collective (defined in the per-collective files). */
#define DECL(name) int name(struct ferry_sched *s, const struct ferry_coll_args *a);
DECL(barrier_dissemination) DECL(barrier_binomial) DECL(barrier_shm)
DECL(bcast_shm) DECL(reduce_shm) DECL(allreduce_shm)
DECL(gather_shm) DECL(scatter_shm) DECL(allgather_shm) DECL(alltoall_shm)
DECL(bcast_binomial) DECL(bcast_scatter_allgather) DECL(bcast_chain) DECL(bcast_hier)
DECL(gather_binomial) DECL(gather_linear) DECL(gatherv_linear)
DECL(scatter_binomial) DECL(scatter_linear) DECL(scatterv_linear)
DECL(allgather_ring) DECL(allgather_rd) DECL(allgather_bruck) DECL(allgather_linear)
DECL(allgatherv_ring) DECL(allgatherv_linear)
DECL(alltoall_pairwise) DECL(alltoall_linear) DECL(alltoall_bruck)
DECL(alltoallv_pairwise) DECL(alltoallv_linear) DECL(alltoallw_pairwise) DECL(alltoallw_linear)
DECL(reduce_binomial) DECL(reduce_redscat_gather) DECL(reduce_hier)
DECL(allreduce_rd) DECL(allreduce_redscat_allgather) DECL(allreduce_ring) DECL(allreduce_reduce_bcast)
DECL(allreduce_hier)
DECL(reduce_scatter_ring) DECL(reduce_scatter_pairwise) DECL(reduce_scatter_reduce_scatterv)
DECL(reduce_scatter_block_ring) DECL(reduce_scatter_block_pairwise) DECL(reduce_scatter_block_reduce_scatterv)
DECL(scan_rd) DECL(scan_linear) DECL(exscan_rd) DECL(exscan_linear)
DECL(neighbor_allgather_linear) DECL(neighbor_allgatherv_linear) DECL(neighbor_alltoall_linear)
DECL(neighbor_alltoallv_linear) DECL(neighbor_alltoallw_linear)
#undef DECL

#endif
