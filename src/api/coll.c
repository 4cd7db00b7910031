/* Collective entry points: blocking and nonblocking forms of every MPI-3.1
 * collective (MPI_Barrier itself lives in comm.c and calls
 * ferry_coll_barrier) and the neighborhood collectives, each with its MPI-4
 * large-count form (_c) beside it. Each family shares one function that
 * checks the arguments that are significant on this rank, fills a
 * ferry_coll_args and hands it to coll/ (coll/coll.h), which runs it or
 * starts it.
 *
 * Large counts: coll/ counts elements in size_t, so the scalar counts of the
 * _c forms go through as they are (any size, blocking or not). The v and w
 * forms' algorithms take int count and displacement arrays: their _c forms
 * pass int copies, and fail with MPI_ERR_COUNT when a value does not fit an
 * int; so does Reduce_scatter_block_c above INT_MAX (its algorithms keep
 * per-rank block counts as ints). */
#include "api/check.h"
#include "coll/coll.h"
#include "core/op.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- checks ------------------------------------------------------------------- */

/* (buf, count, type) of one side of a collective. */
static int chk_side(struct ferry_comm *c, const void *buf, MPI_Count count, MPI_Datatype type,
                    struct ferry_datatype **dt, const char *fn)
{
    int rc;
    if ((rc = check_count(c, count, fn)) || (rc = check_type(c, type, dt, fn)) || (rc = check_bytes(c, count, *dt, fn)))
        return rc;
    if (buf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    return check_buf(c, buf, count, *dt, fn);
}

/* Counts (and displacements) arrays of a v form, n entries. */
static int chk_counts(struct ferry_comm *c, const int *counts, const void *displs, int n, const char *fn)
{
    if (n > 0 && (!counts || !displs))
        return ferry_error(c, MPI_ERR_ARG, fn, "counts or displacements array is NULL");
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return ferry_error(c, MPI_ERR_COUNT, fn, "negative count %d for rank %d", counts[i], i);
    return MPI_SUCCESS;
}

/* An array of n datatypes (w forms): looked up into a malloc'ed array. A
 * type whose count is 0 is not looked at. */
static int chk_types(struct ferry_comm *c, const MPI_Datatype *types, const int *counts, int n,
                     struct ferry_datatype ***out, const char *fn)
{
    *out = NULL;
    if (n > 0 && !types)
        return ferry_error(c, MPI_ERR_ARG, fn, "datatype array is NULL");
    struct ferry_datatype **dts = ferry_xmalloc((size_t)(n ? n : 1) * sizeof *dts);
    for (int i = 0; i < n; i++) {
        dts[i] = ferry_datatype_get(types[i]);
        if (!dts[i]) {
            if (counts[i] == 0) {
                dts[i] = ferry_datatype_get(MPI_BYTE);
                continue;
            }
            free(dts);
            return ferry_error(c, MPI_ERR_TYPE, fn, "invalid datatype handle 0x%x for rank %d", (unsigned)types[i], i);
        }
    }
    *out = dts;
    return MPI_SUCCESS;
}

/* Root of a rooted collective: a rank of c; on an intercommunicator also
 * MPI_ROOT or MPI_PROC_NULL. */
static int chk_root(struct ferry_comm *c, int root, const char *fn)
{
    int n = ferry_comm_peer_count(c);
    if ((root >= 0 && root < n) || (c->remote && (root == MPI_ROOT || root == MPI_PROC_NULL)))
        return MPI_SUCCESS;
    return ferry_error(c, MPI_ERR_ROOT, fn, "invalid root %d (communicator has %d ranks)", root, n);
}

static int chk_op(struct ferry_comm *c, MPI_Op h, struct ferry_datatype *dt, struct ferry_op **op, const char *fn)
{
    struct ferry_datatype *unit;
    size_t per;
    *op = ferry_op_get(h);
    if (!*op)
        return ferry_error(c, MPI_ERR_OP, fn, h == MPI_OP_NULL ? "op is MPI_OP_NULL" : "invalid op handle 0x%x",
                           (unsigned)h);
    if (ferry_op_unit(*op, dt, 0, &unit, &per))
        return ferry_error(c, MPI_ERR_OP, fn, "op 0x%x is not defined for datatype %s", (unsigned)h,
                           dt->name ? dt->name : "(derived)");
    return MPI_SUCCESS;
}

static int chk_intra(struct ferry_comm *c, const char *fn)
{
    if (c->remote)
        return ferry_error(c, MPI_ERR_COMM, fn, "not defined on an intercommunicator");
    return MPI_SUCCESS;
}

static int chk_req(struct ferry_comm *c, int nb, MPI_Request *req, const char *fn)
{
    if (nb && !req)
        return ferry_error(c, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    return MPI_SUCCESS;
}

/* sendbuf == recvbuf is an error (MPI_IN_PLACE is the way to say it). */
static int chk_alias(struct ferry_comm *c, const void *sbuf, const void *rbuf, MPI_Count count, const char *fn)
{
    if (sbuf == rbuf && sbuf && sbuf != MPI_IN_PLACE && count > 0)
        return ferry_error(c, MPI_ERR_BUFFER, fn, "send and receive buffers are the same (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

/* The bytes [*lo, *hi) that elements [first, first + count) of (buf, dt)
 * touch; count > 0. */
static void span(const void *buf, MPI_Aint first, MPI_Aint count, const struct ferry_datatype *dt, uintptr_t *lo,
                 uintptr_t *hi)
{
    intptr_t a = (intptr_t)first * dt->extent, b = (intptr_t)(first + count - 1) * dt->extent;
    intptr_t from = a < b ? a : b, to = a < b ? b : a;
    *lo = (uintptr_t)buf + (uintptr_t)(from + dt->true_lb);
    *hi = (uintptr_t)buf + (uintptr_t)(to + dt->true_lb + dt->true_extent);
}

/* Allgather(v): this rank's send buffer must not overlap the receive buffer
 * (MPI_IN_PLACE is the way to say it; MPICH checks the same). */
static int chk_allgather_overlap(struct ferry_comm *c, const struct ferry_coll_args *a, int n, int v, const char *fn)
{
    if (a->sbuf == MPI_IN_PLACE || !a->scount || !a->sdt->size || !a->rdt->size)
        return MPI_SUCCESS;
    uintptr_t slo, shi, rlo = UINTPTR_MAX, rhi = 0, lo, hi;
    span(a->sbuf, 0, (MPI_Aint)a->scount, a->sdt, &slo, &shi);
    for (int i = 0; i < (v ? n : 1); i++) {
        MPI_Aint first = v ? a->rdispls[i] : 0, cnt = v ? a->rcounts[i] : (MPI_Aint)a->rcount * n;
        if (cnt <= 0)
            continue;
        span(a->rbuf, first, cnt, a->rdt, &lo, &hi);
        rlo = lo < rlo ? lo : rlo;
        rhi = hi > rhi ? hi : rhi;
    }
    if (slo < rhi && rlo < shi)
        return ferry_error(c, MPI_ERR_BUFFER, fn, "the send buffer overlaps the receive buffer (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

/* A large-count (_c) argument the collective cannot take yet. */
static int too_large(struct ferry_comm *c, const char *what, MPI_Count v, const char *fn)
{
    return ferry_error(c, MPI_ERR_COUNT, fn,
                       "%s %lld: counts and displacements above INT_MAX are not supported by %s yet", what,
                       (long long)v, fn);
}

/* An int copy of n values of a (*out stays NULL when a is NULL or n is 0):
 * the v and w forms' arrays for the algorithms. */
static int narrow(struct ferry_comm *c, const MPI_Count *a, int n, int **out, const char *what, const char *fn)
{
    *out = NULL;
    if (!a || n <= 0)
        return MPI_SUCCESS;
    int *v = ferry_xmalloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++) {
        if (a[i] > INT_MAX || a[i] < INT_MIN) {
            char name[64];
            snprintf(name, sizeof name, "%s[%d]", what, i);
            free(v);
            return too_large(c, name, a[i], fn);
        }
        v[i] = (int)a[i];
    }
    *out = v;
    return MPI_SUCCESS;
}

/* Run (nb == 0) or start the collective. */
static int go(enum ferry_coll_kind kind, struct ferry_comm *c, struct ferry_coll_args *a, int nb, MPI_Request *req,
              const char *fn)
{
    struct ferry_request *r = NULL;
    int rc = ferry_coll(kind, c, a, nb ? &r : NULL);
    if (rc)
        return ferry_error(c, rc, fn, "%s failed: %s", ferry_coll_name(kind), ferry_error_class_string(rc));
    if (nb)
        *req = r->handle;
    return MPI_SUCCESS;
}

/* Common prologue: initialized, valid communicator, request pointer. */
#define PROLOGUE(fn)                                                                                              \
    struct ferry_comm *c;                                                                                         \
    struct ferry_coll_args a = {0};                                                                               \
    int rc;                                                                                                       \
    if ((rc = check_comm(comm, &c, fn)) || (rc = chk_req(c, nb, req, fn)))                                        \
        return rc

/* ---- barrier / bcast ------------------------------------------------------------ */

static int ibarrier(MPI_Comm comm, int nb, MPI_Request *req, const char *fn)
{
    PROLOGUE(fn);
    return go(FERRY_COLL_BARRIER, c, &a, nb, req, fn);
}

#pragma weak MPI_Ibarrier = PMPI_Ibarrier
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return ibarrier(comm, 1, request, "MPI_Ibarrier");
}

static int bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm, int nb, MPI_Request *req,
                 const char *fn)
{
    PROLOGUE(fn);
    if ((rc = chk_root(c, root, fn)))
        return rc;
    if (root != MPI_PROC_NULL && (rc = chk_side(c, buf, count, type, &a.rdt, fn)))
        return rc;
    a.rbuf = buf, a.rcount = (size_t)count, a.root = root;
    return go(FERRY_COLL_BCAST, c, &a, nb, req, fn);
}

#pragma weak MPI_Bcast = PMPI_Bcast
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return bcast(buffer, count, datatype, root, comm, 0, NULL, "MPI_Bcast");
}

#pragma weak MPI_Bcast_c = PMPI_Bcast_c
int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return bcast(buffer, count, datatype, root, comm, 0, NULL, "MPI_Bcast_c");
}

#pragma weak MPI_Ibcast = PMPI_Ibcast
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return bcast(buffer, count, datatype, root, comm, 1, request, "MPI_Ibcast");
}

