/* MPI-IO file manipulation (MPI-3.1 13.2), views (13.3), file pointers
 * (13.4.3-4 seeks and positions), consistency (13.6.1) and file error
 * handling (13.7). The data access calls are in file_rw.c; the work is done
 * by the io layer (io/file.h). Errors go to the file's handler; those of
 * File_open and File_delete, and invalid handles, to MPI_FILE_NULL's, which
 * is MPI_ERRORS_RETURN until the application changes it. */
#include "api/file_internal.h"
#include "api/comm_internal.h"
#include "core/info.h"
#include <stdio.h>
#include <string.h>

/* ---- open / close / delete ------------------------------------------------------- */

#pragma weak MPI_File_open = PMPI_File_open
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_open";
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, fn);
    if (rc)
        return rc;
    if (c->remote)
        return ferry_error(c, MPI_ERR_COMM, fn, "files are opened on intracommunicators only");
    if ((rc = check_out(fh, "fh", fn)))
        return rc;
    *fh = MPI_FILE_NULL;
    if (!filename)
        return ferry_file_error(NULL, MPI_ERR_BAD_FILE, fn, "filename is NULL");
    struct ferry_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = ferry_info_get(info)))
        return ferry_file_error(NULL, MPI_ERR_INFO, fn, "invalid info handle 0x%x", (unsigned)info);
    struct ferry_file *f;
    char why[512] = "";
    rc = ferry_file_open(c, filename, amode, in, &f, why, sizeof why);
    if (rc)
        return ferry_file_error(NULL, rc, fn, "%s", why);
    *fh = f;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_close = PMPI_File_close
int PMPI_File_close(MPI_File *fh)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_close";
    int rc = check_init(fn);
    if (rc || (rc = check_out(fh, "fh", fn)))
        return rc;
    struct ferry_file *f;
    if ((rc = check_file(*fh, &f, fn)))
        return rc;
    /* the handler outlives the file: an error in close still reaches it */
    MPI_Errhandler eh = f->errhandler;
    ferry_errhandler_retain(eh);
    char why[512] = "";
    rc = ferry_file_close(f, why, sizeof why);
    *fh = MPI_FILE_NULL;
    if (rc) {
        struct ferry_file shell = {.errhandler = eh};
        rc = ferry_file_error(&shell, rc, fn, "%s", why);
    }
    ferry_errhandler_release(eh);
    return rc;
}

#pragma weak MPI_File_delete = PMPI_File_delete
int PMPI_File_delete(const char *filename, MPI_Info info)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_delete";
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!filename)
        return ferry_file_error(NULL, MPI_ERR_BAD_FILE, fn, "filename is NULL");
    if (info != MPI_INFO_NULL && !ferry_info_get(info))
        return ferry_file_error(NULL, MPI_ERR_INFO, fn, "invalid info handle 0x%x", (unsigned)info);
    char why[512] = "";
    rc = ferry_file_delete(filename, why, sizeof why);
    return rc ? ferry_file_error(NULL, rc, fn, "%s", why) : MPI_SUCCESS;
}

/* ---- size, group, amode, info ---------------------------------------------------------- */

static int size_op(MPI_File fh, MPI_Offset size, int prealloc, const char *fn)
{
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc)
        return rc;
    /* collective: every process must take part even when its own
     * arguments are wrong, so the checks are agreed on */
    long long bad = size < 0 ? MPI_ERR_ARG : (f->amode & MPI_MODE_RDONLY) ? MPI_ERR_READ_ONLY
                  : (f->amode & MPI_MODE_SEQUENTIAL) ? MPI_ERR_UNSUPPORTED_OPERATION : 0;
    long long v[3] = {bad, size, -size};
    if ((rc = ferry_file_allreduce(f, v, 3, MPI_MAX)))
        return ferry_file_error(f, rc, fn, "collective agreement failed");
    if (v[0])
        return ferry_file_error(f, (int)v[0], fn, "%s", bad == MPI_ERR_ARG ? "negative size"
                                : bad == MPI_ERR_READ_ONLY ? "the file is open MPI_MODE_RDONLY"
                                : bad ? "not allowed on a file opened MPI_MODE_SEQUENTIAL"
                                      : "invalid arguments on another process");
    if (v[1] != -v[2])
        return ferry_file_error(f, MPI_ERR_NOT_SAME, fn, "the processes passed different sizes");
    rc = prealloc ? ferry_file_preallocate(f, size) : ferry_file_set_size(f, size);
    return rc ? ferry_file_error(f, rc, fn, "cannot %s the file to %lld bytes", prealloc ? "preallocate" : "resize",
                                 (long long)size)
              : MPI_SUCCESS;
}

