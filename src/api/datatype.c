/* Datatype queries and message element counts, with their MPI-4
 * large-count (_c) forms (constructors: dtype_create.c, pack/unpack:
 * dtype_pack.c, decoding and names: dtype_query.c). */
#include "api/check.h"
#include <stdio.h>
#include <string.h>

/* Queries accept uncommitted derived types too. */
#pragma weak MPI_Type_size = PMPI_Type_size
int PMPI_Type_size(MPI_Datatype type, int *size)
{
    FERRY_API_ENTER();
    struct ferry_datatype *dt;
    int rc = check_type_query(type, &dt, "MPI_Type_size");
    if (rc || (rc = check_out(size, "size", "MPI_Type_size")))
        return rc;
    *size = dt->size > 0x7fffffff ? MPI_UNDEFINED : (int)dt->size;
    return MPI_SUCCESS;
}

/* Type_size_x and Type_size_c */
static int size_count(MPI_Datatype type, MPI_Count *size, const char *fn)
{
    struct ferry_datatype *dt;
    int rc = check_type_query(type, &dt, fn);
    if (rc || (rc = check_out(size, "size", fn)))
        return rc;
    *size = (MPI_Count)dt->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_size_x = PMPI_Type_size_x
int PMPI_Type_size_x(MPI_Datatype type, MPI_Count *size)
{
    FERRY_API_ENTER();
    return size_count(type, size, "MPI_Type_size_x");
}

#pragma weak MPI_Type_size_c = PMPI_Type_size_c
int PMPI_Type_size_c(MPI_Datatype type, MPI_Count *size)
{
    FERRY_API_ENTER();
    return size_count(type, size, "MPI_Type_size_c");
}

#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
int PMPI_Type_get_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent)
{
    FERRY_API_ENTER();
    struct ferry_datatype *dt;
    int rc = check_type_query(type, &dt, "MPI_Type_get_extent");
    if (rc || (rc = check_out(lb, "lb", "MPI_Type_get_extent")) ||
        (rc = check_out(extent, "extent", "MPI_Type_get_extent")))
        return rc;
    *lb = dt->lb;
    *extent = dt->extent;
    return MPI_SUCCESS;
}

/* The extent (or true extent) as MPI_Count: the _x and _c forms. */
static int extent_count(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent, int true_extent, const char *fn)
{
    struct ferry_datatype *dt;
    int rc = check_type_query(type, &dt, fn);
    if (rc || (rc = check_out(lb, "lb", fn)) || (rc = check_out(extent, "extent", fn)))
        return rc;
    *lb = true_extent ? dt->true_lb : dt->lb;
    *extent = true_extent ? dt->true_extent : dt->extent;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
int PMPI_Type_get_extent_x(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent)
{
    FERRY_API_ENTER();
    return extent_count(type, lb, extent, 0, "MPI_Type_get_extent_x");
}

#pragma weak MPI_Type_get_extent_c = PMPI_Type_get_extent_c
int PMPI_Type_get_extent_c(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent)
{
    FERRY_API_ENTER();
    return extent_count(type, lb, extent, 0, "MPI_Type_get_extent_c");
}

#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
int PMPI_Type_get_true_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent)
{
    FERRY_API_ENTER();
    struct ferry_datatype *dt;
    int rc = check_type_query(type, &dt, "MPI_Type_get_true_extent");
    if (rc || (rc = check_out(lb, "lb", "MPI_Type_get_true_extent")) ||
        (rc = check_out(extent, "extent", "MPI_Type_get_true_extent")))
        return rc;
    *lb = dt->true_lb;
    *extent = dt->true_extent;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
int PMPI_Type_get_true_extent_x(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent)
{
    FERRY_API_ENTER();
    return extent_count(type, lb, extent, 1, "MPI_Type_get_true_extent_x");
}

#pragma weak MPI_Type_get_true_extent_c = PMPI_Type_get_true_extent_c
int PMPI_Type_get_true_extent_c(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent)
{
    FERRY_API_ENTER();
    return extent_count(type, lb, extent, 1, "MPI_Type_get_true_extent_c");
}

#pragma weak MPI_Type_get_name = PMPI_Type_get_name
int PMPI_Type_get_name(MPI_Datatype type, char *name, int *resultlen)
{
    FERRY_API_ENTER();
    struct ferry_datatype *dt;
    int rc = check_type_query(type, &dt, "MPI_Type_get_name");
    if (rc)
        return rc;
    if (!name || !resultlen)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Type_get_name", "NULL %s", name ? "resultlen" : "name");
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", dt->name ? dt->name : "");
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

/* Whole elements of type in the status's byte count, MPI_UNDEFINED when it
 * is not a whole number or exceeds max (INT_MAX for the int forms). */
static int get_count(const MPI_Status *status, MPI_Datatype type, MPI_Count *count, MPI_Count max, const char *fn)
{
    struct ferry_datatype *dt;
    int rc = check_type_query(type, &dt, fn);
    if (rc)
        return rc;
    if (!status || status == MPI_STATUS_IGNORE || !count)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "NULL %s", count ? "status" : "count");
    size_t bytes = ferry_status_bytes(status);
    if (dt->size == 0)
        *count = 0;
    else if (bytes % dt->size || bytes / dt->size > (size_t)max)
        *count = MPI_UNDEFINED;
    else
        *count = (MPI_Count)(bytes / dt->size);
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_count = PMPI_Get_count
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype type, int *count)
{
    FERRY_API_ENTER();
    MPI_Count n = 0;
    int rc = get_count(status, type, count ? &n : NULL, 0x7fffffff, "MPI_Get_count");
    if (!rc)
        *count = (int)n;
    return rc;
}

#pragma weak MPI_Get_count_c = PMPI_Get_count_c
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype type, MPI_Count *count)
{
    FERRY_API_ENTER();
    return get_count(status, type, count, PTRDIFF_MAX, "MPI_Get_count_c");
}

