/* launch: fork and exec one process: a rank of world 0 (the command line's)
 * or of a world started by a PMI spawn request.
 *
 * The child gets: the child end of its PMI socketpair (PMI_FD), its binding
 * (world 0 only: spawned processes are not bound), stdin (uid 0, world 0's
 * rank 0: mpiexec's; every other process, spawned ones included: /dev/null),
 * stdout/stderr (inherited, or pipes with --tag-output), default signal
 * dispositions, PR_SET_PDEATHSIG so it dies with mpiexec, its directory
 * (-wdir; a spawned program's wdir), and the environment
 *
 *   PMI_FD PMI_RANK PMI_SIZE PMI_JOBID FERRY_LOCAL_RANK FERRY_LOCAL_SIZE
 *                          (rank within its world, the world's size, the
 *                           world's kvsname: the jobid for world 0)
 *   PMI_FERRY_UNIVERSE     the jobid (world 0's kvsname), in every world
 *   PMI_FERRY_SECRET       32 random lowercase hex digits, one per mpiexec,
 *                          the same in every world
 *   PMI_FERRY_UID_BASE     the universe id of its world's rank 0 (world 0: 0)
 *   PMI_FERRY_PARENT_PORT  spawned processes only, when the request gave a
 *                          port: the (decoded) port= of the spawn request
 *   -env K V ...           (world 0 only, its program's; later -env of the same
 *                           name wins, and -env wins over -genv and the
 *                           environment; a spawned process's argv is its
 *                           execname and the request's arguments, no -env)
 *   -genv K V ...          (later -genv of the same name wins)
 *   mpiexec's environment  (minus PMI_* / PMIX_*: those belong to whatever
 *                           launched mpiexec, not to our ranks)
 *   PYTHONUNBUFFERED=1 GFORTRAN_UNBUFFERED_PRECONNECTED=y, unless set above:
 *                           as under MPICH's hydra (Python: and Open MPI's
 *                           mpirun), a Python or gfortran rank killed because
 *                           another rank failed has written what it printed
 *                           (gfortran buffers stdout fully when it is a file);
 *                           C stdout is line-buffered by the library
 *                           (FERRY_STDOUT)
 *
 * exec failure travels back on a close-on-exec pipe: the parent reads either
 * EOF (exec worked) or the child's errno (negated when the chdir to -wdir
 * failed). */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

extern char **environ;

/* set by mpiexec per process: a -genv or -env of these is ignored */
#define NRANKVARS 10
static const char *const rank_vars[NRANKVARS] = {
    "PMI_FD", "PMI_RANK", "PMI_SIZE", "PMI_JOBID", "FERRY_LOCAL_RANK", "FERRY_LOCAL_SIZE",
    "PMI_FERRY_UNIVERSE", "PMI_FERRY_SECRET", "PMI_FERRY_UID_BASE", "PMI_FERRY_PARENT_PORT",
};

/* set unless the user chose (see above) */
#define NDEFAULTS 2
static const char *const default_vars[NDEFAULTS] = {"PYTHONUNBUFFERED=1", "GFORTRAN_UNBUFFERED_PRECONNECTED=y"};

static char **base_env;          /* -genv + filtered environ + defaults, NULL-terminated */
static size_t base_n;
static int devnull = -1;
static struct rlimit nofile_orig;
static int have_nofile;

/* Does "NAME=..." (or bare NAME) have the name `name`? */
static int env_is(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return strncmp(entry, name, n) == 0 && (entry[n] == '=' || entry[n] == '\0');
}

static int is_rank_var(const char *entry)
{
    for (int i = 0; i < NRANKVARS; i++)
        if (env_is(entry, rank_vars[i]))
            return 1;
    return 0;
}

/* The length of the name of "NAME=VALUE". */
static size_t name_len(const char *entry)
{
    return strcspn(entry, "=");
}

/* Does app's -env set the variable of "NAME=..."? Before index `from` only
 * when from >= 0 (a later -env of a name wins). */
static int app_sets(const struct app *app, const char *entry, int from)
{
    size_t n = name_len(entry);
    for (int e = from < 0 ? 0 : from; e < app->nenv; e++)
        if (strncmp(app->env[e], entry, n) == 0 && app->env[e][n] == '=')
            return 1;
    return 0;
}

/* app's -env settings that reach its ranks, stored at out; returns how many. */
static size_t app_env(const struct app *app, char **out)
{
    size_t n = 0;
    for (int e = 0; e < app->nenv; e++)
        if (!app_sets(app, app->env[e], e + 1) && !is_rank_var(app->env[e]))
            out[n++] = app->env[e];
    return n;
}

