/* The protocol ladder's cost model and thresholds (see ladder.h). */
#include "proto/ladder.h"
#include "proto/packet.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/util.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 40

struct point {
    double bytes, usec;
};
struct curve {
    int n;
    struct point p[MAX_POINTS];
};

const char *const ferry_mech_names[FERRY_MECH_COUNT] = {"eager", "pipeline", "cma", "split"};

/* Built-in model, measured on the development machine (a 2-core Intel
 * Xeon VM, 2 MiB rings) with `ferry-tune --p2p`: per mechanism and size the
 * mean of ping-pong one-way and streaming (a window of 8) time per message,
 * medians of 5 runs. Eager is cheapest up to about 10 KiB, pulled single
 * copy from there to about 27 KiB (16 KiB ping-pong 1.5-2.1 against 2.3-2.6
 * us eager), split single copy above; the pipeline never. Eager keeps the
 * messages a packet holds to a receiver behind in a stream (ladder.h).
 * (On the VM's earlier AMD host eager won up to the packet and the pipeline
 * streamed anywhere between 2.4 and 33 GB/s from one run to the next.) */
static const struct curve builtin[FERRY_MECH_COUNT] = {
    [FERRY_MECH_EAGER] = {7, {{0, 0.18}, {1024, 0.327}, {2048, 0.485}, {4096, 0.763}, {8192, 1.18}, {16384, 1.86}, {32704, 3.17}}},
    [FERRY_MECH_PIPELINE] = {15, {{1024, 0.694}, {2048, 0.806}, {4096, 1.1}, {8192, 1.54}, {16384, 2.32}, {32768, 3.76}, {65536, 5.63}, {131072, 9.28}, {262144, 16.6}, {524288, 32.1}, {1048576, 74.8}, {2097152, 168}, {4194304, 334}, {8388608, 648}, {16777216, 1.24e+03}}},
    [FERRY_MECH_CMA] = {15, {{1024, 1.24}, {2048, 1.19}, {4096, 1.07}, {8192, 1.3}, {16384, 1.42}, {32768, 2.43}, {65536, 3.56}, {131072, 6.11}, {262144, 10.6}, {524288, 22}, {1048576, 66.5}, {2097152, 160}, {4194304, 304}, {8388608, 644}, {16777216, 1.28e+03}}},
    [FERRY_MECH_SPLIT] = {15, {{1024, 1.49}, {2048, 1.5}, {4096, 1.45}, {8192, 1.55}, {16384, 1.89}, {32768, 2.13}, {65536, 2.73}, {131072, 4.12}, {262144, 6.47}, {524288, 11.1}, {1048576, 27.3}, {2097152, 72.8}, {4194304, 210}, {8388608, 455}, {16777216, 908}}},
};

static struct curve model[FERRY_MECH_COUNT];
static const char *model_source = "built in";
struct ferry_ladder ferry_ladder;

double ferry_ladder_cost(enum ferry_mech m, size_t n)
{
    const struct curve *c = &model[m];
    double x = (double)n;
    int i = 1;
    while (i < c->n - 1 && x > c->p[i].bytes)
        i++;
    /* the segment [i-1, i]; below the first or above the last point the
     * nearest segment's per-message and per-byte costs carry on */
    const struct point *a = &c->p[i - 1], *b = &c->p[i];
    double slope = (b->usec - a->usec) / (b->bytes - a->bytes);
    return a->usec + (x - a->bytes) * slope;
}

static int mech_index(const char *s)
{
    for (int m = 0; m < FERRY_MECH_COUNT; m++)
        if (!strcmp(s, ferry_mech_names[m]))
            return m;
    return -1;
}

/* Lines "MECHANISM BYTES MICROSECONDS", ascending sizes per mechanism, '#'
 * comments. Every mechanism needs two points at least (single copy, pulled
 * or split, may be left out: it is then never chosen); otherwise the file is
 * ignored as a whole (with a warning) and the built-in model stays. */
