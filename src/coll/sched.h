/* Collective schedules: every collective, blocking or not, is built as a
 * schedule (a list of steps) and run by one small engine.
 *
 * Steps are sends and receives (point-to-point requests in the communicator's
 * collective context ctx + 1), local reductions, local copies, and fences.
 * Sends and receives are started as soon as the engine reaches them and do
 * not wait for each other; a local step or a fence first waits until every
 * send and receive started before it has completed. So a "round" of an
 * algorithm is: its sends and receives, then a reduction or a fence.
 *
 * A started schedule is advanced from a progress hook, so a nonblocking
 * collective moves whenever the application calls into MPI (any test, wait or
 * blocking call); a blocking collective starts its schedule and waits for it.
 *
 * Tags: every collective call on a communicator takes the next number of the
 * communicator's coll_seq; all its messages carry that number (ranks start
 * collectives in the same order), so any number of nonblocking collectives
 * can be in flight on one communicator without their messages mixing.
 * Nonblocking collectives (and Comm_idup) count in a sequence of their own,
 * nbc_seq, with a tag bit of their own: blocking and nonblocking collectives
 * are ordered among themselves only, as in MPICH and Open MPI, where programs
 * that start a nonblocking collective before a blocking one on some ranks and
 * after it on others work (mpi4py's Iagree fallback does that: MPI calls such
 * a program erroneous, but it runs on both). The top
 * bits of the tag say which "space" a message belongs to: the communicator
 * itself, or a sub-communicator a composed algorithm uses (the local group of
 * an intercommunicator, the ranks of one node, the node leaders). A
 * sub-communicator is a private ferry_comm with the same context id whose
 * group is a subset; its messages are told apart from the parent's by the
 * space bits of the tag. (An intercommunicator's local group uses the
 * communicator's local_comm, which has a context of its own.) */
#ifndef FERRY_COLL_SCHED_H
#define FERRY_COLL_SCHED_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

struct ferry_comm;
struct ferry_datatype;
struct ferry_op;
struct ferry_request;

enum sched_space {
    SPACE_MAIN,     /* the communicator (on an intercommunicator: the remote group) */
    SPACE_LOCAL,    /* intercommunicator: the local group */
    SPACE_NODE,     /* the ranks of this node */
    SPACE_LEADERS,  /* one rank per node */
    SPACE_COUNT
};

enum step_kind { ST_SEND, ST_RECV, ST_REDUCE, ST_COPY, ST_FENCE, ST_POLL };

struct sched_step;
struct ferry_sched;
/* A local step that may have to wait for something outside the schedule
 * (shared-memory flags): returns 1 when done, 0 to be called again later,
 * SCHED_POLL_KEEP_CPU to be called again and telling that nothing else on
 * this CPU can use it meanwhile (an oversubscribed waiter keeps polling). */
#define SCHED_POLL_KEEP_CPU (-1)
typedef int (*sched_poll_fn)(struct ferry_sched *s, struct sched_step *st);

struct sched_step {
    uint8_t kind;           /* enum step_kind */
    uint8_t space;          /* send/recv: enum sched_space */
    uint8_t rev;            /* reduce: b = b op a instead of b = a op b */
    uint8_t overlap;        /* copy: does not wait for the sends and receives before it */
    uint8_t exact;          /* recv: a message of another length is an error; send: once the
                             * schedule has an error, sent empty (so the receiver sees one) */
    uint8_t consume;        /* recv: a reduction reads the buffer next; send: the receiver's
                             * reduction reads it (ferry_request.consume) */
    int peer;               /* send/recv: rank in the space's communicator */
    const void *a;          /* send/recv buffer; reduce input; copy source */
    size_t an;
    struct ferry_datatype *at;
    void *b;                /* reduce inout; copy destination */
    size_t bn;
    struct ferry_datatype *bt;
    struct ferry_request *req;
    sched_poll_fn poll;     /* poll: the function, with arg and seq as its arguments */
    void *arg;
    uint64_t seq;
};

/* Bytes of sched_alloc buffers a schedule holds inline (a shared-memory
 * operation, the alltoall plan of 8 ranks) */
#define SCHED_ARENA 512

struct ferry_sched {
    struct ferry_comm *comm;
    struct ferry_comm *sub[SPACE_COUNT];   /* communicator of each space (sub[0] = comm) */
    int tag;                               /* sequence number, without space bits */
    int nb;                                /* a nonblocking collective's (tag from nbc_seq) */
    struct ferry_op *op;                   /* reference held while the schedule lives */
    struct sched_step *steps;
    int nsteps, cap;
    int pos;                               /* next step to run */
    int inflight;                          /* first step that may still be in flight */
    void **mem;                            /* temporary buffers, freed with the schedule */
    int nmem, memcap;
    struct ferry_request *req;             /* the request that completes with the schedule */
    int err;                               /* first error class seen */
    int send_space, send_peer;             /* the first send's destination (send_peer -1: no send yet) */
    int fanout;                            /* sends to more than one destination */
    struct ferry_sched *next;              /* list of running schedules */
    /* the space the builders currently address */
    int space, rank, size;
    /* sched_alloc's small buffers, inside the schedule itself */
    size_t arena_used;
    _Alignas(16) unsigned char arena[SCHED_ARENA];
};

