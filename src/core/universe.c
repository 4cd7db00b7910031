/* The universe and connecting groups of it (see universe.h).
 *
 * A port is a listening socket of the process that opened it; its name,
 * "ferry:<universe>:p<uid>-<n>", says which universe and which socket. To
 * connect two groups, each root reaches the other over that socket (the
 * accepting root takes a connection from it, the connecting root dials it).
 * A dial succeeds as soon as the kernel queues it, accept or not, so the
 * roots shake hands: the accepting root sends ACCEPTED, the connecting root
 * answers CONFIRMED. A connecting root that hears nothing within its timeout
 * closes the socket and fails (MPI-3.1 10.4.2: the attempt times out); an
 * accepting root that then finds the socket closed instead of confirmed
 * takes the next connection, so a late accept never pairs with a caller that
 * gave up. Then, collectively in each group:
 *   1. the root broadcasts whether it got through;
 *   2. a context id free in both groups is agreed: each group reduces its
 *      members' next free id, the roots swap theirs over the socket, each
 *      broadcasts the larger (comm.c's agreement drives it, as for
 *      Intercomm_create);
 *   3. the roots swap their groups' uids and broadcast the other's;
 *   4. every member makes the intercommunicator; processes it had not met
 *      become peers of the socket transport.
 * While a root waits on the socket it keeps progressing, since the other
 * group may be waiting for a message this process still has to send. */
#include "core/universe.h"
#include "boot/boot.h"
#include "core/comm.h"
#include "core/progress.h"
#include "core/runtime.h"
#include "core/util.h"
#include "transport/sock/sock.h"
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_CONNECT (-501)

struct ferry_comm *ferry_universe_parent;

static struct {
    char name[64];          /* the universe ("" outside one) */
    int nports;
    struct port {
        struct port *next;
        char name[128];
        int lfd;
    } *ports;
} U;

const char *ferry_universe_name(void)
{
    return U.name[0] ? U.name : ferry_rt.jobid;
}

int ferry_universe_ready(void)
{
    return U.name[0] && ferry_sock_ready();
}

int ferry_universe_start(char *why, size_t whylen)
{
    if (ferry_universe_ready())
        return 0;
    struct ferry_boot_info info;
    memset(&info, 0, sizeof info);
    if (ferry_boot_adopt(&info, why, whylen))
        return -1;
    if (ferry_sock_setup(info.universe, info.secret)) {
        snprintf(why, whylen, "cannot listen for the other worlds of the universe");
        return -1;
    }
    snprintf(U.name, sizeof U.name, "%s", info.universe);
    if (info.universe_size > 0)
        ferry_rt.universe_size = info.universe_size;
    return 0;
}

/* ------------------------------------------------------------------- ports */

int ferry_port_open(char *name, size_t cap)
{
    if (!ferry_universe_ready()) {
        errno = ENOTSUP;
        return -1;
    }
    char what[48];
    snprintf(what, sizeof what, "p%d-%d", ferry_rt.self, U.nports++);
    int lfd = ferry_sock_port_listen(what);
    if (lfd < 0)
        return -1;
    struct port *p = ferry_xcalloc(1, sizeof *p);
    snprintf(p->name, sizeof p->name, "ferry:%s:%s", U.name, what);
    p->lfd = lfd;
    p->next = U.ports;
    U.ports = p;
    snprintf(name, cap, "%s", p->name);
    return 0;
}

static struct port **find_port(const char *name)
{
    for (struct port **p = &U.ports; *p; p = &(*p)->next)
        if (strcmp((*p)->name, name) == 0)
            return p;
    return NULL;
}

int ferry_port_close(const char *name)
{
    struct port **pp = find_port(name);
    if (!pp)
        return -1;
    struct port *p = *pp;
    *pp = p->next;
    close(p->lfd);
    free(p);
    return 0;
}

/* The socket name inside a port name of this universe, NULL otherwise. */
static const char *port_socket(const char *port)
{
    size_t n = strlen(U.name);
    if (strncmp(port, "ferry:", 6) != 0 || strncmp(port + 6, U.name, n) != 0 || port[6 + n] != ':')
        return NULL;
    return port + 7 + n;
}

