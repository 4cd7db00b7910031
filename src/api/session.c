/* MPI-4 sessions: a library's own handle on MPI, independent of
 * MPI_Init/MPI_Finalize. A session keeps the runtime up (core/init.c counts
 * its users), names the process sets "mpi://WORLD" and "mpi://SELF" (the
 * only ones a job started by mpiexec, hydra or Slurm has), turns a set into
 * a group, and a group into a communicator (Comm_create_from_group, over
 * MPI_COMM_WORLD's management context, the string tag hashed into the tag
 * of that agreement). Errors of session calls go to the session's handler. */
#include "api/check.h"
#include "core/comm.h"
#include "core/handle.h"
#include "core/info.h"
#include "core/init.h"
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct session {
    MPI_Session handle;
    MPI_Errhandler errhandler;
    int thread_level;
};

static struct ferry_objtab sessions;
static int sessions_ready;

static int string_tag(const char *stringtag, uint32_t salt);
static void mark_sessions_model(MPI_Comm h);

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
enum { NPSETS = 2 };
static const char *const thread_levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                            "MPI_THREAD_MULTIPLE"};

static struct session *session_get(MPI_Session h)
{
    return sessions_ready ? ferry_objtab_get(&sessions, h) : NULL;
}

/* Raise cls through the session's handler (s NULL: the default, fatal). */
static int session_error(struct session *s, int cls, const char *fn, const char *fmt, const char *arg)
{
    MPI_Errhandler eh = s ? s->errhandler : MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_RETURN)
        return cls;
    MPI_Comm_errhandler_function *f = ferry_errhandler_fn(eh);
    if (f) {
        MPI_Session h = s->handle;
        int code = cls;
        f(&h, &code, fn);
        return cls;
    }
    /* fatal: the usual one-line report and abort */
    return ferry_error(NULL, cls, fn, fmt, arg);
}

static int check_session(MPI_Session h, struct session **s, const char *fn)
{
    *s = session_get(h);
    if (!*s)
        return session_error(NULL, MPI_ERR_SESSION, fn, h == MPI_SESSION_NULL ? "session is MPI_SESSION_NULL%s"
                                                                              : "invalid session handle%s", "");
    return MPI_SUCCESS;
}

/* The index of a process set name (case does not matter), -1 if none. */
static int pset_index(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (!strcasecmp(name, psets[i]))
            return i;
    return -1;
}

/* The session and the index of a process set the caller names: MPI_ERR_SESSION
 * for a bad handle, MPI_ERR_ARG (through the session's handler) for an
 * unknown set. */
static int find_pset(MPI_Session session, const char *name, struct session **sp, int *index, const char *fn)
{
    int rc = check_session(session, sp, fn);
    if (rc)
        return rc;
    struct session *s = *sp;
    *index = pset_index(name);
    if (*index < 0)
        return session_error(s, MPI_ERR_ARG, fn, "unknown process set \"%s\"", name ? name : "(null)");
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_init = PMPI_Session_init
int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Session_init";
    if (!session)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "session pointer is NULL");
    struct ferry_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = ferry_info_get(info)))
        return ferry_error(NULL, MPI_ERR_INFO, fn, "invalid info handle 0x%x", (unsigned)info);
    /* the thread level the caller asks for ("thread_level" in the info) */
    int required = MPI_THREAD_SINGLE;
    const char *want = ferry_info_lookup(in, "thread_level");
    for (int i = 0; want && i < 4; i++)
        if (!strcasecmp(want, thread_levels[i]))
            required = i;
    int provided = MPI_THREAD_SINGLE;
    if (ferry_runtime_start(required, &provided, 0))
        return ferry_error(NULL, MPI_ERR_OTHER, fn, "MPI cannot be initialized again after it was finalized%s", "");
    if (!ferry_errhandler_valid(errhandler))
        errhandler = MPI_ERRORS_ARE_FATAL;
    if (!sessions_ready) {
        ferry_objtab_init(&sessions, FERRY_OBJ_SESSION, 0);
        sessions_ready = 1;
    }
    struct session *s = calloc(1, sizeof *s);
    if (!s)
        return ferry_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory%s", "");
    s->errhandler = errhandler;
    ferry_errhandler_retain(errhandler);
    s->thread_level = provided;
    s->handle = ferry_objtab_add(&sessions, s);
    *session = s->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_finalize = PMPI_Session_finalize
