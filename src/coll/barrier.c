#include "coll/coll.h"
#include "coll/coll_p2p.h"
#include "core/comm.h"

#define TAG_BARRIER 1

int ferry_coll_barrier(struct ferry_comm *c)
{
    int n = c->size, r = c->rank;
    for (int k = 1; k < n; k <<= 1)
        ferry_coll_sendrecv(c, NULL, 0, (r + k) % n, NULL, 0, (r - k + n) % n, TAG_BARRIER);
    return 0;
}
