/* MPI-IO data access (MPI-3.1 13.4): explicit offsets, individual and
 * shared file pointers; blocking, nonblocking, collective and split
 * collective forms; the MPI-4 large-count (_c) forms.
 *
 * Every form is one call of access() below. The data moves at once through
 * the io layer (ferry_view_rw); a nonblocking call returns a request that
 * is already complete (FERRY_REQ_IO) and carries the status, a split
 * collective's _begin does the access and its _end hands out the status.
 * Collective forms are collective: the ordered ones agree on positions
 * (an exclusive prefix sum of the sizes, one shared-pointer update), and a
 * collective write ends with a barrier so that what it wrote is there for
 * any process that reads after the call (on one node, POSIX makes writes
 * visible at once; a shared file system may still need File_sync). A
 * process whose arguments are wrong still takes part, with nothing to
 * move, so that the others do not wait for it forever. */
#include "api/file_internal.h"
#include "core/request.h"
#include <stdio.h>

enum where { AT, IND, SHARED, ORDERED };
enum form { BLOCKING, NONBLOCKING, BEGIN };

static int check_access(struct ferry_file *f, int write, enum where w, MPI_Offset offset, MPI_Count count,
                        MPI_Datatype type, const void *buf, struct ferry_datatype **dt, char *why, size_t whylen)
{
    *dt = ferry_datatype_get(type);
    if (count < 0) {
        snprintf(why, whylen, "negative count %lld", (long long)count);
        return MPI_ERR_COUNT;
    }
    if (!*dt) {
        snprintf(why, whylen, type == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                                                        : "0x%x is not a committed datatype", (unsigned)type);
        return MPI_ERR_TYPE;
    }
    size_t bytes;
    if (__builtin_mul_overflow((size_t)count, (*dt)->size, &bytes) || bytes > (size_t)PTRDIFF_MAX) {
        snprintf(why, whylen, "count %lld of a %zu-byte type overflows", (long long)count, (*dt)->size);
        return MPI_ERR_COUNT;
    }
    if (!buf && count > 0 && (*dt)->size > 0 && (*dt)->predefined) {
        snprintf(why, whylen, "NULL buffer with count %lld", (long long)count);
        return MPI_ERR_BUFFER;
    }
    if (write && (f->amode & MPI_MODE_RDONLY)) {
        snprintf(why, whylen, "the file is open MPI_MODE_RDONLY");
        return MPI_ERR_READ_ONLY;
    }
    if (!write && (f->amode & MPI_MODE_WRONLY)) {
        snprintf(why, whylen, "the file is open MPI_MODE_WRONLY");
        return MPI_ERR_ACCESS;
    }
    if ((w == AT || w == IND) && (f->amode & MPI_MODE_SEQUENTIAL)) {
        snprintf(why, whylen, "a file opened MPI_MODE_SEQUENTIAL has only the shared file pointer");
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (w == AT && offset < 0) {
        snprintf(why, whylen, "negative offset %lld", (long long)offset);
        return MPI_ERR_ARG;
    }
    if (bytes % f->etype->size) {
        snprintf(why, whylen, "%zu bytes are not a whole number of etypes (%zu bytes each)", bytes,
                 f->etype->size);
        return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

static int access(MPI_File fh, int write, enum where w, int coll, enum form form, MPI_Offset offset, void *buf,
                  MPI_Count count, MPI_Datatype type, MPI_Status *status, MPI_Request *request, const char *fn)
{
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc)
        return rc;
    if (form == NONBLOCKING && (rc = check_out(request, "request", fn)))
        return rc;
    if (form == BEGIN && f->split_active)
        return ferry_file_error(f, MPI_ERR_IO, fn, "a split collective is already active on this file");
    char why[400] = "";
    struct ferry_datatype *dt;
    int err = check_access(f, write, w, offset, count, type, buf, &dt, why, sizeof why);
    if (err)
        count = 0;
    size_t esize = f->etype->size;
    MPI_Offset n_etypes = err ? 0 : (MPI_Offset)(dt->size * (size_t)count / esize);

    /* where the access starts, in etypes of the view */
    MPI_Offset pos = 0;
    if (w == AT) {
        pos = offset;
    } else if (w == IND) {
        pos = f->fp_ind;
    } else if (w == SHARED) {
        if (!err && (rc = ferry_shfp_fetch_add(f, n_etypes, &pos))) {
            err = rc;
            snprintf(why, sizeof why, "cannot update the shared file pointer");
        }
    } else {
        long long prefix = 0, total = n_etypes;
        MPI_Offset base = 0;
        if ((rc = ferry_file_exscan_sum(f, n_etypes, &prefix)) ||
            (rc = ferry_file_allreduce(f, &total, 1, MPI_SUM)))
            return ferry_file_error(f, rc, fn, "collective agreement failed");
        long long b = 0;
        if (f->comm->rank == 0) {
            rc = ferry_shfp_fetch_add(f, total, &base);
            b = rc ? -(long long)rc : base;
        }
        if ((rc = ferry_file_bcast(f, &b, sizeof b, 0)))
            return ferry_file_error(f, rc, fn, "collective agreement failed");
        if (b < 0 && !err) {
            err = (int)-b;
            snprintf(why, sizeof why, "cannot update the shared file pointer");
        }
        pos = b + prefix;
    }

    size_t moved = 0;
    if (!err && count > 0) {
        err = ferry_view_rw(f, write, pos, buf, (size_t)count, dt, &moved, why, sizeof why);
        if (w == IND)
            f->fp_ind = pos + (MPI_Offset)((moved + esize - 1) / esize);
    }
    if (coll && write) {
        if ((rc = ferry_file_barrier(f)) && !err) {
            err = rc;
            snprintf(why, sizeof why, "collective synchronisation failed");
        }
    }
    if (err)
        return ferry_file_error(f, err, fn, "%s", why);

    MPI_Status st;
    ferry_status_set(&st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, moved, 0);
    if (form == NONBLOCKING) {
        struct ferry_request *r = ferry_request_new(FERRY_REQ_IO);
        ferry_request_start(r);
        r->status = st;
        ferry_request_complete(r);
        *request = r->handle;
    } else if (form == BEGIN) {
        f->split_active = 1;
        f->split_status = st;
    } else if (status != MPI_STATUS_IGNORE) {
        *status = st;
    }
    return MPI_SUCCESS;
}

static int split_end(MPI_File fh, MPI_Status *status, const char *fn)
{
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc)
        return rc;
    if (!f->split_active)
        return ferry_file_error(f, MPI_ERR_IO, fn, "no split collective was begun on this file");
    f->split_active = 0;
    if (status != MPI_STATUS_IGNORE)
        *status = f->split_status;
    return MPI_SUCCESS;
}

/* ---- the entry points ------------------------------------------------------------ */

#pragma weak MPI_File_read_at = PMPI_File_read_at
int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 0, BLOCKING, offset, buf, count, datatype, status, NULL,
                  "MPI_File_read_at");
}

