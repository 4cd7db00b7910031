/* MPI_THREAD_MULTIPLE: one process-wide lock around every MPI call.
 *
 * Ferry's state (handle tables, matching queues, rings, schedules) is shared
 * by the whole process and changed by every call, so with several threads
 * inside MPI at once every entry point holds one lock for the whole call (the
 * "global critical section" of MPICH). A call that waits (MPI_Wait, MPI_Recv,
 * a collective) hands the lock to any thread queued for it on each empty turn
 * of its wait loop, so a thread blocked on a message another thread of the
 * same process will send lets that thread in.
 *
 * The lock is only taken once a program asked for MPI_THREAD_MULTIPLE and got
 * it: below that level an entry point tests one flag and goes on.
 *
 * It is a ticket lock (first come, first served), so a waiter that hands the
 * lock over and asks again goes behind every thread already queued; threads
 * queued for long sleep on a futex. The lock is recursive per thread: user
 * callbacks run inside MPI calls (reduction operations, attribute copy and
 * delete functions, error handlers, generalized requests) may call MPI. */
#ifndef FERRY_BIGLOCK_H
#define FERRY_BIGLOCK_H
#include "core/util.h"

/* Set once MPI_THREAD_MULTIPLE is provided: other threads may be inside MPI,
 * so a waiter sleeps only through ferry_biglock_sleep (the message it waits
 * for may come from one of them, which rings no doorbell). */
extern int ferry_biglock_on;

int ferry_biglock_enter_slow(void);
void ferry_biglock_exit_slow(void);

static inline int ferry_biglock_enter(void)
{
    if (FERRY_LIKELY(!ferry_biglock_on))
        return 0;
    return ferry_biglock_enter_slow();
}

static inline void ferry_biglock_exit(int *entered)
{
    if (FERRY_UNLIKELY(*entered))
        ferry_biglock_exit_slow();
}

/* First statement of every MPI entry point: holds the lock until the call
 * returns, on every return path (the cleanup runs after the return value is
 * computed). */
#define FERRY_API_ENTER()                                                                                  \
    int ferry_api_entered_ __attribute__((cleanup(ferry_biglock_exit), unused)) = ferry_biglock_enter()

/* One empty turn of a wait loop: if other threads are queued for the lock,
 * let them all have it, then queue again (the nesting depth stays). Returns 1
 * if it handed over. */
int ferry_biglock_yield(void);

/* Oversubscribed, nothing to do: release the lock and sleep on this rank's
 * doorbell until a peer process rings it or a thread of this process leaves
 * the lock (what it did may be what this thread waits for). Only one thread
 * sleeps at a time; returns 0 without sleeping if another one does. */
int ferry_biglock_sleep(void);
/* For the transport's sleep: a thread of this process asked to wake it. */
int ferry_biglock_woken(void);

/* The thread level MPI_Init_thread and MPI_T_init_thread provide for
 * `required`: at most FERRY_THREAD_MAX. Up to MPI_THREAD_SERIALIZED Ferry
 * takes no locks (it keeps no per-thread state); MPI_THREAD_MULTIPLE turns
 * the lock on, for good. */
int ferry_thread_level(int required);

#endif
