/* Posted and unexpected queues (see match.h). */
#include "core/match.h"
#include "core/request.h"
#include "core/util.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static struct ferry_request *posted_head, *posted_tail;
static struct ferry_unexp *unexp_head, *unexp_tail;

int ferry_match_idle(void)
{
    return !posted_head && !unexp_head;
}

void ferry_posted_add(struct ferry_request *r)
{
    r->next = NULL;
    r->prev = posted_tail;
    if (posted_tail)
        posted_tail->next = r;
    else
        posted_head = r;
    posted_tail = r;
}

static void posted_unlink(struct ferry_request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        posted_tail = r->prev;
    r->next = r->prev = NULL;
}

struct ferry_request *ferry_posted_take(uint32_t ctx, int src, int tag)
{
    for (struct ferry_request *r = posted_head; r; r = r->next) {
        if (ferry_match_ok(ctx, src, tag, r->ctx, r->peer, r->tag)) {
            posted_unlink(r);
            return r;
        }
    }
    return NULL;
}

int ferry_posted_remove(struct ferry_request *r)
{
    for (struct ferry_request *p = posted_head; p; p = p->next) {
        if (p == r) {
            posted_unlink(r);
            return 1;
        }
    }
    return 0;
}

void ferry_unexp_add(struct ferry_unexp *u)
{
    u->next = NULL;
    u->prev = unexp_tail;
    if (unexp_tail)
        unexp_tail->next = u;
    else
        unexp_head = u;
    unexp_tail = u;
}

static void unexp_unlink(struct ferry_unexp *u)
{
    if (u->prev)
        u->prev->next = u->next;
    else
        unexp_head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        unexp_tail = u->prev;
    u->next = u->prev = NULL;
}

struct ferry_unexp *ferry_unexp_find(uint32_t ctx, int src, int tag, int take)
{
    for (struct ferry_unexp *u = unexp_head; u; u = u->next) {
        if (!ferry_match_ok(u->ctx, u->src, u->tag, ctx, src, tag))
            continue;
        if (take)
            unexp_unlink(u);
        return u;
    }
    return NULL;
}

struct ferry_unexp *ferry_unexp_take_sent(int world_src, uint32_t ctx, int tag, uint32_t msg_id)
{
    for (struct ferry_unexp *u = unexp_head; u; u = u->next) {
        if (u->msg_id == msg_id && u->world_src == world_src && u->ctx == ctx && u->tag == tag) {
            unexp_unlink(u);
            return u;
        }
    }
    return NULL;
}

static struct ferry_unexp *unexp_pool;   /* freed records, linked by next */
static int unexp_pooled;
enum { UNEXP_POOL_MAX = 256 };

struct ferry_unexp *ferry_unexp_new(size_t bytes)
{
    struct ferry_unexp *u = unexp_pool;
    if (u) {
        unexp_pool = u->next;
        unexp_pooled--;
        memset(u, 0, offsetof(struct ferry_unexp, small));
    } else {
        u = ferry_xcalloc(1, sizeof *u);
    }
    u->data = bytes <= sizeof u->small ? u->small : ferry_xmalloc(bytes);
    return u;
}

void ferry_unexp_free(struct ferry_unexp *u)
{
    if (u->data != u->small)
        free(u->data);
    if (unexp_pooled >= UNEXP_POOL_MAX) {
        free(u);
        return;
    }
    u->next = unexp_pool;
    unexp_pool = u;
    unexp_pooled++;
}

void ferry_match_finalize(void)
{
    while (unexp_head) {
        struct ferry_unexp *u = unexp_head;
        unexp_head = u->next;
        ferry_unexp_free(u);
    }
    unexp_tail = NULL;
    posted_head = posted_tail = NULL;
    while (unexp_pool) {
        struct ferry_unexp *u = unexp_pool;
        unexp_pool = u->next;
        free(u);
    }
    unexp_pooled = 0;
}
