/* signals: turn SIGCHLD, SIGINT, SIGTERM and SIGHUP (and what
 * signals_catch adds: --adopt-singleton's parent-death signal) into bytes on
 * a pipe that the event loop polls. The handler only write()s. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static int sp[2] = { -1, -1 };
static int caught[8] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP };
static size_t ncaught = 4;

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char c = (unsigned char)sig;
    ssize_t w = write(sp[1], &c, 1);   /* full pipe: a byte is already pending */
    (void)w;
    errno = saved;
}

int signals_init(void)
{
    if (pipe2(sp, O_CLOEXEC | O_NONBLOCK) != 0)
        die("cannot create the signal pipe: %s", strerror(errno));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < ncaught; i++) {
        sa.sa_flags = SA_RESTART | (caught[i] == SIGCHLD ? SA_NOCLDSTOP : 0);
        sigaction(caught[i], &sa, NULL);
    }
    /* A closed stdout (mpiexec ... | head) must not kill the launcher. */
    signal(SIGPIPE, SIG_IGN);
    return sp[0];
}

void signals_catch(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (ncaught < sizeof caught / sizeof caught[0]) {
        caught[ncaught++] = sig;          /* signals_child_reset restores it too */
        sigaction(sig, &sa, NULL);
    }
}

int signals_take(void)
{
    unsigned char c;
    for (;;) {
        ssize_t r = read(sp[0], &c, 1);
        if (r == 1)
            return c;
        if (r < 0 && errno == EINTR)
            continue;
        return 0;
    }
}

void signals_child_reset(void)
{
    /* Runs in a forked child with all signals blocked: restore defaults
     * (ignored dispositions survive exec), then unblock. */
    for (size_t i = 0; i < ncaught; i++)
        signal(caught[i], SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    close(sp[0]);
    close(sp[1]);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}
