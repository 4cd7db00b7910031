/* Datatypes.
 *
 * Every message is moved as the "packed stream" of (buf, count, type): the
 * data bytes of each element in type-map order, elements one after the
 * other. Protocols pack and unpack any byte range of that stream
 * (ferry_dt_pack / ferry_dt_unpack), so a message can be cut into packets
 * at arbitrary points without a full-size temporary copy.
 *
 * A type is kept in two forms:
 *  - its construction ("description"): what it was built from, with
 *    references on the types it was built from. MPI_Type_get_contents,
 *    Get_elements and external32 walk this form (datatype.c, dt_ext32.c).
 *  - its flattened program (built by MPI_Type_commit, dt_flatten.c): a small
 *    tree of nodes, each BLOCK (n contiguous bytes), VEC (count copies of a
 *    child at a fixed stride) or IDX (a list of children or blocks at
 *    arbitrary displacements, with the packed offset where each starts).
 *    Adjacent blocks are merged, repetitions of contiguous data become one
 *    block, and regular index lists become vectors, so a 1M-element vector
 *    is one VEC node over one BLOCK. Seeking to a packed offset costs O(1)
 *    per VEC level and O(log n) per IDX level; data moves with memcpy (fixed
 *    size copies for small blocks), see dt_pack.c.
 *
 * Predefined handles are MPICH's; derived types get direct handles
 * 0x8c000000 | index with index >= 16 (0..4 are the pair types). */
#ifndef FERRY_DATATYPE_H
#define FERRY_DATATYPE_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the flattened program ------------------------------------------------ */

enum ferry_dt_node_kind { FERRY_DTN_BLOCK, FERRY_DTN_VEC, FERRY_DTN_IDX };

struct ferry_dt_ent;

/* One node of a program. An instance placed at address a occupies
 * a + disp + (its own layout); its packed form is `size` bytes. */
struct ferry_dt_node {
    int kind;                   /* enum ferry_dt_node_kind */
    size_t size;                /* packed bytes of one instance */
    MPI_Aint disp;
    /* VEC: instance i of child at disp + i * stride; size == count * child->size */
    size_t count;
    MPI_Aint stride;
    const struct ferry_dt_node *child;
    /* IDX: n entries; ent[n].start == size (sentinel) */
    size_t n;
    const struct ferry_dt_ent *ent;
    int raw;                    /* IDX: every entry is a block (no children) */
};

struct ferry_dt_ent {
    MPI_Aint disp;                      /* where the entry is placed (plus child->disp) */
    size_t start;                       /* packed offset of the entry within the IDX node */
    const struct ferry_dt_node *child;  /* NULL: a contiguous block of ent[i+1].start - start bytes */
};

/* ---- datatype objects ----------------------------------------------------- */

/* How a type was built (internal; the user-visible combiner is separate). */
enum ferry_dt_desc {
    FERRY_DTD_PREDEF,     /* predefined: runs of basic elements */
    FERRY_DTD_HVECTOR,    /* count blocks of blocklen children, block i at i * stride bytes */
    FERRY_DTD_STRUCT,     /* n blocks: blocklen[i] copies of types[i] (types NULL: child) at disp[i] */
    FERRY_DTD_RESIZED,    /* child with a new lb / extent */
    FERRY_DTD_DUP,        /* the child itself (dup, f90 types, subarray/darray wrappers) */
};

/* A predefined type is 1 or 2 runs of basic elements (2 for MPI_SHORT_INT ...). */
struct ferry_dt_run {
    uint16_t off;         /* byte offset in the type */
    uint16_t count;       /* basic elements in the run */
    uint8_t size;         /* bytes of one basic element (native) */
    uint8_t ext;          /* bytes of one basic element in external32 */
    uint8_t conv;         /* external32 conversion (dt_ext32.c) */
};

struct ferry_datatype {
    /* read by other layers */
    MPI_Datatype handle;
    const char *name;
    size_t size;               /* bytes of data per element */
    MPI_Aint lb, extent;       /* extent = ub - lb */
    MPI_Aint true_lb, true_extent;
    int contig;                /* count elements are one byte range at buf + contig_off, size == extent */
    int predefined;

    /* the engine */
    int committed;
    int one_block;             /* one element's data is one byte range at buf + contig_off */
    MPI_Aint contig_off;
    const struct ferry_dt_node *prog;   /* flattened program (NULL when size == 0) */
    void *arena;               /* memory of prog */

