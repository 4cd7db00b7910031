/* Opening, closing and deleting files; the list of open files; the file
 * error handlers; collective helpers on a file's private communicator; the
 * file size. See file.h. */
#include "io/file.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/info.h"
#include "core/op.h"
#include "core/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct ferry_file *open_files;
/* MPI-3.1 13.7: the default file error handler is MPI_ERRORS_RETURN, and it
 * is the one MPI_FILE_NULL carries. */
static MPI_Errhandler default_eh = MPI_ERRORS_RETURN;

struct ferry_file *ferry_file_lookup(MPI_File h)
{
    for (struct ferry_file *f = open_files; f; f = f->next)
        if (f == h)
            return f;
    return NULL;
}

MPI_Errhandler ferry_file_default_errhandler(void)
{
    return default_eh;
}

void ferry_file_set_default_errhandler(MPI_Errhandler eh)
{
    ferry_errhandler_retain(eh);
    ferry_errhandler_release(default_eh);
    default_eh = eh;
}

int ferry_file_error(struct ferry_file *f, int cls, const char *fn, const char *fmt, ...)
{
    MPI_Errhandler eh = f ? f->errhandler : default_eh;
    if (eh == MPI_ERRORS_RETURN)
        return cls;
    MPI_Comm_errhandler_function *uf = ferry_errhandler_fn(eh);
    if (uf) {
        /* every user handler has the (handle *, int *, ...) shape; a file
         * handler's first argument is an MPI_File * */
        MPI_File h = f ? f : MPI_FILE_NULL;
        int code = cls;
        ((MPI_File_errhandler_function *)(void *)uf)(&h, &code, fn);
        /* the call returns the code as the handler leaves it (as MPICH's
         * ROMIO does): a handler may set it to MPI_SUCCESS */
        return code;
    }
    va_list ap;
    va_start(ap, fmt);
    ferry_error_abortv(cls, fn, fmt, ap);
}

const char *ferry_file_path(const char *filename)
{
    /* ROMIO lets a name choose the file system driver ("ufs:name"); Ferry
     * has one, POSIX, and accepts those prefixes for portability */
    static const char *const prefixes[] = {"ufs:", "nfs:", "file:", "posix:"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(filename, prefixes[i], strlen(prefixes[i])))
            return filename + strlen(prefixes[i]);
    return filename;
}

/* ---- collectives on a communicator (the private one once it exists) ---- */

static int comm_allreduce(struct ferry_comm *c, long long *v, int n, MPI_Op op)
{
    struct ferry_coll_args a = {0};
    a.sbuf = MPI_IN_PLACE;
    a.rbuf = v;
    a.rcount = (size_t)n;
    a.rdt = ferry_datatype_get(MPI_LONG_LONG);
    a.op = ferry_op_get(op);
    return ferry_coll(FERRY_COLL_ALLREDUCE, c, &a, NULL);
}

int ferry_file_allreduce(struct ferry_file *f, long long *v, int n, MPI_Op op)
{
    return comm_allreduce(f->comm, v, n, op);
}

int ferry_file_bcast(struct ferry_file *f, void *buf, size_t bytes, int root)
{
    struct ferry_coll_args a = {0};
    a.rbuf = buf;
    a.rcount = bytes;
    a.rdt = ferry_datatype_get(MPI_BYTE);
    a.root = root;
    return ferry_coll(FERRY_COLL_BCAST, f->comm, &a, NULL);
}

int ferry_file_exscan_sum(struct ferry_file *f, long long mine, long long *prefix)
{
    struct ferry_coll_args a = {0};
    long long out = 0;
    a.sbuf = &mine;
    a.rbuf = &out;
    a.rcount = 1;
    a.rdt = ferry_datatype_get(MPI_LONG_LONG);
    a.op = ferry_op_get(MPI_SUM);
    int rc = ferry_coll(FERRY_COLL_EXSCAN, f->comm, &a, NULL);
    *prefix = f->comm->rank == 0 ? 0 : out;   /* Exscan leaves rank 0's undefined */
    return rc;
}

int ferry_file_barrier(struct ferry_file *f)
{
    struct ferry_coll_args a = {0};
    return ferry_coll(FERRY_COLL_BARRIER, f->comm, &a, NULL);
}