#pragma weak MPI_File_set_size = PMPI_File_set_size
int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    FERRY_API_ENTER();
    return size_op(fh, size, 0, "MPI_File_set_size");
}

#pragma weak MPI_File_preallocate = PMPI_File_preallocate
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    FERRY_API_ENTER();
    return size_op(fh, size, 1, "MPI_File_preallocate");
}

#pragma weak MPI_File_get_size = PMPI_File_get_size
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_get_size";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc || (rc = check_out(size, "size", fn)))
        return rc;
    rc = ferry_file_size(f, size);
    return rc ? ferry_file_error(f, rc, fn, "fstat failed") : MPI_SUCCESS;
}

#pragma weak MPI_File_get_group = PMPI_File_get_group
int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    FERRY_API_ENTER();
    struct ferry_file *f;
    int rc = check_file(fh, &f, "MPI_File_get_group");
    if (rc || (rc = check_out(group, "group", "MPI_File_get_group")))
        return rc;
    f->comm->group->refs++;   /* the caller frees it with Group_free */
    *group = f->comm->group->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_amode = PMPI_File_get_amode
int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    FERRY_API_ENTER();
    struct ferry_file *f;
    int rc = check_file(fh, &f, "MPI_File_get_amode");
    if (rc || (rc = check_out(amode, "amode", "MPI_File_get_amode")))
        return rc;
    *amode = f->amode;
    return MPI_SUCCESS;
}

/* Hints are remembered as given and handed back by File_get_info; Ferry
 * acts on none of them (MPI-3.1 13.2.8 lets it ignore any). */
static int add_hints(struct ferry_file *f, MPI_Info info, const char *fn)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    struct ferry_info *in = ferry_info_get(info);
    if (!in)
        return ferry_file_error(f, MPI_ERR_INFO, fn, "invalid info handle 0x%x", (unsigned)info);
    if (!f->info && in->n)
        f->info = ferry_info_new();
    for (int i = 0; i < in->n; i++)
        ferry_info_set(f->info, in->keys[i], in->vals[i]);
    return MPI_SUCCESS;
}

#pragma weak MPI_File_set_info = PMPI_File_set_info
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    FERRY_API_ENTER();
    struct ferry_file *f;
    int rc = check_file(fh, &f, "MPI_File_set_info");
    if (rc)
        return rc;
    return add_hints(f, info, "MPI_File_set_info");
}

#pragma weak MPI_File_get_info = PMPI_File_get_info
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    FERRY_API_ENTER();
    struct ferry_file *f;
    int rc = check_file(fh, &f, "MPI_File_get_info");
    if (rc || (rc = check_out(info_used, "info_used", "MPI_File_get_info")))
        return rc;
    *info_used = (f->info ? ferry_info_dup(f->info) : ferry_info_new())->handle;
    return MPI_SUCCESS;
}

/* User data representations (MPI-3.1 13.5.3). Registered names are kept
 * for the life of the process (MPI has no way to unregister one); a second
 * registration of a name, or of a predefined one, is MPI_ERR_DUP_DATAREP.
 * A view may use a registered representation whose conversion functions
 * are both MPI_CONVERSION_FN_NULL: the data then goes to the file as it is
 * in memory. Conversion functions themselves are not applied yet, so a view
 * with a representation that has them is MPI_ERR_UNSUPPORTED_DATAREP. */