#pragma weak MPI_Ibcast_c = PMPI_Ibcast_c
int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return bcast(buffer, count, datatype, root, comm, 1, request, "MPI_Ibcast_c");
}

/* ---- gather / scatter -------------------------------------------------------------- */

/* Which sides of a rooted collective matter on this rank. `send_in_place`:
 * the root may pass MPI_IN_PLACE as its send buffer (gather) or receive
 * buffer (scatter). */
static void rooted_sides(struct ferry_comm *c, int root, int *at_root, int *contributes)
{
    if (c->remote) {
        *at_root = root == MPI_ROOT;
        *contributes = root >= 0;
    } else {
        *at_root = c->rank == root;
        *contributes = 1;
    }
}

static int gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, int v,
                  const int *rcounts, const int *displs, MPI_Datatype rtype, int root, MPI_Comm comm, int nb,
                  MPI_Request *req, const char *fn)
{
    PROLOGUE(fn);
    int at_root, sends;
    if ((rc = chk_root(c, root, fn)))
        return rc;
    rooted_sides(c, root, &at_root, &sends);
    if (sends && !(at_root && sbuf == MPI_IN_PLACE && !c->remote)) {
        if (sbuf == MPI_IN_PLACE)
            return ferry_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only allowed at the root");
        if ((rc = chk_side(c, sbuf, scount, stype, &a.sdt, fn)))
            return rc;
    }
    if (at_root) {
        if (v && (rc = chk_counts(c, rcounts, displs, ferry_comm_peer_count(c), fn)))
            return rc;
        if ((rc = chk_side(c, rbuf, v ? 0 : rcount, rtype, &a.rdt, fn)))
            return rc;
        if (!c->remote && (rc = chk_alias(c, sbuf, rbuf, scount, fn)))
            return rc;
    }
    a.sbuf = sbuf, a.scount = (size_t)scount, a.rbuf = rbuf, a.rcount = (size_t)(rcount > 0 ? rcount : 0);
    a.rcounts = rcounts, a.rdispls = displs, a.root = root;
    return go(v ? FERRY_COLL_GATHERV : FERRY_COLL_GATHER, c, &a, nb, req, fn);
}

