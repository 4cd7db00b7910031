/* Algorithm selection.
 *
 * For each call, in order:
 *   1. a forced algorithm: FERRY_COLL_<NAME>=<algorithm> read at the first
 *      collective, or MPIX_Ferry_coll_set() at run time (tests, ferry-tune);
 *   2. the first matching row of the table in FERRY_COLL_TABLE (ferry-tune
 *      writes it), keyed by (collective, ranks, ranks per node, bytes);
 *   3. built-in rules.
 * An algorithm that cannot serve the call (a non-commutative op for ring, a
 * non-power-of-two size for recursive-doubling allgather, no node map for
 * hier) falls through to the next source. Every input is the same on all
 * ranks (sizes from the counts every rank knows, the op's commutativity,
 * the environment), so all ranks pick the same algorithm.
 *
 * Table format: one row per line, '#' comments,
 *     <collective> <ranks> <ppn> <bytes> <algorithm>
 * where each range is N, N-M, N-* or *; bytes is the vector size for
 * reductions and bcast, the per-rank block for gather/scatter/allgather/
 * alltoall, the total for the v forms. */
#include "coll/coll_impl.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (int)(sizeof a / sizeof a[0])
static const struct coll_alg barrier_algs[] = {
    {"dissemination", barrier_dissemination, 0},
    {"binomial", barrier_binomial, 0},
    {"shm", barrier_shm, ALG_SHM, shm_direct},
};
static const struct coll_alg bcast_algs[] = {
    {"binomial", bcast_binomial, 0},
    {"scatter_allgather", bcast_scatter_allgather, 0},
    {"chain", bcast_chain, 0},
    {"hier", bcast_hier, ALG_HIER},
    {"shm", bcast_shm, ALG_SHM, shm_direct},
};
static const struct coll_alg gather_algs[] = {
    {"binomial", gather_binomial, 0},
    {"linear", gather_linear, 0},
    {"shm", gather_shm, ALG_SHM, shm_direct},
};
static const struct coll_alg gatherv_algs[] = {{"linear", gatherv_linear, 0}};
static const struct coll_alg scatter_algs[] = {
    {"binomial", scatter_binomial, 0},
    {"linear", scatter_linear, 0},
    {"shm", scatter_shm, ALG_SHM, shm_direct},
};
static const struct coll_alg scatterv_algs[] = {{"linear", scatterv_linear, 0}};
static const struct coll_alg allgather_algs[] = {
    {"ring", allgather_ring, 0},
    {"recursive_doubling", allgather_rd, ALG_POF2},
    {"bruck", allgather_bruck, 0},
    {"linear", allgather_linear, 0},
    {"shm", allgather_shm, ALG_SHM, shm_direct},
};
static const struct coll_alg allgatherv_algs[] = {{"ring", allgatherv_ring, 0}, {"linear", allgatherv_linear, 0}};
static const struct coll_alg alltoall_algs[] = {
    {"pairwise", alltoall_pairwise, 0},
    {"linear", alltoall_linear, 0},
    {"bruck", alltoall_bruck, 0},
    {"shm", alltoall_shm, ALG_SHM, shm_direct},
};
static const struct coll_alg alltoallv_algs[] = {{"pairwise", alltoallv_pairwise, 0}, {"linear", alltoallv_linear, 0}};
static const struct coll_alg alltoallw_algs[] = {{"pairwise", alltoallw_pairwise, 0}, {"linear", alltoallw_linear, 0}};
static const struct coll_alg reduce_algs[] = {
    {"binomial", reduce_binomial, 0},
    {"redscat_gather", reduce_redscat_gather, ALG_COMMUTE},
    {"hier", reduce_hier, ALG_HIER | ALG_COMMUTE},
    {"shm", reduce_shm, ALG_SHM, shm_direct},
};
static const struct coll_alg allreduce_algs[] = {
    {"recursive_doubling", allreduce_rd, 0},
    {"redscat_allgather", allreduce_redscat_allgather, ALG_COMMUTE},
    {"ring", allreduce_ring, ALG_COMMUTE},
    {"reduce_bcast", allreduce_reduce_bcast, 0},
    {"hier", allreduce_hier, ALG_HIER | ALG_COMMUTE},
    {"shm", allreduce_shm, ALG_SHM, shm_direct},
};
static const struct coll_alg reduce_scatter_algs[] = {
    {"reduce_scatterv", reduce_scatter_reduce_scatterv, 0},
    {"ring", reduce_scatter_ring, ALG_COMMUTE},
    {"pairwise", reduce_scatter_pairwise, ALG_COMMUTE},
};
static const struct coll_alg reduce_scatter_block_algs[] = {
    {"reduce_scatterv", reduce_scatter_block_reduce_scatterv, 0},
    {"ring", reduce_scatter_block_ring, ALG_COMMUTE},
    {"pairwise", reduce_scatter_block_pairwise, ALG_COMMUTE},
};
static const struct coll_alg scan_algs[] = {{"recursive_doubling", scan_rd, 0}, {"linear", scan_linear, 0}};
static const struct coll_alg exscan_algs[] = {{"recursive_doubling", exscan_rd, 0}, {"linear", exscan_linear, 0}};
static const struct coll_alg nb_allgather_algs[] = {{"linear", neighbor_allgather_linear, 0}};
static const struct coll_alg nb_allgatherv_algs[] = {{"linear", neighbor_allgatherv_linear, 0}};
static const struct coll_alg nb_alltoall_algs[] = {{"linear", neighbor_alltoall_linear, 0}};
static const struct coll_alg nb_alltoallv_algs[] = {{"linear", neighbor_alltoallv_linear, 0}};
static const struct coll_alg nb_alltoallw_algs[] = {{"linear", neighbor_alltoallw_linear, 0}};