static int load_model(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        ferry_log(0, "FERRY_P2P_MODEL: cannot open %s (%s); using the built-in model", path, strerror(errno));
        return -1;
    }
    struct curve c[FERRY_MECH_COUNT];
    memset(c, 0, sizeof c);
    char line[256], name[32];
    int lineno = 0, bad = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        double bytes, usec;
        int got = sscanf(line, "%31s %lf %lf", name, &bytes, &usec);
        if (got <= 0)
            continue;
        int m = got == 3 ? mech_index(name) : -1;
        struct curve *cv = m >= 0 ? &c[m] : NULL;
        if (!cv || bytes < 0 || usec <= 0 || cv->n == MAX_POINTS || (cv->n && bytes <= cv->p[cv->n - 1].bytes)) {
            ferry_log(0, "FERRY_P2P_MODEL: %s:%d: expected \"eager|pipeline|cma|split BYTES USEC\" with ascending "
                         "sizes; using the built-in model", path, lineno);
            bad = 1;
            break;
        }
        cv->p[cv->n++] = (struct point){bytes, usec};
    }
    fclose(f);
    for (int m = 0; !bad && m < FERRY_MECH_COUNT; m++) {
        if (c[m].n == 0 && (m == FERRY_MECH_CMA || m == FERRY_MECH_SPLIT)) {
            /* not measured (single copy unavailable where the model was
             * made, or a model from before split): never chosen */
            c[m] = (struct curve){2, {{0, 1e30}, {1, 1e30}}};
            continue;
        }
        if (c[m].n < 2) {
            ferry_log(0, "FERRY_P2P_MODEL: %s has fewer than two points for %s; using the built-in model", path,
                      ferry_mech_names[m]);
            bad = 1;
        }
    }
    if (bad)
        return -1;
    memcpy(model, c, sizeof model);
    model_source = path;
    return 0;
}

/* The first run of sizes where mechanism m is the cheapest rendezvous. */
struct range {
    size_t min, max;
    int open, seen;
};

static void range_step(struct range *r, int cheapest, size_t n)
{
    if (cheapest && !r->seen) {
        r->min = n;
        r->open = r->seen = 1;
    } else if (!cheapest && r->open) {
        r->max = n;
        r->open = 0;
    }
}

static void range_close(struct range *r, enum ferry_mech m, size_t eager_max)
{
    if (r->open)
        r->max = SIZE_MAX;
    /* starting right above eager when it already wins there */
    if (r->seen && r->min > eager_max) {
        double c = ferry_ladder_cost(m, eager_max + 1);
        if (c < ferry_ladder_cost(FERRY_MECH_PIPELINE, eager_max + 1) &&
            (m == FERRY_MECH_CMA || c < ferry_ladder_cost(FERRY_MECH_CMA, eager_max + 1)))
            r->min = eager_max + 1;
    }
}

static size_t threshold(long forced, size_t derived)
{
    return forced >= 0 ? (size_t)forced : derived;
}

/* Walk sizes 64 B .. 1 GiB in steps of 2^(1/8) and keep the cheapest
 * mechanism at each: eager up to the largest measured (not extrapolated) size
 * where it beats every rendezvous mechanism, then, above that, the first run
 * of sizes where single copy (pulled, or split between both ends) is the
 * cheapest rendezvous. The rendezvous walk starts where eager stops winning,
 * not at the largest eager size measured: on the development VM's Intel host
 * pulled single copy won from 10 to 30 KiB, below the packet's 32 KiB. */
#define LADDER_STEP 1.0905077326652577   /* 2^(1/8) */
static void derive_thresholds(void)
{
    const struct curve *e = &model[FERRY_MECH_EAGER];
    double eager_top = e->p[e->n - 1].bytes;
    size_t eager_max = FERRY_PKT_INLINE_MAX;
    for (double x = 64; x <= eager_top; x *= LADDER_STEP) {
        size_t n = (size_t)x;
        double rndv = FERRY_MIN(ferry_ladder_cost(FERRY_MECH_PIPELINE, n),
                                FERRY_MIN(ferry_ladder_cost(FERRY_MECH_CMA, n), ferry_ladder_cost(FERRY_MECH_SPLIT, n)));
        if (ferry_ladder_cost(FERRY_MECH_EAGER, n) <= rndv)
            eager_max = n;
    }
    struct range cma = {0}, split = {0};
    for (double x = 64; x <= (double)(1ull << 30); x *= LADDER_STEP) {
        size_t n = (size_t)x;
        if (n <= eager_max)
            continue;   /* the rendezvous choice matters above the eager range */
        double pipe = ferry_ladder_cost(FERRY_MECH_PIPELINE, n);
        double pull = ferry_ladder_cost(FERRY_MECH_CMA, n);
        double both = ferry_ladder_cost(FERRY_MECH_SPLIT, n);
        double rndv = FERRY_MIN(pipe, FERRY_MIN(pull, both));
        range_step(&split, both == rndv && both < pipe, n);
        range_step(&cma, pull == rndv && pull < pipe && pull < both, n);
    }
    range_close(&split, FERRY_MECH_SPLIT, eager_max);
    range_close(&cma, FERRY_MECH_CMA, eager_max);
    ferry_ladder.eager_max = threshold(ferry_cfg.eager_max, eager_max);
    ferry_ladder.eager_behind_max = ferry_cfg.eager_behind_max >= 0 ? (size_t)ferry_cfg.eager_behind_max
                                    : ferry_cfg.eager_max >= 0   ? ferry_ladder.eager_max
                                                                 : SIZE_MAX;
    /* never below the limit for a waiting receiver: it is the largest eager
     * message to any receiver */
    ferry_ladder.eager_behind_max = FERRY_MAX(ferry_ladder.eager_behind_max, ferry_ladder.eager_max);
    ferry_ladder.cma_min = threshold(ferry_cfg.cma_min, cma.min);
    ferry_ladder.cma_max = threshold(ferry_cfg.cma_max, cma.max);
    if (ferry_cfg.cma_min >= 0 && ferry_cfg.cma_max < 0 && ferry_ladder.cma_max <= ferry_ladder.cma_min)
        ferry_ladder.cma_max = SIZE_MAX;   /* a lower bound alone: single copy from there up */
    if ((ferry_cfg.cma_min >= 0 || ferry_cfg.cma_max >= 0) && ferry_cfg.split_min < 0 && ferry_cfg.split_max < 0)
        split.min = split.max = 0;   /* pulled single copy asked for by range: split only where asked too */
    ferry_ladder.split_min = threshold(ferry_cfg.split_min, split.min);
    ferry_ladder.split_max = threshold(ferry_cfg.split_max, split.max);
    if (ferry_cfg.split_min >= 0 && ferry_cfg.split_max < 0 && ferry_ladder.split_max <= ferry_ladder.split_min)
        ferry_ladder.split_max = SIZE_MAX;
}