/* Gatherv_c, Igatherv_c: the root's counts and displacements as ints. */
static int gatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts,
                     const MPI_Aint *displs, MPI_Datatype rtype, int root, MPI_Comm comm, int nb, MPI_Request *req,
                     const char *fn)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, fn), at_root, sends, *ic = NULL, *id = NULL;
    if (rc)
        return rc;
    rooted_sides(c, root, &at_root, &sends);
    int n = at_root ? ferry_comm_peer_count(c) : 0;
    if (!(rc = narrow(c, rcounts, n, &ic, "recvcounts", fn)) && !(rc = narrow(c, displs, n, &id, "displs", fn)))
        rc = gather(sbuf, scount, stype, rbuf, 0, 1, ic, id, rtype, root, comm, nb, req, fn);
    free(ic);
    free(id);
    return rc;
}

#pragma weak MPI_Gather = PMPI_Gather
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, root, comm, 0, NULL,
                  "MPI_Gather");
}

#pragma weak MPI_Gather_c = PMPI_Gather_c
int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, root, comm, 0, NULL,
                  "MPI_Gather_c");
}

#pragma weak MPI_Igather = PMPI_Igather
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, root, comm, 1, request,
                  "MPI_Igather");
}

#pragma weak MPI_Igather_c = PMPI_Igather_c
int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, root, comm, 1, request,
                  "MPI_Igather_c");
}

#pragma weak MPI_Gatherv = PMPI_Gatherv
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, 1, recvcounts, displs,
                  recvtype, root, comm, 0, NULL, "MPI_Gatherv");
}

#pragma weak MPI_Gatherv_c = PMPI_Gatherv_c
int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm)
{
    FERRY_API_ENTER();
    return gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, 0, NULL,
                     "MPI_Gatherv_c");
}

#pragma weak MPI_Igatherv = PMPI_Igatherv
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, 1, recvcounts, displs,
                  recvtype, root, comm, 1, request, "MPI_Igatherv");
}

#pragma weak MPI_Igatherv_c = PMPI_Igatherv_c
int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                    MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, 1, request,
                     "MPI_Igatherv_c");
}

static int scatter(const void *sbuf, MPI_Count scount, int v, const int *scounts, const int *displs,
                   MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                   int nb, MPI_Request *req, const char *fn)
{
    PROLOGUE(fn);
    int at_root, recvs;
    if ((rc = chk_root(c, root, fn)))
        return rc;
    rooted_sides(c, root, &at_root, &recvs);
    if (at_root) {
        if (v && (rc = chk_counts(c, scounts, displs, ferry_comm_peer_count(c), fn)))
            return rc;
        if ((rc = chk_side(c, sbuf, v ? 0 : scount, stype, &a.sdt, fn)))
            return rc;
    }
    if (recvs && !(at_root && rbuf == MPI_IN_PLACE && !c->remote)) {
        if (rbuf == MPI_IN_PLACE)
            return ferry_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only allowed at the root");
        if ((rc = chk_side(c, rbuf, rcount, rtype, &a.rdt, fn)))
            return rc;
    }
    if (at_root && !c->remote && (rc = chk_alias(c, sbuf, rbuf, rcount, fn)))
        return rc;
    a.sbuf = sbuf, a.scount = (size_t)(scount > 0 ? scount : 0), a.rbuf = rbuf, a.rcount = (size_t)rcount;
    a.scounts = scounts, a.sdispls = displs, a.root = root;
    return go(v ? FERRY_COLL_SCATTERV : FERRY_COLL_SCATTER, c, &a, nb, req, fn);
}

/* Scatterv_c, Iscatterv_c: the root's counts and displacements as ints. */
static int scatterv_c(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs, MPI_Datatype stype,
                      void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, int nb,
                      MPI_Request *req, const char *fn)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, fn), at_root, recvs, *ic = NULL, *id = NULL;
    if (rc)
        return rc;
    rooted_sides(c, root, &at_root, &recvs);
    int n = at_root ? ferry_comm_peer_count(c) : 0;
    if (!(rc = narrow(c, scounts, n, &ic, "sendcounts", fn)) && !(rc = narrow(c, displs, n, &id, "displs", fn)))
        rc = scatter(sbuf, 0, 1, ic, id, stype, rbuf, rcount, rtype, root, comm, nb, req, fn);
    free(ic);
    free(id);
    return rc;
}

