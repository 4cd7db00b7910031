/* Persistent requests: Send_init / Recv_init and friends (and their MPI-4
 * large-count _c forms) create an inactive request holding the arguments;
 * Start runs the operation again. */
#include "api/check.h"
#include "api/p2p_internal.h"
#include "proto/proto.h"

static int make(const void *buf, MPI_Count count, MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request *req,
                int is_send, enum ferry_send_mode mode, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_p2p(comm, buf, count, type, peer, tag, is_send, &c, &dt, fn);
    if (rc)
        return rc;
    if (!req)
        return ferry_error(c, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    struct ferry_request *r = ferry_request_new(is_send ? FERRY_REQ_SEND : FERRY_REQ_RECV);
    ferry_request_setup(r, (void *)buf, (size_t)count, dt, c, peer, tag, c->ctx, mode);
    r->persistent = 1;
    r->complete = 1;   /* inactive: nothing in flight */
    *req = r->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Send_init = PMPI_Send_init
int PMPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, dest, tag, comm, req, 1, FERRY_MODE_STANDARD, "MPI_Send_init");
}

#pragma weak MPI_Send_init_c = PMPI_Send_init_c
int PMPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, dest, tag, comm, req, 1, FERRY_MODE_STANDARD, "MPI_Send_init_c");
}

#pragma weak MPI_Ssend_init = PMPI_Ssend_init
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, dest, tag, comm, req, 1, FERRY_MODE_SYNC, "MPI_Ssend_init");
}

#pragma weak MPI_Ssend_init_c = PMPI_Ssend_init_c
int PMPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, dest, tag, comm, req, 1, FERRY_MODE_SYNC, "MPI_Ssend_init_c");
}

#pragma weak MPI_Rsend_init = PMPI_Rsend_init
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, dest, tag, comm, req, 1, FERRY_MODE_READY, "MPI_Rsend_init");
}

#pragma weak MPI_Rsend_init_c = PMPI_Rsend_init_c
int PMPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, dest, tag, comm, req, 1, FERRY_MODE_READY, "MPI_Rsend_init_c");
}

#pragma weak MPI_Bsend_init = PMPI_Bsend_init
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, dest, tag, comm, req, 1, FERRY_MODE_BUFFERED, "MPI_Bsend_init");
}

#pragma weak MPI_Bsend_init_c = PMPI_Bsend_init_c
int PMPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, dest, tag, comm, req, 1, FERRY_MODE_BUFFERED, "MPI_Bsend_init_c");
}

#pragma weak MPI_Recv_init = PMPI_Recv_init
int PMPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, source, tag, comm, req, 0, FERRY_MODE_STANDARD, "MPI_Recv_init");
}

#pragma weak MPI_Recv_init_c = PMPI_Recv_init_c
int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    FERRY_API_ENTER();
    return make(buf, count, type, source, tag, comm, req, 0, FERRY_MODE_STANDARD, "MPI_Recv_init_c");
}

static int start_one(MPI_Request h, const char *fn)
{
    struct ferry_request *r = ferry_request_get(h);
    if (!r || !r->persistent)
        return ferry_error(NULL, MPI_ERR_REQUEST, fn, "0x%x is not a persistent request", (unsigned)h);
    if (r->active)
        return ferry_error(r->comm, MPI_ERR_REQUEST, fn, "the persistent request is already active");
    if (r->kind == FERRY_REQ_PCOLL)
        return ferry_pcoll_start(r);
    r->active = 1;
    if (r->kind == FERRY_REQ_PART) {
        ferry_part_start(r);
    } else if (r->kind == FERRY_REQ_RECV) {
        ferry_proto_irecv(r);
    } else if (r->mode == FERRY_MODE_BUFFERED) {
        /* the data goes out of the attached buffer; the request itself is done */
        int rc = ferry_api_bsend(r->buf, r->count, r->dt, r->comm, r->peer, r->tag, r, fn);
        ferry_request_done_now(r);
        return rc;
    } else {
        ferry_proto_isend(r);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Start = PMPI_Start
int PMPI_Start(MPI_Request *request)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Start");
    if (rc)
        return rc;
    if (!request)
        return ferry_error(NULL, MPI_ERR_REQUEST, "MPI_Start", "request pointer is NULL");
    return start_one(*request, "MPI_Start");
}

#pragma weak MPI_Startall = PMPI_Startall
int PMPI_Startall(int count, MPI_Request reqs[])
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Startall");
    if (rc)
        return rc;
    if (count < 0)
        return ferry_error(NULL, MPI_ERR_COUNT, "MPI_Startall", "negative count %d", count);
    for (int i = 0; i < count; i++) {
        struct ferry_request *r = ferry_request_get(reqs[i]);
        if (!r || !r->persistent || r->active)
            return ferry_error(NULL, MPI_ERR_REQUEST, "MPI_Startall", "request %d is not an inactive persistent request", i);
    }
    for (int i = 0; i < count; i++)
        if ((rc = start_one(reqs[i], "MPI_Startall")))
            return rc;
    return MPI_SUCCESS;
}
