/* Communicators and groups.
 *
 * A communicator is a group plus a context id. Messages carry the context id
 * of the communicator they were sent on; point-to-point traffic uses `ctx`,
 * collective traffic uses `ctx + 1`, so a collective can never match a user
 * receive. Context ids are agreed on at creation by a max-reduction over the
 * parent communicator (every participant's next free id), so they are unique
 * in every participating process.
 *
 * A third context, FERRY_CTX_MGMT(c) (ctx with the top bit set), carries the
 * internal messages of communicator management itself (Comm_create_group,
 * Intercomm_create/merge, intercommunicator dup/split, Dist_graph_create).
 * They use negative tags, except where the MPI call takes a user tag
 * (Comm_create_group, the leader exchange of Intercomm_create).
 *
 * Intercommunicators: `group` is the local group, `remote` the remote group,
 * `rank`/`size` are the local rank and size, point-to-point ranks name the
 * remote group (ferry_comm_world_rank). `local_comm` is an intracommunicator
 * over the local group with its own context (the intercommunicator's ctx + 2),
 * for the local phases of intercommunicator algorithms; every process of both
 * groups reserves ctx .. ctx + 3. */
#ifndef FERRY_COMM_H
#define FERRY_COMM_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

struct ferry_topo;
struct ferry_attr;
struct ferry_info;

struct ferry_group {
    MPI_Group handle;
    int refs;
    int size;
    int *world;            /* group rank -> world rank */
    int rank;              /* this process's rank in the group, MPI_UNDEFINED if absent */
};

struct ferry_comm {
    MPI_Comm handle;
    int refs;
    uint32_t ctx;          /* point-to-point context; ctx+1 is the collective context */
    int rank, size;
    struct ferry_group *group;         /* local group */
    struct ferry_group *remote;        /* intercommunicator: the remote group; NULL for intracommunicators */
    struct ferry_comm *local_comm;     /* intercommunicator: intracommunicator over the local group */
    MPI_Errhandler errhandler;
    uint32_t coll_seq;     /* tag sequence of blocking collectives */
    uint32_t nbc_seq;      /* tag sequence of nonblocking collectives (an order of their own) */
    uint32_t agree_seq;    /* tag sequence of MPIX_Comm_agree / iagree (in an order of their own) */
    int coll_after_barrier;            /* the last collective called on it was a barrier */
    int coll_barrier_next;             /* the collective (enum ferry_coll_kind) called right after the
                                        * last barrier, -1: none yet (see coll.c) */
    int coll_barrier_root;             /* ... its root, -1 when it has none */
    int coll_setup;                    /* the library sets up an object over this private communicator
                                        * (a window, a file): its agreements do not count towards the
                                        * lazy creation of the shared-memory collectives' segment */
    struct ferry_topo *topo;           /* Cartesian / graph / distributed graph topology, NULL if none */
    struct ferry_attr *attrs;          /* cached attributes (core/attr.h), most recently set first */
    struct ferry_info *info;           /* hints from Comm_set_info / Comm_dup_with_info, NULL if none */
    int sessions_model;                /* made from a group (Comm_create_from_group,
                                        * Intercomm_create_from_groups) or a dup of one: of the
                                        * predefined attributes it caches MPI_TAG_UB only */
    char name[MPI_MAX_OBJECT_NAME];
};

#define FERRY_CTX_MGMT_BIT 0x80000000u
#define FERRY_CTX_NB_BASE 0x40000000u
#define FERRY_CTX_MGMT(c) ((c)->ctx | FERRY_CTX_MGMT_BIT)

void ferry_comm_init(void);
void ferry_comm_finalize(void);
/* NULL when h is not a valid communicator. */
struct ferry_comm *ferry_comm_get(MPI_Comm h);
extern struct ferry_comm *ferry_comm_world, *ferry_comm_self;

/* World rank of the peer that rank r names in c: the local group's rank r,
 * or on an intercommunicator the remote group's rank r. */
static inline int ferry_comm_world_rank(const struct ferry_comm *c, int r)
{
    return (c->remote ? c->remote : c->group)->world[r];
}
/* Number of ranks a point-to-point call may name (remote size for intercomms). */
static inline int ferry_comm_peer_count(const struct ferry_comm *c)
{
    return c->remote ? c->remote->size : c->size;
}

/* Create a communicator from a group (which it takes a reference to) and a
 * context id. */
struct ferry_comm *ferry_comm_new(struct ferry_group *g, uint32_t ctx, MPI_Errhandler eh);
/* Create an intercommunicator (takes a reference to both groups); ctx .. ctx+3
 * must have been reserved (ferry_comm_agree_ctx_n(.., 4)). */
struct ferry_comm *ferry_intercomm_new(struct ferry_group *local, struct ferry_group *remote, uint32_t ctx,
                                       MPI_Errhandler eh);
void ferry_comm_release(struct ferry_comm *c);
/* A communicator over c's group(s) (both, for an intercommunicator) with
 * context id ctx and error handler eh; nothing else of c is copied. */
