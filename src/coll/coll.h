/* Collectives. Today: the algorithms the rest of the library needs
 * (barrier, allgather, max-allreduce for context ids), built on internal
 * point-to-point messages in the communicator's collective context. */
#ifndef FERRY_COLL_H
#define FERRY_COLL_H
#include <stddef.h>
#include <stdint.h>

struct ferry_comm;

/* Dissemination barrier: ceil(log2 n) rounds of zero-byte messages. */
int ferry_coll_barrier(struct ferry_comm *c);
/* Ring allgather of n bytes per rank into all (size * n bytes). */
int ferry_coll_allgather(struct ferry_comm *c, const void *mine, size_t n, void *all);
/* Every rank's v becomes the maximum over the communicator. */
int ferry_coll_allreduce_max_u32(struct ferry_comm *c, uint32_t *v);

#endif
