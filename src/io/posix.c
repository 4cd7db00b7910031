/* POSIX transfers: a single pread/pwrite may move fewer bytes than asked (a
 * signal, a large request the kernel caps at about 2 GiB, a pipe-like file
 * system), so every transfer loops until it is whole, or for reads until
 * end of file. */
#include "io/file.h"
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

/* One system call moves at most this much: Linux caps read/write at
 * 0x7ffff000 bytes anyway; asking for less keeps ssize_t arithmetic exact. */
#define IO_MAX_CALL ((size_t)1 << 30)

int ferry_io_errno_class(int e)
{
    switch (e) {
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
#ifdef EDQUOT
    case EDQUOT:
        return MPI_ERR_QUOTA;
#endif
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return MPI_ERR_BAD_FILE;
    case ETXTBSY:
        return MPI_ERR_FILE_IN_USE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

int ferry_io_pread(int fd, void *buf, size_t n, off_t off, size_t *got)
{
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < IO_MAX_CALL ? n - done : IO_MAX_CALL;
        ssize_t r = pread(fd, (char *)buf + done, k, off + (off_t)done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *got = done;
            return errno;
        }
        if (r == 0)
            break;   /* end of file */
        done += (size_t)r;
    }
    *got = done;
    return 0;
}

int ferry_io_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < IO_MAX_CALL ? n - done : IO_MAX_CALL;
        ssize_t r = pwrite(fd, (const char *)buf + done, k, off + (off_t)done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (r == 0)
            return ENOSPC;   /* no progress and no error: treat as a full device */
        done += (size_t)r;
    }
    return 0;
}

int ferry_io_lock(int fd, int type, off_t off, off_t len)
{
    struct flock fl = {.l_type = (short)type, .l_whence = SEEK_SET, .l_start = off, .l_len = len};
    while (fcntl(fd, F_SETLKW, &fl) < 0) {
        if (errno != EINTR)
            return errno;
    }
    return 0;
}
