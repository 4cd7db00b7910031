/* The packet: the unit every transport moves between two ranks.
 *
 * A packet is a fixed 64-byte header followed by up to the transport's
 * max_payload bytes. The protocol layer writes the header and the payload
 * straight into the transport's send slot and reads them straight out of its
 * receive slot, so a packet is copied once on each side (copy-in/copy-out).
 * Messages up to FERRY_PKT_INLINE_MAX bytes travel inside the header itself
 * (inline slots): the receiver then reads one cache line per message. */
#ifndef FERRY_PACKET_H
#define FERRY_PACKET_H
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum ferry_pkt_type {
    FERRY_PKT_EAGER = 1,   /* whole message in the payload */
    FERRY_PKT_RTS,         /* rendezvous request to send: size, sender cookie, sender address */
    FERRY_PKT_CTS,         /* receiver matched, no single copy: send me DATA packets from `offset` up
                            * to msg_bytes (0: to the end);
                            * FLAG_SPLIT: write [0, offset) into my buffer at `addr` yourself
                            * (single copy) while I pull the rest, then answer PUSHED */
    FERRY_PKT_DATA,        /* a piece of a rendezvous message at `offset` */
    FERRY_PKT_FIN,         /* receiver pulled the data itself: sender's request is complete */
    FERRY_PKT_CANCEL,      /* sender cancels message msg_id: take it off your unexpected queue if it is there */
    FERRY_PKT_CANCEL_REPLY,/* answer to CANCEL for sender cookie sreq; FLAG_CANCELLED: it was removed */
    FERRY_PKT_PUSHED,      /* split single copy: the sender wrote `offset` bytes from the start of
                            * the receiver's buffer (any rest of its share follows as DATA);
                            * FLAG_DECLINED: it wrote nothing, pull [0, msg_bytes) from `addr` */
    FERRY_PKT_TYPE_COUNT
};

struct ferry_pkt {
    uint8_t type;          /* enum ferry_pkt_type */
    uint8_t flags;
    uint16_t seal;         /* the transport's: shared memory publishes the packet by setting it
                            * (see shm.c); the protocol never writes it (ferry_pkt_copy) */
    uint32_t msg_id;       /* EAGER/RTS/CANCEL: sender's number for a cancellable message (0: not
                            * cancellable); outside the union so inline messages carry it too */
    int32_t src;           /* sender's rank in the communicator */
    int32_t tag;
    uint32_t ctx;          /* context id of the communicator (+1 for collectives) */
    uint32_t payload;      /* payload bytes following this header */
    uint64_t msg_bytes;    /* EAGER/RTS: size of the whole message (packed stream) */
    union {
        struct {
            uint64_t offset;   /* DATA: position of the payload in the message;
                                * EAGER with FLAG_STREAM: payload bytes written so far (see send.c) */
            uint64_t sreq;     /* sender's request cookie */
            uint64_t rreq;     /* receiver's request cookie (CTS, DATA) */
            uint64_t addr;     /* RTS: sender buffer address for single copy; 0: not contiguous;
                                * CTS with FLAG_SPLIT: the receiver's buffer */
        };
        /* EAGER with FERRY_PKT_FLAG_INLINE: the whole message, in the header's
         * own cache line (payload is 0), so the receiver reads one line */
        uint8_t inline_data[32];
    };
};
static_assert(sizeof(struct ferry_pkt) == 64, "packet header is one cache line");
static_assert(offsetof(struct ferry_pkt, inline_data) == 32, "inline data fills the header's second half");

#define FERRY_PKT_INLINE_MAX 32   /* largest message carried inside the header */

/* A whole header into a transport's slot, all but the transport's seal. */
static inline void ferry_pkt_copy(struct ferry_pkt *dst, const struct ferry_pkt *src)
{
    const size_t at = offsetof(struct ferry_pkt, seal), after = at + sizeof dst->seal;
    memcpy(dst, src, at);
    memcpy((char *)dst + after, (const char *)src + after, sizeof *dst - after);
}

#define FERRY_PKT_FLAG_SYNC 0x1     /* RTS from a synchronous send */
#define FERRY_PKT_FLAG_INLINE 0x2   /* EAGER: the message is in inline_data */
#define FERRY_PKT_FLAG_CANCELLED 0x4 /* CANCEL_REPLY: the message was removed, it will never be received */
#define FERRY_PKT_FLAG_SPLIT 0x8    /* CTS: split single copy (see FERRY_PKT_CTS) */
#define FERRY_PKT_FLAG_DECLINED 0x10 /* PUSHED: the sender is busy copying; the receiver pulls its share */
#define FERRY_PKT_FLAG_STREAM 0x20  /* EAGER: published while its payload is written; `offset` grows */
#define FERRY_PKT_FLAG_FANOUT 0x40  /* RTS: the sender sends to several receivers at once (a scatter's
                                     * root): pulled single copy spares it copying for every one */

#endif