/* Basic elements in the status's byte count (Get_elements_x and _c). */
static int get_elements(const MPI_Status *status, MPI_Datatype type, MPI_Count *count, const char *fn)
{
    struct ferry_datatype *dt;
    int rc = check_type_query(type, &dt, fn);
    if (rc)
        return rc;
    if (!status || status == MPI_STATUS_IGNORE || !count)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "NULL %s", count ? "status" : "count");
    *count = ferry_dt_elements(dt, ferry_status_bytes(status));
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype type, MPI_Count *count)
{
    FERRY_API_ENTER();
    return get_elements(status, type, count, "MPI_Get_elements_x");
}

#pragma weak MPI_Get_elements_c = PMPI_Get_elements_c
int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype type, MPI_Count *count)
{
    FERRY_API_ENTER();
    return get_elements(status, type, count, "MPI_Get_elements_c");
}

/* Status_set_elements(_x): the status then says `count` basic elements of
 * type were received, stored as the byte count Get_elements turns back into
 * it. Whole instances of type count their size; a partial one is taken as
 * elements of the type's average element size (exact for types whose basic
 * elements all have one size, which generalized-request code uses). */
#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype type, MPI_Count count)
{
    FERRY_API_ENTER();
    struct ferry_datatype *dt;
    int rc = check_type_query(type, &dt, "MPI_Status_set_elements_x");
    if (rc)
        return rc;
    if (!status || status == MPI_STATUS_IGNORE || count < 0)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Status_set_elements_x", "%s",
                           count < 0 ? "negative count" : "NULL status");
    /* elements differ in size in a struct: count them off the typemap */
    size_t bytes = ferry_dt_element_bytes(dt, count);
    int cancelled = ferry_status_cancelled(status);
    ferry_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR, bytes, cancelled);
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype type, int count)
{
    FERRY_API_ENTER();
    return PMPI_Status_set_elements_x(status, type, count);
}

#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Status_set_cancelled");
    if (rc)
        return rc;
    if (!status || status == MPI_STATUS_IGNORE)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled", "NULL status");
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_elements = PMPI_Get_elements
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype type, int *count)
{
    FERRY_API_ENTER();
    MPI_Count n = 0;
    int rc = get_elements(status, type, count ? &n : NULL, "MPI_Get_elements");
    if (rc)
        return rc;
    *count = n > 0x7fffffff ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
