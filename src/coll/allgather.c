#include "coll/coll.h"
#include "coll/coll_p2p.h"
#include "core/comm.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>

#define TAG_ALLGATHER 2
#define TAG_ALLREDUCE 3

int ferry_coll_allgather(struct ferry_comm *c, const void *mine, size_t n, void *all)
{
    int size = c->size, r = c->rank;
    char *a = all;
    memmove(a + (size_t)r * n, mine, n);
    int right = (r + 1) % size, left = (r - 1 + size) % size;
    /* step s: pass on the block that originated s ranks to our left */
    for (int s = 0; s < size - 1; s++) {
        int sblk = (r - s + size) % size, rblk = (r - s - 1 + size) % size;
        ferry_coll_sendrecv(c, a + (size_t)sblk * n, n, right, a + (size_t)rblk * n, n, left, TAG_ALLGATHER);
    }
    return 0;
}

int ferry_coll_allreduce_max_u32(struct ferry_comm *c, uint32_t *v)
{
    /* recursive doubling would be log n rounds; context-id agreement is rare
     * and communicators are small here, so the ring allgather is enough */
    uint32_t *buf = ferry_xmalloc((size_t)c->size * sizeof *buf);
    ferry_coll_allgather(c, v, sizeof *v, buf);
    for (int i = 0; i < c->size; i++)
        if (buf[i] > *v)
            *v = buf[i];
    free(buf);
    return 0;
}
