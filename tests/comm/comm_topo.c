/* comm_topo: process topologies against hand-computed expectations.
 *
 * Cartesian grids from Dims_create (1 to 4 dimensions, periodic, not, mixed)
 * and grids smaller than the communicator (the other ranks get
 * MPI_COMM_NULL): Topo_test, Cartdim_get, Cart_get, Cart_coords and
 * Cart_rank for every rank (row-major), Cart_rank with wrapped coordinates
 * in periodic dimensions, Cart_shift for several displacements
 * (MPI_PROC_NULL off non-periodic edges) and a real exchange along every
 * dimension, Cart_sub for every subset of dimensions (members, sizes and
 * coordinates of the subgrids), Cart_map, a dup keeps the topology, the
 * zero-dimensional grid, an empty grid (an extent of 0: every rank left
 * out) and a negative extent (MPI_ERR_DIMS). Neighbor_allgather on a grid checks the neighbour
 * order the standard gives (per dimension, -1 then +1). Graphs (ring, star
 * on fewer nodes than ranks): Graphdims_get, Graph_get,
 * Graph_neighbors(_count) for every node, Graph_map, messages to every
 * neighbour. Distributed graphs: Dist_graph_create_adjacent (weighted and
 * not, order kept) and Dist_graph_create with pseudo-random edges spread over
 * the ranks that describe them (multisets of in/out neighbours and weights
 * against the global edge list; MPI_WEIGHTS_EMPTY for ranks with no edges;
 * MPI_UNWEIGHTED), and messages along every edge. Error classes: a grid too
 * large (MPI_ERR_ARG), coordinates outside a non-periodic dimension
 * (MPI_ERR_ARG), bad ranks (MPI_ERR_RANK), bad directions (MPI_ERR_ARG),
 * queries of a missing topology (MPI_ERR_TOPOLOGY), bad graph edges
 * (MPI_ERR_ARG); a graph edge to a rank past nnodes is accepted and
 * reported back, a neighbourhood collective over it fails (Ferry:
 * MPI_ERR_TOPOLOGY).
 */
#include "common.h"

static int rank, size;

static int err_class(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static int prod(const int *d, int n)
{
    int p = 1;
    for (int i = 0; i < n; i++)
        p *= d[i];
    return p;
}

static void ref_coords(const int *dims, int nd, int r, int *c)
{
    for (int i = nd - 1; i >= 0; i--) {
        c[i] = r % dims[i];
        r /= dims[i];
    }
}

static int ref_rank(const int *dims, int nd, const int *c)
{
    int r = 0;
    for (int i = 0; i < nd; i++)
        r = r * dims[i] + c[i];
    return r;
}

/* neighbour of r at offset disp in dimension d, or MPI_PROC_NULL */
static int ref_shift(const int *dims, const int *per, int nd, int r, int d, int disp)
{
    int c[8];
    ref_coords(dims, nd, r, c);
    long v = (long)c[d] + disp;
    if (!per[d] && (v < 0 || v >= dims[d]))
        return MPI_PROC_NULL;
    c[d] = (int)(((v % dims[d]) + dims[d]) % dims[d]);
    return ref_rank(dims, nd, c);
}

/* world ranks of c's members, in c's order */
static void members(MPI_Comm c, int *out, int *n)
{
    MPI_Group g, gw;
    CHECK_RC(MPI_Comm_group(c, &g));
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    CHECK_RC(MPI_Group_size(g, n));
    int *in = tc_malloc(sizeof(int) * (size_t)*n);
    for (int i = 0; i < *n; i++)
        in[i] = i;
    CHECK_RC(MPI_Group_translate_ranks(g, *n, in, gw, out));
    free(in);
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Group_free(&gw));
}

