/* Reduction operations (see op.h).
 *
 * One table, fns[op][ctype], holds the element-wise function of every
 * predefined op on every C type it is defined for; it is generated from a
 * few lists of C types (integers, reals, complex, booleans, value/index
 * pairs) and one expression per op. A second small table maps each
 * predefined datatype handle to its C type and its class (C integer,
 * Fortran integer, floating point, logical, complex, byte, pair), and the
 * classes say which ops the standard defines for them (MPI-3.1 5.9.2). */
#include "core/op.h"
#include "core/datatype.h"
#include "core/handle.h"
#include "core/util.h"
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*reduce_fn)(const void *in, void *inout, size_t n);

/* ---- C types reductions run on ------------------------------------------- */

#ifdef __SIZEOF_FLOAT128__
#define HAVE_F128 1
typedef __float128 f128;
typedef _Complex float __attribute__((mode(TC))) c128;   /* GCC's __complex128 */
#endif

/* value/index pairs: the layouts of MPI_FLOAT_INT ... MPI_2DOUBLE_PRECISION */
typedef struct { float v; int i; } p_f32i;
typedef struct { double v; int i; } p_f64i;
typedef struct { long v; int i; } p_i64i;
typedef struct { short v; int i; } p_i16i;
typedef struct { long double v; int i; } p_f80i;
typedef struct { int v; int i; } p_i32i;
typedef struct { float v; float i; } p_f32f;
typedef struct { double v; double i; } p_f64d;

/* Each list entry: X(op, name, C type, arithmetic type). Signed integers do
 * their arithmetic in an unsigned type so overflow wraps instead of being
 * undefined (types narrower than int in unsigned int, which is what they
 * would be promoted to). */
#define INTS(X, op)                                                                                     \
    X(op, i8, int8_t, unsigned) X(op, u8, uint8_t, unsigned) X(op, i16, int16_t, unsigned)            \
    X(op, u16, uint16_t, unsigned) X(op, i32, int32_t, uint32_t) X(op, u32, uint32_t, uint32_t)       \
    X(op, i64, int64_t, uint64_t) X(op, u64, uint64_t, uint64_t)
#ifdef HAVE_F128
#define REALS(X, op) X(op, f32, float, float) X(op, f64, double, double) X(op, f80, long double, long double) \
                     X(op, f128, f128, f128)
#define CPLXS(X, op) X(op, c32, float _Complex, float _Complex) X(op, c64, double _Complex, double _Complex) \
                     X(op, c80, long double _Complex, long double _Complex) X(op, c128, c128, c128)
#else
#define REALS(X, op) X(op, f32, float, float) X(op, f64, double, double) X(op, f80, long double, long double)
#define CPLXS(X, op) X(op, c32, float _Complex, float _Complex) X(op, c64, double _Complex, double _Complex) \
                     X(op, c80, long double _Complex, long double _Complex)
#endif
#define BOOLS(X, op) X(op, b8, _Bool, _Bool)
#define PAIRS(X, op)                                                                                    \
    X(op, f32i, p_f32i, p_f32i) X(op, f64i, p_f64i, p_f64i) X(op, i64i, p_i64i, p_i64i)                \
    X(op, i16i, p_i16i, p_i16i) X(op, f80i, p_f80i, p_f80i) X(op, i32i, p_i32i, p_i32i)                \
    X(op, f32f, p_f32f, p_f32f) X(op, f64d, p_f64d, p_f64d)

#define CT_ENUM(op, name, T, A) CT_##name,
enum ctype { CT_NONE, INTS(CT_ENUM, ) REALS(CT_ENUM, ) CPLXS(CT_ENUM, ) BOOLS(CT_ENUM, ) PAIRS(CT_ENUM, ) CT_COUNT };

/* ---- the element-wise expression of each op: x input, y inout ------------ */
#define BODY_max(T, A, x, y) ((x) > (y) ? (x) : (y))
#define BODY_min(T, A, x, y) ((x) < (y) ? (x) : (y))
#define BODY_sum(T, A, x, y) (T)((A)(x) + (A)(y))
#define BODY_prod(T, A, x, y) (T)((A)(x) * (A)(y))
#define BODY_land(T, A, x, y) (T)((x) && (y))
#define BODY_lor(T, A, x, y) (T)((x) || (y))
#define BODY_lxor(T, A, x, y) (T)(!(x) != !(y))
#define BODY_band(T, A, x, y) (T)((x) & (y))
#define BODY_bor(T, A, x, y) (T)((x) | (y))
#define BODY_bxor(T, A, x, y) (T)((x) ^ (y))
/* Buffers are only 8-byte aligned: the shared-memory collectives reduce
 * straight out of their post lines, whose payload starts 8 bytes into a
 * cache line. That suits every type aligned to 8 or less, but GCC loads and
 * stores __float128, long double and their complex forms (alignment 16) with
 * aligned SSE moves, which fault on an 8-byte boundary (MPI_REAL16 and
 * MPI_COMPLEX32 allreduces crashed). Those calls take an element-by-element
 * memcpy path, which compiles to unaligned moves; the check is a constant 0
 * for the other types, so their vectorized loops are untouched. */
