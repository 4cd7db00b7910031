/* The transport boundary: every transport (shm today; self, udp, ofi later)
 * implements this ops table and nothing above it knows which one it talks to.
 *
 * Sending: reserve a slot for one packet to a peer (header + the payload size
 * asked for, at most max_payload), fill it, commit it. Packets to one peer are delivered in
 * the order they were committed. Receiving: poll() hands every arrived packet
 * to ferry_proto_receive() and releases the slot once that returns.
 * Single copy: a transport may offer pull() and push(), reading and writing a
 * peer's memory directly. */
#ifndef FERRY_TRANSPORT_H
#define FERRY_TRANSPORT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "proto/packet.h"

struct ferry_transport {
    const char *name;
    /* Set up after boot; collective over all ranks (uses ferry_boot_put/fence/get). */
    int (*init)(void);
    /* Every rank has passed its final barrier: release resources. */
    void (*finalize)(void);
    /* Deliver arrived packets; returns how many were handled. */
    int (*poll)(void);
    /* A slot for one packet with `payload` bytes after the header to world
     * rank `peer`, or NULL when there is no room right now (the caller retries
     * after progressing). The packet's payload field must not exceed it. */
    struct ferry_pkt *(*reserve)(int peer, size_t payload);
    /* Publish the reserved slot; hdr->payload bytes follow the header. */
    void (*commit)(int peer, struct ferry_pkt *pkt);
    /* Largest payload one packet carries. */
    size_t (*max_payload)(int peer);
    /* Single copy: read len bytes at the peer's address `remote` into local.
     * Returns 0, or -errno (the caller then falls back to a copy protocol).
     * NULL when the transport has no single-copy mechanism. */
    int (*pull)(int peer, void *local, uint64_t remote, size_t len);
    /* Single copy the other way: write len bytes from local to the peer's
     * address `remote` (process_vm_writev). Same contract as pull(); offered
     * and allowed together with it. */
    int (*push)(int peer, uint64_t remote, const void *local, size_t len);
    /* Whether pull() and push() may be tried with this peer (probed at init). */
    int (*can_pull)(int peer);
    /* Give up single copy with this peer from now on (after a failed pull). */
    void (*disable_pull)(int peer);
    /* Nothing to do: block until a packet may have arrived, another thread
     * of this process asked to wake it (wake()), or briefly. */
    void (*sleep)(void);
    /* Wake this process's sleep(), if it sleeps: another thread of the
     * process made progress the sleeper may be waiting for. */
    void (*wake)(void);
    /* The oldest packet from `peer` that poll() has not handled, NULL when
     * none has arrived; it stays there until consume(peer). For a blocking
     * receive that waits on one peer (proto's recv_now). Optional. */
    const struct ferry_pkt *(*peek)(int peer);
    void (*consume)(int peer);
    /* About to wait: note the CPU this process runs on, and say whether
     * `peer` (a world rank, -1: none in particular) last waited on the same
     * one. Optional. */
    int (*shares_cpu)(int peer);
    /* For the packet just reserved for `peer`: whether the peer has taken
     * every packet committed to it before, but for at most one header-only
     * packet (a FIN or CTS it reads at once), so it likely waits for this one.
     * NULL unless the consumer reads a committed packet where the producer
     * wrote it (shared memory): only then may a producer commit an EAGER
     * packet before its payload is written and publish the payload's progress
     * in the header (FERRY_PKT_FLAG_STREAM), the consumer copying behind it. */
    int (*caught_up)(int peer);
};

extern const struct ferry_transport ferry_transport_shm;

#endif
