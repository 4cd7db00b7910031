/* options: mpiexec's command line.
 *
 *   mpiexec [global options] [-n N] [-env K V]... prog args...
 *           [: [-n N] [-env K V]... prog args...]...
 *
 *   global: -genv K V (-x K=V), --bind-to core|hwthread|socket|numa|none, --tag-output
 *           (-l, -prepend-rank), -wdir DIR (--wdir, -wd),
 *           --report-bindings, --timeout S, --oversubscribe and
 *           --allow-run-as-root (accepted, no effect), -hosts/--host/-f/
 *           --hostfile naming this machine only, -ppn (no effect), --help,
 *           --help-env
 *
 *   mpiexec --adopt-singleton       (internal: the only argument; see below)
 *
 * A lone ":" separates the programs of an MPMD job (MPI-4.0 11.5, as under
 * hydra and Open MPI): each gets its own -n and -env, its ranks follow the
 * previous program's, and MPI_APPNUM tells them apart. Global options may
 * stand in any section and apply to the whole job. Options may be spelled
 * with one or two dashes; "--opt=value" works for the options that take one
 * value. A section's options end at the first word that is not an option
 * (the program) or after "--"..
 *
 * --adopt-singleton: Ferry's library runs this when a singleton (an MPI
 * process started without mpiexec) first spawns. It is mpiexec's child and
 * passes, in the environment, PMI_FERRY_ADOPT_FD (mpiexec's end of a
 * socketpair, inherited: the singleton's PMI connection) and
 * PMI_FERRY_ADOPT_PID (its own pid); mpiexec adopts it as world 0's only
 * rank (mpiexec.h). No program and no other option may be given;
 * MPIEXEC_TIMEOUT and MPIEXEC_UNIVERSE_SIZE apply as usual. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPROCS_MAX 65536

void usage(FILE *f)
{
    fprintf(f,
"Usage: mpiexec -n N [options] program [arguments...]\n"
"       mpiexec [options] -n N1 prog1 [args...] : -n N2 prog2 [args...] : ...\n"
"Start N copies of program on this node as one MPI job (Ferry, PMI-1); with\n"
"':' between them, several programs as one job (MPMD): prog1 runs as ranks\n"
"0..N1-1 with MPI_APPNUM 0, prog2 as the next N2 ranks with MPI_APPNUM 1, ...\n"
"\n"
"  -n N, -np N            number of processes of this program (default 1)\n"
"  -env NAME VALUE        set NAME=VALUE for this program's processes\n"
"  -genv NAME VALUE       set NAME=VALUE in the environment of every process\n"
"  -x NAME[=VALUE]        the same (Open MPI's spelling); -x NAME passes mpiexec's value\n"
"  --bind-to core|hwthread|socket|numa|none\n"
"                         core: bind rank i to core i mod (allowed cores); hwthread:\n"
"                         to one hardware thread (PU) each the same way; socket, numa:\n"
"                         bind consecutive ranks to the cores of one package or NUMA\n"
"                         node; the default is core when N <= allowed cores, none\n"
"                         otherwise; when the ranks see OMP_NUM_THREADS=T > 1, the\n"
"                         default gives each rank min(T, cores / N) cores\n"
"  -usize N               MPI_UNIVERSE_SIZE, the processes worth starting in all,\n"
"                         spawned ones included (default: unset, the attribute has no\n"
"                         value, as with hydra); MPIEXEC_UNIVERSE_SIZE does the same\n"
"  --report-bindings      print each rank's binding on stderr\n"
"  --tag-output, -l       prefix every line of output with [rank]\n"
"  -wdir DIR              start the processes in DIR (default: the current directory)\n"
"  --timeout S            kill the job after S seconds (exit status 255); the\n"
"                         environment variable MPIEXEC_TIMEOUT does the same\n"
"  -hosts, --host H[,H...], -f, --hostfile FILE\n"
"                         accepted when every host named is this machine (localhost,\n"
"                         127.x, its name); -ppn N is accepted and changes nothing\n"
"  --oversubscribe, --allow-run-as-root\n"
"                         accepted for Open MPI's mpirun's sake; Ferry runs more\n"
"                         ranks than cores, and as root, without them\n"
"  --help                 this text\n"
"  --help-env             environment variables Ferry understands (ferry_info --env)\n"
"  --adopt-singleton      internal: started by a singleton MPI process that spawns\n"
"                         (MPI_Comm_spawn without mpiexec); not for users\n"
"\n"
"Each process gets PMI_FD, PMI_RANK, PMI_SIZE, PMI_JOBID, FERRY_LOCAL_RANK and\n"
"FERRY_LOCAL_SIZE. Rank 0 reads mpiexec's stdin; the others read /dev/null.\n"
"If a process dies, aborts, or exits before MPI_Finalize, the job is killed.\n"
"Exit status: the first non-zero exit status of a process (128+S for signal S),\n"
"127 when the program cannot be executed, 130/143 on SIGINT/SIGTERM.\n");
}

static void __attribute__((noreturn)) usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpiexec: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (try 'mpiexec --help')\n");
    exit(2);
}

static void __attribute__((noreturn)) help_env(void)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
    if (n <= 0) {
        fprintf(stderr, "mpiexec: --help-env: cannot locate mpiexec itself: %s\n",
                strerror(errno));
        exit(1);
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        slash = self - 1;
    strcpy(slash + 1, "ferry_info");
    if (access(self, X_OK) == 0) {
        fflush(stdout);
        execl(self, "ferry_info", "--env", (char *)NULL);
        fprintf(stderr, "mpiexec: --help-env: cannot execute '%s': %s\n", self, strerror(errno));
        exit(1);
    }
    fprintf(stderr, "mpiexec: --help-env needs ferry_info, which is not installed next "
            "to mpiexec (looked for %s)\n", self);
    exit(1);
}

/* Option name without its leading dashes; NULL when `a` is not an option. */
static const char *opt_name(const char *a)
{
    if (a[0] != '-' || a[1] == '\0')
        return NULL;
    return a[1] == '-' ? a + 2 : a + 1;
}

