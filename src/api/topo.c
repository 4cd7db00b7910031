/* Process topologies: Cartesian grids, graphs, distributed graphs, their
 * queries, Dims_create and Topo_test. Ranks are never reordered. */
#include "api/check.h"
#include "api/comm_internal.h"
#include "core/info.h"
#include "core/topo.h"
#include "core/util.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define TAG_DIST_GRAPH (-301)

/* A communicator of c's first n ranks (collective over c); NULL elsewhere. */
static struct ferry_comm *first_ranks(struct ferry_comm *c, int n)
{
    uint32_t ctx;
    ferry_comm_agree_ctx(c, &ctx);
    if (c->rank >= n)
        return NULL;
    return ferry_comm_new(ferry_group_new(n, c->group->world), ctx, c->errhandler);
}

/* A communicator with c's group (collective over c). */
static struct ferry_comm *same_group(struct ferry_comm *c)
{
    uint32_t ctx;
    ferry_comm_agree_ctx(c, &ctx);
    c->group->refs++;
    return ferry_comm_new(c->group, ctx, c->errhandler);
}

static int check_intra(MPI_Comm comm, struct ferry_comm **c, const char *fn)
{
    int rc = check_comm(comm, c, fn);
    return rc ? rc : ferry_api_need_intra(*c, fn);
}

/* c with a topology of this kind (0: any), else MPI_ERR_TOPOLOGY. */
static int check_topo(MPI_Comm comm, int kind, struct ferry_comm **c, const char *fn)
{
    int rc = check_comm(comm, c, fn);
    if (rc)
        return rc;
    struct ferry_topo *t = (*c)->topo;
    if (!t || (kind && t->kind != kind))
        return ferry_error(*c, MPI_ERR_TOPOLOGY, fn, "the communicator has no %s topology",
                           kind == MPI_CART ? "Cartesian" : kind == MPI_GRAPH ? "graph" : "distributed graph");
    return MPI_SUCCESS;
}

/* Product of dims, or an error class: MPI_ERR_DIMS for a negative entry,
 * MPI_ERR_ARG beyond INT_MAX. An extent of 0 makes an empty grid, which
 * leaves every rank out (MPI_COMM_NULL from Cart_create, MPI_UNDEFINED from
 * Cart_map), as MPICH does: rsmpi's cartesian_map example maps a 2 x (size/4)
 * grid on fewer than 4 ranks and expects that, not an error. */
static int grid_size(int ndims, const int *dims, int *size)
{
    long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return MPI_ERR_DIMS;
        p *= dims[i];
        if (p > INT_MAX)
            return MPI_ERR_ARG;
    }
    *size = (int)p;
    return MPI_SUCCESS;
}

/* ---- Cartesian ------------------------------------------------------------------ */

