/* boot: who am I and who are my peers.
 *
 * The library asks the launcher through this interface only. Today the one
 * implementation is a PMI-1 wire-protocol client (pmi1_client.c) talking over
 * the inherited descriptor PMI_FD, as Ferry's mpiexec and MPICH's hydra
 * provide; without PMI_FD the process is a singleton (rank 0 of 1). */
#ifndef FERRY_BOOT_H
#define FERRY_BOOT_H
#include <stddef.h>

struct ferry_boot_info {
    int rank;            /* rank in MPI_COMM_WORLD */
    int size;            /* size of MPI_COMM_WORLD */
    int appnum;          /* MPI_APPNUM (0 when the launcher gives none) */
    int singleton;       /* 1 when started without a launcher */
    char jobid[64];      /* launcher's job / kvs name; unique per job on the node */
    /* Dynamic processes (Ferry's mpiexec only; see ferry_boot_spawn): */
    int uid_base;        /* universe id of this world's rank 0 (PMI_FERRY_UID_BASE) */
    int universe_size;   /* MPI_UNIVERSE_SIZE from the launcher, 0: not known */
    char universe[64];   /* names the launcher's universe (PMI_FERRY_UNIVERSE); "" without one */
    char secret[40];     /* the universe's secret, hex (PMI_FERRY_SECRET) */
    char parent_port[256]; /* started by MPI_Comm_spawn: the parents' port (PMI_FERRY_PARENT_PORT) */
};

/* Connect to the launcher (or decide singleton). 0 on success, -1 on failure
 * (a one-line reason has been printed to stderr). */
int ferry_boot_init(struct ferry_boot_info *out);
/* Publish key=value for this rank. Visible to others after ferry_boot_fence. */
int ferry_boot_put(const char *key, const char *value);
/* Collective over all ranks: commit puts, then barrier. */
int ferry_boot_fence(void);
/* Read a key that `rank` published (keys are namespaced per rank internally). */
int ferry_boot_get(int rank, const char *key, char *value, size_t len);
/* One program of a spawn request. */
struct ferry_boot_app {
    const char *cmd;     /* program */
    char **argv;         /* its arguments (not the program), NULL-terminated or NULL */
    int nprocs;
    const char *wdir;    /* working directory, NULL: the launcher's */
};
/* Ask the launcher to start the programs as one new world whose processes
 * get PMI_FERRY_PARENT_PORT=port. 0 with *uid_base and *size of the new
 * world, or -1 with a reason in why. */
int ferry_boot_spawn(int napps, const struct ferry_boot_app *apps, const char *port, int *uid_base, int *size,
                     char *why, size_t whylen);
/* A singleton that spawns starts an mpiexec of its own, which adopts it as
 * world 0's one rank and then serves spawn requests (the launcher's side:
 * tools/mpiexec, --adopt-singleton). Fills out's universe, secret,
 * uid_base and universe_size. 0, or -1 with a reason in why. A process a
 * launcher started returns 0 at once when its launcher spawns, else -1. */
int ferry_boot_adopt(struct ferry_boot_info *out, char *why, size_t whylen);
/* Name publishing through the launcher (Ferry's mpiexec): op 'p' publish
 * service -> port, 'u' unpublish, 'l' look up (the port into port[cap]).
 * 0, or -1 when the launcher refuses (not published, published already,
 * no launcher that keeps names: *why says which). */
int ferry_boot_name(char op, const char *service, char *port, size_t cap, const char **why);
/* Tell the launcher this rank finalized cleanly (mpiexec uses this to tell a
 * clean exit from an exit without MPI_Finalize). */
void ferry_boot_finalize(void);
/* Flush stdio, then ask the launcher to kill the whole job with exit code
 * `code`; never returns. */
void ferry_boot_abort(int code, const char *msg) __attribute__((noreturn));

#endif