/* The value of option `name` at argv[*i]: "--name=value" or the next word. */
static const char *opt_value(int argc, char **argv, int *i, const char *given)
{
    const char *eq = strchr(given, '=');
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc)
        usage_error("option '%s' needs a value", argv[*i]);
    return argv[++*i];
}

static int name_is(const char *given, const char *name)
{
    size_t n = strlen(name);
    return strncmp(given, name, n) == 0 && (given[n] == '\0' || given[n] == '=');
}

/* A time limit in whole seconds, 1 to a day times 365. */
static int parse_timeout(const char *v, const char *what)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 1 || n > 365L * 86400)
        usage_error(what, v);
    return (int)n;
}

/* The environment option (-genv or -env) at argv[*i]: its name and value. */
static void env_option(int argc, char **argv, int *i, char **key, char **val)
{
    const char *a = argv[*i];
    if (*i + 2 >= argc)
        usage_error("%s needs a name and a value", a);
    const char *k = argv[*i + 1];
    if (!*k || strchr(k, '='))
        usage_error("invalid variable name '%s'", k);
    *key = argv[*i + 1];
    *val = argv[*i + 2];
    *i += 2;
}

static char *env_entry(const char *k, const char *v)
{
    size_t len = strlen(k) + 1 + strlen(v) + 1;
    char *e = malloc(len);
    if (!e)
        die("out of memory");
    snprintf(e, len, "%s=%s", k, v);
    return e;
}

/* Is host (up to its ':' or end, length n) this machine? */
static int host_is_local(const char *host, size_t n)
{
    char self[256];
    if (n == 0 || (n == 9 && strncmp(host, "localhost", 9) == 0) || (n >= 4 && strncmp(host, "127.", 4) == 0) ||
        (n == 3 && strncmp(host, "::1", 3) == 0))
        return 1;
    if (gethostname(self, sizeof self) != 0)
        return 0;
    self[sizeof self - 1] = '\0';
    size_t short_len = strcspn(self, ".");
    return (n == strlen(self) && strncmp(host, self, n) == 0) ||
           (n == short_len && strncmp(host, self, n) == 0);
}

/* Hosts named by -hosts/--host ("a,b:4") or a host file (one "name",
 * "name:slots" or "name slots=N" per line): Ferry's mpiexec runs one node,
 * so every one must be this machine; scripts written for hydra or mpirun
 * that name it then run unchanged. */
static void check_hosts(const char *list, const char *what)
{
    for (const char *h = list; *h;) {
        h += strspn(h, ", \t\n");
        size_t n = strcspn(h, ":, \t\n");
        if (n && !host_is_local(h, n)) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s names host '%.*s': Ferry's mpiexec starts ranks on this node only "
                     "(Ferry has no transport between nodes yet)%%s", what, (int)(n > 64 ? 64 : n), h);
            usage_error(msg, "");
        }
        h += n;
        h += strcspn(h, ",\n");   /* skip ":slots" or " slots=N" */
    }
}

static void check_hostfile(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        usage_error("cannot read the host file '%s'", path);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "#")] = '\0';
        line[strcspn(line, " \t")] = '\0';   /* "name slots=N": the name */
        check_hosts(line, "the host file");
    }
    fclose(f);
}

/* The options of one section, from argv[i] up to its program: -n and -env
 * go to `app`, the others to `o`. Returns the index of the program. */