#define MISALIGNED(T, a, b) (_Alignof(T) > 8 && (((uintptr_t)(a) | (uintptr_t)(b)) & (_Alignof(T) - 1)))
#define LOAD_MEMBER(T, s, m, p) memcpy(&(s).m, (p) + offsetof(T, m), sizeof(s).m)
/* MINLOC/MAXLOC: the extreme value; on a tie the smaller index. Members are
 * accessed one by one so the padding after the last pair is never touched. */
#define TAKE_minloc(x, y) ((x).v < (y).v || ((x).v == (y).v && (x).i < (y).i))
#define TAKE_maxloc(x, y) ((x).v > (y).v || ((x).v == (y).v && (x).i < (y).i))
#define DEFINE_LOC(op, name, T, A)                                                                      \
    static void op##_##name(const void *in, void *inout, size_t n)                                       \
    {                                                                                                    \
        if (MISALIGNED(T, in, inout)) {                                                                  \
            const char *xp = in;                                                                         \
            char *yp = inout;                                                                            \
            for (size_t i = 0; i < n; i++, xp += sizeof(T), yp += sizeof(T)) {                           \
                T x, y;                                                                                  \
                LOAD_MEMBER(T, x, v, xp), LOAD_MEMBER(T, x, i, xp);                                     \
                LOAD_MEMBER(T, y, v, yp), LOAD_MEMBER(T, y, i, yp);                                     \
                if (TAKE_##op(x, y)) {                                                                   \
                    memcpy(yp + offsetof(T, v), &x.v, sizeof x.v);                                       \
                    memcpy(yp + offsetof(T, i), &x.i, sizeof x.i);                                       \
                }                                                                                        \
            }                                                                                            \
            return;                                                                                      \
        }                                                                                                \
        const T *x = in;                                                                                 \
        T *y = inout;                                                                                    \
        for (size_t i = 0; i < n; i++)                                                                   \
            if (TAKE_##op(x[i], y[i])) {                                                                 \
                y[i].v = x[i].v;                                                                         \
                y[i].i = x[i].i;                                                                         \
            }                                                                                            \
    }

/* The element-wise loops are built for several instruction sets and the
 * best one the CPU has is chosen when the library loads (GCC's
 * target_clones, an ifunc): a distribution's baseline x86-64 allows only SSE2,
 * which summed 16 KiB of floats in 1.28 us where AVX-512 takes 0.24 (Open
 * MPI's op/avx component does the same). The sanitizer builds keep one plain
 * loop: an ifunc resolver runs while the loader relocates the library, before
 * a sanitizer runtime may be ready, and they check the same C source. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define SIMD_CLONES __attribute__((target_clones("default", "avx2", "arch=x86-64-v4")))
#else
#define SIMD_CLONES
#endif
#define DEFINE(op, name, T, A)                                                                          \
    SIMD_CLONES static void op##_##name(const void *in, void *inout, size_t n)                                       \
    {                                                                                                    \
        if (MISALIGNED(T, in, inout)) {                                                                  \
            const char *xp = in;                                                                         \
            char *yp = inout;                                                                            \
            for (size_t i = 0; i < n; i++, xp += sizeof(T), yp += sizeof(T)) {                           \
                T x, y;                                                                                  \
                memcpy(&x, xp, sizeof x);                                                                \
                memcpy(&y, yp, sizeof y);                                                                \
                y = BODY_##op(T, A, x, y);                                                               \
                memcpy(yp, &y, sizeof y);                                                                \
            }                                                                                            \
            return;                                                                                      \
        }                                                                                                \
        const T *__restrict x = in;                                                                      \
        T *__restrict y = inout;                                                                         \
        for (size_t i = 0; i < n; i++)                                                                   \
            y[i] = BODY_##op(T, A, x[i], y[i]);                                                          \
    }
/* The three-operand form d = x op y of the same loops, for reductions whose
 * result goes to a third buffer (one pass instead of a copy and a pass). The
 * caller has checked the buffers' alignment (see ferry_op_apply3). */
