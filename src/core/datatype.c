/* Datatype objects: the predefined types, the handle table of derived types,
 * their lifetime, and construction (sizes, bounds, sticky markers, the
 * envelope). See datatype.h; the flattened program is dt_flatten.c, the
 * copy engine dt_pack.c, external32 dt_ext32.c. */
#include "core/datatype.h"
#include "core/dt_internal.h"
#include "core/handle.h"
#include "core/request.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Predefined datatype handles are MPICH's: builtin ones carry their size in
 * bits 8-15 and a unique index in bits 0-7; the five pair types with padding
 * (MPI_FLOAT_INT ...) are "direct" handles 0x8c000000..4. */
#define PAIR_SLOTS 8
#define FIRST_DERIVED 16
struct ferry_datatype ferry_dt_builtins[FERRY_DT_BUILTIN_SLOTS];   /* datatype.h: ferry_datatype_lookup */
static struct ferry_datatype pairs[PAIR_SLOTS];
static struct ferry_objtab types_tab;
static struct ferry_datatype *zombies;   /* dead, waiting for operations in flight to end */

struct predefined {
    MPI_Datatype h;
    const char *name;
    uint8_t size;     /* one basic element */
    uint8_t count;    /* basic elements per type (2 for MPI_2INT ...) */
    uint8_t ext;      /* external32 bytes of one basic element */
    uint8_t conv;
    uint8_t align;
};