static int parse_usize(const char *v, const char *fmt)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < 1 || n > 4096)
        usage_error(fmt, v);
    return (int)n;
}

static int parse_section(struct options *o, struct app *app, int argc, char **argv, int i)
{
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return i + 1;
        const char *name = opt_name(a);
        if (!name)
            return i;                       /* the program, or a ':' with none before it */
        if (name_is(name, "n") || name_is(name, "np")) {
            const char *v = opt_value(argc, argv, &i, name);
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (errno || end == v || *end || n < 1 || n > NPROCS_MAX) {
                char msg[64];
                snprintf(msg, sizeof msg, "-n needs a process count from 1 to %d, got '%%s'",
                         NPROCS_MAX);
                usage_error(msg, v);
            }
            app->nprocs = (int)n;
        } else if (strcmp(name, "env") == 0) {
            char *k, *v;
            env_option(argc, argv, &i, &k, &v);
            app->env[app->nenv++] = env_entry(k, v);
        } else if (strcmp(name, "genv") == 0) {
            env_option(argc, argv, &i, &o->genv_key[o->ngenv], &o->genv_val[o->ngenv]);
            o->ngenv++;
        } else if (strcmp(name, "x") == 0) {
            /* Open MPI's -x NAME=VALUE, or -x NAME: export mpiexec's own value
             * (which every rank gets anyway unless a -genv changed it) */
            if (i + 1 >= argc)
                usage_error("%s needs NAME or NAME=VALUE", a);
            char *k = argv[++i], *eq = strchr(k, '=');
            if (k == eq || !*k)
                usage_error("-x: invalid variable name in '%s'", k);
            if (eq) {
                *eq = '\0';
                o->genv_key[o->ngenv] = k;
                o->genv_val[o->ngenv++] = eq + 1;
            } else if (getenv(k)) {
                o->genv_key[o->ngenv] = k;
                o->genv_val[o->ngenv++] = getenv(k);
            }
        } else if (name_is(name, "bind-to")) {
            const char *v = opt_value(argc, argv, &i, name);
            if (strcmp(v, "core") == 0)
                o->bind = BIND_CORE;
            else if (strcmp(v, "hwthread") == 0)
                o->bind = BIND_HWTHREAD;
            else if (strcmp(v, "socket") == 0 || strcmp(v, "package") == 0)
                o->bind = BIND_SOCKET;
            else if (strcmp(v, "numa") == 0)
                o->bind = BIND_NUMA;
            else if (strcmp(v, "none") == 0)
                o->bind = BIND_NONE;
            else
                usage_error("--bind-to takes 'core', 'hwthread', 'socket', 'numa' or 'none', not '%s'", v);
        } else if (strcmp(name, "tag-output") == 0 || strcmp(name, "l") == 0 || strcmp(name, "prepend-rank") == 0) {
            o->tag_output = 1;
        } else if (name_is(name, "timeout")) {
            o->timeout_s = parse_timeout(opt_value(argc, argv, &i, name),
                                         "--timeout needs a number of seconds, not '%s'");
        } else if (name_is(name, "usize") || name_is(name, "universe-size")) {
            o->usize = parse_usize(opt_value(argc, argv, &i, name), "-usize needs a number of processes, not '%s'");
        } else if (strcmp(name, "report-bindings") == 0) {
            o->report_bindings = 1;
        } else if (strcmp(name, "hosts") == 0 || name_is(name, "host") || strcmp(name, "H") == 0) {
            check_hosts(opt_value(argc, argv, &i, name), a);
        } else if (strcmp(name, "f") == 0 || name_is(name, "hostfile") || name_is(name, "machinefile")) {
            check_hostfile(opt_value(argc, argv, &i, name));
        } else if (name_is(name, "wdir") || name_is(name, "wd")) {
            o->wdir = opt_value(argc, argv, &i, name);
        } else if (name_is(name, "ppn")) {
            /* processes per node: one node holds them all whatever it says */
            opt_value(argc, argv, &i, name);
        } else if (strcmp(name, "oversubscribe") == 0 || strcmp(name, "allow-run-as-root") == 0) {
            /* Open MPI's mpirun refuses both cases without them; Ferry
             * allows them anyway, so scripts written for it run as they are */
        } else if (strcmp(name, "help") == 0 || strcmp(name, "h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(name, "help-env") == 0) {
            help_env();
        } else if (strcmp(name, "adopt-singleton") == 0) {
            usage_error("%s must be mpiexec's only argument (it is internal: a singleton MPI process "
                        "that spawns starts mpiexec so)", a);
        } else {
            usage_error("unknown option '%s'", a);
        }
    }
    return i;
}

static void *alloc_array(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        die("out of memory");
    return p;
}