static void check_cart(MPI_Comm c, const int *dims, const int *per, int nd, const char *what)
{
    int t, n, r, s;
    CHECK_RC(MPI_Topo_test(c, &t));
    CHECK(t == MPI_CART, "%s: Topo_test %d", what, t);
    CHECK_RC(MPI_Cartdim_get(c, &n));
    CHECK(n == nd, "%s: Cartdim_get %d, expected %d", what, n, nd);
    CHECK_RC(MPI_Comm_rank(c, &r));
    CHECK_RC(MPI_Comm_size(c, &s));
    CHECK(s == prod(dims, nd), "%s: size %d", what, s);
    int gd[8], gp[8], gc[8], rc[8];
    CHECK_RC(MPI_Cart_get(c, nd, gd, gp, gc));
    ref_coords(dims, nd, r, rc);
    for (int i = 0; i < nd; i++) {
        CHECK(gd[i] == dims[i], "%s: dims[%d] = %d, expected %d", what, i, gd[i], dims[i]);
        CHECK(!gp[i] == !per[i], "%s: periods[%d] = %d, expected %d", what, i, gp[i], per[i]);
        CHECK(gc[i] == rc[i], "%s: coords[%d] = %d, expected %d", what, i, gc[i], rc[i]);
    }
    for (int q = 0; q < s; q++) {
        int cq[8], eq[8], back = -1;
        CHECK_RC(MPI_Cart_coords(c, q, nd, cq));
        ref_coords(dims, nd, q, eq);
        for (int i = 0; i < nd; i++)
            CHECK(cq[i] == eq[i], "%s: Cart_coords(%d)[%d] = %d, expected %d", what, q, i, cq[i], eq[i]);
        CHECK_RC(MPI_Cart_rank(c, cq, &back));
        CHECK(back == q, "%s: Cart_rank(coords of %d) = %d", what, q, back);
        /* wrapped coordinates in the periodic dimensions */
        for (int i = 0; i < nd; i++)
            if (per[i])
                cq[i] += (q % 2 ? -3 : 2) * dims[i];
        CHECK_RC(MPI_Cart_rank(c, cq, &back));
        CHECK(back == q, "%s: Cart_rank(wrapped coords of %d) = %d", what, q, back);
    }
    static const int disps[] = {-2, -1, 0, 1, 2, 5};
    for (int d = 0; d < nd; d++)
        for (unsigned k = 0; k < sizeof disps / sizeof *disps; k++) {
            int src, dst;
            CHECK_RC(MPI_Cart_shift(c, d, disps[k], &src, &dst));
            int es = ref_shift(dims, per, nd, r, d, -disps[k]), ed = ref_shift(dims, per, nd, r, d, disps[k]);
            CHECK(src == es && dst == ed, "%s: Cart_shift(%d, %d) = (%d, %d), expected (%d, %d)", what, d, disps[k],
                  src, dst, es, ed);
        }
    /* exchange along every dimension: what arrives comes from the source */
    for (int d = 0; d < nd; d++) {
        int src, dst, got = -7;
        CHECK_RC(MPI_Cart_shift(c, d, 1, &src, &dst));
        CHECK_RC(MPI_Sendrecv(&r, 1, MPI_INT, dst, d, &got, 1, MPI_INT, src, d, c, MPI_STATUS_IGNORE));
        CHECK(got == (src == MPI_PROC_NULL ? -7 : src), "%s: shift exchange in dimension %d got %d from %d", what, d,
              got, src);
    }
    /* a dup keeps the topology */
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(c, &dup));
    CHECK_RC(MPI_Topo_test(dup, &t));
    CHECK(t == MPI_CART, "%s: dup lost the topology (%d)", what, t);
    CHECK_RC(MPI_Cart_get(dup, nd, gd, gp, gc));
    for (int i = 0; i < nd; i++)
        CHECK(gd[i] == dims[i] && !gp[i] == !per[i] && gc[i] == rc[i], "%s: dup's Cart_get differs", what);
    CHECK_RC(MPI_Comm_free(&dup));

    /* errors */
    CHECK_RC(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int cq[8] = {0}, q;
    for (int i = 0; i < nd; i++)
        if (!per[i]) {
            cq[i] = dims[i];
            CHECK(err_class(MPI_Cart_rank(c, cq, &q)) == MPI_ERR_ARG, "%s: Cart_rank off the grid", what);
            cq[i] = -1;
            CHECK(err_class(MPI_Cart_rank(c, cq, &q)) == MPI_ERR_ARG, "%s: Cart_rank at -1", what);
            cq[i] = 0;
        }
    CHECK(err_class(MPI_Cart_coords(c, s, nd, cq)) == MPI_ERR_RANK, "%s: Cart_coords of rank size", what);
    int src, dst;
    if (nd > 0)
        CHECK(err_class(MPI_Cart_shift(c, nd, 1, &src, &dst)) == MPI_ERR_ARG, "%s: Cart_shift direction", what);
    CHECK(err_class(MPI_Graphdims_get(c, &q, &q)) == MPI_ERR_TOPOLOGY, "%s: Graphdims_get on a grid", what);
    CHECK_RC(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));
}

