/* One-sided communication: window creation, RMA operations, synchronization
 * (fence, passive-target locks, PSCW). All ranks of a window are on this
 * node; see core/win.h for how memory is reached. Every operation completes
 * before its call returns. */
#include "api/check.h"
#include "core/universe.h"
#include "core/attr.h"
#include "core/config.h"
#include "core/op.h"
#include "core/progress.h"
#include "core/win.h"
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define TAG_POST 0x7701
#define TAG_DONE 0x7702

/* Raise cls on w's error handler (a user handler gets the window handle). */
static int win_err(struct ferry_win *w, int cls, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int win_err(struct ferry_win *w, int cls, const char *fn, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    MPI_Errhandler eh = w->comm->errhandler;
    if (eh == MPI_ERRORS_RETURN)
        return cls;
    MPI_Comm_errhandler_function *f = ferry_errhandler_fn(eh);
    if (f) {
        MPI_Win h = w->handle;
        int code = cls;
        ((MPI_Win_errhandler_function *)f)(&h, &code, fn);
        return cls;
    }
    return ferry_error(w->comm, cls, fn, "%s", msg);
}

static int check_win(MPI_Win h, struct ferry_win **w, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    *w = ferry_win_get(h);
    if (!*w)
        return ferry_error(NULL, MPI_ERR_WIN, fn, h == MPI_WIN_NULL ? "window is MPI_WIN_NULL"
                                                                   : "invalid window handle 0x%x", (unsigned)h);
    /* a window served by active messages: every call on it serves requests,
     * so that a rank polling its own memory through RMA calls lets others in */
    if ((*w)->am)
        ferry_progress();
    return MPI_SUCCESS;
}

static void am_start(struct ferry_win *w);
static void am_stop(struct ferry_win *w);

/* ---- creation --------------------------------------------------------------- */

static int agree(MPI_Comm c, int ok)
{
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c);
    return ok;
}

/* Map the window's shared segment (control lines + len_data bytes) on every
 * rank of w->dup. 0 on success. */
static int map_segment(struct ferry_win *w, size_t len_data)
{
    char name[160], job[64];
    size_t i = 0;
    /* the universe's name: the same in every world a window may span */
    for (const char *p = ferry_universe_name(); *p && i < sizeof job - 1; p++)
        job[i++] = (*p == '/' || *p == ' ') ? '_' : *p;
    job[i] = 0;
    /* named after the window communicator's context and its rank 0 */
    int root_world = w->comm->group->world[0];
    snprintf(name, sizeof name, "/ferry-%s-w%u-%d", job, (unsigned)w->comm->ctx, root_world);
    size_t ctl = (size_t)w->size * sizeof(struct ferry_win_ctl);
    w->seglen = ctl + len_data;
    int fd = -1, ok = 1;
    if (w->rank == 0) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        ok = fd >= 0 && ftruncate(fd, (off_t)w->seglen) == 0 && posix_fallocate(fd, 0, (off_t)w->seglen) == 0;
    }
    ok = agree(w->dup, ok);
    if (ok && w->rank != 0)
        fd = shm_open(name, O_RDWR, 0600);
    void *p = MAP_FAILED;
    if (ok && fd >= 0)
        p = mmap(NULL, w->seglen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0)
        close(fd);
    ok = agree(w->dup, ok && p != MAP_FAILED);
    if (w->rank == 0 && fd >= 0)
        shm_unlink(name);
    if (!ok) {
        if (p != MAP_FAILED)
            munmap(p, w->seglen);
        return -1;
    }
    w->seg = p;
    w->ctl = (struct ferry_win_ctl *)w->seg;
    return 0;
}

/* The hints a window reports (MPICH's keys and defaults); others are ignored. */
static const char *const hint_keys[][2] = {
    {"no_locks", "false"},         {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"}, {"same_size", "false"},
    {"same_disp_unit", "false"},   {"alloc_shared_noncontig", "false"},
};
#define NHINTS (sizeof hint_keys / sizeof *hint_keys)

static void apply_hints(struct ferry_win *w, MPI_Info in)
{
    if (in == MPI_INFO_NULL)
        return;
    for (size_t i = 0; i < NHINTS; i++) {
        char val[MPI_MAX_INFO_VAL + 1];
        int len = sizeof val, flag = 0;
        if (PMPI_Info_get_string(in, hint_keys[i][0], &len, val, &flag) == MPI_SUCCESS && flag)
            PMPI_Info_set(w->info, hint_keys[i][0], val);
    }
}

static int win_new(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, int flavor,
                   void *baseptr, MPI_Win *win, const char *fn)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, fn);
    if (rc)
        return rc;
    if ((rc = check_out(win, "win", fn)))
        return rc;
    if ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) && (rc = check_out(baseptr, "baseptr", fn)))
        return rc;
    if (c->remote)
        return ferry_error(c, MPI_ERR_COMM, fn, "windows need an intracommunicator");
    if (size < 0)
        return ferry_error(c, MPI_ERR_SIZE, fn, "negative size %lld", (long long)size);
    if (disp_unit <= 0)
        return ferry_error(c, MPI_ERR_DISP, fn, "displacement unit %d is not positive", disp_unit);
    for (int i = 0; i < c->size; i++)
        if (!ferry_rt.peers[c->group->world[i]].same_node)
            return ferry_error(c, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                               "windows over ranks on several nodes are not implemented");

    struct ferry_win *w = ferry_xcalloc(1, sizeof *w);
    w->flavor = flavor;
    PMPI_Comm_dup(comm, &w->dup);
    w->comm = ferry_comm_get(w->dup);
    w->comm->coll_setup = 1;   /* until the window is made (see struct ferry_comm) */
    ferry_errhandler_retain(MPI_ERRORS_ARE_FATAL);
    ferry_errhandler_release(w->comm->errhandler);
    w->comm->errhandler = MPI_ERRORS_ARE_FATAL;   /* a window's default handler */
    w->rank = c->rank;
    w->size = c->size;
    w->wsize = size;
    w->disp_unit = disp_unit;
    int n = w->size;

    struct info {
        int64_t size, disp_unit, addr, seg, pid;
    } mine = {size, disp_unit, 0, 0, (int64_t)getpid()}, *all = ferry_xmalloc((size_t)n * sizeof *all);
    PMPI_Allgather(&mine, 5, MPI_INT64_T, all, 5, MPI_INT64_T, w->dup);

    /* the window memory of the allocate flavors lives in the segment */
    size_t *off = ferry_xcalloc((size_t)n + 1, sizeof *off);
    for (int i = 0; i < n; i++) {
        size_t s = (size_t)all[i].size;
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE)
            s = (s + 63) & ~(size_t)63;   /* each rank's memory cache-line aligned */
        off[i + 1] = off[i] + (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED ? s : 0);
    }
    size_t ctl = (size_t)n * sizeof(struct ferry_win_ctl);
    if (map_segment(w, off[n])) {
        size_t want = off[n];
        free(all);
        free(off);
        PMPI_Comm_free(&w->dup);
        free(w);
        return ferry_error(c, MPI_ERR_NO_MEM, fn, "no shared memory for the window (%zu bytes)", want);
    }
    if ((flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_DYNAMIC) && ferry_cfg.win_cma != 0)
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);   /* Yama ptrace_scope=1: let peers reach us */
    w->base = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED ? (void *)(w->seg + ctl + off[w->rank])
                                                                                   : base;
    mine.addr = (int64_t)(uintptr_t)w->base;
    mine.seg = (int64_t)(uintptr_t)w->seg;
    PMPI_Allgather(&mine, 5, MPI_INT64_T, all, 5, MPI_INT64_T, w->dup);
    w->peer = ferry_xcalloc((size_t)n, sizeof *w->peer);
    for (int i = 0; i < n; i++) {
        struct ferry_win_peer *p = &w->peer[i];
        p->addr = (uint64_t)all[i].addr;
        p->size = (MPI_Aint)all[i].size;
        p->disp_unit = (int)all[i].disp_unit;
        p->pid = (pid_t)all[i].pid;   /* (a process of another world may never have told us) */
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) {
            p->direct = w->seg + ctl + off[i];
            p->local = 1;
        } else if (i == w->rank) {
            p->direct = w->base;   /* dynamic: MPI_BOTTOM, displacements are addresses */
            p->local = 1;
        } else {
            /* probe Cross Memory Attach on the peer's copy of the segment */
            char b;
            struct iovec l = {&b, 1}, r = {(void *)(uintptr_t)all[i].seg, 1};
            p->cma_ok = ferry_cfg.win_cma != 0 && process_vm_readv(p->pid, &l, 1, &r, 1, 0) == 1;
        }
    }
    free(all);
    free(off);
    w->lock = ferry_xcalloc((size_t)n, sizeof *w->lock);
    w->post_got = ferry_xcalloc((size_t)n, 1);
    int need_am = 0;
    for (int i = 0; i < n; i++)
        need_am |= !w->peer[i].local && !w->peer[i].cma_ok;
    PMPI_Allreduce(MPI_IN_PLACE, &need_am, 1, MPI_INT, MPI_MAX, w->dup);
    if (need_am)
        am_start(w);
    PMPI_Info_create(&w->info);
    for (size_t i = 0; i < NHINTS; i++)
        PMPI_Info_set(w->info, hint_keys[i][0], hint_keys[i][1]);
    apply_hints(w, info);
    w->comm->coll_setup = 0;
    ferry_win_register(w);
    if (baseptr)
        *(void **)baseptr = w->base;
    *win = w->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_create = PMPI_Win_create
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    FERRY_API_ENTER();
    return win_new(base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE, NULL, win, "MPI_Win_create");
}

