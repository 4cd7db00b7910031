/* Collectives: every MPI-3.1 collective on intra- and intercommunicators,
 * blocking and nonblocking, plus the neighborhood collectives.
 *
 * Each collective is built as a schedule (sched.h) by one of several
 * algorithms; a blocking call runs the schedule, a nonblocking one starts it
 * and returns a request that completes with it. The algorithm is chosen per
 * call (select.c): a FERRY_COLL_<NAME> variable or MPIX_Ferry_coll_set()
 * forces one, else the table in FERRY_COLL_TABLE (written by ferry-tune),
 * else built-in rules on (message size, ranks, ranks per node). */
#ifndef FERRY_COLL_H
#define FERRY_COLL_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

struct ferry_comm;
struct ferry_datatype;
struct ferry_op;
struct ferry_request;

enum ferry_coll_kind {
    FERRY_COLL_BARRIER,
    FERRY_COLL_BCAST,
    FERRY_COLL_GATHER,
    FERRY_COLL_GATHERV,
    FERRY_COLL_SCATTER,
    FERRY_COLL_SCATTERV,
    FERRY_COLL_ALLGATHER,
    FERRY_COLL_ALLGATHERV,
    FERRY_COLL_ALLTOALL,
    FERRY_COLL_ALLTOALLV,
    FERRY_COLL_ALLTOALLW,
    FERRY_COLL_REDUCE,
    FERRY_COLL_ALLREDUCE,
    FERRY_COLL_REDUCE_SCATTER,
    FERRY_COLL_REDUCE_SCATTER_BLOCK,
    FERRY_COLL_SCAN,
    FERRY_COLL_EXSCAN,
    FERRY_COLL_NEIGHBOR_ALLGATHER,
    FERRY_COLL_NEIGHBOR_ALLGATHERV,
    FERRY_COLL_NEIGHBOR_ALLTOALL,
    FERRY_COLL_NEIGHBOR_ALLTOALLV,
    FERRY_COLL_NEIGHBOR_ALLTOALLW,
    FERRY_COLL_KINDS
};

/* The arguments of any collective, as the API layer validated them.
 *   rooted (bcast, gather, scatter, reduce): root as passed (MPI_ROOT and
 *     MPI_PROC_NULL on intercommunicators);
 *   reductions: the vector is (rbuf, rcount, rdt) and sbuf may be MPI_IN_PLACE;
 *     reduce_scatter: rcounts; reduce_scatter_block: rcount per rank;
 *     bcast: (rbuf, rcount, rdt);
 *   v forms: counts and displacements in elements; alltoallw: displacements
 *     in bytes and one datatype per peer; neighbor_alltoallw: MPI_Aint byte
 *     displacements in sdispls_a / rdispls_a. */
struct ferry_coll_args {
    const void *sbuf;
    size_t scount;
    struct ferry_datatype *sdt;
    void *rbuf;
    size_t rcount;
    struct ferry_datatype *rdt;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    const MPI_Aint *sdispls_a, *rdispls_a;
    struct ferry_datatype *const *sdts, *const *rdts;
    struct ferry_op *op;
    int root;
};

/* Run the collective (req NULL) or start it (*req gets the request).
 * Returns MPI_SUCCESS or an error class, not yet passed to an error handler. */
int ferry_coll(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a,
               struct ferry_request **req);
const char *ferry_coll_name(enum ferry_coll_kind kind);
/* Force algorithm alg for collective coll (names as in FERRY_COLL_<NAME>,
 * lower case: "allreduce", "ring"); alg NULL or "auto" ends forcing, coll
 * NULL ends all forcing. Process-wide; all ranks must agree before their next
 * collective. Returns 0, or -1 for an unknown name. */
int ferry_coll_force(const char *coll, const char *alg);
/* Name of algorithm i of collective coll, NULL past the last one. */
const char *ferry_coll_alg_name(const char *coll, int i);

/* Topology of a communicator with a process topology: this rank's in- and
 * out-neighbors in the order the neighborhood collectives use (Cartesian:
 * per dimension the -1 then the +1 neighbor, MPI_PROC_NULL where there is
 * none; graph: the adjacency list for both; dist graph: sources and
 * destinations). The arrays stay owned by the communicator. Returns
 * MPI_ERR_TOPOLOGY when c has no topology. Provided by the topology module
 * (weak fallback in coll.c: no communicator has a topology). */
int ferry_topo_neighbors(struct ferry_comm *c, int *indeg, const int **in, int *outdeg, const int **out);

/* The communicator is being freed: drop what the collectives keep for it
 * (its shared-memory segment). Optional: stale entries are also swept. */
void ferry_coll_comm_free(struct ferry_comm *c);

/* Internal collectives the rest of the library uses (communicator creation,
 * init and finalize). On an intercommunicator they follow MPI semantics. */
int ferry_coll_barrier(struct ferry_comm *c);
/* Allgather of n bytes per rank into all (size * n bytes). */
int ferry_coll_allgather(struct ferry_comm *c, const void *mine, size_t n, void *all);
/* Every rank's v becomes the maximum over the communicator. */
int ferry_coll_allreduce_max_u32(struct ferry_comm *c, uint32_t *v);
/* MPIX_Comm_agree / iagree on an intracommunicator: *flag = AND of every
 * rank's flag, ordered only with the other agreements on c (not with its
 * collectives). Run it (req NULL) or start it. */
int ferry_coll_agree(struct ferry_comm *c, int *flag, struct ferry_request **req);
/* Nonblocking context-id agreement over parent (intra or inter) for the
 * communicator newcomm, created with a placeholder id: nids ids are reserved
 * and newcomm gets them (ferry_comm_set_ctx) when *req completes
 * (ctx_agree.c). */
int ferry_coll_agree_ctx_start(struct ferry_comm *parent, struct ferry_comm *newcomm, int nids,
                               struct ferry_request **req);

#endif