int options_adopt_requested(int argc, char **argv)
{
    const char *name = argc >= 2 ? opt_name(argv[1]) : NULL;
    return name && strcmp(name, "adopt-singleton") == 0;
}

static void __attribute__((noreturn)) adopt_error(const char *var, const char *val, const char *what)
{
    if (val)
        fprintf(stderr, "mpiexec: --adopt-singleton: %s=%s %s\n", var, val, what);
    else
        fprintf(stderr, "mpiexec: --adopt-singleton: %s %s\n", var, what);
    exit(2);
}

/* A strict decimal number from 0 to max; -1 when v is not one. */
static long adopt_number(const char *v, long max)
{
    char *end;
    errno = 0;
    long n = v && *v ? strtol(v, &end, 10) : -1;
    if (!v || !*v || errno || *end || n < 0 || n > max || !(*v >= '0' && *v <= '9'))
        return -1;
    return n;
}

/* --adopt-singleton: the singleton's descriptor and pid, from the environment. */
static void parse_adopt(struct options *o, int argc, char **argv)
{
    if (argc != 2)
        usage_error("%s takes no program and no other option (it is internal: a singleton MPI "
                    "process that spawns starts mpiexec so)", argv[1]);
    const char *fdv = getenv("PMI_FERRY_ADOPT_FD"), *pidv = getenv("PMI_FERRY_ADOPT_PID");
    if (!fdv)
        adopt_error("PMI_FERRY_ADOPT_FD", NULL, "is not set");
    if (!pidv)
        adopt_error("PMI_FERRY_ADOPT_PID", NULL, "is not set");
    long fd = adopt_number(fdv, INT_MAX), pid = adopt_number(pidv, INT_MAX);
    if (fd < 0)
        adopt_error("PMI_FERRY_ADOPT_FD", fdv, "is not a descriptor number");
    if (pid <= 0)
        adopt_error("PMI_FERRY_ADOPT_PID", pidv, "is not a process id (a number > 0)");
    struct stat sb;
    if (fcntl((int)fd, F_GETFD) < 0)
        adopt_error("PMI_FERRY_ADOPT_FD", fdv, "is not an open descriptor");
    if (fstat((int)fd, &sb) != 0 || !S_ISSOCK(sb.st_mode))
        adopt_error("PMI_FERRY_ADOPT_FD", fdv, "is not a socket");
    o->adopt = 1;
    o->adopt_fd = (int)fd;
    o->adopt_pid = (pid_t)pid;
    o->nprocs = 1;                          /* world 0: the singleton */
}

void options_parse(struct options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->bind = BIND_DEFAULT;
    /* every option word could be a -genv, every ':' start a program */
    o->genv_key = alloc_array((size_t)argc, sizeof *o->genv_key);
    o->genv_val = alloc_array((size_t)argc, sizeof *o->genv_val);
    o->apps = alloc_array((size_t)argc, sizeof *o->apps);
    /* hydra's and Open MPI's variable for the same limit */
    const char *env_timeout = getenv("MPIEXEC_TIMEOUT");
    if (env_timeout && *env_timeout)
        o->timeout_s = parse_timeout(env_timeout, "MPIEXEC_TIMEOUT must be a number of seconds, not '%s'");

    /* hydra's variable for -usize */
    const char *env_usize = getenv("MPIEXEC_UNIVERSE_SIZE");
    if (env_usize && *env_usize)
        o->usize = parse_usize(env_usize, "MPIEXEC_UNIVERSE_SIZE must be a number of processes (1-4096), not '%s'");

    if (options_adopt_requested(argc, argv)) {
        parse_adopt(o, argc, argv);
        return;
    }

    for (int i = 1;;) {
        struct app *app = &o->apps[o->napps];
        app->nprocs = 1;
        app->env = alloc_array((size_t)argc, sizeof *app->env);
        i = parse_section(o, app, argc, argv, i);
        if (i >= argc || strcmp(argv[i], ":") == 0)
            usage_error("no program to run%s", o->napps ? " after ':'" : "");
        app->argv = argv + i;
        while (i < argc && strcmp(argv[i], ":") != 0)
            i++;
        if (o->nprocs > NPROCS_MAX - app->nprocs) {
            char msg[64];
            snprintf(msg, sizeof msg, "more than %d processes in all%%s", NPROCS_MAX);
            usage_error(msg, "");
        }
        app->first_rank = o->nprocs;
        o->nprocs += app->nprocs;
        o->napps++;
        if (i >= argc)
            break;
        argv[i++] = NULL;                   /* ends this program's arguments */
    }
}

const struct app *options_app_of(const struct options *o, int r)
{
    int a = 0;
    while (a + 1 < o->napps && r >= o->apps[a + 1].first_rank)
        a++;
    return &o->apps[a];
}
