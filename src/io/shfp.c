/* The shared file pointer (MPI-3.1 13.4.4).
 *
 * One process: a plain variable. Several: an 8-byte file next to the data
 * file (so that it is shared wherever the data file is, across nodes too),
 * read and advanced under an fcntl write lock; locks are per process, which
 * is what the ranks are. Rank 0 creates it at open with a name unique to the
 * job and the file's context id; once every process has it open rank 0
 * unlinks it, so nothing is left behind even if the job dies. Where the data
 * file's directory is not writable the lock file goes to $TMPDIR (or /tmp):
 * shared by the processes of one node only. */
#include "io/file.h"
#include "core/comm.h"
#include "core/runtime.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int shfp_create(struct ferry_file *f, MPI_Offset initial, char *name, size_t nlen)
{
    const char *dirs[2] = {NULL, getenv("TMPDIR")};
    int fd = -1, err = 0;
    for (int i = 0; i < 3 && fd < 0; i++) {
        if (i == 0)
            snprintf(name, nlen, "%s.ferry-shfp-%s-%u", f->path, ferry_rt.jobid, (unsigned)f->comm->ctx);
        else if (i == 1 && dirs[1] && *dirs[1])
            snprintf(name, nlen, "%s/ferry-shfp-%s-%u-%d", dirs[1], ferry_rt.jobid, (unsigned)f->comm->ctx,
                     (int)getpid());
        else if (i == 2)
            snprintf(name, nlen, "/tmp/ferry-shfp-%s-%u-%d", ferry_rt.jobid, (unsigned)f->comm->ctx, (int)getpid());
        else
            continue;
        fd = open(name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
            err = errno;
    }
    if (fd < 0)
        return -err;
    err = ferry_io_pwrite(fd, &initial, sizeof initial, 0);
    if (err) {
        close(fd);
        unlink(name);
        return -err;
    }
    return fd;
}

int ferry_shfp_open(struct ferry_file *f, MPI_Offset initial, char *why, size_t whylen)
{
    f->shfp.fd = -1;
    f->shfp.local = initial;
    if (f->comm->size == 1)
        return MPI_SUCCESS;
    char name[4200] = "";
    long long err = 0;
    if (f->comm->rank == 0) {
        int fd = shfp_create(f, initial, name, sizeof name);
        if (fd < 0)
            err = -fd;
        else
            f->shfp.fd = fd;
    }
    int rc = ferry_file_bcast(f, name, sizeof name, 0);
    if (rc == MPI_SUCCESS)
        rc = ferry_file_allreduce(f, &err, 1, MPI_MAX);
    if (rc)
        return rc;
    if (err) {
        snprintf(why, whylen, "cannot create the shared file pointer's lock file: %s", strerror((int)err));
        return ferry_io_errno_class((int)err);
    }
    if (f->comm->rank != 0) {
        f->shfp.fd = open(name, O_RDWR | O_CLOEXEC);
        if (f->shfp.fd < 0)
            err = errno;
    }
    rc = ferry_file_allreduce(f, &err, 1, MPI_MAX);
    if (f->comm->rank == 0)
        unlink(name);   /* everyone has it open (or failed): the descriptors keep it */
    if (rc)
        return rc;
    if (err) {
        ferry_shfp_close(f);
        snprintf(why, whylen, "cannot open the shared file pointer's lock file: %s", strerror((int)err));
        return ferry_io_errno_class((int)err);
    }
    return MPI_SUCCESS;
}

void ferry_shfp_close(struct ferry_file *f)
{
    if (f->shfp.fd >= 0)
        close(f->shfp.fd);
    f->shfp.fd = -1;
}

static int shfp_update(struct ferry_file *f, int set, MPI_Offset v, MPI_Offset *old)
{
    if (f->shfp.fd < 0) {
        if (old)
            *old = f->shfp.local;
        f->shfp.local = set ? v : f->shfp.local + v;
        return MPI_SUCCESS;
    }
    int e = ferry_io_lock(f->shfp.fd, F_WRLCK, 0, sizeof(MPI_Offset));
    if (e)
        return ferry_io_errno_class(e);
    MPI_Offset cur = 0;
    size_t got = 0;
    e = ferry_io_pread(f->shfp.fd, &cur, sizeof cur, 0, &got);
    if (!e && got != sizeof cur)
        e = EIO;
    if (!e) {
        MPI_Offset nv = set ? v : cur + v;
        if (nv != cur || set)
            e = ferry_io_pwrite(f->shfp.fd, &nv, sizeof nv, 0);
    }
    ferry_io_lock(f->shfp.fd, F_UNLCK, 0, sizeof(MPI_Offset));
    if (e)
        return ferry_io_errno_class(e);
    if (old)
        *old = cur;
    return MPI_SUCCESS;
}

int ferry_shfp_fetch_add(struct ferry_file *f, MPI_Offset delta, MPI_Offset *old)
{
    return shfp_update(f, 0, delta, old);
}

int ferry_shfp_set(struct ferry_file *f, MPI_Offset v)
{
    return shfp_update(f, 1, v, NULL);
}