#pragma weak MPI_Win_allocate = PMPI_Win_allocate
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    FERRY_API_ENTER();
    return win_new(NULL, size, disp_unit, info, comm, MPI_WIN_FLAVOR_ALLOCATE, baseptr, win, "MPI_Win_allocate");
}

#pragma weak MPI_Win_allocate_shared = PMPI_Win_allocate_shared
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                             MPI_Win *win)
{
    FERRY_API_ENTER();
    return win_new(NULL, size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, baseptr, win,
                   "MPI_Win_allocate_shared");
}

#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    FERRY_API_ENTER();
    return win_new(MPI_BOTTOM, 0, 1, info, comm, MPI_WIN_FLAVOR_DYNAMIC, NULL, win, "MPI_Win_create_dynamic");
}

/* Attached memory is reached by address with Cross Memory Attach: nothing
 * to record (an access outside attached memory is erroneous; one outside
 * mapped memory fails with MPI_ERR_OTHER). */
#pragma weak MPI_Win_attach = PMPI_Win_attach
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_attach");
    if (rc)
        return rc;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return win_err(w, MPI_ERR_RMA_FLAVOR, "MPI_Win_attach", "the window was not made by MPI_Win_create_dynamic");
    if (size < 0)
        return win_err(w, MPI_ERR_SIZE, "MPI_Win_attach", "negative size %lld", (long long)size);
    (void)base;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_detach = PMPI_Win_detach
int PMPI_Win_detach(MPI_Win win, const void *base)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_detach");
    if (rc)
        return rc;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return win_err(w, MPI_ERR_RMA_FLAVOR, "MPI_Win_detach", "the window was not made by MPI_Win_create_dynamic");
    (void)base;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_shared_query = PMPI_Win_shared_query
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Win_shared_query";
    struct ferry_win *w;
    int rc = check_win(win, &w, fn);
    if (rc)
        return rc;
    if (w->flavor != MPI_WIN_FLAVOR_SHARED && w->flavor != MPI_WIN_FLAVOR_ALLOCATE)
        return win_err(w, MPI_ERR_RMA_FLAVOR, fn, "the window was not made by MPI_Win_allocate_shared");
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        for (int i = 0; i < w->size; i++)
            if (w->peer[i].size > 0) {
                rank = i;
                break;
            }
    } else if (rank < 0 || rank >= w->size) {
        return win_err(w, MPI_ERR_RANK, fn, "invalid rank %d (window has %d ranks)", rank, w->size);
    }
    if (!size || !disp_unit || !baseptr)
        return win_err(w, MPI_ERR_ARG, fn, "NULL output argument");
    *size = w->peer[rank].size;
    *disp_unit = w->peer[rank].disp_unit;
    *(void **)baseptr = w->peer[rank].size > 0 ? w->peer[rank].direct : NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_free = PMPI_Win_free
int PMPI_Win_free(MPI_Win *win)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Win_free";
    struct ferry_win *w;
    int rc = check_out(win, "win", fn);
    if (rc || (rc = check_win(*win, &w, fn)))
        return rc;
    if (w->lock_all || w->nstart || w->npost)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "an access or exposure epoch is still open");
    for (int i = 0; i < w->size; i++)
        if (w->lock[i])
            return win_err(w, MPI_ERR_RMA_SYNC, fn, "the lock on rank %d is still held", i);
    if ((rc = ferry_attr_win_free(w->handle)))
        return rc;
    /* nobody may still be reaching into this rank's memory */
    PMPI_Barrier(w->dup);
    if (w->am)
        am_stop(w);
    ferry_win_unregister(w);
    munmap(w->seg, w->seglen);
    PMPI_Info_free(&w->info);
    PMPI_Comm_free(&w->dup);
    free(w->peer);
    free(w->lock);
    free(w->post_got);
    free(w->start_grp);
    free(w->post_grp);
    free(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_group = PMPI_Win_get_group
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_get_group");
    if (rc || (rc = check_out(group, "group", "MPI_Win_get_group")))
        return rc;
    return PMPI_Comm_group(w->dup, group);
}

