/* mpiexec: Ferry's single-node launcher and PMI-1 server.
 *
 * main.c       option handling, launch, event loop, job teardown
 * options.c    command line
 * launch.c     fork/exec of one rank (environment, stdio, binding, PMI fd)
 * bind.c       hwloc: which cpus each rank is bound to
 * pmi_server.c PMI-1 server over one socketpair per rank, spawn of new worlds
 * output.c     --tag-output: line-buffered, rank-prefixed forwarding
 * job.c        rank table, reaping, killing, failure reports, /dev/shm cleanup
 * signals.c    self-pipe for SIGCHLD/SIGINT/SIGTERM/SIGHUP
 *
 * The universe is every process this mpiexec starts. The command line's
 * ranks are world 0; each PMI spawn request (MPI_Comm_spawn[_multiple])
 * starts one more world. A process is known by its universe id (uid): world
 * 0's ranks are uids 0..n-1, and each new world takes the next consecutive
 * uids (its base is the number of processes started before it). Every world
 * has its own kvsname, key-value store, PMI barrier and appnums.
 *
 * Singleton adoption (--adopt-singleton, main.c): an MPI process started
 * without mpiexec (a singleton) that spawns starts an mpiexec of its own as
 * its CHILD. That mpiexec launches nothing for world 0: its one rank (uid 0)
 * is the singleton itself, "adopted" (struct rank's adopted), known by the
 * pid and PMI descriptor it was given (PMI_FERRY_ADOPT_PID, _FD). It is not
 * mpiexec's child, so it is never reaped: it counts as running while its PMI
 * connection is open and has exited when the connection closes (after
 * cmd=finalize: normally; before: a failure of rank 0). Spawns then work as
 * in any job. */
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
    int usize;                 /* -usize / MPIEXEC_UNIVERSE_SIZE: MPI_UNIVERSE_SIZE; 0: the default */
    const char *wdir;          /* -wdir: the ranks' working directory; NULL: mpiexec's */
    int ngenv;
    char **genv_key;           /* -genv K V, in command-line order */
    char **genv_val;
    int napps;
    struct app *apps;
    int adopt;                 /* --adopt-singleton: world 0 is the singleton that started us */
    int adopt_fd;              /* PMI_FERRY_ADOPT_FD: its PMI connection (mpiexec's end) */
    pid_t adopt_pid;           /* PMI_FERRY_ADOPT_PID: the singleton, mpiexec's parent */
};

/* The program rank r runs. */
const struct app *options_app_of(const struct options *o, int r);

/* options.c: fills *o; on --help/--help-env/errors it exits itself. With
 * --adopt-singleton (mpiexec's only argument) there is no program: it reads
 * and checks PMI_FERRY_ADOPT_FD / _PID (exit status 2 when they are bad). */
void options_parse(struct options *o, int argc, char **argv);
/* Is this an --adopt-singleton command line? (main needs to know before parsing) */
int options_adopt_requested(int argc, char **argv);
void usage(FILE *f);

/* ---------------------------------------------------------------- worlds */

/* One program of a spawn request (cmd=spawn, see pmi_server.c). */
struct spawn_app {
    int nprocs;
    char **argv;               /* execname and its arguments (decoded), NULL-terminated */
    char *wdir;                /* the processes' directory (decoded; a relative one is
                                  joined to -wdir); NULL: -wdir, else mpiexec's cwd */
};

struct kvs;                    /* pmi_server.c: one world's key-value store */

struct world {
    int index;                 /* k: world k of the job, 0: the command line's */
    int base;                  /* uid of its rank 0 */
    int n;                     /* its size */
    char kvsname[96];          /* world 0: the jobid; world k: "<jobid>s<k>" */
    struct kvs *kvs;
    int barrier_count;         /* its ranks now in barrier_in */
    int parent_uid;            /* the process that spawned it; -1 for world 0 */
    int napps;                 /* world k >= 1: its programs (world 0: opt->apps) */
    struct spawn_app *apps;
    char *parent_port;         /* world k >= 1: PMI_FERRY_PARENT_PORT; NULL: none given */
};

/* ----------------------------------------------------------------- ranks */

struct spawn_req;              /* pmi_server.c: a spawn request being collected */

enum rank_state { RS_UNBORN, RS_RUNNING, RS_EXITED };

struct outbuf {                /* one forwarded stream of one rank */
    int fd;                    /* read end, -1 when closed */
    int dest;                  /* 1 or 2 */
    size_t len;
    char *buf;
};

/* One process of the universe, j->ranks[uid]. Allocated one by one and
 * never moved, so a struct rank * stays valid when the table grows.
 * The adopted singleton (uid 0 under --adopt-singleton) is a rank like the
 * others except: pid is not mpiexec's child (never waited for, signalled
 * only while it is still mpiexec's parent), pmi_fd was inherited, no output
 * pipes, not bound; state goes RS_RUNNING -> RS_EXITED when its PMI
 * connection closes (job_adopted_closed: status 0 after finalize, else a
 * failure, as exit 1), when it sends cmd=abort (it leaves by itself) or
 * when the job's teardown kills it (job.c). */
