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
/* Tell the launcher this rank finalized cleanly (mpiexec uses this to tell a
 * clean exit from an exit without MPI_Finalize). */
void ferry_boot_finalize(void);
/* Flush stdio, then ask the launcher to kill the whole job with exit code
 * `code`; never returns. */
void ferry_boot_abort(int code, const char *msg) __attribute__((noreturn));

#endif
