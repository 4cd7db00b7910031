/* Cross Memory Attach (see cma.h). */
#include "transport/cma.h"
#include <errno.h>
#include <sys/uio.h>

/* One direction, repeated over short transfers (the kernel may copy less
 * than asked, e.g. across a page it must fault in). */
int ferry_cma_copy(pid_t pid, char *local, uint64_t remote, size_t len, int write)
{
    while (len > 0) {
        struct iovec l = {local, len};
        struct iovec r = {(void *)(uintptr_t)remote, len};
        ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        local += n;
        remote += (uint64_t)n;
        len -= (size_t)n;
    }
    return 0;
}