struct datarep {
    char name[MPI_MAX_DATAREP_STRING];
    int converts;   /* has a read or write conversion function */
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
    struct datarep *next;
};
static struct datarep *datareps;

static int predefined_datarep(const char *name)
{
    return !strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32");
}

static const struct datarep *find_datarep(const char *name)
{
    for (const struct datarep *d = datareps; d; d = d->next)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

/* ---- views ------------------------------------------------------------------------ */

#pragma weak MPI_File_set_view = PMPI_File_set_view
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
                       MPI_Info info)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_set_view";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc)
        return rc;
    /* local checks first, then agreement, so that a mistake on one process
     * does not leave the others waiting in the collective */
    struct ferry_datatype *et = ferry_datatype_get(etype), *ft = ferry_datatype_get(filetype);
    int bad = 0, writable = !(f->amode & MPI_MODE_RDONLY);
    const struct datarep *user = datarep && !predefined_datarep(datarep) ? find_datarep(datarep) : NULL;
    char why[256] = "";
    if (!et || !ft) {
        bad = MPI_ERR_TYPE;
        snprintf(why, sizeof why, "%s is not a committed datatype", !et ? "etype" : "filetype");
    } else if (et->size == 0 || ft->size % et->size) {
        bad = MPI_ERR_TYPE;
        snprintf(why, sizeof why, "the filetype's size (%zu) is not a multiple of the etype's (%zu)", ft->size,
                 et->size);
    } else if (!ferry_view_type_ok(et, writable) || !ferry_view_type_ok(ft, writable)) {
        /* MPICH reports this as MPI_ERR_IO; programs written for it test that */
        bad = MPI_ERR_IO;
        snprintf(why, sizeof why, "the %s's typemap has negative, decreasing or (writable file) overlapping displacements",
                 !ferry_view_type_ok(et, writable) ? "etype" : "filetype");
    } else if (!datarep) {
        bad = MPI_ERR_ARG;
        snprintf(why, sizeof why, "datarep is NULL");
    } else if (!predefined_datarep(datarep) && !user) {
        bad = MPI_ERR_UNSUPPORTED_DATAREP;
        snprintf(why, sizeof why, "data representation '%s' is neither predefined (\"native\", \"internal\", "
                 "\"external32\") nor registered", datarep);
    } else if (user && user->converts) {
        bad = MPI_ERR_UNSUPPORTED_DATAREP;
        snprintf(why, sizeof why, "data representation '%s': conversion functions are not supported (only "
                 "MPI_CONVERSION_FN_NULL)", datarep);
    } else if (!strcmp(datarep, "external32") && (!ferry_view_ext32_ok(et) || !ferry_view_ext32_ok(ft))) {
        bad = MPI_ERR_UNSUPPORTED_DATAREP;
        snprintf(why, sizeof why, "external32: the %s's elements differ in size from external32's",
                 !ferry_view_ext32_ok(et) ? "etype" : "filetype");
    } else if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT) {
        bad = MPI_ERR_ARG;
        snprintf(why, sizeof why, "negative displacement %lld", (long long)disp);
    } else if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL)) {
        bad = MPI_ERR_ARG;
        snprintf(why, sizeof why, "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL");
    } else if (info != MPI_INFO_NULL && !ferry_info_get(info)) {
        bad = MPI_ERR_INFO;
        snprintf(why, sizeof why, "invalid info handle 0x%x", (unsigned)info);
    }
    long long v[3] = {bad, et ? (long long)et->size : 0, et ? -(long long)et->size : 0};
    if ((rc = ferry_file_allreduce(f, v, 3, MPI_MAX)))
        return ferry_file_error(f, rc, fn, "collective agreement failed");
    if (v[0])
        return ferry_file_error(f, (int)v[0], fn, "%s", bad ? why : "invalid arguments on another process");
    if (v[1] != -v[2])
        return ferry_file_error(f, MPI_ERR_NOT_SAME, fn, "the processes passed etypes of different sizes");
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        /* sequential files: the view starts where the shared pointer is */
        MPI_Offset cur = 0;
        if ((rc = ferry_shfp_fetch_add(f, 0, &cur)))
            return ferry_file_error(f, rc, fn, "cannot read the shared file pointer");
        disp = ferry_view_byte_offset(f, cur);
    }
    ferry_view_set(f, disp, et, ft, datarep);
    /* the shared pointer too goes back to the view's start (MPI-3.1 13.3);
     * everyone has read it (above) before anyone resets it */
    if ((rc = ferry_file_barrier(f)))
        return ferry_file_error(f, rc, fn, "collective agreement failed");
    if (f->comm->rank == 0 && (rc = ferry_shfp_set(f, 0)))
        return ferry_file_error(f, rc, fn, "cannot reset the shared file pointer");
    if ((rc = ferry_file_barrier(f)))
        return ferry_file_error(f, rc, fn, "collective agreement failed");
    return add_hints(f, info, fn);
}

