/* Derived datatype constructors, commit, dup and free. Every constructor
 * reduces to the engine's four shapes (hvector, struct, resized, dup; see
 * core/datatype.h) and records the envelope the user asked for. */
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

static int check_nonneg(int v, const char *what, const char *fn)
{
    if (v < 0)
        return ferry_error(NULL, MPI_ERR_COUNT, fn, "negative %s %d", what, v);
    return MPI_SUCCESS;
}

static int check_array(int count, const void *a, const char *what, const char *fn)
{
    if (count > 0 && !a)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", what);
    return MPI_SUCCESS;
}

static int too_big(const char *fn)
{
    return ferry_error(NULL, MPI_ERR_ARG, fn, "the type's size does not fit in a size_t");
}

/* Hand out dt (NULL: overflow) with the envelope recorded. */
static int finish(struct ferry_datatype *dt, MPI_Datatype *newtype, int combiner, int ni, const int *ints, int na,
                  const MPI_Aint *aints, int nd, const MPI_Datatype *types, const char *fn)
{
    if (!dt)
        return too_big(fn);
    ferry_dt_set_envelope(dt, combiner, ni, ints, na, aints, nd, types);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_contiguous";
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_nonneg(count, "count", fn)) ||
        (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    return finish(ferry_dt_hvector(1, count, 0, old), newtype, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1,
                  &oldtype, fn);
}

#pragma weak MPI_Type_vector = PMPI_Type_vector
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_vector";
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_nonneg(count, "count", fn)) ||
        (rc = check_nonneg(blocklength, "blocklength", fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    int ints[3] = {count, blocklength, stride};
    return finish(ferry_dt_hvector(count, blocklength, (MPI_Aint)stride * old->extent, old), newtype,
                  MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &oldtype, fn);
}

static int hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype,
                   const char *fn)
{
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_nonneg(count, "count", fn)) ||
        (rc = check_nonneg(blocklength, "blocklength", fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    int ints[2] = {count, blocklength};
    return finish(ferry_dt_hvector(count, blocklength, stride, old), newtype, MPI_COMBINER_HVECTOR, 2, ints, 1,
                  &stride, 1, &oldtype, fn);
}

#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return hvector(count, blocklength, stride, oldtype, newtype, "MPI_Type_create_hvector");
}

#pragma weak MPI_Type_hvector = PMPI_Type_hvector
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return hvector(count, blocklength, stride, oldtype, newtype, "MPI_Type_hvector");
}

/* The indexed family: count blocks of one type. bl == NULL: every block is
 * `blocklength` long. idisp (in extents) or adisp (in bytes). */
static int indexed(int count, const int *bl, int blocklength, const int *idisp, const MPI_Aint *adisp,
                   MPI_Datatype oldtype, MPI_Datatype *newtype, int combiner, const char *fn)
{
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_nonneg(count, "count", fn)) ||
        (rc = check_array(count, bl ? (const void *)bl : (const void *)&blocklength, "array_of_blocklengths", fn)) ||
        (rc = check_array(count, idisp ? (const void *)idisp : (const void *)adisp, "array_of_displacements", fn)) ||
        (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    if (!bl && (rc = check_nonneg(blocklength, "blocklength", fn)))
        return rc;
    for (int i = 0; bl && i < count; i++)
        if (bl[i] < 0)
            return ferry_error(NULL, MPI_ERR_COUNT, fn, "negative blocklength %d in block %d", bl[i], i);
    size_t n = count ? (size_t)count : 1;
    MPI_Count *bls = ferry_xmalloc(n * sizeof *bls);
    MPI_Aint *disps = ferry_xmalloc(n * sizeof *disps);
    for (int i = 0; i < count; i++) {
        bls[i] = bl ? bl[i] : blocklength;
        disps[i] = idisp ? (MPI_Aint)idisp[i] * old->extent : adisp[i];
    }
    struct ferry_datatype *dt = ferry_dt_struct(count, bls, disps, NULL, old);
    free(bls);
    free(disps);
    if (!dt)
        return too_big(fn);
    /* the envelope: ints and addresses as the standard lists them */
    int *ints = ferry_xmalloc((2 * n + 2) * sizeof *ints);
    int ni = 0;
    ints[ni++] = count;
    if (bl) {
        memcpy(ints + ni, bl, (size_t)count * sizeof *ints);
        ni += count;
    } else {
        ints[ni++] = blocklength;
    }
    if (idisp) {
        memcpy(ints + ni, idisp, (size_t)count * sizeof *ints);
        ni += count;
    }
    ferry_dt_set_envelope(dt, combiner, ni, ints, idisp ? 0 : count, adisp, 1, &oldtype);
    free(ints);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_indexed = PMPI_Type_indexed
int PMPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed(count, array_of_blocklengths, 0, array_of_displacements, NULL, oldtype, newtype,
                   MPI_COMBINER_INDEXED, "MPI_Type_indexed");
}