#pragma weak MPI_Scatter = PMPI_Scatter
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return scatter(sendbuf, sendcount, 0, NULL, NULL, sendtype, recvbuf, recvcount, recvtype, root, comm, 0, NULL,
                   "MPI_Scatter");
}

#pragma weak MPI_Scatter_c = PMPI_Scatter_c
int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return scatter(sendbuf, sendcount, 0, NULL, NULL, sendtype, recvbuf, recvcount, recvtype, root, comm, 0, NULL,
                   "MPI_Scatter_c");
}

#pragma weak MPI_Iscatter = PMPI_Iscatter
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return scatter(sendbuf, sendcount, 0, NULL, NULL, sendtype, recvbuf, recvcount, recvtype, root, comm, 1, request,
                   "MPI_Iscatter");
}

#pragma weak MPI_Iscatter_c = PMPI_Iscatter_c
int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return scatter(sendbuf, sendcount, 0, NULL, NULL, sendtype, recvbuf, recvcount, recvtype, root, comm, 1, request,
                   "MPI_Iscatter_c");
}

#pragma weak MPI_Scatterv = PMPI_Scatterv
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return scatter(sendbuf, 0, 1, sendcounts, displs, sendtype, recvbuf, recvcount,
                   recvtype, root, comm, 0, NULL, "MPI_Scatterv");
}

#pragma weak MPI_Scatterv_c = PMPI_Scatterv_c
int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, 0, NULL,
                      "MPI_Scatterv_c");
}

#pragma weak MPI_Iscatterv = PMPI_Iscatterv
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    FERRY_API_ENTER();
    return scatter(sendbuf, 0, 1, sendcounts, displs, sendtype, recvbuf, recvcount,
                   recvtype, root, comm, 1, request, "MPI_Iscatterv");
}

#pragma weak MPI_Iscatterv_c = PMPI_Iscatterv_c
int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request *request)
{
    FERRY_API_ENTER();
    return scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, 1, request,
                      "MPI_Iscatterv_c");
}

/* ---- allgather / alltoall --------------------------------------------------------- */

static int allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount, int v,
                     const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm, int nb,
                     MPI_Request *req, int neighbor, const char *fn)
{
    PROLOGUE(fn);
    int n = ferry_comm_peer_count(c);
    if (neighbor) {
        const int *in, *out;
        int outdeg;
        if ((rc = check_neighbors(c, &n, &in, &outdeg, &out, fn)))
            return rc;
    }
    if (sbuf == MPI_IN_PLACE && (neighbor || c->remote))
        return ferry_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
    if (sbuf != MPI_IN_PLACE && (rc = chk_side(c, sbuf, scount, stype, &a.sdt, fn)))
        return rc;
    if (v && (rc = chk_counts(c, rcounts, displs, n, fn)))
        return rc;
    if ((rc = chk_side(c, rbuf, v ? 0 : rcount, rtype, &a.rdt, fn)))
        return rc;
    a.sbuf = sbuf, a.scount = (size_t)(scount > 0 ? scount : 0), a.rbuf = rbuf, a.rcount = (size_t)rcount;
    a.rcounts = rcounts, a.rdispls = displs;
    if (!neighbor && !c->remote && (rc = chk_allgather_overlap(c, &a, n, v, fn)))
        return rc;
    enum ferry_coll_kind k = neighbor ? (v ? FERRY_COLL_NEIGHBOR_ALLGATHERV : FERRY_COLL_NEIGHBOR_ALLGATHER)
                                      : (v ? FERRY_COLL_ALLGATHERV : FERRY_COLL_ALLGATHER);
    return go(k, c, &a, nb, req, fn);
}

/* The receive side's peers of a (neighborhood) collective: every rank of
 * the (remote) group, or the in- and out-neighbors of a topology (0 when c
 * has none: the collective itself reports that). */
static void peers(struct ferry_comm *c, int neighbor, int *nin, int *nout)
{
    const int *in, *out;
    *nin = *nout = ferry_comm_peer_count(c);
    if (neighbor && ferry_topo_neighbors(c, nin, &in, nout, &out))
        *nin = *nout = 0;
}

/* (I)allgatherv_c, (I)neighbor_allgatherv_c: counts and displacements as ints. */
static int allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts,
                        const MPI_Aint *displs, MPI_Datatype rtype, MPI_Comm comm, int nb, MPI_Request *req,
                        int neighbor, const char *fn)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, fn), nin, nout, *ic = NULL, *id = NULL;
    if (rc)
        return rc;
    peers(c, neighbor, &nin, &nout);
    if (!(rc = narrow(c, rcounts, nin, &ic, "recvcounts", fn)) && !(rc = narrow(c, displs, nin, &id, "displs", fn)))
        rc = allgather(sbuf, scount, stype, rbuf, 0, 1, ic, id, rtype, comm, nb, req, neighbor, fn);
    free(ic);
    free(id);
    return rc;
}

#pragma weak MPI_Allgather = PMPI_Allgather
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, comm, 0, NULL, 0,
                     "MPI_Allgather");
}

#pragma weak MPI_Allgather_c = PMPI_Allgather_c
int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, comm, 0, NULL, 0,
                     "MPI_Allgather_c");
}

#pragma weak MPI_Iallgather = PMPI_Iallgather
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, comm, 1, request, 0,
                     "MPI_Iallgather");
}

#pragma weak MPI_Iallgather_c = PMPI_Iallgather_c
int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, comm, 1, request, 0,
                     "MPI_Iallgather_c");
}

#pragma weak MPI_Allgatherv = PMPI_Allgatherv
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, 1, recvcounts,
                     displs, recvtype, comm, 0, NULL, 0, "MPI_Allgatherv");
}