#define ALGS(k, t) [FERRY_COLL_##k] = {t, N(t)}
const struct coll_algs coll_algs[FERRY_COLL_KINDS] = {
    ALGS(BARRIER, barrier_algs), ALGS(BCAST, bcast_algs), ALGS(GATHER, gather_algs),
    ALGS(GATHERV, gatherv_algs), ALGS(SCATTER, scatter_algs), ALGS(SCATTERV, scatterv_algs),
    ALGS(ALLGATHER, allgather_algs), ALGS(ALLGATHERV, allgatherv_algs), ALGS(ALLTOALL, alltoall_algs),
    ALGS(ALLTOALLV, alltoallv_algs), ALGS(ALLTOALLW, alltoallw_algs), ALGS(REDUCE, reduce_algs),
    ALGS(ALLREDUCE, allreduce_algs), ALGS(REDUCE_SCATTER, reduce_scatter_algs),
    ALGS(REDUCE_SCATTER_BLOCK, reduce_scatter_block_algs), ALGS(SCAN, scan_algs), ALGS(EXSCAN, exscan_algs),
    ALGS(NEIGHBOR_ALLGATHER, nb_allgather_algs), ALGS(NEIGHBOR_ALLGATHERV, nb_allgatherv_algs),
    ALGS(NEIGHBOR_ALLTOALL, nb_alltoall_algs), ALGS(NEIGHBOR_ALLTOALLV, nb_alltoallv_algs),
    ALGS(NEIGHBOR_ALLTOALLW, nb_alltoallw_algs),
};

static const char *const names[FERRY_COLL_KINDS] = {
    "barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall",
    "alltoallv", "alltoallw", "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv", "neighbor_alltoallw",
};

const char *ferry_coll_name(enum ferry_coll_kind kind)
{
    return names[kind];
}

/* ---- forcing ---------------------------------------------------------------- */

static int forced[FERRY_COLL_KINDS];   /* algorithm index + 1; 0: not forced */
static int shm_alg[FERRY_COLL_KINDS];  /* index of the "shm" algorithm, -1 if none */
static int ready;

struct rule {
    int kind, alg;
    long lo[3], hi[3];   /* ranks, ppn, bytes */
};
static struct rule *rules;
static int nrules;

static int find_kind(const char *name)
{
    for (int k = 0; k < FERRY_COLL_KINDS; k++)
        if (!strcmp(names[k], name))
            return k;
    return -1;
}

static int find_alg(int kind, const char *name)
{
    for (int i = 0; i < coll_algs[kind].n; i++)
        if (!strcmp(coll_algs[kind].alg[i].name, name))
            return i;
    return -1;
}

/* Force alg for kind (NULL or "auto": unforce). 0, or -1 if unknown. */
static int force(int kind, const char *alg)
{
    if (!alg || !*alg || !strcmp(alg, "auto")) {
        forced[kind] = 0;
        return 0;
    }
    int i = find_alg(kind, alg);
    if (i < 0)
        return -1;
    forced[kind] = i + 1;
    return 0;
}

int ferry_coll_force(const char *coll, const char *alg)
{
    coll_select_init();
    if (!coll) {
        memset(forced, 0, sizeof forced);
        return 0;
    }
    int k = find_kind(coll);
    return k < 0 ? -1 : force(k, alg);
}