/* every subset of the dimensions */
static void check_subs(MPI_Comm c, const int *dims, const int *per, int nd, const char *what)
{
    int r, mine[8];
    CHECK_RC(MPI_Comm_rank(c, &r));
    ref_coords(dims, nd, r, mine);
    int *mem = tc_malloc(sizeof(int) * (size_t)size), *cartw = tc_malloc(sizeof(int) * (size_t)size), nc;
    members(c, cartw, &nc);
    for (int mask = 0; mask < (1 << nd); mask++) {
        int remain[8], sd[8], sp[8], k = 0;
        for (int i = 0; i < nd; i++) {
            remain[i] = (mask >> i) & 1;
            if (remain[i]) {
                sd[k] = dims[i];
                sp[k++] = per[i];
            }
        }
        MPI_Comm sub;
        CHECK_RC(MPI_Cart_sub(c, remain, &sub));
        if (k == 0) {
            /* a zero-dimensional grid of one process: grid rank 0 gets it,
             * the others MPI_COMM_NULL (as MPICH does) */
            if (r == 0)
                CHECK(sub != MPI_COMM_NULL, "%s: Cart_sub(none) gave rank 0 nothing", what);
            else
                CHECK(sub == MPI_COMM_NULL, "%s: Cart_sub(none) gave grid rank %d a communicator", what, r);
            if (sub != MPI_COMM_NULL) {
                int s, n;
                CHECK_RC(MPI_Comm_size(sub, &s));
                CHECK_RC(MPI_Cartdim_get(sub, &n));
                CHECK(s == 1 && n == 0, "%s: Cart_sub(none): size %d, %d dimensions", what, s, n);
                CHECK_RC(MPI_Comm_free(&sub));
            }
            continue;
        }
        check_cart(sub, sd, sp, k, what);
        /* member j of the subgrid: my coordinates in the dropped dimensions,
         * j's (row-major) in the kept ones */
        int n;
        members(sub, mem, &n);
        CHECK(n == prod(sd, k), "%s: subgrid of %d members", what, n);
        for (int j = 0; j < n; j++) {
            int jc[8], full[8];
            ref_coords(sd, k, j, jc);
            for (int i = 0, m = 0; i < nd; i++)
                full[i] = remain[i] ? jc[m++] : mine[i];
            int e = cartw[ref_rank(dims, nd, full)];
            CHECK(mem[j] == e, "%s: subgrid mask %d member %d is world rank %d, expected %d", what, mask, j, mem[j],
                  e);
        }
        CHECK_RC(MPI_Comm_free(&sub));
    }
    free(mem);
    free(cartw);
}

/* Neighbor_allgather: per dimension the -1 then the +1 neighbour's rank;
 * blocks of absent (MPI_PROC_NULL) neighbours stay untouched */
static void check_neighbor_order(MPI_Comm c, const int *dims, const int *per, int nd, const char *what)
{
    int r, buf[16];
    CHECK_RC(MPI_Comm_rank(c, &r));
    for (int i = 0; i < 2 * nd; i++)
        buf[i] = -99;
    CHECK_RC(MPI_Neighbor_allgather(&r, 1, MPI_INT, buf, 1, MPI_INT, c));
    for (int d = 0; d < nd; d++) {
        int lo = ref_shift(dims, per, nd, r, d, -1), hi = ref_shift(dims, per, nd, r, d, 1);
        CHECK(buf[2 * d] == (lo == MPI_PROC_NULL ? -99 : lo), "%s: neighbour block %d holds %d, expected %d", what,
              2 * d, buf[2 * d], lo);
        CHECK(buf[2 * d + 1] == (hi == MPI_PROC_NULL ? -99 : hi), "%s: neighbour block %d holds %d, expected %d",
              what, 2 * d + 1, buf[2 * d + 1], hi);
    }
}

