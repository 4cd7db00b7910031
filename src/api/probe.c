/* Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv (and Mrecv_c, Imrecv_c, the
 * MPI-4 large-count forms). A matched probe (Mprobe)
 * takes the message off the unexpected queue into an MPI_Message, so no
 * other receive can steal it. */
#include "api/check.h"
#include "api/p2p_internal.h"
#include "core/match.h"
#include "core/progress.h"
#include "proto/proto.h"

static int check_probe(int source, int tag, MPI_Comm comm, struct ferry_comm **c, const char *fn)
{
    int rc = check_comm(comm, c, fn);
    if (!rc)
        rc = check_source(*c, source, fn);
    if (!rc)
        rc = check_recv_tag(*c, tag, fn);
    return rc;
}

static void probe_status(const struct ferry_unexp *u, MPI_Status *st)
{
    if (st != MPI_STATUS_IGNORE) {
        int err = st->MPI_ERROR;
        ferry_status_set(st, u->src, u->tag, MPI_SUCCESS, u->bytes, 0);
        st->MPI_ERROR = err;
    }
}

static void proc_null_status(MPI_Status *st)
{
    if (st != MPI_STATUS_IGNORE)
        ferry_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, st->MPI_ERROR, 0, 0);
}

static struct ferry_unexp *probe(struct ferry_comm *c, int source, int tag, int take, int block)
{
    struct ferry_waiter w = {0};
    ferry_progress();
    for (;;) {
        struct ferry_unexp *u = ferry_unexp_find(c->ctx, source, tag, take);
        if (u || !block)
            return u;
        ferry_progress_wait(&w);
    }
}

#pragma weak MPI_Iprobe = PMPI_Iprobe
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_probe(source, tag, comm, &c, "MPI_Iprobe");
    if (rc)
        return rc;
    if ((rc = check_out(flag, "flag", "MPI_Iprobe")))
        return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    struct ferry_unexp *u = probe(c, source, tag, 0, 0);
    *flag = u != NULL;
    if (u)
        probe_status(u, status);
    return MPI_SUCCESS;
}

#pragma weak MPI_Probe = PMPI_Probe
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_probe(source, tag, comm, &c, "MPI_Probe");
    if (rc)
        return rc;
    if (source == MPI_PROC_NULL) {
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    probe_status(probe(c, source, tag, 0, 1), status);
    return MPI_SUCCESS;
}

static MPI_Message make_message(struct ferry_comm *c, struct ferry_unexp *u)
{
    struct ferry_request *m = ferry_request_new(FERRY_REQ_MESSAGE);
    m->comm = c;
    c->refs++;
    m->msg = u;
    m->complete = 1;
    return m->handle;
}

#pragma weak MPI_Improbe = PMPI_Improbe
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_probe(source, tag, comm, &c, "MPI_Improbe");
    if (rc)
        return rc;
    if ((rc = check_out(flag, "flag", "MPI_Improbe")))
        return rc;
    if ((rc = check_out(message, "message", "MPI_Improbe")))
        return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    struct ferry_unexp *u = probe(c, source, tag, 1, 0);
    *flag = u != NULL;
    if (u) {
        probe_status(u, status);
        *message = make_message(c, u);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Mprobe = PMPI_Mprobe
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_probe(source, tag, comm, &c, "MPI_Mprobe");
    if (rc)
        return rc;
    if ((rc = check_out(message, "message", "MPI_Mprobe")))
        return rc;
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    struct ferry_unexp *u = probe(c, source, tag, 1, 1);
    probe_status(u, status);
    *message = make_message(c, u);
    return MPI_SUCCESS;
}

/* Start receiving a matched message into (buf, count, type). */
static int start_mrecv(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message, struct ferry_request **out,
                       const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!message)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "message pointer is NULL");
    struct ferry_request *m = *message == MPI_MESSAGE_NO_PROC ? NULL : ferry_request_get(*message);
    if (*message != MPI_MESSAGE_NO_PROC && (!m || m->kind != FERRY_REQ_MESSAGE))
        return ferry_error(NULL, MPI_ERR_REQUEST, fn, "invalid message handle 0x%x", (unsigned)*message);
    struct ferry_comm *c = m ? m->comm : ferry_comm_self;
    struct ferry_datatype *dt;
    if ((rc = check_count(c, count, fn)) || (rc = check_type(c, type, &dt, fn)) ||
        (rc = check_bytes(c, count, dt, fn)) || (rc = check_buf(c, buf, count, dt, fn)))
        return rc;
    struct ferry_request *r = ferry_request_new(FERRY_REQ_RECV);
    ferry_request_setup(r, buf, (size_t)count, dt, c, m ? m->msg->src : MPI_PROC_NULL, 0, c->ctx, FERRY_MODE_STANDARD);
    if (!m) {
        ferry_proto_irecv(r);   /* MPI_PROC_NULL: completes at once */
    } else {
        ferry_proto_mrecv(r, m->msg);
        m->msg = NULL;
        ferry_request_free(m);
    }
    *message = MPI_MESSAGE_NULL;
    *out = r;
    return MPI_SUCCESS;
}

static int mrecv(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message, MPI_Status *status,
                 const char *fn)
{
    struct ferry_request *r = NULL;
    int rc = start_mrecv(buf, count, type, message, &r, fn);
    if (rc)
        return rc;
    return ferry_api_finish(r, status, fn);
}

static int imrecv(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message, MPI_Request *request,
                  const char *fn)
{
    struct ferry_request *r = NULL;
    if (!request)
        return ferry_error(NULL, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    int rc = start_mrecv(buf, count, type, message, &r, fn);
    if (rc)
        return rc;
    *request = r->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Mrecv = PMPI_Mrecv
int PMPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    FERRY_API_ENTER();
    return mrecv(buf, count, type, message, status, "MPI_Mrecv");
}

#pragma weak MPI_Mrecv_c = PMPI_Mrecv_c
int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    FERRY_API_ENTER();
    return mrecv(buf, count, type, message, status, "MPI_Mrecv_c");
}

#pragma weak MPI_Imrecv = PMPI_Imrecv
int PMPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    FERRY_API_ENTER();
    return imrecv(buf, count, type, message, request, "MPI_Imrecv");
}

#pragma weak MPI_Imrecv_c = PMPI_Imrecv_c
int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    FERRY_API_ENTER();
    return imrecv(buf, count, type, message, request, "MPI_Imrecv_c");
}