    /* properties derived at construction */
    MPI_Count nelem;           /* basic elements per element (Get_elements) */
    size_t ext32_size;         /* packed bytes per element in external32 */
    int align;                 /* alignment (struct padding) */
    int has_lb, has_ub;        /* sticky MPI_LB / MPI_UB markers (also set by resized) */
    int marker;                /* 1: MPI_LB, 2: MPI_UB (the marker types themselves) */
    int f90;                   /* a cached MPI_Type_create_f90_* type: never freed by the user */
    struct ferry_datatype *basic;   /* the one predefined type all data is made of, or NULL */

    /* description */
    int desc;                  /* enum ferry_dt_desc */
    MPI_Aint count, blocklen, stride;   /* HVECTOR; RESIZED: lb in stride, extent in count */
    MPI_Count *blocklens;      /* STRUCT: n entries */
    MPI_Aint *disps;
    struct ferry_datatype **types;      /* NULL: every block is of `child` (indexed family) */
    int n;
    struct ferry_datatype *child;       /* HVECTOR, RESIZED, DUP */
    struct ferry_dt_run runs[2];        /* PREDEF */
    int nruns;

    /* user-visible envelope (MPI_Type_get_envelope / get_contents and their
     * _c forms); nc > 0 only for types built by a large-count constructor */
    int combiner;
    int ni, na, nc, nd;
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    MPI_Datatype *dtypes;      /* the handles as given; their objects are referenced by the description */
    struct ferry_datatype **env_types;   /* references held for dtypes */

    /* lifetime: refs counts every holder (user handle references, types built
     * on this one, operations in flight); user_refs the user's handle references. */
    int refs, user_refs;
    int name_owned;
    struct ferry_datatype *next_zombie;
};

void ferry_datatype_init(void);
void ferry_datatype_finalize(void);
/* NULL when h is not a valid committed datatype (what communication accepts). */
struct ferry_datatype *ferry_datatype_get(MPI_Datatype h);

/* The predefined types, by the low byte of their handle (MPICH's builtin
 * handles carry the type's size in bits 8-15 and an index in bits 0-7). */
#define FERRY_DT_BUILTIN_SLOTS 256
extern struct ferry_datatype ferry_dt_builtins[FERRY_DT_BUILTIN_SLOTS];

/* The predefined type (or marker) of builtin handle h; NULL if h is none. */
static inline struct ferry_datatype *ferry_dt_builtin(MPI_Datatype h)
{
    uint32_t u = (uint32_t)h;
    if ((u & 0xffff0000u) != ((uint32_t)MPI_INT & 0xffff0000u))   /* builtin datatype kind+type */
        return NULL;
    struct ferry_datatype *dt = &ferry_dt_builtins[u & 0xff];
    return dt->handle == h ? dt : NULL;
}

/* ferry_datatype_get without a call for a predefined type, the usual one on
 * the message path (the MPI_LB / MPI_UB markers are builtin handles too, and
 * never committed). */
static inline struct ferry_datatype *ferry_datatype_lookup(MPI_Datatype h)
{
    struct ferry_datatype *dt = ferry_dt_builtin(h);
    return dt && dt->committed && !dt->marker ? dt : ferry_datatype_get(h);
}
/* Also uncommitted derived types and the MPI_LB / MPI_UB markers (for
 * constructors and queries). */
struct ferry_datatype *ferry_datatype_get_any(MPI_Datatype h);

/* References for operations in flight: keep a type alive after
 * MPI_Type_free. No-ops for predefined types. Requests take one in
 * ferry_request_setup and drop it in ferry_request_free; as a safety net, a
 * type whose last reference goes while any operation is in flight
 * (ferry_requests_active) is only destroyed once none is. */
void ferry_dt_retain(struct ferry_datatype *dt);
void ferry_dt_release(struct ferry_datatype *dt);

/* Packed-stream byte count of count elements; caller checks for overflow. */
static inline size_t ferry_dt_bytes(const struct ferry_datatype *dt, size_t count)
{
    return dt->size * count;
}
/* True when (buf, count, dt) occupies one contiguous byte range. */
static inline int ferry_dt_is_contig(const struct ferry_datatype *dt, size_t count)
{
    return dt->contig || (count <= 1 && dt->one_block);
}
/* Start of the contiguous byte range (valid only if ferry_dt_is_contig). */
static inline const char *ferry_dt_contig_ptr(const struct ferry_datatype *dt, const void *buf)
{
    return (const char *)((uintptr_t)buf + (uintptr_t)dt->contig_off);
}