#pragma weak MPI_File_read_at_c = PMPI_File_read_at_c
int PMPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 0, BLOCKING, offset, buf, count, datatype, status, NULL,
                  "MPI_File_read_at_c");
}

#pragma weak MPI_File_read_at_all = PMPI_File_read_at_all
int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 1, BLOCKING, offset, buf, count, datatype, status, NULL,
                  "MPI_File_read_at_all");
}

#pragma weak MPI_File_read_at_all_c = PMPI_File_read_at_all_c
int PMPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 1, BLOCKING, offset, buf, count, datatype, status, NULL,
                  "MPI_File_read_at_all_c");
}

#pragma weak MPI_File_iread_at = PMPI_File_iread_at
int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 0, NONBLOCKING, offset, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread_at");
}

#pragma weak MPI_File_iread_at_c = PMPI_File_iread_at_c
int PMPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 0, NONBLOCKING, offset, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread_at_c");
}

#pragma weak MPI_File_iread_at_all = PMPI_File_iread_at_all
int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 1, NONBLOCKING, offset, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread_at_all");
}

#pragma weak MPI_File_iread_at_all_c = PMPI_File_iread_at_all_c
int PMPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 1, NONBLOCKING, offset, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread_at_all_c");
}

#pragma weak MPI_File_read = PMPI_File_read
int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 0, BLOCKING, 0, buf, count, datatype, status, NULL,
                  "MPI_File_read");
}

#pragma weak MPI_File_read_c = PMPI_File_read_c
int PMPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 0, BLOCKING, 0, buf, count, datatype, status, NULL,
                  "MPI_File_read_c");
}

#pragma weak MPI_File_read_all = PMPI_File_read_all
int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 1, BLOCKING, 0, buf, count, datatype, status, NULL,
                  "MPI_File_read_all");
}

#pragma weak MPI_File_read_all_c = PMPI_File_read_all_c
int PMPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 1, BLOCKING, 0, buf, count, datatype, status, NULL,
                  "MPI_File_read_all_c");
}

