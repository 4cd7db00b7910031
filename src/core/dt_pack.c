/* The copy engine: move any byte range of a packed stream between the user's
 * buffer and a contiguous one by walking the flattened program (datatype.h).
 *
 * Seeking to offset `off` divides at each VEC level (O(1)) and bisects the
 * start offsets at each IDX level (O(log n)), so a protocol cutting a message
 * into packets pays no more per packet than the bytes it moves. Blocks of a
 * vector of blocks are moved by loops specialised for the common small sizes
 * (memcpy with a constant size becomes a load and a store). */
#include "core/datatype.h"
#include "core/dt_internal.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>

typedef struct ferry_dt_node node;

/* n blocks of blen bytes, block i at p + i * stride, packed back to back at s. */
#define STRIDED_LOOP(BL)                                                \
    do {                                                                \
        if (unpack)                                                     \
            for (size_t i = 0; i < n; i++, p = FERRY_DT_ADDR(p, stride), s += (BL)) \
                memcpy(p, s, (BL));                                     \
        else                                                            \
            for (size_t i = 0; i < n; i++, p = FERRY_DT_ADDR(p, stride), s += (BL)) \
                memcpy(s, p, (BL));                                     \
    } while (0)

static void strided(char *p, MPI_Aint stride, size_t blen, size_t n, char *s, int unpack)
{
    switch (blen) {
    case 1: STRIDED_LOOP(1); break;
    case 2: STRIDED_LOOP(2); break;
    case 4: STRIDED_LOOP(4); break;
    case 8: STRIDED_LOOP(8); break;
    case 12: STRIDED_LOOP(12); break;
    case 16: STRIDED_LOOP(16); break;
    case 24: STRIDED_LOOP(24); break;
    case 32: STRIDED_LOOP(32); break;
    case 64: STRIDED_LOOP(64); break;
    default: STRIDED_LOOP(blen); break;
    }
}

static inline void move(char *p, char *s, size_t n, int unpack)
{
    if (unpack)
        memcpy(p, s, n);
    else
        memcpy(s, p, n);
}

/* A small block whose size varies from call to call (struct members). */
#define SMALL(N)                        \
    case N:                             \
        if (unpack)                     \
            memcpy(p, s, N);            \
        else                            \
            memcpy(s, p, N);            \
        return
static inline void move_small(char *p, char *s, size_t n, int unpack)
{
    switch (n) {
        SMALL(1); SMALL(2); SMALL(4); SMALL(8); SMALL(12); SMALL(16); SMALL(24); SMALL(32);
    default:
        move(p, s, n, unpack);
    }
}

/* n whole instances of an IDX node of blocks only, instance i at p + i * stride. */
static char *raw_instances(const node *c, char *p, MPI_Aint stride, size_t n, char *s, int unpack)
{
    const struct ferry_dt_ent *e = c->ent;
    p = FERRY_DT_ADDR(p, c->disp);
    for (size_t w = 0; w < n; w++, p = FERRY_DT_ADDR(p, stride))
        for (size_t i = 0; i < c->n; i++) {
            size_t len = e[i + 1].start - e[i].start;
            move_small(FERRY_DT_ADDR(p, e[i].disp), s, len, unpack);
            s += len;
        }
    return s;
}

/* The last of an index node's n entries whose packed start is <= skip
 * (entry 0 starts at 0). */
static size_t idx_find(const struct ferry_dt_ent *e, size_t n, size_t skip)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (e[mid].start <= skip)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Move bytes [skip, skip+len) of the packed form of the instance of nd
 * placed at base; s is the contiguous side. Returns s advanced by len. */
static char *walk(const node *nd, char *base, size_t skip, char *s, size_t len, int unpack)
{
    char *p = FERRY_DT_ADDR(base, nd->disp);
    switch (nd->kind) {
    case FERRY_DTN_BLOCK:
        move(p + skip, s, len, unpack);
        return s + len;
    case FERRY_DTN_VEC: {
        const node *c = nd->child;
        size_t cs = c->size;
        size_t i = skip / cs, part = skip % cs;
        p = FERRY_DT_ADDR(p, (MPI_Aint)i * nd->stride);
        if (part) {
            size_t k = FERRY_MIN(len, cs - part);
            s = walk(c, p, part, s, k, unpack);
            len -= k;
            p = FERRY_DT_ADDR(p, nd->stride);
        }
        size_t whole = len / cs;
        if (whole) {
            if (c->kind == FERRY_DTN_BLOCK) {
                strided(FERRY_DT_ADDR(p, c->disp), nd->stride, cs, whole, s, unpack);
                s += whole * cs;
                p = FERRY_DT_ADDR(p, (MPI_Aint)whole * nd->stride);
            } else if (c->kind == FERRY_DTN_IDX && c->raw && c->n <= 16) {
                s = raw_instances(c, p, nd->stride, whole, s, unpack);
                p = FERRY_DT_ADDR(p, (MPI_Aint)whole * nd->stride);
            } else {
                for (size_t w = 0; w < whole; w++, p = FERRY_DT_ADDR(p, nd->stride))
                    s = walk(c, p, 0, s, cs, unpack);
            }
            len -= whole * cs;
        }
        if (len)
            s = walk(c, p, 0, s, len, unpack);
        return s;
    }
    default: {   /* IDX */
        const struct ferry_dt_ent *e = nd->ent;
        size_t lo = idx_find(e, nd->n, skip);
        size_t part = skip - e[lo].start;
        for (size_t i = lo; len > 0; i++) {
            size_t k = FERRY_MIN(len, e[i + 1].start - e[i].start - part);
            if (e[i].child)
                s = walk(e[i].child, FERRY_DT_ADDR(p, e[i].disp), part, s, k, unpack);
            else {
                move(FERRY_DT_ADDR(p, e[i].disp) + part, s, k, unpack);
                s += k;
            }
            len -= k;
            part = 0;
        }
        return s;
    }
    }
}