#pragma weak MPI_Allgatherv_c = PMPI_Allgatherv_c
int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, 0, NULL, 0,
                        "MPI_Allgatherv_c");
}

#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, 1, recvcounts,
                     displs, recvtype, comm, 1, request, 0, "MPI_Iallgatherv");
}

#pragma weak MPI_Iallgatherv_c = PMPI_Iallgatherv_c
int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request)
{
    FERRY_API_ENTER();
    return allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, 1, request, 0,
                        "MPI_Iallgatherv_c");
}

#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, comm, 0, NULL, 1,
                     "MPI_Neighbor_allgather");
}

#pragma weak MPI_Neighbor_allgather_c = PMPI_Neighbor_allgather_c
int PMPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, comm, 0, NULL, 1,
                     "MPI_Neighbor_allgather_c");
}

#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, comm, 1, request, 1,
                     "MPI_Ineighbor_allgather");
}

#pragma weak MPI_Ineighbor_allgather_c = PMPI_Ineighbor_allgather_c
int PMPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, 0, NULL, NULL, recvtype, comm, 1, request, 1,
                     "MPI_Ineighbor_allgather_c");
}

#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, 1, recvcounts,
                     displs, recvtype, comm, 0, NULL, 1, "MPI_Neighbor_allgatherv");
}

#pragma weak MPI_Neighbor_allgatherv_c = PMPI_Neighbor_allgatherv_c
int PMPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                               MPI_Comm comm)
{
    FERRY_API_ENTER();
    return allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, 0, NULL, 1,
                        "MPI_Neighbor_allgatherv_c");
}

#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request)
{
    FERRY_API_ENTER();
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, 1, recvcounts,
                     displs, recvtype, comm, 1, request, 1, "MPI_Ineighbor_allgatherv");
}

#pragma weak MPI_Ineighbor_allgatherv_c = PMPI_Ineighbor_allgatherv_c
int PMPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, 1, request, 1,
                        "MPI_Ineighbor_allgatherv_c");
}

/* Alltoall in its three shapes. kind: 0 plain, 1 v, 2 w (int byte
 * displacements), 3 neighbor w (MPI_Aint byte displacements). */
struct a2a {
    const void *sbuf;
    MPI_Count scount;
    const int *scounts, *sdispls;
    const MPI_Aint *sdispls_a;
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    void *rbuf;
    MPI_Count rcount;
    const int *rcounts, *rdispls;
    const MPI_Aint *rdispls_a;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
};

static int alltoall(const struct a2a *x, int shape, MPI_Comm comm, int nb, MPI_Request *req, int neighbor,
                    const char *fn)
{
    PROLOGUE(fn);
    int nin = ferry_comm_peer_count(c), nout = nin;
    struct ferry_datatype **sdts = NULL, **rdts = NULL;
    if (neighbor) {
        const int *in, *out;
        if ((rc = check_neighbors(c, &nin, &in, &nout, &out, fn)))
            return rc;
    }
    int in_place = x->sbuf == MPI_IN_PLACE;
    if (in_place && (neighbor || c->remote))
        return ferry_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
    if (!in_place && x->sbuf && x->sbuf == x->rbuf) {
        /* the same buffer both ways (MPI_IN_PLACE says that); all-zero
         * counts move nothing and are let through */
        int moves = shape == 0 ? x->scount > 0 : 0;
        for (int i = 0; shape != 0 && i < nout && !moves; i++)
            moves = x->scounts && x->scounts[i] > 0;
        if (moves && (rc = chk_alias(c, x->sbuf, x->rbuf, 1, fn)))
            return rc;
    }
    if (shape == 0) {
        if (!in_place && (rc = chk_side(c, x->sbuf, x->scount, x->stype, &a.sdt, fn)))
            return rc;
        if ((rc = chk_side(c, x->rbuf, x->rcount, x->rtype, &a.rdt, fn)))
            return rc;
    } else {
        const void *sd = shape == 3 ? (const void *)x->sdispls_a : (const void *)x->sdispls;
        const void *rd = shape == 3 ? (const void *)x->rdispls_a : (const void *)x->rdispls;
        if (!in_place && (rc = chk_counts(c, x->scounts, sd, nout, fn)))
            return rc;
        if ((rc = chk_counts(c, x->rcounts, rd, nin, fn)))
            return rc;
        if (shape == 1) {
            if (!in_place && (rc = chk_side(c, x->sbuf, 0, x->stype, &a.sdt, fn)))
                return rc;
            if ((rc = chk_side(c, x->rbuf, 0, x->rtype, &a.rdt, fn)))
                return rc;
        } else {
            if (!in_place && (rc = chk_types(c, x->stypes, x->scounts, nout, &sdts, fn)))
                return rc;
            if ((rc = chk_types(c, x->rtypes, x->rcounts, nin, &rdts, fn))) {
                free(sdts);
                return rc;
            }
        }
    }
    a.sbuf = x->sbuf, a.scount = (size_t)(x->scount > 0 ? x->scount : 0), a.rbuf = x->rbuf;
    a.rcount = (size_t)(x->rcount > 0 ? x->rcount : 0);
    a.scounts = x->scounts, a.sdispls = x->sdispls, a.rcounts = x->rcounts, a.rdispls = x->rdispls;
    a.sdispls_a = x->sdispls_a, a.rdispls_a = x->rdispls_a, a.sdts = sdts, a.rdts = rdts;
    static const enum ferry_coll_kind kinds[2][4] = {
        {FERRY_COLL_ALLTOALL, FERRY_COLL_ALLTOALLV, FERRY_COLL_ALLTOALLW, FERRY_COLL_ALLTOALLW},
        {FERRY_COLL_NEIGHBOR_ALLTOALL, FERRY_COLL_NEIGHBOR_ALLTOALLV, FERRY_COLL_NEIGHBOR_ALLTOALLW,
         FERRY_COLL_NEIGHBOR_ALLTOALLW},
    };
    rc = go(kinds[neighbor][shape], c, &a, nb, req, fn);
    free(sdts);   /* the schedule keeps the types themselves, not the array */
    free(rdts);
    return rc;
}

