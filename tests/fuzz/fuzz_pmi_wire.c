/* Fuzz target for the PMI-1 wire parser (src/boot/pmi_wire.c).
 *
 * Built with clang -fsanitize=fuzzer,address as fuzz_pmi_wire, and linked
 * into pmi_wire_corpus (a plain driver, any compiler) for ctest. Any
 * inconsistency abort()s:
 *   - parse() result disagrees with an independent reference check
 *   - parse(format(parse(x))) differs from parse(x); format is not canonical
 *   - accessors disagree with the pairs
 *   - the line reader loses, invents or mis-splits bytes
 *   - format() accepts a key/value that parse() would not give back
 *   - percent-encoding does not round-trip, or decoding overruns */
#include "boot/pmi_wire.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "fuzz_pmi_wire: check failed at %s:%d: %s\n",        \
                    __FILE__, __LINE__, #cond);                                  \
            abort();                                                             \
        }                                                                        \
    } while (0)

/* Reference: is this line valid? Written independently of the parser. */
static int reference_ok(const uint8_t *d, size_t n)
{
    if (n && d[n - 1] == '\n')
        n--;
    if (n > PMI_WIRE_LINE_MAX - 1)
        return 0;
    size_t starts[PMI_WIRE_PAIRS_MAX + 1], lens[PMI_WIRE_PAIRS_MAX + 1];
    int ntok = 0;
    size_t i = 0;
    while (i < n) {
        uint8_t c = d[i];
        if (c == ' ') { i++; continue; }
        size_t s = i;
        while (i < n && d[i] != ' ') {
            if (d[i] < 0x21 || d[i] > 0x7e)
                return 0;
            i++;
        }
        if (ntok == PMI_WIRE_PAIRS_MAX)
            return 0;
        starts[ntok] = s;
        lens[ntok] = i - s;
        ntok++;
    }
    if (ntok == 0)
        return 0;
    for (int t = 0; t < ntok; t++) {
        const uint8_t *eq = memchr(d + starts[t], '=', lens[t]);
        if (!eq || eq == d + starts[t])
            return 0;
        size_t kl = (size_t)(eq - (d + starts[t]));
        for (int u = 0; u < t; u++) {
            const uint8_t *eq2 = memchr(d + starts[u], '=', lens[u]);
            size_t kl2 = (size_t)(eq2 - (d + starts[u]));
            if (kl == kl2 && memcmp(d + starts[t], d + starts[u], kl) == 0)
                return 0;
        }
    }
    return 1;
}

/* Reference strict decimal parse: optional sign, digits only, no overflow. */
static int reference_long(const char *s, long *out)
{
    int neg = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!*s)
        return -1;
    unsigned long limit = neg ? (unsigned long)LONG_MAX + 1 : (unsigned long)LONG_MAX;
    unsigned long acc = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (acc > (limit - d) / 10)
            return -1;
        acc = acc * 10 + d;
    }
    if (!neg)
        *out = (long)acc;
    else
        *out = acc == (unsigned long)LONG_MAX + 1 ? LONG_MIN : -(long)acc;
    return 0;
}