#pragma weak MPI_File_get_view = PMPI_File_get_view
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_get_view";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc || (rc = check_out(disp, "disp", fn)) || (rc = check_out(etype, "etype", fn)) ||
        (rc = check_out(filetype, "filetype", fn)) || (rc = check_out(datarep, "datarep", fn)))
        return rc;
    *disp = f->disp;
    /* derived types come back as new references the caller frees
     * (MPI-3.1 13.3); predefined ones as they are */
    *etype = f->etype->handle;
    *filetype = f->filetype->handle;
    if (!f->etype->predefined)
        ferry_dt_user_retain(f->etype);
    if (!f->filetype->predefined)
        ferry_dt_user_retain(f->filetype);
    strcpy(datarep, f->datarep);
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_type_extent = PMPI_File_get_type_extent
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_get_type_extent";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc || (rc = check_out(extent, "extent", fn)))
        return rc;
    struct ferry_datatype *dt = ferry_datatype_get_any(datatype);
    if (!dt)
        return ferry_file_error(f, MPI_ERR_TYPE, fn, "invalid datatype handle 0x%x", (unsigned)datatype);
    *extent = dt->extent;   /* "native": the file extent is the memory extent */
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_type_extent_c = PMPI_File_get_type_extent_c
int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    FERRY_API_ENTER();
    MPI_Aint e = 0;
    int rc = check_out(extent, "extent", "MPI_File_get_type_extent_c");
    if (rc || (rc = PMPI_File_get_type_extent(fh, datatype, &e)))
        return rc;
    *extent = e;
    return MPI_SUCCESS;
}

static int register_datarep(const char *datarep, int converts, MPI_Datarep_extent_function *extent_fn,
                            void *extra_state, const char *fn)
{
    FERRY_API_ENTER();
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!datarep || !*datarep || strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return ferry_file_error(NULL, MPI_ERR_ARG, fn, "data representation name is %s",
                                !datarep ? "NULL" : !*datarep ? "empty" : "longer than MPI_MAX_DATAREP_STRING - 1");
    if (!extent_fn)
        return ferry_file_error(NULL, MPI_ERR_ARG, fn, "dtype_file_extent_fn is NULL");
    if (predefined_datarep(datarep) || find_datarep(datarep))
        return ferry_file_error(NULL, MPI_ERR_DUP_DATAREP, fn, "data representation '%s' is %s", datarep,
                                predefined_datarep(datarep) ? "predefined" : "already registered");
    struct datarep *d = ferry_xcalloc(1, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", datarep);
    d->converts = converts;
    d->extent_fn = extent_fn;
    d->extra_state = extra_state;
    d->next = datareps;
    datareps = d;
    return MPI_SUCCESS;
}

#pragma weak MPI_Register_datarep = PMPI_Register_datarep
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_datarep(datarep, read_conversion_fn != MPI_CONVERSION_FN_NULL ||
                                         write_conversion_fn != MPI_CONVERSION_FN_NULL,
                            dtype_file_extent_fn, extra_state, "MPI_Register_datarep");
}