struct ferry_comm *ferry_comm_shell(struct ferry_comm *c, uint32_t ctx, MPI_Errhandler eh);
/* Collective over c: a private channel over the same group(s) and topology
 * with a fresh context, without c's attributes, info or name (persistent
 * collectives and open files each run on one). The caller owns its
 * reference. */
int ferry_comm_dup_private(struct ferry_comm *c, MPI_Errhandler eh, struct ferry_comm **out);
/* Give a communicator created before its id was agreed on (Comm_idup) its
 * id: ctx (and ctx + 2 for an intercommunicator's local_comm). */
void ferry_comm_set_ctx(struct ferry_comm *c, uint32_t ctx);
/* Collective over parent: agree on a fresh context id (2 ids: ctx, ctx+1).
 * Works on intercommunicators too (agreement over both groups). */
int ferry_comm_agree_ctx(struct ferry_comm *parent, uint32_t *ctx);
/* The same, reserving n consecutive ids (4 for a new intercommunicator). */
int ferry_comm_agree_ctx_n(struct ferry_comm *parent, uint32_t *ctx, int n);
/* Agreement among the members of g only (g a subset of the intracommunicator
 * parent's group; this process a member); messages in parent's management
 * context with the given tag. For Comm_create_group. */
int ferry_comm_agree_ctx_group(struct ferry_comm *parent, struct ferry_group *g, int tag, uint32_t *ctx);
/* The agreement itself, for members that max(arg, &v) reaches: it must
 * turn v into the maximum of v over them (Intercomm_create: over the two
 * groups through their leaders). Returns the first of n ids. */
uint32_t ferry_comm_agree_ctx_with(void (*max)(void *arg, uint32_t *v), void *arg, int n);
/* ferry_comm_inter_exchange's blob exchange plus an agreement on n fresh ids
 * over both groups of ic (the id rides on the exchange when one thread is in
 * MPI at a time). */
uint32_t ferry_comm_inter_exchange_ctx(struct ferry_comm *ic, int n, const void *mine, size_t nmine, void **theirs,
                                       size_t *ntheirs);
/* Reserve ids for a creation agreed on elsewhere: next free id becomes at
 * least ctx + n. */
void ferry_comm_reserve_ctx(uint32_t ctx, int n);
/* This process's next free context id (input to an agreement). */
uint32_t ferry_comm_next_ctx(void);
/* The same two for the ids of nonblocking agreements (coll/ctx_agree.c),
 * FERRY_CTX_NB_BASE and up: a space of their own (see comm.c). */
uint32_t ferry_comm_next_nb_ctx(void);
void ferry_comm_reserve_nb_ctx(uint32_t ctx, int n);

/* ---- internal point-to-point in a communicator's management context ----
 * Blocking; peer ranks as in point-to-point (remote group on intercomms);
 * MPI_PROC_NULL peers are skipped. */
void ferry_comm_mgmt_send(struct ferry_comm *c, const void *buf, size_t n, int dest, int tag);
void ferry_comm_mgmt_recv(struct ferry_comm *c, void *buf, size_t n, int src, int tag);
void ferry_comm_mgmt_sendrecv(struct ferry_comm *c, const void *sbuf, size_t sn, int dest, void *rbuf, size_t rn,
                              int src, int tag);
/* Binomial broadcast over the intracommunicator c from root. */
void ferry_comm_mgmt_bcast(struct ferry_comm *c, void *buf, size_t n, int root, int tag);
/* Binomial max-reduction of *v over the intracommunicator c: root's *v
 * becomes the maximum (the others' are partial). */
void ferry_comm_mgmt_reduce_max(struct ferry_comm *c, uint32_t *v, int root, int tag);
/* Binomial max-reduction of *v over c to root, then broadcast: every rank gets the max. */
void ferry_comm_mgmt_allreduce_max(struct ferry_comm *c, uint32_t *v, int tag);
/* Personalized exchange over the intracommunicator c: rank i sends scount[j]
 * ints at sbuf + sdispl[j] to rank j; *rbuf (malloc'd) receives what every
 * rank sent here, ordered by source rank, rcount[j] ints from rank j. */
void ferry_comm_mgmt_alltoallv_int(struct ferry_comm *c, const int *sbuf, const int *scount, const int *sdispl,
                                   int **rbuf, int *rcount, int tag);
/* Intercommunicator leader exchange: every local process passes the same
 * blob (mine, nmine bytes; only local rank 0's is used) and gets the remote
 * group's (malloc'd into *theirs, *ntheirs bytes); *v becomes the max of v
 * over both groups. */
void ferry_comm_inter_exchange(struct ferry_comm *ic, uint32_t *v, const void *mine, size_t nmine, void **theirs,
                               size_t *ntheirs);

struct ferry_group *ferry_group_get(MPI_Group h);
/* New group of n world ranks (array is copied); computes this process's rank. */
struct ferry_group *ferry_group_new(int n, const int *world);
void ferry_group_release(struct ferry_group *g);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int ferry_group_relation(const struct ferry_group *a, const struct ferry_group *b);
/* Rank of world rank w in g, MPI_UNDEFINED if absent. */
int ferry_group_rank_of(const struct ferry_group *g, int w);
extern struct ferry_group *ferry_group_empty;

#endif