static void check_parse(const uint8_t *data, size_t size)
{
    static struct pmi_wire_msg m, m2;
    static char out[PMI_WIRE_LINE_MAX + 1], out2[PMI_WIRE_LINE_MAX + 1];

    int st = pmi_wire_parse(&m, (const char *)data, size);
    CHECK(st <= 0 && st >= PMI_WIRE_STATUS_MIN);
    CHECK(strcmp(pmi_wire_strerror(st), "unknown error") != 0);
    CHECK((st == PMI_WIRE_OK) == reference_ok(data, size));
    if (st != PMI_WIRE_OK) {
        CHECK(m.npairs == 0);
        return;
    }
    CHECK(m.npairs >= 1 && m.npairs <= PMI_WIRE_PAIRS_MAX);
    for (int i = 0; i < m.npairs; i++) {
        CHECK(pmi_wire_valid_key(pmi_wire_key(&m, i)));
        CHECK(pmi_wire_valid_value(pmi_wire_val(&m, i)));
        CHECK(pmi_wire_get(&m, pmi_wire_key(&m, i)) == pmi_wire_val(&m, i));
    }
    const char *cmd = pmi_wire_cmd(&m);
    CHECK(cmd == pmi_wire_get(&m, "cmd"));
    long v, rv;
    int gl = pmi_wire_get_long(&m, pmi_wire_key(&m, 0), &v);
    int rl = reference_long(pmi_wire_val(&m, 0), &rv);
    CHECK(gl == rl);
    CHECK(gl != 0 || v == rv);

    /* Round trip: format the parsed pairs, parse again, same pairs. */
    int len = pmi_wire_format_msg(out, sizeof out, &m);
    CHECK(len > 0 && len <= PMI_WIRE_LINE_MAX);
    CHECK((size_t)len == strlen(out) && out[len - 1] == '\n');
    CHECK((size_t)len <= size + 1);        /* canonical form is never longer */
    CHECK(pmi_wire_parse(&m2, out, (size_t)len) == PMI_WIRE_OK);
    CHECK(m2.npairs == m.npairs);
    for (int i = 0; i < m.npairs; i++) {
        CHECK(strcmp(pmi_wire_key(&m, i), pmi_wire_key(&m2, i)) == 0);
        CHECK(strcmp(pmi_wire_val(&m, i), pmi_wire_val(&m2, i)) == 0);
    }
    int len2 = pmi_wire_format_msg(out2, sizeof out2, &m2);
    CHECK(len2 == len && memcmp(out, out2, (size_t)len) == 0);
    /* A copy of the message is as good as the original (offsets, not pointers). */
    struct pmi_wire_msg *copy = malloc(sizeof *copy);
    CHECK(copy != NULL);
    memcpy(copy, &m, sizeof m);
    memset(&m, 0xa5, sizeof m);
    CHECK(pmi_wire_format_msg(out2, sizeof out2, copy) == len && memcmp(out, out2, (size_t)len) == 0);
    /* Too small a buffer is refused, not overrun. */
    CHECK(pmi_wire_format_msg(out2, (size_t)len, copy) == PMI_WIRE_ETOOLONG);
    free(copy);
}

/* Feed the bytes through the line reader in data-dependent chunks. */
static void check_reader(const uint8_t *data, size_t size)
{
    static struct pmi_wire_rbuf rb;
    pmi_wire_rbuf_init(&rb);
    size_t fed = 0, taken = 0;
    unsigned chunk_seed = size ? data[0] : 1;
    while (fed < size) {
        size_t avail;
        char *p = pmi_wire_rbuf_space(&rb, &avail);
        CHECK(avail <= PMI_WIRE_LINE_MAX);
        CHECK(pmi_wire_rbuf_pending(&rb) + avail == PMI_WIRE_LINE_MAX);
        chunk_seed = chunk_seed * 1103515245u + 12345u;
        size_t want = 1 + (chunk_seed >> 16) % 700;
        if (want > size - fed)
            want = size - fed;
        if (want > avail)
            want = avail;
        if (want == 0) {                     /* full, no newline */
            const char *line;
            size_t len;
            CHECK(pmi_wire_rbuf_next(&rb, &line, &len) == PMI_WIRE_ETOOLONG);
            CHECK(memchr(data + taken, '\n', fed - taken) == NULL);
            return;
        }
        memcpy(p, data + fed, want);
        pmi_wire_rbuf_commit(&rb, want);
        fed += want;
        const char *line;
        size_t len;
        int r;
        while ((r = pmi_wire_rbuf_next(&rb, &line, &len)) == 1) {
            CHECK(len >= 1 && len <= PMI_WIRE_LINE_MAX);
            CHECK(line[len - 1] == '\n');
            CHECK(memchr(line, '\n', len - 1) == NULL);
            CHECK(taken + len <= fed);
            CHECK(memcmp(line, data + taken, len) == 0);
            taken += len;
        }
        CHECK(pmi_wire_rbuf_pending(&rb) == fed - taken);
        if (r == PMI_WIRE_ETOOLONG) {
            CHECK(fed - taken == PMI_WIRE_LINE_MAX);
            CHECK(memchr(data + taken, '\n', fed - taken) == NULL);
            return;
        }
        CHECK(r == 0);
    }
}