/* A schedule on c, with the next tag of c's blocking collectives (nb = 0)
 * or of its nonblocking ones (nb = 1). */
struct ferry_sched *sched_new(struct ferry_comm *c, int nb);
/* ... with the next tag of c's agreements instead (see sched.c). */
struct ferry_sched *sched_new_agree(struct ferry_comm *c);
/* Free a schedule that was never started (argument error found late). */
void sched_discard(struct ferry_sched *s);
/* Hold a reference on op for the schedule's lifetime. */
void sched_set_op(struct ferry_sched *s, struct ferry_op *op);

/* Make subsequent steps address space sp (its communicator must be set in
 * s->sub[sp]); s->rank and s->size follow. */
void sched_use(struct ferry_sched *s, int sp);
/* Install a sub-communicator for space sp: the given world ranks, in order
 * (this process must be among them). */
void sched_sub(struct ferry_sched *s, int sp, int n, const int *world_ranks);

void sched_send(struct ferry_sched *s, const void *buf, size_t count, struct ferry_datatype *dt, int peer);
void sched_recv(struct ferry_sched *s, void *buf, size_t count, struct ferry_datatype *dt, int peer);
/* Exact forms, for algorithms where every rank knows the length of each
 * message: a receive of another length sets the schedule's error
 * (MPI_ERR_TRUNCATE longer, MPI_ERR_OTHER shorter), and a send made after the
 * schedule has an error goes out empty, so the error reaches the ranks down
 * the tree too (mismatched counts, an erroneous program, are then reported
 * by every rank that could not have received its data). */
void sched_send_exact(struct ferry_sched *s, const void *buf, size_t count, struct ferry_datatype *dt, int peer);
/* The last step is a send whose receiver reduces the data straight away. */
void sched_send_consumed(struct ferry_sched *s);
void sched_recv_exact(struct ferry_sched *s, void *buf, size_t count, struct ferry_datatype *dt, int peer);
/* inout = in op inout (rev: inout = inout op in; for a user op this
 * clobbers `in`). n units of the schedule op's unit type. */
void sched_reduce(struct ferry_sched *s, const void *in, void *inout, size_t n, struct ferry_datatype *unit, int rev);
/* Copy the packed stream of (src, sn, st) to (dst, dn, dt): min of both sizes. */
void sched_copy(struct ferry_sched *s, const void *src, size_t sn, struct ferry_datatype *st, void *dst, size_t dn,
                struct ferry_datatype *dt);
/* sched_copy without waiting for the sends and receives started before it:
 * the copy runs while they are in flight, so its buffers must be disjoint
 * from theirs (a rank's own block in a gather, scatter, allgather or
 * alltoall). */
void sched_copy_overlap(struct ferry_sched *s, const void *src, size_t sn, struct ferry_datatype *st, void *dst,
                        size_t dn, struct ferry_datatype *dt);
void sched_fence(struct ferry_sched *s);
/* A poll step (after everything before it completed); the step's a/an/at,
 * b/bn/bt and peer are free for fn's use: the returned step is to fill in.
 * fn may append steps to s (they run after it): for algorithms whose number
 * of rounds is known only as they run. */
struct sched_step *sched_poll(struct ferry_sched *s, sched_poll_fn fn, void *arg, uint64_t seq);

/* Temporary memory freed with the schedule (up to SCHED_ARENA bytes in all
 * come from inside the schedule itself). */
void *sched_alloc(struct ferry_sched *s, size_t bytes);
/* n elements of dt in dt's natural layout (element i at i * extent); the
 * pointer may lie before the allocation when dt's lower bound is not zero. */
void *sched_tmp(struct ferry_sched *s, struct ferry_datatype *dt, size_t n);

/* Start s; *req gets the request that completes with it. */
void sched_start(struct ferry_sched *s, struct ferry_request **req);
/* Start s and wait for it; returns its error class. */
int sched_run(struct ferry_sched *s);

/* The datatype MPI_BYTE (packed data in temporary buffers). */
struct ferry_datatype *sched_byte(void);
/* Address of element i of (buf, dt). */
static inline void *sched_at(const void *buf, size_t i, MPI_Aint extent)
{
    return (char *)buf + (MPI_Aint)i * extent;
}

#endif