#pragma weak MPI_Cart_create = PMPI_Cart_create
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *comm_cart)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Cart_create";
    struct ferry_comm *c;
    int rc = check_intra(comm_old, &c, fn), n;
    if (rc)
        return rc;
    if (ndims < 0)
        return ferry_error(c, MPI_ERR_ARG, fn, "negative ndims %d", ndims);
    if ((ndims > 0 && (!dims || !periods)) || !comm_cart)
        return ferry_error(c, MPI_ERR_ARG, fn, "NULL dims, periods or comm_cart");
    *comm_cart = MPI_COMM_NULL;   /* what an error leaves there */
    if ((rc = grid_size(ndims, dims, &n)))
        return ferry_error(c, rc, fn, "invalid grid dimensions");
    if (n > c->size)
        return ferry_error(c, MPI_ERR_ARG, fn, "the grid has %d nodes, the communicator only %d ranks", n, c->size);
    struct ferry_comm *nc = first_ranks(c, n);
    if (nc)
        nc->topo = ferry_topo_cart(ndims, dims, periods, nc->rank);
    *comm_cart = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_sub = PMPI_Cart_sub
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Cart_sub";
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_CART, &c, fn);
    if (rc)
        return rc;
    struct ferry_topo *t = c->topo;
    if ((t->ndims > 0 && !remain_dims) || !newcomm)
        return ferry_error(c, MPI_ERR_ARG, fn, "NULL remain_dims or newcomm");
    *newcomm = MPI_COMM_NULL;
    /* color: position in the dropped dimensions; key: position in the kept
     * ones (row-major), which is the rank in the subgrid */
    int color = 0, key = 0, nd = 0;
    int *dims = ferry_xmalloc((size_t)(t->ndims + 1) * sizeof(int)), *per = ferry_xmalloc((size_t)(t->ndims + 1) *
                                                                                            sizeof(int));
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            key = key * t->dims[i] + t->coords[i];
            dims[nd] = t->dims[i];
            per[nd++] = t->periods[i];
        } else {
            color = color * t->dims[i] + t->coords[i];
        }
    }
    /* No dimension kept: the result is a zero-dimensional grid, which holds
     * one process, as MPI_Cart_create with ndims 0 does. Like MPICH (whose
     * binaries run here unchanged), only rank 0 of the grid gets it; the
     * others get MPI_COMM_NULL. */
    if (nd == 0)
        color = c->rank == 0 ? 0 : MPI_UNDEFINED;
    struct ferry_comm *nc;
    ferry_api_split(c, color, key, &nc);
    if (nc) {
        nc->topo = ferry_topo_cart(nd, dims, per, nc->rank);
        *newcomm = nc->handle;
    }
    free(dims);
    free(per);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_CART, &c, "MPI_Cartdim_get");
    if (rc)
        return rc;
    if (!ndims)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cartdim_get", "ndims pointer is NULL");
    *ndims = c->topo->ndims;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_get = PMPI_Cart_get
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_CART, &c, "MPI_Cart_get");
    if (rc)
        return rc;
    struct ferry_topo *t = c->topo;
    if (maxdims < t->ndims)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cart_get", "maxdims %d is less than the %d dimensions", maxdims,
                           t->ndims);
    if (t->ndims > 0 && (!dims || !periods || !coords))
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cart_get", "NULL output array");
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = t->coords[i];
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_rank = PMPI_Cart_rank
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_CART, &c, "MPI_Cart_rank");
    if (rc)
        return rc;
    if ((c->topo->ndims > 0 && !coords) || !rank)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cart_rank", "NULL coords or rank pointer");
    if (ferry_cart_rank(c->topo, coords, rank))
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cart_rank", "coordinates outside a non-periodic dimension");
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_coords = PMPI_Cart_coords
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_CART, &c, "MPI_Cart_coords");
    if (rc)
        return rc;
    if (rank < 0 || rank >= c->size)
        return ferry_error(c, MPI_ERR_RANK, "MPI_Cart_coords", "invalid rank %d (communicator has %d ranks)", rank,
                           c->size);
    if (maxdims < c->topo->ndims)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cart_coords", "maxdims %d is less than the %d dimensions", maxdims,
                           c->topo->ndims);
    if (c->topo->ndims > 0 && !coords)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cart_coords", "coords is NULL");
    ferry_cart_coords(c->topo, rank, coords);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_shift = PMPI_Cart_shift
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_CART, &c, "MPI_Cart_shift");
    if (rc)
        return rc;
    if (c->topo->ndims == 0)
        return ferry_error(c, MPI_ERR_TOPOLOGY, "MPI_Cart_shift", "the grid has no dimensions");
    if (direction < 0 || direction >= c->topo->ndims)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cart_shift", "invalid direction %d (%d dimensions)", direction,
                           c->topo->ndims);
    if (!rank_source || !rank_dest)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cart_shift", "NULL output pointer");
    ferry_cart_shift(c->topo, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_map = PMPI_Cart_map
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_intra(comm, &c, "MPI_Cart_map"), n;
    if (rc)
        return rc;
    if (ndims < 0 || (ndims > 0 && !dims) || !newrank)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Cart_map", "invalid ndims or NULL argument");
    if ((rc = grid_size(ndims, dims, &n)))
        return ferry_error(c, rc, "MPI_Cart_map", "invalid grid dimensions");
    if (n > c->size)
        return ferry_error(c, MPI_ERR_DIMS, "MPI_Cart_map", "the grid has %d nodes, the communicator only %d ranks",
                           n, c->size);
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

#pragma weak MPI_Dims_create = PMPI_Dims_create
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Dims_create");
    if (rc)
        return rc;
    if (nnodes <= 0)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Dims_create", "nnodes must be positive, not %d", nnodes);
    if (ndims < 0)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Dims_create", "negative ndims %d", ndims);
    if (ndims == 0)
        return MPI_SUCCESS;
    if (!dims)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Dims_create", "dims is NULL");
    rc = ferry_dims_create(nnodes, ndims, dims);
    if (rc)
        return ferry_error(NULL, rc, "MPI_Dims_create",
                           "negative entry in dims, or its fixed entries do not divide %d nodes", nnodes);
    return MPI_SUCCESS;
}