#pragma weak MPI_File_iread = PMPI_File_iread
int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 0, NONBLOCKING, 0, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread");
}

#pragma weak MPI_File_iread_c = PMPI_File_iread_c
int PMPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 0, NONBLOCKING, 0, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread_c");
}

#pragma weak MPI_File_iread_all = PMPI_File_iread_all
int PMPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 1, NONBLOCKING, 0, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread_all");
}

#pragma weak MPI_File_iread_all_c = PMPI_File_iread_all_c
int PMPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 1, NONBLOCKING, 0, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread_all_c");
}

#pragma weak MPI_File_read_shared = PMPI_File_read_shared
int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, SHARED, 0, BLOCKING, 0, buf, count, datatype, status, NULL,
                  "MPI_File_read_shared");
}

#pragma weak MPI_File_read_shared_c = PMPI_File_read_shared_c
int PMPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, SHARED, 0, BLOCKING, 0, buf, count, datatype, status, NULL,
                  "MPI_File_read_shared_c");
}

#pragma weak MPI_File_iread_shared = PMPI_File_iread_shared
int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, SHARED, 0, NONBLOCKING, 0, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread_shared");
}

#pragma weak MPI_File_iread_shared_c = PMPI_File_iread_shared_c
int PMPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 0, SHARED, 0, NONBLOCKING, 0, buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iread_shared_c");
}

#pragma weak MPI_File_read_ordered = PMPI_File_read_ordered
int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, ORDERED, 1, BLOCKING, 0, buf, count, datatype, status, NULL,
                  "MPI_File_read_ordered");
}

#pragma weak MPI_File_read_ordered_c = PMPI_File_read_ordered_c
int PMPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 0, ORDERED, 1, BLOCKING, 0, buf, count, datatype, status, NULL,
                  "MPI_File_read_ordered_c");
}

#pragma weak MPI_File_read_at_all_begin = PMPI_File_read_at_all_begin
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 1, BEGIN, offset, buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_read_at_all_begin");
}

#pragma weak MPI_File_read_at_all_begin_c = PMPI_File_read_at_all_begin_c
int PMPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 0, AT, 1, BEGIN, offset, buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_read_at_all_begin_c");
}

#pragma weak MPI_File_read_all_begin = PMPI_File_read_all_begin
int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 1, BEGIN, 0, buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_read_all_begin");
}

#pragma weak MPI_File_read_all_begin_c = PMPI_File_read_all_begin_c
int PMPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 0, IND, 1, BEGIN, 0, buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_read_all_begin_c");
}

#pragma weak MPI_File_read_ordered_begin = PMPI_File_read_ordered_begin
int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 0, ORDERED, 1, BEGIN, 0, buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_read_ordered_begin");
}

#pragma weak MPI_File_read_ordered_begin_c = PMPI_File_read_ordered_begin_c
int PMPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 0, ORDERED, 1, BEGIN, 0, buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_read_ordered_begin_c");
}

#pragma weak MPI_File_write_at = PMPI_File_write_at
int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 0, BLOCKING, offset, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_at");
}

#pragma weak MPI_File_write_at_c = PMPI_File_write_at_c
int PMPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 0, BLOCKING, offset, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_at_c");
}

#pragma weak MPI_File_write_at_all = PMPI_File_write_at_all
int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 1, BLOCKING, offset, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_at_all");
}

#pragma weak MPI_File_write_at_all_c = PMPI_File_write_at_all_c
int PMPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 1, BLOCKING, offset, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_at_all_c");
}

#pragma weak MPI_File_iwrite_at = PMPI_File_iwrite_at
int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 0, NONBLOCKING, offset, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite_at");
}

#pragma weak MPI_File_iwrite_at_c = PMPI_File_iwrite_at_c
int PMPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 0, NONBLOCKING, offset, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite_at_c");
}

#pragma weak MPI_File_iwrite_at_all = PMPI_File_iwrite_at_all
int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 1, NONBLOCKING, offset, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite_at_all");
}

#pragma weak MPI_File_iwrite_at_all_c = PMPI_File_iwrite_at_all_c
int PMPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 1, NONBLOCKING, offset, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite_at_all_c");
}

#pragma weak MPI_File_write = PMPI_File_write
int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 0, BLOCKING, 0, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write");
}

#pragma weak MPI_File_write_c = PMPI_File_write_c
int PMPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 0, BLOCKING, 0, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_c");
}

#pragma weak MPI_File_write_all = PMPI_File_write_all
int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 1, BLOCKING, 0, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_all");
}

