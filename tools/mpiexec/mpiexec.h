/* mpiexec: Ferry's single-node launcher and PMI-1 server.
 *
 * main.c       option handling, launch, event loop, job teardown
 * options.c    command line
 * launch.c     fork/exec of one rank (environment, stdio, binding, PMI fd)
 * bind.c       hwloc: which cpus each rank is bound to
 * pmi_server.c PMI-1 server over one socketpair per rank
 * output.c     --tag-output: line-buffered, rank-prefixed forwarding
 * job.c        rank table, reaping, killing, failure reports, /dev/shm cleanup
 * signals.c    self-pipe for SIGCHLD/SIGINT/SIGTERM/SIGHUP */
#ifndef FERRY_MPIEXEC_H
#define FERRY_MPIEXEC_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1         /* execvpe, pipe2, cpu_set_t, strsignal */
#endif
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "boot/pmi_wire.h"

enum bind_mode { BIND_DEFAULT, BIND_CORE, BIND_HWTHREAD, BIND_SOCKET, BIND_NUMA, BIND_NONE };

/* One program of the command line: "mpiexec -n 1 a : -n 4 b" (MPMD, MPI-4.0
 * 11.5) starts a as rank 0 and b as ranks 1-4, with MPI_APPNUM 0 and 1. */
struct app {
    int nprocs;
    int first_rank;
    char **argv;               /* program and its arguments, NULL-terminated */
    int nenv;
    char **env;                /* -env K V as "K=V": for this program's ranks only */
};

struct options {
    int nprocs;                /* all programs' together */
    enum bind_mode bind;
    int tag_output;
    int report_bindings;
    int timeout_s;             /* --timeout / MPIEXEC_TIMEOUT; 0: none */
    const char *wdir;          /* -wdir: the ranks' working directory; NULL: mpiexec's */
    int ngenv;
    char **genv_key;           /* -genv K V, in command-line order */
    char **genv_val;
    int napps;
    struct app *apps;
};

/* The program rank r runs. */
const struct app *options_app_of(const struct options *o, int r);

/* options.c: fills *o; on --help/--help-env/errors it exits itself. */
void options_parse(struct options *o, int argc, char **argv);
void usage(FILE *f);

/* ----------------------------------------------------------------- ranks */

enum rank_state { RS_UNBORN, RS_RUNNING, RS_EXITED };

struct outbuf {                /* one forwarded stream of one rank */
    int fd;                    /* read end, -1 when closed */
    int dest;                  /* 1 or 2 */
    size_t len;
    char *buf;
};

struct rank {
    pid_t pid;
    enum rank_state state;
    int status;                /* wait status once exited */
    int pmi_fd;                /* server end of the socketpair, -1 when closed */
    int child_fd;              /* child end (parent closes it after fork) */
    int pmi_inited;            /* sent cmd=init */
    int finalized;             /* sent cmd=finalize */
    int in_barrier;
    struct pmi_wire_rbuf rb;
    struct outbuf out[2];      /* --tag-output: stdout, stderr */
    int bound;                 /* cpus[] is meaningful */
    cpu_set_t cpus;
    char bind_desc[160];       /* for --report-bindings */
};

struct job {
    struct options *opt;
    int n;
    struct rank *ranks;
    char jobid[64];            /* == kvsname */
    int exit_code;             /* first non-zero status seen */
    int terminating;
    int nrunning;
    int barrier_count;
    pid_t self;
    int exit0_rank;            /* the first rank that exited 0 without MPI_Finalize, -1: none */
    long exit0_deadline;       /* monotonic ms: the other ranks must be done by then */
    long exit_grace_ms;        /* FERRY_EXIT_GRACE_MS */
};

extern struct job J;

/* signals.c */
int signals_init(void);                 /* returns the self-pipe read end */
int signals_take(void);                 /* next pending signal number, 0 if none */
void signals_child_reset(void);         /* in a child before exec */

/* bind.c: decide every rank's binding; prints warnings itself. */
void bind_plan(struct job *j);

/* launch.c: start rank r; on exec failure reports, tears the job down, exits 127. */
void launch_rank(struct job *j, int r);
void launch_prepare(struct job *j);     /* once, before the first launch_rank */

/* pmi_server.c */
void pmi_server_init(struct job *j);
/* Read and serve whatever rank r sent; closes the fd at end of file. */
void pmi_server_readable(struct job *j, int r);
/* A rank finalized or exited: fail the job if a barrier can no longer complete. */
void pmi_server_check_barrier(struct job *j);
/* Serve whatever is already buffered in the socket, without blocking. */
void pmi_server_drain(struct job *j, int r);

/* output.c */
int output_open(struct rank *rk, int pipes[2][2]);   /* 0 / -1 */
void output_readable(struct job *j, int r, int s);
void output_drain_all(struct job *j);                /* read what's left, flush partial lines */

/* job.c */
long monotonic_ms(void);                             /* CLOCK_MONOTONIC in ms */
void job_reap(struct job *j);                        /* waitpid loop, judges exits */
/* Report rank r's failure ("mpiexec: rank R (pid P) <what>; terminating the
 * job"), make `code` the exit status unless one is already set, SIGKILL
 * everything, clean up and exit. */
void job_fail_rank(struct job *j, int r, int code, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));
void job_terminate(struct job *j, int exit_code, int graceful) __attribute__((noreturn));
void job_shm_cleanup(const char *jobid);
void job_set_exit(struct job *j, int code);

/* misc */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