static void test_cart(void)
{
    for (int nd = 1; nd <= 4; nd++)
        for (int pat = 0; pat < 3; pat++) {
            int dims[8] = {0}, per[8];
            CHECK_RC(MPI_Dims_create(size, nd, dims));
            for (int i = 0; i < nd; i++)
                per[i] = pat == 0 ? 0 : pat == 1 ? 1 : i % 2;
            char what[64];
            snprintf(what, sizeof what, "cart %dd pattern %d", nd, pat);
            MPI_Comm c;
            CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, nd, dims, per, pat == 2, &c));
            CHECK(c != MPI_COMM_NULL, "%s: MPI_COMM_NULL", what);
            check_cart(c, dims, per, nd, what);
            check_subs(c, dims, per, nd, what);
            check_neighbor_order(c, dims, per, nd, what);
            int nr;
            CHECK_RC(MPI_Cart_map(MPI_COMM_WORLD, nd, dims, per, &nr));
            CHECK(nr >= 0 && nr < size, "%s: Cart_map gave %d", what, nr);
            CHECK_RC(MPI_Comm_free(&c));
        }
    /* a smaller grid: (size - 1) x 1, the last rank is left out */
    if (size > 1) {
        int dims[2] = {size - 1, 1}, per[2] = {1, 0};
        MPI_Comm c;
        CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &c));
        if (rank == size - 1) {
            CHECK(c == MPI_COMM_NULL, "rank beyond the grid got a communicator");
        } else {
            check_cart(c, dims, per, 2, "cart (size-1)x1");
            check_subs(c, dims, per, 2, "cart (size-1)x1");
            int m[64], n;
            members(c, m, &n);
            for (int i = 0; i < n; i++)
                CHECK(m[i] == i, "smaller grid: member %d is world rank %d", i, m[i]);
            CHECK_RC(MPI_Comm_free(&c));
        }
        int nr;
        CHECK_RC(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, per, &nr));
        int *all = tc_malloc(sizeof(int) * (size_t)size);
        CHECK_RC(MPI_Allgather(&nr, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
        int undefined = 0;
        char seen[64] = {0};
        for (int i = 0; i < size; i++) {
            if (all[i] == MPI_UNDEFINED) {
                undefined++;
                continue;
            }
            CHECK(all[i] >= 0 && all[i] < size - 1 && !seen[all[i]], "Cart_map gave %d twice or out of range",
                  all[i]);
            seen[all[i]] = 1;
        }
        CHECK(undefined == 1, "Cart_map left %d ranks out, expected 1", undefined);
        free(all);
    }
    /* zero dimensions: one process */
    MPI_Comm z;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &z));
    if (rank == 0) {
        CHECK(z != MPI_COMM_NULL, "0-d grid: rank 0 got nothing");
        int s, n, t, q = -1;
        CHECK_RC(MPI_Comm_size(z, &s));
        CHECK_RC(MPI_Cartdim_get(z, &n));
        CHECK_RC(MPI_Topo_test(z, &t));
        CHECK(s == 1 && n == 0 && t == MPI_CART, "0-d grid: size %d, %d dims, topo %d", s, n, t);
        CHECK_RC(MPI_Cart_rank(z, NULL, &q));
        CHECK(q == 0, "0-d grid: Cart_rank %d", q);
        CHECK_RC(MPI_Comm_free(&z));
    } else {
        CHECK(z == MPI_COMM_NULL, "0-d grid: rank %d got a communicator", rank);
    }
    /* errors on the world */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int big[2] = {size + 1, 1}, per[2] = {0, 0}, q;
    MPI_Comm c = MPI_COMM_NULL;
    c = MPI_COMM_WORLD;
    CHECK(err_class(MPI_Cart_create(MPI_COMM_WORLD, 2, big, per, 0, &c)) == MPI_ERR_ARG, "grid larger than world");
    CHECK(c == MPI_COMM_NULL, "a failed Cart_create left 0x%x in comm_cart, not MPI_COMM_NULL", (unsigned)c);
    CHECK(err_class(MPI_Cart_create(MPI_COMM_WORLD, -1, big, per, 0, &c)) == MPI_ERR_ARG, "negative ndims");
    CHECK(err_class(MPI_Cartdim_get(MPI_COMM_WORLD, &q)) == MPI_ERR_TOPOLOGY, "Cartdim_get of the world");
    CHECK(err_class(MPI_Cart_coords(MPI_COMM_WORLD, 0, 1, &q)) == MPI_ERR_TOPOLOGY, "Cart_coords of the world");
    CHECK(err_class(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &q)) == MPI_ERR_TOPOLOGY, "graph query of world");
    CHECK(err_class(MPI_Cart_map(MPI_COMM_WORLD, 2, big, per, &q)) == MPI_ERR_DIMS, "Cart_map too large");
    /* an extent of 0 is an empty grid: every rank is left out (as under
     * MPICH); a negative extent is an error */
    int empty[2] = {2, 0}, neg[2] = {2, -1};
    q = 0;
    CHECK_RC(MPI_Cart_map(MPI_COMM_WORLD, 2, empty, per, &q));
    CHECK(q == MPI_UNDEFINED, "Cart_map of a 2 x 0 grid gave %d, not MPI_UNDEFINED", q);
    c = MPI_COMM_WORLD;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, empty, per, 1, &c));
    CHECK(c == MPI_COMM_NULL, "Cart_create of a 2 x 0 grid gave 0x%x, not MPI_COMM_NULL", (unsigned)c);
    if (!tc_mpich_version()) {   /* (MPICH 4.0.2 takes a negative extent without an error) */
        CHECK(err_class(MPI_Cart_map(MPI_COMM_WORLD, 2, neg, per, &q)) == MPI_ERR_DIMS, "Cart_map negative extent");
        CHECK(err_class(MPI_Cart_create(MPI_COMM_WORLD, 2, neg, per, 0, &c)) == MPI_ERR_DIMS,
              "Cart_create negative extent");
    }
    int t;
    CHECK_RC(MPI_Topo_test(MPI_COMM_WORLD, &t));
    CHECK(t == MPI_UNDEFINED, "world has topology %d", t);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void check_graph(MPI_Comm c, int nnodes, const int *index, const int *edges, const char *what)
{
    int t, nn, ne, r;
    CHECK_RC(MPI_Topo_test(c, &t));
    CHECK(t == MPI_GRAPH, "%s: Topo_test %d", what, t);
    CHECK_RC(MPI_Graphdims_get(c, &nn, &ne));
    CHECK(nn == nnodes && ne == index[nnodes - 1], "%s: Graphdims_get %d %d", what, nn, ne);
    int *gi = tc_malloc(sizeof(int) * (size_t)nn), *ge = tc_malloc(sizeof(int) * (size_t)(ne + 1));
    CHECK_RC(MPI_Graph_get(c, nn, ne, gi, ge));
    for (int i = 0; i < nn; i++)
        CHECK(gi[i] == index[i], "%s: index[%d] = %d", what, i, gi[i]);
    for (int i = 0; i < ne; i++)
        CHECK(ge[i] == edges[i], "%s: edges[%d] = %d", what, i, ge[i]);
    for (int q = 0; q < nn; q++) {
        int n, first = q ? index[q - 1] : 0, nb[64];
        CHECK_RC(MPI_Graph_neighbors_count(c, q, &n));
        CHECK(n == index[q] - first, "%s: node %d has %d neighbours", what, q, n);
        CHECK_RC(MPI_Graph_neighbors(c, q, 64, nb));
        for (int i = 0; i < n; i++)
            CHECK(nb[i] == edges[first + i], "%s: node %d neighbour %d is %d", what, q, i, nb[i]);
    }
    /* send to every neighbour; receive from every node that lists me */
    CHECK_RC(MPI_Comm_rank(c, &r));
    int first = r ? index[r - 1] : 0, nout = index[r] - first, nin = 0;
    for (int i = 0; i < ne; i++)
        if (edges[i] == r)
            nin++;
    MPI_Request *rq = tc_malloc(sizeof(MPI_Request) * (size_t)(nout + 1));
    for (int i = 0; i < nout; i++)
        CHECK_RC(MPI_Isend(&r, 1, MPI_INT, edges[first + i], 31, c, &rq[i]));
    int *from = tc_malloc(sizeof(int) * (size_t)(nn + 1));
    memset(from, 0, sizeof(int) * (size_t)(nn + 1));
    for (int i = 0; i < nin; i++) {
        int v;
        MPI_Status st;
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 31, c, &st));
        CHECK(v == st.MPI_SOURCE, "%s: message %d from %d", what, v, st.MPI_SOURCE);
        from[v]++;
    }
    for (int q = 0; q < nn; q++) {
        int fq = q ? index[q - 1] : 0, cnt = 0;
        for (int i = fq; i < index[q]; i++)
            cnt += edges[i] == r;
        CHECK(from[q] == cnt, "%s: %d messages from node %d, expected %d", what, from[q], q, cnt);
    }
    CHECK_RC(MPI_Waitall(nout, rq, MPI_STATUSES_IGNORE));
    free(rq);
    free(from);
    free(gi);
    free(ge);
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(c, &dup));
    CHECK_RC(MPI_Topo_test(dup, &t));
    CHECK(t == MPI_GRAPH, "%s: dup lost the graph", what);
    CHECK_RC(MPI_Comm_free(&dup));
}

