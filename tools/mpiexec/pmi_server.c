/* pmi_server: the PMI-1 wire protocol, server side, one job, one node.
 *
 * Each rank has the server end of a socketpair (non-blocking). The event
 * loop calls pmi_server_readable() when it polls readable; requests are
 * answered at once, except barrier_in, which is answered (to everyone) when
 * the last rank enters. Replies follow hydra's wording so that MPICH's
 * simple PMI client works too:
 *
 *   init pmi_version=1        -> response_to_init pmi_version=1 pmi_subversion=1 rc=0
 *   get_maxes                 -> maxes kvsname_max= keylen_max= vallen_max=
 *   get_appnum                -> appnum appnum=<the rank's program, from 0 (MPMD)>
 *   get_my_kvsname            -> my_kvsname kvsname=<jobid>
 *   get_universe_size         -> universe_size size=N
 *   put kvsname= key= value=  -> put_result rc=0 msg=success
 *   get kvsname= key=         -> get_result rc=0 msg=success value=   (rc=-1 when absent)
 *   barrier_in                -> barrier_out                          (when all N entered)
 *   finalize                  -> finalize_ack
 *   abort exitcode=N          -> the job is killed
 *
 * The key space is pre-seeded with PMI_process_mapping "(vector,(0,1,N))"
 * (all N ranks on node 0), which MPICH uses to find its node-local peers.
 * A malformed or unsupported request fails the job: the client would
 * otherwise wait forever for an answer it cannot get. */
#include "mpiexec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define KVSNAME_MAX 256
#define KEYLEN_MAX  256
#define VALLEN_MAX  2048

struct kv {
    struct kv *next;
    char *key;
    char *val;
};