#define T(h, ctype, n, ext, conv) {h, #h, sizeof(ctype), n, ext, conv, _Alignof(ctype)}
static const struct predefined table[] = {
    T(MPI_CHAR, char, 1, 1, FERRY_X_RAW), T(MPI_SIGNED_CHAR, signed char, 1, 1, FERRY_X_RAW),
    T(MPI_UNSIGNED_CHAR, unsigned char, 1, 1, FERRY_X_RAW), T(MPI_BYTE, char, 1, 1, FERRY_X_RAW),
    T(MPI_WCHAR, wchar_t, 1, 2, FERRY_X_UINT), T(MPI_SHORT, short, 1, 2, FERRY_X_SINT),
    T(MPI_UNSIGNED_SHORT, unsigned short, 1, 2, FERRY_X_UINT), T(MPI_INT, int, 1, 4, FERRY_X_SINT),
    T(MPI_UNSIGNED, unsigned, 1, 4, FERRY_X_UINT), T(MPI_LONG, long, 1, 4, FERRY_X_SINT),
    T(MPI_UNSIGNED_LONG, unsigned long, 1, 4, FERRY_X_UINT), T(MPI_FLOAT, float, 1, 4, FERRY_X_FLT),
    T(MPI_DOUBLE, double, 1, 8, FERRY_X_FLT), T(MPI_LONG_DOUBLE, long double, 1, 16, FERRY_X_LDBL),
    T(MPI_LONG_LONG_INT, long long, 1, 8, FERRY_X_SINT),
    T(MPI_UNSIGNED_LONG_LONG, unsigned long long, 1, 8, FERRY_X_UINT), T(MPI_PACKED, char, 1, 1, FERRY_X_RAW),
    T(MPI_2INT, int, 2, 4, FERRY_X_SINT),
    T(MPI_INT8_T, int8_t, 1, 1, FERRY_X_SINT), T(MPI_INT16_T, int16_t, 1, 2, FERRY_X_SINT),
    T(MPI_INT32_T, int32_t, 1, 4, FERRY_X_SINT), T(MPI_INT64_T, int64_t, 1, 8, FERRY_X_SINT),
    T(MPI_UINT8_T, uint8_t, 1, 1, FERRY_X_UINT), T(MPI_UINT16_T, uint16_t, 1, 2, FERRY_X_UINT),
    T(MPI_UINT32_T, uint32_t, 1, 4, FERRY_X_UINT), T(MPI_UINT64_T, uint64_t, 1, 8, FERRY_X_UINT),
    T(MPI_C_BOOL, _Bool, 1, 1, FERRY_X_UINT),
    /* one handle with two names: reported as MPI_C_COMPLEX, the name MPI-3.1
     * lists first and MPICH reports */
    {MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", sizeof(float _Complex), 1, 8, FERRY_X_CFLT, _Alignof(float _Complex)},
    T(MPI_C_DOUBLE_COMPLEX, double _Complex, 1, 16, FERRY_X_CFLT),
    T(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, 1, 32, FERRY_X_CLDBL),
    T(MPI_AINT, MPI_Aint, 1, 8, FERRY_X_SINT), T(MPI_OFFSET, MPI_Offset, 1, 8, FERRY_X_SINT),
    T(MPI_COUNT, MPI_Count, 1, 8, FERRY_X_SINT),
    /* Fortran types, by the C type of the same size and alignment */
    T(MPI_CHARACTER, char, 1, 1, FERRY_X_RAW), T(MPI_INTEGER, int32_t, 1, 4, FERRY_X_SINT),
    T(MPI_REAL, float, 1, 4, FERRY_X_FLT), T(MPI_LOGICAL, int32_t, 1, 4, FERRY_X_SINT),
    T(MPI_DOUBLE_PRECISION, double, 1, 8, FERRY_X_FLT), T(MPI_COMPLEX, float _Complex, 1, 8, FERRY_X_CFLT),
    T(MPI_DOUBLE_COMPLEX, double _Complex, 1, 16, FERRY_X_CFLT),
    T(MPI_2INTEGER, int32_t, 2, 4, FERRY_X_SINT), T(MPI_2REAL, float, 2, 4, FERRY_X_FLT),
    T(MPI_2DOUBLE_PRECISION, double, 2, 8, FERRY_X_FLT),
    T(MPI_INTEGER1, int8_t, 1, 1, FERRY_X_SINT), T(MPI_INTEGER2, int16_t, 1, 2, FERRY_X_SINT),
    T(MPI_INTEGER4, int32_t, 1, 4, FERRY_X_SINT), T(MPI_INTEGER8, int64_t, 1, 8, FERRY_X_SINT),
    T(MPI_REAL4, float, 1, 4, FERRY_X_FLT), T(MPI_REAL8, double, 1, 8, FERRY_X_FLT),
    /* REAL*16 is IEEE quad (gfortran): already external32's format */
    T(MPI_REAL16, long double, 1, 16, FERRY_X_FLT),
    T(MPI_COMPLEX8, float _Complex, 1, 8, FERRY_X_CFLT), T(MPI_COMPLEX16, double _Complex, 1, 16, FERRY_X_CFLT),
    T(MPI_COMPLEX32, long double _Complex, 1, 32, FERRY_X_CFLT),
    T(MPI_CXX_BOOL, _Bool, 1, 1, FERRY_X_UINT), T(MPI_CXX_FLOAT_COMPLEX, float _Complex, 1, 8, FERRY_X_CFLT),
    T(MPI_CXX_DOUBLE_COMPLEX, double _Complex, 1, 16, FERRY_X_CFLT),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex, 1, 32, FERRY_X_CLDBL),
    /* MPICH's IEEE half-precision type (data only: no reduction defines it) */
    T(MPIX_C_FLOAT16, uint16_t, 1, 2, FERRY_X_FLT),
};
#undef T

struct pair_def {
    MPI_Datatype h;
    const char *name;
    size_t first, second_off, extent, align;
    uint8_t ext, conv;
};
/* struct { T a; int b; } laid out by this compiler. */
#define P(h, T, ext, conv)                                                                                    \
    {h, #h, sizeof(T), offsetof(struct { T a; int b; }, b), sizeof(struct { T a; int b; }),                 \
     _Alignof(struct { T a; int b; }), ext, conv}