#pragma weak MPI_Win_set_name = PMPI_Win_set_name
int PMPI_Win_set_name(MPI_Win win, const char *name)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_set_name");
    if (rc)
        return rc;
    if (!name)
        return win_err(w, MPI_ERR_ARG, "MPI_Win_set_name", "name is NULL");
    snprintf(w->name, sizeof w->name, "%s", name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_name = PMPI_Win_get_name
int PMPI_Win_get_name(MPI_Win win, char *name, int *len)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_get_name");
    if (rc)
        return rc;
    if (!name || !len)
        return win_err(w, MPI_ERR_ARG, "MPI_Win_get_name", "NULL output argument");
    strcpy(name, w->name);
    *len = (int)strlen(w->name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_set_info = PMPI_Win_set_info
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_set_info");
    if (rc)
        return rc;
    apply_hints(w, info);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_info = PMPI_Win_get_info
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_get_info");
    if (rc || (rc = check_out(info, "info_used", "MPI_Win_get_info")))
        return rc;
    return PMPI_Info_dup(w->info, info);
}

/* ---- error handlers ------------------------------------------------------------ */

#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *eh)
{
    FERRY_API_ENTER();
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn, eh);
}

#pragma weak MPI_Win_set_errhandler = PMPI_Win_set_errhandler
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler eh)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_set_errhandler");
    if (rc)
        return rc;
    if (!ferry_errhandler_valid(eh))
        return win_err(w, MPI_ERR_ARG, "MPI_Win_set_errhandler", "invalid error handler 0x%x", (unsigned)eh);
    ferry_errhandler_retain(eh);
    ferry_errhandler_release(w->comm->errhandler);
    w->comm->errhandler = eh;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_errhandler = PMPI_Win_get_errhandler
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *eh)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_get_errhandler");
    if (rc || (rc = check_out(eh, "errhandler", "MPI_Win_get_errhandler")))
        return rc;
    ferry_errhandler_retain(w->comm->errhandler);
    *eh = w->comm->errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_call_errhandler = PMPI_Win_call_errhandler
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_call_errhandler");
    if (rc)
        return rc;
    win_err(w, errorcode, "MPI_Win_call_errhandler", "error raised by the application");
    return MPI_SUCCESS;
}


/* ---- active-message fallback ---------------------------------------------------
 * For windows whose memory some rank cannot reach with Cross Memory Attach:
 * the origin sends each contiguous piece of the target data as a request
 * (header + data) on the window's communicator and waits for the reply (an
 * acknowledgement, or the data read); the target serves requests from a
 * progress hook, so whenever it is inside any MPI call. Accumulates are
 * applied at the target under its accumulate mutex (taken with a try, never
 * waited for inside the hook). */
#define TAG_AM_REQ 0x7703
#define TAG_AM_REP 0x7704
#define AM_MAX (1024 * 1024)
enum { AM_PUT = 1, AM_GET, AM_ACC, AM_CAS };
struct am_hdr {
    int32_t kind, op, unit, want_old;
    int64_t off, len;
};
static struct ferry_win *am_wins;
static int am_busy;

static void am_post(struct ferry_win *w)
{
    PMPI_Irecv(w->am_buf, (int)(sizeof(struct am_hdr) + 2 * AM_MAX), MPI_BYTE, MPI_ANY_SOURCE, TAG_AM_REQ, w->dup,
               &w->am_req);
}

