/* Node segment backends (see segment.h). */
#include "transport/shm/segment.h"
#include "boot/boot.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/util.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define TOKEN_BYTES 16
#define ACCEPT_TIMEOUT_MS 60000

static char posix_name[128];
static int posix_linked;

static void shortage(size_t bytes, int err, const char *where)
{
    ferry_fatal("MPI_Init: cannot reserve %zu KiB of shared memory (%s: %s). Give the job more shared memory "
                "(docker run --shm-size=1g, AWS Batch linuxParameters.sharedMemorySize, Kubernetes emptyDir "
                "{medium: Memory}, or a larger memory limit) or lower FERRY_SHM_BUDGET",
                bytes / 1024, where, strerror(err));
}

static void reserve_own(int fd, size_t stride, int my_index, const char *where)
{
    int rc = posix_fallocate(fd, (off_t)stride * my_index, (off_t)stride);
    if (rc)
        shortage(stride, rc, where);
}

static void *map_fd(int fd, size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        ferry_fatal("MPI_Init: cannot map the shared-memory segment: %s", strerror(errno));
    return p;
}

static void hex(char *out, const unsigned char *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", in[i]);
}

/* ---- memfd backend ------------------------------------------------------ */

static void abstract_addr(struct sockaddr_un *a, socklen_t *len, const char *name)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    size_t n = strlen(name);
    if (n + 1 > sizeof a->sun_path)
        n = sizeof a->sun_path - 1;
    memcpy(a->sun_path + 1, name, n);   /* leading NUL: Linux abstract namespace, no file */
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* Local rank 0: serve the descriptor to nlocal-1 peers that prove they are ours. */
static void serve_fd(int lsock, int memfd, int nclients, const unsigned char *token)
{
    int served = 0;
    while (served < nclients) {
        struct pollfd p = {lsock, POLLIN, 0};
        int r = poll(&p, 1, ACCEPT_TIMEOUT_MS);
        if (r == 0)
            ferry_fatal("MPI_Init: %d local ranks never connected for the shared-memory segment",
                        nclients - served);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            ferry_fatal("MPI_Init: poll: %s", strerror(errno));
        }
        int c = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        struct ucred cred;
        socklen_t cl = sizeof cred;
        unsigned char got[TOKEN_BYTES];
        struct timeval tv = {5, 0};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        int ok = getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.uid == geteuid() &&
                 recv(c, got, sizeof got, MSG_WAITALL) == (ssize_t)sizeof got;
        unsigned char diff = 0;
        for (int i = 0; ok && i < TOKEN_BYTES; i++)
            diff |= (unsigned char)(got[i] ^ token[i]);   /* constant time */
        if (!ok || diff) {
            ferry_log(1, "rejected a shared-memory connection that did not present the job's secret");
            close(c);
            continue;
        }
        char byte = 'F';
        struct iovec iov = {&byte, 1};
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } ctl;
        memset(&ctl, 0, sizeof ctl);
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
        if (sendmsg(c, &m, MSG_NOSIGNAL) == 1)
            served++;
        close(c);
    }
}

static int fetch_fd(const char *sockname, const unsigned char *token)
{
    struct sockaddr_un a;
    socklen_t alen;
    abstract_addr(&a, &alen, sockname);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&a, alen))
        ferry_fatal("MPI_Init: cannot reach local rank 0 for the shared-memory segment: %s", strerror(errno));
    if (send(s, token, TOKEN_BYTES, MSG_NOSIGNAL) != TOKEN_BYTES)
        ferry_fatal("MPI_Init: cannot send the job secret: %s", strerror(errno));
    char byte;
    struct iovec iov = {&byte, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
    struct cmsghdr *cm = n == 1 ? CMSG_FIRSTHDR(&m) : NULL;
    if (!cm || cm->cmsg_type != SCM_RIGHTS)
        ferry_fatal("MPI_Init: local rank 0 did not hand over the shared-memory segment");
    int fd;
    memcpy(&fd, CMSG_DATA(cm), sizeof fd);
    close(s);
    return fd;
}

