/* mpiexec main: parse options, start the ranks, run the event loop (PMI
 * requests, among them spawns that start new worlds; forwarded output, child
 * exits, signals) until every process of every world has exited, then clean
 * up and exit with the job's status.
 *
 * --adopt-singleton (options.c, mpiexec.h): world 0 is not launched; its one
 * rank is the singleton that started this mpiexec, its parent. Its PMI
 * connection is the inherited PMI_FERRY_ADOPT_FD (made non-blocking and
 * close-on-exec, so spawned processes do not inherit it). mpiexec notices
 * the singleton's death by the end of that connection and, should another
 * process hold the singleton's end open, by a parent-death signal:
 * PR_SET_PDEATHSIG with SIGUSR1, set first thing. Not SIGTERM: the kernel
 * sends it when the *thread* that forked mpiexec ends, which is no death of
 * the singleton if it has other threads, so the signal only makes mpiexec
 * look whether its parent is still the singleton (a SIGTERM from a user must
 * keep meaning "terminate the job"). The rest (spawns, names, teardown,
 * /dev/shm cleanup) is as for any job; the job ends when the singleton has
 * closed its connection and every spawned process has exited. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct job J;
int sigfd = -1;

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpiexec: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* Descriptors 0-2 must be open, or a socketpair could land on them. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0) {
            int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
}

static uint32_t random32(void)
{
    uint32_t x;
    if (getrandom(&x, sizeof x, GRND_NONBLOCK) == (ssize_t)sizeof x)
        return x;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t h = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid() << 32 ^
                 (uint64_t)ts.tv_sec;
    h ^= h >> 29;
    return (uint32_t)(h * 0xbf58476d1ce4e5b9ULL >> 32);
}

/* PMI_FERRY_SECRET: 128 random bits as 32 lowercase hex digits. */
static void make_secret(char out[33])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got < sizeof b) {                  /* no getrandom(2): the kernel's device */
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        got = 0;
        while (fd >= 0 && got < sizeof b) {
            ssize_t n = read(fd, b + got, sizeof b - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (fd >= 0)
            close(fd);
        if (got < sizeof b)
            die("cannot read random bytes (getrandom, /dev/urandom) for PMI_FERRY_SECRET");
    }
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

enum { SRC_PMI, SRC_OUT, SRC_ERR };

#define ADOPT_PDEATH_SIG SIGUSR1      /* --adopt-singleton: "look whether the parent lives" */

/* --adopt-singleton: the parent-death signal came. A thread of the
 * singleton ended, or the singleton did: then what it sent is in the
 * socket, and (unless a process of its own still holds its end) the end of
 * file after it, which job_adopted_closed judges. */
static void adopt_parent_check(struct job *j)
{
    struct rank *rk = j->ranks[0];
    if (rk->state != RS_RUNNING || job_adopted_alive(j, 0))
        return;
    if (rk->pmi_fd >= 0)
        pmi_server_drain(j, 0);
    if (rk->state != RS_RUNNING)
        return;
    if (rk->pmi_fd >= 0) {
        close(rk->pmi_fd);
        rk->pmi_fd = -1;
    }
    if (rk->finalized) {
        job_adopted_exited(j, 0, 0);
        return;
    }
    job_adopted_exited(j, 0, 1 << 8);
    job_fail_rank(j, 0, 1, "is gone (it exited or was killed) without calling MPI_Finalize");
}

/* --adopt-singleton, before anything else: ask for the parent-death signal
 * (held blocked until the event loop can take it). */
static void adopt_early(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, ADOPT_PDEATH_SIG);
    sigprocmask(SIG_BLOCK, &s, NULL);
    prctl(PR_SET_PDEATHSIG, ADOPT_PDEATH_SIG);
}

/* --adopt-singleton: world 0's one rank is the singleton, mpiexec's parent,
 * with the inherited descriptor as its PMI connection. */
static void adopt_singleton(struct job *j)
{
    struct options *o = j->opt;
    /* it may have died before PR_SET_PDEATHSIG took effect */
    if (getppid() != o->adopt_pid) {
        fprintf(stderr, "mpiexec: --adopt-singleton: process %ld (PMI_FERRY_ADOPT_PID) is not mpiexec's "
                "parent: it has exited, or it did not start mpiexec\n", (long)o->adopt_pid);
        exit(1);
    }
    int fd = o->adopt_fd;
    if (fd <= 2) {
        /* a singleton without stdin/out/err: keep 0-2 for /dev/null */
        int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (nfd < 0 || null < 0 || dup2(null, fd) < 0)
            die("--adopt-singleton: cannot move descriptor %d: %s", fd, strerror(errno));
        close(null);
        fd = nfd;
    }
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
        die("--adopt-singleton: descriptor %d: %s", fd, strerror(errno));
    struct rank *rk = j->ranks[0];
    rk->adopted = 1;
    rk->appnum = 0;
    rk->pid = o->adopt_pid;
    rk->pmi_fd = fd;
    rk->state = RS_RUNNING;
    rk->bound = 0;
    snprintf(rk->bind_desc, sizeof rk->bind_desc, "not bound (singleton, started without mpiexec)");
    j->nrunning++;
}

/* FERRY_EXIT_GRACE_MS (documented in Ferry's variable table, core/config.c). */
static long exit_grace_ms(void)
{
    const char *v = getenv("FERRY_EXIT_GRACE_MS");
    char *end;
    long ms = v ? strtol(v, &end, 10) : 1000;
    if (v && (end == v || *end || ms < 0 || ms > 3600000)) {
        fprintf(stderr, "mpiexec: FERRY_EXIT_GRACE_MS=%s is not a number of milliseconds (0..3600000)\n", v);
        exit(2);
    }
    return ms;
}

static void event_loop(struct job *j)
{
    size_t cap = 0;
    struct pollfd *pfd = NULL;
    int *who = NULL;                               /* uid * 3 + source */
    long deadline = j->opt->timeout_s ? monotonic_ms() + 1000L * j->opt->timeout_s : 0;

    while (j->nrunning > 0) {
        /* Spawns add processes (while the requests are served below, never
         * while these arrays are in use): size them for the ranks of now. */
        if (cap < 1 + 3 * (size_t)j->n) {
            size_t ncap = 1 + 3 * (size_t)j->n;
            struct pollfd *np = realloc(pfd, ncap * sizeof *np);
            if (np)
                pfd = np;
            int *nw = np ? realloc(who, ncap * sizeof *nw) : NULL;
            if (!np || !nw) {
                fprintf(stderr, "mpiexec: out of memory; terminating the job\n");
                job_terminate(j, 1, 0);
            }
            who = nw;
            cap = ncap;
        }
        size_t k = 0;
        pfd[k].fd = sigfd;
        pfd[k].events = POLLIN;
        who[k++] = -1;
        for (int r = 0; r < j->n; r++) {
            struct rank *rk = j->ranks[r];
            if (rk->pmi_fd >= 0) {
                pfd[k].fd = rk->pmi_fd;
                pfd[k].events = POLLIN;
                who[k++] = r * 3 + SRC_PMI;
            }
            for (int s = 0; s < 2; s++)
                if (rk->out[s].fd >= 0) {
                    pfd[k].fd = rk->out[s].fd;
                    pfd[k].events = POLLIN;
                    who[k++] = r * 3 + SRC_OUT + s;
                }
        }
        int wait_ms = -1;
        if (deadline) {
            long left = deadline - monotonic_ms();
            if (left <= 0) {
                fprintf(stderr, "mpiexec: the job ran past its time limit of %d s (--timeout / MPIEXEC_TIMEOUT); "
                        "terminating the job\n", j->opt->timeout_s);
                job_terminate(j, 255, 1);
            }
            wait_ms = left > INT_MAX ? INT_MAX : (int)left;
        }
        if (j->exit0_rank >= 0) {
            long left = j->exit0_deadline - monotonic_ms();
            if (left <= 0)
                job_fail_rank(j, j->exit0_rank, 1, "exited with status 0 without calling MPI_Finalize, and the "
                              "other ranks did not finish within %ld ms", j->exit_grace_ms);
            if (wait_ms < 0 || left < wait_ms)
                wait_ms = (int)left;
        }
        int n = poll(pfd, k, wait_ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "mpiexec: poll: %s; terminating the job\n", strerror(errno));
            job_terminate(j, 1, 0);
        }
        if (pfd[0].revents) {
            /* Take every pending signal first: on Ctrl-C the ranks get SIGINT
             * from the terminal too, and their deaths must not be reported
             * as failures when mpiexec itself was interrupted. */
            int s, child = 0, stop = 0, pdeath = 0;
            while ((s = signals_take()) != 0) {
                if (s == SIGCHLD)
                    child = 1;
                else if (s == ADOPT_PDEATH_SIG && j->opt->adopt)
                    pdeath = 1;
                else if (!stop)
                    stop = s;
            }
            if (stop) {
                fprintf(stderr, "mpiexec: received signal %d (%s); terminating the job\n",
                        stop, strsignal(stop));
                job_terminate(j, 128 + stop, 1);
            }
            if (child)
                job_reap(j);
            if (pdeath)
                adopt_parent_check(j);
        }
        for (size_t i = 1; i < k; i++) {
            if (!pfd[i].revents)
                continue;
            int r = who[i] / 3, src = who[i] % 3;
            /* The fd may have been closed (and its number reused) meanwhile. */
            if (src == SRC_PMI) {
                if (j->ranks[r]->pmi_fd == pfd[i].fd)
                    pmi_server_readable(j, r);
            } else if (j->ranks[r]->out[src - SRC_OUT].fd == pfd[i].fd) {
                output_readable(j, r, src - SRC_OUT);
            }
        }
    }
    free(pfd);
    free(who);
}

