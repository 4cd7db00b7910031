/* MPI_Pack / MPI_Unpack (the packed stream itself: the layout every message
 * uses on the wire), the external32 variants, and addresses. Each int form
 * and its MPI-4 large-count form (_c) share one helper counting in MPI_Count. */
#include "api/check.h"
#include <limits.h>
#include <stdint.h>
#include <strings.h>

static int pack_common(MPI_Comm comm, MPI_Count count, MPI_Datatype type, const void *userbuf, const void *position,
                       struct ferry_comm **c, struct ferry_datatype **dt, const char *fn)
{
    int rc;
    if ((rc = check_comm(comm, c, fn)) || (rc = check_count(*c, count, fn)) ||
        (rc = check_type(*c, type, dt, fn)) || (rc = check_bytes(*c, count, *dt, fn)) ||
        (rc = check_buf(*c, userbuf, count, *dt, fn)))
        return rc;
    if (!position)
        return ferry_error(*c, MPI_ERR_ARG, fn, "position is NULL");
    return MPI_SUCCESS;
}

static int pack(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                MPI_Count *position, MPI_Comm comm, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = pack_common(comm, incount, datatype, inbuf, position, &c, &dt, fn);
    if (rc)
        return rc;
    size_t bytes = ferry_dt_bytes(dt, (size_t)incount);
    if (*position < 0 || outsize < 0)
        return ferry_error(c, MPI_ERR_ARG, fn, "negative position %lld or outsize %lld", (long long)*position,
                           (long long)outsize);
    if (*position > outsize || bytes > (size_t)(outsize - *position))
        return ferry_error(c, MPI_ERR_TRUNCATE, fn, "%zu bytes do not fit at position %lld of a %lld-byte buffer",
                           bytes, (long long)*position, (long long)outsize);
    if (bytes && !outbuf)
        return ferry_error(c, MPI_ERR_BUFFER, fn, "outbuf is NULL");
    ferry_dt_pack(dt, inbuf, 0, (char *)outbuf + *position, bytes);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack = PMPI_Pack
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
              MPI_Comm comm)
{
    FERRY_API_ENTER();
    MPI_Count pos = position ? *position : 0;   /* stays within outsize, an int */
    int rc = pack(inbuf, incount, datatype, outbuf, outsize, position ? &pos : NULL, comm, "MPI_Pack");
    if (!rc)
        *position = (int)pos;
    return rc;
}

#pragma weak MPI_Pack_c = PMPI_Pack_c
int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                MPI_Count *position, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return pack(inbuf, incount, datatype, outbuf, outsize, position, comm, "MPI_Pack_c");
}

static int unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = pack_common(comm, outcount, datatype, outbuf, position, &c, &dt, fn);
    if (rc)
        return rc;
    size_t bytes = ferry_dt_bytes(dt, (size_t)outcount);
    if (*position < 0 || insize < 0)
        return ferry_error(c, MPI_ERR_ARG, fn, "negative position %lld or insize %lld", (long long)*position,
                           (long long)insize);
    if (*position > insize || bytes > (size_t)(insize - *position))
        return ferry_error(c, MPI_ERR_TRUNCATE, fn, "%zu bytes to unpack but only %lld left after position %lld",
                           bytes, (long long)(insize - *position), (long long)*position);
    if (bytes && !inbuf)
        return ferry_error(c, MPI_ERR_BUFFER, fn, "inbuf is NULL");
    ferry_dt_unpack(dt, outbuf, 0, (const char *)inbuf + *position, bytes);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Unpack = PMPI_Unpack
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm)
{
    FERRY_API_ENTER();
    MPI_Count pos = position ? *position : 0;   /* stays within insize, an int */
    int rc = unpack(inbuf, insize, position ? &pos : NULL, outbuf, outcount, datatype, comm, "MPI_Unpack");
    if (!rc)
        *position = (int)pos;
    return rc;
}

#pragma weak MPI_Unpack_c = PMPI_Unpack_c
int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return unpack(inbuf, insize, position, outbuf, outcount, datatype, comm, "MPI_Unpack_c");
}

/* Upper bound of the packed size; above max (INT_MAX for the int form) the
 * answer is MPI_UNDEFINED. */
static int pack_size(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size, MPI_Count max,
                     const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc;
    if ((rc = check_comm(comm, &c, fn)) || (rc = check_count(c, incount, fn)) ||
        (rc = check_type(c, datatype, &dt, fn)))
        return rc;
    if (!size)
        return ferry_error(c, MPI_ERR_ARG, fn, "size is NULL");
    size_t bytes;
    if (__builtin_mul_overflow(dt->size, (size_t)incount, &bytes))
        bytes = SIZE_MAX;
    *size = bytes > (size_t)max ? MPI_UNDEFINED : (MPI_Count)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_size = PMPI_Pack_size
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    FERRY_API_ENTER();
    MPI_Count n = 0;
    int rc = pack_size(incount, datatype, comm, size ? &n : NULL, INT_MAX, "MPI_Pack_size");
    if (!rc)
        *size = (int)n;
    return rc;
}

