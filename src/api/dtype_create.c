/* Derived datatype constructors, commit, dup and free. Every constructor
 * reduces to the engine's four shapes (hvector, struct, resized, dup; see
 * core/datatype.h) and records the envelope the user asked for. Each
 * constructor and its MPI-4 large-count form (_c) share one helper taking
 * MPI_Count arguments; `large` says which envelope to record: the int forms
 * report integers and addresses, the _c forms large counts (MPI-4.0 5.1.13). */
#include "api/check.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The attribute layer (core/attr.h): copy callbacks at Type_dup, delete
 * callbacks at Type_free. Weak references, so this file links whether or
 * not that layer is built. */
int ferry_attr_type_copy(MPI_Datatype old, MPI_Datatype new_type) __attribute__((weak));
int ferry_attr_type_free(MPI_Datatype t) __attribute__((weak));

/* The type argument of a constructor: any live type, committed or not; the
 * MPI_LB / MPI_UB markers only where markers_ok (MPI_Type_struct). */
static int check_old(MPI_Datatype h, struct ferry_datatype **dt, int markers_ok, const char *fn)
{
    *dt = ferry_datatype_get_any(h);
    if (!*dt)
        return ferry_error(NULL, MPI_ERR_TYPE, fn, h == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                                                                       : "invalid datatype handle 0x%x", (unsigned)h);
    if ((*dt)->marker && !markers_ok)
        return ferry_error(NULL, MPI_ERR_TYPE, fn, "MPI_LB / MPI_UB are only valid in a struct type");
    return MPI_SUCCESS;
}

static int check_new(MPI_Datatype *newtype, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!newtype)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "newtype is NULL");
    return MPI_SUCCESS;
}

static int check_nonneg(MPI_Count v, const char *what, const char *fn)
{
    if (v < 0)
        return ferry_error(NULL, MPI_ERR_COUNT, fn, "negative %s %lld", what, (long long)v);
    return MPI_SUCCESS;
}

static int check_array(MPI_Count count, const void *a, const char *what, const char *fn)
{
    if (count > 0 && !a)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", what);
    return MPI_SUCCESS;
}

static int too_big(const char *fn)
{
    return ferry_error(NULL, MPI_ERR_ARG, fn, "the type's size does not fit in a size_t");
}

/* Hand out dt (NULL: overflow) with the envelope recorded: the int form's
 * integers and addresses, or the _c form's large counts. */
static int finish(struct ferry_datatype *dt, MPI_Datatype *newtype, int combiner, int ni, const int *ints, int na,
                  const MPI_Aint *aints, int nc, const MPI_Count *counts, int nd, const MPI_Datatype *types,
                  const char *fn)
{
    if (!dt)
        return too_big(fn);
    ferry_dt_set_envelope(dt, combiner, ni, ints, na, aints, nc, counts, nd, types);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

static int contiguous(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype, int large, const char *fn)
{
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_nonneg(count, "count", fn)) ||
        (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    int ints[1] = {(int)count};
    return finish(ferry_dt_hvector(1, count, 0, old), newtype, MPI_COMBINER_CONTIGUOUS, large ? 0 : 1, ints, 0, NULL,
                  large ? 1 : 0, &count, 1, &oldtype, fn);
}

#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return contiguous(count, oldtype, newtype, 0, "MPI_Type_contiguous");
}

#pragma weak MPI_Type_contiguous_c = PMPI_Type_contiguous_c
int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return contiguous(count, oldtype, newtype, 1, "MPI_Type_contiguous_c");
}