/* ---- graphs ----------------------------------------------------------------------- */

static int check_graph_args(struct ferry_comm *c, int nnodes, const int *index, const int *edges, const char *fn)
{
    if (nnodes < 0 || nnodes > c->size)
        return ferry_error(c, MPI_ERR_ARG, fn, "invalid nnodes %d (communicator has %d ranks)", nnodes, c->size);
    if (nnodes > 0 && !index)
        return ferry_error(c, MPI_ERR_ARG, fn, "index is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return ferry_error(c, MPI_ERR_ARG, fn, "index[%d] = %d is less than the previous entry", i, index[i]);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges)
        return ferry_error(c, MPI_ERR_ARG, fn, "edges is NULL");
    /* An edge to a rank of comm_old past nnodes names no node of the graph,
     * but MPICH and Open MPI accept it (the IBM suite's topo/graph does
     * that), so Ferry does too: the topology queries report it as given and
     * the neighbourhood collectives of a rank with such a neighbour fail
     * (check.h, check_neighbors). */
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= c->size)
            return ferry_error(c, MPI_ERR_ARG, fn, "edges[%d] = %d is not a rank of the communicator (0..%d)", i,
                               edges[i], c->size - 1);
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_create = PMPI_Graph_create
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm *comm_graph)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Graph_create";
    struct ferry_comm *c;
    if (comm_graph)
        *comm_graph = MPI_COMM_NULL;   /* what an error leaves there */
    int rc = check_intra(comm_old, &c, fn);
    if (rc || (rc = check_graph_args(c, nnodes, index, edges, fn)))
        return rc;
    if (!comm_graph)
        return ferry_error(c, MPI_ERR_ARG, fn, "comm_graph pointer is NULL");
    if (nnodes == 0) {
        *comm_graph = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    struct ferry_comm *nc = first_ranks(c, nnodes);
    if (nc)
        nc->topo = ferry_topo_graph(nnodes, index, edges, nc->rank);
    *comm_graph = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_GRAPH, &c, "MPI_Graphdims_get");
    if (rc)
        return rc;
    if (!nnodes || !nedges)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Graphdims_get", "NULL output pointer");
    *nnodes = c->topo->nnodes;
    *nedges = c->topo->nedges;
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_get = PMPI_Graph_get
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_GRAPH, &c, "MPI_Graph_get");
    if (rc)
        return rc;
    struct ferry_topo *t = c->topo;
    if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && !index) || (maxedges > 0 && !edges))
        return ferry_error(c, MPI_ERR_ARG, "MPI_Graph_get", "invalid maxindex/maxedges or NULL array");
    for (int i = 0; i < t->nnodes && i < maxindex; i++)
        index[i] = t->index[i];
    for (int i = 0; i < t->nedges && i < maxedges; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

static int graph_rank(struct ferry_comm *c, int rank, const char *fn)
{
    if (rank < 0 || rank >= c->topo->nnodes)
        return ferry_error(c, MPI_ERR_RANK, fn, "invalid rank %d (graph has %d nodes)", rank, c->topo->nnodes);
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_GRAPH, &c, "MPI_Graph_neighbors_count");
    if (rc || (rc = graph_rank(c, rank, "MPI_Graph_neighbors_count")))
        return rc;
    if (!nneighbors)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Graph_neighbors_count", "nneighbors pointer is NULL");
    const int *idx = c->topo->index;
    *nneighbors = idx[rank] - (rank ? idx[rank - 1] : 0);
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_GRAPH, &c, "MPI_Graph_neighbors");
    if (rc || (rc = graph_rank(c, rank, "MPI_Graph_neighbors")))
        return rc;
    if (maxneighbors < 0 || (maxneighbors > 0 && !neighbors))
        return ferry_error(c, MPI_ERR_ARG, "MPI_Graph_neighbors", "invalid maxneighbors or NULL array");
    const int *idx = c->topo->index;
    int first = rank ? idx[rank - 1] : 0;
    for (int i = first, k = 0; i < idx[rank] && k < maxneighbors; i++, k++)
        neighbors[k] = c->topo->edges[i];
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_map = PMPI_Graph_map
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_intra(comm, &c, "MPI_Graph_map");
    if (rc || (rc = check_graph_args(c, nnodes, index, edges, "MPI_Graph_map")))
        return rc;
    if (!newrank)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Graph_map", "newrank pointer is NULL");
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