#pragma weak MPI_File_write_all_c = PMPI_File_write_all_c
int PMPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 1, BLOCKING, 0, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_all_c");
}

#pragma weak MPI_File_iwrite = PMPI_File_iwrite
int PMPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 0, NONBLOCKING, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite");
}

#pragma weak MPI_File_iwrite_c = PMPI_File_iwrite_c
int PMPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 0, NONBLOCKING, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite_c");
}

#pragma weak MPI_File_iwrite_all = PMPI_File_iwrite_all
int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 1, NONBLOCKING, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite_all");
}

#pragma weak MPI_File_iwrite_all_c = PMPI_File_iwrite_all_c
int PMPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 1, NONBLOCKING, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite_all_c");
}

#pragma weak MPI_File_write_shared = PMPI_File_write_shared
int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, SHARED, 0, BLOCKING, 0, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_shared");
}

#pragma weak MPI_File_write_shared_c = PMPI_File_write_shared_c
int PMPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, SHARED, 0, BLOCKING, 0, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_shared_c");
}

#pragma weak MPI_File_iwrite_shared = PMPI_File_iwrite_shared
int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, SHARED, 0, NONBLOCKING, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite_shared");
}

#pragma weak MPI_File_iwrite_shared_c = PMPI_File_iwrite_shared_c
int PMPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FERRY_API_ENTER();
    return access(fh, 1, SHARED, 0, NONBLOCKING, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, request,
                  "MPI_File_iwrite_shared_c");
}

#pragma weak MPI_File_write_ordered = PMPI_File_write_ordered
int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, ORDERED, 1, BLOCKING, 0, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_ordered");
}

#pragma weak MPI_File_write_ordered_c = PMPI_File_write_ordered_c
int PMPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FERRY_API_ENTER();
    return access(fh, 1, ORDERED, 1, BLOCKING, 0, (void *)buf, count, datatype, status, NULL,
                  "MPI_File_write_ordered_c");
}

#pragma weak MPI_File_write_at_all_begin = PMPI_File_write_at_all_begin
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 1, BEGIN, offset, (void *)buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_write_at_all_begin");
}

#pragma weak MPI_File_write_at_all_begin_c = PMPI_File_write_at_all_begin_c
int PMPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 1, AT, 1, BEGIN, offset, (void *)buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_write_at_all_begin_c");
}

#pragma weak MPI_File_write_all_begin = PMPI_File_write_all_begin
int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 1, BEGIN, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_write_all_begin");
}

#pragma weak MPI_File_write_all_begin_c = PMPI_File_write_all_begin_c
int PMPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 1, IND, 1, BEGIN, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_write_all_begin_c");
}

#pragma weak MPI_File_write_ordered_begin = PMPI_File_write_ordered_begin
int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 1, ORDERED, 1, BEGIN, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_write_ordered_begin");
}

#pragma weak MPI_File_write_ordered_begin_c = PMPI_File_write_ordered_begin_c
int PMPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    FERRY_API_ENTER();
    return access(fh, 1, ORDERED, 1, BEGIN, 0, (void *)buf, count, datatype, MPI_STATUS_IGNORE, NULL,
                  "MPI_File_write_ordered_begin_c");
}

#pragma weak MPI_File_read_at_all_end = PMPI_File_read_at_all_end
int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    FERRY_API_ENTER();
    (void)buf;
    return split_end(fh, status, "MPI_File_read_at_all_end");
}

#pragma weak MPI_File_read_all_end = PMPI_File_read_all_end
int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    FERRY_API_ENTER();
    (void)buf;
    return split_end(fh, status, "MPI_File_read_all_end");
}

#pragma weak MPI_File_read_ordered_end = PMPI_File_read_ordered_end
int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    FERRY_API_ENTER();
    (void)buf;
    return split_end(fh, status, "MPI_File_read_ordered_end");
}

#pragma weak MPI_File_write_at_all_end = PMPI_File_write_at_all_end
int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    FERRY_API_ENTER();
    (void)buf;
    return split_end(fh, status, "MPI_File_write_at_all_end");
}

#pragma weak MPI_File_write_all_end = PMPI_File_write_all_end
int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    FERRY_API_ENTER();
    (void)buf;
    return split_end(fh, status, "MPI_File_write_all_end");
}

#pragma weak MPI_File_write_ordered_end = PMPI_File_write_ordered_end
int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    FERRY_API_ENTER();
    (void)buf;
    return split_end(fh, status, "MPI_File_write_ordered_end");
}