/* vector (stride in extents of oldtype) and hvector (in bytes). */
static int vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride, int in_bytes, MPI_Datatype oldtype,
                  MPI_Datatype *newtype, int large, const char *fn)
{
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_nonneg(count, "count", fn)) ||
        (rc = check_nonneg(blocklength, "blocklength", fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    MPI_Aint bytes = stride;
    if (!in_bytes && __builtin_mul_overflow(stride, old->extent, &bytes))
        return too_big(fn);
    int ints[3] = {(int)count, (int)blocklength, (int)stride};
    MPI_Count counts[3] = {count, blocklength, stride};
    int combiner = in_bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR;
    /* int forms: vector keeps 3 integers, hvector 2 integers and the stride as an address */
    int ni = large ? 0 : in_bytes ? 2 : 3, na = !large && in_bytes;
    return finish(ferry_dt_hvector(count, blocklength, bytes, old), newtype, combiner, ni, ints, na, &bytes,
                  large ? 3 : 0, counts, 1, &oldtype, fn);
}

#pragma weak MPI_Type_vector = PMPI_Type_vector
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return vector(count, blocklength, stride, 0, oldtype, newtype, 0, "MPI_Type_vector");
}

#pragma weak MPI_Type_vector_c = PMPI_Type_vector_c
int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return vector(count, blocklength, stride, 0, oldtype, newtype, 1, "MPI_Type_vector_c");
}

#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return vector(count, blocklength, stride, 1, oldtype, newtype, 0, "MPI_Type_create_hvector");
}

#pragma weak MPI_Type_create_hvector_c = PMPI_Type_create_hvector_c
int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return vector(count, blocklength, stride, 1, oldtype, newtype, 1, "MPI_Type_create_hvector_c");
}

#pragma weak MPI_Type_hvector = PMPI_Type_hvector
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return vector(count, blocklength, stride, 1, oldtype, newtype, 0, "MPI_Type_hvector");
}

/* ---- indexed family and struct ---------------------------------------------- */

/* The arguments of an indexed or struct constructor, in the caller's width:
 * count blocks, their lengths (bl, or every block `blocklength` long for the
 * _block forms) and displacements (in bytes for the h forms and struct, else
 * in extents of oldtype). The int forms pass int block lengths and int or
 * MPI_Aint displacements, the _c forms MPI_Count arrays throughout. */
struct blocks {
    MPI_Count count, blocklength;
    const void *bl, *disp;
    int per_block;   /* bl given */
    int in_bytes;
    int large;       /* a _c constructor */
};

static MPI_Count bl_at(const struct blocks *b, MPI_Count i)
{
    if (!b->per_block)
        return b->blocklength;
    return b->large ? ((const MPI_Count *)b->bl)[i] : ((const int *)b->bl)[i];
}

static MPI_Aint disp_at(const struct blocks *b, MPI_Count i)
{
    return b->large || b->in_bytes ? ((const MPI_Aint *)b->disp)[i] : ((const int *)b->disp)[i];
}

static int check_blocks(const struct blocks *b, const char *fn)
{
    int rc;
    if ((rc = check_nonneg(b->count, "count", fn)) ||
        (rc = check_array(b->count, b->per_block ? b->bl : &b->blocklength, "array_of_blocklengths", fn)) ||
        (rc = check_array(b->count, b->disp, "array_of_displacements", fn)))
        return rc;
    /* the envelope lists up to 2 * count + 1 values, counted in an int */
    if (b->count > (INT_MAX - 2) / 2)
        return ferry_error(NULL, MPI_ERR_COUNT, fn, "%lld blocks: at most %d are supported", (long long)b->count,
                           (INT_MAX - 2) / 2);
    if (!b->per_block)
        return check_nonneg(b->blocklength, "blocklength", fn);
    for (MPI_Count i = 0; i < b->count; i++)
        if (bl_at(b, i) < 0)
            return ferry_error(NULL, MPI_ERR_COUNT, fn, "negative blocklength %lld in block %lld",
                               (long long)bl_at(b, i), (long long)i);
    return MPI_SUCCESS;
}

/* The envelope of an indexed or struct type: count, the block lengths (or
 * the one blocklength), the displacements. The int forms list displacements
 * in bytes as addresses and the others as integers; the _c forms list every
 * value as a large count. */