#pragma weak MPI_Topo_test = PMPI_Topo_test
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Topo_test");
    if (rc)
        return rc;
    if (!status)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Topo_test", "status pointer is NULL");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- distributed graphs --------------------------------------------------------------- */

static int check_ranks(struct ferry_comm *c, int n, const int *r, const char *what, const char *fn)
{
    if (n > 0 && !r)
        return ferry_error(c, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= c->size)
            return ferry_error(c, MPI_ERR_RANK, fn, "%s[%d] = %d is not a rank (communicator has %d)", what, i, r[i],
                               c->size);
    return MPI_SUCCESS;
}

static int check_weights(struct ferry_comm *c, int n, const int *w, const char *what, const char *fn)
{
    if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY)
        return w == MPI_WEIGHTS_EMPTY && n > 0
                   ? ferry_error(c, MPI_ERR_ARG, fn, "%s is MPI_WEIGHTS_EMPTY with %d edges", what, n)
                   : MPI_SUCCESS;
    if (n > 0 && !w)
        return ferry_error(c, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return ferry_error(c, MPI_ERR_ARG, fn, "%s[%d] = %d is negative", what, i, w[i]);
    return MPI_SUCCESS;
}

#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                    int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm *comm_dist_graph)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    struct ferry_comm *c;
    int rc = check_intra(comm_old, &c, fn);
    if (rc)
        return rc;
    if (indegree < 0 || outdegree < 0)
        return ferry_error(c, MPI_ERR_ARG, fn, "negative degree (%d in, %d out)", indegree, outdegree);
    if ((rc = check_ranks(c, indegree, sources, "sources", fn)) ||
        (rc = check_ranks(c, outdegree, destinations, "destinations", fn)) ||
        (rc = check_weights(c, indegree, sourceweights, "sourceweights", fn)) ||
        (rc = check_weights(c, outdegree, destweights, "destweights", fn)) || (rc = check_info_handle(c, info, fn)))
        return rc;
    if (!comm_dist_graph)
        return ferry_error(c, MPI_ERR_ARG, fn, "comm_dist_graph pointer is NULL");
    int weighted = sourceweights != MPI_UNWEIGHTED;
    struct ferry_comm *nc = same_group(c);
    nc->topo = ferry_topo_dist_graph(indegree, sources, weighted && indegree ? sourceweights : NULL, outdegree,
                                     destinations, weighted && outdegree && destweights != MPI_UNWEIGHTED ? destweights
                                                                                                       : NULL,
                                     weighted);
    *comm_dist_graph = nc->handle;
    return MPI_SUCCESS;
}

/* Every rank may describe any edges; each edge (s -> d, w) is sent to s as
 * an out-edge and to d as an in-edge (records of 3 ints: kind, peer,
 * weight) in one personalized exchange. A rank's neighbours come in the order
 * of the describing rank, then the order it gave them. */