const char *ferry_coll_alg_name(const char *coll, int i)
{
    int k = find_kind(coll);
    if (k < 0 || i < 0 || i >= coll_algs[k].n)
        return NULL;
    return coll_algs[k].alg[i].name;
}

/* ---- the tuned table ---------------------------------------------------------- */

static int parse_range(const char *s, long *lo, long *hi)
{
    char *end;
    if (!strcmp(s, "*")) {
        *lo = 0, *hi = -1;
        return 0;
    }
    *lo = strtol(s, &end, 10);
    if (end == s || *lo < 0)
        return -1;
    if (!*end) {
        *hi = *lo;
        return 0;
    }
    if (*end != '-')
        return -1;
    s = end + 1;
    if (!strcmp(s, "*")) {
        *hi = -1;
        return 0;
    }
    *hi = strtol(s, &end, 10);
    return *end || *hi < *lo ? -1 : 0;
}

static void load_table(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        ferry_log(0, "FERRY_COLL_TABLE: cannot open %s; using built-in collective rules", path);
        return;
    }
    char line[512];
    int lineno = 0, cap = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char coll[64], rk[64], pp[64], by[64], alg[64];
        int got = sscanf(line, "%63s %63s %63s %63s %63s", coll, rk, pp, by, alg);
        if (got <= 0)
            continue;
        struct rule ru;
        if (got != 5 || (ru.kind = find_kind(coll)) < 0 || (ru.alg = find_alg(ru.kind, alg)) < 0 ||
            parse_range(rk, &ru.lo[0], &ru.hi[0]) || parse_range(pp, &ru.lo[1], &ru.hi[1]) ||
            parse_range(by, &ru.lo[2], &ru.hi[2])) {
            ferry_log(0, "%s:%d: ignoring malformed collective table row", path, lineno);
            continue;
        }
        if (nrules == cap) {
            cap = cap ? 2 * cap : 32;
            rules = ferry_xrealloc(rules, (size_t)cap * sizeof *rules);
        }
        rules[nrules++] = ru;
    }
    fclose(f);
}

static const char **cfg_field(int kind)
{
    switch (kind) {
    case FERRY_COLL_BARRIER: return &ferry_cfg.coll_barrier;
    case FERRY_COLL_BCAST: return &ferry_cfg.coll_bcast;
    case FERRY_COLL_GATHER: return &ferry_cfg.coll_gather;
    case FERRY_COLL_GATHERV: return &ferry_cfg.coll_gatherv;
    case FERRY_COLL_SCATTER: return &ferry_cfg.coll_scatter;
    case FERRY_COLL_SCATTERV: return &ferry_cfg.coll_scatterv;
    case FERRY_COLL_ALLGATHER: return &ferry_cfg.coll_allgather;
    case FERRY_COLL_ALLGATHERV: return &ferry_cfg.coll_allgatherv;
    case FERRY_COLL_ALLTOALL: return &ferry_cfg.coll_alltoall;
    case FERRY_COLL_ALLTOALLV: return &ferry_cfg.coll_alltoallv;
    case FERRY_COLL_ALLTOALLW: return &ferry_cfg.coll_alltoallw;
    case FERRY_COLL_REDUCE: return &ferry_cfg.coll_reduce;
    case FERRY_COLL_ALLREDUCE: return &ferry_cfg.coll_allreduce;
    case FERRY_COLL_REDUCE_SCATTER: return &ferry_cfg.coll_reduce_scatter;
    case FERRY_COLL_REDUCE_SCATTER_BLOCK: return &ferry_cfg.coll_reduce_scatter_block;
    case FERRY_COLL_SCAN: return &ferry_cfg.coll_scan;
    case FERRY_COLL_EXSCAN: return &ferry_cfg.coll_exscan;
    default: return NULL;
    }
}

void coll_select_init(void)
{
    if (ready)
        return;
    ready = 1;
    for (int k = 0; k < FERRY_COLL_KINDS; k++)
        shm_alg[k] = find_alg(k, "shm");
    for (int k = 0; k < FERRY_COLL_KINDS; k++) {
        const char **v = cfg_field(k);
        if (!v || !*v)
            continue;
        if (force(k, *v)) {
            char upper[64];
            size_t i;
            for (i = 0; names[k][i] && i < sizeof upper - 1; i++)
                upper[i] = (char)(names[k][i] >= 'a' && names[k][i] <= 'z' ? names[k][i] - 32 : names[k][i]);
            upper[i] = 0;
            char list[512] = "auto";
            for (int j = 0; j < coll_algs[k].n; j++) {
                strncat(list, "|", sizeof list - strlen(list) - 1);
                strncat(list, coll_algs[k].alg[j].name, sizeof list - strlen(list) - 1);
            }
            ferry_fatal("invalid value '%s' for FERRY_COLL_%s (expected %s)", *v, upper, list);
        }
    }
    if (ferry_cfg.coll_table && *ferry_cfg.coll_table)
        load_table(ferry_cfg.coll_table);
}