static int try_acc(struct ferry_win *w, int r)
{
    uint32_t v = 0;
    return __atomic_compare_exchange_n(&w->ctl[r].acc, &v, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void *units_of(void *stream, size_t bytes, const struct ferry_datatype *unit, size_t n, void **owned);

/* Serve the request that arrived, if any and if it can be served now. */
static int am_serve(struct ferry_win *w)
{
    struct ferry_request *r = ferry_request_get(w->am_req);
    if (!r || !r->complete)
        return 0;
    if (w->am_reply != MPI_REQUEST_NULL) {
        struct ferry_request *q = ferry_request_get(w->am_reply);
        if (q && !q->complete)
            return 0;
        PMPI_Wait(&w->am_reply, MPI_STATUS_IGNORE);
    }
    struct am_hdr h;
    memcpy(&h, w->am_buf, sizeof h);
    int locked = h.kind == AM_ACC || h.kind == AM_CAS;
    if (locked && !try_acc(w, w->rank))
        return 0;
    MPI_Status st;
    PMPI_Wait(&w->am_req, &st);
    char *data = w->am_buf + sizeof h;
    char *t = (char *)w->base + h.off;
    size_t len = (size_t)h.len, rlen = 0;
    if (h.kind == AM_PUT) {
        memcpy(t, data, len);
    } else if (h.kind == AM_GET) {
        memcpy(w->am_out, t, len);
        rlen = len;
    } else {
        memcpy(w->am_out, t, len);
        rlen = h.want_old ? len : 0;
        if (h.kind == AM_CAS) {
            if (memcmp(data + len, t, len) == 0)
                memcpy(t, data, len);
        } else {
            struct ferry_op *op = ferry_op_get(h.op);
            if (op->kind == FERRY_OP_REPLACE) {
                memcpy(t, data, len);
            } else if (op->kind != FERRY_OP_NO_OP) {
                struct ferry_datatype *unit = ferry_datatype_get(h.unit);
                size_t n = len / unit->size;
                char *tmp = ferry_xmalloc(len + 1);
                memcpy(tmp, t, len);
                void *oo, *to;
                void *ou = units_of(data, len, unit, n, &oo);
                void *tu = units_of(tmp, len, unit, n, &to);
                ferry_op_apply(op, ou, tu, n, unit);
                if (to)
                    ferry_dt_pack(unit, tu, 0, tmp, len);
                memcpy(t, tmp, len);
                free(oo);
                free(to);
                free(tmp);
            }
        }
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        ferry_win_acc_release(w, w->rank);
    }
    PMPI_Isend(w->am_out, (int)rlen, MPI_BYTE, st.MPI_SOURCE, TAG_AM_REP, w->dup, &w->am_reply);
    am_post(w);
    return 1;
}

static int am_hook(void)
{
    if (am_busy)
        return 0;
    am_busy = 1;
    int n = 0;
    for (struct ferry_win *w = am_wins; w; w = w->am_next)
        while (am_serve(w))
            n++;
    am_busy = 0;
    return n;
}

static void am_start(struct ferry_win *w)
{
    w->am = 1;
    w->am_buf = ferry_xmalloc(sizeof(struct am_hdr) + 2 * AM_MAX);
    w->am_out = ferry_xmalloc(AM_MAX);
    w->am_reply = MPI_REQUEST_NULL;
    am_post(w);
    w->am_next = am_wins;
    am_wins = w;
    ferry_progress_add_hook(am_hook);
}

static void am_stop(struct ferry_win *w)
{
    for (struct ferry_win **pp = &am_wins; *pp; pp = &(*pp)->am_next)
        if (*pp == w) {
            *pp = w->am_next;
            break;
        }
    PMPI_Cancel(&w->am_req);
    PMPI_Wait(&w->am_req, MPI_STATUS_IGNORE);
    if (w->am_reply != MPI_REQUEST_NULL)
        PMPI_Wait(&w->am_reply, MPI_STATUS_IGNORE);
    free(w->am_buf);
    free(w->am_out);
}

/* The origin side: move the packed stream of (count, dt) at the target by
 * requests. kind AM_PUT/AM_GET; AM_ACC applies op (unit: its unit type),
 * AM_CAS stores stream where the target equals cmp; old (may be NULL)
 * receives the target data as they were (packed stream). */
static void am_io(struct ferry_win *w, int rank, MPI_Aint disp, size_t count, const struct ferry_datatype *dt,
                  void *stream, int kind, MPI_Op op, const struct ferry_datatype *unit, const void *cmp, void *old)
{
    size_t bytes = ferry_dt_bytes(dt, count);
    if (bytes == 0)
        return;
    MPI_Aint lo;
    size_t span, *runs;
    size_t nrun = ferry_win_layout(dt, count, &lo, &span, &runs);
    char *scratch = ferry_xmalloc(span), *oldsp = old ? ferry_xmalloc(span) : NULL;
    char *cmpsp = cmp ? ferry_xmalloc(span) : NULL;
    if (kind != AM_GET)
        ferry_dt_unpack(dt, scratch - lo, 0, stream, bytes);
    if (cmp)
        ferry_dt_unpack(dt, cmpsp - lo, 0, cmp, bytes);
    size_t step = AM_MAX;
    if (unit)
        step = AM_MAX / unit->size * unit->size;
    char *msg = ferry_xmalloc(sizeof(struct am_hdr) + 2 * AM_MAX);
    MPI_Aint base = disp * (MPI_Aint)w->peer[rank].disp_unit + lo;
    for (size_t i = 0; i < nrun; i++) {
        for (size_t c = 0; c < runs[2 * i + 1]; c += step) {
            size_t o = runs[2 * i] + c, n = FERRY_MIN(step, runs[2 * i + 1] - c);
            struct am_hdr h = {kind, (int32_t)op, unit ? (int32_t)unit->handle : 0, old != NULL,
                               (int64_t)(base + (MPI_Aint)o), (int64_t)n};
            memcpy(msg, &h, sizeof h);
            size_t mlen = sizeof h;
            if (kind != AM_GET) {
                memcpy(msg + mlen, scratch + o, n);
                mlen += n;
            }
            if (cmp) {
                memcpy(msg + mlen, cmpsp + o, n);
                mlen += n;
            }
            PMPI_Send(msg, (int)mlen, MPI_BYTE, rank, TAG_AM_REQ, w->dup);
            char *into = kind == AM_GET ? scratch + o : old ? oldsp + o : NULL;
            PMPI_Recv(into ? into : msg, into ? (int)n : 0, MPI_BYTE, rank, TAG_AM_REP, w->dup, MPI_STATUS_IGNORE);
        }
    }
    if (kind == AM_GET)
        ferry_dt_pack(dt, scratch - lo, 0, stream, bytes);
    if (old)
        ferry_dt_pack(dt, oldsp - lo, 0, old, bytes);
    free(msg);
    free(runs);
    free(scratch);
    free(oldsp);
    free(cmpsp);
}

/* Reached by requests rather than by memory? */
static int via_am(struct ferry_win *w, int rank)
{
    return w->am && !w->peer[rank].local && !w->peer[rank].cma_ok;
}

/* ---- operations ------------------------------------------------------------------ */

/* Checks shared by every operation; *skip when the target is MPI_PROC_NULL. */
static int check_target(struct ferry_win *w, int rank, MPI_Aint disp, MPI_Count tcount, struct ferry_datatype *tdt,
                        int *skip, const char *fn)
{
    *skip = rank == MPI_PROC_NULL;
    if (*skip)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return win_err(w, MPI_ERR_RANK, fn, "invalid target rank %d (window has %d ranks)", rank, w->size);
    int epoch = w->fence_open || w->lock_all || w->lock[rank];
    for (int i = 0; !epoch && i < w->nstart; i++)
        epoch = w->start_grp[i] == rank;
    if (!epoch)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "no access epoch to rank %d is open (fence, lock or start)", rank);
    struct ferry_win_peer *p = &w->peer[rank];
    if (!p->local && !p->cma_ok && !w->am)
        return win_err(w, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                       "rank %d's window memory cannot be reached: Cross Memory Attach "
                       "(process_vm_readv/writev) is not permitted between these processes (ptrace scope?); "
                       "use MPI_Win_allocate",
                       rank);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return MPI_SUCCESS;
    if (disp < 0)
        return win_err(w, MPI_ERR_DISP, fn, "negative target displacement %lld", (long long)disp);
    if (tcount == 0 || tdt->size == 0)
        return MPI_SUCCESS;
    MPI_Aint lo = tdt->true_lb, hi = tdt->true_lb + tdt->true_extent;
    MPI_Aint shift = (MPI_Aint)(tcount - 1) * tdt->extent;
    if (shift < 0)
        lo += shift;
    else
        hi += shift;
    MPI_Aint off = disp * (MPI_Aint)p->disp_unit;
    if (off + lo < 0 || off + hi > p->size)
        return win_err(w, MPI_ERR_RMA_RANGE, fn,
                       "target bytes [%lld, %lld) are outside rank %d's window of %lld bytes", (long long)(off + lo),
                       (long long)(off + hi), rank, (long long)p->size);
    return MPI_SUCCESS;
}

static int io_fail(struct ferry_win *w, int err, int rank, const char *fn)
{
    return win_err(w, MPI_ERR_OTHER, fn, "Cross Memory Attach to rank %d failed: %s", rank, strerror(-err));
}

#define TARGET ((const void *)-1)   /* check_buf_args on the target side: no buffer here */
static int check_buf_args(struct ferry_win *w, const void *buf, MPI_Count count, MPI_Datatype type,
                          struct ferry_datatype **dt, const char *fn)
{
    int rc;
    if ((rc = check_count(w->comm, count, fn)) || (rc = check_type(w->comm, type, dt, fn)) ||
        (rc = check_bytes(w->comm, count, *dt, fn)) ||
        (buf != (const void *)-1 && (rc = check_buf(w->comm, buf, count, *dt, fn))))
        return rc;
    return MPI_SUCCESS;
}

/* The packed stream of (buf, count, dt): buf itself when contiguous. */
static void *stream_of(const void *buf, size_t count, const struct ferry_datatype *dt, void **owned)
{
    size_t bytes = ferry_dt_bytes(dt, count);
    *owned = NULL;
    if (ferry_dt_is_contig(dt, count))
        return (void *)ferry_dt_contig_ptr(dt, buf);
    *owned = ferry_xmalloc(bytes ? bytes : 1);
    ferry_dt_pack(dt, buf, 0, *owned, bytes);
    return *owned;
}

static int do_put(const void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp, MPI_Count tcount,
                  MPI_Datatype ttype, MPI_Win win, const char *fn)
{
    struct ferry_win *w;
    struct ferry_datatype *odt, *tdt;
    int rc, skip;
    if ((rc = check_win(win, &w, fn)) || (rc = check_buf_args(w, obuf, ocount, otype, &odt, fn)) ||
        (rc = check_buf_args(w, TARGET, tcount, ttype, &tdt, fn)) ||
        (rc = check_target(w, rank, disp, tcount, tdt, &skip, fn)) || skip)
        return rc;
    size_t bytes = ferry_dt_bytes(odt, (size_t)ocount);
    if (bytes != ferry_dt_bytes(tdt, (size_t)tcount))
        return win_err(w, MPI_ERR_TYPE, fn, "origin (%zu bytes) and target (%zu bytes) data differ in size", bytes,
                       ferry_dt_bytes(tdt, (size_t)tcount));
    void *owned;
    void *s = stream_of(obuf, (size_t)ocount, odt, &owned);
    int e = 0;
    if (via_am(w, rank))
        am_io(w, rank, disp, (size_t)tcount, tdt, s, AM_PUT, MPI_OP_NULL, NULL, NULL, NULL);
    else
        e = ferry_win_target_io(w, rank, disp, (size_t)tcount, tdt, s, 1);
    free(owned);
    return e ? io_fail(w, e, rank, fn) : MPI_SUCCESS;
}

static int do_get(void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp, MPI_Count tcount,
                  MPI_Datatype ttype, MPI_Win win, const char *fn)
{
    struct ferry_win *w;
    struct ferry_datatype *odt, *tdt;
    int rc, skip;
    if ((rc = check_win(win, &w, fn)) || (rc = check_buf_args(w, obuf, ocount, otype, &odt, fn)) ||
        (rc = check_buf_args(w, TARGET, tcount, ttype, &tdt, fn)) ||
        (rc = check_target(w, rank, disp, tcount, tdt, &skip, fn)) || skip)
        return rc;
    size_t bytes = ferry_dt_bytes(odt, (size_t)ocount);
    if (bytes != ferry_dt_bytes(tdt, (size_t)tcount))
        return win_err(w, MPI_ERR_TYPE, fn, "origin (%zu bytes) and target (%zu bytes) data differ in size", bytes,
                       ferry_dt_bytes(tdt, (size_t)tcount));
    int contig = ferry_dt_is_contig(odt, (size_t)ocount);
    void *s = contig ? (void *)ferry_dt_contig_ptr(odt, obuf) : ferry_xmalloc(bytes ? bytes : 1);
    int e = 0;
    if (via_am(w, rank))
        am_io(w, rank, disp, (size_t)tcount, tdt, s, AM_GET, MPI_OP_NULL, NULL, NULL, NULL);
    else
        e = ferry_win_target_io(w, rank, disp, (size_t)tcount, tdt, s, 0);
    if (!contig) {
        if (!e)
            ferry_dt_unpack(odt, obuf, 0, s, bytes);
        free(s);
    }
    return e ? io_fail(w, e, rank, fn) : MPI_SUCCESS;
}

/* Stream <-> array of units in their natural layout (pair types are padded). */
static void *units_of(void *stream, size_t bytes, const struct ferry_datatype *unit, size_t n, void **owned)
{
    *owned = NULL;
    if (unit->size == (size_t)unit->extent)
        return stream;
    *owned = ferry_xmalloc(n * (size_t)unit->extent + 1);
    ferry_dt_unpack(unit, *owned, 0, stream, bytes);
    return *owned;
}

/* The accumulate family: target = origin op target, atomically per target;
 * the old target data go to result (Get_accumulate) when rbuf is given;
 * compare != NULL: compare-and-swap. */
static int do_acc(const void *obuf, MPI_Count ocount, MPI_Datatype otype, void *rbuf, MPI_Count rcount,
                  MPI_Datatype rtype, const void *compare, int rank, MPI_Aint disp, MPI_Count tcount,
                  MPI_Datatype ttype, MPI_Op oph, MPI_Win win, int want_result, const char *fn)
{
    struct ferry_win *w;
    struct ferry_datatype *odt = NULL, *tdt, *rdt = NULL;
    int rc, skip;
    if ((rc = check_win(win, &w, fn)))
        return rc;
    struct ferry_op *op = ferry_op_get(oph);
    if (!op && !compare)
        return win_err(w, MPI_ERR_OP, fn, "invalid operation 0x%x", (unsigned)oph);
    int noop = op && op->kind == FERRY_OP_NO_OP;
    if ((!noop && (rc = check_buf_args(w, obuf, ocount, otype, &odt, fn))) ||
        (rc = check_buf_args(w, TARGET, tcount, ttype, &tdt, fn)) ||
        (want_result && (rc = check_buf_args(w, rbuf, rcount, rtype, &rdt, fn))))
        return rc;
    if ((rc = check_target(w, rank, disp, tcount, tdt, &skip, fn)) || skip)
        return rc;
    size_t bytes = ferry_dt_bytes(tdt, (size_t)tcount);
    if ((!noop && ferry_dt_bytes(odt, (size_t)ocount) != bytes) ||
        (want_result && ferry_dt_bytes(rdt, (size_t)rcount) != bytes))
        return win_err(w, MPI_ERR_TYPE, fn, "origin, result and target data differ in size");
    if (bytes == 0)
        return MPI_SUCCESS;
    struct ferry_datatype *unit = NULL;
    size_t per = 0;
    if (op && op->kind == FERRY_OP_USER)
        return win_err(w, MPI_ERR_OP, fn, "user-defined operations are not allowed in one-sided accumulates");
    if (op && (rc = ferry_op_unit(op, tdt, 1, &unit, &per)))
        return win_err(w, rc, fn, "operation not defined on the target datatype");
    if (op && !noop && ferry_dt_basic_type(odt) != ferry_dt_basic_type(tdt) && odt->size && tdt->size)
        return win_err(w, MPI_ERR_TYPE, fn, "origin and target datatypes are built from different basic types");

    void *owned_o = NULL;
    void *os = noop ? NULL : stream_of(obuf, (size_t)ocount, odt, &owned_o);
    if (via_am(w, rank)) {
        char *old = want_result ? ferry_xmalloc(bytes) : NULL;
        if (compare)
            am_io(w, rank, disp, (size_t)tcount, tdt, os, AM_CAS, MPI_OP_NULL, NULL, compare, old);
        else if (noop && old)
            am_io(w, rank, disp, (size_t)tcount, tdt, old, AM_GET, MPI_OP_NULL, NULL, NULL, NULL);
        else if (!noop)
            am_io(w, rank, disp, (size_t)tcount, tdt, os, AM_ACC, oph, unit, NULL, old);
        if (old)
            ferry_dt_unpack(rdt, rbuf, 0, old, bytes);
        free(old);
        free(owned_o);
        return MPI_SUCCESS;
    }
    char *ts = ferry_xmalloc(bytes + 1);
    ferry_win_acc_acquire(w, rank);
    int e = ferry_win_target_io(w, rank, disp, (size_t)tcount, tdt, ts, 0);
    if (!e && want_result)
        ferry_dt_unpack(rdt, rbuf, 0, ts, bytes);
    if (!e && compare) {
        if (memcmp(compare, ts, bytes) == 0)
            e = ferry_win_target_io(w, rank, disp, (size_t)tcount, tdt, os, 1);
    } else if (!e && !noop) {
        if (op->kind == FERRY_OP_REPLACE) {
            e = ferry_win_target_io(w, rank, disp, (size_t)tcount, tdt, os, 1);
        } else {
            size_t n = bytes / unit->size;
            void *oo, *to;
            void *ou = units_of(os, bytes, unit, n, &oo);
            void *tu = units_of(ts, bytes, unit, n, &to);
            ferry_op_apply(op, ou, tu, n, unit);
            if (to)
                ferry_dt_pack(unit, tu, 0, ts, bytes);
            free(oo);
            free(to);
            e = ferry_win_target_io(w, rank, disp, (size_t)tcount, tdt, ts, 1);
        }
    }
    ferry_win_acc_release(w, rank);
    free(ts);
    free(owned_o);
    return e ? io_fail(w, e, rank, fn) : MPI_SUCCESS;
}

#pragma weak MPI_Put = PMPI_Put
int PMPI_Put(const void *obuf, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
             MPI_Datatype ttype, MPI_Win win)
{
    FERRY_API_ENTER();
    return do_put(obuf, ocount, otype, rank, disp, tcount, ttype, win, "MPI_Put");
}

#pragma weak MPI_Get = PMPI_Get
int PMPI_Get(void *obuf, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype,
             MPI_Win win)
{
    FERRY_API_ENTER();
    return do_get(obuf, ocount, otype, rank, disp, tcount, ttype, win, "MPI_Get");
}

#pragma weak MPI_Accumulate = PMPI_Accumulate
int PMPI_Accumulate(const void *obuf, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
                    MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    FERRY_API_ENTER();
    return do_acc(obuf, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, NULL, rank, disp, tcount, ttype, op, win, 0,
                  "MPI_Accumulate");
}

#pragma weak MPI_Get_accumulate = PMPI_Get_accumulate
int PMPI_Get_accumulate(const void *obuf, int ocount, MPI_Datatype otype, void *rbuf, int rcount,
                        MPI_Datatype rtype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                        MPI_Win win)
{
    FERRY_API_ENTER();
    return do_acc(obuf, ocount, otype, rbuf, rcount, rtype, NULL, rank, disp, tcount, ttype, op, win, 1,
                  "MPI_Get_accumulate");
}

#pragma weak MPI_Fetch_and_op = PMPI_Fetch_and_op
int PMPI_Fetch_and_op(const void *obuf, void *rbuf, MPI_Datatype type, int rank, MPI_Aint disp, MPI_Op op,
                      MPI_Win win)
{
    FERRY_API_ENTER();
    return do_acc(obuf, 1, type, rbuf, 1, type, NULL, rank, disp, 1, type, op, win, 1, "MPI_Fetch_and_op");
}

#pragma weak MPI_Compare_and_swap = PMPI_Compare_and_swap
int PMPI_Compare_and_swap(const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype type, int rank,
                          MPI_Aint disp, MPI_Win win)
{
    FERRY_API_ENTER();
    struct ferry_datatype *dt = ferry_datatype_get(type), *unit;
    size_t per;
    struct ferry_win *w = ferry_win_get(win);
    /* MPI_BOR takes exactly the integer, byte and multi-language types; the
     * logical ones are listed (MPI_LOR would let the floating-point types in,
     * which Ferry's logical ops accept as MPICH's do). MPI_CHAR as MPICH. */
    int logical = type == MPI_C_BOOL || type == MPI_CXX_BOOL || type == MPI_LOGICAL;
    if (w && dt && type != MPI_CHAR && !logical &&
        (!dt->predefined || ferry_op_unit(ferry_op_get(MPI_BOR), dt, 0, &unit, &per)))
        return win_err(w, MPI_ERR_TYPE, "MPI_Compare_and_swap",
                       "the datatype must be a predefined integer, logical, byte or multi-language type");
    if (!cbuf)
        cbuf = "";
    return do_acc(obuf, 1, type, rbuf, 1, type, cbuf, rank, disp, 1, type, MPI_OP_NULL, win, 1,
                  "MPI_Compare_and_swap");
}

/* Request-based forms: the operation is done when the call returns. */
static int done_request(int rc, MPI_Win win, MPI_Request *req, const char *fn)
{
    if (rc)
        return rc;
    struct ferry_win *w = ferry_win_get(win);
    if (!req)
        return win_err(w, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    struct ferry_request *r = ferry_request_new(FERRY_REQ_SEND);
    ferry_request_setup(r, NULL, 0, ferry_datatype_get(MPI_BYTE), w->comm, MPI_PROC_NULL, 0, w->comm->ctx,
                        FERRY_MODE_STANDARD);
    ferry_request_done_now(r);
    *req = r->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Rput = PMPI_Rput
int PMPI_Rput(const void *obuf, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
              MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
    FERRY_API_ENTER();
    return done_request(do_put(obuf, ocount, otype, rank, disp, tcount, ttype, win, "MPI_Rput"), win, req,
                        "MPI_Rput");
}

#pragma weak MPI_Rget = PMPI_Rget
int PMPI_Rget(void *obuf, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype,
              MPI_Win win, MPI_Request *req)
{
    FERRY_API_ENTER();
    return done_request(do_get(obuf, ocount, otype, rank, disp, tcount, ttype, win, "MPI_Rget"), win, req,
                        "MPI_Rget");
}

#pragma weak MPI_Raccumulate = PMPI_Raccumulate
int PMPI_Raccumulate(const void *obuf, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
                     MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    FERRY_API_ENTER();
    return done_request(do_acc(obuf, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, NULL, rank, disp, tcount, ttype, op,
                               win, 0, "MPI_Raccumulate"),
                        win, req, "MPI_Raccumulate");
}

#pragma weak MPI_Rget_accumulate = PMPI_Rget_accumulate
int PMPI_Rget_accumulate(const void *obuf, int ocount, MPI_Datatype otype, void *rbuf, int rcount,
                         MPI_Datatype rtype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                         MPI_Win win, MPI_Request *req)
{
    FERRY_API_ENTER();
    return done_request(do_acc(obuf, ocount, otype, rbuf, rcount, rtype, NULL, rank, disp, tcount, ttype, op, win, 1,
                               "MPI_Rget_accumulate"),
                        win, req, "MPI_Rget_accumulate");
}

/* ---- synchronization ------------------------------------------------------------- */

#pragma weak MPI_Win_fence = PMPI_Win_fence
int PMPI_Win_fence(int assert, MPI_Win win)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_fence");
    if (rc)
        return rc;
    if (w->lock_all || w->nstart || w->npost)
        return win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_fence", "a lock or PSCW epoch is open");
    w->fence_open = !(assert & MPI_MODE_NOSUCCEED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return PMPI_Barrier(w->dup);
}

#pragma weak MPI_Win_lock = PMPI_Win_lock
int PMPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Win_lock";
    struct ferry_win *w;
    int rc = check_win(win, &w, fn);
    if (rc)
        return rc;
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return win_err(w, MPI_ERR_LOCKTYPE, fn, "invalid lock type %d", type);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return win_err(w, MPI_ERR_RANK, fn, "invalid target rank %d (window has %d ranks)", rank, w->size);
    if (w->lock[rank] || w->lock_all)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "rank %d is already locked by this process", rank);
    if (w->nstart)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "an access epoch (MPI_Win_start) is open");
    w->fence_open = 0;   /* a fence that opened no epoch yet gives way to the lock */
    if (assert & MPI_MODE_NOCHECK) {
        w->lock[rank] = type | FERRY_WIN_LOCK_NOCHECK;
        return MPI_SUCCESS;
    }
    ferry_win_lock_acquire(w, rank, type == MPI_LOCK_EXCLUSIVE);
    w->lock[rank] = type;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_unlock = PMPI_Win_unlock
int PMPI_Win_unlock(int rank, MPI_Win win)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Win_unlock";
    struct ferry_win *w;
    int rc = check_win(win, &w, fn);
    if (rc)
        return rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return win_err(w, MPI_ERR_RANK, fn, "invalid target rank %d (window has %d ranks)", rank, w->size);
    if (!w->lock[rank])
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "rank %d is not locked by this process", rank);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!(w->lock[rank] & FERRY_WIN_LOCK_NOCHECK))
        ferry_win_lock_release(w, rank, w->lock[rank] == MPI_LOCK_EXCLUSIVE);
    w->lock[rank] = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_lock_all = PMPI_Win_lock_all
