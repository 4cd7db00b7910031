/* Virtual topologies (see topo.h). */
#include "core/topo.h"
#include "core/comm.h"
#include "core/util.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Copy of n ints (zeros when a is NULL). */
static int *copy_ints(const int *a, int n)
{
    int *b = ferry_xcalloc((size_t)(n > 0 ? n : 1), sizeof(int));
    if (n > 0 && a)
        memcpy(b, a, (size_t)n * sizeof(int));
    return b;
}

/* ---- Cartesian --------------------------------------------------------------- */

void ferry_cart_coords(const struct ferry_topo *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

int ferry_cart_rank(const struct ferry_topo *t, const int *coords, int *rank)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int c = coords[i], d = t->dims[i];
        if (t->periods[i]) {
            c %= d;
            if (c < 0)
                c += d;
        } else if (c < 0 || c >= d) {
            return MPI_ERR_ARG;
        }
        r = r * d + c;
    }
    *rank = r;
    return MPI_SUCCESS;
}

/* Rank of this process's neighbour at offset disp in dimension dir, or
 * MPI_PROC_NULL off a non-periodic edge. */
static int neighbour(const struct ferry_topo *t, int dir, int disp)
{
    int *c = copy_ints(t->coords, t->ndims);
    long v = (long)c[dir] + disp;
    int r = MPI_PROC_NULL;
    if (t->periods[dir] || (v >= 0 && v < t->dims[dir])) {
        long d = t->dims[dir];
        c[dir] = (int)(((v % d) + d) % d);
        ferry_cart_rank(t, c, &r);
    }
    free(c);
    return r;
}

void ferry_cart_shift(const struct ferry_topo *t, int direction, int disp, int *source, int *dest)
{
    *dest = neighbour(t, direction, disp);
    *source = neighbour(t, direction, -disp);
}

struct ferry_topo *ferry_topo_cart(int ndims, const int *dims, const int *periods, int rank)
{
    struct ferry_topo *t = ferry_xcalloc(1, sizeof *t);
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = copy_ints(dims, ndims);
    t->periods = ferry_xmalloc((size_t)(ndims > 0 ? ndims : 1) * sizeof(int));
    for (int i = 0; i < ndims; i++)
        t->periods[i] = periods[i] != 0;
    t->coords = ferry_xmalloc((size_t)(ndims > 0 ? ndims : 1) * sizeof(int));
    ferry_cart_coords(t, rank, t->coords);
    t->nin = t->nout = 2 * ndims;
    t->in = ferry_xmalloc((size_t)(2 * ndims + 1) * sizeof(int));
    for (int i = 0; i < ndims; i++) {
        t->in[2 * i] = neighbour(t, i, -1);
        t->in[2 * i + 1] = neighbour(t, i, 1);
    }
    t->out = copy_ints(t->in, 2 * ndims);
    return t;
}

/* ---- graphs ------------------------------------------------------------------ */

struct ferry_topo *ferry_topo_graph(int nnodes, const int *index, const int *edges, int rank)
{
    struct ferry_topo *t = ferry_xcalloc(1, sizeof *t);
    t->kind = MPI_GRAPH;
    t->nnodes = nnodes;
    t->nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    t->index = copy_ints(index, nnodes);
    t->edges = copy_ints(edges, t->nedges);
    int first = rank > 0 ? index[rank - 1] : 0, n = index[rank] - first;
    t->nin = t->nout = n;
    t->in = copy_ints(edges + first, n);
    t->out = copy_ints(edges + first, n);
    for (int i = 0; i < n; i++)
        t->outside |= t->in[i] >= nnodes;
    return t;
}

struct ferry_topo *ferry_topo_dist_graph(int indegree, const int *sources, const int *sourceweights, int outdegree,
                                         const int *destinations, const int *destweights, int weighted)
{
    struct ferry_topo *t = ferry_xcalloc(1, sizeof *t);
    t->kind = MPI_DIST_GRAPH;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    t->sources = copy_ints(sources, indegree);
    t->destinations = copy_ints(destinations, outdegree);
    t->sourceweights = copy_ints(weighted ? sourceweights : NULL, indegree);
    t->destweights = copy_ints(weighted ? destweights : NULL, outdegree);
    if (!weighted) {
        memset(t->sourceweights, 0, (size_t)(indegree > 0 ? indegree : 1) * sizeof(int));
        memset(t->destweights, 0, (size_t)(outdegree > 0 ? outdegree : 1) * sizeof(int));
    }
    t->nin = indegree;
    t->nout = outdegree;
    t->in = copy_ints(sources, indegree);
    t->out = copy_ints(destinations, outdegree);
    return t;
}

struct ferry_topo *ferry_topo_dup(const struct ferry_topo *s)
{
    if (!s)
        return NULL;
    struct ferry_topo *t = ferry_xmalloc(sizeof *t);
    *t = *s;
    t->dims = copy_ints(s->dims, s->ndims);
    t->periods = copy_ints(s->periods, s->ndims);
    t->coords = copy_ints(s->coords, s->ndims);
    t->index = copy_ints(s->index, s->nnodes);
    t->edges = copy_ints(s->edges, s->nedges);
    t->sources = copy_ints(s->sources, s->indegree);
    t->sourceweights = copy_ints(s->sourceweights, s->indegree);
    t->destinations = copy_ints(s->destinations, s->outdegree);
    t->destweights = copy_ints(s->destweights, s->outdegree);
    t->in = copy_ints(s->in, s->nin);
    t->out = copy_ints(s->out, s->nout);
    return t;
}