static const struct pair_def pair_table[] = {
    P(MPI_FLOAT_INT, float, 4, FERRY_X_FLT), P(MPI_DOUBLE_INT, double, 8, FERRY_X_FLT),
    P(MPI_LONG_INT, long, 4, FERRY_X_SINT), P(MPI_SHORT_INT, short, 2, FERRY_X_SINT),
    P(MPI_LONG_DOUBLE_INT, long double, 16, FERRY_X_LDBL),
};
#undef P

static void predefined_finish(struct ferry_datatype *dt)
{
    dt->predefined = 1;
    dt->committed = 1;
    dt->desc = FERRY_DTD_PREDEF;
    dt->combiner = MPI_COMBINER_NAMED;
    dt->basic = dt;
    dt->refs = dt->user_refs = 1;
    dt->nelem = 0;
    dt->ext32_size = 0;
    for (int i = 0; i < dt->nruns; i++) {
        dt->nelem += dt->runs[i].count;
        dt->ext32_size += (size_t)dt->runs[i].count * dt->runs[i].ext;
    }
    ferry_dt_flatten(dt);
}

void ferry_datatype_init(void)
{
    ferry_objtab_init(&types_tab, FERRY_OBJ_DATATYPE, FIRST_DERIVED);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct predefined *p = &table[i];
        unsigned slot = (unsigned)p->h & 0xff;
        struct ferry_datatype *dt = &ferry_dt_builtins[slot];
        if (dt->handle)
            ferry_fatal("internal: predefined datatype slot clash %s/%s", dt->name, p->name);
        size_t size = (size_t)p->size * p->count;
        *dt = (struct ferry_datatype){
            .handle = p->h, .name = p->name, .size = size, .lb = 0, .extent = (MPI_Aint)size,
            .true_lb = 0, .true_extent = (MPI_Aint)size, .align = p->align, .nruns = 1,
        };
        dt->runs[0] = (struct ferry_dt_run){0, p->count, p->size, p->ext, p->conv};
        predefined_finish(dt);
    }
    for (size_t i = 0; i < sizeof pair_table / sizeof pair_table[0]; i++) {
        const struct pair_def *p = &pair_table[i];
        unsigned slot = (unsigned)p->h & 0xff;
        struct ferry_datatype *dt = &pairs[slot];
        *dt = (struct ferry_datatype){
            .handle = p->h, .name = p->name, .size = p->first + sizeof(int), .lb = 0,
            .extent = (MPI_Aint)p->extent, .true_lb = 0, .true_extent = (MPI_Aint)(p->second_off + sizeof(int)),
            .align = (int)p->align, .nruns = 2,
        };
        dt->runs[0] = (struct ferry_dt_run){0, 1, (uint8_t)p->first, p->ext, p->conv};
        dt->runs[1] = (struct ferry_dt_run){(uint16_t)p->second_off, 1, sizeof(int), 4, FERRY_X_SINT};
        predefined_finish(dt);
    }
    /* The MPI-1 bound markers: only MPI_Type_struct takes them. */
    static const struct {
        MPI_Datatype h;
        const char *name;
    } markers[2] = {{MPI_LB, "MPI_LB"}, {MPI_UB, "MPI_UB"}};
    for (int m = 0; m < 2; m++) {
        struct ferry_datatype *dt = &ferry_dt_builtins[(unsigned)markers[m].h & 0xff];
        *dt = (struct ferry_datatype){.handle = markers[m].h, .name = markers[m].name, .marker = m + 1,
                                      .has_lb = m == 0, .has_ub = m == 1, .align = 1};
        predefined_finish(dt);
        dt->basic = NULL;
    }
}

static void dt_destroy(struct ferry_datatype *dt, int release_children);

/* MPI_Type_create_f90_*: one type per distinct (combiner, p, r), kept to the end. */
#define F90_MAX 64
static struct {
    int combiner, p, r;
    struct ferry_datatype *dt;
} f90_cache[F90_MAX];
static int nf90;