/* The large-count v and w forms of alltoall (shape 1, 2 or 3 as for
 * alltoall()): counts as ints, and displacements too but for neighbor
 * alltoallw, whose algorithm takes MPI_Aint ones. */
struct a2a_c {
    const void *sbuf;
    const MPI_Count *scounts;
    const MPI_Aint *sdispls;
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    void *rbuf;
    const MPI_Count *rcounts;
    const MPI_Aint *rdispls;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
};

static int alltoall_c(const struct a2a_c *w, int shape, MPI_Comm comm, int nb, MPI_Request *req, int neighbor,
                      const char *fn)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, fn), nin, nout;
    if (rc)
        return rc;
    peers(c, neighbor, &nin, &nout);
    if (w->sbuf == MPI_IN_PLACE)
        nout = 0;   /* the send arrays are ignored */
    int *sc = NULL, *sd = NULL, *rcs = NULL, *rd = NULL;
    struct a2a x = {.sbuf = w->sbuf, .stype = w->stype, .stypes = w->stypes, .rbuf = w->rbuf, .rtype = w->rtype,
                    .rtypes = w->rtypes};
    if (shape == 3) {
        x.sdispls_a = w->sdispls;
        x.rdispls_a = w->rdispls;
    } else if ((rc = narrow(c, w->sdispls, nout, &sd, "sdispls", fn)) ||
               (rc = narrow(c, w->rdispls, nin, &rd, "rdispls", fn))) {
        goto out;
    }
    if ((rc = narrow(c, w->scounts, nout, &sc, "sendcounts", fn)) ||
        (rc = narrow(c, w->rcounts, nin, &rcs, "recvcounts", fn)))
        goto out;
    x.scounts = sc, x.sdispls = sd, x.rcounts = rcs, x.rdispls = rd;
    rc = alltoall(&x, shape, comm, nb, req, neighbor, fn);
out:
    free(sc);
    free(sd);
    free(rcs);
    free(rd);
    return rc;
}

#pragma weak MPI_Alltoall = PMPI_Alltoall
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
                    .rtype = recvtype};
    return alltoall(&x, 0, comm, 0, NULL, 0, "MPI_Alltoall");
}

#pragma weak MPI_Alltoall_c = PMPI_Alltoall_c
int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
                    .rtype = recvtype};
    return alltoall(&x, 0, comm, 0, NULL, 0, "MPI_Alltoall_c");
}

#pragma weak MPI_Ialltoall = PMPI_Ialltoall
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
                    .rtype = recvtype};
    return alltoall(&x, 0, comm, 1, request, 0, "MPI_Ialltoall");
}

#pragma weak MPI_Ialltoall_c = PMPI_Ialltoall_c
int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
                    .rtype = recvtype};
    return alltoall(&x, 0, comm, 1, request, 0, "MPI_Ialltoall_c");
}

#pragma weak MPI_Alltoallv = PMPI_Alltoallv
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype, .rbuf = recvbuf,
                    .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype};
    return alltoall(&x, 1, comm, 0, NULL, 0, "MPI_Alltoallv");
}

#pragma weak MPI_Alltoallv_c = PMPI_Alltoallv_c
int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                     void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
                     MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a_c x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype};
    return alltoall_c(&x, 1, comm, 0, NULL, 0, "MPI_Alltoallv_c");
}

#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype, .rbuf = recvbuf,
                    .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype};
    return alltoall(&x, 1, comm, 1, request, 0, "MPI_Ialltoallv");
}

#pragma weak MPI_Ialltoallv_c = PMPI_Ialltoallv_c
int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a_c x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype};
    return alltoall_c(&x, 1, comm, 1, request, 0, "MPI_Ialltoallv_c");
}

#pragma weak MPI_Alltoallw = PMPI_Alltoallw
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stypes = sendtypes,
                    .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtypes = recvtypes};
    return alltoall(&x, 2, comm, 0, NULL, 0, "MPI_Alltoallw");
}

#pragma weak MPI_Alltoallw_c = PMPI_Alltoallw_c
int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a_c x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stypes = sendtypes,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtypes = recvtypes};
    return alltoall_c(&x, 2, comm, 0, NULL, 0, "MPI_Alltoallw_c");
}

#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stypes = sendtypes,
                    .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtypes = recvtypes};
    return alltoall(&x, 2, comm, 1, request, 0, "MPI_Ialltoallw");
}

#pragma weak MPI_Ialltoallw_c = PMPI_Ialltoallw_c
int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a_c x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stypes = sendtypes,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtypes = recvtypes};
    return alltoall_c(&x, 2, comm, 1, request, 0, "MPI_Ialltoallw_c");
}

#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
                    .rtype = recvtype};
    return alltoall(&x, 0, comm, 0, NULL, 1, "MPI_Neighbor_alltoall");
}

#pragma weak MPI_Neighbor_alltoall_c = PMPI_Neighbor_alltoall_c
int PMPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
                    .rtype = recvtype};
    return alltoall(&x, 0, comm, 0, NULL, 1, "MPI_Neighbor_alltoall_c");
}

#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
                    .rtype = recvtype};
    return alltoall(&x, 0, comm, 1, request, 1, "MPI_Ineighbor_alltoall");
}

