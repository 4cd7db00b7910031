/* Configuration: every tunable is a FERRY_* environment variable, declared
 * once as data (name, type, default, help) in config.c. `ferry_info --env`
 * (and `mpiexec --help-env`) print that table; nothing else reads getenv for
 * tunables. */
#ifndef FERRY_CONFIG_H
#define FERRY_CONFIG_H
#include <stdio.h>

struct ferry_config {
    long shm_ring;           /* bytes per sender->receiver ring; -1: from shm_budget */
    long shm_budget;         /* bytes of rings per receiving rank when shm_ring is -1 */
    long cma_min;            /* rendezvous messages >= this may use single copy (-1: cost model) */
    long cma_max;            /* rendezvous messages >= this use the pipelined copy (-1: cost model) */
    long split_min;          /* rendezvous messages in [split_min, split_max) use split single copy */
    long split_max;
    long split_share;        /* split single copy: percent of the message the sender writes */
    long rndv_both_ways;     /* rendezvous both ways between a pair: -1 measured, 1 rings, 0 single copy */
    long rndv_oversub;       /* rendezvous when ranks outnumber CPUs: -1 by ranks per CPU, 1 rings, 0 single copy */
    const char *p2p_model;   /* point-to-point cost model file from ferry-tune --p2p ("": built in) */
    long shm_max_packet;     /* largest packet, header included */
    long eager_max;          /* largest message sent eagerly (-1: derived) */
    long eager_behind_max;   /* ... to a receiver behind in a stream (-1: what a packet holds) */
    long eager_stream;       /* eager messages from this size are published while being written (-1: never) */
    long eager_stream_chunk; /* bytes written between two publications of a streamed eager packet */
    long coll_pull_min;      /* a reduction's messages from this size go by pulled single copy */
    long cma;                /* single copy with process_vm_readv: -1 auto, 0 off, 1 required */
    long cma_chunk;          /* bytes per process_vm_readv call */
    long win_cma;            /* one-sided: -1 reach Win_create memory with CMA where the probe allows, 0 never */
    long shm_fault_push;     /* testing: pushes (split single copy) after the first N fail (-1: off) */
    long shm_fault_pull;     /* testing: pulls after the first N fail with -EPERM (-1: off) */
    long spin;               /* empty progress polls before a waiting rank yields the CPU */
    long connect_timeout;    /* seconds MPI_Comm_connect waits for an accept (0: for ever) */
    long verbose;            /* diagnostic output level */
    long stdout_buf;         /* enum ferry_stdout: stdout buffering under a launcher */
    long exit_grace_ms;      /* read by mpiexec (tools/mpiexec/main.c); listed here to be documented */
    long thread_max;         /* highest thread level MPI_Init_thread provides */
    long shm_backend;        /* enum ferry_shm_backend */
    long shm_hot;            /* rings polled on every poll (hot peers) when there are more local ranks */
    long shm_cold_scan;      /* every this many polls, all other rings too */
    long oversubscribe;      /* -1 detect, 0 never sleep, 1 always sleep when idle */
    long oversub_spin;       /* oversubscribed: empty polls before a waiter starts yielding */
    long oversub_yields;     /* oversubscribed: yields before a waiter sleeps on its futex */
    long oversub_yield_us;   /* ... and the time it goes on yielding after them */
    long stream_poll_pauses; /* pauses between empty polls of a wait for a window of requests */
    /* collectives (coll/): an algorithm name per collective forces that
     * algorithm ("auto": the tuned table, then built-in rules) */
    const char *coll_barrier, *coll_bcast, *coll_gather, *coll_gatherv, *coll_scatter, *coll_scatterv,
        *coll_allgather, *coll_allgatherv, *coll_alltoall, *coll_alltoallv, *coll_alltoallw, *coll_reduce,
        *coll_allreduce, *coll_reduce_scatter, *coll_reduce_scatter_block, *coll_scan, *coll_exscan;
    const char *coll_table;  /* algorithm table written by ferry-tune ("": none) */
    long coll_segment;       /* bytes per segment of pipelined collective algorithms */
    long coll_fake_ppn;      /* testing: pretend nodes of this many consecutive ranks (0: real placement) */
    long coll_shm;           /* shared-memory collectives for ranks of one node */
    long coll_shm_slot;      /* bytes of one rank's slot in the collective segment */
    long coll_shm_chunk;     /* bytes per pipelined step of a shm collective (a CPU per rank) */
    long coll_shm_max;       /* default rules: largest bytes per rank for shm bcast/gather/scatter/all* */
    long coll_shm_gather_max;    /* ... for gather */
    long coll_shm_allgather_max; /* ... for allgather */
    long coll_shm_oversub_max;   /* the same when oversubscribed */
    long coll_shm_reduce_max;    /* default rules: largest vector for shm reduce/allreduce */
    long coll_shm_pair_max;      /* ... every collective of a 2-rank communicator */
    long coll_shm_pair_reduce_max; /* ... but reduce: -1 no limit */
    long coll_pair_reduce_p2p_min, coll_pair_reduce_p2p_max; /* ... except this range */
    long coll_shm_flat_max;  /* shm allreduce: largest vector every rank reduces whole */
    long coll_shm_barrier;   /* FERRY_SHM_BARRIER_* */
    long coll_shm_spin;      /* oversubscribed: polls before a shm collective waiter yields */
    long coll_shm_yields;    /* oversubscribed: yields before a shm collective waiter sleeps */
};
enum ferry_shm_backend { FERRY_SHM_BACKEND_MEMFD, FERRY_SHM_BACKEND_POSIX };
enum ferry_stdout { FERRY_STDOUT_LINE, FERRY_STDOUT_NONE, FERRY_STDOUT_KEEP };
enum ferry_shm_barrier { FERRY_SHM_BARRIER_AUTO, FERRY_SHM_BARRIER_FLAT, FERRY_SHM_BARRIER_RELEASE };
extern struct ferry_config ferry_cfg;

/* Read FERRY_* from the environment; a malformed value is a fatal error that
 * names the variable. */
void ferry_config_load(void);
/* Print the table of variables with defaults, current values and help. */
void ferry_config_print(FILE *out);
/* Name on out every FERRY_* variable in the environment that is not in the
 * table (a misspelt tunable would otherwise be ignored silently; UCX warns
 * the same way); returns how many. */
int ferry_config_unknown(FILE *out);

/* The table as data (the MPI_T control variables): entry i of count. */
struct ferry_config_desc {
    const char *name, *help;
    const char *choices;   /* comma-separated names of an enumerated variable, else NULL */
    int is_string;         /* a string variable, else an integer (long) */
    int fits_int;          /* an integer whose whole range fits an int */
};
int ferry_config_count(void);
int ferry_config_index(const char *name);   /* -1: no such variable */
void ferry_config_describe(int i, struct ferry_config_desc *d);
long ferry_config_value(int i);             /* integer variables (choices: the index) */
const char *ferry_config_string(int i);     /* string variables */

#endif
