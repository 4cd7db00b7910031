/* Process creation and management (MPI-3.1 chapter 10): spawning, ports,
 * accept/connect, join, disconnect.
 *
 * Ferry's mpiexec spawns (PMI spawn request, boot.h) and gives every
 * process of its universe a uid; core/universe.c connects two groups of
 * that universe, and processes of different worlds talk over the socket
 * transport. A spawn is: the root opens a port and asks the launcher to
 * start the new world with that port in its environment; the parents
 * accept on it, collectively, while the children connect to it from
 * MPI_Init (their MPI_Comm_get_parent). Only processes Ferry's mpiexec
 * started can do this, and singletons, which start an mpiexec of their own
 * to adopt them when they first spawn; under other launchers the calls fail
 * with MPI_ERR_SPAWN or MPI_ERR_PORT and say why. Published names live in mpiexec, one table for
 * its universe. */
#include "api/check.h"
#include "api/comm_internal.h"
#include "boot/boot.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/info.h"
#include "core/universe.h"
#include "core/util.h"
#include "transport/sock/sock.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TAG_SPAWN (-511)
#define TAG_CONNECT_ARGS (-512)

#pragma weak MPI_Comm_get_parent = PMPI_Comm_get_parent
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Comm_get_parent");
    if (rc || (rc = check_out(parent, "parent", "MPI_Comm_get_parent")))
        return rc;
    *parent = ferry_universe_parent ? ferry_universe_parent->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* Collective (MPI-3.1 10.5.4). The barrier makes it so: no member goes on
 * before every member has come to disconnect. Operations still pending on
 * comm complete as usual afterwards: Comm_free keeps the object until the
 * last request that refers to it is done. */
#pragma weak MPI_Comm_disconnect = PMPI_Comm_disconnect
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    if (!comm)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Comm_disconnect", "comm pointer is NULL");
    int rc = check_comm(*comm, &c, "MPI_Comm_disconnect");
    if (rc)
        return rc;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return ferry_error(c, MPI_ERR_COMM, "MPI_Comm_disconnect", "cannot disconnect a predefined communicator");
    if ((rc = PMPI_Barrier(*comm)))
        return rc;
    return PMPI_Comm_free(comm);
}

/* ------------------------------------------------------------------ ports */

static int check_port_name(const char *port, const char *fn)
{
    if (!port)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "port_name is NULL");
    if (strnlen(port, MPI_MAX_PORT_NAME) >= MPI_MAX_PORT_NAME)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "port_name is longer than MPI_MAX_PORT_NAME");
    return MPI_SUCCESS;
}

#pragma weak MPI_Open_port = PMPI_Open_port
int PMPI_Open_port(MPI_Info info, char *port_name)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Open_port";
    int rc = check_init(fn);
    if (rc || (rc = check_info_handle(NULL, info, fn)) || (rc = check_out(port_name, "port_name", fn)))
        return rc;
    if (ferry_port_open(port_name, MPI_MAX_PORT_NAME))
        return ferry_error(NULL, MPI_ERR_PORT, fn, "%s", errno == ENOTSUP ?
                           "this process was not started by Ferry's mpiexec, which alone connects jobs"
                           : strerror(errno));
    return MPI_SUCCESS;
}

#pragma weak MPI_Close_port = PMPI_Close_port
int PMPI_Close_port(const char *port_name)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Close_port";
    int rc = check_init(fn);
    if (rc || (rc = check_port_name(port_name, fn)))
        return rc;
    if (ferry_port_close(port_name))
        return ferry_error(NULL, MPI_ERR_PORT, fn, "port '%.100s' is not open in this process", port_name);
    return MPI_SUCCESS;
}