void ferry_ladder_init(void)
{
    memcpy(model, builtin, sizeof model);
    model_source = "built in";
    if (ferry_cfg.p2p_model && *ferry_cfg.p2p_model)
        load_model(ferry_cfg.p2p_model);
    derive_thresholds();
    if (ferry_cfg.verbose >= 1 && ferry_rt.world_rank == 0)
        ferry_ladder_print(stderr);
}

static int forced_by_call;

int ferry_ladder_forced(void)
{
    return forced_by_call || ferry_cfg.cma_min >= 0 || ferry_cfg.cma_max >= 0 || ferry_cfg.split_min >= 0 ||
           ferry_cfg.split_max >= 0;
}

void ferry_ladder_force(enum ferry_mech m)
{
    forced_by_call = m != FERRY_MECH_COUNT;
    switch (m) {
    case FERRY_MECH_EAGER:
        ferry_ladder = (struct ferry_ladder){.eager_max = SIZE_MAX, .eager_behind_max = SIZE_MAX};
        break;
    case FERRY_MECH_PIPELINE:
        ferry_ladder = (struct ferry_ladder){.eager_max = 0};
        break;
    case FERRY_MECH_CMA:
        ferry_ladder = (struct ferry_ladder){.eager_max = 0, .cma_min = 0, .cma_max = SIZE_MAX};
        break;
    case FERRY_MECH_SPLIT:
        ferry_ladder = (struct ferry_ladder){.eager_max = 0, .split_min = 0, .split_max = SIZE_MAX};
        break;
    default:
        derive_thresholds();
        break;
    }
}

static void print_size(FILE *out, size_t n)
{
    if (n == SIZE_MAX)
        fprintf(out, "inf");
    else
        fprintf(out, "%zu", n);
}

void ferry_ladder_print(FILE *out)
{
    fprintf(out, "ferry: p2p ladder (model %s): inline <= %d B, eager <= ", model_source, FERRY_PKT_INLINE_MAX);
    print_size(out, ferry_ladder.eager_max);
    fprintf(out, " B (to a receiver behind in a stream <= ");
    print_size(out, ferry_ladder.eager_behind_max);
    fprintf(out, " B; and the transport's packet), single copy in [");
    print_size(out, ferry_ladder.cma_min);
    fprintf(out, ", ");
    print_size(out, ferry_ladder.cma_max);
    fprintf(out, ") B, split single copy in [");
    print_size(out, ferry_ladder.split_min);
    fprintf(out, ", ");
    print_size(out, ferry_ladder.split_max);
    fprintf(out, ") B where the peer allows it, pipelined copy otherwise\n");
    for (int m = 0; m < FERRY_MECH_COUNT; m++) {
        fprintf(out, "ferry:   %-8s", ferry_mech_names[m]);
        for (int i = 0; i < model[m].n; i++)
            fprintf(out, " %.0f:%.2fus", model[m].p[i].bytes, model[m].p[i].usec);
        fprintf(out, "\n");
    }
}
