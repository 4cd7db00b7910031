/* The socket transport (see sock.h). */
#include "transport/sock/sock.h"
#include "transport/sock/sock_wire.h"
#include "transport/cma.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/util.h"
#include "proto/proto.h"
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SOCK_QUEUE_MAX (8u << 20)             /* reserve says "not now" above this backlog */

struct sock_out {           /* our connection to one peer: a byte queue in front of the socket */
    int fd;                 /* -1: not connected yet */
    char *q;
    size_t off, len, cap;   /* bytes [off, len) of q still to write */
};

struct sock_in {            /* a connection a peer opened to us */
    int fd;
    int uid;                /* -1 until its hello arrived */
    char *buf;
    size_t len, cap;
};

static struct {
    int ready;
    int lfd;                /* our listening socket */
    char universe[64];
    char secret[40];
    struct sock_out *out;   /* indexed by uid, allocated with ferry_rt.peers' capacity */
    unsigned char *pull_ok; /* by uid: its hello gave its pid; single copy may be tried */
    unsigned char *pull_off;/* by uid: a pull failed; never again */
    struct sock_in *in;
    int nin, incap;
    struct pollfd *pfd;
    int pfdcap;
    int pfd_stale;          /* S.in changed since pfd was filled */
    size_t pending;         /* sum of the out queues */
} S = {.lfd = -1};

int ferry_sock_active;

