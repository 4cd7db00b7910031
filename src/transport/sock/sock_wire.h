/* The socket transport's stream format (sock.h), apart from the sockets so
 * that it can be tested and fuzzed on its own (tests/fuzz).
 *
 * A connection starts with one hello; then packets follow back to back:
 * the 64-byte header (proto/packet.h) and hdr.payload bytes, padded with
 * zeros to a multiple of 8 so that the next header stays 8-byte aligned in
 * the receiver's buffer. A payload above SOCK_MAX_PACKET - 64 is malformed
 * (the sender never makes one): the receiver drops the connection. */
#ifndef FERRY_SOCK_WIRE_H
#define FERRY_SOCK_WIRE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/packet.h"

#define SOCK_HELLO_MAGIC 0x4645525259534bull   /* "FERRYSK" */
#define SOCK_MAX_PACKET (64 * 1024)           /* header + payload */

/* First bytes on every connection. */
struct sock_hello {
    uint64_t magic;
    int32_t uid;            /* the connecting process (-1 on port sockets) */
    int32_t pid;            /* its process id: the receiver pulls its large messages with
                             * Cross Memory Attach */
    char secret[40];        /* the universe's secret, NUL-padded */
};
static_assert(sizeof(struct sock_hello) == 56, "hello layout");

/* Bytes a packet with `payload` bytes takes on the stream. */
static inline size_t sock_wire_span(uint64_t payload)
{
    return sizeof(struct ferry_pkt) + (size_t)((payload + 7) & ~(uint64_t)7);
}

/* The next packet in buf[0, len) (8-byte aligned): its span when it is all
 * there, 0 when more bytes must come, -1 when its header is malformed. */
static inline long sock_wire_next(const char *buf, size_t len)
{
    if (len < sizeof(struct ferry_pkt))
        return 0;
    const struct ferry_pkt *p = (const struct ferry_pkt *)buf;
    if (p->payload > SOCK_MAX_PACKET - sizeof *p)
        return -1;
    size_t span = sock_wire_span(p->payload);
    return len < span ? 0 : (long)span;
}

/* Whether a hello comes from this job: the magic and the whole secret
 * field match; a process's own connection names a uid in [0, npeers) other
 * than self (want_uid), a port connection -1. */
static inline int sock_wire_hello_ok(const struct sock_hello *h, const char *secret, int want_uid, int npeers,
                                     int self)
{
    if (h->magic != SOCK_HELLO_MAGIC || memcmp(h->secret, secret, sizeof h->secret) != 0)
        return 0;
    return want_uid ? h->uid >= 0 && h->uid < npeers && h->uid != self : h->uid == -1;
}

#endif