int main(int argc, char **argv)
{
    static struct options opt;
    if (options_adopt_requested(argc, argv))
        adopt_early();
    ensure_std_fds();
    options_parse(&opt, argc, argv);

    memset(&J, 0, sizeof J);
    J.opt = &opt;
    J.self = getpid();
    J.exit0_rank = -1;
    J.exit_grace_ms = exit_grace_ms();
    snprintf(J.jobid, sizeof J.jobid, "ferry_%ld_%08x", (long)J.self, random32());
    make_secret(J.secret);
    /* world 0: the command line's ranks, uids 0..nprocs-1 (--adopt-singleton:
     * the singleton, uid 0) */
    if (!job_add_world(&J, opt.nprocs))
        die("out of memory");
    if (opt.adopt)
        adopt_singleton(&J);
    else
        for (int r = 0; r < J.n; r++)
            J.ranks[r]->appnum = (int)(options_app_of(&opt, r) - opt.apps);

    /* Orphans of the ranks come back to us, so teardown can kill them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigfd = signals_init();
    if (opt.adopt) {
        signals_catch(ADOPT_PDEATH_SIG);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, ADOPT_PDEATH_SIG);
        sigprocmask(SIG_UNBLOCK, &s, NULL);   /* one that came meanwhile arrives now */
    } else {
        bind_plan(&J);
    }
    launch_prepare(&J);
    for (int r = 0; r < J.n && !opt.adopt; r++)
        launch_rank(&J, r);

    event_loop(&J);

    output_drain_all(&J);
    job_shm_cleanup_all(&J);
    fflush(stdout);
    return J.exit_code;
}
