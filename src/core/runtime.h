/* The process-wide runtime state: who this rank is, its peers, and which
 * transport reaches each peer. */
#ifndef FERRY_RUNTIME_H
#define FERRY_RUNTIME_H
#include <mpi.h>
#include <sys/types.h>

struct ferry_transport;

/* Peers are named by their universe id (uid): MPI_COMM_WORLD's ranks are
 * uid_base .. uid_base + world_size - 1, and the processes of other worlds
 * this one connected to (MPI_Comm_spawn, MPI_Comm_accept/connect) keep the
 * ids their launcher gave them, so every process of a universe names a
 * process by the same number. A job started whole has uid_base 0: its ids
 * are its world ranks. Groups list uids (ferry_group.world). */
struct ferry_peer {
    const struct ferry_transport *tr;  /* transport that reaches this peer, NULL: not connected */
    int local;                         /* index among this world's ranks on this node (its shared
                                        * memory), -1 otherwise */
    int same_node;                     /* runs on this node (this world's local ranks, and other
                                        * worlds' processes, which Ferry's one-node mpiexec started) */
    pid_t pid;
};

/* The most processes one universe (Ferry's mpiexec and what it spawned)
 * holds: the capacity of peers[] in a process that may connect to others.
 * mpiexec refuses a spawn past it. */
#define FERRY_UNIVERSE_MAX 4096

enum ferry_init_state { FERRY_PRE_INIT = 0, FERRY_INITIALIZED, FERRY_FINALIZED };

struct ferry_runtime {
    /* The most processes one universe (Ferry's mpiexec and what it spawned)
 * holds: the capacity of peers[] in a process that may connect to others.
 * mpiexec refuses a spawn past it. */
#define FERRY_UNIVERSE_MAX 4096

enum ferry_init_state state;
    int world_rank, world_size;
    int self;                          /* this process's uid: uid_base + world_rank */
    int uid_base;                      /* uid of MPI_COMM_WORLD's rank 0 */
    int npeers;                        /* capacity of peers[] (uids below it can be connected) */
    int peer_end;                      /* 1 + the largest uid connected: loops over peers stop there */
    int local_rank, local_size;        /* ranks on this node */
    int thread_level;
    int appnum;
    int universe_size;                 /* MPI_UNIVERSE_SIZE (the launcher's; 0: unset) */
    int singleton;
    int oversubscribed;                /* more local ranks than CPUs: waiting ranks sleep */
    int local_cpus;                    /* CPUs the local ranks run on (an estimate, see shm.c) */
    char jobid[64];
    char hostname[MPI_MAX_PROCESSOR_NAME];
    struct ferry_peer *peers;          /* indexed by uid */
    void *main_thread;                 /* pthread_t of the thread that initialized */
};
extern struct ferry_runtime ferry_rt;

#endif