void launch_prepare(struct job *j)
{
    struct options *o = j->opt;
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    base_env = calloc(nenv + (size_t)o->ngenv + NDEFAULTS + 1, sizeof *base_env);
    if (!base_env)
        die("out of memory");

    /* -genv: skip names we set per rank and names a later -genv overrides. */
    for (int g = 0; g < o->ngenv; g++) {
        const char *k = o->genv_key[g];
        int later = 0;
        for (int h = g + 1; h < o->ngenv; h++)
            if (strcmp(o->genv_key[h], k) == 0)
                later = 1;
        if (later)
            continue;
        if (is_rank_var(k)) {
            fprintf(stderr, "mpiexec: warning: -genv %s ignored: mpiexec sets it per rank\n", k);
            continue;
        }
        size_t len = strlen(k) + 1 + strlen(o->genv_val[g]) + 1;
        char *e = malloc(len);
        if (!e)
            die("out of memory");
        snprintf(e, len, "%s=%s", k, o->genv_val[g]);
        base_env[base_n++] = e;
    }
    for (size_t i = 0; i < nenv; i++) {
        const char *e = environ[i];
        if (strncmp(e, "PMI_", 4) == 0 || strncmp(e, "PMIX_", 5) == 0 || is_rank_var(e))
            continue;
        int overridden = 0;
        for (int g = 0; g < o->ngenv && !overridden; g++)
            overridden = env_is(e, o->genv_key[g]);
        if (!overridden)
            base_env[base_n++] = (char *)e;
    }
    for (int d = 0; d < NDEFAULTS; d++) {
        size_t name = strcspn(default_vars[d], "=");
        int set = 0;
        for (size_t i = 0; i < base_n && !set; i++)
            set = strncmp(base_env[i], default_vars[d], name + 1) == 0;
        if (!set)
            base_env[base_n++] = (char *)default_vars[d];
    }
    base_env[base_n] = NULL;

    for (int a = 0; a < o->napps; a++)
        for (int e = 0; e < o->apps[a].nenv; e++)
            if (is_rank_var(o->apps[a].env[e]))
                fprintf(stderr, "mpiexec: warning: -env %.*s ignored: mpiexec sets it per rank\n",
                        (int)name_len(o->apps[a].env[e]), o->apps[a].env[e]);

    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0)
        die("cannot open /dev/null: %s", strerror(errno));

    /* Many ranks need many descriptors here; the ranks get the original limit. */
    if (getrlimit(RLIMIT_NOFILE, &nofile_orig) == 0) {
        have_nofile = 1;
        struct rlimit raised = nofile_orig;
        raised.rlim_cur = raised.rlim_max;
        setrlimit(RLIMIT_NOFILE, &raised);
    }
}

/* The program process r runs, and the directory it starts in (NULL: mpiexec's). */
static char *const *program_of(const struct job *j, int r, const char **wdir)
{
    const struct rank *rk = j->ranks[r];
    if (rk->world == 0) {
        *wdir = j->opt->wdir;
        return j->opt->apps[rk->appnum].argv;
    }
    const struct spawn_app *app = &j->worlds[rk->world]->apps[rk->appnum];
    *wdir = app->wdir ? app->wdir : j->opt->wdir;
    return app->argv;
}

/* "rank R", "spawned rank R of world K": for messages before the fork. */
static const char *short_name(const struct job *j, int r, char *buf, size_t cap)
{
    const struct rank *rk = j->ranks[r];
    if (rk->world == 0)
        snprintf(buf, cap, "rank %d", r);
    else
        snprintf(buf, cap, "spawned rank %d of world %d", rk->wrank, rk->world);
    return buf;
}

static void __attribute__((noreturn)) child(struct job *j, int r, char **envp, int errw,
                                            int outw[2])
{
    struct rank *rk = j->ranks[r];
    signals_child_reset();       /* defaults, then unblock */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != j->self)    /* mpiexec died before prctl took effect */
        _exit(127);
    if (r != 0 && dup2(devnull, STDIN_FILENO) < 0)
        goto fail;
    if (outw[0] >= 0 && (dup2(outw[0], STDOUT_FILENO) < 0 || dup2(outw[1], STDERR_FILENO) < 0))
        goto fail;
    int fl = fcntl(rk->child_fd, F_GETFD);
    if (fl < 0 || fcntl(rk->child_fd, F_SETFD, fl & ~FD_CLOEXEC) < 0)
        goto fail;
    if (rk->bound)
        sched_setaffinity(0, sizeof rk->cpus, &rk->cpus);   /* best effort */
    if (have_nofile)
        setrlimit(RLIMIT_NOFILE, &nofile_orig);
    int sign = -1;               /* negative errno: the chdir failed, not the exec */
    const char *wdir;
    char *const *argv = program_of(j, r, &wdir);
    if (wdir && chdir(wdir) != 0)
        goto report;
    sign = 1;
    execvpe(argv[0], argv, envp);
fail:
    sign = 1;
report:;
    int e = sign * errno;
    ssize_t w = write(errw, &e, sizeof e);
    (void)w;
    _exit(127);
}