static void test_graph(void)
{
    /* ring: i -> i-1, i+1 */
    int *index = tc_malloc(sizeof(int) * (size_t)size), *edges = tc_malloc(sizeof(int) * 2 * (size_t)size);
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm c;
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c));
    check_graph(c, size, index, edges, "ring graph");
    int nr;
    CHECK_RC(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &nr));
    CHECK(nr >= 0 && nr < size, "Graph_map gave %d", nr);
    CHECK_RC(MPI_Comm_free(&c));
    /* star on size - 1 nodes: 0 <-> every other node */
    if (size > 1) {
        int nn = size - 1, ne = 0;
        for (int i = 0; i < nn; i++) {
            if (i == 0)
                for (int j = 1; j < nn; j++)
                    edges[ne++] = j;
            else
                edges[ne++] = 0;
            index[i] = ne;
        }
        if (nn == 1) {   /* a single node: one self loop */
            edges[0] = 0;
            index[0] = 1;
        }
        CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, nn, index, edges, 1, &c));
        if (rank == size - 1) {
            CHECK(c == MPI_COMM_NULL, "rank beyond the graph got a communicator");
        } else {
            check_graph(c, nn, index, edges, "star graph");
            CHECK_RC(MPI_Comm_free(&c));
        }
    }
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int idx[2] = {1, 2}, bad[2] = {0, size + 1}, dec[2] = {2, 1};
    c = MPI_COMM_NULL;
    if (size >= 2) {
        c = MPI_COMM_WORLD;
        CHECK(err_class(MPI_Graph_create(MPI_COMM_WORLD, 2, idx, bad, 0, &c)) == MPI_ERR_ARG, "edge to no node");
        CHECK(c == MPI_COMM_NULL || tc_mpich_version(), "a failed Graph_create left 0x%x, not MPI_COMM_NULL",
              (unsigned)c);   /* (MPICH 4.0.2 leaves it alone) */
        CHECK(err_class(MPI_Graph_create(MPI_COMM_WORLD, 2, dec, bad, 0, &c)) == MPI_ERR_ARG, "decreasing index");
    }
    if (size >= 4) {
        /* an edge to a rank past nnodes (node 3 of a 2-node graph), as the
         * IBM suite's topo/graph makes: MPICH and Open MPI accept it, the
         * queries give it back; a neighbourhood collective of node 0, which
         * has it for a neighbour, fails on Ferry (MPI_ERR_TOPOLOGY) */
        int gi[2] = {2, 3}, ge[3] = {1, 3, 0}, ncount = -1, nb[2] = {-1, -1};
        CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, 2, gi, ge, 0, &c));
        CHECK((rank < 2) == (c != MPI_COMM_NULL), "2-node graph: rank %d got %s", rank,
              c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
        if (c != MPI_COMM_NULL) {
            CHECK_RC(MPI_Graph_neighbors_count(c, rank, &ncount));
            CHECK(ncount == (rank == 0 ? 2 : 1), "2-node graph: node %d has %d neighbours", rank, ncount);
            CHECK_RC(MPI_Graph_neighbors(c, rank, 2, nb));
            CHECK(rank == 0 ? nb[0] == 1 && nb[1] == 3 : nb[0] == 0, "2-node graph: node %d neighbours %d %d", rank,
                  nb[0], nb[1]);
            if (!tc_mpich_version() && !tc_is_open_mpi() && rank == 0) {
                int x = 1, y[2];
                CHECK_RC(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
                CHECK(err_class(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, c)) == MPI_ERR_TOPOLOGY,
                      "neighbour allgather with a neighbour outside the graph");
            }
            CHECK_RC(MPI_Comm_free(&c));
        }
    }
    CHECK(err_class(MPI_Graph_create(MPI_COMM_WORLD, size + 1, idx, bad, 0, &c)) == MPI_ERR_ARG, "too many nodes");
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, 0, idx, bad, 0, &c));
    CHECK(c == MPI_COMM_NULL, "a graph of no nodes gave a communicator");
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    free(index);
    free(edges);
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* (peer, weight) multisets equal? */
static void same_multiset(int *a, int *b, int n, const char *what)
{
    qsort(a, (size_t)n, 2 * sizeof(int), cmp_pair);
    qsort(b, (size_t)n, 2 * sizeof(int), cmp_pair);
    for (int i = 0; i < 2 * n; i++)
        CHECK(a[i] == b[i], "%s: neighbour lists differ at %d (%d vs %d)", what, i, a[i], b[i]);
}