int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_lock_all");
    if (rc)
        return rc;
    if (w->lock_all)
        return win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", "MPI_Win_lock_all already called");
    for (int i = 0; i < w->size; i++)
        if (w->lock[i])
            return win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", "rank %d is locked by this process", i);
    if (w->nstart)
        return win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", "an access epoch (MPI_Win_start) is open");
    w->fence_open = 0;
    if (assert & MPI_MODE_NOCHECK) {
        w->lock_all = 2;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < w->size; i++)
        ferry_win_lock_acquire(w, i, 0);
    w->lock_all = 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_unlock_all = PMPI_Win_unlock_all
int PMPI_Win_unlock_all(MPI_Win win)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_unlock_all");
    if (rc)
        return rc;
    if (!w->lock_all)
        return win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all", "no MPI_Win_lock_all epoch is open");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (w->lock_all == 1)
        for (int i = 0; i < w->size; i++)
            ferry_win_lock_release(w, i, 0);
    w->lock_all = 0;
    return MPI_SUCCESS;
}

/* Operations complete when their call returns: flushes order memory only. */
static int flush(MPI_Win win, int rank, int one, const char *fn)
{
    struct ferry_win *w;
    int rc = check_win(win, &w, fn);
    if (rc)
        return rc;
    if (one && rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return win_err(w, MPI_ERR_RANK, fn, "invalid target rank %d (window has %d ranks)", rank, w->size);
    int open = w->lock_all;
    if (one)
        open |= rank == MPI_PROC_NULL || w->lock[rank];
    else
        for (int i = 0; i < w->size; i++)
            open |= w->lock[i] != 0;
    if (!open)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "no passive-target epoch is open");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_flush = PMPI_Win_flush
int PMPI_Win_flush(int rank, MPI_Win win)
{
    FERRY_API_ENTER();
    return flush(win, rank, 1, "MPI_Win_flush");
}

#pragma weak MPI_Win_flush_local = PMPI_Win_flush_local
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    FERRY_API_ENTER();
    return flush(win, rank, 1, "MPI_Win_flush_local");
}