int ferry_file_same(struct ferry_file *f, long long v)
{
    long long mm[2] = {v, -v};
    int rc = ferry_file_allreduce(f, mm, 2, MPI_MAX);
    if (rc)
        return rc;
    return mm[0] == -mm[1] ? MPI_SUCCESS : MPI_ERR_NOT_SAME;
}

/* ---- open / close / delete -------------------------------------------------- */

static int amode_check(int amode, char *why, size_t whylen)
{
    int rw = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0) + (amode & MPI_MODE_RDWR ? 1 : 0);
    const int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE |
                      MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;
    if (amode & ~known)
        snprintf(why, whylen, "access mode 0x%x has unknown bits", amode);
    else if (rw != 1)
        snprintf(why, whylen, "access mode 0x%x must have exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR, "
                 "MPI_MODE_WRONLY", amode);
    else if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        snprintf(why, whylen, "MPI_MODE_RDONLY cannot be combined with MPI_MODE_%s",
                 amode & MPI_MODE_CREATE ? "CREATE" : "EXCL");
    else if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        snprintf(why, whylen, "MPI_MODE_RDWR cannot be combined with MPI_MODE_SEQUENTIAL");
    else
        return MPI_SUCCESS;
    return MPI_ERR_AMODE;
}

static void file_free(struct ferry_file *f)
{
    ferry_shfp_close(f);
    if (f->fd >= 0)
        close(f->fd);
    ferry_view_release(f);
    if (f->info)
        ferry_info_free(f->info);
    ferry_errhandler_release(f->errhandler);
    if (f->comm)
        ferry_comm_release(f->comm);
    free(f->filename);
    free(f->path);
    free(f);
}

int ferry_file_open(struct ferry_comm *comm, const char *filename, int amode, struct ferry_info *info,
                    struct ferry_file **out, char *why, size_t whylen)
{
    *out = NULL;
    struct ferry_file *f = ferry_xcalloc(1, sizeof *f);
    f->fd = -1;
    f->shfp.fd = -1;
    f->amode = amode;
    f->filename = ferry_xstrdup(filename);
    f->path = ferry_xstrdup(ferry_file_path(filename));
    f->errhandler = default_eh;   /* a new file inherits MPI_FILE_NULL's handler */
    ferry_errhandler_retain(f->errhandler);

    /* the private communicator first, so that everything after it runs in
     * contexts nobody else uses */
    int rc = ferry_comm_dup_private(comm, MPI_ERRORS_RETURN, &f->comm);
    if (rc) {
        snprintf(why, whylen, "cannot agree on a context id");
        file_free(f);
        return rc;
    }
    f->comm->coll_setup = 1;   /* until the file is open (see struct ferry_comm) */

    /* agree: everyone's amode valid and the same */
    char lwhy[256] = "";
    long long v[3] = {amode_check(amode, lwhy, sizeof lwhy), amode, -(long long)amode};
    if ((rc = ferry_file_allreduce(f, v, 3, MPI_MAX)))
        goto fail;
    if (v[0]) {
        rc = (int)v[0];
        snprintf(why, whylen, "%s", lwhy[0] ? lwhy : "invalid access mode on another process");
        goto fail;
    }
    if (v[1] != -v[2]) {
        rc = MPI_ERR_NOT_SAME;
        snprintf(why, whylen, "the processes passed different access modes");
        goto fail;
    }

    int flags = O_CLOEXEC | (amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR);
    /* rank 0 creates (exclusively if asked), then the others open what it
     * made: only one O_EXCL may win */
    long long err = 0;
    if (f->comm->rank == 0) {
        int cf = flags | (amode & MPI_MODE_CREATE ? O_CREAT : 0) | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
        f->fd = open(f->path, cf, 0666);
        if (f->fd < 0)
            err = errno;
    }
    if ((rc = ferry_file_allreduce(f, &err, 1, MPI_MAX)))
        goto fail;
    if (!err && f->comm->rank != 0) {
        f->fd = open(f->path, flags);
        if (f->fd < 0)
            err = errno;
    }
    if (!err && f->fd >= 0) {
        struct stat sb;
        if (fstat(f->fd, &sb) == 0 && S_ISDIR(sb.st_mode))
            err = EISDIR;
    }
    if ((rc = ferry_file_allreduce(f, &err, 1, MPI_MAX)))
        goto fail;
    if (err) {
        rc = ferry_io_errno_class((int)err);
        snprintf(why, whylen, "cannot open '%s': %s", filename, strerror((int)err));
        goto fail;
    }