#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed(count, array_of_blocklengths, 0, NULL, array_of_displacements, oldtype, newtype,
                   MPI_COMBINER_HINDEXED, "MPI_Type_create_hindexed");
}

#pragma weak MPI_Type_hindexed = PMPI_Type_hindexed
int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed(count, array_of_blocklengths, 0, NULL, array_of_displacements, oldtype, newtype,
                   MPI_COMBINER_HINDEXED, "MPI_Type_hindexed");
}

#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed(count, NULL, blocklength, array_of_displacements, NULL, oldtype, newtype,
                   MPI_COMBINER_INDEXED_BLOCK, "MPI_Type_create_indexed_block");
}

#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed(count, NULL, blocklength, NULL, array_of_displacements, oldtype, newtype,
                   MPI_COMBINER_HINDEXED_BLOCK, "MPI_Type_create_hindexed_block");
}

static int create_struct(int count, const int *bl, const MPI_Aint *disps, const MPI_Datatype *types,
                         MPI_Datatype *newtype, const char *fn)
{
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_nonneg(count, "count", fn)) ||
        (rc = check_array(count, bl, "array_of_blocklengths", fn)) ||
        (rc = check_array(count, disps, "array_of_displacements", fn)) ||
        (rc = check_array(count, types, "array_of_types", fn)))
        return rc;
    size_t n = count ? (size_t)count : 1;
    struct ferry_datatype **ts = ferry_xmalloc(n * sizeof *ts);
    MPI_Count *bls = ferry_xmalloc(n * sizeof *bls);
    for (int i = 0; i < count && !rc; i++) {
        if (bl[i] < 0)
            rc = ferry_error(NULL, MPI_ERR_COUNT, fn, "negative blocklength %d in block %d", bl[i], i);
        else
            rc = check_old(types[i], &ts[i], 1, fn);
        bls[i] = bl[i];
    }
    struct ferry_datatype *dt = rc ? NULL : ferry_dt_struct(count, bls, disps, ts, NULL);
    free(ts);
    free(bls);
    if (rc)
        return rc;
    if (!dt)
        return too_big(fn);
    int *ints = ferry_xmalloc((n + 1) * sizeof *ints);
    ints[0] = count;
    if (count)
        memcpy(ints + 1, bl, (size_t)count * sizeof *ints);
    ferry_dt_set_envelope(dt, MPI_COMBINER_STRUCT, count + 1, ints, count, disps, count, types);
    free(ints);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype,
                         "MPI_Type_create_struct");
}

#pragma weak MPI_Type_struct = PMPI_Type_struct
int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype,
                         "MPI_Type_struct");
}

#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_resized";
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    MPI_Aint a[2] = {lb, extent};
    return finish(ferry_dt_resized(old, lb, extent), newtype, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &oldtype, fn);
}

#pragma weak MPI_Type_dup = PMPI_Type_dup
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_dup";
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    struct ferry_datatype *dt = ferry_dt_dup(old);
    ferry_dt_set_envelope(dt, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &oldtype);
    if (ferry_attr_type_copy && (rc = ferry_attr_type_copy(oldtype, dt->handle)) != MPI_SUCCESS) {
        if (ferry_attr_type_free)
            ferry_attr_type_free(dt->handle);   /* the attributes copied before the failure */
        ferry_dt_user_free(dt);
        return ferry_error(NULL, MPI_ERR_OTHER, fn, "an attribute copy callback failed (%d)", rc);
    }
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_commit = PMPI_Type_commit
int PMPI_Type_commit(MPI_Datatype *datatype)
{
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
static int wrap(struct ferry_datatype *t, MPI_Datatype *newtype, int combiner, int ni, const int *ints,
                MPI_Datatype oldtype)
{
    struct ferry_datatype *dt = ferry_dt_dup(t);
    chain(t, dt);
    ferry_dt_set_envelope(dt, combiner, ni, ints, 0, NULL, 1, &oldtype);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_subarray";
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    if (ndims <= 0)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "ndims %d must be positive", ndims);
    if ((rc = check_array(ndims, array_of_sizes, "array_of_sizes", fn)) ||
        (rc = check_array(ndims, array_of_subsizes, "array_of_subsizes", fn)) ||
        (rc = check_array(ndims, array_of_starts, "array_of_starts", fn)))
        return rc;
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    for (int i = 0; i < ndims; i++) {
        int sz = array_of_sizes[i], sub = array_of_subsizes[i], st = array_of_starts[i];
        if (sz <= 0 || sub < 0 || sub > sz || st < 0 || st > sz - sub)
            return ferry_error(NULL, MPI_ERR_ARG, fn,
                               "dimension %d: size %d, subsize %d, start %d (need 0 <= subsize <= size, "
                               "0 <= start <= size - subsize)", i, sz, sub, st);
    }
    /* fastest dimension first: a contiguous row, then a vector per dimension */
    struct ferry_datatype *t = NULL;
    MPI_Aint step = old->extent, disp = 0;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        struct ferry_datatype *n = k == 0 ? ferry_dt_hvector(1, array_of_subsizes[d], 0, old)
                                          : ferry_dt_hvector(array_of_subsizes[d], 1, step, t);
        if (!n) {
            chain(t, NULL);
            return too_big(fn);
        }
        t = chain(t, n);
        disp += (MPI_Aint)array_of_starts[d] * step;
        step *= array_of_sizes[d];
    }
    MPI_Count one = 1;
    t = chain(t, ferry_dt_struct(1, &one, &disp, NULL, t));
    t = chain(t, ferry_dt_resized(t, 0, step));
    int *ints = ferry_xmalloc((3 * (size_t)ndims + 2) * sizeof *ints);
    ints[0] = ndims;
    memcpy(ints + 1, array_of_sizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 1 + ndims, array_of_subsizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 1 + 2 * ndims, array_of_starts, (size_t)ndims * sizeof *ints);
    ints[1 + 3 * ndims] = order;
    rc = wrap(t, newtype, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, oldtype);
    free(ints);
    return rc;
}