static void stream_copy(const struct ferry_datatype *dt, char *user, size_t off, char *stream, size_t len, int unpack)
{
    if (dt->contig) {
        move((char *)ferry_dt_contig_ptr(dt, user) + off, stream, len, unpack);
        return;
    }
    /* the elements are the instances of a vector with the type's extent as stride */
    node top = {.kind = FERRY_DTN_VEC, .disp = 0, .stride = dt->extent, .child = dt->prog};
    walk(&top, user, off, stream, len, unpack);
}

void ferry_dt_pack(const struct ferry_datatype *dt, const void *buf, size_t off, void *out, size_t len)
{
    if (len)
        stream_copy(dt, (char *)buf, off, out, len, 0);
}

void ferry_dt_unpack(const struct ferry_datatype *dt, void *buf, size_t off, const void *in, size_t len)
{
    if (len)
        stream_copy(dt, buf, off, (char *)in, len, 1);
}

/* ---- segments: where the packed bytes lie, without moving them ------------
 * MPI-IO maps a range of a view's packed stream to file extents by walking
 * the filetype the way walk() does, but handing out (displacement, length)
 * pairs instead of copying. Pieces that touch are merged before they are
 * handed out, so a contiguous filetype gives one segment however it was
 * built. */

struct seg_state {
    ferry_dt_seg_fn *fn;
    void *ctx;
    MPI_Aint disp;      /* the piece being merged */
    size_t len;
    int stop;
};

static void seg_add(struct seg_state *st, MPI_Aint disp, size_t len)
{
    if (st->stop || len == 0)
        return;
    if (st->len && st->disp + (MPI_Aint)st->len == disp) {
        st->len += len;
        return;
    }
    if (st->len)
        st->stop = st->fn(st->ctx, st->disp, st->len);
    st->disp = disp;
    st->len = len;
}

static void seg_walk(struct seg_state *st, const node *nd, MPI_Aint base, size_t skip, size_t len)
{
    MPI_Aint p = base + nd->disp;
    if (st->stop)
        return;
    switch (nd->kind) {
    case FERRY_DTN_BLOCK:
        seg_add(st, p + (MPI_Aint)skip, len);
        return;
    case FERRY_DTN_VEC: {
        const node *c = nd->child;
        size_t cs = c->size;
        size_t i = skip / cs, part = skip % cs;
        p += (MPI_Aint)i * nd->stride;
        while (len > 0 && !st->stop) {
            size_t k = FERRY_MIN(len, cs - part);
            seg_walk(st, c, p, part, k);
            len -= k;
            part = 0;
            p += nd->stride;
        }
        return;
    }
    default: {   /* IDX */
        const struct ferry_dt_ent *e = nd->ent;
        size_t lo = idx_find(e, nd->n, skip);
        size_t part = skip - e[lo].start;
        for (size_t i = lo; len > 0 && !st->stop; i++) {
            size_t k = FERRY_MIN(len, e[i + 1].start - e[i].start - part);
            if (e[i].child)
                seg_walk(st, e[i].child, p + e[i].disp, part, k);
            else
                seg_add(st, p + e[i].disp + (MPI_Aint)part, k);
            len -= k;
            part = 0;
        }
        return;
    }
    }
}

int ferry_dt_segments(const struct ferry_datatype *dt, size_t off, size_t len, ferry_dt_seg_fn *fn, void *ctx)
{
    struct seg_state st = {.fn = fn, .ctx = ctx};
    if (len == 0 || dt->size == 0)
        return 0;
    if (dt->contig) {
        seg_add(&st, dt->contig_off + (MPI_Aint)off, len);
    } else {
        node top = {.kind = FERRY_DTN_VEC, .disp = 0, .stride = dt->extent, .child = dt->prog};
        seg_walk(&st, &top, 0, off, len);
    }
    if (st.len && !st.stop)
        st.stop = fn(ctx, st.disp, st.len);
    return st.stop;
}

void ferry_dt_copy(const void *src, size_t sn, struct ferry_datatype *st, void *dst, size_t dn,
                   struct ferry_datatype *dt)
{
    size_t bytes = FERRY_MIN(ferry_dt_bytes(st, sn), ferry_dt_bytes(dt, dn));
    if (!bytes)
        return;
    int sc = ferry_dt_is_contig(st, sn), dc = ferry_dt_is_contig(dt, dn);
    if (sc && dc) {
        memmove((char *)ferry_dt_contig_ptr(dt, dst), ferry_dt_contig_ptr(st, src), bytes);
    } else if (sc) {
        ferry_dt_unpack(dt, dst, 0, ferry_dt_contig_ptr(st, src), bytes);
    } else if (dc) {
        ferry_dt_pack(st, src, 0, (char *)ferry_dt_contig_ptr(dt, dst), bytes);
    } else {
        enum { CHUNK = 64 * 1024 };
        char *stage = ferry_xmalloc(FERRY_MIN(bytes, (size_t)CHUNK));
        for (size_t off = 0; off < bytes; off += CHUNK) {
            size_t len = FERRY_MIN((size_t)CHUNK, bytes - off);
            ferry_dt_pack(st, src, off, stage, len);
            ferry_dt_unpack(dt, dst, off, stage, len);
        }
        free(stage);
    }
}