#pragma weak MPI_Register_datarep_c = PMPI_Register_datarep_c
int PMPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_datarep(datarep, read_conversion_fn != MPI_CONVERSION_FN_NULL_C ||
                                         write_conversion_fn != MPI_CONVERSION_FN_NULL_C,
                            dtype_file_extent_fn, extra_state, "MPI_Register_datarep_c");
}

/* ---- file pointers ---------------------------------------------------------------- */

/* The new position for a seek, in etypes; MPI_ERR_ARG when negative. */
static int seek_target(struct ferry_file *f, MPI_Offset offset, int whence, MPI_Offset cur, MPI_Offset *out,
                       const char *fn)
{
    MPI_Offset base;
    if (whence == MPI_SEEK_SET)
        base = 0;
    else if (whence == MPI_SEEK_CUR)
        base = cur;
    else if (whence == MPI_SEEK_END) {
        int rc = ferry_view_eof_offset(f, &base);
        if (rc)
            return ferry_file_error(f, rc, fn, "cannot find the end of the file");
    } else
        return ferry_file_error(f, MPI_ERR_ARG, fn, "invalid whence %d", whence);
    if (base + offset < 0)
        return ferry_file_error(f, MPI_ERR_ARG, fn, "the seek leads to the negative offset %lld",
                                (long long)(base + offset));
    *out = base + offset;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_seek = PMPI_File_seek
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_seek";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc)
        return rc;
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return ferry_file_error(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                "no individual file pointer on a file opened MPI_MODE_SEQUENTIAL");
    MPI_Offset to = 0;
    if ((rc = seek_target(f, offset, whence, f->fp_ind, &to, fn)))
        return rc;
    f->fp_ind = to;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_position = PMPI_File_get_position
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_get_position";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc || (rc = check_out(offset, "offset", fn)))
        return rc;
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return ferry_file_error(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                "no individual file pointer on a file opened MPI_MODE_SEQUENTIAL");
    *offset = f->fp_ind;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_byte_offset = PMPI_File_get_byte_offset
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_get_byte_offset";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc || (rc = check_out(disp, "disp", fn)))
        return rc;
    if (offset < 0)
        return ferry_file_error(f, MPI_ERR_ARG, fn, "negative offset %lld", (long long)offset);
    *disp = ferry_view_byte_offset(f, offset);
    return MPI_SUCCESS;
}

#pragma weak MPI_File_seek_shared = PMPI_File_seek_shared
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_seek_shared";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc)
        return rc;
    /* collective, and the arguments must agree (MPI-3.1 13.4.4) */
    long long v[4] = {0, offset, -offset, whence};
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        v[0] = MPI_ERR_ARG;
    long long w[2] = {whence, -whence};
    if ((rc = ferry_file_allreduce(f, v, 3, MPI_MAX)) || (rc = ferry_file_allreduce(f, w, 2, MPI_MAX)))
        return ferry_file_error(f, rc, fn, "collective agreement failed");
    if (v[0])
        return ferry_file_error(f, (int)v[0], fn, "invalid whence %d (here or on another process)", whence);
    if (v[1] != -v[2] || w[0] != -w[1])
        return ferry_file_error(f, MPI_ERR_NOT_SAME, fn, "the processes passed different offsets or whence");
    /* rank 0 moves it; everyone has seen the old value before (SEEK_CUR) */
    long long err = 0;
    if (f->comm->rank == 0) {
        MPI_Offset cur = 0, to = 0;
        if ((rc = ferry_shfp_fetch_add(f, 0, &cur)))
            err = rc;
        else if (whence == MPI_SEEK_END && (rc = ferry_view_eof_offset(f, &cur)))
            err = rc;
        else {
            to = (whence == MPI_SEEK_SET ? 0 : cur) + offset;
            if (to < 0)
                err = MPI_ERR_ARG;
            else if ((rc = ferry_shfp_set(f, to)))
                err = rc;
        }
    }
    if ((rc = ferry_file_allreduce(f, &err, 1, MPI_MAX)))
        return ferry_file_error(f, rc, fn, "collective agreement failed");
    if (err)
        return ferry_file_error(f, (int)err, fn, "%s", err == MPI_ERR_ARG ? "the seek leads to a negative offset"
                                                                          : "cannot move the shared file pointer");
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_position_shared = PMPI_File_get_position_shared
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_get_position_shared";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc || (rc = check_out(offset, "offset", fn)))
        return rc;
    rc = ferry_shfp_fetch_add(f, 0, offset);
    return rc ? ferry_file_error(f, rc, fn, "cannot read the shared file pointer") : MPI_SUCCESS;
}