void ferry_datatype_finalize(void)
{
    /* Types the application did not free: drop them all, without caring for
     * references between them. */
    for (int i = types_tab.first_index; i < types_tab.top; i++)
        if (types_tab.slot && types_tab.slot[i])
            dt_destroy(types_tab.slot[i], 0);
    zombies = NULL;
    ferry_objtab_destroy(&types_tab);
    for (int i = 0; i < FERRY_DT_BUILTIN_SLOTS; i++) {
        ferry_dt_free_prog(&ferry_dt_builtins[i]);
        if (ferry_dt_builtins[i].name_owned)
            free((char *)ferry_dt_builtins[i].name);
        memset(&ferry_dt_builtins[i], 0, sizeof ferry_dt_builtins[i]);
    }
    for (int i = 0; i < PAIR_SLOTS; i++) {
        ferry_dt_free_prog(&pairs[i]);
        if (pairs[i].name_owned)
            free((char *)pairs[i].name);
        memset(&pairs[i], 0, sizeof pairs[i]);
    }
    memset(f90_cache, 0, sizeof f90_cache);
    nf90 = 0;
}

struct ferry_datatype *ferry_datatype_get_any(MPI_Datatype h)
{
    struct ferry_datatype *b = ferry_dt_builtin(h);
    if (b)
        return b;
    uint32_t u = (uint32_t)h;   /* (a builtin-kind handle that is none fails the test below too) */
    if ((u & 0xfc000000u) == ((uint32_t)MPI_FLOAT_INT & 0xfc000000u)) {   /* direct datatype */
        uint32_t idx = u & 0x03ffffffu;
        if (idx < PAIR_SLOTS) {
            struct ferry_datatype *dt = &pairs[idx];
            return dt->handle == h ? dt : NULL;
        }
        struct ferry_datatype *dt = ferry_objtab_get(&types_tab, h);
        return dt && dt->user_refs > 0 ? dt : NULL;
    }
    return NULL;
}

struct ferry_datatype *ferry_datatype_get(MPI_Datatype h)
{
    struct ferry_datatype *dt = ferry_datatype_get_any(h);
    return dt && dt->committed && !dt->marker ? dt : NULL;
}

struct ferry_datatype *ferry_dt_basic_type(const struct ferry_datatype *dt)
{
    return dt->basic;
}

/* ---- lifetime ------------------------------------------------------------ */

static void unref(struct ferry_datatype *dt);

static void reap_zombies(void)
{
    if (ferry_requests_active > 0)
        return;
    while (zombies) {
        struct ferry_datatype *z = zombies;
        zombies = z->next_zombie;
        dt_destroy(z, 1);
    }
}

static void dt_destroy(struct ferry_datatype *dt, int release_children)
{
    ferry_objtab_remove(&types_tab, dt->handle);
    if (release_children) {
        if (dt->child)
            unref(dt->child);
        for (int i = 0; i < dt->n; i++)
            if (dt->types && dt->types[i])
                unref(dt->types[i]);
        for (int i = 0; i < dt->nd; i++)
            if (dt->env_types[i])
                unref(dt->env_types[i]);
    }
    ferry_dt_free_prog(dt);
    free(dt->blocklens);
    free(dt->disps);
    free(dt->types);
    free(dt->ints);
    free(dt->aints);
    free(dt->counts);
    free(dt->dtypes);
    free(dt->env_types);
    if (dt->name_owned)
        free((char *)dt->name);
    free(dt);
}

static void unref(struct ferry_datatype *dt)
{
    if (dt->predefined)
        return;
    if (--dt->refs > 0)
        return;
    /* Without request references (see ferry_dt_retain) an operation in
     * flight may still read the type: keep it until none is. */
    if (ferry_requests_active > 0) {
        dt->next_zombie = zombies;
        zombies = dt;
        return;
    }
    dt_destroy(dt, 1);
}

