/* pmi1_client: boot.h over the PMI-1 wire protocol.
 *
 * The launcher (Ferry's mpiexec, MPICH's hydra, or any PMI-1 server) hands
 * each rank a connected stream socket in PMI_FD plus PMI_RANK and PMI_SIZE.
 * We speak the same lines MPICH's simple PMI client speaks:
 *
 *   cmd=init pmi_version=1 pmi_subversion=1   -> cmd=response_to_init ... rc=0
 *   cmd=get_maxes                             -> cmd=maxes kvsname_max= keylen_max= vallen_max=
 *   cmd=get_appnum                            -> cmd=appnum appnum=
 *   cmd=get_my_kvsname                        -> cmd=my_kvsname kvsname=
 *   cmd=put kvsname= key= value=              -> cmd=put_result rc=0
 *   cmd=barrier_in                            -> cmd=barrier_out
 *   cmd=get kvsname= key=                     -> cmd=get_result rc=0 value=
 *   cmd=finalize                              -> cmd=finalize_ack
 *   cmd=abort exitcode=N                      (no reply)
 *
 * Launchers that pass PMI_ID instead of PMI_RANK (MPICH's gforker) first get
 * "cmd=initack pmiid=ID" and answer with cmd=initack and cmd=set size/rank/debug.
 *
 * Keys are namespaced per rank on the wire as "r<rank>-<key>".
 * Without PMI_FD the process is a singleton: rank 0 of 1, with a private
 * in-memory key store.
 *
 * Any I/O error on the launcher connection is fatal: one line on stderr and
 * _exit(1); the launcher is gone or broken and nothing can be salvaged.
 * Not thread-safe: called from MPI_Init / MPI_Finalize / MPI_Abort paths. */
#include "boot/boot.h"
#include "boot/pmi_wire.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KVSNAME_MAX 256

struct kv {
    struct kv *next;
    char *key;
    char *val;
};

static struct {
    int inited;
    int singleton;
    int fd;
    int rank, size, appnum;
    int usize;                           /* universe size from the launcher, 0: not asked */
    int adopted;                         /* a singleton that started an mpiexec of its own (spawn) */
    pid_t adopter;                       /* that mpiexec (our child) */
    int universe_ok;                     /* a launcher that spawns (Ferry's mpiexec) is at B.fd */
    int finalized;
    long kvsname_max, keylen_max, vallen_max;
    char kvsname[KVSNAME_MAX];
    char jobid[64];
    struct kv *local;                    /* singleton key store */
    struct pmi_wire_rbuf rb;
} B = { .fd = -1 };

/* ---------------------------------------------------------------- errors */

static void __attribute__((noreturn)) lost(const char *what, int err)
{
    char line[256];
    int n;
    if (err)
        n = snprintf(line, sizeof line,
                     "ferry: rank %d: lost connection to the launcher (%s: %s)\n",
                     B.rank, what, strerror(err));
    else
        n = snprintf(line, sizeof line,
                     "ferry: rank %d: lost connection to the launcher (%s)\n",
                     B.rank, what);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, line,
                          (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w;
    }
    _exit(1);
}

/* ------------------------------------------------------------------- I/O */

static void send_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = send(B.fd, buf, len, MSG_NOSIGNAL);
        if (w < 0 && errno == ENOTSOCK)
            w = write(B.fd, buf, len);   /* a pipe pair; SIGPIPE is the app's */
        if (w < 0) {
            if (errno == EINTR)
                continue;
            lost("write", errno);
        }
        buf += w;
        len -= (size_t)w;
    }
}

/* Send one message built from a NULL-terminated key/value list. */
#define SEND(...) send_msg(__VA_ARGS__, (const char *)NULL)
static void send_msg(const char *k0, ...)
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
    if (len < 0) {
        /* Callers validate first; reaching here is a Ferry bug. */
        char what[96];
        snprintf(what, sizeof what, "cannot format a '%s' request: %s",
                 n > 0 ? vals[0] : "?", pmi_wire_strerror(len));
        lost(what, 0);
    }
    send_all(buf, (size_t)len);
}