/* ------------------------------------------------------- waiting on a socket */

/* 0 when fd is readable, 1 when deadline (ferry_now() seconds; < 0: none)
 * passed first, -1 on an error. */
static int wait_readable_until(int fd, double deadline)
{
    struct ferry_waiter w = {0};
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 0);
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
        if (deadline >= 0 && ferry_now() >= deadline)
            return 1;
        ferry_progress_wait(&w);
    }
}

static int wait_readable(int fd)
{
    return wait_readable_until(fd, -1);
}

static int read_progress(int fd, void *buf, size_t n)
{
    return wait_readable(fd) ? -1 : ferry_sock_read_all(fd, buf, n);
}

/* -------------------------------------------------------------- connecting */

struct join {
    struct ferry_comm *c;
    int root;
    int fd;                 /* root: the socket to the other root */
    int broken;             /* root: the socket failed */
};

/* comm.c's agreement: the maximum of *v over both groups */
static void join_max(void *arg, uint32_t *v)
{
    struct join *j = arg;
    ferry_comm_mgmt_reduce_max(j->c, v, j->root, TAG_CONNECT);
    if (j->c->rank == j->root) {
        uint32_t theirs = 0;
        if (j->broken || ferry_sock_write_all(j->fd, v, sizeof *v) || read_progress(j->fd, &theirs, sizeof theirs))
            j->broken = 1;
        if (theirs > *v)
            *v = theirs;
    }
    ferry_comm_mgmt_bcast(j->c, v, sizeof *v, j->root, TAG_CONNECT);
}

enum { PORT_ACCEPTED = 'A', PORT_CONFIRMED = 'C' };

/* Accepting root: a connection whose caller confirms the handshake. */
static int take_connection(int lfd, char *why, size_t whylen)
{
    for (;;) {
        int fd;
        while ((fd = ferry_sock_port_accept(lfd)) < 0)
            if (wait_readable(lfd)) {
                snprintf(why, whylen, "waiting on the port failed: %s", strerror(errno));
                return -1;
            }
        char a = PORT_ACCEPTED, c = 0;
        if (!ferry_sock_write_all(fd, &a, 1) && !read_progress(fd, &c, 1) && c == PORT_CONFIRMED)
            return fd;
        ferry_log(1, "a connection to a port closed before the accept took it (its connect timed out)");
        close(fd);
    }
}

/* Root: reach the other root. The socket, or -1 with a reason. */
static int reach(const char *port, int accept, double timeout, char *why, size_t whylen)
{
    if (!ferry_universe_ready()) {
        snprintf(why, whylen, "this process was not started by Ferry's mpiexec, which alone connects jobs");
        return -1;
    }
    if (accept) {
        struct port **pp = find_port(port);
        if (!pp) {
            snprintf(why, whylen, "port '%.120s' was not opened by this process (MPI_Open_port)", port);
            return -1;
        }
        /* the descriptor, not the list link: while this thread waits,
         * others open ports, and the link it found becomes theirs (two
         * threads spawning at once took each other's children) */
        return take_connection((*pp)->lfd, why, whylen);
    }
    const char *sock = port_socket(port);
    if (!sock) {
        snprintf(why, whylen, "'%.120s' is not a port of this job's universe (ports come from MPI_Open_port)",
                 port);
        return -1;
    }
    int fd = ferry_sock_port_dial(sock);
    if (fd < 0) {
        snprintf(why, whylen, "nobody listens on port '%.120s' (closed, or its process is gone)", port);
        return -1;
    }
    char a = 0, c = PORT_CONFIRMED;
    int r = wait_readable_until(fd, timeout >= 0 ? ferry_now() + timeout : -1);
    if (r == 0 && !ferry_sock_read_all(fd, &a, 1) && a == PORT_ACCEPTED && !ferry_sock_write_all(fd, &c, 1))
        return fd;
    close(fd);
    if (r == 1)
        snprintf(why, whylen, "no MPI_Comm_accept on port '%.80s' within %g s (info key \"timeout\" or "
                 "FERRY_CONNECT_TIMEOUT)", port, timeout);
    else
        snprintf(why, whylen, "port '%.120s' closed before it accepted the connection", port);
    return -1;
}