#pragma weak MPI_Win_flush_all = PMPI_Win_flush_all
int PMPI_Win_flush_all(MPI_Win win)
{
    FERRY_API_ENTER();
    return flush(win, 0, 0, "MPI_Win_flush_all");
}

#pragma weak MPI_Win_flush_local_all = PMPI_Win_flush_local_all
int PMPI_Win_flush_local_all(MPI_Win win)
{
    FERRY_API_ENTER();
    return flush(win, 0, 0, "MPI_Win_flush_local_all");
}

#pragma weak MPI_Win_sync = PMPI_Win_sync
int PMPI_Win_sync(MPI_Win win)
{
    FERRY_API_ENTER();
    struct ferry_win *w;
    int rc = check_win(win, &w, "MPI_Win_sync");
    if (rc)
        return rc;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

/* Window ranks of group's members (malloc'd), or MPI_ERR_GROUP. */
static int group_ranks(struct ferry_win *w, MPI_Group group, int **out, int *n, const char *fn)
{
    struct ferry_group *g = ferry_group_get(group);
    if (!g)
        return win_err(w, MPI_ERR_GROUP, fn, "invalid group handle 0x%x", (unsigned)group);
    *n = g->size;
    *out = ferry_xmalloc((size_t)(g->size + 1) * sizeof **out);
    for (int i = 0; i < g->size; i++) {
        int r = ferry_group_rank_of(w->comm->group, g->world[i]);
        if (r == MPI_UNDEFINED) {
            free(*out);
            *out = NULL;
            return win_err(w, MPI_ERR_GROUP, fn, "group member %d is not in the window", i);
        }
        (*out)[i] = r;
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_post = PMPI_Win_post
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    FERRY_API_ENTER();
    (void)assert;
    const char *fn = "MPI_Win_post";
    struct ferry_win *w;
    int rc = check_win(win, &w, fn);
    if (rc)
        return rc;
    if (w->post_grp)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "an exposure epoch is already open");
    if ((rc = group_ranks(w, group, &w->post_grp, &w->npost, fn)))
        return rc;
    memset(w->post_got, 0, (size_t)w->size);
    w->post_done = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 0; i < w->npost; i++)
        PMPI_Send(NULL, 0, MPI_BYTE, w->post_grp[i], TAG_POST, w->dup);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_start = PMPI_Win_start
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    FERRY_API_ENTER();
    (void)assert;
    const char *fn = "MPI_Win_start";
    struct ferry_win *w;
    int rc = check_win(win, &w, fn);
    if (rc)
        return rc;
    if (w->start_grp)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open");
    if ((rc = group_ranks(w, group, &w->start_grp, &w->nstart, fn)))
        return rc;
    w->fence_open = 0;
    for (int i = 0; i < w->nstart; i++)
        PMPI_Recv(NULL, 0, MPI_BYTE, w->start_grp[i], TAG_POST, w->dup, MPI_STATUS_IGNORE);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_complete = PMPI_Win_complete
int PMPI_Win_complete(MPI_Win win)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Win_complete";
    struct ferry_win *w;
    int rc = check_win(win, &w, fn);
    if (rc)
        return rc;
    if (!w->start_grp)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "no access epoch is open (MPI_Win_start)");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 0; i < w->nstart; i++)
        PMPI_Send(NULL, 0, MPI_BYTE, w->start_grp[i], TAG_DONE, w->dup);
    free(w->start_grp);
    w->start_grp = NULL;
    w->nstart = 0;
    return MPI_SUCCESS;
}