static void blocks_envelope(struct ferry_datatype *dt, const struct blocks *b, int combiner, int nd,
                            const MPI_Datatype *types)
{
    MPI_Count n = b->count, nbl = b->per_block ? n : 1;
    int disp_listed = b->large || !b->in_bytes;
    size_t nv = 1 + (size_t)nbl + (disp_listed ? (size_t)n : 0), k = 0;
    MPI_Count *v = ferry_xmalloc(nv * sizeof *v);
    v[k++] = n;
    for (MPI_Count i = 0; i < nbl; i++)
        v[k++] = bl_at(b, i);
    for (MPI_Count i = 0; disp_listed && i < n; i++)
        v[k++] = disp_at(b, i);
    if (b->large) {
        ferry_dt_set_envelope(dt, combiner, 0, NULL, 0, NULL, (int)nv, v, nd, types);
    } else {
        int *ints = ferry_xmalloc(nv * sizeof *ints);
        for (size_t i = 0; i < nv; i++)
            ints[i] = (int)v[i];
        ferry_dt_set_envelope(dt, combiner, (int)nv, ints, disp_listed ? 0 : (int)n, b->disp, 0, NULL, nd, types);
        free(ints);
    }
    free(v);
}

/* The indexed family: count blocks of oldtype. */
static int indexed(const struct blocks *b, MPI_Datatype oldtype, MPI_Datatype *newtype, int combiner, const char *fn)
{
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_blocks(b, fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    size_t n = b->count ? (size_t)b->count : 1;
    MPI_Count *bls = ferry_xmalloc(n * sizeof *bls);
    MPI_Aint *disps = ferry_xmalloc(n * sizeof *disps);
    int overflow = 0;
    for (MPI_Count i = 0; i < b->count; i++) {
        bls[i] = bl_at(b, i);
        disps[i] = disp_at(b, i);
        if (!b->in_bytes)
            overflow |= __builtin_mul_overflow(disps[i], old->extent, &disps[i]);
    }
    struct ferry_datatype *dt = overflow ? NULL : ferry_dt_struct((int)b->count, bls, disps, NULL, old);
    free(bls);
    free(disps);
    if (!dt)
        return too_big(fn);
    blocks_envelope(dt, b, combiner, 1, &oldtype);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_indexed = PMPI_Type_indexed
int PMPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .bl = array_of_blocklengths, .disp = array_of_displacements, .per_block = 1};
    return indexed(&b, oldtype, newtype, MPI_COMBINER_INDEXED, "MPI_Type_indexed");
}

#pragma weak MPI_Type_indexed_c = PMPI_Type_indexed_c
int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .bl = array_of_blocklengths, .disp = array_of_displacements, .per_block = 1,
                       .large = 1};
    return indexed(&b, oldtype, newtype, MPI_COMBINER_INDEXED, "MPI_Type_indexed_c");
}

#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .bl = array_of_blocklengths, .disp = array_of_displacements, .per_block = 1,
                       .in_bytes = 1};
    return indexed(&b, oldtype, newtype, MPI_COMBINER_HINDEXED, "MPI_Type_create_hindexed");
}

#pragma weak MPI_Type_create_hindexed_c = PMPI_Type_create_hindexed_c
int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .bl = array_of_blocklengths, .disp = array_of_displacements, .per_block = 1,
                       .in_bytes = 1, .large = 1};
    return indexed(&b, oldtype, newtype, MPI_COMBINER_HINDEXED, "MPI_Type_create_hindexed_c");
}

#pragma weak MPI_Type_hindexed = PMPI_Type_hindexed
int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .bl = array_of_blocklengths, .disp = array_of_displacements, .per_block = 1,
                       .in_bytes = 1};
    return indexed(&b, oldtype, newtype, MPI_COMBINER_HINDEXED, "MPI_Type_hindexed");
}

#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .blocklength = blocklength, .disp = array_of_displacements};
    return indexed(&b, oldtype, newtype, MPI_COMBINER_INDEXED_BLOCK, "MPI_Type_create_indexed_block");
}

#pragma weak MPI_Type_create_indexed_block_c = PMPI_Type_create_indexed_block_c
int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .blocklength = blocklength, .disp = array_of_displacements, .large = 1};
    return indexed(&b, oldtype, newtype, MPI_COMBINER_INDEXED_BLOCK, "MPI_Type_create_indexed_block_c");
}

