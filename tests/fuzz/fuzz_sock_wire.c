/* Fuzz target for the socket transport's stream format
 * (src/transport/sock/sock_wire.h).
 *
 * Built with clang -fsanitize=fuzzer,address as fuzz_sock_wire, and linked
 * into sock_wire_corpus (pmi_wire_corpus.c's driver, any compiler) for
 * ctest. Any inconsistency abort()s:
 *   - walking arbitrary bytes as a stream: a span is not a whole, aligned
 *     packet inside the bytes, or a malformed header is not reported
 *   - a stream built from the input (payload sizes from its bytes) and fed
 *     in pieces of sizes from its bytes does not come out as the same
 *     packets, in order, each only once all its bytes are there
 *   - a hello is accepted that does not carry the magic, the whole secret
 *     and an acceptable uid, or one that does is refused */
#include "transport/sock/sock_wire.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "fuzz_sock_wire: check failed at %s:%d: %s\n", __FILE__, \
                    __LINE__, #cond);                                                \
            abort();                                                                 \
        }                                                                            \
    } while (0)

#define STREAM_MAX (8 * SOCK_MAX_PACKET)
static _Alignas(64) char stream[STREAM_MAX], rbuf[STREAM_MAX];

static void check_raw(const uint8_t *data, size_t size)
{
    size_t n = size < STREAM_MAX ? size : STREAM_MAX;
    memcpy(stream, data, n);
    size_t at = 0;
    long span;
    while ((span = sock_wire_next(stream + at, n - at)) > 0) {
        CHECK(span >= 64 && span % 8 == 0 && (size_t)span <= n - at);
        CHECK((size_t)span == sock_wire_span(((const struct ferry_pkt *)(stream + at))->payload));
        at += (size_t)span;
    }
    if (span < 0)
        CHECK(n - at >= 64 && ((const struct ferry_pkt *)(stream + at))->payload > SOCK_MAX_PACKET - 64);
    else
        CHECK(n - at < 64 || sock_wire_span(((const struct ferry_pkt *)(stream + at))->payload) > n - at);
}

static void check_built(const uint8_t *data, size_t size)
{
    /* packets: payload sizes from pairs of bytes (some past the limit) */
    uint32_t payloads[64];
    int np = 0, bad = -1;
    size_t len = 0;
    for (size_t i = 0; i + 1 < size && np < 64; i += 2) {
        uint32_t p = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8;
        if (data[i] == 0xff)
            p = SOCK_MAX_PACKET - 64 + (data[i + 1] & 3);   /* at and just past the limit */
        size_t span = sock_wire_span(p);
        if (len + span > STREAM_MAX)
            break;
        struct ferry_pkt *h = (struct ferry_pkt *)(stream + len);
        memset(h, 0, sizeof *h);
        h->payload = p;
        h->tag = np;
        memset(stream + len + 64, np & 0xff, span - 64);
        if (p > SOCK_MAX_PACKET - 64 && bad < 0)
            bad = np;
        payloads[np++] = p;
        len += span;
    }
    /* feed it in pieces; take out packets as they complete */
    size_t fed = 0, have = 0, at = 0;
    int got = 0, dropped = 0;
    for (size_t k = 0; fed < len && !dropped; k++) {
        size_t piece = 1 + (size ? data[k % size] : 7) * 97u % 9000u;
        if (piece > len - fed)
            piece = len - fed;
        memcpy(rbuf + have, stream + fed, piece);
        have += piece;
        fed += piece;
        long span;
        while ((span = sock_wire_next(rbuf + at, have - at)) > 0) {
            const struct ferry_pkt *h = (const struct ferry_pkt *)(rbuf + at);
            CHECK(got < np && h->tag == got && h->payload == payloads[got]);
            CHECK(got != bad);
            for (size_t b = 64; b < (size_t)span; b++)
                CHECK((unsigned char)rbuf[at + b] == (got & 0xff));
            at += (size_t)span;
            got++;
        }
        if (span < 0) {
            CHECK(got == bad);
            dropped = 1;
        }
    }
    CHECK(dropped ? got == bad : got == np);
}

static void check_hello(const uint8_t *data, size_t size)
{
    static const char secret[40] = "0123456789abcdef0123456789abcdef";
    struct sock_hello h;
    memset(&h, 0, sizeof h);
    memcpy(&h, data, size < sizeof h ? size : sizeof h);
    int npeers = 16, self = 3;
    int good_magic = h.magic == SOCK_HELLO_MAGIC, good_secret = memcmp(h.secret, secret, sizeof h.secret) == 0;
    CHECK(sock_wire_hello_ok(&h, secret, 1, npeers, self) ==
          (good_magic && good_secret && h.uid >= 0 && h.uid < npeers && h.uid != self));
    CHECK(sock_wire_hello_ok(&h, secret, 0, npeers, self) == (good_magic && good_secret && h.uid == -1));
    /* the same hello with the real magic and secret: only the uid decides */
    h.magic = SOCK_HELLO_MAGIC;
    memcpy(h.secret, secret, sizeof h.secret);
    CHECK(sock_wire_hello_ok(&h, secret, 1, npeers, self) == (h.uid >= 0 && h.uid < npeers && h.uid != self));
    /* one byte of the secret off: refused */
    h.secret[size % sizeof h.secret] ^= 1 + (size ? data[0] % 255 : 0);
    CHECK(!sock_wire_hello_ok(&h, secret, 1, npeers, self) && !sock_wire_hello_ok(&h, secret, 0, npeers, self));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_raw(data, size);
    check_built(data, size);
    check_hello(data, size);
    return 0;
}
