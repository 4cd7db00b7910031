/* Decoding (MPI_Type_get_envelope / get_contents and their MPI-4 _c forms),
 * names, the MPI-1 bound queries, and the size-matched types
 * (Type_match_size, Type_create_f90_*). */
#include "api/check.h"
#include <stdio.h>
#include <string.h>

/* A type built by a large-count constructor lists large counts, which only
 * the _c forms (large) can return: the int forms fail (MPI-4.0 5.1.13). */
static int check_large_counts(const struct ferry_datatype *dt, int large, const char *fn)
{
    if (dt->nc && !large)
        return ferry_error(NULL, MPI_ERR_TYPE, fn,
                           "the type was built by a large-count (_c) constructor: its contents has %d large counts "
                           "(use %s_c)", dt->nc, fn);
    return MPI_SUCCESS;
}

static int get_envelope(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                        MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner, int large,
                        const char *fn)
{
    struct ferry_datatype *dt;
    int rc = check_type_query(datatype, &dt, fn);
    if (rc)
        return rc;
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "NULL output argument");
    if ((rc = check_large_counts(dt, large, fn)))
        return rc;
    *num_integers = dt->ni;
    *num_addresses = dt->na;
    *num_large_counts = dt->nc;
    *num_datatypes = dt->nd;
    *combiner = dt->combiner;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                           int *combiner)
{
    FERRY_API_ENTER();
    MPI_Count ni, na, nc, nd;
    int rc = get_envelope(datatype, num_integers ? &ni : NULL, num_addresses ? &na : NULL, &nc,
                          num_datatypes ? &nd : NULL, combiner, 0, "MPI_Type_get_envelope");
    if (rc)
        return rc;
    *num_integers = (int)ni;
    *num_addresses = (int)na;
    *num_datatypes = (int)nd;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_envelope_c = PMPI_Type_get_envelope_c
int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                             MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
    FERRY_API_ENTER();
    return get_envelope(datatype, num_integers, num_addresses, num_large_counts, num_datatypes, combiner, 1,
                        "MPI_Type_get_envelope_c");
}

static int get_contents(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                        MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                        MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                        MPI_Datatype array_of_datatypes[], int large, const char *fn)
{
    struct ferry_datatype *dt;
    int rc = check_type_query(datatype, &dt, fn);
    if (rc)
        return rc;
    if (dt->combiner == MPI_COMBINER_NAMED)
        return ferry_error(NULL, MPI_ERR_TYPE, fn, "%s is a predefined type (combiner MPI_COMBINER_NAMED)", dt->name);
    if ((rc = check_large_counts(dt, large, fn)))
        return rc;
    if (max_integers < dt->ni || max_addresses < dt->na || max_large_counts < dt->nc || max_datatypes < dt->nd)
        return ferry_error(NULL, MPI_ERR_ARG, fn,
                           "arrays too small: need %d integers, %d addresses, %d large counts, %d datatypes", dt->ni,
                           dt->na, dt->nc, dt->nd);
    if ((dt->ni && !array_of_integers) || (dt->na && !array_of_addresses) || (dt->nc && !array_of_large_counts) ||
        (dt->nd && !array_of_datatypes))
        return ferry_error(NULL, MPI_ERR_ARG, fn, "NULL array");
    if (dt->ni)
        memcpy(array_of_integers, dt->ints, (size_t)dt->ni * sizeof *dt->ints);
    if (dt->na)
        memcpy(array_of_addresses, dt->aints, (size_t)dt->na * sizeof *dt->aints);
    for (int i = 0; i < dt->nc; i++)   /* (the int form passes no array: nc is 0 then) */
        array_of_large_counts[i] = dt->counts[i];
    /* derived types come back as handles the caller must free (the same
     * objects, with one more user reference, as MPICH does) */
    for (int i = 0; i < dt->nd; i++) {
        array_of_datatypes[i] = dt->dtypes[i];
        ferry_dt_user_retain(dt->env_types[i]);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    FERRY_API_ENTER();
    return get_contents(datatype, max_integers, max_addresses, 0, max_datatypes, array_of_integers,
                        array_of_addresses, NULL, array_of_datatypes, 0, "MPI_Type_get_contents");
}

#pragma weak MPI_Type_get_contents_c = PMPI_Type_get_contents_c
int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    FERRY_API_ENTER();
    return get_contents(datatype, max_integers, max_addresses, max_large_counts, max_datatypes, array_of_integers,
                        array_of_addresses, array_of_large_counts, array_of_datatypes, 1, "MPI_Type_get_contents_c");
}