/* Name publishing: mpiexec keeps one table for its universe (boot.h). */
static int names(char op, const char *service, MPI_Info info, char *port, const char *fn)
{
    int rc = check_init(fn);
    if (rc || (rc = check_info_handle(NULL, info, fn)))
        return rc;
    if (!service)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "service_name is NULL");
    if (strnlen(service, 256) >= 256)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "service_name is longer than 255 characters");
    if (op == 'l' ? (rc = check_out(port, "port_name", fn)) : op == 'p' && (rc = check_port_name(port, fn)))
        return rc;
    const char *why = "";
    if (ferry_boot_name(op, service, port, MPI_MAX_PORT_NAME, &why))
        return ferry_error(NULL, op == 'l' ? MPI_ERR_NAME : MPI_ERR_SERVICE, fn, "'%.100s': %s", service, why);
    return MPI_SUCCESS;
}

#pragma weak MPI_Publish_name = PMPI_Publish_name
int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    FERRY_API_ENTER();
    return names('p', service_name, info, (char *)port_name, "MPI_Publish_name");
}

#pragma weak MPI_Unpublish_name = PMPI_Unpublish_name
int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    FERRY_API_ENTER();
    (void)port_name;   /* the service name alone identifies the entry */
    return names('u', service_name, info, NULL, "MPI_Unpublish_name");
}

#pragma weak MPI_Lookup_name = PMPI_Lookup_name
int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    FERRY_API_ENTER();
    return names('l', service_name, info, port_name, "MPI_Lookup_name");
}

/* Accept and connect: the port and info count at the root only. */
static int accept_connect(const char *port, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm, int accept,
                          const char *fn)
{
    struct ferry_comm *c, *ic;
    int rc = check_comm(comm, &c, fn);
    if (rc || (rc = ferry_api_need_intra(c, fn)) || (rc = check_out(newcomm, "newcomm", fn)))
        return rc;
    if (root < 0 || root >= c->size)
        return ferry_error(c, MPI_ERR_ROOT, fn, "invalid root %d (communicator has %d ranks)", root, c->size);
    /* connect: the info key "timeout" (seconds, MPICH's name), else FERRY_CONNECT_TIMEOUT */
    double timeout = ferry_cfg.connect_timeout > 0 ? (double)ferry_cfg.connect_timeout : -1;
    int bad = 0;
    if (c->rank == root && !(bad = check_port_name(port, fn)) && !(bad = check_info_handle(c, info, fn))) {
        struct ferry_info *in = accept ? NULL : ferry_info_get(info);
        const char *tv = in ? ferry_info_lookup(in, "timeout") : NULL;
        char *end;
        if (tv && ((timeout = strtod(tv, &end)) < 0 || end == tv || *end || timeout != timeout))
            bad = ferry_error(c, MPI_ERR_INFO_VALUE, fn, "info key \"timeout\" must be seconds (>= 0), not '%s'",
                              tv);
    }
    /* the root's arguments alone count: every member fails with it */
    ferry_comm_mgmt_bcast(c, &bad, sizeof bad, root, TAG_CONNECT_ARGS);
    if (bad)
        return c->rank == root ? bad : ferry_error(c, bad, fn, "the root's port or info argument is invalid");
    char why[256];
    if ((rc = ferry_universe_connect(c->rank == root ? port : "", root, c, accept, timeout, &ic, why, sizeof why)))
        return ferry_error(c, rc, fn, "%s", why);
    *newcomm = ic->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_accept = PMPI_Comm_accept
int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    return accept_connect(port_name, info, root, comm, newcomm, 1, "MPI_Comm_accept");
}

#pragma weak MPI_Comm_connect = PMPI_Comm_connect
int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    return accept_connect(port_name, info, root, comm, newcomm, 0, "MPI_Comm_connect");
}

/* Two processes joined by a socket (MPI-3.1 10.5.6): they swap uids over
 * it; the lower opens a port and sends its name, the higher connects. */
