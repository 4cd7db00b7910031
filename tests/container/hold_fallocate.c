/* hold_fallocate.so: an LD_PRELOAD shim for kill_driver.py --mode init.
 *
 * In the rank whose PMI_RANK equals FERRY_TEST_HOLD_RANK, the first
 * posix_fallocate (Ferry reserving its own region of the node segment in
 * MPI_Init, after local rank 0 created /dev/shm/ferry-<job>-node and before
 * the name is dropped) writes FERRY_TEST_HOLD_DIR/ready and waits to be
 * killed. That opens the window in which a named segment exists, so the
 * driver can kill -9 a rank inside it deterministically. Every other call,
 * and every other process, goes straight to the C library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int posix_fallocate(int fd, off_t off, off_t len)
{
    static int (*real)(int, off_t, off_t);
    const char *hold = getenv("FERRY_TEST_HOLD_RANK"), *me = getenv("PMI_RANK"), *dir = getenv("FERRY_TEST_HOLD_DIR");
    if (hold && me && dir && !strcmp(hold, me)) {
        char path[4096], tmp[4200];
        snprintf(path, sizeof path, "%s/ready", dir);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (f) {
            fputs("ready\n", f);
            fclose(f);
            rename(tmp, path);
        }
        for (;;)
            pause(); /* the driver sends SIGKILL */
    }
    if (!real)
        real = (int (*)(int, off_t, off_t))dlsym(RTLD_NEXT, "posix_fallocate");
    return real ? real(fd, off, len) : 95 /* EOPNOTSUPP */;
}

/* glibc may route posix_fallocate to posix_fallocate64 with 64-bit off_t */
int posix_fallocate64(int fd, off_t off, off_t len)
{
    return posix_fallocate(fd, off, len);
}