/* Read the next message from the launcher into *m. */
static void recv_msg(struct pmi_wire_msg *m)
{
    const char *line;
    size_t len;
    int r;
    while ((r = pmi_wire_rbuf_next(&B.rb, &line, &len)) == 0) {
        size_t avail;
        char *p = pmi_wire_rbuf_space(&B.rb, &avail);
        ssize_t got = read(B.fd, p, avail);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            lost("read", errno);
        }
        if (got == 0)
            lost("end of file", 0);
        pmi_wire_rbuf_commit(&B.rb, (size_t)got);
    }
    if (r < 0)
        lost("over-long reply", 0);
    int st = pmi_wire_parse(m, line, len);
    if (st != PMI_WIRE_OK) {
        char what[96];
        snprintf(what, sizeof what, "malformed reply: %s", pmi_wire_strerror(st));
        lost(what, 0);
    }
}

/* Read a reply and insist on its cmd. */
static void expect(struct pmi_wire_msg *m, const char *cmd)
{
    recv_msg(m);
    const char *c = pmi_wire_cmd(m);
    if (!c || strcmp(c, cmd) != 0) {
        char what[160];
        snprintf(what, sizeof what, "expected cmd=%s, got cmd=%.64s", cmd, c ? c : "(none)");
        lost(what, 0);
    }
}

static long rc_of(const struct pmi_wire_msg *m)
{
    long rc;
    if (pmi_wire_get_long(m, "rc", &rc) != 0)
        return 0;        /* some replies carry no rc: success */
    return rc;
}

/* ----------------------------------------------------------------- setup */

static int env_int(const char *name, long lo, long hi, long *out)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static uint64_t random64(void)
{
    uint64_t x = 0;
    if (getrandom(&x, sizeof x, GRND_NONBLOCK) == (ssize_t)sizeof x)
        return x;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 17);
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    return x;
}

/* jobid := kvsname when it is short and made of [A-Za-z0-9_.-]; otherwise a
 * deterministic sanitized prefix plus a 64-bit FNV-1a hash of the whole name,
 * so every rank derives the same jobid and it stays usable in shm names. */
static void derive_jobid(const char *kvs, char *jobid, size_t cap)
{
    size_t n = strlen(kvs);
    int clean = n > 0 && n < cap;
    for (size_t i = 0; clean && i < n; i++) {
        char c = kvs[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            clean = 0;
    }
    if (clean) {
        memcpy(jobid, kvs, n + 1);
        return;
    }
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)kvs[i];
        h *= 0x100000001b3ULL;
    }
    size_t keep = cap - 1 - 17;   /* room for "_" + 16 hex digits */
    size_t j = 0;
    for (size_t i = 0; i < n && j < keep; i++) {
        char c = kvs[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-';
        jobid[j++] = ok ? c : '_';
    }
    snprintf(jobid + j, cap - j, "_%016llx", (unsigned long long)h);
}

/* Dynamic processes: Ferry's mpiexec names its universe, gives it a secret
 * and tells each world its first universe id and a spawned world its
 * parents' port, in the environment (every name under PMI_, which mpiexec
 * never passes on from its own environment). Other launchers set none:
 * the process then cannot spawn, and its uids are its world ranks. */
static void fill_universe(struct ferry_boot_info *out)
{
    out->universe_size = B.usize;
    long base = 0;
    out->uid_base = B.singleton || env_int("PMI_FERRY_UID_BASE", 0, INT_MAX / 2, &base) ? 0 : (int)base;
    const char *u = B.singleton ? NULL : getenv("PMI_FERRY_UNIVERSE");
    const char *sec = B.singleton ? NULL : getenv("PMI_FERRY_SECRET");
    const char *port = B.singleton ? NULL : getenv("PMI_FERRY_PARENT_PORT");
    out->universe[0] = out->secret[0] = out->parent_port[0] = 0;
    if (u && sec && strlen(u) < sizeof out->universe && strlen(sec) < sizeof out->secret) {
        strcpy(out->universe, u);
        strcpy(out->secret, sec);
        B.universe_ok = 1;
    }
    if (port && strlen(port) < sizeof out->parent_port)
        strcpy(out->parent_port, port);
}