static void *attach_memfd(size_t stride, int nlocal, int my_index)
{
    size_t size = stride * (size_t)nlocal;
    int leader = my_index == 0;
    int fd = -1, lsock = -1;
    unsigned char token[TOKEN_BYTES];
    char name[96];
    if (leader) {
        fd = memfd_create("ferry-shm", MFD_CLOEXEC);
        if (fd < 0)
            ferry_fatal("MPI_Init: memfd_create: %s (set FERRY_SHM_BACKEND=posix to use /dev/shm)", strerror(errno));
        if (ftruncate(fd, (off_t)size))
            shortage(size, errno, "ftruncate");
        if (nlocal > 1) {
            unsigned char rnd[8];
            if (getrandom(token, sizeof token, 0) != sizeof token || getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
                ferry_fatal("MPI_Init: no randomness for the job secret");
            char r[17];
            hex(r, rnd, sizeof rnd);
            snprintf(name, sizeof name, "ferry-%s-%s", ferry_rt.jobid, r);
            struct sockaddr_un a;
            socklen_t alen;
            abstract_addr(&a, &alen, name);
            lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (lsock < 0 || bind(lsock, (struct sockaddr *)&a, alen) || listen(lsock, nlocal))
                ferry_fatal("MPI_Init: cannot open the local socket for the shared-memory segment: %s",
                            strerror(errno));
            char tok[2 * TOKEN_BYTES + 1];
            hex(tok, token, sizeof token);
            ferry_boot_put("shm-sock", name);
            ferry_boot_put("shm-token", tok);
        }
    }
    ferry_boot_fence();
    if (leader) {
        if (nlocal > 1)
            serve_fd(lsock, fd, nlocal - 1, token);
        if (lsock >= 0)
            close(lsock);
    } else {
        int w0 = -1;
        for (int w = 0; w < ferry_rt.world_size && w0 < 0; w++)
            if (ferry_rt.peers[ferry_rt.uid_base + w].local == 0)
                w0 = w;
        char tok[2 * TOKEN_BYTES + 8];
        if (ferry_boot_get(w0, "shm-sock", name, sizeof name) || ferry_boot_get(w0, "shm-token", tok, sizeof tok))
            ferry_fatal("MPI_Init: local rank 0 published no shared-memory socket");
        for (int i = 0; i < TOKEN_BYTES; i++) {
            unsigned v;
            sscanf(tok + 2 * i, "%2x", &v);
            token[i] = (unsigned char)v;
        }
        fd = fetch_fd(name, token);
    }
    reserve_own(fd, stride, my_index, "memfd");
    void *base = map_fd(fd, size);
    close(fd);
    return base;
}

/* ---- posix backend ------------------------------------------------------ */

static void *attach_posix(size_t stride, int nlocal, int my_index)
{
    size_t size = stride * (size_t)nlocal;
    snprintf(posix_name, sizeof posix_name, "/ferry-%s-node", ferry_rt.jobid);
    int fd;
    if (my_index == 0) {
        fd = shm_open(posix_name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0)
            ferry_fatal("MPI_Init: cannot create shared memory %s: %s (set FERRY_SHM_BACKEND=memfd)", posix_name,
                        strerror(errno));
        posix_linked = 1;
        if (ftruncate(fd, (off_t)size))
            shortage(size, errno, "ftruncate in /dev/shm");
    }
    ferry_boot_fence();
    if (my_index != 0) {
        fd = shm_open(posix_name, O_RDWR, 0600);
        if (fd < 0)
            ferry_fatal("MPI_Init: cannot open shared memory %s: %s", posix_name, strerror(errno));
    }
    reserve_own(fd, stride, my_index, "/dev/shm");
    void *base = map_fd(fd, size);
    close(fd);
    return base;
}

/* ---- interface ---------------------------------------------------------- */

void ferry_shm_keep_resident(void *p, size_t len, const char *what)
{
    if (mlock(p, len) != 0)
        ferry_log(1, "%s: %zu KiB not locked in memory (%s; ulimit -l is the limit): reclaim may unmap it and "
                  "slow the transfers through it", what, len >> 10, strerror(errno));
}

void *ferry_shm_segment_attach(size_t stride, int nlocal, int my_index)
{
    if (ferry_cfg.shm_backend == FERRY_SHM_BACKEND_MEMFD)
        return attach_memfd(stride, nlocal, my_index);
    return attach_posix(stride, nlocal, my_index);
}

void ferry_shm_segment_seal(void)
{
    if (posix_linked) {
        shm_unlink(posix_name);
        posix_linked = 0;
    }
}

void ferry_shm_segment_detach(void *base, size_t size)
{
    if (base)
        munmap(base, size);
    ferry_shm_segment_seal();
}
