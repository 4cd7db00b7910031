#ifndef FERRY_COLL_P2P_H
#define FERRY_COLL_P2P_H
#include <stddef.h>
struct ferry_comm;
/* Send sn bytes to dest and receive rn bytes from src in c's collective context. */
void ferry_coll_sendrecv(struct ferry_comm *c, const void *sbuf, size_t sn, int dest, void *rbuf, size_t rn,
                         int src, int tag);
#endif