void launch_rank(struct job *j, int r)
{
    struct rank *rk = j->ranks[r];
    const struct world *w = j->worlds[rk->world];
    char name[64];
    if (rk->world != 0) {
        rk->bound = 0;
        snprintf(rk->bind_desc, sizeof rk->bind_desc, "not bound (spawned process)");
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        fprintf(stderr, "mpiexec: cannot create the PMI socket for %s: %s\n",
                short_name(j, r, name, sizeof name), strerror(errno));
        job_terminate(j, 1, 0);
    }
    rk->pmi_fd = sv[0];
    rk->child_fd = sv[1];
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);

    int pipes[2][2] = { { -1, -1 }, { -1, -1 } };
    int outw[2] = { -1, -1 };
    if (j->opt->tag_output) {
        if (output_open(rk, pipes) != 0) {
            fprintf(stderr, "mpiexec: cannot create output pipes for %s: %s\n",
                    short_name(j, r, name, sizeof name), strerror(errno));
            job_terminate(j, 1, 0);
        }
        outw[0] = pipes[0][1];
        outw[1] = pipes[1][1];
    }
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) != 0) {
        fprintf(stderr, "mpiexec: cannot create a pipe for %s: %s\n", short_name(j, r, name, sizeof name),
                strerror(errno));
        job_terminate(j, 1, 0);
    }

    char vars[NRANKVARS - 1][128];
    snprintf(vars[0], sizeof vars[0], "PMI_FD=%d", sv[1]);
    snprintf(vars[1], sizeof vars[1], "PMI_RANK=%d", rk->wrank);
    snprintf(vars[2], sizeof vars[2], "PMI_SIZE=%d", w->n);
    snprintf(vars[3], sizeof vars[3], "PMI_JOBID=%s", w->kvsname);
    snprintf(vars[4], sizeof vars[4], "FERRY_LOCAL_RANK=%d", rk->wrank);
    snprintf(vars[5], sizeof vars[5], "FERRY_LOCAL_SIZE=%d", w->n);
    snprintf(vars[6], sizeof vars[6], "PMI_FERRY_UNIVERSE=%s", j->jobid);
    snprintf(vars[7], sizeof vars[7], "PMI_FERRY_SECRET=%s", j->secret);
    snprintf(vars[8], sizeof vars[8], "PMI_FERRY_UID_BASE=%d", w->base);
    char *port = NULL;           /* PMI_FERRY_PARENT_PORT=...: any length */
    if (w->parent_port) {
        size_t len = sizeof "PMI_FERRY_PARENT_PORT=" + strlen(w->parent_port);
        if (!(port = malloc(len)))
            die("out of memory");
        snprintf(port, len, "PMI_FERRY_PARENT_PORT=%s", w->parent_port);
    }
    /* world 0: its program's -env; spawned processes have none */
    const struct app *app = rk->world == 0 ? &j->opt->apps[rk->appnum] : NULL;
    char **envp = malloc((NRANKVARS + (size_t)(app ? app->nenv : 0) + base_n + 1) * sizeof *envp);
    if (!envp)
        die("out of memory");
    size_t ne = 0;
    for (int i = 0; i < NRANKVARS - 1; i++)
        envp[ne++] = vars[i];
    if (port)
        envp[ne++] = port;
    if (app)
        ne += app_env(app, envp + ne);
    for (size_t i = 0; i <= base_n; i++)   /* the NULL too */
        if (!base_env[i] || !app || !app_sets(app, base_env[i], -1))
            envp[ne++] = base_env[i];

    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0)
        child(j, r, envp, ep[1], outw);
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(envp);
    free(port);
    close(ep[1]);
    close(sv[1]);
    rk->child_fd = -1;
    if (outw[0] >= 0) {
        close(outw[0]);
        close(outw[1]);
    }
    if (pid < 0) {
        close(ep[0]);
        fprintf(stderr, "mpiexec: cannot start %s: fork: %s\n", short_name(j, r, name, sizeof name),
                strerror(fork_errno));
        job_terminate(j, 1, 0);
    }
    rk->pid = pid;
    rk->state = RS_RUNNING;
    j->nrunning++;

    int e = 0;
    ssize_t got;
    do
        got = read(ep[0], &e, sizeof e);
    while (got < 0 && errno == EINTR);
    close(ep[0]);
    if (got == (ssize_t)sizeof e) {
        const char *wdir;
        char *const *argv = program_of(j, r, &wdir);
        if (e < 0)
            fprintf(stderr, "mpiexec: cannot start in '%s': %s\n", wdir, strerror(-e));
        else
            fprintf(stderr, "mpiexec: cannot execute '%s': %s\n", argv[0], strerror(e));
        job_terminate(j, 127, 0);
    }
    if (j->opt->report_bindings) {
        char desc[128];
        fprintf(stderr, "mpiexec: %s %s\n", rank_desc(j, r, desc, sizeof desc), rk->bind_desc);
    }
}
