/* job: the rank table's life and death.
 *
 * Reaping judges each exit:
 *   killed by signal S                       -> failure, status 128+S
 *   exit c != 0 before cmd=finalize (after init) -> failure, status c
 *   exit 0 before cmd=finalize (after init)  -> status 1, one line; the other
 *                                               ranks have FERRY_EXIT_GRACE_MS to
 *                                               finish on their own (their output
 *                                               is kept), else they are killed
 *   exit c after finalize, or never spoke PMI -> status c if it is the first non-zero
 *   (plain programs that never talk PMI, e.g. `mpiexec -n 3 hostname`, may exit
 *   0 freely; that is the only way to tell them from MPI programs.)
 * The rules are the same for every world's processes (spawned ones too), and
 * the job ends when every process of every world has exited.
 * The adopted singleton (--adopt-singleton) is not mpiexec's child and is
 * never reaped: it has exited when its PMI connection closes (end of file
 * or error, as when it dies), normally (status 0) after cmd=finalize, else
 * as a failure ("closed its connection without MPI_Finalize", status 1).
 * The exit-0 grace above never concerns it. It is signalled (SIGTERM on
 * --timeout or a signal to mpiexec, SIGKILL on a failure, as any rank 0)
 * only while it is still running and mpiexec's parent, i.e. alive: its pid
 * cannot have been reused; not after its own MPI_Abort (it exits by itself,
 * with its code) nor once its connection closed.
 * A failure prints one line, SIGKILLs everything and exits. mpiexec is a
 * child subreaper, so processes the ranks started and orphaned come back
 * to it and are killed too; teardown is bounded to about a second. */
#include "mpiexec.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern int sigfd;

long monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void job_set_exit(struct job *j, int code)
{
    if (j->exit_code == 0 && code != 0)
        j->exit_code = code;
}

struct world *job_add_world(struct job *j, int n)
{
    if (n < 1 || n > INT_MAX - j->n)
        return NULL;
    struct rank **nr = realloc(j->ranks, (size_t)(j->n + n) * sizeof *nr);
    if (!nr)
        return NULL;
    j->ranks = nr;                       /* only the capacity grew so far */
    struct world **nw = realloc(j->worlds, (size_t)(j->nworlds + 1) * sizeof *nw);
    if (!nw)
        return NULL;
    j->worlds = nw;
    struct world *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->index = j->nworlds;
    w->base = j->n;
    w->n = n;
    w->parent_uid = -1;
    if (w->index == 0)
        snprintf(w->kvsname, sizeof w->kvsname, "%s", j->jobid);
    else
        snprintf(w->kvsname, sizeof w->kvsname, "%ss%d", j->jobid, w->index);
    int i;
    for (i = 0; i < n; i++) {
        struct rank *rk = calloc(1, sizeof *rk);
        if (!rk)
            break;
        rk->world = w->index;
        rk->wrank = i;
        rk->pmi_fd = rk->child_fd = -1;
        rk->out[0].fd = rk->out[1].fd = -1;
        pmi_wire_rbuf_init(&rk->rb);
        if (w->index == 0)
            snprintf(rk->label, sizeof rk->label, "[%d] ", i);
        else
            snprintf(rk->label, sizeof rk->label, "[s%d:%d] ", w->index, i);
        j->ranks[w->base + i] = rk;
    }
    if (i < n || pmi_server_world_init(w) != 0) {
        while (i-- > 0)
            free(j->ranks[w->base + i]);
        free(w);
        return NULL;
    }
    j->worlds[j->nworlds++] = w;
    j->n += n;
    return w;
}

const char *rank_desc(const struct job *j, int r, char *buf, size_t cap)
{
    const struct rank *rk = j->ranks[r];
    if (rk->adopted)
        snprintf(buf, cap, "singleton rank %d (pid %ld)", r, (long)rk->pid);
    else if (rk->world == 0)
        snprintf(buf, cap, "rank %d (pid %ld)", r, (long)rk->pid);
    else
        snprintf(buf, cap, "spawned rank %d of world %d (uid %d, pid %ld)", rk->wrank, rk->world, r,
                 (long)rk->pid);
    return buf;
}

static int find_rank(struct job *j, pid_t pid)
{
    for (int r = 0; r < j->n; r++)
        if (j->ranks[r]->pid == pid && j->ranks[r]->state == RS_RUNNING && !j->ranks[r]->adopted)
            return r;    /* (the adopted singleton is no child: its pid is no child's) */
    return -1;
}

int job_adopted_alive(const struct job *j, int r)
{
    const struct rank *rk = j->ranks[r];
    /* An exiting parent's children are reparented before it becomes a
     * zombie, so while getppid() is its pid, that pid is still it. */
    return rk->state == RS_RUNNING && getppid() == rk->pid;
}

void job_signal_rank(struct job *j, int r, int sig)
{
    struct rank *rk = j->ranks[r];
    if (rk->state != RS_RUNNING)
        return;
    if (!rk->adopted)
        kill(rk->pid, sig);
    else if (job_adopted_alive(j, r))
        kill(rk->pid, sig);
}

void job_adopted_exited(struct job *j, int r, int status)
{
    struct rank *rk = j->ranks[r];
    if (rk->state != RS_RUNNING)
        return;
    rk->state = RS_EXITED;
    rk->status = status;
    j->nrunning--;
}

void job_adopted_closed(struct job *j, int r)
{
    struct rank *rk = j->ranks[r];
    if (rk->state != RS_RUNNING || j->terminating)
        return;
    if (rk->finalized) {
        job_adopted_exited(j, r, 0);      /* the spawned processes may go on; the job ends with them */
        return;
    }
    job_adopted_exited(j, r, 1 << 8);     /* as "exit 1": it is gone or going, never signalled now */
    job_fail_rank(j, r, 1, "closed its connection without MPI_Finalize");
}