/* One dimension of a darray: the indices this process owns, as a type over
 * `inner` (one index) with extent g * extent(inner). */
static struct ferry_datatype *darray_dim(int g, int distrib, int darg, int p, int coord,
                                         struct ferry_datatype *inner)
{
    MPI_Aint e = inner->extent;
    struct ferry_datatype *t;
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
    return chain(t, ferry_dt_resized(t, 0, (MPI_Aint)g * e));
}

#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                            const int array_of_dargs[], const int array_of_psizes[], int order,
                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_darray";
    struct ferry_datatype *old;
    int rc;
    if ((rc = check_new(newtype, fn)) || (rc = check_old(oldtype, &old, 0, fn)))
        return rc;
    if (size <= 0 || rank < 0 || rank >= size)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "invalid size %d / rank %d", size, rank);
    if (ndims <= 0)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "ndims %d must be positive", ndims);
    if ((rc = check_array(ndims, array_of_gsizes, "array_of_gsizes", fn)) ||
        (rc = check_array(ndims, array_of_distribs, "array_of_distribs", fn)) ||
        (rc = check_array(ndims, array_of_dargs, "array_of_dargs", fn)) ||
        (rc = check_array(ndims, array_of_psizes, "array_of_psizes", fn)))
        return rc;
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    long nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        int g = array_of_gsizes[i], dist = array_of_distribs[i], darg = array_of_dargs[i], p = array_of_psizes[i];
        if (g <= 0 || p <= 0)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: gsize %d and psize %d must be positive", i, g, p);
        if (dist != MPI_DISTRIBUTE_BLOCK && dist != MPI_DISTRIBUTE_CYCLIC && dist != MPI_DISTRIBUTE_NONE)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: invalid distribution %d", i, dist);
        if (dist == MPI_DISTRIBUTE_NONE && p != 1)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: MPI_DISTRIBUTE_NONE needs psize 1, not %d", i,
                               p);
        if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: invalid darg %d", i, darg);
        if (dist == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG && (long)darg * p < g)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "dimension %d: block size %d times %d processes < gsize %d",
                               i, darg, p, g);
        nprocs *= p;
        if (nprocs > INT_MAX)
            break;
    }
    if (nprocs != size)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "the process grid has %ld processes, size is %d", nprocs, size);
    /* coordinates in the process grid: row-major whatever the array order */
    int *coords = ferry_xmalloc((size_t)ndims * sizeof *coords);
    for (int i = ndims - 1, r = rank; i >= 0; i--) {
        coords[i] = r % array_of_psizes[i];
        r /= array_of_psizes[i];
    }
    struct ferry_datatype *t = old;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        struct ferry_datatype *n = darray_dim(array_of_gsizes[d], array_of_distribs[d], array_of_dargs[d],
                                              array_of_psizes[d], coords[d], t);
        if (!n) {
            if (k > 0)
                chain(t, NULL);
            free(coords);
            return too_big(fn);
        }
        t = k > 0 ? chain(t, n) : n;   /* never drop the caller's oldtype */
    }
    free(coords);
    int *ints = ferry_xmalloc((4 * (size_t)ndims + 4) * sizeof *ints);
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    memcpy(ints + 3, array_of_gsizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 3 + ndims, array_of_distribs, (size_t)ndims * sizeof *ints);
    memcpy(ints + 3 + 2 * ndims, array_of_dargs, (size_t)ndims * sizeof *ints);
    memcpy(ints + 3 + 3 * ndims, array_of_psizes, (size_t)ndims * sizeof *ints);
    ints[3 + 4 * ndims] = order;
    rc = wrap(t, newtype, MPI_COMBINER_DARRAY, 4 * ndims + 4, ints, oldtype);
    free(ints);
    return rc;
}