#define DEFINE3(op, name, T, A)                                                                         \
    SIMD_CLONES static void op##_##name##_3(const void *in, const void *in2, void *out, size_t n)       \
    {                                                                                                    \
        const T *__restrict x = in, *__restrict y = in2;                                                 \
        T *__restrict d = out;                                                                           \
        for (size_t i = 0; i < n; i++)                                                                   \
            d[i] = BODY_##op(T, A, x[i], y[i]);                                                          \
    }
#define ENTRY(op, name, T, A) [CT_##name] = op##_##name,
#define ENTRY3(op, name, T, A) [CT_##name] = op##_##name##_3,
#define ALIGN_ENTRY(op, name, T, A) [CT_##name] = _Alignof(T),

INTS(DEFINE, max) REALS(DEFINE, max)
INTS(DEFINE, min) REALS(DEFINE, min)
INTS(DEFINE, sum) REALS(DEFINE, sum) CPLXS(DEFINE, sum)
INTS(DEFINE, prod) REALS(DEFINE, prod) CPLXS(DEFINE, prod)
INTS(DEFINE, land) REALS(DEFINE, land) BOOLS(DEFINE, land)
INTS(DEFINE, lor) REALS(DEFINE, lor) BOOLS(DEFINE, lor)
INTS(DEFINE, lxor) REALS(DEFINE, lxor) BOOLS(DEFINE, lxor)
INTS(DEFINE, band)
INTS(DEFINE, bor)
INTS(DEFINE, bxor)
PAIRS(DEFINE_LOC, minloc)
PAIRS(DEFINE_LOC, maxloc)
INTS(DEFINE3, max) REALS(DEFINE3, max)
INTS(DEFINE3, min) REALS(DEFINE3, min)
INTS(DEFINE3, sum) REALS(DEFINE3, sum) CPLXS(DEFINE3, sum)
INTS(DEFINE3, prod) REALS(DEFINE3, prod) CPLXS(DEFINE3, prod)
INTS(DEFINE3, band)
INTS(DEFINE3, bor)
INTS(DEFINE3, bxor)

static const reduce_fn fns[FERRY_OP_KINDS][CT_COUNT] = {
    [FERRY_OP_MAX] = {INTS(ENTRY, max) REALS(ENTRY, max)},
    [FERRY_OP_MIN] = {INTS(ENTRY, min) REALS(ENTRY, min)},
    [FERRY_OP_SUM] = {INTS(ENTRY, sum) REALS(ENTRY, sum) CPLXS(ENTRY, sum)},
    [FERRY_OP_PROD] = {INTS(ENTRY, prod) REALS(ENTRY, prod) CPLXS(ENTRY, prod)},
    [FERRY_OP_LAND] = {INTS(ENTRY, land) REALS(ENTRY, land) BOOLS(ENTRY, land)},
    [FERRY_OP_LOR] = {INTS(ENTRY, lor) REALS(ENTRY, lor) BOOLS(ENTRY, lor)},
    [FERRY_OP_LXOR] = {INTS(ENTRY, lxor) REALS(ENTRY, lxor) BOOLS(ENTRY, lxor)},
    [FERRY_OP_BAND] = {INTS(ENTRY, band)},
    [FERRY_OP_BOR] = {INTS(ENTRY, bor)},
    [FERRY_OP_BXOR] = {INTS(ENTRY, bxor)},
    [FERRY_OP_MINLOC] = {PAIRS(ENTRY, minloc)},
    [FERRY_OP_MAXLOC] = {PAIRS(ENTRY, maxloc)},
};

/* Three-operand forms: the arithmetic and bitwise ops (the others reduce
 * small vectors of flags and pairs, where a copy first costs little). */
typedef void (*reduce3_fn)(const void *in, const void *in2, void *out, size_t n);
static const reduce3_fn fns3[FERRY_OP_KINDS][CT_COUNT] = {
    [FERRY_OP_MAX] = {INTS(ENTRY3, max) REALS(ENTRY3, max)},
    [FERRY_OP_MIN] = {INTS(ENTRY3, min) REALS(ENTRY3, min)},
    [FERRY_OP_SUM] = {INTS(ENTRY3, sum) REALS(ENTRY3, sum) CPLXS(ENTRY3, sum)},
    [FERRY_OP_PROD] = {INTS(ENTRY3, prod) REALS(ENTRY3, prod) CPLXS(ENTRY3, prod)},
    [FERRY_OP_BAND] = {INTS(ENTRY3, band)},
    [FERRY_OP_BOR] = {INTS(ENTRY3, bor)},
    [FERRY_OP_BXOR] = {INTS(ENTRY3, bxor)},
};
static const unsigned char ct_align[CT_COUNT] = {INTS(ALIGN_ENTRY, ) REALS(ALIGN_ENTRY, ) CPLXS(ALIGN_ENTRY, )};

