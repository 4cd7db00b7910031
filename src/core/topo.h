/* Virtual topologies attached to communicators: Cartesian grids, graphs and
 * distributed graphs (struct ferry_comm's `topo`, NULL for none). Ranks are
 * never reordered (reorder = true is accepted and ignored), so a rank in the
 * topology is the rank in the communicator. */
#ifndef FERRY_TOPO_H
#define FERRY_TOPO_H
#include <mpi.h>

struct ferry_comm;

struct ferry_topo {
    int kind;                    /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */

    /* MPI_CART: row-major grid (the last dimension varies fastest) */
    int ndims;
    int *dims, *periods, *coords;   /* coords: this process's */

    /* MPI_GRAPH: the whole graph, as given to Graph_create */
    int nnodes, nedges;
    int *index, *edges;

    /* MPI_DIST_GRAPH: this process's edges */
    int indegree, outdegree, weighted;
    int *sources, *sourceweights, *destinations, *destweights;

    /* neighbour lists in the order of the neighbourhood collectives */
    int nin, nout;
    int *in, *out;
    int outside;   /* a neighbour is no rank of the communicator (a graph edge to node >= nnodes) */
};

/* Constructors copy their arrays; rank is this process's rank in the new
 * communicator. */
struct ferry_topo *ferry_topo_cart(int ndims, const int *dims, const int *periods, int rank);
struct ferry_topo *ferry_topo_graph(int nnodes, const int *index, const int *edges, int rank);
/* Weights NULL when unweighted. */
struct ferry_topo *ferry_topo_dist_graph(int indegree, const int *sources, const int *sourceweights, int outdegree,
                                         const int *destinations, const int *destweights, int weighted);
struct ferry_topo *ferry_topo_dup(const struct ferry_topo *t);
void ferry_topo_free(struct ferry_topo *t);

/* Cartesian helpers. rank -> coords (coords has ndims entries). */
void ferry_cart_coords(const struct ferry_topo *t, int rank, int *coords);
/* coords -> rank, wrapping periodic dimensions; MPI_ERR_ARG for a coordinate
 * outside a non-periodic dimension. */
int ferry_cart_rank(const struct ferry_topo *t, const int *coords, int *rank);
/* Cart_shift for this process. */
void ferry_cart_shift(const struct ferry_topo *t, int direction, int disp, int *source, int *dest);

/* MPI_Dims_create's balanced factorization; returns MPI_SUCCESS or an error
 * class (MPI_ERR_DIMS: negative entry, or the fixed entries do not divide
 * nnodes). */
int ferry_dims_create(int nnodes, int ndims, int *dims);

/* For the neighbourhood collectives: c's neighbours in the order the standard
 * defines. Cartesian: for each dimension the -1 then the +1 neighbour
 * (MPI_PROC_NULL at a non-periodic edge), in and out alike; graph: the
 * Graph_neighbors list, in and out alike; distributed graph: sources (in) and
 * destinations (out) as given. The arrays belong to the communicator.
 * Returns MPI_SUCCESS, or MPI_ERR_TOPOLOGY when c has no topology. */
int ferry_topo_neighbors(struct ferry_comm *c, int *indeg, const int **in, int *outdeg, const int **out);

#endif
