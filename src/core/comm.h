/* Communicators and groups.
 *
 * A communicator is a group plus a context id. Messages carry the context id
 * of the communicator they were sent on; point-to-point traffic uses `ctx`,
 * collective traffic uses `ctx + 1`, so a collective can never match a user
 * receive. Context ids are agreed on at creation by a max-reduction over the
 * parent communicator (every participant's next free id), so they are unique
 * in every participating process. */
#ifndef FERRY_COMM_H
#define FERRY_COMM_H
#include <mpi.h>
#include <stdint.h>

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
    MPI_Errhandler errhandler;
    uint32_t coll_seq;     /* tag sequence for internal collectives */
    char name[MPI_MAX_OBJECT_NAME];
};

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
void ferry_comm_release(struct ferry_comm *c);
/* Collective over parent: agree on a fresh context id. */
int ferry_comm_agree_ctx(struct ferry_comm *parent, uint32_t *ctx);

struct ferry_group *ferry_group_get(MPI_Group h);
/* New group of n world ranks (array is copied); computes this process's rank. */
struct ferry_group *ferry_group_new(int n, const int *world);
void ferry_group_release(struct ferry_group *g);
extern struct ferry_group *ferry_group_empty;

#endif