#pragma weak MPI_Comm_join = PMPI_Comm_join
int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    FERRY_API_ENTER();
    static const char fn[] = "MPI_Comm_join";
    int rc = check_init(fn);
    if (rc || (rc = check_out(intercomm, "intercomm", fn)))
        return rc;
    int type;
    socklen_t tl = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) || type != SOCK_STREAM)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "descriptor %d is not a connected stream socket", fd);
    int me = ferry_rt.self, other = -1;
    if (ferry_sock_write_all(fd, &me, sizeof me) || ferry_sock_read_all(fd, &other, sizeof other))
        return ferry_error(NULL, MPI_ERR_OTHER, fn, "the socket broke while joining");
    if (other == me)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "the other end of the socket is this process");
    char port[MPI_MAX_PORT_NAME] = "";
    int accept = me < other;
    if (accept && ferry_port_open(port, sizeof port) != 0)
        port[0] = 0;   /* the other side learns of it from the empty name */
    if (accept ? ferry_sock_write_all(fd, port, sizeof port) : ferry_sock_read_all(fd, port, sizeof port))
        return ferry_error(NULL, MPI_ERR_OTHER, fn, "the socket broke while joining");
    if (!port[0])
        return ferry_error(NULL, MPI_ERR_PORT, fn, "the process that opens the port cannot (not started by Ferry's "
                           "mpiexec, or out of descriptors)");
    struct ferry_comm *ic;
    char why[256];
    rc = ferry_universe_connect(port, 0, ferry_comm_self, accept, -1, &ic, why, sizeof why);
    if (accept)
        ferry_port_close(port);
    if (rc)
        return ferry_error(NULL, rc, fn, "%s", why);
    *intercomm = ic->handle;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ spawn */

struct spawn_status {
    int rc;                 /* MPI error class, 0: the children run */
    int total;              /* processes started */
    char why[200];
};

/* The "path" info key (MPI-3.1 10.3.4): directories to look for a program
 * named without a '/'. The first that holds an executable file of that
 * name, as "dir/name" (malloc'd); else the name itself, for the launcher to
 * find along its PATH. */
static char *search_path(const char *path, const char *name)
{
    char buf[4096];
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, ":");
        if (len && snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p, name) < (int)sizeof buf &&
            access(buf, X_OK) == 0)
            return strdup(buf);
        p += len + (p[len] == ':');
    }
    return strdup(name);
}

/* Root: open the port and ask the launcher. */
static void spawn_at_root(int count, char *cmds[], char **argvs[], const int maxprocs[], const MPI_Info infos[],
                          char *port, struct spawn_status *st)
{
    struct ferry_boot_app *apps = ferry_xcalloc((size_t)count, sizeof *apps);
    char **found = ferry_xcalloc((size_t)count, sizeof *found);
    st->rc = MPI_ERR_SPAWN;
    for (int i = 0; i < count; i++) {
        if (!cmds[i] || !*cmds[i]) {
            st->rc = MPI_ERR_ARG;
            snprintf(st->why, sizeof st->why, "command %d is empty", i);
            goto out;
        }
        if (maxprocs[i] < 1) {   /* MPI-3.1 10.3.2: maxprocs at least 1 (0 in spawn_multiple: nothing) */
            st->rc = MPI_ERR_ARG;
            snprintf(st->why, sizeof st->why, "maxprocs %d for '%.80s'", maxprocs[i], cmds[i]);
            goto out;
        }
        struct ferry_info *in = infos && infos[i] != MPI_INFO_NULL ? ferry_info_get(infos[i]) : NULL;
        if (infos && infos[i] != MPI_INFO_NULL && !in) {
            st->rc = MPI_ERR_INFO;
            snprintf(st->why, sizeof st->why, "invalid info handle for command %d", i);
            goto out;
        }
        apps[i] = (struct ferry_boot_app){.cmd = cmds[i], .argv = argvs ? argvs[i] : NULL, .nprocs = maxprocs[i],
                                          .wdir = in ? ferry_info_lookup(in, "wdir") : NULL};
        const char *path = in ? ferry_info_lookup(in, "path") : NULL;
        if (path && !strchr(cmds[i], '/'))
            apps[i].cmd = found[i] = search_path(path, cmds[i]);
        st->total += maxprocs[i];
    }
    /* a singleton gets an mpiexec of its own, which adopts it, to spawn */
    if (ferry_universe_start(st->why, sizeof st->why))
        goto out;
    if (ferry_port_open(port, MPI_MAX_PORT_NAME)) {
        snprintf(st->why, sizeof st->why, "%s", errno == ENOTSUP
                 ? "this process was not started by Ferry's mpiexec, which alone spawns for Ferry" : strerror(errno));
        goto out;
    }
    int base, size;
    if (ferry_boot_spawn(count, apps, port, &base, &size, st->why, sizeof st->why)) {
        ferry_port_close(port);
        goto out;
    }
    st->rc = MPI_SUCCESS;
out:
    for (int i = 0; i < count; i++)
        free(found[i]);
    free(found);
    free(apps);
}

