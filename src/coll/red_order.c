/* Reduction trees (see red_order.h): built to mirror the point-to-point
 * algorithms in reduce.c, evaluated by the shared-memory reductions. */
#include "coll/red_order.h"
#include "coll/coll_impl.h"
#include "core/op.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>

static int join(struct red_tree *t, int *next, int left, int right)
{
    int v = (*next)++;
    t->node[v].left = left;
    t->node[v].right = right;
    return v;
}

static unsigned bit_reverse(unsigned x, int bits)
{
    unsigned y = 0;
    for (int b = 0; b < bits; b++, x >>= 1)
        y = (y << 1) | (x & 1);
    return y;
}

/* build_reduce_binomial's subtree at relative rank rel: the node adds the
 * subtrees of its children rel + 1, rel + 2, rel + 4, ... in that order. */
static int binomial(struct red_tree *t, int *next, int root, int rel)
{
    int n = t->n, acc = (root + rel) % n;
    for (int mask = 1; mask < n && !(rel & mask); mask <<= 1)
        if (rel + mask < n)
            acc = join(t, next, acc, binomial(t, next, root, rel + mask));
    return acc;
}

/* Temporaries red_tree_eval needs below node v (the right subtree is
 * evaluated into the destination first, then the left one into a
 * temporary of its own). */
static int need(const struct red_tree *t, int v)
{
    const struct red_node *x = &t->node[v];
    if (x->left < 0)
        return 0;
    int l = t->node[x->left].left >= 0 ? 1 + need(t, x->left) : 0, r = need(t, x->right);
    return FERRY_MAX(l, r);
}

struct red_tree *red_tree_new(enum red_order order, int n, int root)
{
    struct red_tree *t = ferry_xcalloc(1, sizeof *t + (size_t)(2 * n - 1) * sizeof(struct red_node));
    t->order = order;
    t->root_rank = root;
    t->n = n;
    int next = n;
    for (int i = 0; i < n; i++)
        t->node[i].left = t->node[i].right = -1;
    if (order == RED_ORDER_BINOMIAL) {
        t->top = binomial(t, &next, root, 0);
    } else {
        /* the ranks beyond the largest power of two fold into a neighbour:
         * newrank i is the pair (2i, 2i + 1) for i < rem, rank i + rem above */
        int pof2 = pof2_floor(n), rem = n - pof2, bits = 0;
        while ((1 << bits) < pof2)
            bits++;
        int *list = ferry_xcalloc((size_t)pof2, sizeof *list), *fold = ferry_xcalloc((size_t)pof2, sizeof *fold);
        for (int i = 0; i < pof2; i++)
            fold[i] = i < rem ? join(t, &next, 2 * i, 2 * i + 1) : i + rem;
        /* halving pairs partners at distance pof2/2 first: neighbours after
         * reversing the bits of the newranks */
        for (int i = 0; i < pof2; i++)
            list[i] = order == RED_ORDER_HALVING ? fold[bit_reverse((unsigned)i, bits)] : fold[i];
        for (int len = pof2; len > 1; len /= 2)
            for (int j = 0; j < len / 2; j++)
                list[j] = join(t, &next, list[2 * j], list[2 * j + 1]);
        t->top = list[0];
        free(list);
        free(fold);
    }
    t->depth = need(t, t->top);
    return t;
}

struct eval {
    const struct red_tree *t;
    const void *const *in;
    size_t nu, tbytes;
    const struct ferry_op *op;
    const struct ferry_datatype *unit;
    char *tmp;
};

/* dst = the value of internal node v; temporaries from `level` up are free. */
static void eval_into(const struct eval *e, int v, void *dst, int level)
{
    const struct red_node *x = &e->t->node[v];
    int l_inner = e->t->node[x->left].left >= 0, r_inner = e->t->node[x->right].left >= 0;
    if (r_inner)
        eval_into(e, x->right, dst, level);
    const void *lv;
    if (l_inner) {
        char *buf = e->tmp + (size_t)level * e->tbytes;
        eval_into(e, x->left, buf, level + 1);
        lv = buf;
    } else {
        lv = e->in[x->left];
    }
    if (r_inner)
        ferry_op_apply(e->op, lv, dst, e->nu, e->unit);                     /* dst = left op dst */
    else
        ferry_op_apply3(e->op, lv, e->in[x->right], dst, e->nu, e->unit);   /* dst = left op right */
}

void red_tree_eval(const struct red_tree *t, const void *const *in, void *dst, size_t nu, const struct ferry_op *op,
                   const struct ferry_datatype *unit, char *tmp)
{
    if (nu == 0)
        return;
    if (t->top < t->n) {   /* one rank */
        memcpy(dst, in[t->top], nu * unit->size);
        return;
    }
    struct eval e = {t, in, nu, nu * unit->size, op, unit, tmp};
    eval_into(&e, t->top, dst, 0);
}