void ferry_topo_free(struct ferry_topo *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->sourceweights);
    free(t->destinations);
    free(t->destweights);
    free(t->in);
    free(t->out);
    free(t);
}

int ferry_topo_neighbors(struct ferry_comm *c, int *indeg, const int **in, int *outdeg, const int **out)
{
    struct ferry_topo *t = c->topo;
    if (!t)
        return MPI_ERR_TOPOLOGY;
    *indeg = t->nin;
    *in = t->in;
    *outdeg = t->nout;
    *out = t->out;
    return MPI_SUCCESS;
}

/* ---- Dims_create ---------------------------------------------------------------
 *
 * The free entries get the factorization of m = nnodes / (product of the
 * fixed entries) into k factors, in non-increasing order, whose largest and
 * smallest factors are closest ("as close to each other as possible");
 * among equally balanced ones, the one with the largest smallest factor, then
 * the largest second-smallest, and so on. (This is the choice MPICH makes as
 * well, so both give the same grids.)
 *
 * Search: the factors are chosen from the smallest up (a[0] <= a[1] <= ...)
 * among the divisors of m, in increasing order; a candidate replaces the best
 * so far when it is at least as balanced, so among ties the last one in this
 * order wins, which is the tie-break above. Branches that cannot reach the
 * best balance are cut. */

struct dims_search {
    int k;
    const int *divs;
    int ndivs;
    int *a, *best;
    long bestbal;   /* -1: none yet */
};

/* d^t <= r, without overflow. */
static int pow_le(long d, int t, long r)
{
    long p = 1;
    for (int i = 0; i < t; i++) {
        if (p > r / d)
            return 0;
        p *= d;
    }
    return p <= r;
}

/* Smallest x >= 1 with x^t >= r (r >= 1, t >= 1). */
static long root_ceil(long r, int t)
{
    long lo = 1, hi = r;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (!pow_le(mid, t, r - 1))   /* mid^t >= r */
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void dims_dfs(struct dims_search *s, int pos, long r)
{
    int left = s->k - pos;   /* factors still to choose, this one included */
    long lo = pos > 0 ? s->a[pos - 1] : 1;
    if (left == 1) {
        if (r < lo)
            return;
        long bal = pos == 0 ? 0 : r - s->a[0];
        if (s->bestbal < 0 || bal <= s->bestbal) {
            s->a[pos] = (int)r;
            memcpy(s->best, s->a, (size_t)s->k * sizeof(int));
            s->bestbal = bal;
        }
        return;
    }
    for (int i = 0; i < s->ndivs; i++) {
        long d = s->divs[i];
        if (d < lo)
            continue;
        if (!pow_le(d, left, r))
            break;   /* every remaining factor is >= d */
        if (r % d)
            continue;
        long smallest = pos > 0 ? s->a[0] : d;
        /* the largest factor is at least the left-th root of r */
        long maxlb = root_ceil(r, left);
        if (maxlb < d)
            maxlb = d;
        if (s->bestbal >= 0 && maxlb - smallest > s->bestbal)
            continue;
        s->a[pos] = (int)d;
        dims_dfs(s, pos + 1, r / d);
    }
}

int ferry_dims_create(int nnodes, int ndims, int *dims)
{
    long fixed = 1;
    int k = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return MPI_ERR_DIMS;
        if (dims[i] == 0)
            k++;
        else
            fixed *= dims[i];
        if (fixed > nnodes && nnodes > 0)
            return MPI_ERR_DIMS;
    }
    if (nnodes % fixed)
        return MPI_ERR_DIMS;
    if (k == 0)
        return MPI_SUCCESS;
    long m = nnodes / fixed;
    /* divisors of m, increasing */
    int cap = 64, ndivs = 0, nhigh = 0;
    int *divs = ferry_xmalloc((size_t)cap * sizeof(int)), *high = ferry_xmalloc((size_t)cap * sizeof(int));
    for (long d = 1; d * d <= m; d++) {
        if (m % d)
            continue;
        if (ndivs == cap || nhigh == cap) {
            cap *= 2;
            divs = ferry_xrealloc(divs, (size_t)cap * sizeof(int));
            high = ferry_xrealloc(high, (size_t)cap * sizeof(int));
        }
        divs[ndivs++] = (int)d;
        if (d * d != m)
            high[nhigh++] = (int)(m / d);
    }
    divs = ferry_xrealloc(divs, (size_t)(ndivs + nhigh) * sizeof(int));
    for (int i = nhigh - 1; i >= 0; i--)
        divs[ndivs++] = high[i];
    free(high);
    struct dims_search s = {.k = k, .divs = divs, .ndivs = ndivs, .bestbal = -1};
    s.a = ferry_xcalloc((size_t)k, sizeof(int));
    s.best = ferry_xcalloc((size_t)k, sizeof(int));
    dims_dfs(&s, 0, m);
    /* best is increasing; the free entries get it in non-increasing order */
    for (int i = 0, j = k - 1; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = s.best[j--];
    free(s.a);
    free(s.best);
    free(divs);
    return MPI_SUCCESS;
}