static int spawn(int count, char *cmds[], char **argvs[], const int maxprocs[], const MPI_Info infos[], int root,
                 MPI_Comm comm, MPI_Comm *intercomm, int errcodes[], const char *fn)
{
    struct ferry_comm *c, *ic = NULL;
    int rc = check_comm(comm, &c, fn);
    if (rc || (rc = ferry_api_need_intra(c, fn)) || (rc = check_out(intercomm, "intercomm", fn)))
        return rc;
    if (root < 0 || root >= c->size)
        return ferry_error(c, MPI_ERR_ROOT, fn, "invalid root %d (communicator has %d ranks)", root, c->size);
    struct spawn_status st = {0};
    char port[MPI_MAX_PORT_NAME] = "";
    if (c->rank == root) {
        if (count < 1 || !cmds || !maxprocs) {
            st.rc = MPI_ERR_ARG;
            snprintf(st.why, sizeof st.why, "%s", count < 1 ? "count is below 1" : "a NULL array argument");
        } else {
            spawn_at_root(count, cmds, argvs, maxprocs, infos, port, &st);
        }
    }
    ferry_comm_mgmt_bcast(c, &st, sizeof st, root, TAG_SPAWN);
    if (st.rc == MPI_SUCCESS) {
        char why[256];
        rc = ferry_universe_connect(port, root, c, 1, -1, &ic, why, sizeof why);
        if (c->rank == root)
            ferry_port_close(port);
        if (rc) {
            st.rc = rc;
            snprintf(st.why, sizeof st.why, "the children did not connect: %.150s", why);
        }
    }
    if (errcodes != MPI_ERRCODES_IGNORE)
        for (int i = 0; i < st.total; i++)
            errcodes[i] = st.rc ? MPI_ERR_SPAWN : MPI_SUCCESS;
    if (st.rc) {
        *intercomm = MPI_COMM_NULL;
        return ferry_error(c, st.rc, fn, "%s", st.why);
    }
    *intercomm = ic->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_spawn = PMPI_Comm_spawn
int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *intercomm, int array_of_errcodes[])
{
    FERRY_API_ENTER();
    char *cmd = (char *)command;
    char **argvs[1] = {argv};
    return spawn(1, &cmd, argv == MPI_ARGV_NULL ? NULL : argvs, &maxprocs, &info, root, comm, intercomm,
                 array_of_errcodes, "MPI_Comm_spawn");
}

#pragma weak MPI_Comm_spawn_multiple = PMPI_Comm_spawn_multiple
int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
                             MPI_Comm *intercomm, int array_of_errcodes[])
{
    FERRY_API_ENTER();
    return spawn(count, array_of_commands, array_of_argv == MPI_ARGVS_NULL ? NULL : array_of_argv,
                 array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes,
                 "MPI_Comm_spawn_multiple");
}