#pragma weak MPI_Pack_size_c = PMPI_Pack_size_c
int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    FERRY_API_ENTER();
    return pack_size(incount, datatype, comm, size, PTRDIFF_MAX, "MPI_Pack_size_c");
}

/* ---- external32 ------------------------------------------------------------- */

static int ext_common(const char *datarep, MPI_Count count, MPI_Datatype type, const void *userbuf,
                      struct ferry_datatype **dt, size_t *bytes, const char *fn)
{
    int rc;
    *bytes = 0;
    if ((rc = check_init(fn)) || (rc = check_count(NULL, count, fn)) || (rc = check_type(NULL, type, dt, fn)) ||
        (rc = check_buf(NULL, userbuf, count, *dt, fn)))
        return rc;
    if (!datarep || strcasecmp(datarep, "external32") != 0)
        return ferry_error(NULL, MPI_ERR_UNSUPPORTED_DATAREP, fn, "data representation '%s' (only \"external32\")",
                           datarep ? datarep : "(null)");
    if (__builtin_mul_overflow((*dt)->ext32_size, (size_t)count, bytes) || *bytes > (size_t)PTRDIFF_MAX)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "size overflows");
    return MPI_SUCCESS;
}

/* The int forms' position and sizes are MPI_Aint already: one helper each. */
static int pack_external(const char datarep[], const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void *outbuf, MPI_Aint outsize, MPI_Aint *position, const char *fn)
{
    struct ferry_datatype *dt;
    size_t bytes;
    int rc = ext_common(datarep, incount, datatype, inbuf, &dt, &bytes, fn);
    if (rc)
        return rc;
    if (!position || *position < 0 || outsize < 0)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "invalid position or outsize");
    if (*position > outsize || bytes > (size_t)(outsize - *position))
        return ferry_error(NULL, MPI_ERR_TRUNCATE, fn, "%zu bytes do not fit at position %ld of a %ld-byte buffer",
                           bytes, (long)*position, (long)outsize);
    if (bytes && !outbuf)
        return ferry_error(NULL, MPI_ERR_BUFFER, fn, "outbuf is NULL");
    ferry_dt_ext32_pack(dt, inbuf, (size_t)incount, (char *)outbuf + *position);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_external = PMPI_Pack_external
int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Aint outsize, MPI_Aint *position)
{
    FERRY_API_ENTER();
    return pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position, "MPI_Pack_external");
}

#pragma weak MPI_Pack_external_c = PMPI_Pack_external_c
int PMPI_Pack_external_c(const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    FERRY_API_ENTER();
    return pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position, "MPI_Pack_external_c");
}

static int unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
                           void *outbuf, MPI_Count outcount, MPI_Datatype datatype, const char *fn)
{
    struct ferry_datatype *dt;
    size_t bytes;
    int rc = ext_common(datarep, outcount, datatype, outbuf, &dt, &bytes, fn);
    if (rc)
        return rc;
    if (!position || *position < 0 || insize < 0)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "invalid position or insize");
    if (*position > insize || bytes > (size_t)(insize - *position))
        return ferry_error(NULL, MPI_ERR_TRUNCATE, fn, "%zu bytes to unpack but only %ld left after position %ld",
                           bytes, (long)(insize - *position), (long)*position);
    if (bytes && !inbuf)
        return ferry_error(NULL, MPI_ERR_BUFFER, fn, "inbuf is NULL");
    ferry_dt_ext32_unpack(dt, outbuf, (size_t)outcount, (const char *)inbuf + *position);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Unpack_external = PMPI_Unpack_external
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
                         int outcount, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype, "MPI_Unpack_external");
}

#pragma weak MPI_Unpack_external_c = PMPI_Unpack_external_c
int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position,
                           void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype, "MPI_Unpack_external_c");
}

static int pack_external_size(const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Aint *size,
                              const char *fn)
{
    struct ferry_datatype *dt;
    size_t bytes;
    int rc = ext_common(datarep, incount, datatype, (const void *)1, &dt, &bytes, fn);
    if (rc)
        return rc;
    if (!size)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "size is NULL");
    *size = (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size
int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    FERRY_API_ENTER();
    return pack_external_size(datarep, incount, datatype, size, "MPI_Pack_external_size");
}

#pragma weak MPI_Pack_external_size_c = PMPI_Pack_external_size_c
int PMPI_Pack_external_size_c(const char *datarep, MPI_Count incount, MPI_Datatype datatype, MPI_Count *size)
{
    FERRY_API_ENTER();
    return pack_external_size(datarep, incount, datatype, size, "MPI_Pack_external_size_c");
}

/* ---- addresses ---------------------------------------------------------------- */

#pragma weak MPI_Get_address = PMPI_Get_address
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    FERRY_API_ENTER();
    if (!address)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Get_address", "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

#pragma weak MPI_Address = PMPI_Address
int PMPI_Address(void *location, MPI_Aint *address)
{
    FERRY_API_ENTER();
    return PMPI_Get_address(location, address);
}