static int init_singleton(struct ferry_boot_info *out)
{
    B.singleton = 1;
    B.rank = 0;
    B.size = 1;
    snprintf(B.jobid, sizeof B.jobid, "singleton_%ld_%08llx", (long)getpid(),
             (unsigned long long)(random64() & 0xffffffffULL));
    snprintf(B.kvsname, sizeof B.kvsname, "%s", B.jobid);
    out->rank = 0;
    out->size = 1;
    out->appnum = 0;
    out->singleton = 1;
    snprintf(out->jobid, sizeof out->jobid, "%s", B.jobid);
    B.inited = 1;
    fill_universe(out);
    return 0;
}

static int fail_init(const char *fmt, const char *arg)
{
    fprintf(stderr, "ferry: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return -1;
}

int ferry_boot_init(struct ferry_boot_info *out)
{
    struct pmi_wire_msg m;
    memset(out, 0, sizeof *out);
    if (B.inited) {
        out->rank = B.rank;
        out->size = B.size;
        out->appnum = B.appnum;
        out->singleton = B.singleton;
        snprintf(out->jobid, sizeof out->jobid, "%s", B.jobid);
        fill_universe(out);
        return 0;
    }
    long fd;
    const char *fds = getenv("PMI_FD");
    if (!fds || !*fds)
        return init_singleton(out);
    if (env_int("PMI_FD", 0, INT_MAX, &fd) != 0)
        return fail_init("PMI_FD='%s' is not a file descriptor number", fds);
    int fl = fcntl((int)fd, F_GETFD);
    if (fl < 0)
        return fail_init("PMI_FD=%s is not an open descriptor", fds);
    /* Programs the rank execs (system(), popen()) must not inherit it. */
    fcntl((int)fd, F_SETFD, fl | FD_CLOEXEC);
    B.fd = (int)fd;
    pmi_wire_rbuf_init(&B.rb);

    long rank = -1, size = -1;
    int have_rank = env_int("PMI_RANK", 0, INT_MAX - 1, &rank) == 0;
    int have_size = env_int("PMI_SIZE", 1, INT_MAX, &size) == 0;
    B.rank = have_rank ? (int)rank : -1;     /* for messages */
    const char *pmiid = getenv("PMI_ID");
    if ((!have_rank || !have_size) && pmiid && pmi_wire_valid_value(pmiid) && *pmiid) {
        /* gforker style: ask the launcher who we are. */
        SEND("cmd", "initack", "pmiid", pmiid);
        expect(&m, "initack");
        for (int i = 0; i < 3; i++) {
            long v;
            expect(&m, "set");
            if (pmi_wire_get_long(&m, "size", &v) == 0) { size = v; have_size = 1; }
            if (pmi_wire_get_long(&m, "rank", &v) == 0) { rank = v; have_rank = 1; }
        }
    }
    if (!have_rank || !have_size || rank >= size)
        return fail_init("PMI_FD is set but PMI_RANK/PMI_SIZE are missing or invalid%s", "");
    B.rank = (int)rank;
    B.size = (int)size;

    SEND("cmd", "init", "pmi_version", "1", "pmi_subversion", "1");
    expect(&m, "response_to_init");
    if (rc_of(&m) != 0) {
        const char *v = pmi_wire_get(&m, "pmi_version");
        return fail_init("the launcher refused PMI version 1 (it offers version %s)",
                         v ? v : "?");
    }

    SEND("cmd", "get_maxes");
    expect(&m, "maxes");
    if (pmi_wire_get_long(&m, "kvsname_max", &B.kvsname_max) != 0) B.kvsname_max = 256;
    if (pmi_wire_get_long(&m, "keylen_max", &B.keylen_max) != 0)   B.keylen_max = 64;
    if (pmi_wire_get_long(&m, "vallen_max", &B.vallen_max) != 0)   B.vallen_max = 1024;

    SEND("cmd", "get_appnum");
    expect(&m, "appnum");
    long appnum = 0;
    if (pmi_wire_get_long(&m, "appnum", &appnum) != 0 || appnum < 0 || appnum > INT_MAX)
        appnum = 0;

    if (getenv("PMI_FERRY_UNIVERSE")) {   /* Ferry's mpiexec: MPI_UNIVERSE_SIZE (-usize) */
        long u = 0;
        SEND("cmd", "get_universe_size");
        expect(&m, "universe_size");
        if (rc_of(&m) == 0 && pmi_wire_get_long(&m, "size", &u) == 0 && u > 0 && u <= INT_MAX)
            B.usize = (int)u;
    }

    SEND("cmd", "get_my_kvsname");
    expect(&m, "my_kvsname");
    const char *kvs = pmi_wire_get(&m, "kvsname");
    if (rc_of(&m) != 0 || !kvs || !*kvs || strlen(kvs) >= sizeof B.kvsname)
        return fail_init("the launcher gave no usable kvsname%s", "");
    snprintf(B.kvsname, sizeof B.kvsname, "%s", kvs);
    derive_jobid(B.kvsname, B.jobid, sizeof B.jobid);

    out->rank = B.rank;
    out->size = B.size;
    B.appnum = (int)appnum;
    out->appnum = B.appnum;
    out->singleton = 0;
    snprintf(out->jobid, sizeof out->jobid, "%s", B.jobid);
    B.inited = 1;
    fill_universe(out);
    return 0;
}

/* ------------------------------------------------------------- key store */

static int wire_key(int rank, const char *key, char *buf, size_t cap)
{
    if (!pmi_wire_valid_key(key))
        return -1;
    int n = snprintf(buf, cap, "r%d-%s", rank, key);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    if (!B.singleton && B.keylen_max > 0 && n > B.keylen_max)
        return -1;
    return 0;
}

int ferry_boot_put(const char *key, const char *value)
{
    char wk[PMI_WIRE_LINE_MAX];
    if (!B.inited)
        return -1;
    if (wire_key(B.rank, key, wk, sizeof wk) != 0) {
        fprintf(stderr, "ferry: rank %d: boot key '%.64s' is invalid or too long "
                "(launcher allows %ld characters)\n", B.rank, key ? key : "", B.keylen_max);
        return -1;
    }
    if (!pmi_wire_valid_value(value) ||
        (!B.singleton && B.vallen_max > 0 && strlen(value) > (size_t)B.vallen_max)) {
        fprintf(stderr, "ferry: rank %d: boot value for '%.64s' is invalid or too long "
                "(%zu characters; launcher allows %ld)\n", B.rank, key,
                value ? strlen(value) : 0, B.vallen_max);
        return -1;
    }
    if (B.singleton) {
        for (struct kv *e = B.local; e; e = e->next)
            if (strcmp(e->key, wk) == 0) {
                char *v = strdup(value);
                if (!v)
                    return -1;
                free(e->val);
                e->val = v;
                return 0;
            }
        struct kv *e = malloc(sizeof *e);
        if (!e)
            return -1;
        e->key = strdup(wk);
        e->val = strdup(value);
        if (!e->key || !e->val) {
            free(e->key); free(e->val); free(e);
            return -1;
        }
        e->next = B.local;
        B.local = e;
        return 0;
    }
    struct pmi_wire_msg m;
    SEND("cmd", "put", "kvsname", B.kvsname, "key", wk, "value", value);
    expect(&m, "put_result");
    if (rc_of(&m) != 0) {
        const char *msg = pmi_wire_get(&m, "msg");
        fprintf(stderr, "ferry: rank %d: the launcher refused key '%s' (%s)\n",
                B.rank, wk, msg ? msg : "no reason given");
        return -1;
    }
    return 0;
}

int ferry_boot_fence(void)
{
    if (!B.inited)
        return -1;
    if (B.singleton)
        return 0;
    struct pmi_wire_msg m;
    SEND("cmd", "barrier_in");
    expect(&m, "barrier_out");
    return rc_of(&m) == 0 ? 0 : -1;
}

int ferry_boot_get(int rank, const char *key, char *value, size_t len)
{
    char wk[PMI_WIRE_LINE_MAX];
    if (!B.inited || rank < 0 || rank >= B.size || !value || len == 0)
        return -1;
    if (wire_key(rank, key, wk, sizeof wk) != 0)
        return -1;
    const char *v = NULL;
    struct pmi_wire_msg m;
    if (B.singleton) {
        for (struct kv *e = B.local; e; e = e->next)
            if (strcmp(e->key, wk) == 0) {
                v = e->val;
                break;
            }
    } else {
        SEND("cmd", "get", "kvsname", B.kvsname, "key", wk);
        expect(&m, "get_result");
        if (rc_of(&m) == 0)
            v = pmi_wire_get(&m, "value");
    }
    if (!v)
        return -1;
    size_t n = strlen(v);
    if (n >= len)
        return -1;
    memcpy(value, v, n + 1);
    return 0;
}

/* ------------------------------------------------------------------ spawn */

int ferry_boot_spawn(int napps, const struct ferry_boot_app *apps, const char *port, int *uid_base, int *size,
                     char *why, size_t whylen)
{
    if (!B.inited || B.fd < 0 || !B.universe_ok) {
        snprintf(why, whylen, "%s", B.singleton ? "this process was not started by a launcher"
                                                 : "the launcher is not Ferry's mpiexec, which alone spawns for Ferry");
        return -1;
    }
    enum { VAL = 1024 };
    const char *keys[PMI_WIRE_PAIRS_MAX], *vals[PMI_WIRE_PAIRS_MAX];
    static char store[PMI_WIRE_PAIRS_MAX][VAL];
    char buf[PMI_WIRE_LINE_MAX + 1];
    for (int a = 0; a < napps; a++) {
        int n = 0, argc = 0;
        while (apps[a].argv && apps[a].argv[argc])
            argc++;
        /* the arguments, percent-encoded and joined by ','; what does not
         * fit the spawn line goes first in spawn_args lines */
        static char args[PMI_WIRE_LINE_MAX / 2], one[PMI_WIRE_LINE_MAX / 2];
        size_t used = 0;
        for (int i = 0; i < argc; i++) {
            long elen = pmi_wire_pct_encode(apps[a].argv[i], one, sizeof one);
            if (elen < 0) {
                snprintf(why, whylen, "argument %d is too long (at most %zu bytes encoded)", i + 1, sizeof one);
                return -1;
            }
            size_t len = (size_t)elen;
            if (used && used + 1 + len >= sizeof args) {
                SEND("cmd", "spawn_args", "args", args);
                used = 0;
            }
            used += (size_t)snprintf(args + used, sizeof args - used, "%s%s", used ? "," : "", one);
        }
        args[used] = 0;
#define PAIR(k, ...) (keys[n] = (k), snprintf(store[n], VAL, __VA_ARGS__), vals[n] = store[n], n++)
        PAIR("cmd", "spawn");
        PAIR("napps", "%d", napps);
        PAIR("appidx", "%d", a);
        PAIR("nprocs", "%d", apps[a].nprocs);
        keys[n] = "execname";
        if (pmi_wire_pct_encode(apps[a].cmd, store[n], VAL) < 0)
            goto too_long;
        vals[n] = store[n];
        n++;
        PAIR("argcnt", "%d", argc);
        if (argc) {   /* all in one value (mpiexec also takes arg1..argK) */
            keys[n] = "args";
            vals[n++] = args;
        }
        if (apps[a].wdir) {
            keys[n] = "wdir";
            if (pmi_wire_pct_encode(apps[a].wdir, store[n], VAL) < 0)
                goto too_long;
            vals[n] = store[n];
            n++;
        }
        if (a == 0) {
            keys[n] = "port";
            if (pmi_wire_pct_encode(port, store[n], VAL) < 0)
                goto too_long;
            vals[n] = store[n];
            n++;
        }
#undef PAIR
        int len = pmi_wire_format(buf, sizeof buf, n, keys, vals);
        if (len < 0) {
            snprintf(why, whylen, "the request does not fit the launcher's protocol (%s)", pmi_wire_strerror(len));
            return -1;
        }
        send_all(buf, (size_t)len);
    }
    if (0) {
    too_long:
        snprintf(why, whylen, "a program, directory or port name is too long");
        return -1;
    }
    struct pmi_wire_msg m;
    expect(&m, "spawn_result");
    long b, sz;
    if (rc_of(&m) != 0 || pmi_wire_get_long(&m, "base", &b) || pmi_wire_get_long(&m, "size", &sz)) {
        const char *msg = pmi_wire_get(&m, "msg");
        size_t j = (size_t)snprintf(why, whylen, "the launcher refused: ");
        if (j >= whylen || pmi_wire_pct_decode(msg ? msg : "no%20reason%20given", why + j, whylen - j) < 0)
            snprintf(why, whylen, "the launcher refused (%.100s)", msg ? msg : "no reason given");
        return -1;
    }
    *uid_base = (int)b;
    *size = (int)sz;
    return 0;
}

int ferry_boot_name(char op, const char *service, char *port, size_t cap, const char **why)
{
    if (!B.inited || B.fd < 0 || !B.universe_ok) {
        *why = "no name service: only Ferry's mpiexec keeps published names";
        return -1;
    }
    char svc[3 * 256 + 1], enc[3 * 256 + 1];
    if (pmi_wire_pct_encode(service, svc, sizeof svc) < 0) {
        *why = "the service name is too long";
        return -1;
    }
    struct pmi_wire_msg m;
    if (op == 'p') {
        if (pmi_wire_pct_encode(port, enc, sizeof enc) < 0) {
            *why = "the port name is too long";
            return -1;
        }
        SEND("cmd", "publish_name", "service", svc, "port", enc);
        expect(&m, "publish_result");
    } else if (op == 'u') {
        SEND("cmd", "unpublish_name", "service", svc);
        expect(&m, "unpublish_result");
    } else {
        SEND("cmd", "lookup_name", "service", svc);
        expect(&m, "lookup_result");
    }
    const char *msg = pmi_wire_get(&m, "msg"), *p = pmi_wire_get(&m, "port");
    if (rc_of(&m) != 0 || (op == 'l' && !p)) {
        *why = msg && strcmp(msg, "already_published") == 0 ? "the service name is published already"
               : msg && strcmp(msg, "not_published") == 0  ? "the service name is not published"
                                                           : "the launcher refused";
        return -1;
    }
    if (op == 'l' && pmi_wire_pct_decode(p, port, cap) < 0) {
        *why = "the launcher gave an unusable port name";
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ adopt */

/* Ferry's mpiexec next to this library: <prefix>/lib/libmpi.so.12 ->
 * <prefix>/bin/mpiexec (the build tree has the same layout), else the one
 * on PATH. */
static void find_mpiexec(char *path, size_t cap)
{
    Dl_info di;
    if (dladdr((void *)ferry_boot_adopt, &di) && di.dli_fname) {
        snprintf(path, cap, "%s", di.dli_fname);
        char *slash = strrchr(path, '/');
        if (slash) {
            *slash = 0;   /* .../lib */
            slash = strrchr(path, '/');
            if (slash) {
                size_t at = (size_t)(slash - path);
                snprintf(path + at, cap - at, "/bin/mpiexec");
                if (access(path, X_OK) == 0)
                    return;
            }
        }
    }
    snprintf(path, cap, "mpiexec");
}

int ferry_boot_adopt(struct ferry_boot_info *out, char *why, size_t whylen)
{
    if (B.universe_ok)
        return 0;
    if (!B.singleton) {
        snprintf(why, whylen, "the launcher is not Ferry's mpiexec, which alone spawns for Ferry");
        return -1;
    }
    char path[4096];
    find_mpiexec(path, sizeof path);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        snprintf(why, whylen, "socketpair: %s", strerror(errno));
        return -1;
    }
    /* the child's environment is made here: between fork and exec only
     * async-signal-safe calls (other threads may hold malloc's locks) */
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = malloc((n + 3) * sizeof *envp), fdvar[48], pidvar[48];
    if (!envp) {
        snprintf(why, whylen, "out of memory");
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "PMI_FERRY_ADOPT_", 16) != 0)
            envp[k++] = environ[i];
    snprintf(fdvar, sizeof fdvar, "PMI_FERRY_ADOPT_FD=%d", sv[1]);
    snprintf(pidvar, sizeof pidvar, "PMI_FERRY_ADOPT_PID=%ld", (long)getpid());
    envp[k++] = fdvar;
    envp[k++] = pidvar;
    envp[k] = NULL;
    char *argv[] = {path, "--adopt-singleton", NULL};
    pid_t pid = fork();
    if (pid == 0) {   /* the child: becomes the mpiexec that adopts its parent */
        fcntl(sv[1], F_SETFD, 0);
        execvpe(path, argv, envp);
        _exit(127);   /* the parent reads end of file and says so */
    }
    free(envp);
    B.adopter = pid;
    if (pid < 0) {
        snprintf(why, whylen, "fork: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    close(sv[1]);
    B.fd = sv[0];
    B.adopted = 1;
    pmi_wire_rbuf_init(&B.rb);
    struct pmi_wire_msg m;
    SEND("cmd", "init", "pmi_version", "1", "pmi_subversion", "1");
    expect(&m, "response_to_init");
    SEND("cmd", "get_maxes");
    expect(&m, "maxes");
    SEND("cmd", "get_universe");
    expect(&m, "universe");
    const char *u = pmi_wire_get(&m, "universe"), *sec = pmi_wire_get(&m, "secret");
    long size = 0;
    if (rc_of(&m) != 0 || !u || !sec || strlen(u) >= sizeof out->universe || strlen(sec) >= sizeof out->secret) {
        snprintf(why, whylen, "%s did not describe its universe", path);
        return -1;
    }
    snprintf(out->universe, sizeof out->universe, "%s", u);
    snprintf(out->secret, sizeof out->secret, "%s", sec);
    out->uid_base = 0;
    out->universe_size = pmi_wire_get_long(&m, "size", &size) == 0 && size > 0 && size <= INT_MAX ? (int)size : 0;
    out->parent_port[0] = 0;
    B.universe_ok = 1;
    return 0;
}

void ferry_boot_finalize(void)
{
    if (!B.inited || B.finalized)
        return;
    B.finalized = 1;
    if (B.singleton && !B.adopted)
        return;
    struct pmi_wire_msg m;
    SEND("cmd", "finalize");
    expect(&m, "finalize_ack");
    shutdown(B.fd, SHUT_RDWR);
    close(B.fd);
    B.fd = -1;
    /* our own mpiexec: reaped if it is done already (it waits for the
     * processes we spawned; otherwise it stays a zombie until we exit) */
    if (B.adopter > 0)
        waitpid(B.adopter, NULL, WNOHANG);
}

void ferry_boot_abort(int code, const char *msg)
{
    int exit_code = code & 0xff;
    if (exit_code == 0)
        exit_code = 1;      /* an abort must never look like success */
    /* msg is not printed here: every caller has already reported it, and
     * PMI-1's abort carries no message (mpiexec prints its own line). */
    (void)msg;
    /* every stdio stream, stdout too: this ends the process with _exit, and
     * what the program printed before (fully buffered when stdout is a file
     * or pipe) would be lost; MPICH's ranks leave through exit() */
    fflush(NULL);
    if (B.fd >= 0 && (!B.singleton || B.adopted)) {   /* adopted: its mpiexec takes the spawned down */
        char c[24], buf[64];
        snprintf(c, sizeof c, "%d", code);
        int len = pmi_wire_formatl(buf, sizeof buf, "cmd", "abort", "exitcode", c,
                                   (const char *)NULL);
        if (len > 0) {
            /* Best effort: the launcher may already be gone. */
            const char *p = buf;
            size_t left = (size_t)len;
            while (left > 0) {
                ssize_t w = send(B.fd, p, left, MSG_NOSIGNAL);
                if (w < 0 && errno == ENOTSOCK)
                    w = write(B.fd, p, left);
                if (w < 0 && errno == EINTR)
                    continue;
                if (w <= 0)
                    break;
                p += w;
                left -= (size_t)w;
            }
        }
    }
    _exit(exit_code);
}
