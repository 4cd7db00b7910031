/* One-sided communication windows (single node).
 *
 * Every rank of a window's communicator is on this node. At creation every
 * rank learns every other rank's base address, size and displacement unit.
 * Each window has a small shared-memory segment mapped by all its ranks (the
 * "control" lines: one reader/writer lock word for passive-target epochs and
 * one accumulate mutex per rank); Win_allocate and Win_allocate_shared also
 * place the window memory itself in that segment, so every rank reaches it
 * with plain loads and stores. Win_create and Win_create_dynamic memory stays in the owner's address
 * space and is reached with Cross Memory Attach (process_vm_readv/writev), or,
 * where that is denied, with active messages served by the target's progress
 * hook (api/win.c).
 * Every operation is complete when its call returns, which makes flushes
 * no-ops and a fence a barrier. A dynamic window's displacements are
 * addresses in the target process; attached memory is not tracked. Handles: type 0x8 (MPI_WIN_NULL 0x20000000). */
#ifndef FERRY_WIN_H
#define FERRY_WIN_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ferry_comm;
struct ferry_datatype;

/* One cache line per rank in the control segment. */
struct ferry_win_ctl {
    uint32_t rw;      /* passive target: FERRY_WIN_EXCL, or the number of shared holders */
    uint32_t acc;     /* accumulate mutex: 0 free, 1 taken */
    char pad[56];
};
#define FERRY_WIN_EXCL 0x80000000u

struct ferry_win_peer {
    uint64_t addr;        /* base address in the owner's address space */
    MPI_Aint size;
    int disp_unit;
    pid_t pid;
    int cma_ok;           /* process_vm_readv/writev work on this peer */
    int local;            /* direct is valid */
    char *direct;         /* base reachable from here with loads/stores (shared segment, or self); NULL: CMA */
};

struct ferry_win {
    MPI_Win handle;
    int flavor;           /* MPI_WIN_FLAVOR_* (also the MPI_WIN_CREATE_FLAVOR attribute's value) */
    MPI_Comm dup;         /* internal duplicate of the creating communicator */
    struct ferry_comm *comm;
    int rank, size;
    void *base;
    MPI_Aint wsize;
    int disp_unit;
    struct ferry_win_peer *peer;
    char *seg;            /* shared segment: control lines, then window memory (allocate flavors) */
    size_t seglen;
    struct ferry_win_ctl *ctl;
    MPI_Info info;        /* the hints in effect (Win_get_info) */
    char name[MPI_MAX_OBJECT_NAME];
    /* epochs */
    int *lock;            /* per target: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE held by this rank,
                           * | FERRY_WIN_LOCK_NOCHECK when opened with MPI_MODE_NOCHECK (no lock word taken) */
    int lock_all;         /* 0; 1: lock_all holds every shared lock word; 2: opened with MPI_MODE_NOCHECK */
    int fence_open;
    int *start_grp; int nstart;   /* PSCW access epoch: window ranks */
    int *post_grp; int npost;     /* PSCW exposure epoch: window ranks */
    int post_done;                /* completions received so far from post_grp */
    char *post_got;
    /* active-message fallback (some peer's memory is out of CMA's reach):
     * requests from other ranks arrive in am_buf, the reply goes from am_out */
    int am;
    MPI_Request am_req, am_reply;
    char *am_buf, *am_out;
    struct ferry_win *am_next;
};

/* w->lock[r] flag: the epoch was opened with MPI_MODE_NOCHECK, so the lock
 * word was not taken (the program asserts that no conflicting lock is
 * attempted meanwhile; MPICH and Open MPI skip the lock too, and programs
 * such as OpenCoarrays rely on it: a lock_all(NOCHECK) held for a window's
 * whole life beside other ranks' exclusive locks on it) */
#define FERRY_WIN_LOCK_NOCHECK 0x10000

void ferry_win_table_init(void);
/* Register w; sets w->handle. */
void ferry_win_register(struct ferry_win *w);
void ferry_win_unregister(struct ferry_win *w);
/* NULL when h is not a live window. */
struct ferry_win *ferry_win_get(MPI_Win h);

/* Passive-target lock words and the accumulate mutex of target rank r. */
void ferry_win_lock_acquire(struct ferry_win *w, int r, int exclusive);
void ferry_win_lock_release(struct ferry_win *w, int r, int exclusive);
void ferry_win_acc_acquire(struct ferry_win *w, int r);
void ferry_win_acc_release(struct ferry_win *w, int r);

/* Move the packed stream of (count, dt) at target rank r, displacement disp
 * (in the target's disp units) out of (read) or into (write) the target's
 * window. 0, or -errno when Cross Memory Attach failed. */
int ferry_win_target_io(struct ferry_win *w, int r, MPI_Aint disp, size_t count, const struct ferry_datatype *dt,
                        void *stream, int write);

/* Where the data of (count, dt) lie: the span [lo, lo + span) relative to the
 * buffer address, and the byte runs inside it (runs[2i] offset from lo,
 * runs[2i+1] length, in address order; malloc'd). Returns the run count. */
size_t ferry_win_layout(const struct ferry_datatype *dt, size_t count, MPI_Aint *lo, size_t *span, size_t **runs);

#endif