static struct kv **table;
static size_t table_size;
static size_t table_count;

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static struct kv *kvs_find(const char *key)
{
    for (struct kv *e = table[hash(key) & (table_size - 1)]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static void kvs_grow(void)
{
    size_t nsize = table_size * 2;
    struct kv **nt = calloc(nsize, sizeof *nt);
    if (!nt)
        return;                                    /* keep the longer chains */
    for (size_t i = 0; i < table_size; i++)
        for (struct kv *e = table[i], *next; e; e = next) {
            next = e->next;
            struct kv **b = &nt[hash(e->key) & (nsize - 1)];
            e->next = *b;
            *b = e;
        }
    free(table);
    table = nt;
    table_size = nsize;
}

static int kvs_put(const char *key, const char *val)
{
    struct kv *e = kvs_find(key);
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
    struct kv **b = &table[hash(key) & (table_size - 1)];
    e->next = *b;
    *b = e;
    if (++table_count > table_size * 2)
        kvs_grow();
    return 0;
}

void pmi_server_init(struct job *j)
{
    table_size = 256;
    while (table_size < (size_t)j->n * 4)
        table_size *= 2;
    table = calloc(table_size, sizeof *table);
    if (!table)
        die("out of memory");
    char map[64];
    snprintf(map, sizeof map, "(vector,(0,1,%d))", j->n);
    if (kvs_put("PMI_process_mapping", map) != 0)
        die("out of memory");
}

/* ------------------------------------------------------------- replies */

static void reply_raw(struct job *j, int r, const char *buf, size_t len)
{
    struct rank *rk = &j->ranks[r];
    if (rk->pmi_fd < 0)
        return;
    while (len > 0) {
        ssize_t w = send(rk->pmi_fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            job_fail_rank(j, r, 1, "does not read its PMI replies");
        if (w < 0)
            return;      /* EPIPE / ECONNRESET: it is gone; its exit status will tell */
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

static void barrier_release(struct job *j)
{
    j->barrier_count = 0;
    for (int r = 0; r < j->n; r++)
        if (j->ranks[r].in_barrier) {
            j->ranks[r].in_barrier = 0;
            REPLY(j, r, "cmd", "barrier_out");
        }
}

void pmi_server_check_barrier(struct job *j)
{
    if (j->barrier_count == 0 || j->terminating)
        return;
    /* A rank that finalized will never enter. */
    int waiting = -1, gone = -1;
    for (int r = 0; r < j->n; r++) {
        struct rank *rk = &j->ranks[r];
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
    if (gone >= 0 && waiting >= 0)
        job_fail_rank(j, waiting, 1, "is waiting in a PMI barrier that rank %d (pid %ld) "
                      "can no longer enter", gone, (long)j->ranks[gone].pid);
}

/* ------------------------------------------------------------ requests */

static void handle(struct job *j, int r, const char *line, size_t len)
{
    struct rank *rk = &j->ranks[r];
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
        snprintf(a, sizeof a, "%d", (int)(options_app_of(j->opt, r) - j->opt->apps));
        REPLY(j, r, "cmd", "appnum", "appnum", a);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        REPLY(j, r, "cmd", "my_kvsname", "kvsname", j->jobid);
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        char n[16];
        snprintf(n, sizeof n, "%d", j->n);
        REPLY(j, r, "cmd", "universe_size", "size", n);
    } else if (strcmp(cmd, "put") == 0) {
        const char *kvs = pmi_wire_get(&m, "kvsname");
        const char *key = pmi_wire_get(&m, "key");
        const char *val = pmi_wire_get(&m, "value");
        if (!kvs || strcmp(kvs, j->jobid) != 0)
            REPLY(j, r, "cmd", "put_result", "rc", "-1", "msg", "unknown_kvsname");
        else if (!key || !*key || !val)
            REPLY(j, r, "cmd", "put_result", "rc", "-1", "msg", "missing_key_or_value");
        else if (strlen(key) > KEYLEN_MAX || strlen(val) > VALLEN_MAX)
            REPLY(j, r, "cmd", "put_result", "rc", "-1", "msg", "key_or_value_too_long");
        else if (kvs_put(key, val) != 0)
            REPLY(j, r, "cmd", "put_result", "rc", "-1", "msg", "out_of_memory");
        else
            REPLY(j, r, "cmd", "put_result", "rc", "0", "msg", "success");
    } else if (strcmp(cmd, "get") == 0) {
        const char *kvs = pmi_wire_get(&m, "kvsname");
        const char *key = pmi_wire_get(&m, "key");
        struct kv *e = key ? kvs_find(key) : NULL;
        if (!kvs || strcmp(kvs, j->jobid) != 0)
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
        if (++j->barrier_count == j->n)
            barrier_release(j);
        else
            pmi_server_check_barrier(j);
    } else if (strcmp(cmd, "finalize") == 0) {
        rk->finalized = 1;
        REPLY(j, r, "cmd", "finalize_ack");
        pmi_server_check_barrier(j);
    } else if (strcmp(cmd, "abort") == 0) {
        long code = 1;
        if (pmi_wire_get_long(&m, "exitcode", &code) != 0)
            code = 1;
        int status = (int)(code & 0xff);
        job_fail_rank(j, r, status ? status : 1,
                      "called MPI_Abort with error code %ld", code);
    } else {
        job_fail_rank(j, r, 1, "sent an unsupported PMI command '%.40s'", cmd);
    }
}

/* Serve complete lines in the rank's buffer. */
static void serve_buffered(struct job *j, int r)
{
    struct rank *rk = &j->ranks[r];
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
    struct rank *rk = &j->ranks[r];
    close(rk->pmi_fd);
    rk->pmi_fd = -1;
    pmi_server_check_barrier(j);
}

/* Read once; 1 read something, 0 nothing now, -1 closed. */
static int read_once(struct job *j, int r)
{
    struct rank *rk = &j->ranks[r];
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
    for (int i = 0; i < 4 && j->ranks[r].pmi_fd >= 0; i++)
        if (read_once(j, r) <= 0)
            break;
}

void pmi_server_drain(struct job *j, int r)
{
    /* The rank has exited: everything it sent is already in the socket. */
    for (int i = 0; i < 4096 && j->ranks[r].pmi_fd >= 0; i++)
        if (read_once(j, r) <= 0)
            break;
}
