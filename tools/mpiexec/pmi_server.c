/* pmi_server: the PMI-1 wire protocol, server side, one node.
 *
 * Each process has the server end of a socketpair (non-blocking). The event
 * loop calls pmi_server_readable() when it polls readable; requests are
 * answered at once, except barrier_in, which is answered (to everyone) when
 * the last rank of the requester's world enters, and spawn, answered after
 * its last line. Replies follow hydra's wording so that MPICH's simple PMI
 * client works too:
 *
 *   init pmi_version=1        -> response_to_init pmi_version=1 pmi_subversion=1 rc=0
 *   get_maxes                 -> maxes kvsname_max= keylen_max= vallen_max=
 *   get_appnum                -> appnum appnum=<the process's program, from 0 (MPMD, spawn_multiple)>
 *   get_my_kvsname            -> my_kvsname kvsname=<its world's kvsname>
 *   get_universe_size         -> universe_size size=U   (-usize; else -1, unset, as hydra
 *                                                      answers: MPI_UNIVERSE_SIZE has no value)
 *   get_universe              -> universe rc=0 universe=<jobid> secret=<32 hex digits>
 *                                uid_base=<the requester's world's first uid> size=U
 *                                (what a launched process finds in PMI_FERRY_UNIVERSE,
 *                                _SECRET, _UID_BASE; an adopted singleton has no such
 *                                variables and asks this; U as get_universe_size)
 *   put kvsname= key= value=  -> put_result rc=0 msg=success
 *   get kvsname= key=         -> get_result rc=0 msg=success value=   (rc=-1 when absent)
 *   barrier_in                -> barrier_out            (when all ranks of its world entered)
 *   finalize                  -> finalize_ack
 *   abort exitcode=N          -> the job is killed
 *   spawn napps=M appidx=I nprocs=N execname=E argcnt=K arg1=.. argK=.. [wdir=D] [port=P]
 *         (or, for many arguments, args=A1,...,AK instead of arg1..argK, and
 *         before the line any number of spawn_args args=A1,...,Ai lines,
 *         unanswered, whose arguments come first)
 *                             -> spawn_result rc=0 base=<first uid> size=<T> kvsname=<new world's>
 *                                spawn_result rc=-1 msg=<reason, percent-encoded>
 *   publish_name service=S port=P -> publish_result rc=0   (rc=-1 msg=already_published)
 *   unpublish_name service=S  -> unpublish_result rc=0      (rc=-1 msg=not_published)
 *   lookup_name service=S     -> lookup_result rc=0 port=P  (rc=-1 msg=not_published)
 *                                (one name table for the universe: every world sees it)
 *
 * Every world (world 0: the command line's ranks; one more per spawn) has
 * its own kvsname (world 0: the jobid; world k: "<jobid>s<k>"), key space
 * and barrier; put and get name the requester's own world's kvsname, any
 * other is refused (rc=-1 msg=unknown_kvsname). Each key space is
 * pre-seeded with PMI_process_mapping "(vector,(0,1,N))", N its world's
 * size (all on node 0), which MPICH uses to find its node-local peers.
 *
 * Spawn (MPI_Comm_spawn: M=1; MPI_Comm_spawn_multiple: M apps) is one line
 * per app, I = 0..M-1 in order, from one process; its other requests may
 * come between them. execname, argN, wdir and port are percent-encoded:
 * %XX (two hex digits, not %00) stands for a byte, anything else for
 * itself. With the last line (I = M-1) mpiexec checks the request and
 * starts all apps as ONE new world of T = sum of N processes: app 0's are
 * its ranks 0..N0-1, app 1's the next N1, ...; a process's appnum is its
 * app's index; their uids are base..base+T-1 (base: the processes started
 * so far). It answers rc=0 once they are forked (not yet initialized), or
 * rc=-1 (and starts nothing; the job goes on) when nprocs < 1, napps < 1,
 * the appidx/napps sequence breaks, argcnt does not match the argN keys, a
 * value is badly encoded, a wdir is no directory, an execname cannot be
 * executed (a name with '/' from the wdir, others along PATH, as execvp),
 * the universe would grow past UNIVERSE_MAX (4096) processes, or the
 * requester is gone. wdir (relative: to mpiexec's -wdir, else its own
 * directory) defaults to where world 0 started; port (from I=0) reaches
 * every spawned process as PMI_FERRY_PARENT_PORT. Spawned processes are
 * started as launch.c describes: argv = execname arg1..argK, stdin
 * /dev/null, unbound. The line limits (PMI_WIRE_PAIRS_MAX pairs) allow 24
 * arguments per app with both wdir and port.
 *
 * A malformed or unsupported request fails the job: the client would
 * otherwise wait forever for an answer it cannot get.
 *
 * A process's connection closing ends nothing by itself (its exit status,
 * when mpiexec reaps it, tells), except for the adopted singleton of
 * --adopt-singleton, which is no child of mpiexec: the end of its connection
 * is its exit (job_adopted_closed, job.c). Its own cmd=abort fails the job
 * without signalling it: it leaves by itself, with its error code. */