static socklen_t sock_name(struct sockaddr_un *a, const char *what)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    /* abstract namespace: sun_path[0] is NUL, the name is not NUL-terminated */
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "ferry-%s-%s", S.universe, what);
    if (n < 0 || (size_t)n >= sizeof a->sun_path - 1)
        n = (int)sizeof a->sun_path - 2;
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int listen_on(const char *what)
{
    struct sockaddr_un a;
    socklen_t len = sock_name(&a, what);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&a, len) || listen(fd, SOMAXCONN)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Connect (blocking: a listener's backlog takes it at once) and say hello. */
static int dial(const char *what, int uid)
{
    struct sockaddr_un a;
    socklen_t len = sock_name(&a, what);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int rc;
    while ((rc = connect(fd, (struct sockaddr *)&a, len)) < 0 && errno == EINTR)
        ;
    struct sock_hello h = {.magic = SOCK_HELLO_MAGIC, .uid = uid, .pid = (int32_t)getpid()};
    memcpy(h.secret, S.secret, sizeof h.secret);
    if (rc < 0 || send(fd, &h, sizeof h, MSG_NOSIGNAL) != (ssize_t)sizeof h) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* A connection is ours when it runs as our user and knows the secret. */
static int peer_is_same_user(int fd)
{
    struct ucred cr;
    socklen_t l = sizeof cr;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0 && cr.uid == getuid();
}

static int hello_ok(const struct sock_hello *h, int want_uid)
{
    return sock_wire_hello_ok(h, S.secret, want_uid, ferry_rt.npeers, ferry_rt.self);
}

int ferry_sock_setup(const char *universe, const char *secret)
{
    if (S.ready)
        return 0;
    if (!universe || !*universe)
        return -1;
    snprintf(S.universe, sizeof S.universe, "%s", universe);
    memset(S.secret, 0, sizeof S.secret);
    strncpy(S.secret, secret, sizeof S.secret - 1);
    char what[32];
    snprintf(what, sizeof what, "u%d", ferry_rt.self);
    S.lfd = listen_on(what);
    if (S.lfd < 0) {
        ferry_log(1, "sock: cannot listen (%s): this process cannot be reached by other worlds", strerror(errno));
        return -1;
    }
    S.out = ferry_xcalloc((size_t)ferry_rt.npeers, sizeof *S.out);
    S.pull_ok = ferry_xcalloc((size_t)ferry_rt.npeers, 1);
    S.pull_off = ferry_xcalloc((size_t)ferry_rt.npeers, 1);
    for (int i = 0; i < ferry_rt.npeers; i++)
        S.out[i].fd = -1;
    S.ready = 1;
    return 0;
}

int ferry_sock_ready(void)
{
    return S.ready;
}

void ferry_sock_add_peer(int uid)
{
    struct ferry_peer *p = &ferry_rt.peers[uid];
    if (p->tr)
        return;
    p->tr = &ferry_transport_sock;
    p->local = -1;
    p->same_node = 1;   /* UNIX sockets: a process Ferry's mpiexec started here */
    if (uid >= ferry_rt.peer_end)
        ferry_rt.peer_end = uid + 1;
    ferry_sock_active = 1;
}

size_t ferry_sock_pending(void)
{
    return S.pending;
}

/* ------------------------------------------------------------------ sending */

static void flush_out(struct sock_out *o)
{
    while (o->off < o->len) {
        ssize_t w = send(o->fd, o->q + o->off, o->len - o->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (w < 0) {
            /* the peer is gone (it finalized and exited): nothing it still
             * had to receive can reach it */
            S.pending -= o->len - o->off;
            o->off = o->len = 0;
            return;
        }
        o->off += (size_t)w;
        S.pending -= (size_t)w;
    }
    o->off = o->len = 0;
}

static struct sock_out *out_to(int peer)
{
    if (FERRY_UNLIKELY(!S.ready))
        ferry_fatal("process %d belongs to another world, and this process cannot reach other worlds", peer);
    struct sock_out *o = &S.out[peer];
    if (FERRY_UNLIKELY(o->fd < 0)) {
        char what[32];
        snprintf(what, sizeof what, "u%d", peer);
        if ((o->fd = dial(what, ferry_rt.self)) < 0)
            ferry_fatal("cannot reach process %d of the universe (%s)", peer, strerror(errno));
        int big = 1 << 20;
        setsockopt(o->fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    }
    return o;
}

static struct ferry_pkt *sock_reserve(int peer, size_t payload)
{
    struct sock_out *o = out_to(peer);
    if (o->len - o->off > SOCK_QUEUE_MAX) {
        flush_out(o);
        if (o->len - o->off > SOCK_QUEUE_MAX)
            return NULL;
    }
    size_t need = sock_wire_span(payload);
    if (o->off && o->off == o->len)
        o->off = o->len = 0;
    if (o->len + need > o->cap) {
        if (o->off) {   /* compact: the written bytes go */
            memmove(o->q, o->q + o->off, o->len - o->off);
            o->len -= o->off;
            o->off = 0;
        }
        if (o->len + need > o->cap) {
            size_t cap = o->cap ? o->cap : 64 * 1024;
            while (cap < o->len + need)
                cap *= 2;
            o->q = ferry_xrealloc(o->q, cap);
            o->cap = cap;
        }
    }
    struct ferry_pkt *p = (struct ferry_pkt *)(o->q + o->len);
    memset(p, 0, sizeof *p);
    return p;
}

static void sock_commit(int peer, struct ferry_pkt *pkt)
{
    struct sock_out *o = &S.out[peer];
    size_t span = sock_wire_span(pkt->payload);
    o->len += span;
    S.pending += span;
    flush_out(o);
}

static size_t sock_max_payload(int peer)
{
    (void)peer;
    return SOCK_MAX_PACKET - sizeof(struct ferry_pkt);
}

/* ---------------------------------------------------------------- receiving */

static void drop_in(int i)
{
    close(S.in[i].fd);
    free(S.in[i].buf);
    S.in[i] = S.in[--S.nin];
    S.pfd_stale = 1;
}

static void accept_new(void)
{
    for (;;) {
        int fd = accept4(S.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (!peer_is_same_user(fd)) {
            close(fd);
            continue;
        }
        if (S.nin == S.incap) {
            S.incap = S.incap ? 2 * S.incap : 8;
            S.in = ferry_xrealloc(S.in, (size_t)S.incap * sizeof *S.in);
        }
        S.in[S.nin++] = (struct sock_in){.fd = fd, .uid = -1};
        S.pfd_stale = 1;
    }
}

/* Hand every whole packet in the buffer to the protocol. 1 handled some,
 * 0 none, -1 the connection is bad (a stranger) and was dropped. */
static int deliver(int i)
{
    struct sock_in *c = &S.in[i];
    size_t at = 0;
    int n = 0;
    if (c->uid < 0) {
        if (c->len < sizeof(struct sock_hello))
            return 0;
        struct sock_hello h;
        memcpy(&h, c->buf, sizeof h);
        if (!hello_ok(&h, 1)) {
            ferry_log(1, "sock: dropped a connection that is not from this job");
            drop_in(i);
            return -1;
        }
        c->uid = h.uid;
        ferry_sock_add_peer(c->uid);   /* it may send before we know of it from a group */
        /* single copy from it: same user (checked at accept), same node;
         * a failed pull turns it off for good (proto falls back to DATA) */
        if (h.pid > 0 && ferry_cfg.cma != 0 && !S.pull_off[c->uid]) {
            ferry_rt.peers[c->uid].pid = h.pid;
            S.pull_ok[c->uid] = 1;
        }
        at = sizeof h;
    }
    long span;
    while ((span = sock_wire_next(c->buf + at, c->len - at)) > 0) {
        ferry_proto_receive(c->uid, (const struct ferry_pkt *)(c->buf + at));
        at += (size_t)span;
        n++;
    }
    if (span < 0) {
        ferry_log(1, "sock: dropped the connection from process %d: packet too large", c->uid);
        drop_in(i);
        return -1;
    }
    if (at) {
        memmove(c->buf, c->buf + at, c->len - at);
        c->len -= at;
    }
    return n > 0;
}

static int read_in(int i)
{
    struct sock_in *c = &S.in[i];
    if (c->cap - c->len < SOCK_MAX_PACKET) {
        c->cap = c->len + 2 * SOCK_MAX_PACKET;
        c->buf = ferry_xrealloc(c->buf, c->cap);
    }
    ssize_t got = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        drop_in(i);   /* the peer finalized and exited */
        return -1;
    }
    if (got < 0)
        return 0;
    c->len += (size_t)got;
    return deliver(i) < 0 ? -1 : 1;
}

/* The descriptors to watch: the listener, then every in connection;
 * refilled only when a connection came or went (poll(2) leaves fd and
 * events as they are). */
static int fill_pollfds(void)
{
    int nfd = S.nin + 1;
    if (!S.pfd_stale && S.pfd)
        return nfd;
    if (nfd > S.pfdcap) {
        S.pfdcap = 2 * nfd;
        S.pfd = ferry_xrealloc(S.pfd, (size_t)S.pfdcap * sizeof *S.pfd);
    }
    S.pfd[0] = (struct pollfd){.fd = S.lfd, .events = POLLIN};
    for (int i = 0; i < S.nin; i++)
        S.pfd[i + 1] = (struct pollfd){.fd = S.in[i].fd, .events = POLLIN};
    S.pfd_stale = 0;
    return nfd;
}

static int sock_poll(void)
{
    if (!S.ready)
        return 0;
    int nfd = fill_pollfds();
    int handled = 0;
    if (S.pending)
        for (int u = 0; u < ferry_rt.peer_end; u++)
            if (S.out[u].len > S.out[u].off)
                flush_out(&S.out[u]);
    if (poll(S.pfd, (nfds_t)nfd, 0) <= 0)
        return 0;
    /* in connections from the last one down: drop_in moves the last into i */
    for (int i = S.nin - 1; i >= 0; i--)
        if (S.pfd[i + 1].revents) {
            int r = read_in(i);
            handled += r > 0;
        }
    if (S.pfd[0].revents)
        accept_new();
    return handled;
}

static void sock_finalize(void)
{
    if (!S.ready)
        return;
    for (int u = 0; u < ferry_rt.npeers; u++) {
        if (S.out[u].fd >= 0)
            close(S.out[u].fd);
        free(S.out[u].q);
    }
    free(S.out);
    free(S.pull_ok);
    free(S.pull_off);
    while (S.nin)
        drop_in(S.nin - 1);
    free(S.in);
    free(S.pfd);
    close(S.lfd);
    memset(&S, 0, sizeof S);
    S.lfd = -1;
    ferry_sock_active = 0;
}

static int sock_init(void)
{
    return 0;
}

/* Nothing to do (oversubscribed): wait for socket data, briefly, since
 * shared-memory packets ring no bell here. */
static void sock_sleep(void)
{
    if (S.ready)
        (void)poll(S.pfd, (nfds_t)fill_pollfds(), 1);
}

static void sock_wake(void)
{
}

/* Single copy: the receiver of a large message pulls it from the sender
 * (there is no push: a split copy's share would need the receiver's pid at
 * the sender, which only learns it if the receiver ever sent to it). */
static int sock_pull(int peer, void *local, uint64_t remote, size_t len)
{
    return ferry_cma_copy(ferry_rt.peers[peer].pid, local, remote, len, 0);
}

static int sock_can_pull(int peer)
{
    return S.pull_ok[peer];
}

static void sock_disable_pull(int peer)
{
    S.pull_ok[peer] = 0;
    S.pull_off[peer] = 1;
}

/* ------------------------------------------------------------- port sockets */

int ferry_sock_port_listen(const char *name)
{
    return S.ready ? listen_on(name) : -1;
}

int ferry_sock_port_dial(const char *name)
{
    if (!S.ready) {
        errno = ENOTCONN;
        return -1;
    }
    return dial(name, -1);
}

int ferry_sock_port_accept(int lfd)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0)
        return -1;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return -1;
    struct sock_hello h;
    if (!peer_is_same_user(fd) || ferry_sock_read_all(fd, &h, sizeof h) || !hello_ok(&h, 0)) {
        ferry_log(1, "sock: refused a port connection that is not from this job");
        close(fd);
        return -1;
    }
    return fd;
}

/* The whole buffer, one direction, blocking. */
static int io_all(int fd, char *p, size_t n, int out)
{
    while (n) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int ferry_sock_write_all(int fd, const void *buf, size_t n)
{
    return io_all(fd, (char *)buf, n, 1);
}

int ferry_sock_read_all(int fd, void *buf, size_t n)
{
    return io_all(fd, buf, n, 0);
}

const struct ferry_transport ferry_transport_sock = {
    .name = "sock",
    .init = sock_init,
    .finalize = sock_finalize,
    .poll = sock_poll,
    .reserve = sock_reserve,
    .commit = sock_commit,
    .max_payload = sock_max_payload,
    .pull = sock_pull,
    .can_pull = sock_can_pull,
    .disable_pull = sock_disable_pull,
    .sleep = sock_sleep,
    .wake = sock_wake,
};
