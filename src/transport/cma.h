/* Cross Memory Attach (process_vm_readv / process_vm_writev): single copy
 * between two processes of one user on one node, for every transport that
 * reaches such a peer (shm within a world, sock between worlds). */
#ifndef FERRY_CMA_H
#define FERRY_CMA_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copy len bytes between local and the address `remote` of process pid:
 * read them (write = 0) or write them. 0, or -errno (the caller falls back
 * to a copy path). */
int ferry_cma_copy(pid_t pid, char *local, uint64_t remote, size_t len, int write);

#endif