void ferry_dt_retain(struct ferry_datatype *dt)
{
    if (dt && !dt->predefined)
        dt->refs++;
}

void ferry_dt_release(struct ferry_datatype *dt)
{
    if (dt && !dt->predefined)
        unref(dt);
}

void ferry_dt_user_free(struct ferry_datatype *dt)
{
    if (dt->predefined || dt->user_refs <= 0)
        return;
    dt->user_refs--;
    unref(dt);
    reap_zombies();
}

void ferry_dt_user_retain(struct ferry_datatype *dt)
{
    if (dt->predefined)
        return;
    dt->user_refs++;
    dt->refs++;
}

void ferry_dt_set_name(struct ferry_datatype *dt, const char *name)
{
    if (dt->name_owned)
        free((char *)dt->name);
    dt->name = ferry_xstrdup(name);
    dt->name_owned = 1;
}

/* ---- construction -------------------------------------------------------- */

static struct ferry_datatype *dt_new(int desc)
{
    reap_zombies();
    struct ferry_datatype *dt = ferry_xcalloc(1, sizeof *dt);
    dt->desc = desc;
    dt->refs = dt->user_refs = 1;
    dt->name = "";
    dt->handle = ferry_objtab_add(&types_tab, dt);
    return dt;
}

/* Bounds of a type map being assembled from instances of children. */
struct bounds {
    int data, lbm, ubm, anylb, anyub;
    MPI_Aint tlb, tub, mlb, mub, lb, ub;
    int align;
};

static MPI_Aint amin(MPI_Aint a, MPI_Aint b) { return a < b ? a : b; }
static MPI_Aint amax(MPI_Aint a, MPI_Aint b) { return a > b ? a : b; }

/* Instances of c placed at offsets whose smallest is kmin and largest kmax. */
static void bounds_add(struct bounds *b, const struct ferry_datatype *c, MPI_Aint kmin, MPI_Aint kmax)
{
    if (c->size > 0) {
        b->tlb = b->data ? amin(b->tlb, kmin + c->true_lb) : kmin + c->true_lb;
        b->tub = b->data ? amax(b->tub, kmax + c->true_lb + c->true_extent) : kmax + c->true_lb + c->true_extent;
        b->data = 1;
        b->align = c->align > b->align ? c->align : b->align;
    }
    if (c->has_lb) {
        b->mlb = b->lbm ? amin(b->mlb, kmin + c->lb) : kmin + c->lb;
        b->lbm = 1;
    }
    if (c->has_ub) {
        b->mub = b->ubm ? amax(b->mub, kmax + c->lb + c->extent) : kmax + c->lb + c->extent;
        b->ubm = 1;
    }
    if (c->size == 0 && !c->has_lb && !c->has_ub)
        return;   /* empty type map */
    if (c->marker != 2) {
        b->lb = b->anylb ? amin(b->lb, kmin + c->lb) : kmin + c->lb;
        b->anylb = 1;
    }
    if (c->marker != 1) {
        b->ub = b->anyub ? amax(b->ub, kmax + c->lb + c->extent) : kmax + c->lb + c->extent;
        b->anyub = 1;
    }
}

/* Set lb / extent / true bounds from b; pad: round the extent up to the
 * alignment (MPI's epsilon; MPICH applies it to structs of mixed types). */
static void bounds_finish(struct ferry_datatype *dt, const struct bounds *b, int pad)
{
    MPI_Aint lb = b->lbm ? b->mlb : b->anylb ? b->lb : 0;
    MPI_Aint ub = b->ubm ? b->mub : b->anyub ? b->ub : 0;
    dt->has_lb = b->lbm;
    dt->has_ub = b->ubm;
    dt->align = b->align ? b->align : 1;
    if (pad && !b->ubm && dt->align > 1 && ub > lb) {
        MPI_Aint r = (ub - lb) % dt->align;
        if (r)
            ub += dt->align - r;
    }
    dt->lb = lb;
    dt->extent = ub - lb;
    dt->true_lb = b->data ? b->tlb : 0;
    dt->true_extent = b->data ? b->tub - b->tlb : 0;
}