/* ---- choosing ------------------------------------------------------------------ */

int coll_ppn(struct ferry_comm *c)
{
    int n = c->size;
    if (ferry_cfg.coll_fake_ppn > 0)
        return (int)FERRY_MIN((long)n, ferry_cfg.coll_fake_ppn);
    int ppn = 0;
    for (int i = 0; i < n; i++)
        if (ferry_rt.peers[c->group->world[i]].local >= 0)
            ppn++;
    return ppn;
}

size_t coll_call_bytes(enum ferry_coll_kind kind, const struct ferry_comm *c, const struct ferry_coll_args *a)
{
    int n = c->size;
    size_t t = 0;
    switch (kind) {
    case FERRY_COLL_BCAST:
    case FERRY_COLL_REDUCE:
    case FERRY_COLL_ALLREDUCE:
    case FERRY_COLL_SCAN:
    case FERRY_COLL_EXSCAN:
    case FERRY_COLL_ALLGATHER:
    case FERRY_COLL_ALLTOALL:
        return ferry_dt_bytes(a->rdt, a->rcount);
    case FERRY_COLL_REDUCE_SCATTER_BLOCK:
        return ferry_dt_bytes(a->rdt, a->rcount) * (size_t)n;
    case FERRY_COLL_GATHER:
        return c->rank == a->root ? ferry_dt_bytes(a->rdt, a->rcount) : ferry_dt_bytes(a->sdt, a->scount);
    case FERRY_COLL_SCATTER:
        return c->rank == a->root ? ferry_dt_bytes(a->sdt, a->scount) : ferry_dt_bytes(a->rdt, a->rcount);
    case FERRY_COLL_ALLGATHERV:
    case FERRY_COLL_REDUCE_SCATTER:
        for (int i = 0; i < n; i++)
            t += (size_t)a->rcounts[i];
        return ferry_dt_bytes(a->rdt, t);
    default:   /* the v forms whose counts differ per rank: size plays no part */
        return 0;
    }
}

/* One selection's answer from shm_usable once it said no (*shm_no): a
 * nonblocking call that started the segment's creation (and so took another
 * algorithm) must not find the segment there when asked again in the same
 * selection, as a rank whose creation finished at once would (its peers'
 * was still running). */
static int usable(const struct coll_alg *alg, enum ferry_coll_kind kind, struct ferry_comm *c,
                  const struct ferry_coll_args *a, int blocking, int *shm_no)
{
    if ((alg->needs & ALG_COMMUTE) && a->op && !a->op->commute)
        return 0;
    if ((alg->needs & ALG_POF2) && !is_pof2(c->size))
        return 0;
    if ((alg->needs & ALG_HIER) && !hier_available(c))
        return 0;
    if ((alg->needs & ALG_SHM) && (*shm_no || !shm_usable(kind, c, a, blocking, 1))) {
        *shm_no = 1;
        return 0;
    }
    return 1;
}

/* Built-in rules (after the shared-memory algorithms, which communicators on
 * one node use within FERRY_COLL_SHM_*_MAX): small messages by
 * latency-optimal trees, large ones by bandwidth-optimal rings and
 * scatter/allgather compositions. */