#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .blocklength = blocklength, .disp = array_of_displacements, .in_bytes = 1};
    return indexed(&b, oldtype, newtype, MPI_COMBINER_HINDEXED_BLOCK, "MPI_Type_create_hindexed_block");
}

#pragma weak MPI_Type_create_hindexed_block_c = PMPI_Type_create_hindexed_block_c
int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                      MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .blocklength = blocklength, .disp = array_of_displacements, .in_bytes = 1,
                       .large = 1};
    return indexed(&b, oldtype, newtype, MPI_COMBINER_HINDEXED_BLOCK, "MPI_Type_create_hindexed_block_c");
}

static int create_struct(const struct blocks *b, const MPI_Datatype *types, MPI_Datatype *newtype, const char *fn)
{
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_blocks(b, fn)) ||
        (rc = check_array(b->count, types, "array_of_types", fn)))
        return rc;
    size_t n = b->count ? (size_t)b->count : 1;
    struct ferry_datatype **ts = ferry_xmalloc(n * sizeof *ts);
    MPI_Count *bls = ferry_xmalloc(n * sizeof *bls);
    for (MPI_Count i = 0; i < b->count && !rc; i++) {
        rc = check_old(types[i], &ts[i], 1, fn);
        bls[i] = bl_at(b, i);
    }
    struct ferry_datatype *dt = rc ? NULL : ferry_dt_struct((int)b->count, bls, b->disp, ts, NULL);
    free(ts);
    free(bls);
    if (rc)
        return rc;
    if (!dt)
        return too_big(fn);
    blocks_envelope(dt, b, MPI_COMBINER_STRUCT, (int)b->count, types);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .bl = array_of_blocklengths, .disp = array_of_displacements, .per_block = 1,
                       .in_bytes = 1};
    return create_struct(&b, array_of_types, newtype, "MPI_Type_create_struct");
}

#pragma weak MPI_Type_create_struct_c = PMPI_Type_create_struct_c
int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                              MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .bl = array_of_blocklengths, .disp = array_of_displacements, .per_block = 1,
                       .in_bytes = 1, .large = 1};
    return create_struct(&b, array_of_types, newtype, "MPI_Type_create_struct_c");
}

#pragma weak MPI_Type_struct = PMPI_Type_struct
int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    struct blocks b = {.count = count, .bl = array_of_blocklengths, .disp = array_of_displacements, .per_block = 1,
                       .in_bytes = 1};
    return create_struct(&b, array_of_types, newtype, "MPI_Type_struct");
}

static int resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype, int large,
                   const char *fn)
{
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    MPI_Aint a[2] = {lb, extent};
    return finish(ferry_dt_resized(old, lb, extent), newtype, MPI_COMBINER_RESIZED, 0, NULL, large ? 0 : 2, a,
                  large ? 2 : 0, a, 1, &oldtype, fn);
}

#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return resized(oldtype, lb, extent, newtype, 0, "MPI_Type_create_resized");
}

#pragma weak MPI_Type_create_resized_c = PMPI_Type_create_resized_c
int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return resized(oldtype, lb, extent, newtype, 1, "MPI_Type_create_resized_c");
}

