/* Tag matching: the posted-receive queue and the unexpected-message queue.
 *
 * Both are kept in arrival/post order and searched front to back, which is
 * what makes matching obey MPI's non-overtaking rule: transports deliver the
 * packets of one sender in order, an arriving message matches the oldest
 * posted receive that accepts it, and a new receive matches the oldest
 * unexpected message it accepts. */
#ifndef FERRY_MATCH_H
#define FERRY_MATCH_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

struct ferry_request;

/* A message that arrived before a matching receive was posted. */
struct ferry_unexp {
    uint32_t ctx;
    int src, tag;           /* sender's comm rank, tag */
    int world_src;
    size_t bytes;           /* message size (packed stream) */
    int rndv;               /* 1: only the RTS arrived; the data is still at the sender */
    int sync;
    int fanout;             /* rndv: FERRY_PKT_FLAG_FANOUT */
    uint32_t msg_id;        /* sender's number for it (0: not cancellable), see FERRY_PKT_CANCEL */
    uint64_t sreq;          /* rndv: sender cookie */
    uint64_t addr;          /* rndv: sender address for single copy (0: none) */
    char *data;             /* eager: copy of the payload (small: it is `small`) */
    struct ferry_unexp *next, *prev;
    char small[64];         /* eager messages up to 64 bytes, without a second allocation */
};

/* A zeroed record, from a free list (a window of small messages that
 * arrive before their receives, as in a message-rate loop whose sender runs
 * ahead, would otherwise take two malloc/free pairs each); data points at a
 * buffer for `bytes` of eager payload (rndv: pass 0). */
struct ferry_unexp *ferry_unexp_new(size_t bytes);

static inline int ferry_match_ok(uint32_t ctx, int src, int tag, uint32_t want_ctx, int want_src, int want_tag)
{
    return ctx == want_ctx && (want_src == src || want_src == MPI_ANY_SOURCE) &&
           (want_tag == tag || (want_tag == MPI_ANY_TAG && tag >= 0));
}

void ferry_posted_add(struct ferry_request *r);
/* Remove and return the oldest posted receive matching the envelope. */
struct ferry_request *ferry_posted_take(uint32_t ctx, int src, int tag);
/* Remove r from the posted queue; 1 if it was there (cancel). */
int ferry_posted_remove(struct ferry_request *r);

void ferry_unexp_add(struct ferry_unexp *u);
/* Oldest unexpected message matching (src/tag may be wildcards); removed
 * from the queue when take != 0. */
struct ferry_unexp *ferry_unexp_find(uint32_t ctx, int src, int tag, int take);
/* Remove and return the unexpected message that world rank world_src sent
 * as msg_id on ctx with tag (a cancelled send), NULL if it is not queued
 * (it matched already). ctx and tag guard against msg_id wrapping. */
struct ferry_unexp *ferry_unexp_take_sent(int world_src, uint32_t ctx, int tag, uint32_t msg_id);
void ferry_unexp_free(struct ferry_unexp *u);
/* Both queues are empty: an arriving message can only go to a receive posted
 * from now on. */
int ferry_match_idle(void);
void ferry_match_finalize(void);

#endif