static const char *builtin(int kind, size_t bytes, int n)
{
    switch (kind) {
    case FERRY_COLL_BCAST:
        return bytes <= 16384 || n <= 2 ? "binomial" : "scatter_allgather";
    case FERRY_COLL_GATHER:
        return bytes * (size_t)n <= 65536 ? "binomial" : "linear";
    case FERRY_COLL_SCATTER:   /* ranks outnumber CPUs: the binomial tree waits for each inner rank to be
                                * scheduled (4 ranks on 2 CPUs, 16 KiB: 8.1 against 3.6 us) */
        return bytes * (size_t)n <= 65536 && !ferry_rt.oversubscribed ? "binomial" : "linear";
    case FERRY_COLL_ALLGATHER:
        if (bytes * (size_t)n > 65536)
            return "ring";
        return is_pof2(n) ? "recursive_doubling" : "bruck";
    case FERRY_COLL_ALLGATHERV:
        return n <= 4 ? "linear" : "ring";
    case FERRY_COLL_ALLTOALL:
        if (bytes <= 256 && n >= 8)
            return "bruck";
        /* ranks outnumber CPUs: every exchange in one step; pairwise would
         * wait for each partner to be scheduled in turn */
        return bytes <= 32768 || ferry_rt.oversubscribed ? "linear" : "pairwise";
    case FERRY_COLL_ALLTOALLV:
    case FERRY_COLL_ALLTOALLW:
        return n <= 8 ? "linear" : "pairwise";
    case FERRY_COLL_REDUCE:   /* 2 ranks: one message and one local reduction at every size */
        return bytes <= 65536 || n <= 2 ? "binomial" : "redscat_gather";
    case FERRY_COLL_ALLREDUCE:   /* 2 ranks: one exchange straight into the result buffer */
        if (bytes <= 8192 || n <= 2)
            return "recursive_doubling";
        return bytes <= (4u << 20) ? "redscat_allgather" : "ring";
    case FERRY_COLL_REDUCE_SCATTER:
    case FERRY_COLL_REDUCE_SCATTER_BLOCK:
        if (bytes <= 16384)
            return "reduce_scatterv";
        return bytes <= (1u << 20) ? "pairwise" : "ring";
    default:
        return NULL;   /* the first algorithm */
    }
}

static int in_range(long v, long lo, long hi)
{
    return v >= lo && (hi < 0 || v <= hi);
}

/* with_shm 0: the choice as if the shared-memory algorithms did not exist */
static const struct coll_alg *select_alg(enum ferry_coll_kind kind, struct ferry_comm *c,
                                         const struct ferry_coll_args *a, int blocking, int with_shm)
{
    if (FERRY_UNLIKELY(!ready))
        coll_select_init();
    const struct coll_algs *t = &coll_algs[kind];
    int shm_no = !with_shm;
    if (forced[kind] && usable(&t->alg[forced[kind] - 1], kind, c, a, blocking, &shm_no))
        return &t->alg[forced[kind] - 1];
    size_t bytes = coll_call_bytes(kind, c, a);
    if (nrules) {
        long key[3] = {c->size, -1, (long)bytes};
        for (int i = 0; i < nrules; i++) {
            const struct rule *ru = &rules[i];
            if (ru->kind != (int)kind || !in_range(key[0], ru->lo[0], ru->hi[0]) ||
                !in_range((long)bytes, ru->lo[2], ru->hi[2]))
                continue;
            if (!(ru->lo[1] == 0 && ru->hi[1] < 0)) {   /* ppn only computed when a row asks */
                if (key[1] < 0)
                    key[1] = coll_ppn(c);
                if (!in_range(key[1], ru->lo[1], ru->hi[1]))
                    continue;
            }
            if (usable(&t->alg[ru->alg], kind, c, a, blocking, &shm_no))
                return &t->alg[ru->alg];
        }
    }
    /* small calls of a communicator on one node: the shared-memory algorithm */
    int shm = shm_alg[kind];
    if (shm >= 0 && !shm_no && shm_usable(kind, c, a, blocking, 0))
        return &t->alg[shm];
    const char *name = builtin(kind, bytes, c->size);
    int i = name ? find_alg(kind, name) : 0;
    if (i >= 0 && usable(&t->alg[i], kind, c, a, blocking, &shm_no))
        return &t->alg[i];
    return &t->alg[0];   /* every collective's first algorithm serves every call */
}

const struct coll_alg *coll_select(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a,
                                   int blocking)
{
    return select_alg(kind, c, a, blocking, 1);
}

enum red_order coll_red_order(enum ferry_coll_kind kind, struct ferry_comm *c, const struct ferry_coll_args *a,
                              int blocking, int *root)
{
    const char *name = select_alg(kind, c, a, blocking, 0)->name;
    int commute = !a->op || a->op->commute;
    *root = 0;
    if (!strcmp(name, "redscat_allgather") || !strcmp(name, "redscat_gather"))
        return RED_ORDER_HALVING;
    if (!strcmp(name, "reduce_bcast"))
        return RED_ORDER_BINOMIAL;
    if (!strcmp(name, "binomial")) {
        *root = commute ? a->root : 0;   /* non-commutative: rooted at 0, which forwards to root */
        return RED_ORDER_BINOMIAL;
    }
    /* recursive doubling; also for the ring and the node-aware algorithms,
     * whose orders differ per block or per node map (the default rules take
     * them only where the shared-memory ones do not run) */
    return RED_ORDER_DOUBLING;
}