/* ---- predefined datatypes: C type and class ------------------------------ */

enum dtclass { CL_NONE, CL_CINT, CL_FINT, CL_MULTI, CL_FLOAT, CL_LOGICAL, CL_COMPLEX, CL_BYTE, CL_PAIR };
#define OPBIT(k) (1u << FERRY_OP_##k)
#define ARITH (OPBIT(MAX) | OPBIT(MIN) | OPBIT(SUM) | OPBIT(PROD))
#define LOGIC (OPBIT(LAND) | OPBIT(LOR) | OPBIT(LXOR))
#define BITS (OPBIT(BAND) | OPBIT(BOR) | OPBIT(BXOR))
/* Which ops the standard defines for each class (MPI-3.1 5.9.2), plus the
 * logical ops on Fortran integers and floating point, which MPICH accepts
 * as an extension (its own test suite's coll/oplxor reduces MPI_FLOAT,
 * MPI_DOUBLE and MPI_LONG_DOUBLE with MPI_LXOR): a nonzero value is true,
 * the result is 1 or 0 in the type. */
static const unsigned class_ops[] = {
    [CL_NONE] = 0,
    [CL_CINT] = ARITH | LOGIC | BITS,
    [CL_FINT] = ARITH | LOGIC | BITS,
    /* MPI_AINT/OFFSET/COUNT: 5.9.2 lists arithmetic and bitwise ops; MPICH
     * also reduces them with the logical ones, and programs built against it
     * do (allowing more than the standard breaks no correct program) */
    [CL_MULTI] = ARITH | LOGIC | BITS,
    [CL_FLOAT] = ARITH | LOGIC,
    [CL_LOGICAL] = LOGIC,
    [CL_COMPLEX] = OPBIT(SUM) | OPBIT(PROD),
    [CL_BYTE] = BITS,
    [CL_PAIR] = OPBIT(MINLOC) | OPBIT(MAXLOC),
};

