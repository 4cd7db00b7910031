/* The process-wide runtime state: who this rank is, its peers, and which
 * transport reaches each peer. */
#ifndef FERRY_RUNTIME_H
#define FERRY_RUNTIME_H
#include <mpi.h>
#include <sys/types.h>

struct ferry_transport;

struct ferry_peer {
    const struct ferry_transport *tr;  /* transport that reaches this peer */
    int local;                         /* index among the ranks on this node, -1 if remote */
    pid_t pid;
};

enum ferry_init_state { FERRY_PRE_INIT = 0, FERRY_INITIALIZED, FERRY_FINALIZED };

struct ferry_runtime {
    enum ferry_init_state state;
    int world_rank, world_size;
    int local_rank, local_size;        /* ranks on this node */
    int thread_level;
    int appnum;
    int singleton;
    int oversubscribed;                /* more local ranks than CPUs: waiting ranks sleep */
    int local_cpus;                    /* CPUs the local ranks run on (an estimate, see shm.c) */
    char jobid[64];
    char hostname[MPI_MAX_PROCESSOR_NAME];
    struct ferry_peer *peers;          /* indexed by world rank */
    void *main_thread;                 /* pthread_t of the thread that initialized */
};
extern struct ferry_runtime ferry_rt;

#endif
