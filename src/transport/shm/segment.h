/* The node segment: one shared mapping holding every local rank's region.
 *
 * Two backends:
 *   memfd  (default) local rank 0 creates an anonymous memfd and hands the
 *          descriptor to the other local ranks over an abstract UNIX socket
 *          (SCM_RIGHTS). Nothing is ever named in /dev/shm, so the mount's
 *          size (Docker: 64 MiB), a read-only or missing /dev/shm, and kill -9
 *          do not matter. A connecting process must present the job's secret
 *          (published through the launcher's key-value store) and run as the
 *          same user (SO_PEERCRED), so nothing outside the job gets the memory.
 *   posix  shm_open("/ferry-<jobid>-node"), mode 0600, unlinked as soon as
 *          every local rank has mapped it.
 * Either way each owner reserves its own region with posix_fallocate after
 * binding (so its pages are allocated where it runs), and a shortage is a
 * clear error at MPI_Init, never SIGBUS later. */
#ifndef FERRY_SHM_SEGMENT_H
#define FERRY_SHM_SEGMENT_H
#include <stddef.h>

/* Collective over all ranks of the job (uses boot fences). Maps nlocal *
 * stride bytes; reserves [my_index*stride, +stride). Returns the base. */
void *ferry_shm_segment_attach(size_t stride, int nlocal, int my_index);
/* Called once every local rank has attached (after a fence): drop names. */
void ferry_shm_segment_seal(void);
void ferry_shm_segment_detach(void *base, size_t size);

/* Keep [p, p + len) of a shared mapping resident and mapped (mlock, best
 * effort: a lower RLIMIT_MEMLOCK only costs speed, logged at FERRY_VERBOSE=1).
 * Why: proactive reclaim (DAMON's pageout, memory.reclaim) unmaps shared
 * pages it thinks cold even with no swap to put them in; they stay in memory
 * but every later access takes a minor fault (the development VM's kernel
 * runs a DAMON pageout scheme; madvise(MADV_PAGEOUT) on an unlocked memfd
 * mapping there: 65 refaults per 4 MiB read back, none when locked). Locked
 * pages are never reclaimed. */
void ferry_shm_keep_resident(void *p, size_t len, const char *what);

#endif