#pragma weak MPI_Type_set_name = PMPI_Type_set_name
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Type_set_name";
    struct ferry_datatype *dt;
    int rc = check_type_query(datatype, &dt, fn);
    if (rc)
        return rc;
    if (!type_name)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "type_name is NULL");
    char name[MPI_MAX_OBJECT_NAME];
    snprintf(name, sizeof name, "%s", type_name);
    ferry_dt_set_name(dt, name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_extent = PMPI_Type_extent
int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    FERRY_API_ENTER();
    struct ferry_datatype *dt;
    int rc = check_type_query(datatype, &dt, "MPI_Type_extent");
    if (rc)
        return rc;
    if ((rc = check_out(extent, "extent", "MPI_Type_extent")))
        return rc;
    *extent = dt->extent;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_lb = PMPI_Type_lb
int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    FERRY_API_ENTER();
    struct ferry_datatype *dt;
    int rc = check_type_query(datatype, &dt, "MPI_Type_lb");
    if (rc)
        return rc;
    if ((rc = check_out(displacement, "displacement", "MPI_Type_lb")))
        return rc;
    *displacement = dt->lb;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_ub = PMPI_Type_ub
int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    FERRY_API_ENTER();
    struct ferry_datatype *dt;
    int rc = check_type_query(datatype, &dt, "MPI_Type_ub");
    if (rc)
        return rc;
    if ((rc = check_out(displacement, "displacement", "MPI_Type_ub")))
        return rc;
    *displacement = dt->lb + dt->extent;
    return MPI_SUCCESS;
}

/* ---- size-matched types ----------------------------------------------------- */

/* The Fortran sized types, as MPICH answers Type_match_size. */
static MPI_Datatype sized(int typeclass, int size)
{
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        return size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4
               : size == 8 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    case MPI_TYPECLASS_REAL:
        return size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 : size == 16 ? MPI_REAL16 : MPI_DATATYPE_NULL;
    case MPI_TYPECLASS_COMPLEX:
        return size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16 : size == 32 ? MPI_COMPLEX32
               : MPI_DATATYPE_NULL;
    }
    return MPI_DATATYPE_NULL;
}

#pragma weak MPI_Type_match_size = PMPI_Type_match_size
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Type_match_size";
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!datatype)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "datatype is NULL");
    if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL && typeclass != MPI_TYPECLASS_COMPLEX)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "invalid type class %d", typeclass);
    MPI_Datatype t = sized(typeclass, size);
    if (t == MPI_DATATYPE_NULL)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "no type of class %d has %d bytes", typeclass, size);
    *datatype = t;
    return MPI_SUCCESS;
}

static int f90(int combiner, int p, int r, MPI_Datatype *newtype, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!newtype)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "newtype is NULL");
    int size = 0, extended = 0;
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        size = r < 0 ? 0 : r <= 2 ? 1 : r <= 4 ? 2 : r <= 9 ? 4 : r <= 18 ? 8 : 0;
    } else if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
        size = 0;
    } else {
        /* gfortran's SELECTED_REAL_KIND on x86-64: REAL(4) (6 digits, range
         * 37), REAL(8) (15, 307), REAL(10) (18, 4931: the x87 extended format
         * in 16 bytes, C's long double) and REAL(16) (33, 4931: IEEE quad).
         * REAL(10) and REAL(16) have the same size but not the same
         * arithmetic, so a reduction must know which one it is given. */
        int pp = p == MPI_UNDEFINED ? 0 : p, rr = r == MPI_UNDEFINED ? 0 : r;
        extended = pp >= 0 && rr >= 0 && (pp > 15 || rr > 307) && pp <= 18 && rr <= 4931;
        size = pp < 0 || rr < 0             ? 0
               : pp <= 6 && rr <= 37        ? 4
               : pp <= 15 && rr <= 307      ? 8
               : pp <= 33 && rr <= 4931     ? 16
                                            : 0;
        if (combiner == MPI_COMBINER_F90_COMPLEX)
            size *= 2;
    }
    int cls = combiner == MPI_COMBINER_F90_INTEGER ? MPI_TYPECLASS_INTEGER
              : combiner == MPI_COMBINER_F90_REAL  ? MPI_TYPECLASS_REAL
                                                   : MPI_TYPECLASS_COMPLEX;
    MPI_Datatype base = !size     ? MPI_DATATYPE_NULL
                        : extended ? (cls == MPI_TYPECLASS_REAL ? MPI_LONG_DOUBLE : MPI_C_LONG_DOUBLE_COMPLEX)
                                   : sized(cls, size);
    if (base == MPI_DATATYPE_NULL)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "no type with precision %d and range %d", p, r);
    *newtype = ferry_dt_f90(combiner, p, r, ferry_datatype_get(base))->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_f90_integer = PMPI_Type_create_f90_integer
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return f90(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, newtype, "MPI_Type_create_f90_integer");
}

#pragma weak MPI_Type_create_f90_real = PMPI_Type_create_f90_real
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return f90(MPI_COMBINER_F90_REAL, p, r, newtype, "MPI_Type_create_f90_real");
}

#pragma weak MPI_Type_create_f90_complex = PMPI_Type_create_f90_complex
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    FERRY_API_ENTER();
    return f90(MPI_COMBINER_F90_COMPLEX, p, r, newtype, "MPI_Type_create_f90_complex");
}