#include "mpiexec.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define KVSNAME_MAX 256
#define KEYLEN_MAX  256
#define VALLEN_MAX  2048

struct kv {
    struct kv *next;
    char *key;
    char *val;
};

/* One world's key-value store: a chained hash table. */
struct kvs {
    struct kv **table;
    size_t size;                                   /* a power of 2 */
    size_t count;
};

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static struct kv *kvs_find(struct kvs *t, const char *key)
{
    for (struct kv *e = t->table[hash(key) & (t->size - 1)]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static void kvs_grow(struct kvs *t)
{
    size_t nsize = t->size * 2;
    struct kv **nt = calloc(nsize, sizeof *nt);
    if (!nt)
        return;                                    /* keep the longer chains */
    for (size_t i = 0; i < t->size; i++)
        for (struct kv *e = t->table[i], *next; e; e = next) {
            next = e->next;
            struct kv **b = &nt[hash(e->key) & (nsize - 1)];
            e->next = *b;
            *b = e;
        }
    free(t->table);
    t->table = nt;
    t->size = nsize;
}

static int kvs_put(struct kvs *t, const char *key, const char *val)
{
    struct kv *e = kvs_find(t, key);
    char *v = strdup(val);
    if (!v)
        return -1;
    if (e) {                                       /* a re-put replaces */
        free(e->val);
        e->val = v;
        return 0;
    }
    e = malloc(sizeof *e);
    if (!e || !(e->key = strdup(key))) {
        free(e);
        free(v);
        return -1;
    }
    e->val = v;
    struct kv **b = &t->table[hash(key) & (t->size - 1)];
    e->next = *b;
    *b = e;
    if (++t->count > t->size * 2)
        kvs_grow(t);
    return 0;
}

int pmi_server_world_init(struct world *w)
{
    struct kvs *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    t->size = 256;
    while (t->size < (size_t)w->n * 4)
        t->size *= 2;
    t->table = calloc(t->size, sizeof *t->table);
    char map[64];
    snprintf(map, sizeof map, "(vector,(0,1,%d))", w->n);
    if (!t->table || kvs_put(t, "PMI_process_mapping", map) != 0) {
        free(t->table);
        free(t);
        return -1;
    }
    w->kvs = t;
    return 0;
}

int pmi_server_universe_size(const struct job *j)
{
    /* -usize, else unset (-1), as hydra leaves it: programs such as MPICH's
     * spawn tests compare MPI_UNIVERSE_SIZE with their own size on both sides
     * of a spawn, and a guess (a CPU per process) made a parent spawn children
     * that then judged spawning impossible and skipped their half */
    return j->opt->usize > 0 ? j->opt->usize : -1;
}

/* ------------------------------------------------------------- replies */

static void reply_raw(struct job *j, int r, const char *buf, size_t len)
{
    struct rank *rk = j->ranks[r];
    if (rk->pmi_fd < 0)
        return;
    while (len > 0) {
        ssize_t w = send(rk->pmi_fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            job_fail_rank(j, r, 1, "does not read its PMI replies");
        if (w < 0)
            return;      /* EPIPE / ECONNRESET: it is gone; its exit status (the adopted
                            singleton: the end of its connection) will tell */
        buf += w;
        len -= (size_t)w;
    }
}

#define REPLY(j, r, ...) reply(j, r, __VA_ARGS__, (const char *)NULL)
static void reply(struct job *j, int r, const char *k0, ...)
{
    const char *keys[PMI_WIRE_PAIRS_MAX], *vals[PMI_WIRE_PAIRS_MAX];
    char buf[PMI_WIRE_LINE_MAX + 1];
    int n = 0;
    va_list ap;
    va_start(ap, k0);
    for (const char *k = k0; k && n < PMI_WIRE_PAIRS_MAX; k = va_arg(ap, const char *)) {
        keys[n] = k;
        vals[n] = va_arg(ap, const char *);
        n++;
    }
    va_end(ap);
    int len = pmi_wire_format(buf, sizeof buf, n, keys, vals);
    if (len < 0)             /* cannot happen: every reply is validated */
        job_fail_rank(j, r, 1, "got an unformattable PMI reply (%s)", pmi_wire_strerror(len));
    reply_raw(j, r, buf, (size_t)len);
}

/* ------------------------------------------------------------- barrier */

static void barrier_release(struct job *j, struct world *w)
{
    w->barrier_count = 0;
    for (int r = w->base; r < w->base + w->n; r++)
        if (j->ranks[r]->in_barrier) {
            j->ranks[r]->in_barrier = 0;
            REPLY(j, r, "cmd", "barrier_out");
        }
}

static void check_world_barrier(struct job *j, struct world *w)
{
    if (w->barrier_count == 0)
        return;
    /* A rank that finalized will never enter. */
    int waiting = -1, gone = -1;
    for (int r = w->base; r < w->base + w->n; r++) {
        struct rank *rk = j->ranks[r];
        if (rk->in_barrier) {
            if (waiting < 0)
                waiting = r;
        } else if (rk->finalized) {
            if (gone < 0)
                gone = r;
        } else if (rk->state == RS_EXITED || rk->pmi_fd < 0) {
            /* it hung up without finalizing: it is dying, and reaping it
             * reports how (signal, exit status) against the right rank */
            return;
        } else {
            return;                                /* someone may still come */
        }
    }
    if (gone >= 0 && waiting >= 0) {
        char desc[128];
        job_fail_rank(j, waiting, 1, "is waiting in a PMI barrier that %s can no longer enter",
                      rank_desc(j, gone, desc, sizeof desc));
    }
}

void pmi_server_check_barrier(struct job *j)
{
    if (j->terminating)
        return;
    for (int w = 0; w < j->nworlds; w++)
        check_world_barrier(j, j->worlds[w]);
}

/* --------------------------------------------------------------- spawn */

/* The lines of one spawn request, collected from the requesting rank until
 * its last application (appidx == napps - 1) arrives. */
struct spawn_req {
    int napps;
    int next;                  /* the appidx expected next */
    int total;                 /* processes of the apps so far */
    struct spawn_app *apps;    /* napps entries, the first `next` filled */
    char *port;                /* decoded port= of appidx 0, NULL: none */
    char err[768];             /* the first problem found ("" none), wire-safe */
};

static void spawn_apps_free(struct spawn_app *apps, int napps)
{
    if (!apps)
        return;
    for (int a = 0; a < napps; a++) {
        if (apps[a].argv)
            for (char **p = apps[a].argv; *p; p++)   /* filled in order: stops at the first hole */
                free(*p);
        free(apps[a].argv);
        free(apps[a].wdir);
    }
    free(apps);
}

static void spawn_req_free(struct spawn_req *q)
{
    if (!q)
        return;
    spawn_apps_free(q->apps, q->napps);
    free(q->port);
    free(q);
}

/* Record the request's first problem, as a wire value: spaces, '%' and
 * anything else a value cannot hold are percent-encoded (%XX). */
static void __attribute__((format(printf, 2, 3))) spawn_error(struct spawn_req *q, const char *fmt, ...)
{
    if (q->err[0])
        return;
    char text[sizeof q->err / 3];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (pmi_wire_pct_encode(text, q->err, sizeof q->err) < 0)   /* cannot happen: err holds 3x text */
        q->err[0] = 0;
    if (!q->err[0])
        snprintf(q->err, sizeof q->err, "error");
}

/* %XX decoding (pmi_wire.h) into a malloc'd *out. 0; -1: a '%' without two
 * hex digits, or %00; -2: out of memory. */
static int pct_decode(const char *s, char **out)
{
    char *d = malloc(strlen(s) + 1);
    if (!d)
        return -2;
    if (pmi_wire_pct_decode(s, d, strlen(s) + 1) < 0) {
        free(d);
        return -1;
    }
    *out = d;
    return 0;
}

/* Decode value `raw` of `key` (app a) into *out; records an error and
 * returns -1 when it cannot. */
static int decode_field(struct spawn_req *q, int a, const char *key, const char *raw, char **out)
{
    int st = pct_decode(raw, out);
    if (st == -2)
        spawn_error(q, "out of memory");
    else if (st != 0)
        spawn_error(q, "app %d: %s is not percent-encoded (%%XX, not %%00): %.60s", a, key, raw);
    return st == 0 ? 0 : -1;
}

/* Is path (relative paths: from dir, or mpiexec's directory when dir is
 * NULL) an executable regular file? 0 or an errno. */
static int exec_file(const char *dir, const char *path)
{
    char buf[2 * PATH_MAX];
    if (path[0] != '/' && dir) {
        int n = snprintf(buf, sizeof buf, "%s/%s", dir, path);
        if (n < 0 || (size_t)n >= sizeof buf)
            return ENAMETOOLONG;
        path = buf;
    }
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno;
    if (!S_ISREG(sb.st_mode))
        return EACCES;
    return access(path, X_OK) == 0 ? 0 : errno;
}

/* Can the child, started in dir, execvpe(name)? The same search: a name
 * with a '/' as it is, any other along mpiexec's PATH (execvpe's, glibc:
 * the caller's environment; /bin:/usr/bin when unset; an empty entry is the
 * current directory). 0 or an errno. */
static int find_exec(const char *dir, const char *name)
{
    if (!*name)
        return ENOENT;
    if (strchr(name, '/'))
        return exec_file(dir, name);
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    int err = ENOENT;
    for (const char *p = path;; ) {
        size_t len = strcspn(p, ":");
        char cand[2 * PATH_MAX];
        int n = len ? snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, name)
                    : snprintf(cand, sizeof cand, "%s", name);
        if (n > 0 && (size_t)n < sizeof cand) {
            int e = exec_file(dir, cand);
            if (e == 0)
                return 0;
            if (e == EACCES)
                err = EACCES;
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    return err;
}

/* Parse application a of the request from m into q->apps[a]; errors are
 * recorded in q. */
static void spawn_parse_app(struct job *j, struct spawn_req *q, int a, const struct pmi_wire_msg *m,
                            const char *more)
{
    struct spawn_app *app = &q->apps[a];
    long nprocs, argcnt;
    if (pmi_wire_get_long(m, "nprocs", &nprocs) != 0 || nprocs < 1) {
        spawn_error(q, "app %d: nprocs must be a number >= 1", a);
        return;
    }
    if (nprocs > UNIVERSE_MAX || (q->total += (int)nprocs) > UNIVERSE_MAX) {
        spawn_error(q, "more than %d processes requested", UNIVERSE_MAX);
        return;
    }
    app->nprocs = (int)nprocs;
    const char *exec_raw = pmi_wire_get(m, "execname");
    if (!exec_raw || !*exec_raw) {
        spawn_error(q, "app %d: no execname", a);
        return;
    }
    /* the arguments come as arg1..argK, or all in one value, args=A1,A2,...
     * (each percent-encoded, its commas too), when they are too many for
     * one line's pairs */
    const char *packed = more ? more : pmi_wire_get(m, "args");
    long maxargs = packed ? 1L << 20 : PMI_WIRE_PAIRS_MAX;
    if (pmi_wire_get_long(m, "argcnt", &argcnt) != 0 || argcnt < 0 || argcnt > maxargs) {
        spawn_error(q, "app %d: argcnt must be a number from 0 to %ld", a, maxargs);
        return;
    }
    if (packed) {
        long pieces = *packed || argcnt ? 1 : 0;   /* "" is one empty argument when argcnt says 1 */
        for (const char *c = packed; *c; c++)
            pieces += *c == ',';
        if (pieces != argcnt) {
            spawn_error(q, "app %d: args holds %ld arguments, argcnt says %ld", a, pieces, argcnt);
            return;
        }
    }
    /* argcnt matches: arg1..argK present (below), no argN beyond */
    for (int i = 0; i < m->npairs; i++) {
        const char *k = pmi_wire_key(m, i);
        if (strncmp(k, "arg", 3) != 0 || !k[3] || strspn(k + 3, "0123456789") != strlen(k + 3))
            continue;
        long idx = strtol(k + 3, NULL, 10);
        if (idx < 1 || idx > argcnt) {
            spawn_error(q, "app %d: %s does not match argcnt=%ld", a, k, argcnt);
            return;
        }
    }
    app->argv = calloc((size_t)argcnt + 2, sizeof *app->argv);
    if (!app->argv) {
        spawn_error(q, "out of memory");
        return;
    }
    if (decode_field(q, a, "execname", exec_raw, &app->argv[0]) != 0)
        return;
    if (!app->argv[0][0]) {
        spawn_error(q, "app %d: empty execname", a);
        return;
    }
    for (long i = 1; i <= argcnt && packed; i++) {
        size_t len = strcspn(packed, ",");
        char *raw = strndup(packed, len);
        int bad = !raw || decode_field(q, a, "args", raw, &app->argv[i]) != 0;
        free(raw);
        if (bad) {
            spawn_error(q, "out of memory");
            return;
        }
        packed += len + (packed[len] == ',');
    }
    for (long i = 1; i <= argcnt && !packed; i++) {
        char key[32];
        snprintf(key, sizeof key, "arg%ld", i);
        const char *raw = pmi_wire_get(m, key);
        if (!raw) {
            spawn_error(q, "app %d: %s missing (argcnt=%ld)", a, key, argcnt);
            return;
        }
        if (decode_field(q, a, key, raw, &app->argv[i]) != 0)
            return;
    }

    /* wdir: relative to where world 0 starts (-wdir, or mpiexec's directory) */
    const char *wdir_raw = pmi_wire_get(m, "wdir");
    if (wdir_raw && *wdir_raw) {
        char *wdir;
        if (decode_field(q, a, "wdir", wdir_raw, &wdir) != 0)
            return;
        if (wdir[0] != '/' && j->opt->wdir) {
            size_t len = strlen(j->opt->wdir) + 1 + strlen(wdir) + 1;
            char *full = malloc(len);
            if (full)
                snprintf(full, len, "%s/%s", j->opt->wdir, wdir);
            free(wdir);
            if (!(wdir = full)) {
                spawn_error(q, "out of memory");
                return;
            }
        }
        app->wdir = wdir;
        struct stat sb;
        const char *why = NULL;
        if (stat(wdir, &sb) != 0)
            why = strerror(errno);
        else if (!S_ISDIR(sb.st_mode))
            why = "not a directory";
        else if (access(wdir, X_OK) != 0)
            why = strerror(errno);
        if (why) {
            spawn_error(q, "app %d: cannot start in %.100s: %s", a, wdir, why);
            return;
        }
    }
    const char *dir = app->wdir ? app->wdir : j->opt->wdir;
    int e = find_exec(dir, app->argv[0]);
    if (e != 0) {
        spawn_error(q, "app %d: cannot execute %.100s: %s", a, app->argv[0], strerror(e));
        return;
    }
    if (a == 0) {
        const char *port_raw = pmi_wire_get(m, "port");
        if (port_raw && decode_field(q, a, "port", port_raw, &q->port) != 0)
            return;
    }
}

/* Start the request's apps as one new world; returns the world, or NULL
 * with the reason recorded in q. */
static struct world *spawn_launch(struct job *j, int r, struct spawn_req *q)
{
    if (j->n + q->total > UNIVERSE_MAX) {
        spawn_error(q, "the universe would exceed %d processes (%d running or started, %d requested)",
                    UNIVERSE_MAX, j->n, q->total);
        return NULL;
    }
    struct world *w = job_add_world(j, q->total);
    if (!w) {
        spawn_error(q, "out of memory");
        return NULL;
    }
    w->parent_uid = r;
    w->napps = q->napps;
    w->apps = q->apps;
    w->parent_port = q->port;
    q->apps = NULL;
    q->port = NULL;
    int u = w->base;
    for (int a = 0; a < w->napps; a++)
        for (int i = 0; i < w->apps[a].nprocs; i++)
            j->ranks[u++]->appnum = a;
    for (u = w->base; u < w->base + w->n; u++)
        launch_rank(j, u);             /* an exec failure ends the job */
    return w;
}

/* One line of cmd=spawn from rank r. */
static void handle_spawn(struct job *j, int r, const struct pmi_wire_msg *m)
{
    struct rank *rk = j->ranks[r];
    long napps, appidx;
    if (pmi_wire_get_long(m, "napps", &napps) != 0 || napps < 1 || napps > UNIVERSE_MAX ||
        pmi_wire_get_long(m, "appidx", &appidx) != 0 || appidx < 0 || appidx >= napps) {
        /* no way to tell which line is the request's last: answer this one */
        spawn_req_free(rk->spawn);
        rk->spawn = NULL;
        REPLY(j, r, "cmd", "spawn_result", "rc", "-1",
              "msg", "bad_napps_or_appidx");
        return;
    }
    if (appidx == 0 || !rk->spawn) {
        spawn_req_free(rk->spawn);
        struct spawn_req *q = rk->spawn = calloc(1, sizeof *q);
        if (!q)
            job_fail_rank(j, r, 1, "sent a spawn request, and mpiexec is out of memory");
        q->napps = (int)napps;
        q->apps = calloc((size_t)napps, sizeof *q->apps);
        if (!q->apps)
            spawn_error(q, "out of memory");
        if (appidx != 0)
            spawn_error(q, "appidx=%ld without the lines before it (appidx=0 first)", appidx);
    }
    struct spawn_req *q = rk->spawn;
    if (!q->err[0]) {
        if (napps != q->napps)
            spawn_error(q, "napps=%ld where the request began with napps=%d", napps, q->napps);
        else if (appidx != q->next)
            spawn_error(q, "appidx=%ld where appidx=%d was expected", appidx, q->next);
        else {
            /* the arguments of spawn_args lines, then this line's args= */
            const char *args = pmi_wire_get(m, "args");
            char *joined = NULL;
            if (rk->spawn_args) {
                size_t len = strlen(rk->spawn_args) + 2 + (args ? strlen(args) : 0);
                if ((joined = malloc(len)))
                    snprintf(joined, len, "%s%s%s", rk->spawn_args, args && *args ? "," : "", args ? args : "");
                else
                    spawn_error(q, "out of memory");
            }
            if (!q->err[0])
                spawn_parse_app(j, q, (int)appidx, m, joined);
            free(joined);
        }
    }
    free(rk->spawn_args);
    rk->spawn_args = NULL;
    q->next = (int)appidx + 1;
    if (appidx != napps - 1)
        return;                        /* more lines to come; the answer follows the last */

    rk->spawn = NULL;
    struct world *w = NULL;
    if (!q->err[0] && rk->state == RS_EXITED)
        spawn_error(q, "the requesting process has exited");
    if (!q->err[0])
        w = spawn_launch(j, r, q);
    if (w) {
        char base[16], size[16];
        snprintf(base, sizeof base, "%d", w->base);
        snprintf(size, sizeof size, "%d", w->n);
        REPLY(j, r, "cmd", "spawn_result", "rc", "0", "base", base, "size", size,
              "kvsname", w->kvsname);
    } else {
        REPLY(j, r, "cmd", "spawn_result", "rc", "-1", "msg", q->err);
    }
    spawn_req_free(q);
}

/* ------------------------------------------------------------ requests */

static void handle_names(struct job *j, int r, const char *cmd, const struct pmi_wire_msg *m);

static void handle(struct job *j, int r, const char *line, size_t len)
{
    struct rank *rk = j->ranks[r];
    struct world *w = j->worlds[rk->world];
    struct pmi_wire_msg m;
    int st = pmi_wire_parse(&m, line, len);
    if (st != PMI_WIRE_OK)
        job_fail_rank(j, r, 1, "sent a malformed PMI message (%s)", pmi_wire_strerror(st));
    const char *cmd = pmi_wire_cmd(&m);
    if (!cmd)
        job_fail_rank(j, r, 1, "sent a PMI message without cmd=");

    if (strcmp(cmd, "init") == 0) {
        long v = 0;
        rk->pmi_inited = 1;
        if (pmi_wire_get_long(&m, "pmi_version", &v) == 0 && v == 1)
            REPLY(j, r, "cmd", "response_to_init", "pmi_version", "1",
                  "pmi_subversion", "1", "rc", "0");
        else
            REPLY(j, r, "cmd", "response_to_init", "pmi_version", "1",
                  "pmi_subversion", "1", "rc", "-1");
    } else if (strcmp(cmd, "get_maxes") == 0) {
        char a[16], b[16], c[16];
        snprintf(a, sizeof a, "%d", KVSNAME_MAX);
        snprintf(b, sizeof b, "%d", KEYLEN_MAX);
        snprintf(c, sizeof c, "%d", VALLEN_MAX);
        REPLY(j, r, "cmd", "maxes", "kvsname_max", a, "keylen_max", b, "vallen_max", c);
    } else if (strcmp(cmd, "get_appnum") == 0) {
        char a[16];
        snprintf(a, sizeof a, "%d", rk->appnum);
        REPLY(j, r, "cmd", "appnum", "appnum", a);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        REPLY(j, r, "cmd", "my_kvsname", "kvsname", w->kvsname);
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        char n[16];
        snprintf(n, sizeof n, "%d", pmi_server_universe_size(j));
        REPLY(j, r, "cmd", "universe_size", "size", n);
    } else if (strcmp(cmd, "get_universe") == 0) {
        char n[16], base[16];
        snprintf(n, sizeof n, "%d", pmi_server_universe_size(j));
        snprintf(base, sizeof base, "%d", w->base);
        REPLY(j, r, "cmd", "universe", "rc", "0", "universe", j->jobid, "secret", j->secret,
              "uid_base", base, "size", n);
    } else if (strcmp(cmd, "put") == 0) {
        const char *kvs = pmi_wire_get(&m, "kvsname");
        const char *key = pmi_wire_get(&m, "key");
        const char *val = pmi_wire_get(&m, "value");
        if (!kvs || strcmp(kvs, w->kvsname) != 0)
            REPLY(j, r, "cmd", "put_result", "rc", "-1", "msg", "unknown_kvsname");
        else if (!key || !*key || !val)
            REPLY(j, r, "cmd", "put_result", "rc", "-1", "msg", "missing_key_or_value");
        else if (strlen(key) > KEYLEN_MAX || strlen(val) > VALLEN_MAX)
            REPLY(j, r, "cmd", "put_result", "rc", "-1", "msg", "key_or_value_too_long");
        else if (kvs_put(w->kvs, key, val) != 0)
            REPLY(j, r, "cmd", "put_result", "rc", "-1", "msg", "out_of_memory");
        else
            REPLY(j, r, "cmd", "put_result", "rc", "0", "msg", "success");
    } else if (strcmp(cmd, "get") == 0) {
        const char *kvs = pmi_wire_get(&m, "kvsname");
        const char *key = pmi_wire_get(&m, "key");
        struct kv *e = key ? kvs_find(w->kvs, key) : NULL;
        if (!kvs || strcmp(kvs, w->kvsname) != 0)
            REPLY(j, r, "cmd", "get_result", "rc", "-1", "msg", "unknown_kvsname",
                  "value", "unknown");
        else if (e)
            REPLY(j, r, "cmd", "get_result", "rc", "0", "msg", "success", "value", e->val);
        else
            REPLY(j, r, "cmd", "get_result", "rc", "-1", "msg", "key_not_found",
                  "value", "unknown");
    } else if (strcmp(cmd, "barrier_in") == 0) {
        if (rk->in_barrier)
            job_fail_rank(j, r, 1, "entered a PMI barrier twice");
        rk->in_barrier = 1;
        if (++w->barrier_count == w->n)
            barrier_release(j, w);
        else
            pmi_server_check_barrier(j);
    } else if (strcmp(cmd, "finalize") == 0) {
        rk->finalized = 1;
        REPLY(j, r, "cmd", "finalize_ack");
        pmi_server_check_barrier(j);
    } else if (strcmp(cmd, "spawn") == 0) {
        handle_spawn(j, r, &m);
    } else if (strcmp(cmd, "spawn_args") == 0) {
        /* arguments for the next spawn line, too many for its own line:
         * collected here (no answer) */
        const char *args = pmi_wire_get(&m, "args");
        size_t have = rk->spawn_args ? strlen(rk->spawn_args) : 0, add = args ? strlen(args) : 0;
        if (have + add > (1u << 20))
            job_fail_rank(j, r, 1, "sent more than 1 MiB of spawn arguments");
        char *n = realloc(rk->spawn_args, have + add + 2);
        if (!n)
            job_fail_rank(j, r, 1, "sent spawn arguments, and mpiexec is out of memory");
        snprintf(n + have, add + 2, "%s%s", have && add ? "," : "", args ? args : "");
        rk->spawn_args = n;
    } else if (strcmp(cmd, "publish_name") == 0 || strcmp(cmd, "unpublish_name") == 0 ||
               strcmp(cmd, "lookup_name") == 0) {
        handle_names(j, r, cmd, &m);
    } else if (strcmp(cmd, "abort") == 0) {
        long code = 1;
        if (pmi_wire_get_long(&m, "exitcode", &code) != 0)
            code = 1;
        int status = (int)(code & 0xff);
        if (rk->adopted)     /* it exits by itself, with its code: not killed */
            job_adopted_exited(j, r, (status ? status : 1) << 8);
        job_fail_rank(j, r, status ? status : 1,
                      "called MPI_Abort with error code %ld", code);
    } else {
        job_fail_rank(j, r, 1, "sent an unsupported PMI command '%.40s'", cmd);
    }
}

/* Remove key from t; 0, or -1 when it is not there. */
static int kvs_del(struct kvs *t, const char *key)
{
    for (struct kv **pe = &t->table[hash(key) & (t->size - 1)]; *pe; pe = &(*pe)->next)
        if (strcmp((*pe)->key, key) == 0) {
            struct kv *e = *pe;
            *pe = e->next;
            free(e->key);
            free(e->val);
            free(e);
            t->count--;
            return 0;
        }
    return -1;
}

/* Name publishing (MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name):
 * one table for the whole universe, service -> port, both as the client
 * sent them (percent-encoded, opaque here). MPICH's simple-PMI wording:
 *   publish_name service=S port=P -> publish_result rc=0 | rc=-1 msg=
 *   unpublish_name service=S      -> unpublish_result rc=0 | rc=-1 msg=
 *   lookup_name service=S         -> lookup_result rc=0 port=P | rc=-1 msg= */
static void handle_names(struct job *j, int r, const char *cmd, const struct pmi_wire_msg *m)
{
    static struct kvs names;
    const char *service = pmi_wire_get(m, "service"), *port = pmi_wire_get(m, "port");
    const char *ans = cmd[0] == 'p' ? "publish_result" : cmd[0] == 'u' ? "unpublish_result" : "lookup_result";
    if (!names.table) {
        names.size = 64;
        if (!(names.table = calloc(names.size, sizeof *names.table)))
            die("out of memory");
    }
    if (!service || !*service || strlen(service) > VALLEN_MAX || (cmd[0] == 'p' && (!port || !*port))) {
        REPLY(j, r, "cmd", ans, "rc", "-1", "msg", "missing_service_or_port");
        return;
    }
    struct kv *e = kvs_find(&names, service);
    if (cmd[0] == 'p') {
        if (e)
            REPLY(j, r, "cmd", ans, "rc", "-1", "msg", "already_published");
        else if (kvs_put(&names, service, port))
            REPLY(j, r, "cmd", ans, "rc", "-1", "msg", "out_of_memory");
        else
            REPLY(j, r, "cmd", ans, "rc", "0");
    } else if (cmd[0] == 'u') {
        if (kvs_del(&names, service))
            REPLY(j, r, "cmd", ans, "rc", "-1", "msg", "not_published");
        else
            REPLY(j, r, "cmd", ans, "rc", "0");
    } else if (e) {
        REPLY(j, r, "cmd", ans, "rc", "0", "port", e->val);
    } else {
        REPLY(j, r, "cmd", ans, "rc", "-1", "msg", "not_published");
    }
}

/* Serve complete lines in the rank's buffer. */
static void serve_buffered(struct job *j, int r)
{
    struct rank *rk = j->ranks[r];
    const char *line;
    size_t len;
    int got;
    while (rk->pmi_fd >= 0 && (got = pmi_wire_rbuf_next(&rk->rb, &line, &len)) != 0) {
        if (got < 0)
            job_fail_rank(j, r, 1, "sent an over-long PMI message (more than %d bytes)",
                          PMI_WIRE_LINE_MAX);
        handle(j, r, line, len);
    }
}

static void close_pmi(struct job *j, int r)
{
    struct rank *rk = j->ranks[r];
    close(rk->pmi_fd);
    rk->pmi_fd = -1;
    if (rk->adopted)
        job_adopted_closed(j, r);      /* its exit: normal after finalize, else a failure */
    pmi_server_check_barrier(j);
}

/* Read once; 1 read something, 0 nothing now, -1 closed. */
static int read_once(struct job *j, int r)
{
    struct rank *rk = j->ranks[r];
    size_t avail;
    char *p = pmi_wire_rbuf_space(&rk->rb, &avail);
    if (avail == 0) {                 /* full and no '\n': serve_buffered fails the job */
        serve_buffered(j, r);
        return 0;
    }
    ssize_t got = recv(rk->pmi_fd, p, avail, MSG_DONTWAIT);
    if (got < 0 && errno == EINTR)
        return 1;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (got <= 0) {
        /* EOF or reset: serve complete lines already here, drop a partial one. */
        serve_buffered(j, r);
        if (rk->pmi_fd >= 0)
            close_pmi(j, r);
        return -1;
    }
    pmi_wire_rbuf_commit(&rk->rb, (size_t)got);
    serve_buffered(j, r);
    return 1;
}

void pmi_server_readable(struct job *j, int r)
{
    for (int i = 0; i < 4 && j->ranks[r]->pmi_fd >= 0; i++)
        if (read_once(j, r) <= 0)
            break;
}

void pmi_server_drain(struct job *j, int r)
{
    /* The rank has exited: everything it sent is already in the socket. */
    for (int i = 0; i < 4096 && j->ranks[r]->pmi_fd >= 0; i++)
        if (read_once(j, r) <= 0)
            break;
}
