/* Flattening: turn a type's construction into its program (see datatype.h).
 *
 * build() works bottom-up over the description and simplifies as it goes:
 *  - n copies of a BLOCK placed back to back are one BLOCK;
 *  - n copies of VEC(c, s, X) placed c*s apart are VEC(n*c, s, X);
 *  - the members of a struct / indexed list become one entry list, with IDX
 *    children spliced in, adjacent blocks merged, and a list of equal blocks
 *    (or equal children) at a constant distance turned into a VEC;
 *  - a list of one entry is that entry.
 * Nodes live in an arena owned by the type and are never modified once
 * built, so they can be shared within the program. */
#include "core/datatype.h"
#include "core/dt_internal.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>

struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) char data[];
};

static void *arena_alloc(struct chunk **arena, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct chunk *c = *arena;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        c = ferry_xmalloc(sizeof *c + cap);
        c->used = 0;
        c->cap = cap;
        /* keep the partly used chunk first only if the new one is a one-off */
        if (*arena && n > 16384) {
            c->next = (*arena)->next;
            (*arena)->next = c;
        } else {
            c->next = *arena;
            *arena = c;
        }
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

void ferry_dt_free_prog(struct ferry_datatype *dt)
{
    struct chunk *c = dt->arena;
    while (c) {
        struct chunk *next = c->next;
        free(c);
        c = next;
    }
    dt->arena = NULL;
    dt->prog = NULL;
}

typedef struct ferry_dt_node node;

static node *node_new(struct chunk **a, int kind, size_t size, MPI_Aint disp)
{
    node *n = arena_alloc(a, sizeof *n);
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->size = size;
    n->disp = disp;
    return n;
}

static const node *with_disp(struct chunk **a, const node *c, MPI_Aint disp)
{
    if (c->disp == disp)
        return c;
    node *n = arena_alloc(a, sizeof *n);
    *n = *c;
    n->disp = disp;
    return n;
}

static const node *block(struct chunk **a, size_t len, MPI_Aint disp)
{
    return node_new(a, FERRY_DTN_BLOCK, len, disp);
}

/* n copies of c, copy i displaced by i * step. */
static const node *rep(struct chunk **a, size_t n, MPI_Aint step, const node *c)
{
    if (!c || n == 0)
        return NULL;
    if (n == 1)
        return c;
    if (c->kind == FERRY_DTN_BLOCK && (MPI_Aint)c->size == step)
        return block(a, n * c->size, c->disp);
    if (c->kind == FERRY_DTN_VEC && c->stride * (MPI_Aint)c->count == step) {
        node *v = node_new(a, FERRY_DTN_VEC, n * c->size, c->disp);
        v->count = n * c->count;
        v->stride = c->stride;
        v->child = c->child;
        return v;
    }
    node *v = node_new(a, FERRY_DTN_VEC, n * c->size, c->disp);
    v->count = n;
    v->stride = step;
    v->child = with_disp(a, c, 0);
    return v;
}

/* ---- entry lists (struct, indexed) ---------------------------------------- */

struct elist {
    struct ferry_dt_ent *e;
    size_t *len;    /* raw blocks: length (child == NULL) */
    size_t n, cap;
    size_t size;
};

static void elist_push(struct elist *l, MPI_Aint disp, const node *child, size_t len)
{
    if (!child && l->n > 0 && !l->e[l->n - 1].child && l->e[l->n - 1].disp + (MPI_Aint)l->len[l->n - 1] == disp) {
        l->len[l->n - 1] += len;   /* adjacent block: merge */
        l->size += len;
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->e = ferry_xrealloc(l->e, l->cap * sizeof *l->e);
        l->len = ferry_xrealloc(l->len, l->cap * sizeof *l->len);
    }
    l->e[l->n] = (struct ferry_dt_ent){disp, l->size, child};
    l->len[l->n] = child ? child->size : len;
    l->n++;
    l->size += child ? child->size : len;
}

/* Add node r placed at disp to the list. */
static void elist_add(struct chunk **a, struct elist *l, MPI_Aint disp, const node *r)
{
    if (!r)
        return;
    disp += r->disp;
    switch (r->kind) {
    case FERRY_DTN_BLOCK:
        elist_push(l, disp, NULL, r->size);
        break;
    case FERRY_DTN_IDX:
        for (size_t i = 0; i < r->n; i++)
            elist_push(l, disp + r->ent[i].disp, r->ent[i].child, r->ent[i + 1].start - r->ent[i].start);
        break;
    default:
        elist_push(l, disp, with_disp(a, r, 0), 0);
    }
}

static const node *elist_finish(struct chunk **a, struct elist *l)
{
    const node *r = NULL;
    if (l->n == 0)
        goto out;
    if (l->n == 1) {
        const node *c = l->e[0].child;
        r = c ? with_disp(a, c, c->disp + l->e[0].disp) : block(a, l->len[0], l->e[0].disp);
        goto out;
    }
    /* equal blocks / children at a constant distance: a vector */
    MPI_Aint step = l->e[1].disp - l->e[0].disp;
    size_t i;
    for (i = 1; i < l->n; i++)
        if (l->e[i].child != l->e[0].child || l->len[i] != l->len[0] || l->e[i].disp - l->e[i - 1].disp != step)
            break;
    if (i == l->n) {
        const node *c = l->e[0].child ? l->e[0].child : block(a, l->len[0], 0);
        r = rep(a, l->n, step, c);
        r = with_disp(a, r, r->disp + l->e[0].disp);
        goto out;
    }
    node *x = node_new(a, FERRY_DTN_IDX, l->size, 0);
    struct ferry_dt_ent *e = arena_alloc(a, (l->n + 1) * sizeof *e);
    memcpy(e, l->e, l->n * sizeof *e);
    e[l->n] = (struct ferry_dt_ent){0, l->size, NULL};
    x->n = l->n;
    x->ent = e;
    x->raw = 1;
    for (i = 0; i < l->n; i++)
        if (e[i].child)
            x->raw = 0;
    r = x;
out:
    free(l->e);
    free(l->len);
    return r;
}

/* ---- build ------------------------------------------------------------------ */

static const node *build(struct chunk **a, const struct ferry_datatype *t)
{
    if (t->size == 0)
        return NULL;
    switch (t->desc) {
    case FERRY_DTD_PREDEF: {
        struct elist l = {0};
        for (int i = 0; i < t->nruns; i++)
            elist_push(&l, t->runs[i].off, NULL, (size_t)t->runs[i].count * t->runs[i].size);
        return elist_finish(a, &l);
    }
    case FERRY_DTD_HVECTOR: {
        const node *c = build(a, t->child);
        return rep(a, (size_t)t->count, t->stride, rep(a, (size_t)t->blocklen, t->child->extent, c));
    }
    case FERRY_DTD_STRUCT: {
        struct elist l = {0};
        const struct ferry_datatype *prev = NULL;
        const node *c = NULL, *r = NULL;
        MPI_Count prev_bl = -1;
        MPI_Aint rdisp = 0;
        for (int i = 0; i < t->n; i++) {
            const struct ferry_datatype *ti = ferry_dt_block_type(t, i);
            if (t->blocklens[i] == 0 || ti->size == 0)
                continue;
            /* indexed types have one child: build it once, and each distinct
             * block of it once per run of equal block lengths */
            if (ti != prev) {
                c = build(a, ti);
                prev_bl = -1;
            }
            if (ti != prev || t->blocklens[i] != prev_bl) {
                r = rep(a, (size_t)t->blocklens[i], ti->extent, c);
                rdisp = r->disp;
                r = with_disp(a, r, 0);
            }
            prev = ti;
            prev_bl = t->blocklens[i];
            elist_add(a, &l, t->disps[i] + rdisp, r);
        }
        return elist_finish(a, &l);
    }
    default:   /* RESIZED, DUP: same layout as the child */
        return build(a, t->child);
    }
}

void ferry_dt_flatten(struct ferry_datatype *dt)
{
    if (dt->prog || dt->size == 0) {
        dt->one_block = 1;
        dt->contig = dt->size == 0;
        if (!dt->prog)
            return;
    } else {
        struct chunk *arena = NULL;
        dt->prog = build(&arena, dt);
        dt->arena = arena;
    }
    const node *r = dt->prog;
    dt->one_block = r->kind == FERRY_DTN_BLOCK;
    dt->contig_off = dt->one_block ? r->disp : 0;
    dt->contig = dt->one_block && (MPI_Aint)dt->size == dt->extent;
}
