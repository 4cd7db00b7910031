/* Protocols: how a message crosses a transport.
 *
 *   eager       message <= eager limit: one EAGER packet, the send completes
 *               as soon as the packet is in the transport.
 *   rendezvous  larger or synchronous: RTS {size, cookie, address}. When the
 *               receive matches, the receiver either pulls the data itself
 *               with the transport's single-copy pull() and answers FIN; or
 *               splits the copy (CTS with FLAG_SPLIT naming its buffer: the
 *               sender writes the head with push() and answers PUSHED while
 *               the receiver pulls the tail and answers FIN); or answers CTS
 *               and the sender streams DATA packets (pipelined
 *               copy-in/copy-out), packing and unpacking piece by piece.
 *
 * Incoming packets are dispatched on their type through one table (recv.c). */
#ifndef FERRY_PROTO_H
#define FERRY_PROTO_H
#include <mpi.h>
#include <stddef.h>
#include "proto/packet.h"

struct ferry_request;
struct ferry_unexp;

void ferry_proto_init(void);
void ferry_proto_finalize(void);
/* Start a send; r has buf/count/dt/comm/peer/tag/ctx/mode set. */
void ferry_proto_isend(struct ferry_request *r);
/* The blocking-send fast path: a message small enough to go eagerly, to a
 * peer with nothing queued, goes straight into the transport without a
 * request. Returns 1 when sent, 0 when the caller must take the full path. */
struct ferry_comm;
struct ferry_datatype;
int ferry_proto_send_now(struct ferry_comm *c, const void *buf, size_t count, struct ferry_datatype *dt, int dest,
                         int tag);
/* The blocking-receive fast path: with nothing else to match against, the
 * next packet from the source is this receive's message if it is an eager
 * one it accepts; delivered into buf without a request. Returns 1 when
 * received (status filled), 0 when the caller must take the full path. */
int ferry_proto_recv_now(struct ferry_comm *c, void *buf, size_t count, struct ferry_datatype *dt, int src, int tag,
                         MPI_Status *status);
/* Start a receive: match an unexpected message or post it. */
void ferry_proto_irecv(struct ferry_request *r);
/* Start receiving r from the message u that Mprobe took off the unexpected queue. */
void ferry_proto_mrecv(struct ferry_request *r, struct ferry_unexp *u);
/* Called by transports for every packet that arrives from world rank src. */
void ferry_proto_receive(int src, const struct ferry_pkt *pkt);
/* Whether this rank is pulling a message right now (its core is busy
 * copying: a sender then leaves its share of a split copy to the receiver). */
int ferry_proto_pulling(void);
/* A rendezvous receive from world rank peer was matched: whether large
 * messages also go the other way (this rank's rendezvous sends to peer are
 * in flight, or it started one since the previous such receive: an exchange,
 * a bidirectional stream, a ping-pong). */
int ferry_proto_rndv_both_ways(int peer);
/* Rendezvous sends to world rank `peer` from this rank not yet done. */
int ferry_proto_rndv_sends_to(int peer);
/* Advance single-copy pulls by one piece each; returns how many are active. */
int ferry_proto_progress_pulls(void);
/* Push queued packets into transports; returns how many went out. */
int ferry_proto_progress_sends(void);
/* Queue a control packet (CTS/FIN) to world rank peer, in order with data. */
void ferry_proto_send_ctrl(int peer, const struct ferry_pkt *hdr);
/* MPI_Cancel of send r: asks the receiver to drop the message if it has not
 * matched; r completes when the answer arrives (cancelled or not). Returns 1
 * when a cancel was sent, 0 when there is nothing to cancel. */
int ferry_proto_cancel_send(struct ferry_request *r);
/* Send operations started and not complete yet. */
long ferry_proto_sends_inflight(void);
/* Packets waiting in per-peer queues for transport space. */
long ferry_proto_sends_queued(void);
/* Eager limit for a peer (from FERRY_EAGER_MAX and the transport's packet size). */
size_t ferry_proto_eager_max(int peer);

#endif