/* Use the bytes as a key and a value for format(); whatever format accepts
 * must parse back to the same pair. */
static void check_format(const uint8_t *data, size_t size)
{
    static char key[PMI_WIRE_LINE_MAX + 2], val[PMI_WIRE_LINE_MAX + 2];
    static char out[PMI_WIRE_LINE_MAX + 1];
    static struct pmi_wire_msg m;
    size_t cut = size ? data[0] % (size + 1) : 0;
    size_t kl = cut < sizeof key - 1 ? cut : sizeof key - 1;
    size_t vl = size - cut < sizeof val - 1 ? size - cut : sizeof val - 1;
    memcpy(key, data, kl);
    key[kl] = '\0';
    memcpy(val, data + cut, vl);
    val[vl] = '\0';
    int len = pmi_wire_formatl(out, sizeof out, "cmd", "put", key, val, (const char *)NULL);
    int key_ok = pmi_wire_valid_key(key) && strcmp(key, "cmd") != 0;
    int val_ok = pmi_wire_valid_value(val);
    /* "cmd=put " key "=" val "\n" */
    int fits = 8 + strlen(key) + 1 + strlen(val) + 1 <= PMI_WIRE_LINE_MAX;
    CHECK((len >= 0) == (key_ok && val_ok && fits));
    if (len < 0)
        return;
    CHECK((size_t)len == 8 + strlen(key) + 1 + strlen(val) + 1);
    CHECK(pmi_wire_parse(&m, out, (size_t)len) == PMI_WIRE_OK);
    CHECK(m.npairs == 2);
    CHECK(strcmp(pmi_wire_cmd(&m), "put") == 0);
    CHECK(pmi_wire_get(&m, key) && strcmp(pmi_wire_get(&m, key), val) == 0);
}

/* Percent-encoding: any NUL-free string encodes to a valid value with no
 * space, comma or '=' that decodes back to it; decoding anything never
 * writes past its buffer and, when it succeeds, re-encodes to the
 * canonical form of the input. */
static void check_pct(const uint8_t *data, size_t size)
{
    char in[1024], enc[3 * sizeof in + 1], dec[sizeof in], again[sizeof enc];
    size_t n = size < sizeof in - 1 ? size : sizeof in - 1;
    memcpy(in, data, n);
    in[n] = 0;
    size_t len = strlen(in);
    long e = pmi_wire_pct_encode(in, enc, sizeof enc);
    CHECK(e >= 0 && (size_t)e == strlen(enc) && (size_t)e <= 3 * len);
    CHECK(pmi_wire_valid_value(enc) && !strpbrk(enc, " ,="));
    CHECK(pmi_wire_pct_encode(in, enc, (size_t)e) == -1);   /* no room for the NUL */
    long d = pmi_wire_pct_decode(enc, dec, sizeof dec);
    CHECK(d == (long)len && memcmp(dec, in, len + 1) == 0);
    if (len)
        CHECK(pmi_wire_pct_decode(enc, dec, len) == -2);
    /* arbitrary input as an encoded string */
    char small[16];
    long r = pmi_wire_pct_decode(in, small, sizeof small);
    CHECK(r >= -2 && r < (long)sizeof small);
    r = pmi_wire_pct_decode(in, dec, sizeof dec);
    if (r >= 0) {
        CHECK((size_t)r <= len && strlen(dec) == (size_t)r);
        CHECK(pmi_wire_pct_encode(dec, again, sizeof again) >= 0);
        CHECK(pmi_wire_pct_decode(again, enc, sizeof enc) == r && memcmp(enc, dec, (size_t)r) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_parse(data, size);
    check_reader(data, size);
    check_format(data, size);
    check_pct(data, size);
    return 0;
}