#pragma weak MPI_Ineighbor_alltoall_c = PMPI_Ineighbor_alltoall_c
int PMPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
                    .rtype = recvtype};
    return alltoall(&x, 0, comm, 1, request, 1, "MPI_Ineighbor_alltoall_c");
}

#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype, .rbuf = recvbuf,
                    .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype};
    return alltoall(&x, 1, comm, 0, NULL, 1, "MPI_Neighbor_alltoallv");
}

#pragma weak MPI_Neighbor_alltoallv_c = PMPI_Neighbor_alltoallv_c
int PMPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a_c x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype};
    return alltoall_c(&x, 1, comm, 0, NULL, 1, "MPI_Neighbor_alltoallv_c");
}

#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype, .rbuf = recvbuf,
                    .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype};
    return alltoall(&x, 1, comm, 1, request, 1, "MPI_Ineighbor_alltoallv");
}

#pragma weak MPI_Ineighbor_alltoallv_c = PMPI_Ineighbor_alltoallv_c
int PMPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a_c x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype};
    return alltoall_c(&x, 1, comm, 1, request, 1, "MPI_Ineighbor_alltoallv_c");
}

#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls_a = sdispls, .stypes = sendtypes,
                    .rbuf = recvbuf, .rcounts = recvcounts, .rdispls_a = rdispls, .rtypes = recvtypes};
    return alltoall(&x, 3, comm, 0, NULL, 1, "MPI_Neighbor_alltoallw");
}

#pragma weak MPI_Neighbor_alltoallw_c = PMPI_Neighbor_alltoallw_c
int PMPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct a2a_c x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stypes = sendtypes,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtypes = recvtypes};
    return alltoall_c(&x, 3, comm, 0, NULL, 1, "MPI_Neighbor_alltoallw_c");
}

#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls_a = sdispls, .stypes = sendtypes,
                    .rbuf = recvbuf, .rcounts = recvcounts, .rdispls_a = rdispls, .rtypes = recvtypes};
    return alltoall(&x, 3, comm, 1, request, 1, "MPI_Ineighbor_alltoallw");
}

#pragma weak MPI_Ineighbor_alltoallw_c = PMPI_Ineighbor_alltoallw_c
int PMPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request *request)
{
    FERRY_API_ENTER();
    struct a2a_c x = {.sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stypes = sendtypes,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtypes = recvtypes};
    return alltoall_c(&x, 3, comm, 1, request, 1, "MPI_Ineighbor_alltoallw_c");
}

/* ---- reductions -------------------------------------------------------------------- */

/* Reduce, allreduce, scan, exscan, reduce_scatter(_block): the vector is
 * (recvbuf, count, type); sendbuf may be MPI_IN_PLACE where allowed. */
static int reduction(enum ferry_coll_kind kind, const void *sbuf, void *rbuf, MPI_Count count, const int *rcounts,
                     MPI_Datatype type, MPI_Op oph, int root, MPI_Comm comm, int nb, MPI_Request *req,
                     const char *fn)
{
    PROLOGUE(fn);
    int at_root = 1, contributes = 1;
    if ((kind == FERRY_COLL_SCAN || kind == FERRY_COLL_EXSCAN) && (rc = chk_intra(c, fn)))
        return rc;
    if (kind == FERRY_COLL_REDUCE) {
        if ((rc = chk_root(c, root, fn)))
            return rc;
        rooted_sides(c, root, &at_root, &contributes);
        if (!at_root && !contributes) {   /* MPI_PROC_NULL on an intercommunicator */
            a.root = root;
            return go(kind, c, &a, nb, req, fn);
        }
    }
    int n = c->size;
    MPI_Count total = count;
    if (kind == FERRY_COLL_REDUCE_SCATTER) {
        if ((rc = chk_counts(c, rcounts, rcounts, n, fn)))
            return rc;
        total = 0;
        for (int i = 0; i < n; i++)
            total += rcounts[i];
        count = rcounts[c->rank];
    } else if (kind == FERRY_COLL_REDUCE_SCATTER_BLOCK) {
        if (count > INT_MAX)   /* the algorithms keep per-rank block counts as ints */
            return too_large(c, "recvcount", count, fn);
        total = count * n;
    }
    if ((rc = check_count(c, count, fn)) || (rc = check_type(c, type, &a.rdt, fn)) ||
        (rc = check_bytes(c, total, a.rdt, fn)) || (rc = chk_op(c, oph, a.rdt, &a.op, fn)))
        return rc;
    int in_place = sbuf == MPI_IN_PLACE;
    if (in_place && (c->remote || (kind == FERRY_COLL_REDUCE && !at_root)))
        return ferry_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
    if (contributes && !in_place && (rc = check_buf(c, sbuf, total, a.rdt, fn)))
        return rc;
    if (at_root && (rc = check_buf(c, rbuf, in_place ? total : count, a.rdt, fn)))
        return rc;
    if (at_root && (rc = chk_alias(c, sbuf, rbuf, total, fn)))
        return rc;
    a.sbuf = sbuf, a.rbuf = rbuf, a.root = root;
    a.rcounts = rcounts;
    a.rcount = (size_t)(kind == FERRY_COLL_REDUCE_SCATTER ? 0 : count);
    return go(kind, c, &a, nb, req, fn);
}

#pragma weak MPI_Reduce = PMPI_Reduce
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE, sendbuf, recvbuf, count, NULL, datatype, op, root, comm, 0, NULL,
                     "MPI_Reduce");
}

#pragma weak MPI_Reduce_c = PMPI_Reduce_c
int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                  MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE, sendbuf, recvbuf, count, NULL, datatype, op, root, comm, 0, NULL,
                     "MPI_Reduce_c");
}

#pragma weak MPI_Ireduce = PMPI_Ireduce
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE, sendbuf, recvbuf, count, NULL, datatype, op, root, comm, 1, request,
                     "MPI_Ireduce");
}