#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info, int reorder,
                           MPI_Comm *comm_dist_graph)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Dist_graph_create";
    struct ferry_comm *c;
    int rc = check_intra(comm_old, &c, fn);
    if (rc)
        return rc;
    if (n < 0)
        return ferry_error(c, MPI_ERR_ARG, fn, "negative n %d", n);
    if ((rc = check_ranks(c, n, sources, "sources", fn)))
        return rc;
    if (n > 0 && !degrees)
        return ferry_error(c, MPI_ERR_ARG, fn, "degrees is NULL");
    long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return ferry_error(c, MPI_ERR_ARG, fn, "degrees[%d] = %d is negative", i, degrees[i]);
        nedges += degrees[i];
    }
    if (nedges > INT_MAX / 3)
        return ferry_error(c, MPI_ERR_ARG, fn, "too many edges (%ld)", nedges);
    if ((rc = check_ranks(c, (int)nedges, destinations, "destinations", fn)) ||
        (rc = check_weights(c, (int)nedges, weights, "weights", fn)) || (rc = check_info_handle(c, info, fn)))
        return rc;
    if (!comm_dist_graph)
        return ferry_error(c, MPI_ERR_ARG, fn, "comm_dist_graph pointer is NULL");
    int weighted = weights != MPI_UNWEIGHTED;
    int has_w = weighted && weights != MPI_WEIGHTS_EMPTY;

    int size = c->size;
    int *scount = ferry_xcalloc((size_t)size, sizeof(int)), *sdispl = ferry_xmalloc((size_t)size * sizeof(int));
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scount[sources[i]] += 3;
            scount[destinations[e]] += 3;
        }
    for (int p = 0, off = 0; p < size; p++) {
        sdispl[p] = off;
        off += scount[p];
    }
    int *fill = ferry_xmalloc((size_t)size * sizeof(int));
    memcpy(fill, sdispl, (size_t)size * sizeof(int));
    int *sbuf = ferry_xmalloc((size_t)(6 * nedges + 1) * sizeof(int));
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], d = destinations[e], w = has_w ? weights[e] : 0;
            int *o = sbuf + fill[s];
            o[0] = 1, o[1] = d, o[2] = w;   /* out-edge of s */
            fill[s] += 3;
            o = sbuf + fill[d];
            o[0] = 0, o[1] = s, o[2] = w;   /* in-edge of d */
            fill[d] += 3;
        }
    int *rbuf, *rcount = ferry_xmalloc((size_t)size * sizeof(int));
    ferry_comm_mgmt_alltoallv_int(c, sbuf, scount, sdispl, &rbuf, rcount, TAG_DIST_GRAPH);
    long total = 0;
    for (int p = 0; p < size; p++)
        total += rcount[p];
    int nin = 0, nout = 0;
    for (long i = 0; i < total; i += 3) {
        if (rbuf[i])
            nout++;
        else
            nin++;
    }
    int *src = ferry_xmalloc((size_t)(nin + 1) * sizeof(int)), *srcw = ferry_xmalloc((size_t)(nin + 1) * sizeof(int));
    int *dst = ferry_xmalloc((size_t)(nout + 1) * sizeof(int)), *dstw = ferry_xmalloc((size_t)(nout + 1) *
                                                                                         sizeof(int));
    nin = nout = 0;
    for (long i = 0; i < total; i += 3) {
        if (rbuf[i]) {
            dst[nout] = rbuf[i + 1];
            dstw[nout++] = rbuf[i + 2];
        } else {
            src[nin] = rbuf[i + 1];
            srcw[nin++] = rbuf[i + 2];
        }
    }
    struct ferry_comm *nc = same_group(c);
    nc->topo = ferry_topo_dist_graph(nin, src, srcw, nout, dst, dstw, weighted);
    *comm_dist_graph = nc->handle;
    free(scount);
    free(sdispl);
    free(fill);
    free(sbuf);
    free(rbuf);
    free(rcount);
    free(src);
    free(srcw);
    free(dst);
    free(dstw);
    return MPI_SUCCESS;
}

#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_DIST_GRAPH, &c, "MPI_Dist_graph_neighbors_count");
    if (rc)
        return rc;
    if (!indegree || !outdegree || !weighted)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Dist_graph_neighbors_count", "NULL output pointer");
    *indegree = c->topo->indegree;
    *outdegree = c->topo->outdegree;
    *weighted = c->topo->weighted;
    return MPI_SUCCESS;
}

#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[])
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Dist_graph_neighbors";
    struct ferry_comm *c;
    int rc = check_topo(comm, MPI_DIST_GRAPH, &c, fn);
    if (rc)
        return rc;
    struct ferry_topo *t = c->topo;
    if (maxindegree < 0 || maxoutdegree < 0)
        return ferry_error(c, MPI_ERR_ARG, fn, "negative maxindegree or maxoutdegree");
    int nin = t->indegree < maxindegree ? t->indegree : maxindegree;
    int nout = t->outdegree < maxoutdegree ? t->outdegree : maxoutdegree;
    if ((nin > 0 && !sources) || (nout > 0 && !destinations))
        return ferry_error(c, MPI_ERR_ARG, fn, "NULL sources or destinations");
    for (int i = 0; i < nin; i++)
        sources[i] = t->sources[i];
    for (int i = 0; i < nout; i++)
        destinations[i] = t->destinations[i];
    if (t->weighted) {
        if (sourceweights && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY)
            for (int i = 0; i < nin; i++)
                sourceweights[i] = t->sourceweights[i];
        if (destweights && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY)
            for (int i = 0; i < nout; i++)
                destweights[i] = t->destweights[i];
    }
    return MPI_SUCCESS;
}