#pragma weak MPI_Type_dup = PMPI_Type_dup
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Type_dup";
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    struct ferry_datatype *dt = ferry_dt_dup(old);
    ferry_dt_set_envelope(dt, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 0, NULL, 1, &oldtype);
    if (ferry_attr_type_copy && (rc = ferry_attr_type_copy(oldtype, dt->handle)) != MPI_SUCCESS) {
        if (ferry_attr_type_free)
            ferry_attr_type_free(dt->handle);   /* the attributes copied before the failure */
        ferry_dt_user_free(dt);
        *newtype = MPI_DATATYPE_NULL;           /* as MPI_Comm_dup does with MPI_COMM_NULL */
        return ferry_error(NULL, MPI_ERR_OTHER, fn, "an attribute copy callback failed (%d)", rc);
    }
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_commit = PMPI_Type_commit
int PMPI_Type_commit(MPI_Datatype *datatype)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Type_commit";
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!datatype)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "datatype is NULL");
    struct ferry_datatype *dt;
    if ((rc = check_old(*datatype, &dt, 0, fn)))
        return rc;
    ferry_dt_commit(dt);
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_free = PMPI_Type_free
int PMPI_Type_free(MPI_Datatype *datatype)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Type_free";
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!datatype)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "datatype is NULL");
    struct ferry_datatype *dt = ferry_datatype_get_any(*datatype);
    if (!dt)
        return ferry_error(NULL, MPI_ERR_TYPE, fn, *datatype == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                                                                               : "invalid datatype handle 0x%x",
                           (unsigned)*datatype);
    if (dt->predefined)
        return ferry_error(NULL, MPI_ERR_TYPE, fn, "cannot free the predefined datatype %s", dt->name);
    if (dt->f90)
        return ferry_error(NULL, MPI_ERR_TYPE, fn, "cannot free a type returned by MPI_Type_create_f90_*");
    if (ferry_attr_type_free && (rc = ferry_attr_type_free(*datatype)) != MPI_SUCCESS)
        return ferry_error(NULL, MPI_ERR_OTHER, fn, "an attribute delete callback failed (%d)", rc);
    ferry_dt_user_free(dt);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

/* ---- subarray and darray ------------------------------------------------- */

/* The engine types made along the way are dropped once the next one holds them. */
static struct ferry_datatype *chain(struct ferry_datatype *prev, struct ferry_datatype *next)
{
    if (prev && !prev->predefined && prev != next)
        ferry_dt_user_free(prev);
    return next;
}

/* Wrap the finished type t in a dup carrying the envelope. */
static int wrap(struct ferry_datatype *t, MPI_Datatype *newtype, int combiner, int ni, const int *ints, int nc,
                const MPI_Count *counts, MPI_Datatype oldtype)
{
    struct ferry_datatype *dt = ferry_dt_dup(t);
    chain(t, dt);
    ferry_dt_set_envelope(dt, combiner, ni, ints, 0, NULL, nc, counts, 1, &oldtype);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

/* The int forms' arrays as MPI_Count (NULL stays NULL). */
static MPI_Count *widen(int n, const int *a)
{
    if (!a || n <= 0)
        return NULL;
    MPI_Count *w = ferry_xmalloc((size_t)n * sizeof *w);
    for (int i = 0; i < n; i++)
        w[i] = a[i];
    return w;
}

static int subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes, const MPI_Count *starts,
                    int order, MPI_Datatype oldtype, MPI_Datatype *newtype, int large, const char *fn)
{
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    if (ndims <= 0)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "ndims %d must be positive", ndims);
    if ((rc = check_array(ndims, sizes, "array_of_sizes", fn)) ||
        (rc = check_array(ndims, subsizes, "array_of_subsizes", fn)) ||
        (rc = check_array(ndims, starts, "array_of_starts", fn)))
        return rc;
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    for (int i = 0; i < ndims; i++) {
        MPI_Count sz = sizes[i], sub = subsizes[i], st = starts[i];
        if (sz <= 0 || sub < 0 || sub > sz || st < 0 || st > sz - sub)
            return ferry_error(NULL, MPI_ERR_ARG, fn,
                               "dimension %d: size %lld, subsize %lld, start %lld (need 0 <= subsize <= size, "
                               "0 <= start <= size - subsize)", i, (long long)sz, (long long)sub, (long long)st);
    }
    /* fastest dimension first: a contiguous row, then a vector per dimension */
    struct ferry_datatype *t = NULL;
    MPI_Aint step = old->extent, disp = 0, off;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        struct ferry_datatype *n = k == 0 ? ferry_dt_hvector(1, subsizes[d], 0, old)
                                          : ferry_dt_hvector(subsizes[d], 1, step, t);
        if (!n || __builtin_mul_overflow(starts[d], step, &off) || __builtin_add_overflow(disp, off, &disp) ||
            __builtin_mul_overflow(step, sizes[d], &step)) {
            chain(t, NULL);
            chain(n, NULL);
            return too_big(fn);
        }
        t = chain(t, n);
    }
    MPI_Count one = 1;
    t = chain(t, ferry_dt_struct(1, &one, &disp, NULL, t));
    t = chain(t, ferry_dt_resized(t, 0, step));
    /* the envelope: ndims, sizes, subsizes, starts, order; the _c form keeps
     * the three arrays as large counts */
    size_t nd = (size_t)ndims;
    int *ints = ferry_xmalloc((3 * nd + 2) * sizeof *ints);
    MPI_Count *counts = ferry_xmalloc(3 * nd * sizeof *counts);
    memcpy(counts, sizes, nd * sizeof *counts);
    memcpy(counts + nd, subsizes, nd * sizeof *counts);
    memcpy(counts + 2 * nd, starts, nd * sizeof *counts);
    int ni = 0;
    ints[ni++] = ndims;
    for (size_t i = 0; !large && i < 3 * nd; i++)
        ints[ni++] = (int)counts[i];
    ints[ni++] = order;
    rc = wrap(t, newtype, MPI_COMBINER_SUBARRAY, ni, ints, large ? 3 * ndims : 0, counts, oldtype);
    free(ints);
    free(counts);
    return rc;
}