#pragma weak MPI_Ireduce_c = PMPI_Ireduce_c
int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                   MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE, sendbuf, recvbuf, count, NULL, datatype, op, root, comm, 1, request,
                     "MPI_Ireduce_c");
}

#pragma weak MPI_Allreduce = PMPI_Allreduce
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 0, NULL,
                     "MPI_Allreduce");
}

#pragma weak MPI_Allreduce_c = PMPI_Allreduce_c
int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 0, NULL,
                     "MPI_Allreduce_c");
}

#pragma weak MPI_Iallreduce = PMPI_Iallreduce
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 1, request,
                     "MPI_Iallreduce");
}

#pragma weak MPI_Iallreduce_c = PMPI_Iallreduce_c
int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                      MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 1, request,
                     "MPI_Iallreduce_c");
}

/* (I)reduce_scatter_c: the counts as ints. */
static int reduce_scatter_c(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm, int nb, MPI_Request *req, const char *fn)
{
    struct ferry_comm *c;
    int *ic = NULL;
    int rc = check_comm(comm, &c, fn);
    if (!rc && !(rc = narrow(c, rcounts, c->size, &ic, "recvcounts", fn)))
        rc = reduction(FERRY_COLL_REDUCE_SCATTER, sbuf, rbuf, 0, ic, type, op, 0, comm, nb, req, fn);
    free(ic);
    return rc;
}

#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts, datatype, op, 0, comm, 0, NULL,
                     "MPI_Reduce_scatter");
}

#pragma weak MPI_Reduce_scatter_c = PMPI_Reduce_scatter_c
int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, 0, NULL, "MPI_Reduce_scatter_c");
}

#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, recvcounts, datatype, op, 0, comm, 1, request,
                     "MPI_Ireduce_scatter");
}

#pragma weak MPI_Ireduce_scatter_c = PMPI_Ireduce_scatter_c
int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, 1, request, "MPI_Ireduce_scatter_c");
}

#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, NULL, datatype, op, 0, comm, 0,
                     NULL, "MPI_Reduce_scatter_block");
}

#pragma weak MPI_Reduce_scatter_block_c = PMPI_Reduce_scatter_block_c
int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, NULL, datatype, op, 0, comm, 0,
                     NULL, "MPI_Reduce_scatter_block_c");
}

#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, NULL, datatype, op, 0, comm, 1,
                     request, "MPI_Ireduce_scatter_block");
}

#pragma weak MPI_Ireduce_scatter_block_c = PMPI_Ireduce_scatter_block_c
int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, NULL, datatype, op, 0, comm, 1,
                     request, "MPI_Ireduce_scatter_block_c");
}

#pragma weak MPI_Scan = PMPI_Scan
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_SCAN, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 0, NULL, "MPI_Scan");
}

#pragma weak MPI_Scan_c = PMPI_Scan_c
int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_SCAN, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 0, NULL, "MPI_Scan_c");
}

#pragma weak MPI_Iscan = PMPI_Iscan
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_SCAN, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 1, request,
                     "MPI_Iscan");
}

#pragma weak MPI_Iscan_c = PMPI_Iscan_c
int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_SCAN, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 1, request,
                     "MPI_Iscan_c");
}

#pragma weak MPI_Exscan = PMPI_Exscan
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_EXSCAN, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 0, NULL,
                     "MPI_Exscan");
}

#pragma weak MPI_Exscan_c = PMPI_Exscan_c
int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_EXSCAN, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 0, NULL,
                     "MPI_Exscan_c");
}

#pragma weak MPI_Iexscan = PMPI_Iexscan
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_EXSCAN, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 1, request,
                     "MPI_Iexscan");
}

#pragma weak MPI_Iexscan_c = PMPI_Iexscan_c
int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request)
{
    FERRY_API_ENTER();
    return reduction(FERRY_COLL_EXSCAN, sendbuf, recvbuf, count, NULL, datatype, op, 0, comm, 1, request,
                     "MPI_Iexscan_c");
}

/* ---- Ferry extension ------------------------------------------------------------- */

/* MPIX_Ferry_coll_set(collective, algorithm): force an algorithm at run time,
 * like FERRY_COLL_<NAME>=<algorithm> ("auto" or NULL: back to automatic; a
 * NULL collective: all of them). Every rank must make the same call before
 * its next collective. MPI_ERR_ARG for unknown names. */
int MPIX_Ferry_coll_set(const char *collective, const char *algorithm);
int MPIX_Ferry_coll_set(const char *collective, const char *algorithm)
{
    int rc = check_init("MPIX_Ferry_coll_set");
    if (rc)
        return rc;
    if (ferry_coll_force(collective, algorithm))
        return ferry_error(NULL, MPI_ERR_ARG, "MPIX_Ferry_coll_set", "unknown collective '%s' or algorithm '%s'",
                           collective ? collective : "(null)", algorithm ? algorithm : "(null)");
    return MPI_SUCCESS;
}

/* MPIX_Ferry_coll_algorithm(collective, i, &name): the name of algorithm i
 * of a collective (ferry-tune walks them); MPI_ERR_ARG past the last one. */
int MPIX_Ferry_coll_algorithm(const char *collective, int i, const char **name);
int MPIX_Ferry_coll_algorithm(const char *collective, int i, const char **name)
{
    int rc = check_init("MPIX_Ferry_coll_algorithm");
    if (rc)
        return rc;
    const char *n = collective && name ? ferry_coll_alg_name(collective, i) : NULL;
    if (!n)
        return MPI_ERR_ARG;   /* not an error condition for the caller: the end of the list */
    *name = n;
    return MPI_SUCCESS;
}