/* ---- consistency ------------------------------------------------------------------ */

#pragma weak MPI_File_set_atomicity = PMPI_File_set_atomicity
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_set_atomicity";
    struct ferry_file *f;
    int rc = check_file(fh, &f, fn);
    if (rc)
        return rc;
    rc = ferry_file_same(f, flag ? 1 : 0);
    if (rc)
        return ferry_file_error(f, rc, fn, "%s", rc == MPI_ERR_NOT_SAME ? "the processes passed different flags"
                                                                       : "collective agreement failed");
    f->atomic = flag ? 1 : 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_atomicity = PMPI_File_get_atomicity
int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    FERRY_API_ENTER();
    struct ferry_file *f;
    int rc = check_file(fh, &f, "MPI_File_get_atomicity");
    if (rc || (rc = check_out(flag, "flag", "MPI_File_get_atomicity")))
        return rc;
    *flag = f->atomic;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_sync = PMPI_File_sync
int PMPI_File_sync(MPI_File fh)
{
    FERRY_API_ENTER();
    struct ferry_file *f;
    int rc = check_file(fh, &f, "MPI_File_sync");
    if (rc)
        return rc;
    if (f->amode & MPI_MODE_RDONLY) {
        /* nothing to flush; still collective */
        rc = ferry_file_barrier(f);
    } else {
        rc = ferry_file_sync(f);
    }
    return rc ? ferry_file_error(f, rc, "MPI_File_sync", "fsync failed") : MPI_SUCCESS;
}

/* ---- error handlers ----------------------------------------------------------------- */

#pragma weak MPI_File_create_errhandler = PMPI_File_create_errhandler
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler)
{
    FERRY_API_ENTER();
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void *)file_errhandler_fn, errhandler);
}

#pragma weak MPI_File_set_errhandler = PMPI_File_set_errhandler
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_set_errhandler";
    int rc = check_init(fn);
    if (rc)
        return rc;
    struct ferry_file *f = NULL;
    if (file != MPI_FILE_NULL && (rc = check_file(file, &f, fn)))
        return rc;
    if (!ferry_errhandler_valid(errhandler))
        return ferry_file_error(f, MPI_ERR_ARG, fn, "invalid error handler 0x%x", (unsigned)errhandler);
    if (!f) {
        ferry_file_set_default_errhandler(errhandler);
        return MPI_SUCCESS;
    }
    ferry_errhandler_retain(errhandler);
    ferry_errhandler_release(f->errhandler);
    f->errhandler = errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_errhandler = PMPI_File_get_errhandler
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_get_errhandler";
    int rc = check_init(fn);
    if (rc || (rc = check_out(errhandler, "errhandler", fn)))
        return rc;
    struct ferry_file *f = NULL;
    if (file != MPI_FILE_NULL && (rc = check_file(file, &f, fn)))
        return rc;
    MPI_Errhandler eh = f ? f->errhandler : ferry_file_default_errhandler();
    ferry_errhandler_retain(eh);   /* the caller frees it with Errhandler_free */
    *errhandler = eh;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_call_errhandler = PMPI_File_call_errhandler
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_File_call_errhandler";
    int rc = check_init(fn);
    if (rc)
        return rc;
    struct ferry_file *f = NULL;
    if (fh != MPI_FILE_NULL && (rc = check_file(fh, &f, fn)))
        return rc;
    ferry_file_error(f, errorcode, fn, "error raised by the application");
    return MPI_SUCCESS;
}