/* Reap whatever has exited; returns -1 when mpiexec has no children left. */
static int reap_quiet(struct job *j, void (*judge)(struct job *, int))
{
    for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p < 0 && errno == EINTR)
            continue;
        if (p < 0)
            return -1;
        if (p == 0)
            return 0;
        int r = find_rank(j, p);
        if (r < 0)
            continue;                     /* an adopted orphan */
        j->ranks[r]->state = RS_EXITED;
        j->ranks[r]->status = st;
        j->nrunning--;
        if (judge)
            judge(j, r);
    }
}

static void judge(struct job *j, int r)
{
    struct rank *rk = j->ranks[r];
    /* It may have sent abort/finalize just before exiting: serve that first. */
    if (rk->pmi_fd >= 0)
        pmi_server_drain(j, r);
    int st = rk->status;
    if (WIFSIGNALED(st)) {
        int s = WTERMSIG(st);
        job_fail_rank(j, r, 128 + s, "was killed by signal %d (%s)", s, strsignal(s));
    }
    int c = WEXITSTATUS(st);
    if (rk->pmi_inited && !rk->finalized && (c != 0 || j->exit_grace_ms <= 0))
        job_fail_rank(j, r, c ? c : 1, "exited with status %d without calling MPI_Finalize", c);
    if (rk->pmi_inited && !rk->finalized && j->exit0_rank < 0) {
        /* Programs that end without MPI_Finalize (old test suites do) often
         * have nothing left to say to the others, which would finish on
         * their own, as they do under hydra; a rank still waiting for this
         * one would wait for ever, so the job gets a deadline. */
        j->exit0_rank = r;
        j->exit0_deadline = monotonic_ms() + j->exit_grace_ms;
        job_set_exit(j, 1);   /* still an error, as under Open MPI's mpirun */
        char desc[128];
        fprintf(stderr, "mpiexec: %s exited with status 0 without calling MPI_Finalize (the job's "
                "status will be 1); the other ranks have %ld ms to finish (FERRY_EXIT_GRACE_MS)\n",
                rank_desc(j, r, desc, sizeof desc), j->exit_grace_ms);
    }
    job_set_exit(j, c);
    pmi_server_check_barrier(j);
}

void job_reap(struct job *j)
{
    if (!j->terminating)
        reap_quiet(j, judge);
}

/* SIGKILL every process whose parent is mpiexec (ranks and adopted orphans),
 * and the adopted singleton (mpiexec's parent) while it lives. */
static void kill_children(struct job *j)
{
    for (int r = 0; r < j->n; r++) {
        job_signal_rank(j, r, SIGKILL);
        if (j->ranks[r]->adopted)     /* not ours to wait for; SIGKILL is final */
            job_adopted_exited(j, r, SIGKILL);
    }
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        char *p = strrchr(buf, ')');       /* comm may contain spaces and ')' */
        char state;
        long ppid;
        if (p && sscanf(p + 1, " %c %ld", &state, &ppid) == 2 && ppid == (long)j->self)
            kill((pid_t)atol(e->d_name), SIGKILL);
    }
    closedir(d);
}

static void wait_sig(int ms)
{
    if (ms <= 0)
        return;
    struct pollfd p = { .fd = sigfd, .events = POLLIN };
    if (poll(&p, 1, ms) > 0)
        while (signals_take())
            ;                               /* SIGCHLD wakeups; INT/TERM: already going */
}

void job_terminate(struct job *j, int exit_code, int graceful)
{
    j->terminating = 1;
    if (graceful) {
        for (int r = 0; r < j->n; r++)
            job_signal_rank(j, r, SIGTERM);
        long deadline = monotonic_ms() + 300;
        for (;;) {
            reap_quiet(j, NULL);
            /* the adopted singleton: gone once mpiexec has another parent
             * (its death also wakes wait_sig: the parent-death signal) */
            if (j->ranks[0]->adopted && j->ranks[0]->state == RS_RUNNING && !job_adopted_alive(j, 0))
                job_adopted_exited(j, 0, SIGTERM);
            long left = deadline - monotonic_ms();
            if (j->nrunning == 0 || left <= 0)
                break;
            wait_sig((int)left);
        }
    }
    long deadline = monotonic_ms() + 1000;
    for (;;) {
        kill_children(j);
        int none_left = reap_quiet(j, NULL) < 0;
        long left = deadline - monotonic_ms();
        if (none_left || left <= 0)
            break;
        wait_sig(left < 10 ? (int)left : 10);
    }
    if (j->nrunning > 0)
        fprintf(stderr, "mpiexec: warning: %d process(es) did not die after SIGKILL\n",
                j->nrunning);
    output_drain_all(j);
    job_shm_cleanup_all(j);
    fflush(stdout);
    _exit(exit_code);
}

void job_fail_rank(struct job *j, int r, int code, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char desc[128];
    fprintf(stderr, "mpiexec: %s %s; terminating the job\n", rank_desc(j, r, desc, sizeof desc), what);
    job_set_exit(j, code);
    job_terminate(j, j->exit_code, 0);
}

void job_shm_cleanup_all(struct job *j)
{
    for (int w = 0; w < j->nworlds; w++)
        job_shm_cleanup(j->worlds[w]->kvsname);
}

void job_shm_cleanup(const char *jobid)
{
    if (!jobid[0])
        return;
    char prefix[96];
    int pl = snprintf(prefix, sizeof prefix, "ferry-%s-", jobid);
    if (pl <= 0 || (size_t)pl >= sizeof prefix)
        return;
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    uid_t me = getuid();
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, (size_t)pl) != 0)
            continue;
        struct stat sb;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && sb.st_uid == me)
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}
