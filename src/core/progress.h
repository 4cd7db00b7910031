/* The progress engine: every MPI call that waits drives all communication,
 * so nonblocking operations advance while a rank sits in any blocking call.
 *
 * Waiting spins on progress for FERRY_SPIN empty polls, then yields the CPU
 * on every further empty poll, so an oversubscribed rank (more ranks than
 * cores) does not starve the peer it waits for. */
#ifndef FERRY_PROGRESS_H
#define FERRY_PROGRESS_H

/* Tell the core we are spinning: fewer reads of the line a peer is writing
 * (x86 pause, Arm yield), and a sibling hyperthread gets the pipeline. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Poll every transport and push queued sends; returns the work done. */
int ferry_progress(void);

struct ferry_waiter {
    long idle;
    int peer_plus1;   /* world rank + 1 of the peer the wait is for; 0: unknown */
    int same_cpu;     /* oversubscribed: that peer last waited on our CPU */
    double yield_since;   /* see ferry_yielded_enough */
    int stream;       /* waiting for one of many requests (a window): poll less often */
};
/* One step of a wait loop: progress, then back off if nothing happened. */
void ferry_progress_wait(struct ferry_waiter *w);

/* Oversubscribed: a waiter that has made its count of yields asks this
 * before each sleep; no until it has gone on yielding FERRY_OVERSUB_YIELD_US
 * (*since: 0 before the first ask, then the time of it). */
int ferry_yielded_enough(double *since);



/* Layers above the transports with work of their own to advance (nonblocking
 * collective schedules) register a hook; it runs on every progress call and
 * returns the work it did. */
typedef int (*ferry_progress_hook)(void);
void ferry_progress_add_hook(ferry_progress_hook fn);

/* Set by a hook when it waits on something no doorbell announces (flags in
 * shared memory): an oversubscribed waiter yields instead of sleeping, or,
 * when nothing else on its CPU can do what it waits for, keeps polling
 * (yielding now and then). */
enum { FERRY_UNRUNG_YIELD = 1, FERRY_UNRUNG_KEEP_CPU = 2 };
extern int ferry_progress_unrung;

/* A waiter that keeps its CPU because nothing else there can do what it waits
 * for still goes through its usual yield/sleep policy on every 64th poll:
 * which ranks share a CPU is only a hint (they migrate). */
static inline int ferry_keep_cpu_yields(unsigned long polls)
{
    return (polls & 63) == 0;
}

struct ferry_request;
/* Drive progress until r completes. */
void ferry_request_wait(struct ferry_request *r);
/* ... one of `pending` requests a caller waits for together (MPI_Waitall) */
void ferry_request_wait_batch(struct ferry_request *r, int pending);
#endif