struct rank {
    int world;                 /* index into j->worlds */
    int wrank;                 /* rank within its world */
    int appnum;                /* its program: index into opt->apps (world 0) or the world's apps */
    char label[32];            /* --tag-output prefix: "[r] ", spawned: "[s<k>:<r>] " */
    struct spawn_req *spawn;   /* spawn lines received so far, NULL: none */
    char *spawn_args;          /* spawn_args lines for the next spawn line ("A1,A2,..."), NULL: none */
    pid_t pid;
    enum rank_state state;
    int status;                /* wait status once exited */
    int pmi_fd;                /* server end of the socketpair, -1 when closed */
    int child_fd;              /* child end (parent closes it after fork) */
    int pmi_inited;            /* sent cmd=init */
    int finalized;             /* sent cmd=finalize */
    int adopted;               /* the singleton of --adopt-singleton (uid 0), not launched */
    int in_barrier;
    struct pmi_wire_rbuf rb;
    struct outbuf out[2];      /* --tag-output: stdout, stderr */
    int bound;                 /* cpus[] is meaningful */
    cpu_set_t cpus;
    char bind_desc[160];       /* for --report-bindings */
};

#define UNIVERSE_MAX 4096      /* a spawn may not make the universe larger */

struct job {
    struct options *opt;
    int n;                     /* processes started so far (all worlds): ranks[0..n-1] */
    struct rank **ranks;       /* indexed by uid */
    int nworlds;
    struct world **worlds;     /* worlds[0]: the command line's ranks */
    char jobid[64];            /* == world 0's kvsname; PMI_FERRY_UNIVERSE */
    char secret[33];           /* PMI_FERRY_SECRET: 32 random lowercase hex digits */
    int exit_code;             /* first non-zero status seen */
    int terminating;
    int nrunning;              /* processes in RS_RUNNING, the adopted singleton included */
    pid_t self;
    int exit0_rank;            /* the first rank that exited 0 without MPI_Finalize, -1: none */
    long exit0_deadline;       /* monotonic ms: the other ranks must be done by then */
    long exit_grace_ms;        /* FERRY_EXIT_GRACE_MS */
};

extern struct job J;

/* signals.c */
int signals_init(void);                 /* returns the self-pipe read end */
void signals_catch(int sig);            /* one more signal through the pipe (after init) */
int signals_take(void);                 /* next pending signal number, 0 if none */
void signals_child_reset(void);         /* in a child before exec */

/* bind.c: decide every rank's binding; prints warnings itself. */
void bind_plan(struct job *j);

/* launch.c: start the process uid r (its world and rank set); on exec
 * failure reports, tears the job down, exits 127. */
void launch_rank(struct job *j, int r);
void launch_prepare(struct job *j);     /* once, before the first launch_rank */

/* job.c: the rank table */
/* Add a world of n processes: uids j->n .. j->n+n-1 (state RS_UNBORN,
 * appnum 0), its kvsname and key-value store; j->n grows by n. Returns the
 * world, or NULL (nothing added) when out of memory. */
struct world *job_add_world(struct job *j, int n);
/* "rank R (pid P)" for world 0, "spawned rank R of world K (uid U, pid P)"
 * for the others, "singleton rank 0 (pid P)" for the adopted singleton: how
 * messages name a process. */
const char *rank_desc(const struct job *j, int r, char *buf, size_t cap);

/* The adopted singleton's PMI connection has closed (its fd is already -1):
 * after cmd=finalize it has exited normally, else the job fails (exit 1). */
void job_adopted_closed(struct job *j, int r);
/* The adopted singleton has exited (wait-status-like status): it stops
 * counting in nrunning and is never signalled again. */
void job_adopted_exited(struct job *j, int r, int status);
/* Is the adopted singleton still alive (still mpiexec's parent)? */
int job_adopted_alive(const struct job *j, int r);
/* Signal a running rank: a launched one by pid, the adopted singleton only
 * while it is still mpiexec's parent (its pid cannot have been reused). */
void job_signal_rank(struct job *j, int r, int sig);

/* pmi_server.c */
/* A new world's key-value store, seeded with its PMI_process_mapping; 0 / -1. */
int pmi_server_world_init(struct world *w);
/* Read and serve whatever rank r sent; closes the fd at end of file. */
void pmi_server_readable(struct job *j, int r);
/* A rank finalized or exited: fail the job if a barrier (of any world) can
 * no longer complete. */
void pmi_server_check_barrier(struct job *j);
/* Serve whatever is already buffered in the socket, without blocking. */
void pmi_server_drain(struct job *j, int r);
/* MPI_UNIVERSE_SIZE as get_universe_size (and get_universe) answer it. */
int pmi_server_universe_size(const struct job *j);

/* output.c */
int output_open(struct rank *rk, int pipes[2][2]);   /* 0 / -1 */
void output_readable(struct job *j, int r, int s);
void output_drain_all(struct job *j);                /* read what's left, flush partial lines */

/* job.c */
long monotonic_ms(void);                             /* CLOCK_MONOTONIC in ms */
void job_reap(struct job *j);                        /* waitpid loop, judges exits */
/* Report rank r's failure ("mpiexec: rank R (pid P) <what>; terminating the
 * job"; a spawned process is named as rank_desc does), make `code` the exit
 * status unless one is already set, SIGKILL everything, clean up and exit. */
void job_fail_rank(struct job *j, int r, int code, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));
void job_terminate(struct job *j, int exit_code, int graceful) __attribute__((noreturn));
void job_shm_cleanup(const char *jobid);
void job_shm_cleanup_all(struct job *j);             /* every world's kvsname */
void job_set_exit(struct job *j, int code);

/* misc */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
