/* pmi_wire_corpus: run the fuzz target (fuzz_pmi_wire.c) without libFuzzer,
 * over the seed corpus plus a fixed number of deterministic mutations, so
 * that every build (gcc included) exercises the parser under ctest.
 *
 *   pmi_wire_corpus CORPUS_DIR [ITERATIONS [SEED]]
 *
 * The target abort()s on any inconsistency; a crash fails the test too. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/pmi_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SEEDS 256
#define CORPUS_INPUT_MAX (3 * PMI_WIRE_LINE_MAX)

static uint8_t *seed[MAX_SEEDS];
static size_t seed_len[MAX_SEEDS];
static int nseeds;

static uint64_t rng_state;
static uint64_t rnd(void)          /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static void add_seed(const uint8_t *d, size_t n)
{
    if (nseeds == MAX_SEEDS)
        return;
    seed[nseeds] = malloc(n ? n : 1);
    if (!seed[nseeds]) {
        perror("malloc");
        exit(2);
    }
    memcpy(seed[nseeds], d, n);
    seed_len[nseeds++] = n;
}

static int load_corpus(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "pmi_wire_corpus: cannot open corpus %s\n", dir);
        return -1;
    }
    struct dirent *e;
    static uint8_t buf[CORPUS_INPUT_MAX];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        add_seed(buf, n);
    }
    closedir(d);
    return 0;
}

/* Interesting bytes for this grammar. */
static uint8_t special(void)
{
    static const uint8_t s[] = { ' ', '=', '\n', '\0', '\t', '\r', 0x7f, 0x80, 0xff, 'a', '0', '-' };
    return s[below(sizeof s)];
}

static size_t mutate(uint8_t *buf, size_t n, size_t cap)
{
    int rounds = 1 + (int)below(6);
    for (int k = 0; k < rounds; k++) {
        switch (below(9)) {
        case 0:                                     /* flip a bit */
            if (n) buf[below(n)] ^= (uint8_t)(1u << below(8));
            break;
        case 1:                                     /* overwrite with a special byte */
            if (n) buf[below(n)] = special();
            break;
        case 2:                                     /* insert a byte */
            if (n < cap) {
                size_t at = below(n + 1);
                memmove(buf + at + 1, buf + at, n - at);
                buf[at] = below(2) ? special() : (uint8_t)rnd();
                n++;
            }
            break;
        case 3: {                                   /* delete a range */
            if (!n) break;
            size_t at = below(n), len = 1 + below(n - at);
            memmove(buf + at, buf + at + len, n - at - len);
            n -= len;
            break;
        }
        case 4: {                                   /* duplicate a range */
            if (!n) break;
            size_t at = below(n), len = 1 + below(n - at);
            if (n + len > cap) break;
            memmove(buf + at + len, buf + at, n - at);
            n += len;
            break;
        }
        case 5: {                                   /* splice in part of another seed */
            if (!nseeds) break;
            int s = (int)below((size_t)nseeds);
            size_t from = below(seed_len[s] + 1), len = below(seed_len[s] - from + 1);
            size_t at = below(n + 1);
            if (n + len > cap) break;
            memmove(buf + at + len, buf + at, n - at);
            memcpy(buf + at, seed[s] + from, len);
            n += len;
            break;
        }
        case 6:                                     /* truncate */
            n = below(n + 1);
            break;
        case 7: {                                   /* pad towards the line limit */
            size_t target = PMI_WIRE_LINE_MAX - 3 + below(6);
            while (n < target && n < cap)
                buf[n++] = below(4) ? 'x' : ' ';
            break;
        }
        default: {                                  /* append many pairs */
            size_t pairs = 20 + below(20);
            for (size_t i = 0; i < pairs && n + 8 < cap; i++)
                n += (size_t)snprintf((char *)buf + n, cap - n, " k%zu=v", i % 40);
            break;
        }
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR [ITERATIONS [SEED]]\n", argv[0]);
        return 2;
    }
    long iters = argc > 2 ? atol(argv[2]) : 20000;
    rng_state = argc > 3 ? strtoull(argv[3], NULL, 0) : 0x5eed5eedULL;
    if (!rng_state)
        rng_state = 1;
    if (load_corpus(argv[1]) != 0)
        return 2;

    /* Edge cases around the limits. */
    static uint8_t buf[CORPUS_INPUT_MAX];
    LLVMFuzzerTestOneInput(buf, 0);
    for (size_t len = PMI_WIRE_LINE_MAX - 2; len <= PMI_WIRE_LINE_MAX + 1; len++) {
        memset(buf, 'v', len);
        memcpy(buf, "cmd=x k=", 8);
        LLVMFuzzerTestOneInput(buf, len);
        buf[len - 1] = '\n';
        LLVMFuzzerTestOneInput(buf, len);
    }

    int ok = 0, bad = 0;
    struct pmi_wire_msg m;
    for (long i = 0; i < iters; i++) {
        size_t n;
        if (nseeds && below(8)) {
            int s = (int)below((size_t)nseeds);
            n = seed_len[s] < sizeof buf ? seed_len[s] : sizeof buf;
            memcpy(buf, seed[s], n);
        } else {
            n = below(64);
            for (size_t k = 0; k < n; k++)
                buf[k] = below(3) ? (uint8_t)(0x20 + below(0x60)) : (uint8_t)rnd();
        }
        n = mutate(buf, n, sizeof buf);
        LLVMFuzzerTestOneInput(buf, n);
        if (pmi_wire_parse(&m, (const char *)buf, n) == PMI_WIRE_OK)
            ok++;
        else
            bad++;
    }
    printf("pmi_wire_corpus: %d seeds, %ld mutated inputs (%d valid, %d rejected): ok\n",
           nseeds, iters, ok, bad);
    if (nseeds == 0) {
        fprintf(stderr, "pmi_wire_corpus: empty corpus\n");
        return 1;
    }
    return 0;
}