int PMPI_Session_finalize(MPI_Session *session)
{
    FERRY_API_ENTER();
    struct session *s;
    if (!session)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Session_finalize", "session pointer is NULL");
    int rc = check_session(*session, &s, "MPI_Session_finalize");
    if (rc)
        return rc;
    ferry_objtab_remove(&sessions, s->handle);
    ferry_errhandler_release(s->errhandler);
    free(s);
    *session = MPI_SESSION_NULL;
    ferry_runtime_stop(0);
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_info = PMPI_Session_get_info
int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    FERRY_API_ENTER();
    struct session *s;
    int rc = check_session(session, &s, "MPI_Session_get_info");
    if (rc)
        return rc;
    if (!info_used)
        return session_error(s, MPI_ERR_ARG, "MPI_Session_get_info", "info pointer is NULL%s", "");
    struct ferry_info *in = ferry_info_new();
    ferry_info_set(in, "thread_level", thread_levels[s->thread_level]);
    *info_used = in->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_num_psets = PMPI_Session_get_num_psets
int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    FERRY_API_ENTER();
    (void)info;
    struct session *s;
    int rc = check_session(session, &s, "MPI_Session_get_num_psets");
    if (rc)
        return rc;
    if (!npset_names)
        return session_error(s, MPI_ERR_ARG, "MPI_Session_get_num_psets", "npset_names is NULL%s", "");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

/* *pset_len 0: only the length (with the NUL) is returned; otherwise up to
 * *pset_len - 1 characters and a NUL are copied (MPI-4 11.3.2). */
#pragma weak MPI_Session_get_nth_pset = PMPI_Session_get_nth_pset
int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name)
{
    FERRY_API_ENTER();
    (void)info;
    struct session *s;
    const char *fn = "MPI_Session_get_nth_pset";
    int rc = check_session(session, &s, fn);
    if (rc)
        return rc;
    if (n < 0 || n >= NPSETS)
        return session_error(s, MPI_ERR_ARG, fn, "no process set %s", n < 0 ? "with a negative index" : "that far");
    if (!pset_len || *pset_len < 0)
        return session_error(s, MPI_ERR_ARG, fn, "pset_len is NULL or negative%s", "");
    int len = (int)strlen(psets[n]) + 1;
    if (*pset_len > 0) {
        if (!pset_name)
            return session_error(s, MPI_ERR_ARG, fn, "pset_name is NULL%s", "");
        int m = *pset_len < len ? *pset_len - 1 : len - 1;
        memcpy(pset_name, psets[n], (size_t)m);
        pset_name[m] = 0;
    }
    *pset_len = len;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_pset_info = PMPI_Session_get_pset_info
int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    FERRY_API_ENTER();
    struct session *s;
    const char *fn = "MPI_Session_get_pset_info";
    int i;
    int rc = find_pset(session, pset_name, &s, &i, fn);
    if (rc)
        return rc;
    if (!info)
        return session_error(s, MPI_ERR_ARG, fn, "info pointer is NULL%s", "");
    char size[16];
    snprintf(size, sizeof size, "%d", i == 0 ? ferry_rt.world_size : 1);
    struct ferry_info *in = ferry_info_new();
    ferry_info_set(in, "mpi_size", size);
    *info = in->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_from_session_pset = PMPI_Group_from_session_pset
int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    FERRY_API_ENTER();
    struct session *s;
    const char *fn = "MPI_Group_from_session_pset";
    int i;
    int rc = find_pset(session, pset_name, &s, &i, fn);
    if (rc)
        return rc;
    if (!newgroup)
        return session_error(s, MPI_ERR_ARG, fn, "group pointer is NULL%s", "");
    return PMPI_Comm_group(i == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF, newgroup);
}

/* Collective over the group's processes; concurrent creations are told
 * apart by the string tag, which every member passes alike. */
#pragma weak MPI_Comm_create_from_group = PMPI_Comm_create_from_group
int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Comm_create_from_group";
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!stringtag)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "stringtag is NULL");
    if (!newcomm)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "newcomm pointer is NULL");
    if ((rc = check_info_handle(NULL, info, fn)))
        return rc;
    rc = PMPI_Comm_create_group(MPI_COMM_WORLD, group, string_tag(stringtag, 0), newcomm);
    if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL)
        mark_sessions_model(*newcomm);
    if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL && errhandler != MPI_ERRHANDLER_NULL)
        rc = PMPI_Comm_set_errhandler(*newcomm, errhandler);
    return rc;
}