static void end_exposure(struct ferry_win *w)
{
    free(w->post_grp);
    w->post_grp = NULL;
    w->npost = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#pragma weak MPI_Win_wait = PMPI_Win_wait
int PMPI_Win_wait(MPI_Win win)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Win_wait";
    struct ferry_win *w;
    int rc = check_win(win, &w, fn);
    if (rc)
        return rc;
    if (!w->post_grp)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "no exposure epoch is open (MPI_Win_post)");
    for (int i = 0; i < w->npost; i++)
        if (!w->post_got[w->post_grp[i]])
            PMPI_Recv(NULL, 0, MPI_BYTE, w->post_grp[i], TAG_DONE, w->dup, MPI_STATUS_IGNORE);
    end_exposure(w);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_test = PMPI_Win_test
int PMPI_Win_test(MPI_Win win, int *flag)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Win_test";
    struct ferry_win *w;
    int rc = check_win(win, &w, fn);
    if (rc || (rc = check_out(flag, "flag", fn)))
        return rc;
    if (!w->post_grp)
        return win_err(w, MPI_ERR_RMA_SYNC, fn, "no exposure epoch is open (MPI_Win_post)");
    int all = 1;
    for (int i = 0; i < w->npost; i++) {
        int r = w->post_grp[i];
        if (w->post_got[r])
            continue;
        int f = 0;
        PMPI_Iprobe(r, TAG_DONE, w->dup, &f, MPI_STATUS_IGNORE);
        if (f) {
            PMPI_Recv(NULL, 0, MPI_BYTE, r, TAG_DONE, w->dup, MPI_STATUS_IGNORE);
            w->post_got[r] = 1;
        } else {
            all = 0;
        }
    }
    *flag = all;
    if (all)
        end_exposure(w);
    return MPI_SUCCESS;
}

