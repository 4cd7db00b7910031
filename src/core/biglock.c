/* The process-wide lock of MPI_THREAD_MULTIPLE (see biglock.h). */
#include "core/biglock.h"
#include "core/config.h"
#include "core/progress.h"
#include "transport/transport.h"
#include <limits.h>
#include <mpi.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

int ferry_biglock_on;

/* A ticket lock: a thread takes the next ticket and owns the lock while
 * `serving` equals it. Only the owner writes `serving`. The two counters sit
 * on lines of their own: arrivals bump `next` while the owner's release
 * writes `serving`. */
static _Alignas(FERRY_CACHELINE) uint32_t next_ticket;
static _Alignas(FERRY_CACHELINE) uint32_t serving;
static __thread int depth;   /* this thread's nesting of MPI calls while it holds the lock */
/* A thread waits asleep on the doorbell (lock released); set and cleared by
 * that thread while it holds the lock, read by others while they hold it. */
static int sleeper;
/* Set by an owner that leaves the lock while a thread sleeps: what it did may
 * have completed what the sleeper waits for. */
static int woken;

/* Polls of `serving` before a queued thread sleeps: a handover inside one
 * wait loop takes a few hundred nanoseconds when the next owner runs on
 * another CPU; when it does not (more threads than CPUs), polling longer only
 * keeps the owner off this CPU. */
#define SPIN_POLLS 200

static void acquire(void)
{
    /* seq_cst, with the release below: either the releaser sees this ticket
     * and wakes the futex, or this thread sees the new `serving` before it
     * sleeps (the kernel compares it again under its own lock) */
    uint32_t t = __atomic_fetch_add(&next_ticket, 1, __ATOMIC_SEQ_CST);
    for (int i = 0;; i++) {
        uint32_t s = __atomic_load_n(&serving, __ATOMIC_SEQ_CST);
        if (s == t)
            return;   /* seq_cst load: acquires everything the previous owner wrote */
        if (i < SPIN_POLLS)
            cpu_relax();
        else
            syscall(SYS_futex, &serving, FUTEX_WAIT_PRIVATE, s, NULL, NULL, 0);
    }
}

static void release_lock(void)
{
    uint32_t s = serving + 1;
    __atomic_store_n(&serving, s, __ATOMIC_SEQ_CST);
    /* anyone queued may be asleep; all wake and the one whose ticket it is
     * goes on (threads in MPI at once are few) */
    if (__atomic_load_n(&next_ticket, __ATOMIC_SEQ_CST) != s)
        syscall(SYS_futex, &serving, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void release(void)
{
    int wake = sleeper;
    release_lock();
    if (wake) {
        /* seq_cst: the sleeper arms its doorbell, then reads this */
        __atomic_store_n(&woken, 1, __ATOMIC_SEQ_CST);
        ferry_transport_shm.wake();
    }
}

int ferry_thread_level(int required)
{
    int level = required < ferry_cfg.thread_max ? required : (int)ferry_cfg.thread_max;
    if (level < MPI_THREAD_SINGLE)
        level = MPI_THREAD_SINGLE;
    if (level == MPI_THREAD_MULTIPLE)
        ferry_biglock_on = 1;
    return level;
}

int ferry_biglock_enter_slow(void)
{
    if (depth++ == 0)
        acquire();
    return 1;
}

void ferry_biglock_exit_slow(void)
{
    if (--depth == 0)
        release();
}

int ferry_biglock_yield(void)
{
    /* at any depth: MPI calls made inside Ferry (MPI_Win_fence runs
     * MPI_Barrier) wait at points where the outer call's state is settled,
     * and a thread that kept the lock while waiting could deadlock against a
     * peer process whose threads wait in the opposite order */
    if (!ferry_biglock_on || depth == 0)
        return 0;
    if (__atomic_load_n(&next_ticket, __ATOMIC_RELAXED) == serving + 1)
        return 0;   /* nobody queued */
    release();
    acquire();      /* a new ticket: behind every thread queued now */
    return 1;
}

int ferry_biglock_sleep(void)
{
    if (!ferry_biglock_on || depth == 0)
        return 0;
    if (sleeper)
        return 0;   /* one sleeper at a time: the doorbell wakes one thread */
    sleeper = 1;
    __atomic_store_n(&woken, 0, __ATOMIC_RELAXED);   /* this thread polled after any earlier wake */
    release_lock();   /* not release(): no wake for its own sleep */
    ferry_transport_shm.sleep();
    acquire();
    sleeper = 0;
    return 1;
}

int ferry_biglock_woken(void)
{
    return __atomic_load_n(&woken, __ATOMIC_SEQ_CST);
}
