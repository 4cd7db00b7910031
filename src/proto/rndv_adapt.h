/* Rendezvous messages both ways between a pair: single copy or the pipelined
 * copy through the rings, chosen by timing both on the running job.
 *
 * Why measured and not modelled: on the development VM an exchange of large
 * messages (sendrecv, a 2-rank allgather, a ping-pong) ran 1.5-2.5x faster
 * through the rings than with single copy while the VM's cores exchanged
 * cache lines quickly, and 5-10x slower in its slow phases, which come and
 * go within minutes; one-way streams (the ladder's model) do not show this.
 * No fixed threshold is right in both phases, so the receiver times its
 * rendezvous receives from each peer in periods (a message, an exchange or
 * a window of them), keeps the cost per byte of each mechanism per size
 * class, uses the cheaper one, and tries the other again now and then
 * (FERRY_RNDV_BOTH_WAYS). */
#ifndef FERRY_PROTO_RNDV_ADAPT_H
#define FERRY_PROTO_RNDV_ADAPT_H

#include "proto/ladder.h"
#include <stddef.h>

struct ferry_request;

void ferry_rndv_adapt_init(void);
void ferry_rndv_adapt_finalize(void);
/* Receive r (world_peer set) matched a rendezvous message of `bytes` for
 * which the ladder chose `single` (split or pulled single copy); `both`:
 * large messages also go the other way (ferry_proto_rndv_both_ways).
 * Returns the mechanism to use: `single` or FERRY_MECH_PIPELINE. */
enum ferry_mech ferry_rndv_adapt_choose(struct ferry_request *r, size_t bytes, enum ferry_mech single, int both);
/* A rendezvous receive that ferry_rndv_adapt_choose timed (r->rndv_counted) is complete. */
void ferry_rndv_adapt_done(struct ferry_request *r);
/* This rank's last rendezvous send in progress to world rank `peer` is done. */
void ferry_rndv_adapt_sends_done(int peer);

#endif