/* ---- MPI-4 large-count forms ------------------------------------------------------ */

static int disp_unit_int(MPI_Aint du, MPI_Comm comm, const char *fn)
{
    if (du <= INT_MAX)
        return MPI_SUCCESS;
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, fn);
    return rc ? rc : ferry_error(c, MPI_ERR_DISP, fn, "displacement unit %lld is above INT_MAX", (long long)du);
}

#pragma weak MPI_Win_create_c = PMPI_Win_create_c
int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    FERRY_API_ENTER();
    int rc = disp_unit_int(disp_unit, comm, "MPI_Win_create_c");
    return rc ? rc
              : win_new(base, size, (int)disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE, NULL, win, "MPI_Win_create_c");
}

#pragma weak MPI_Win_allocate_c = PMPI_Win_allocate_c
int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    FERRY_API_ENTER();
    int rc = disp_unit_int(disp_unit, comm, "MPI_Win_allocate_c");
    return rc ? rc
              : win_new(NULL, size, (int)disp_unit, info, comm, MPI_WIN_FLAVOR_ALLOCATE, baseptr, win,
                        "MPI_Win_allocate_c");
}

#pragma weak MPI_Win_allocate_shared_c = PMPI_Win_allocate_shared_c
int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                               MPI_Win *win)
{
    FERRY_API_ENTER();
    int rc = disp_unit_int(disp_unit, comm, "MPI_Win_allocate_shared_c");
    return rc ? rc
              : win_new(NULL, size, (int)disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, baseptr, win,
                        "MPI_Win_allocate_shared_c");
}

#pragma weak MPI_Win_shared_query_c = PMPI_Win_shared_query_c
int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    FERRY_API_ENTER();
    int du = 0;
    int rc = PMPI_Win_shared_query(win, rank, size, disp_unit ? &du : NULL, baseptr);
    if (!rc)
        *disp_unit = du;
    return rc;
}

#pragma weak MPI_Put_c = PMPI_Put_c
int PMPI_Put_c(const void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp, MPI_Count tcount,
               MPI_Datatype ttype, MPI_Win win)
{
    FERRY_API_ENTER();
    return do_put(obuf, ocount, otype, rank, disp, tcount, ttype, win, "MPI_Put_c");
}

#pragma weak MPI_Get_c = PMPI_Get_c
int PMPI_Get_c(void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp, MPI_Count tcount,
               MPI_Datatype ttype, MPI_Win win)
{
    FERRY_API_ENTER();
    return do_get(obuf, ocount, otype, rank, disp, tcount, ttype, win, "MPI_Get_c");
}

#pragma weak MPI_Accumulate_c = PMPI_Accumulate_c
int PMPI_Accumulate_c(const void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                      MPI_Count tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    FERRY_API_ENTER();
    return do_acc(obuf, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, NULL, rank, disp, tcount, ttype, op, win, 0,
                  "MPI_Accumulate_c");
}

#pragma weak MPI_Get_accumulate_c = PMPI_Get_accumulate_c
int PMPI_Get_accumulate_c(const void *obuf, MPI_Count ocount, MPI_Datatype otype, void *rbuf, MPI_Count rcount,
                          MPI_Datatype rtype, int rank, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                          MPI_Op op, MPI_Win win)
{
    FERRY_API_ENTER();
    return do_acc(obuf, ocount, otype, rbuf, rcount, rtype, NULL, rank, disp, tcount, ttype, op, win, 1,
                  "MPI_Get_accumulate_c");
}

#pragma weak MPI_Rput_c = PMPI_Rput_c
int PMPI_Rput_c(const void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp, MPI_Count tcount,
                MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
    FERRY_API_ENTER();
    return done_request(do_put(obuf, ocount, otype, rank, disp, tcount, ttype, win, "MPI_Rput_c"), win, req,
                        "MPI_Rput_c");
}

#pragma weak MPI_Rget_c = PMPI_Rget_c
int PMPI_Rget_c(void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp, MPI_Count tcount,
                MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
    FERRY_API_ENTER();
    return done_request(do_get(obuf, ocount, otype, rank, disp, tcount, ttype, win, "MPI_Rget_c"), win, req,
                        "MPI_Rget_c");
}

#pragma weak MPI_Raccumulate_c = PMPI_Raccumulate_c
int PMPI_Raccumulate_c(const void *obuf, MPI_Count ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                       MPI_Count tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    FERRY_API_ENTER();
    return done_request(do_acc(obuf, ocount, otype, NULL, 0, MPI_DATATYPE_NULL, NULL, rank, disp, tcount, ttype, op,
                               win, 0, "MPI_Raccumulate_c"),
                        win, req, "MPI_Raccumulate_c");
}

#pragma weak MPI_Rget_accumulate_c = PMPI_Rget_accumulate_c
int PMPI_Rget_accumulate_c(const void *obuf, MPI_Count ocount, MPI_Datatype otype, void *rbuf, MPI_Count rcount,
                           MPI_Datatype rtype, int rank, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                           MPI_Op op, MPI_Win win, MPI_Request *req)
{
    FERRY_API_ENTER();
    return done_request(do_acc(obuf, ocount, otype, rbuf, rcount, rtype, NULL, rank, disp, tcount, ttype, op, win, 1,
                               "MPI_Rget_accumulate_c"),
                        win, req, "MPI_Rget_accumulate_c");
}
