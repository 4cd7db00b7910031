/* Barrier algorithms. */
#include "coll/coll_impl.h"

/* Dissemination: in round k every rank signals rank + 2^k and waits for
 * rank - 2^k; after ceil(log2 n) rounds everyone has heard from everyone. */
void build_dissemination(struct ferry_sched *s)
{
    int n = s->size, r = s->rank;
    for (int k = 1; k < n; k <<= 1) {
        sched_send(s, NULL, 0, sched_byte(), (r + k) % n);
        sched_recv(s, NULL, 0, sched_byte(), (r - k + n) % n);
        sched_fence(s);
    }
}

int barrier_dissemination(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    build_dissemination(s);
    return MPI_SUCCESS;
}

/* Binomial fan-in to rank 0, then binomial fan-out. */
int barrier_binomial(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->size, r = s->rank;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (r & mask) {
            sched_fence(s);
            sched_send(s, NULL, 0, sched_byte(), r - mask);
            break;
        }
        if (r + mask < n)
            sched_recv(s, NULL, 0, sched_byte(), r + mask);
    }
    sched_fence(s);
    build_bcast_binomial(s, NULL, 0, sched_byte(), 0);
    return MPI_SUCCESS;
}