int ferry_universe_connect(const char *port, int root, struct ferry_comm *c, int accept, double timeout,
                           struct ferry_comm **out, char *why, size_t whylen)
{
    struct join j = {.c = c, .root = root, .fd = -1};
    struct {
        int rc;
        char why[200];
    } st = {0};
    if (c->rank == root && (j.fd = reach(port, accept, timeout, st.why, sizeof st.why)) < 0)
        st.rc = MPI_ERR_PORT;
    ferry_comm_mgmt_bcast(c, &st, sizeof st, root, TAG_CONNECT);   /* 1. */
    if (st.rc) {
        snprintf(why, whylen, "%s", st.why);
        return st.rc;
    }
    uint32_t ctx = ferry_comm_agree_ctx_with(join_max, &j, 4);    /* 2. */
    int n = c->size, m = 0, *uids = NULL;
    if (c->rank == root) {                                         /* 3. */
        if (!j.broken && (ferry_sock_write_all(j.fd, &n, sizeof n) ||
                          ferry_sock_write_all(j.fd, c->group->world, (size_t)n * sizeof(int)) ||
                          read_progress(j.fd, &m, sizeof m) || m < 1 || m > ferry_rt.npeers))
            j.broken = 1;
        if (!j.broken) {
            uids = ferry_xmalloc((size_t)m * sizeof(int));
            if (read_progress(j.fd, uids, (size_t)m * sizeof(int)))
                j.broken = 1;
        }
        close(j.fd);
        if (j.broken)
            m = 0;
    }
    ferry_comm_mgmt_bcast(c, &m, sizeof m, root, TAG_CONNECT);
    if (m == 0) {
        free(uids);
        snprintf(why, whylen, "the connection to the other group's root broke");
        return MPI_ERR_PORT;
    }
    if (c->rank != root)
        uids = ferry_xmalloc((size_t)m * sizeof(int));
    ferry_comm_mgmt_bcast(c, uids, (size_t)m * sizeof(int), root, TAG_CONNECT);
    for (int i = 0; i < m; i++)
        if (uids[i] < 0 || uids[i] >= ferry_rt.npeers || ferry_group_rank_of(c->group, uids[i]) != MPI_UNDEFINED) {
            snprintf(why, whylen, "the other group names process %d, %s", uids[i],
                     uids[i] < 0 || uids[i] >= ferry_rt.npeers ? "outside the universe" : "a member of this group");
            free(uids);
            return MPI_ERR_INTERN;
        }
    struct ferry_group *remote = ferry_group_new(m, uids);        /* 4. (adds the new peers) */
    free(uids);
    c->group->refs++;
    *out = ferry_intercomm_new(c->group, remote, ctx, c->errhandler);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------- set up, tear down */

void ferry_universe_init(const struct ferry_boot_info *info)
{
    snprintf(U.name, sizeof U.name, "%s", info->universe);
    if (!U.name[0] || ferry_sock_setup(info->universe, info->secret))
        U.name[0] = 0;
    if (!info->parent_port[0])
        return;
    char why[256];
    if (!U.name[0])
        ferry_fatal("MPI_Init: spawned, but cannot reach the other worlds of the universe");
    if (ferry_universe_connect(info->parent_port, 0, ferry_comm_world, 0, -1, &ferry_universe_parent, why,
                               sizeof why))
        ferry_fatal("MPI_Init: cannot connect to the parents: %s", why);
    snprintf(ferry_universe_parent->name, sizeof ferry_universe_parent->name, "MPI_COMM_PARENT");
}

void ferry_universe_finalize(void)
{
    while (U.ports)
        ferry_port_close(U.ports->name);
    ferry_universe_parent = NULL;
    ferry_transport_sock.finalize();
    U.name[0] = 0;
}