struct dtmap {
    MPI_Datatype h;
    unsigned char ct, cl;
};
#define CI(n) (CT_##n), CL_CINT
static const struct dtmap dtmap[] = {
    /* C integers; MPI_CHAR and MPI_CHARACTER are reducible as small integers, as in MPICH */
    {MPI_CHAR, CI(i8)}, {MPI_SIGNED_CHAR, CI(i8)}, {MPI_UNSIGNED_CHAR, CI(u8)}, {MPI_CHARACTER, CI(i8)},
    {MPI_SHORT, CI(i16)}, {MPI_UNSIGNED_SHORT, CI(u16)}, {MPI_INT, CI(i32)}, {MPI_UNSIGNED, CI(u32)},
    {MPI_LONG, CI(i64)}, {MPI_UNSIGNED_LONG, CI(u64)}, {MPI_LONG_LONG_INT, CI(i64)},
    {MPI_UNSIGNED_LONG_LONG, CI(u64)},
    {MPI_INT8_T, CI(i8)}, {MPI_INT16_T, CI(i16)}, {MPI_INT32_T, CI(i32)}, {MPI_INT64_T, CI(i64)},
    {MPI_UINT8_T, CI(u8)}, {MPI_UINT16_T, CI(u16)}, {MPI_UINT32_T, CI(u32)}, {MPI_UINT64_T, CI(u64)},
    /* Fortran integers; MPI's address/offset/count integers */
    {MPI_INTEGER, CT_i32, CL_FINT}, {MPI_INTEGER1, CT_i8, CL_FINT}, {MPI_INTEGER2, CT_i16, CL_FINT},
    {MPI_INTEGER4, CT_i32, CL_FINT}, {MPI_INTEGER8, CT_i64, CL_FINT},
    {MPI_AINT, CT_i64, CL_MULTI}, {MPI_OFFSET, CT_i64, CL_MULTI}, {MPI_COUNT, CT_i64, CL_MULTI},
    /* floating point */
    {MPI_FLOAT, CT_f32, CL_FLOAT}, {MPI_DOUBLE, CT_f64, CL_FLOAT}, {MPI_LONG_DOUBLE, CT_f80, CL_FLOAT},
    {MPI_REAL, CT_f32, CL_FLOAT}, {MPI_DOUBLE_PRECISION, CT_f64, CL_FLOAT}, {MPI_REAL4, CT_f32, CL_FLOAT},
    {MPI_REAL8, CT_f64, CL_FLOAT},
    /* logical: Fortran LOGICAL is a 4-byte integer, .TRUE. == 1 */
    {MPI_LOGICAL, CT_i32, CL_LOGICAL}, {MPI_C_BOOL, CT_b8, CL_LOGICAL}, {MPI_CXX_BOOL, CT_b8, CL_LOGICAL},
    /* complex */
    {MPI_C_FLOAT_COMPLEX, CT_c32, CL_COMPLEX}, {MPI_C_DOUBLE_COMPLEX, CT_c64, CL_COMPLEX},
    {MPI_C_LONG_DOUBLE_COMPLEX, CT_c80, CL_COMPLEX}, {MPI_CXX_FLOAT_COMPLEX, CT_c32, CL_COMPLEX},
    {MPI_CXX_DOUBLE_COMPLEX, CT_c64, CL_COMPLEX}, {MPI_CXX_LONG_DOUBLE_COMPLEX, CT_c80, CL_COMPLEX},
    {MPI_COMPLEX, CT_c32, CL_COMPLEX}, {MPI_DOUBLE_COMPLEX, CT_c64, CL_COMPLEX},
    {MPI_COMPLEX8, CT_c32, CL_COMPLEX}, {MPI_COMPLEX16, CT_c64, CL_COMPLEX},
#ifdef HAVE_F128
    /* gfortran's REAL*16 is IEEE quad precision, not x87 long double */
    {MPI_REAL16, CT_f128, CL_FLOAT}, {MPI_COMPLEX32, CT_c128, CL_COMPLEX},
#endif
    {MPI_BYTE, CT_u8, CL_BYTE},
    /* value/index pairs */
    {MPI_FLOAT_INT, CT_f32i, CL_PAIR}, {MPI_DOUBLE_INT, CT_f64i, CL_PAIR}, {MPI_LONG_INT, CT_i64i, CL_PAIR},
    {MPI_SHORT_INT, CT_i16i, CL_PAIR}, {MPI_LONG_DOUBLE_INT, CT_f80i, CL_PAIR}, {MPI_2INT, CT_i32i, CL_PAIR},
    {MPI_2INTEGER, CT_i32i, CL_PAIR}, {MPI_2REAL, CT_f32f, CL_PAIR}, {MPI_2DOUBLE_PRECISION, CT_f64d, CL_PAIR},
};
#undef CI

/* Builtin handles (0x4c00SSII) are indexed by II, the pair handles
 * (0x8c0000II) by 256 + II. */
#define MAP_SLOTS (256 + 16)
static struct dtmap by_slot[MAP_SLOTS];
static int map_ready;

static int slot_of(MPI_Datatype h)
{
    uint32_t u = (uint32_t)h;
    if ((u & 0xffff0000u) == ((uint32_t)MPI_INT & 0xffff0000u))
        return (int)(u & 0xff);
    if ((u & 0xfffffff0u) == (uint32_t)MPI_FLOAT_INT)
        return 256 + (int)(u & 0xf);
    return -1;
}

static const struct dtmap *map_get(MPI_Datatype h)
{
    if (FERRY_UNLIKELY(!map_ready)) {
        for (size_t i = 0; i < sizeof dtmap / sizeof dtmap[0]; i++)
            by_slot[slot_of(dtmap[i].h)] = dtmap[i];
        map_ready = 1;
    }
    int s = slot_of(h);
    return s >= 0 && by_slot[s].h == h ? &by_slot[s] : NULL;
}

/* ---- op objects ----------------------------------------------------------- */

static struct ferry_op predefined[FERRY_OP_USER];
static struct ferry_objtab ops;
static int ops_ready;

struct ferry_op *ferry_op_get(MPI_Op h)
{
    uint32_t u = (uint32_t)h;
    if ((u & 0xffffff00u) == 0x58000000u) {
        unsigned k = u & 0xff;
        if (k < FERRY_OP_MAX || k > FERRY_OP_NO_OP)
            return NULL;
        struct ferry_op *op = &predefined[k];
        if (!op->handle)
            *op = (struct ferry_op){.handle = h, .kind = (enum ferry_op_kind)k, .commute = 1, .refs = 1 << 30};
        return op;
    }
    return ops_ready ? ferry_objtab_get(&ops, h) : NULL;
}