    struct ferry_datatype *byte = ferry_datatype_get(MPI_BYTE);
    ferry_view_set(f, 0, byte, byte, "native");
    if (info && info->n)
        f->info = ferry_info_dup(info);
    MPI_Offset start = 0;
    if (amode & MPI_MODE_APPEND) {
        /* MPI-3.1 13.2.1: both pointers start at the end of the file */
        if ((rc = ferry_file_size(f, &start)))
            goto fail;
        long long s = start;
        if ((rc = ferry_file_allreduce(f, &s, 1, MPI_MAX)))
            goto fail;
        start = s;
        f->fp_ind = start;
    }
    if ((rc = ferry_shfp_open(f, start, why, whylen)))
        goto fail;
    f->comm->coll_setup = 0;
    f->next = open_files;
    open_files = f;
    *out = f;
    return MPI_SUCCESS;
fail:
    if (!why[0])
        snprintf(why, whylen, "collective agreement failed");
    file_free(f);
    return rc;
}

int ferry_file_close(struct ferry_file *f, char *why, size_t whylen)
{
    for (struct ferry_file **p = &open_files; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    int rc = MPI_SUCCESS;
    long long err = 0;
    if (f->fd >= 0 && close(f->fd) != 0)
        err = errno;
    f->fd = -1;
    ferry_shfp_close(f);
    /* everyone has closed before the file may go away */
    int crc = ferry_file_allreduce(f, &err, 1, MPI_MAX);
    if (!crc && (f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->comm->rank == 0 && unlink(f->path) != 0 && !err)
        err = errno;
    if (crc)
        rc = crc;
    else if (err) {
        rc = ferry_io_errno_class((int)err);
        snprintf(why, whylen, "closing '%s': %s", f->filename, strerror((int)err));
    }
    file_free(f);
    return rc;
}

int ferry_file_delete(const char *filename, char *why, size_t whylen)
{
    if (unlink(ferry_file_path(filename)) == 0)
        return MPI_SUCCESS;
    int e = errno;
    snprintf(why, whylen, "cannot delete '%s': %s", filename, strerror(e));
    return ferry_io_errno_class(e);
}

/* ---- size -------------------------------------------------------------------- */

int ferry_file_size(struct ferry_file *f, MPI_Offset *size)
{
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return ferry_io_errno_class(errno);
    *size = (MPI_Offset)sb.st_size;
    return MPI_SUCCESS;
}

/* Rank 0 changes the file, the others wait for the verdict. */
static int rank0_then_agree(struct ferry_file *f, long long err)
{
    int rc = ferry_file_allreduce(f, &err, 1, MPI_MAX);
    return rc ? rc : err ? ferry_io_errno_class((int)err) : MPI_SUCCESS;
}

int ferry_file_set_size(struct ferry_file *f, MPI_Offset size)
{
    long long err = 0;
    if (f->comm->rank == 0 && ftruncate(f->fd, (off_t)size) != 0)
        err = errno;
    return rank0_then_agree(f, err);
}

int ferry_file_preallocate(struct ferry_file *f, MPI_Offset size)
{
    long long err = 0;
    MPI_Offset cur = 0;
    if (f->comm->rank == 0 && ferry_file_size(f, &cur) == MPI_SUCCESS && size > cur) {
        /* only the part past the end: preallocation leaves data alone */
        int e = posix_fallocate(f->fd, (off_t)cur, (off_t)(size - cur));
        if (e == EOPNOTSUPP || e == EINVAL) {
            /* a file system without it: extend with zeros */
            static const char zero[65536];
            for (MPI_Offset p = cur; p < size && !e; p += (MPI_Offset)sizeof zero) {
                size_t n = (size_t)FERRY_MIN((MPI_Offset)sizeof zero, size - p);
                e = ferry_io_pwrite(f->fd, zero, n, (off_t)p);
            }
        }
        err = e;
    }
    return rank0_then_agree(f, err);
}

int ferry_file_sync(struct ferry_file *f)
{
    long long err = 0;
    if (fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
        err = errno;
    return rank0_then_agree(f, err);
}