static int mul_ok(size_t a, size_t b, size_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

struct ferry_datatype *ferry_dt_hvector(MPI_Aint count, MPI_Aint blocklen, MPI_Aint stride, struct ferry_datatype *old)
{
    size_t n, size, x32;
    if (!mul_ok((size_t)count, (size_t)blocklen, &n) || !mul_ok(n, old->size, &size) ||
        !mul_ok(n, old->ext32_size, &x32))
        return NULL;
    struct ferry_datatype *dt = dt_new(FERRY_DTD_HVECTOR);
    dt->count = count;
    dt->blocklen = blocklen;
    dt->stride = stride;
    dt->child = old;
    ferry_dt_retain(old);
    dt->size = size;
    dt->ext32_size = x32;
    dt->nelem = (MPI_Count)n * old->nelem;
    dt->basic = old->basic;
    struct bounds b = {0};
    if (n > 0) {
        MPI_Aint e = old->extent;
        MPI_Aint kmin = amin(0, (count - 1) * stride) + amin(0, (blocklen - 1) * e);
        MPI_Aint kmax = amax(0, (count - 1) * stride) + amax(0, (blocklen - 1) * e);
        bounds_add(&b, old, kmin, kmax);
    }
    bounds_finish(dt, &b, 0);
    if (n == 0)
        dt->basic = NULL;
    return dt;
}

struct ferry_datatype *ferry_dt_struct(int count, const MPI_Count *blocklens, const MPI_Aint *disps,
                                       struct ferry_datatype *const *types, struct ferry_datatype *one)
{
    size_t size = 0, x32 = 0;
    MPI_Count nelem = 0;
    int mixed = 0, first = 1;
    struct ferry_datatype *basic = NULL;
    for (int i = 0; i < count; i++) {
        struct ferry_datatype *t = types ? types[i] : one;
        size_t s, x;
        if (!mul_ok((size_t)blocklens[i], t->size, &s) || __builtin_add_overflow(size, s, &size) ||
            !mul_ok((size_t)blocklens[i], t->ext32_size, &x) || __builtin_add_overflow(x32, x, &x32))
            return NULL;
        nelem += blocklens[i] * t->nelem;
        if (types && types[i] != types[0])
            mixed = 1;
        if (blocklens[i] > 0 && t->size > 0) {
            if (first)
                basic = t->basic;
            else if (basic != t->basic)
                basic = NULL;
            first = 0;
        }
    }
    struct ferry_datatype *dt = dt_new(FERRY_DTD_STRUCT);
    dt->n = count;
    dt->blocklens = ferry_xmalloc((size_t)(count ? count : 1) * sizeof *dt->blocklens);
    dt->disps = ferry_xmalloc((size_t)(count ? count : 1) * sizeof *dt->disps);
    if (types) {
        dt->types = ferry_xmalloc((size_t)(count ? count : 1) * sizeof *dt->types);
    } else {
        dt->child = one;
        ferry_dt_retain(one);
    }
    struct bounds b = {0};
    for (int i = 0; i < count; i++) {
        struct ferry_datatype *t = types ? types[i] : one;
        dt->blocklens[i] = blocklens[i];
        dt->disps[i] = disps[i];
        if (types) {
            dt->types[i] = t;
            ferry_dt_retain(t);
        }
        if (blocklens[i] > 0) {
            MPI_Aint span = (MPI_Aint)(blocklens[i] - 1) * t->extent;
            bounds_add(&b, t, disps[i] + amin(0, span), disps[i] + amax(0, span));
        }
    }
    dt->size = size;
    dt->ext32_size = x32;
    dt->nelem = nelem;
    dt->basic = basic;
    bounds_finish(dt, &b, mixed);
    return dt;
}

struct ferry_datatype *ferry_dt_resized(struct ferry_datatype *old, MPI_Aint lb, MPI_Aint extent)
{
    struct ferry_datatype *dt = dt_new(FERRY_DTD_RESIZED);
    dt->child = old;
    ferry_dt_retain(old);
    dt->size = old->size;
    dt->ext32_size = old->ext32_size;
    dt->nelem = old->nelem;
    dt->basic = old->basic;
    dt->align = old->align;
    dt->lb = lb;
    dt->extent = extent;
    dt->has_lb = dt->has_ub = 1;
    dt->true_lb = old->true_lb;
    dt->true_extent = old->true_extent;
    return dt;
}

struct ferry_datatype *ferry_dt_dup(struct ferry_datatype *old)
{
    struct ferry_datatype *dt = dt_new(FERRY_DTD_DUP);
    dt->child = old;
    ferry_dt_retain(old);
    dt->size = old->size;
    dt->ext32_size = old->ext32_size;
    dt->nelem = old->nelem;
    dt->basic = old->basic;
    dt->align = old->align;
    dt->lb = old->lb;
    dt->extent = old->extent;
    dt->true_lb = old->true_lb;
    dt->true_extent = old->true_extent;
    dt->has_lb = old->has_lb;
    dt->has_ub = old->has_ub;
    if (old->committed)
        ferry_dt_commit(dt);
    return dt;
}

void ferry_dt_set_envelope(struct ferry_datatype *dt, int combiner, int ni, const int *ints, int na,
                           const MPI_Aint *aints, int nc, const MPI_Count *counts, int nd,
                           const MPI_Datatype *types)
{
    dt->combiner = combiner;
    dt->ni = ni;
    dt->na = na;
    dt->nc = nc;
    dt->nd = nd;
    if (ni) {
        dt->ints = ferry_xmalloc((size_t)ni * sizeof *dt->ints);
        memcpy(dt->ints, ints, (size_t)ni * sizeof *dt->ints);
    }
    if (na) {
        dt->aints = ferry_xmalloc((size_t)na * sizeof *dt->aints);
        memcpy(dt->aints, aints, (size_t)na * sizeof *dt->aints);
    }
    if (nc) {
        dt->counts = ferry_xmalloc((size_t)nc * sizeof *dt->counts);
        memcpy(dt->counts, counts, (size_t)nc * sizeof *dt->counts);
    }
    if (nd) {
        dt->dtypes = ferry_xmalloc((size_t)nd * sizeof *dt->dtypes);
        dt->env_types = ferry_xmalloc((size_t)nd * sizeof *dt->env_types);
        for (int i = 0; i < nd; i++) {
            dt->dtypes[i] = types[i];
            dt->env_types[i] = ferry_datatype_get_any(types[i]);
            ferry_dt_retain(dt->env_types[i]);
        }
    }
}

void ferry_dt_commit(struct ferry_datatype *dt)
{
    if (dt->committed)
        return;
    ferry_dt_flatten(dt);
    dt->committed = 1;
}

struct ferry_datatype *ferry_dt_f90(int combiner, int p, int r, struct ferry_datatype *base)
{
    for (int i = 0; i < nf90; i++)
        if (f90_cache[i].combiner == combiner && f90_cache[i].p == p && f90_cache[i].r == r)
            return f90_cache[i].dt;
    struct ferry_datatype *dt = ferry_dt_dup(base);
    int ints[2] = {p, r};
    if (combiner == MPI_COMBINER_F90_INTEGER)
        ints[0] = r;
    ferry_dt_set_envelope(dt, combiner, combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2, ints, 0, NULL, 0, NULL, 0, NULL);
    dt->f90 = 1;
    if (nf90 < F90_MAX)   /* (p, r) pairs map to a handful of types: the cache never fills in practice */
        f90_cache[nf90++] = (typeof(f90_cache[0])){combiner, p, r, dt};
    return dt;
}

/* ---- Get_elements ---------------------------------------------------------- */

/* Basic elements in the first rem bytes (rem < t->size) of one element of t;
 * -1 when rem ends inside a basic element. */
static MPI_Count partial_elements(const struct ferry_datatype *t, size_t rem);

/* n consecutive instances of c, rem bytes of them. */
static MPI_Count run_elements(const struct ferry_datatype *c, size_t rem)
{
    if (c->size == 0)
        return 0;
    MPI_Count k = (MPI_Count)(rem / c->size) * c->nelem;
    size_t r = rem % c->size;
    if (r) {
        MPI_Count p = partial_elements(c, r);
        if (p < 0)
            return -1;
        k += p;
    }
    return k;
}

static MPI_Count partial_elements(const struct ferry_datatype *t, size_t rem)
{
    switch (t->desc) {
    case FERRY_DTD_PREDEF: {
        MPI_Count k = 0;
        for (int i = 0; i < t->nruns && rem > 0; i++) {
            const struct ferry_dt_run *r = &t->runs[i];
            size_t take = FERRY_MIN(rem, (size_t)r->count * r->size);
            if (take % r->size)
                return -1;
            k += (MPI_Count)(take / r->size);
            rem -= take;
        }
        return k;
    }
    case FERRY_DTD_HVECTOR:
        return run_elements(t->child, rem);
    case FERRY_DTD_STRUCT: {
        MPI_Count k = 0;
        for (int i = 0; i < t->n && rem > 0; i++) {
            const struct ferry_datatype *c = ferry_dt_block_type(t, i);
            size_t whole = (size_t)t->blocklens[i] * c->size;
            if (rem >= whole) {
                k += t->blocklens[i] * c->nelem;
                rem -= whole;
                continue;
            }
            MPI_Count p = run_elements(c, rem);
            return p < 0 ? -1 : k + p;
        }
        return k;
    }
    default:
        return partial_elements(t->child, rem);
    }
}

MPI_Count ferry_dt_elements(const struct ferry_datatype *dt, size_t bytes)
{
    MPI_Count n = run_elements(dt, bytes);
    return n < 0 ? MPI_UNDEFINED : n;
}

/* The inverse: bytes of the first n basic elements of one element of t
 * (n < t->nelem), and of n basic elements of consecutive instances of c. */
static size_t prefix_bytes(const struct ferry_datatype *t, MPI_Count n);

static size_t run_bytes(const struct ferry_datatype *c, MPI_Count n)
{
    if (c->nelem == 0)
        return 0;
    size_t b = (size_t)(n / c->nelem) * c->size;
    MPI_Count r = n % c->nelem;
    return r ? b + prefix_bytes(c, r) : b;
}

static size_t prefix_bytes(const struct ferry_datatype *t, MPI_Count n)
{
    size_t b = 0;
    switch (t->desc) {
    case FERRY_DTD_PREDEF:
        for (int i = 0; i < t->nruns && n > 0; i++) {
            const struct ferry_dt_run *r = &t->runs[i];
            MPI_Count take = FERRY_MIN(n, (MPI_Count)r->count);
            b += (size_t)take * r->size;
            n -= take;
        }
        return b;
    case FERRY_DTD_HVECTOR:
        return run_bytes(t->child, n);
    case FERRY_DTD_STRUCT:
        for (int i = 0; i < t->n && n > 0; i++) {
            const struct ferry_datatype *c = ferry_dt_block_type(t, i);
            MPI_Count whole = (MPI_Count)t->blocklens[i] * c->nelem;
            if (n >= whole) {
                b += (size_t)t->blocklens[i] * c->size;
                n -= whole;
                continue;
            }
            return b + run_bytes(c, n);
        }
        return b;
    default:
        return prefix_bytes(t->child, n);
    }
}

size_t ferry_dt_element_bytes(const struct ferry_datatype *dt, MPI_Count n)
{
    return run_bytes(dt, n);
}