/* Copy bytes [off, off+len) of the packed stream of (buf, count, dt) to out. */
void ferry_dt_pack(const struct ferry_datatype *dt, const void *buf, size_t off, void *out, size_t len);
/* Copy len bytes from in to bytes [off, off+len) of the packed stream of (buf, count, dt). */
void ferry_dt_unpack(const struct ferry_datatype *dt, void *buf, size_t off, const void *in, size_t len);
/* Copy (src, sn, st) to (dst, dn, dt), as many bytes as the smaller holds:
 * straight when one side is contiguous, else staged in 64 KiB pieces. */
void ferry_dt_copy(const void *src, size_t sn, struct ferry_datatype *st, void *dst, size_t dn,
                   struct ferry_datatype *dt);
/* The byte ranges holding bytes [off, off+len) of the packed stream of an
 * unbounded sequence of dt elements placed at address 0 (element i at
 * i * extent): fn(ctx, disp, n) for each, in stream order, touching ranges
 * merged. fn returns nonzero to stop the walk; that value is returned (else 0). */
typedef int ferry_dt_seg_fn(void *ctx, MPI_Aint disp, size_t n);
int ferry_dt_segments(const struct ferry_datatype *dt, size_t off, size_t len, ferry_dt_seg_fn *fn, void *ctx);
/* Number of basic elements in the first `bytes` bytes of a packed stream;
 * MPI_UNDEFINED if bytes ends inside a basic element. */
MPI_Count ferry_dt_elements(const struct ferry_datatype *dt, size_t bytes);
/* Bytes of the packed stream holding the first n basic elements (Status_set_elements). */
size_t ferry_dt_element_bytes(const struct ferry_datatype *dt, MPI_Count n);
/* The single predefined type a type is made of (unit of reductions), or NULL. */
struct ferry_datatype *ferry_dt_basic_type(const struct ferry_datatype *dt);

/* STRUCT: the type of block i. */
static inline struct ferry_datatype *ferry_dt_block_type(const struct ferry_datatype *dt, int i)
{
    return dt->types ? dt->types[i] : dt->child;
}

/* ---- construction (datatype.c); all return a new type with one user
 * reference, or NULL when an internal size overflows ------------------------ */
struct ferry_datatype *ferry_dt_hvector(MPI_Aint count, MPI_Aint blocklen, MPI_Aint stride,
                                        struct ferry_datatype *old);
/* n blocks; types NULL: all blocks of `one`. */
struct ferry_datatype *ferry_dt_struct(int n, const MPI_Count *blocklens, const MPI_Aint *disps,
                                       struct ferry_datatype *const *types, struct ferry_datatype *one);
struct ferry_datatype *ferry_dt_resized(struct ferry_datatype *old, MPI_Aint lb, MPI_Aint extent);
struct ferry_datatype *ferry_dt_dup(struct ferry_datatype *old);
/* Record the user-visible envelope: integers, addresses, large counts (the
 * MPI-4 _c constructors) and datatypes; arrays are copied, types retained. */
void ferry_dt_set_envelope(struct ferry_datatype *dt, int combiner, int ni, const int *ints, int na,
                           const MPI_Aint *aints, int nc, const MPI_Count *counts, int nd,
                           const MPI_Datatype *types);
/* The cached type MPI_Type_create_f90_* returns for (combiner, p, r): a
 * committed duplicate of base with that envelope. */
struct ferry_datatype *ferry_dt_f90(int combiner, int p, int r, struct ferry_datatype *base);
/* Build the flattened program (dt_flatten.c) and mark committed. */
void ferry_dt_commit(struct ferry_datatype *dt);
void ferry_dt_flatten(struct ferry_datatype *dt);
void ferry_dt_free_prog(struct ferry_datatype *dt);
/* Drop one user handle reference (MPI_Type_free). */
void ferry_dt_user_free(struct ferry_datatype *dt);
/* Add one user handle reference (get_contents hands out handles). */
void ferry_dt_user_retain(struct ferry_datatype *dt);
/* Set the name (copied). */
void ferry_dt_set_name(struct ferry_datatype *dt, const char *name);

/* ---- external32 (dt_ext32.c) ---------------------------------------------- */
/* Convert count elements of dt at buf to/from external32 at ext (ext32_size * count bytes). */
void ferry_dt_ext32_pack(const struct ferry_datatype *dt, const void *buf, size_t count, void *ext);
void ferry_dt_ext32_unpack(const struct ferry_datatype *dt, void *buf, size_t count, const void *ext);

#endif
