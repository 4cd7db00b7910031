/* options: mpiexec's command line.
 *
 *   mpiexec -n|-np N [-genv K V]... [--bind-to core|numa|none] [--tag-output]
 *           [--report-bindings] [--timeout S] [--help] [--help-env] prog args...
 *
 * Options may be spelled with one or two dashes; "--opt=value" works for the
 * options that take one value. Option parsing stops at the first word that
 * is not an option (the program) or after "--". */
#include "mpiexec.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPROCS_MAX 65536

void usage(FILE *f)
{
    fprintf(f,
"Usage: mpiexec -n N [options] program [arguments...]\n"
"Start N copies of program on this node as one MPI job (Ferry, PMI-1).\n"
"\n"
"  -n N, -np N            number of processes (default 1)\n"
"  -genv NAME VALUE       set NAME=VALUE in the environment of every process\n"
"  --bind-to core|numa|none\n"
"                         core: bind rank i to core i mod (allowed cores); numa: bind\n"
"                         consecutive ranks to the cores of one NUMA node; the default\n"
"                         is core when N <= allowed cores, none otherwise; when the\n"
"                         ranks see OMP_NUM_THREADS=T > 1, the default gives each rank\n"
"                         min(T, cores / N) cores\n"
"  --report-bindings      print each rank's binding on stderr\n"
"  --tag-output           prefix every line of output with [rank]\n"
"  --timeout S            kill the job after S seconds (exit status 255); the\n"
"                         environment variable MPIEXEC_TIMEOUT does the same\n"
"  --help                 this text\n"
"  --help-env             environment variables Ferry understands (ferry_info --env)\n"
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

void options_parse(struct options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->nprocs = 1;
    o->bind = BIND_DEFAULT;
    o->genv_key = calloc((size_t)argc, sizeof *o->genv_key);
    o->genv_val = calloc((size_t)argc, sizeof *o->genv_val);
    if (!o->genv_key || !o->genv_val)
        die("out of memory");
    /* hydra's and Open MPI's variable for the same limit */
    const char *env_timeout = getenv("MPIEXEC_TIMEOUT");
    if (env_timeout && *env_timeout)
        o->timeout_s = parse_timeout(env_timeout, "MPIEXEC_TIMEOUT must be a number of seconds, not '%s'");

    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        const char *name = opt_name(a);
        if (!name)
            break;                          /* the program */
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
            o->nprocs = (int)n;
        } else if (strcmp(name, "genv") == 0) {
            if (i + 2 >= argc)
                usage_error("%s needs a name and a value", a);
            const char *k = argv[i + 1];
            if (!*k || strchr(k, '='))
                usage_error("-genv: invalid variable name '%s'", k);
            o->genv_key[o->ngenv] = argv[i + 1];
            o->genv_val[o->ngenv] = argv[i + 2];
            o->ngenv++;
            i += 2;
        } else if (name_is(name, "bind-to")) {
            const char *v = opt_value(argc, argv, &i, name);
            if (strcmp(v, "core") == 0)
                o->bind = BIND_CORE;
            else if (strcmp(v, "numa") == 0)
                o->bind = BIND_NUMA;
            else if (strcmp(v, "none") == 0)
                o->bind = BIND_NONE;
            else
                usage_error("--bind-to takes 'core', 'numa' or 'none', not '%s'", v);
        } else if (strcmp(name, "tag-output") == 0) {
            o->tag_output = 1;
        } else if (name_is(name, "timeout")) {
            o->timeout_s = parse_timeout(opt_value(argc, argv, &i, name),
                                         "--timeout needs a number of seconds, not '%s'");
        } else if (strcmp(name, "report-bindings") == 0) {
            o->report_bindings = 1;
        } else if (strcmp(name, "help") == 0 || strcmp(name, "h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(name, "help-env") == 0) {
            help_env();
        } else {
            usage_error("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        usage_error("no program to run%s", "");
    o->argv = argv + i;
}