#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    MPI_Count *sizes = widen(ndims, array_of_sizes), *subsizes = widen(ndims, array_of_subsizes),
              *starts = widen(ndims, array_of_starts);
    int rc = subarray(ndims, sizes, subsizes, starts, order, oldtype, newtype, 0, "MPI_Type_create_subarray");
    free(sizes);
    free(subsizes);
    free(starts);
    return rc;
}

#pragma weak MPI_Type_create_subarray_c = PMPI_Type_create_subarray_c
int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype, newtype, 1,
                    "MPI_Type_create_subarray_c");
}

/* One dimension of a darray: the indices this process owns, as a type over
 * `inner` (one index) with extent g * extent(inner). */
static struct ferry_datatype *darray_dim(MPI_Aint g, int distrib, int darg, int p, int coord,
                                         struct ferry_datatype *inner)
{
    MPI_Aint e = inner->extent, ge;
    struct ferry_datatype *t;
    if (__builtin_mul_overflow(g, e, &ge))
        return NULL;
    if (distrib == MPI_DISTRIBUTE_NONE || (distrib == MPI_DISTRIBUTE_BLOCK)) {
        MPI_Aint b = distrib == MPI_DISTRIBUTE_NONE ? g : darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        MPI_Aint start = distrib == MPI_DISTRIBUTE_NONE ? 0 : coord * b;
        MPI_Aint mine = start >= g ? 0 : (g - start < b ? g - start : b);
        MPI_Count bl = mine;
        MPI_Aint disp = start * e;
        t = ferry_dt_struct(1, &bl, &disp, NULL, inner);
    } else {   /* cyclic(b): blocks coord, coord + p, ... of b indices */
        MPI_Aint b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        MPI_Aint nblocks = (g + b - 1) / b;
        MPI_Aint mine = nblocks > coord ? (nblocks - coord + p - 1) / p : 0;   /* my blocks, the last maybe short */
        MPI_Aint last = coord + (mine - 1) * p;                              /* index of my last block */
        MPI_Aint last_len = mine ? (g - last * b < b ? g - last * b : b) : 0;
        MPI_Aint full = mine && last_len < b ? mine - 1 : mine;
        struct ferry_datatype *hv = ferry_dt_hvector(full, b, p * b * e, inner);
        if (!hv)
            return NULL;
        MPI_Count bls[2] = {1, full < mine ? last_len : 0};
        MPI_Aint disps[2] = {coord * b * e, last * b * e};
        struct ferry_datatype *ts[2] = {hv, inner};
        t = ferry_dt_struct(2, bls, disps, ts, NULL);
        chain(hv, t);
    }
    if (!t)
        return NULL;
    return chain(t, ferry_dt_resized(t, 0, ge));
}