struct ferry_op *ferry_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute)
{
    if (!ops_ready) {
        ferry_objtab_init(&ops, FERRY_OBJ_OP, 0);
        ops_ready = 1;
    }
    struct ferry_op *op = ferry_xcalloc(1, sizeof *op);
    op->kind = FERRY_OP_USER;
    op->commute = commute != 0;
    op->fn = fn;
    op->fn_c = fn_c;
    op->refs = 1;
    op->handle = ferry_objtab_add(&ops, op);
    return op;
}

void ferry_op_retain(struct ferry_op *op)
{
    op->refs++;
}

void ferry_op_release(struct ferry_op *op)
{
    if (op->kind == FERRY_OP_USER && --op->refs == 0)
        free(op);
}

void ferry_op_free_handle(struct ferry_op *op)
{
    if (op->kind != FERRY_OP_USER)
        return;
    ferry_objtab_remove(&ops, op->handle);
    op->handle = MPI_OP_NULL;
    ferry_op_release(op);
}

/* ---- applying ops --------------------------------------------------------- */

int ferry_op_unit(const struct ferry_op *op, const struct ferry_datatype *dt, int rma,
                  struct ferry_datatype **unit, size_t *per)
{
    if (op->kind == FERRY_OP_USER) {
        *unit = (struct ferry_datatype *)dt;
        *per = 1;
        return MPI_SUCCESS;
    }
    struct ferry_datatype *bt = ferry_dt_basic_type(dt);
    if (!bt)
        return MPI_ERR_OP;
    const struct dtmap *m = map_get(bt->handle);
    if (op->kind == FERRY_OP_REPLACE || op->kind == FERRY_OP_NO_OP) {
        if (!rma)
            return MPI_ERR_OP;
    } else if (!m || !(class_ops[m->cl] & (1u << op->kind)) || !fns[op->kind][m->ct]) {
        return MPI_ERR_OP;
    }
    *unit = bt;
    *per = bt->size ? dt->size / bt->size : 0;
    return MPI_SUCCESS;
}

void ferry_op_apply(const struct ferry_op *op, const void *in, void *inout, size_t n,
                    const struct ferry_datatype *unit)
{
    if (n == 0)
        return;
    switch (op->kind) {
    case FERRY_OP_USER: {
        MPI_Datatype h = unit->handle;
        if (op->fn_c) {   /* MPI_Op_create_c: the whole vector at once */
            MPI_Count len = (MPI_Count)n;
            op->fn_c((void *)in, inout, &len, &h);
            return;
        }
        /* the user function takes an int count: hand it at most INT_MAX units at a time */
        while (n > 0) {
            int len = n > (size_t)0x7fffffff ? 0x7fffffff : (int)n;
            op->fn((void *)in, inout, &len, &h);
            in = (const char *)in + (MPI_Aint)len * unit->extent;
            inout = (char *)inout + (MPI_Aint)len * unit->extent;
            n -= (size_t)len;
        }
        return;
    }
    case FERRY_OP_REPLACE:
        memmove(inout, in, (n - 1) * (size_t)unit->extent + (size_t)unit->true_extent);
        return;
    case FERRY_OP_NO_OP:
        return;
    default:
        fns[op->kind][map_get(unit->handle)->ct](in, inout, n);
    }
}

void ferry_op_apply3(const struct ferry_op *op, const void *in, const void *in2, void *out, size_t n,
                     const struct ferry_datatype *unit)
{
    if (n == 0)
        return;
    if (out == in2) {
        ferry_op_apply(op, in, out, n, unit);
        return;
    }
    if (op->kind < FERRY_OP_REPLACE) {
        unsigned ct = map_get(unit->handle)->ct;
        reduce3_fn f = fns3[op->kind][ct];
        /* the loops assume the C type's alignment (see MISALIGNED) */
        if (f && (ct_align[ct] <= 8 ||
                  !(((uintptr_t)in | (uintptr_t)in2 | (uintptr_t)out) & (uintptr_t)(ct_align[ct] - 1)))) {
            f(in, in2, out, n);
            return;
        }
    }
    /* the bytes the n units span (unit extents are positive here) */
    memcpy((char *)out + unit->true_lb, (const char *)in2 + unit->true_lb,
           (n - 1) * (size_t)unit->extent + (size_t)unit->true_extent);
    ferry_op_apply(op, in, out, n, unit);
}