/* messages along every edge: out-neighbours each get one, the sources seen
 * match the in-neighbours */
static void dist_traffic(MPI_Comm c, int nin, const int *src, int nout, const int *dst, const char *what)
{
    MPI_Request *rq = tc_malloc(sizeof(MPI_Request) * (size_t)(nout + 1));
    for (int i = 0; i < nout; i++)
        CHECK_RC(MPI_Isend(&rank, 1, MPI_INT, dst[i], 41, c, &rq[i]));
    int *got = tc_malloc(sizeof(int) * 2 * (size_t)(nin + 1)), *want = tc_malloc(sizeof(int) * 2 * (size_t)(nin + 1));
    for (int i = 0; i < nin; i++) {
        int v;
        MPI_Status st;
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 41, c, &st));
        got[2 * i] = st.MPI_SOURCE, got[2 * i + 1] = v;
        want[2 * i] = src[i], want[2 * i + 1] = src[i];   /* comm rank == world rank here */
    }
    same_multiset(got, want, nin, what);
    CHECK_RC(MPI_Waitall(nout, rq, MPI_STATUSES_IGNORE));
    free(rq);
    free(got);
    free(want);
}

static void test_dist_adjacent(void)
{
    int src[2] = {(rank + size - 1) % size, (rank + 2) % size}, dst[2] = {(rank + 1) % size, (rank + size - 2) % size};
    int sw[2] = {100 * src[0] + rank, 100 * src[1] + rank}, dw[2] = {100 * rank + dst[0], 100 * rank + dst[1]};
    for (int weighted = 0; weighted < 2; weighted++) {
        MPI_Comm c;
        CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, weighted ? sw : MPI_UNWEIGHTED, 2, dst,
                                                weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
        int t, in, out, w;
        CHECK_RC(MPI_Topo_test(c, &t));
        CHECK(t == MPI_DIST_GRAPH, "adjacent: Topo_test %d", t);
        CHECK_RC(MPI_Dist_graph_neighbors_count(c, &in, &out, &w));
        CHECK(in == 2 && out == 2 && !w == !weighted, "adjacent: counts %d %d weighted %d", in, out, w);
        int gs[2], gsw[2] = {-1, -1}, gd[2], gdw[2] = {-1, -1};
        CHECK_RC(MPI_Dist_graph_neighbors(c, 2, gs, gsw, 2, gd, gdw));
        for (int i = 0; i < 2; i++) {
            CHECK(gs[i] == src[i] && gd[i] == dst[i], "adjacent: neighbour %d is (%d, %d), expected (%d, %d)", i,
                  gs[i], gd[i], src[i], dst[i]);
            if (weighted)
                CHECK(gsw[i] == sw[i] && gdw[i] == dw[i], "adjacent: weights %d %d", gsw[i], gdw[i]);
        }
        int sz;
        CHECK_RC(MPI_Comm_size(c, &sz));
        CHECK(sz == size, "adjacent: size %d", sz);
        dist_traffic(c, 2, src, 2, dst, "adjacent traffic");
        CHECK_RC(MPI_Comm_free(&c));
    }
    /* no neighbours at all, weighted with MPI_WEIGHTS_EMPTY */
    MPI_Comm c;
    CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY,
                                            MPI_INFO_NULL, 0, &c));
    int in, out, w;
    CHECK_RC(MPI_Dist_graph_neighbors_count(c, &in, &out, &w));
    CHECK(in == 0 && out == 0, "empty adjacent graph: %d %d", in, out);
    CHECK_RC(MPI_Comm_free(&c));
}

