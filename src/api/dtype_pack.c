/* MPI_Pack / MPI_Unpack (the packed stream itself: the layout every message
 * uses on the wire), the external32 variants, and addresses. */
#include "api/check.h"
#include <limits.h>
#include <stdint.h>
#include <strings.h>

static int pack_common(MPI_Comm comm, int count, MPI_Datatype type, const void *userbuf, const void *position,
                       struct ferry_comm **c, struct ferry_datatype **dt, const char *fn)
{
    int rc;
    if ((rc = check_comm(comm, c, fn)) || (rc = check_count(*c, count, fn)) ||
        (rc = check_type(*c, type, dt, fn)) || (rc = check_buf(*c, userbuf, count, *dt, fn)))
        return rc;
    if (!position)
        return ferry_error(*c, MPI_ERR_ARG, fn, "position is NULL");
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack = PMPI_Pack
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
              MPI_Comm comm)
{
    static const char fn[] = "MPI_Pack";
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = pack_common(comm, incount, datatype, inbuf, position, &c, &dt, fn);
    if (rc)
        return rc;
    size_t bytes = ferry_dt_bytes(dt, (size_t)incount);
    if (*position < 0 || outsize < 0)
        return ferry_error(c, MPI_ERR_ARG, fn, "negative position %d or outsize %d", *position, outsize);
    if (*position > outsize || bytes > (size_t)(outsize - *position))
        return ferry_error(c, MPI_ERR_TRUNCATE, fn, "%zu bytes do not fit at position %d of a %d-byte buffer", bytes,
                           *position, outsize);
    if (bytes && !outbuf)
        return ferry_error(c, MPI_ERR_BUFFER, fn, "outbuf is NULL");
    ferry_dt_pack(dt, inbuf, 0, (char *)outbuf + *position, bytes);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Unpack = PMPI_Unpack
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm)
{
    static const char fn[] = "MPI_Unpack";
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = pack_common(comm, outcount, datatype, outbuf, position, &c, &dt, fn);
    if (rc)
        return rc;
    size_t bytes = ferry_dt_bytes(dt, (size_t)outcount);
    if (*position < 0 || insize < 0)
        return ferry_error(c, MPI_ERR_ARG, fn, "negative position %d or insize %d", *position, insize);
    if (*position > insize || bytes > (size_t)(insize - *position))
        return ferry_error(c, MPI_ERR_TRUNCATE, fn, "%zu bytes to unpack but only %d left after position %d", bytes,
                           insize - *position, *position);
    if (bytes && !inbuf)
        return ferry_error(c, MPI_ERR_BUFFER, fn, "inbuf is NULL");
    ferry_dt_unpack(dt, outbuf, 0, (const char *)inbuf + *position, bytes);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_size = PMPI_Pack_size
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    static const char fn[] = "MPI_Pack_size";
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc;
    if ((rc = check_comm(comm, &c, fn)) || (rc = check_count(c, incount, fn)) ||
        (rc = check_type(c, datatype, &dt, fn)))
        return rc;
    if (!size)
        return ferry_error(c, MPI_ERR_ARG, fn, "size is NULL");
    size_t bytes = ferry_dt_bytes(dt, (size_t)incount);
    if (dt->size && bytes / dt->size != (size_t)incount)
        bytes = SIZE_MAX;
    *size = bytes > INT_MAX ? MPI_UNDEFINED : (int)bytes;
    return MPI_SUCCESS;
}

/* ---- external32 ------------------------------------------------------------- */

static int ext_common(const char *datarep, int count, MPI_Datatype type, const void *userbuf,
                      struct ferry_datatype **dt, size_t *bytes, const char *fn)
{
    int rc = check_init(fn);
    if (rc || (rc = check_count(NULL, count, fn)) || (rc = check_type(NULL, type, dt, fn)) ||
        (rc = check_buf(NULL, userbuf, count, *dt, fn)))
        return rc;
    if (!datarep || strcasecmp(datarep, "external32") != 0)
        return ferry_error(NULL, MPI_ERR_UNSUPPORTED_DATAREP, fn, "data representation '%s' (only \"external32\")",
                           datarep ? datarep : "(null)");
    if (__builtin_mul_overflow((*dt)->ext32_size, (size_t)count, bytes))
        return ferry_error(NULL, MPI_ERR_ARG, fn, "size overflows");
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_external = PMPI_Pack_external
int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Aint outsize, MPI_Aint *position)
{
    static const char fn[] = "MPI_Pack_external";
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

#pragma weak MPI_Unpack_external = PMPI_Unpack_external
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
                         int outcount, MPI_Datatype datatype)
{
    static const char fn[] = "MPI_Unpack_external";
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

#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size
int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    static const char fn[] = "MPI_Pack_external_size";
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

/* ---- addresses ---------------------------------------------------------------- */

#pragma weak MPI_Get_address = PMPI_Get_address
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    if (!address)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Get_address", "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

#pragma weak MPI_Address = PMPI_Address
int PMPI_Address(void *location, MPI_Aint *address)
{
    return PMPI_Get_address(location, address);
}
