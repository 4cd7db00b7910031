/* The order in which a reduction combines the ranks' inputs, as a binary
 * tree whose leaves are the ranks.
 *
 * Floating-point operations are not associative, so the tree decides the
 * last bits of a sum. MPI strongly recommends that a reduction give the same
 * result whenever it is applied to the same arguments in the same order, and
 * the same call can run by different algorithms: the shared-memory ones
 * (which can combine their inputs in any order) only once the
 * communicator's segment exists, the point-to-point ones before that. So the
 * shared-memory reductions follow the tree of the point-to-point algorithm
 * the call would otherwise take (coll_red_order in select.c), and a program
 * calling MPI_Allreduce twice on the same data gets the same bits twice. */
#ifndef FERRY_COLL_RED_ORDER_H
#define FERRY_COLL_RED_ORDER_H
#include <stddef.h>

struct ferry_op;
struct ferry_datatype;

enum red_order {
    /* recursive doubling (allreduce_rd): the first 2 * rem ranks fold in
     * pairs (2i, 2i + 1), rem = n - largest power of two; the resulting
     * power-of-two list is combined neighbours first */
    RED_ORDER_DOUBLING,
    /* recursive halving (Rabenseifner's reduce-scatter): the same fold, then
     * partners at distance pof2/2 first, down to neighbours (commutative ops) */
    RED_ORDER_HALVING,
    /* binomial tree rooted at `root` (build_reduce_binomial): over the ranks
     * root, root + 1, ... each node adds its children at distance 1, 2, 4, ... */
    RED_ORDER_BINOMIAL,
};

struct red_node {
    int left, right;   /* node indices; -1 for a leaf */
};

/* Nodes 0 .. n-1 are the leaves (rank i is node i), the others internal.
 * Doubling, and binomial rooted at 0, keep lower ranks on the left (the
 * order non-commutative ops need); the others serve commutative ops only. */
struct red_tree {
    enum red_order order;
    int root_rank;     /* RED_ORDER_BINOMIAL's root */
    int n;             /* ranks */
    int top;           /* the root node */
    int depth;         /* internal nodes on the longest path: temporaries red_tree_eval needs */
    struct red_node node[];
};

/* Build the tree of `order` over n ranks (root: for RED_ORDER_BINOMIAL).
 * Free with free(). */
struct red_tree *red_tree_new(enum red_order order, int n, int root);

/* dst = the tree's reduction of the n inputs in[i] (nu units each, none of
 * them dst); tmp holds tree->depth arrays of nu units. */
void red_tree_eval(const struct red_tree *t, const void *const *in, void *dst, size_t nu, const struct ferry_op *op,
                   const struct ferry_datatype *unit, char *tmp);

#endif