static unsigned lcg;
static unsigned rnd(unsigned n)
{
    lcg = lcg * 1103515245u + 12345u;
    return (lcg >> 8) % n;
}

static void test_dist_general(void)
{
    for (int variant = 0; variant < 3; variant++) {
        /* the global edge list (the same on every rank); edge e is
         * described by rank describer[e] */
        lcg = 99u + (unsigned)variant * 7u + (unsigned)size;
        int ne = (int)rnd((unsigned)(4 * size)) + (variant == 2 ? 0 : 1);
        if (variant == 2)
            ne = 0;
        int *es = tc_malloc(sizeof(int) * (size_t)(ne + 1)), *ed = tc_malloc(sizeof(int) * (size_t)(ne + 1));
        int *ew = tc_malloc(sizeof(int) * (size_t)(ne + 1)), *by = tc_malloc(sizeof(int) * (size_t)(ne + 1));
        for (int e = 0; e < ne; e++) {
            es[e] = (int)rnd((unsigned)size);
            ed[e] = (int)rnd((unsigned)size);
            ew[e] = (int)rnd(1000);
            by[e] = (int)rnd((unsigned)size);
        }
        int weighted = variant != 1;
        /* my description: one (source, degree) entry per edge, destinations in order */
        int n = 0, *srcs = tc_malloc(sizeof(int) * (size_t)(ne + 1)), *deg = tc_malloc(sizeof(int) * (size_t)(ne + 1));
        int *dsts = tc_malloc(sizeof(int) * (size_t)(ne + 1)), *wts = tc_malloc(sizeof(int) * (size_t)(ne + 1));
        for (int e = 0; e < ne; e++)
            if (by[e] == rank) {
                srcs[n] = es[e];
                deg[n] = 1;
                dsts[n] = ed[e];
                wts[n++] = ew[e];
            }
        const int *wp = !weighted ? MPI_UNWEIGHTED : n == 0 ? MPI_WEIGHTS_EMPTY : wts;
        MPI_Comm c;
        CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, deg, dsts, wp, MPI_INFO_NULL, 0, &c));
        int in, out, w;
        CHECK_RC(MPI_Dist_graph_neighbors_count(c, &in, &out, &w));
        int ein = 0, eout = 0;
        for (int e = 0; e < ne; e++) {
            ein += ed[e] == rank;
            eout += es[e] == rank;
        }
        CHECK(in == ein && out == eout, "dist graph %d: degrees %d/%d, expected %d/%d", variant, in, out, ein, eout);
        CHECK(!w == !weighted, "dist graph %d: weighted %d", variant, w);
        int *gs = tc_malloc(sizeof(int) * (size_t)(in + 1)), *gsw = tc_malloc(sizeof(int) * (size_t)(in + 1));
        int *gd = tc_malloc(sizeof(int) * (size_t)(out + 1)), *gdw = tc_malloc(sizeof(int) * (size_t)(out + 1));
        CHECK_RC(MPI_Dist_graph_neighbors(c, in, gs, weighted ? gsw : MPI_UNWEIGHTED, out, gd,
                                          weighted ? gdw : MPI_UNWEIGHTED));
        int *a = tc_malloc(sizeof(int) * 2 * (size_t)(ne + 1)), *b = tc_malloc(sizeof(int) * 2 * (size_t)(ne + 1));
        int k = 0;
        for (int e = 0; e < ne; e++)
            if (ed[e] == rank) {
                a[2 * k] = es[e], a[2 * k + 1] = weighted ? ew[e] : 0;
                b[2 * k] = gs[k], b[2 * k + 1] = weighted ? gsw[k] : 0;
                k++;
            }
        same_multiset(a, b, k, "in-neighbours");
        k = 0;
        for (int e = 0; e < ne; e++)
            if (es[e] == rank) {
                a[2 * k] = ed[e], a[2 * k + 1] = weighted ? ew[e] : 0;
                b[2 * k] = gd[k], b[2 * k + 1] = weighted ? gdw[k] : 0;
                k++;
            }
        same_multiset(a, b, k, "out-neighbours");
        dist_traffic(c, in, gs, out, gd, "dist graph traffic");
        CHECK_RC(MPI_Comm_free(&c));
        free(es), free(ed), free(ew), free(by), free(srcs), free(deg), free(dsts), free(wts);
        free(gs), free(gsw), free(gd), free(gdw), free(a), free(b);
    }
    /* errors */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int in, out, w;
    CHECK(err_class(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &w)) == MPI_ERR_TOPOLOGY,
          "Dist_graph_neighbors_count of the world");
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    CHECK(size <= 64, "comm_topo handles up to 64 ranks");
    test_cart();
    test_graph();
    test_dist_adjacent();
    test_dist_general();
    return tc_finish("comm_topo");
}