static int darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs, const int *dargs,
                  const int *psizes, int order, MPI_Datatype oldtype, MPI_Datatype *newtype, int large,
                  const char *fn)
{
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    if (size <= 0 || rank < 0 || rank >= size)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "invalid size %d / rank %d", size, rank);
    if (ndims <= 0)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "ndims %d must be positive", ndims);
    if ((rc = check_array(ndims, gsizes, "array_of_gsizes", fn)) ||
        (rc = check_array(ndims, distribs, "array_of_distribs", fn)) ||
        (rc = check_array(ndims, dargs, "array_of_dargs", fn)) ||
        (rc = check_array(ndims, psizes, "array_of_psizes", fn)))
        return rc;
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    long nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        MPI_Count g = gsizes[i];
        int dist = distribs[i], darg = dargs[i], p = psizes[i];
        if (g <= 0 || p <= 0)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: gsize %lld and psize %d must be positive", i,
                               (long long)g, p);
        if (dist != MPI_DISTRIBUTE_BLOCK && dist != MPI_DISTRIBUTE_CYCLIC && dist != MPI_DISTRIBUTE_NONE)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: invalid distribution %d", i, dist);
        if (dist == MPI_DISTRIBUTE_NONE && p != 1)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: MPI_DISTRIBUTE_NONE needs psize 1, not %d", i,
                               p);
        if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: invalid darg %d", i, darg);
        if (dist == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG && (MPI_Count)darg * p < g)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: block size %d times %d processes < gsize %lld",
                               i, darg, p, (long long)g);
        nprocs *= p;
        if (nprocs > INT_MAX)
            break;
    }
    if (nprocs != size)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "the process grid has %ld processes, size is %d", nprocs, size);
    /* coordinates in the process grid: row-major whatever the array order */
    int *coords = ferry_xmalloc((size_t)ndims * sizeof *coords);
    for (int i = ndims - 1, r = rank; i >= 0; i--) {
        coords[i] = r % psizes[i];
        r /= psizes[i];
    }
    struct ferry_datatype *t = old;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        struct ferry_datatype *n = darray_dim(gsizes[d], distribs[d], dargs[d], psizes[d], coords[d], t);
        if (!n) {
            if (k > 0)
                chain(t, NULL);
            free(coords);
            return too_big(fn);
        }
        t = k > 0 ? chain(t, n) : n;   /* never drop the caller's oldtype */
    }
    free(coords);
    /* the envelope: size, rank, ndims, gsizes, distribs, dargs, psizes, order;
     * the _c form keeps gsizes as large counts */
    size_t nd = (size_t)ndims;
    int *ints = ferry_xmalloc((4 * nd + 4) * sizeof *ints);
    int ni = 0;
    ints[ni++] = size;
    ints[ni++] = rank;
    ints[ni++] = ndims;
    for (int i = 0; !large && i < ndims; i++)
        ints[ni++] = (int)gsizes[i];
    memcpy(ints + ni, distribs, nd * sizeof *ints);
    memcpy(ints + ni + ndims, dargs, nd * sizeof *ints);
    memcpy(ints + ni + 2 * ndims, psizes, nd * sizeof *ints);
    ni += 3 * ndims;
    ints[ni++] = order;
    rc = wrap(t, newtype, MPI_COMBINER_DARRAY, ni, ints, large ? ndims : 0, gsizes, oldtype);
    free(ints);
    return rc;
}

#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                            const int array_of_dargs[], const int array_of_psizes[], int order,
                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    MPI_Count *gsizes = widen(ndims, array_of_gsizes);
    int rc = darray(size, rank, ndims, gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype,
                    newtype, 0, "MPI_Type_create_darray");
    free(gsizes);
    return rc;
}

#pragma weak MPI_Type_create_darray_c = PMPI_Type_create_darray_c
int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
                              int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order,
                  oldtype, newtype, 1, "MPI_Type_create_darray_c");
}