/* MPI-4 attaches the environment's attributes (MPI_HOST, MPI_IO,
 * MPI_WTIME_IS_GLOBAL, ...) to MPI_COMM_WORLD in the world model; a
 * communicator of the sessions model caches MPI_TAG_UB only (as Open MPI,
 * whose sessions_test16 checks it). */
static void mark_sessions_model(MPI_Comm h)
{
    struct ferry_comm *c = ferry_comm_get(h);
    if (c)
        c->sessions_model = 1;
}

/* The tag of a string tag, salted so that the steps of one call differ. */
static int string_tag(const char *stringtag, uint32_t salt)
{
    return (int)(ferry_hash_str(stringtag, salt) % (uint32_t)FERRY_TAG_UB);
}

/* MPI-4: an intercommunicator between two disjoint groups without a parent
 * communicator: each side makes its communicator from its group, then the
 * leaders meet over MPI_COMM_WORLD's management context (the remote leader
 * named by its world rank). Collective over both groups. */
#pragma weak MPI_Intercomm_create_from_groups = PMPI_Intercomm_create_from_groups
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                      int remote_leader, const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Intercomm_create_from_groups";
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!stringtag)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "stringtag is NULL");
    if ((rc = check_out(newintercomm, "newintercomm", fn)))
        return rc;
    struct ferry_group *rg = ferry_group_get(remote_group), *lg = ferry_group_get(local_group);
    if (!rg || !lg)
        return ferry_error(NULL, MPI_ERR_GROUP, fn, "invalid group handle");
    if (remote_leader < 0 || remote_leader >= rg->size || local_leader < 0 || local_leader >= lg->size)
        return ferry_error(NULL, MPI_ERR_RANK, fn, "leader %d is not a rank of its group",
                           remote_leader < 0 || remote_leader >= rg->size ? remote_leader : local_leader);
    MPI_Comm local;
    char ltag[MPI_MAX_INFO_VAL + 64];
    snprintf(ltag, sizeof ltag, "%s/intercomm-local", stringtag);
    if ((rc = PMPI_Comm_create_from_group(local_group, ltag, info, errhandler, &local)))
        return rc;
    rc = PMPI_Intercomm_create(local, local_leader, MPI_COMM_WORLD, rg->world[remote_leader],
                               string_tag(stringtag, 0x1c), newintercomm);
    PMPI_Comm_free(&local);
    if (rc == MPI_SUCCESS)
        mark_sessions_model(*newintercomm);
    if (rc == MPI_SUCCESS && errhandler != MPI_ERRHANDLER_NULL)
        rc = PMPI_Comm_set_errhandler(*newintercomm, errhandler);
    return rc;
}

/* ---- error handlers --------------------------------------------------------- */

#pragma weak MPI_Session_create_errhandler = PMPI_Session_create_errhandler
int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    FERRY_API_ENTER();
    if (!fn || !errhandler)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Session_create_errhandler", "NULL function or handler pointer");
    *errhandler = ferry_errhandler_new((MPI_Comm_errhandler_function *)(void *)fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_set_errhandler = PMPI_Session_set_errhandler
int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    FERRY_API_ENTER();
    struct session *s;
    int rc = check_session(session, &s, "MPI_Session_set_errhandler");
    if (rc)
        return rc;
    if (!ferry_errhandler_valid(errhandler))
        return session_error(s, MPI_ERR_ARG, "MPI_Session_set_errhandler", "invalid error handler%s", "");
    ferry_errhandler_retain(errhandler);
    ferry_errhandler_release(s->errhandler);
    s->errhandler = errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_errhandler = PMPI_Session_get_errhandler
int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    FERRY_API_ENTER();
    struct session *s;
    int rc = check_session(session, &s, "MPI_Session_get_errhandler");
    if (rc)
        return rc;
    if (!errhandler)
        return session_error(s, MPI_ERR_ARG, "MPI_Session_get_errhandler", "errhandler pointer is NULL%s", "");
    ferry_errhandler_retain(s->errhandler);   /* the caller frees it (Errhandler_free) */
    *errhandler = s->errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_call_errhandler = PMPI_Session_call_errhandler
int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    FERRY_API_ENTER();
    struct session *s;
    int rc = check_session(session, &s, "MPI_Session_call_errhandler");
    if (rc)
        return rc;
    session_error(s, errorcode, "MPI_Session_call_errhandler", "error code %s raised by the application", "");
    return MPI_SUCCESS;
}
