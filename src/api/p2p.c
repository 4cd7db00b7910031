/* Point-to-point entry points: blocking and nonblocking sends and receives,
 * Sendrecv and Isendrecv with their replace forms. Blocking calls are a
 * nonblocking start plus a wait that drives progress. Each call has its
 * MPI-4 large-count form (_c, MPI_Count counts) beside it: both go through
 * one helper taking an MPI_Count, as the layers below count in size_t. */
#include "api/check.h"
#include "api/p2p_internal.h"
#include "core/progress.h"
#include "core/util.h"
#include "proto/proto.h"
#include <stdlib.h>

struct ferry_request *ferry_api_start_send(void *buf, size_t count, struct ferry_datatype *dt, struct ferry_comm *c,
                                           int dest, int tag, enum ferry_send_mode mode)
{
    struct ferry_request *r = ferry_request_new(FERRY_REQ_SEND);
    ferry_request_setup(r, buf, count, dt, c, dest, tag, c->ctx, mode);
    ferry_proto_isend(r);
    return r;
}

struct ferry_request *ferry_api_start_recv(void *buf, size_t count, struct ferry_datatype *dt, struct ferry_comm *c,
                                           int src, int tag)
{
    struct ferry_request *r = ferry_request_new(FERRY_REQ_RECV);
    ferry_request_setup(r, buf, count, dt, c, src, tag, c->ctx, FERRY_MODE_STANDARD);
    ferry_proto_irecv(r);
    return r;
}

int ferry_api_truncated(struct ferry_request *r, int err, const char *fn)
{
    size_t msg = r->msg_bytes ? r->msg_bytes : ferry_status_bytes(&r->status);
    if (err == MPI_ERR_TYPE)   /* proto/recv.c: a shorter message that ends inside a basic element */
        return ferry_error(r->comm, err, fn, "message of %zu bytes from rank %d ends inside a basic element of the "
                           "receive datatype", msg, r->status.MPI_SOURCE);
    return ferry_error(r->comm, err, fn, "message of %zu bytes from rank %d is longer than the receive buffer (%zu bytes)",
                       msg, r->status.MPI_SOURCE, r->bytes);
}

/* Wait for r, copy out its status, free it; the receive's error (truncation)
 * goes through the communicator's error handler. */
int ferry_api_finish(struct ferry_request *r, MPI_Status *status, const char *fn)
{
    ferry_request_wait(r);
    ferry_request_status_out(r, status);
    int err = r->status.MPI_ERROR;
    if (err)
        err = ferry_api_truncated(r, err, fn);
    ferry_request_free(r);
    return err;
}

static int blocking_send(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         enum ferry_send_mode mode, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_p2p(comm, buf, count, type, dest, tag, 1, &c, &dt, fn);
    if (rc)
        return rc;
    if (mode != FERRY_MODE_SYNC && dest != MPI_PROC_NULL && ferry_proto_send_now(c, buf, (size_t)count, dt, dest, tag))
        return MPI_SUCCESS;
    return ferry_api_finish(ferry_api_start_send((void *)buf, (size_t)count, dt, c, dest, tag, mode),
                            MPI_STATUS_IGNORE, fn);
}

static int nonblocking_send(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                            MPI_Request *req, enum ferry_send_mode mode, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_p2p(comm, buf, count, type, dest, tag, 1, &c, &dt, fn);
    if (rc)
        return rc;
    if (!req)
        return ferry_error(c, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    *req = ferry_api_start_send((void *)buf, (size_t)count, dt, c, dest, tag, mode)->handle;
    return MPI_SUCCESS;
}

static int blocking_recv(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                         MPI_Status *status, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_p2p(comm, buf, count, type, source, tag, 0, &c, &dt, fn);
    if (rc)
        return rc;
    if (ferry_proto_recv_now(c, buf, (size_t)count, dt, source, tag, status))
        return MPI_SUCCESS;
    return ferry_api_finish(ferry_api_start_recv(buf, (size_t)count, dt, c, source, tag), status, fn);
}

static int nonblocking_recv(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                            MPI_Request *req, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_p2p(comm, buf, count, type, source, tag, 0, &c, &dt, fn);
    if (rc)
        return rc;
    if (!req)
        return ferry_error(c, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    *req = ferry_api_start_recv(buf, (size_t)count, dt, c, source, tag)->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Send = PMPI_Send
int PMPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return blocking_send(buf, count, type, dest, tag, comm, FERRY_MODE_STANDARD, "MPI_Send");
}

#pragma weak MPI_Send_c = PMPI_Send_c
int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return blocking_send(buf, count, type, dest, tag, comm, FERRY_MODE_STANDARD, "MPI_Send_c");
}

#pragma weak MPI_Ssend = PMPI_Ssend
int PMPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return blocking_send(buf, count, type, dest, tag, comm, FERRY_MODE_SYNC, "MPI_Ssend");
}

#pragma weak MPI_Ssend_c = PMPI_Ssend_c
int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return blocking_send(buf, count, type, dest, tag, comm, FERRY_MODE_SYNC, "MPI_Ssend_c");
}

#pragma weak MPI_Rsend = PMPI_Rsend
int PMPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return blocking_send(buf, count, type, dest, tag, comm, FERRY_MODE_READY, "MPI_Rsend");
}

#pragma weak MPI_Rsend_c = PMPI_Rsend_c
int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return blocking_send(buf, count, type, dest, tag, comm, FERRY_MODE_READY, "MPI_Rsend_c");
}

#pragma weak MPI_Isend = PMPI_Isend
int PMPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return nonblocking_send(buf, count, type, dest, tag, comm, req, FERRY_MODE_STANDARD, "MPI_Isend");
}

#pragma weak MPI_Isend_c = PMPI_Isend_c
int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                 MPI_Request *req)
{
    FERRY_API_ENTER();
    return nonblocking_send(buf, count, type, dest, tag, comm, req, FERRY_MODE_STANDARD, "MPI_Isend_c");
}

#pragma weak MPI_Issend = PMPI_Issend
int PMPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return nonblocking_send(buf, count, type, dest, tag, comm, req, FERRY_MODE_SYNC, "MPI_Issend");
}

#pragma weak MPI_Issend_c = PMPI_Issend_c
int PMPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    FERRY_API_ENTER();
    return nonblocking_send(buf, count, type, dest, tag, comm, req, FERRY_MODE_SYNC, "MPI_Issend_c");
}

#pragma weak MPI_Irsend = PMPI_Irsend
int PMPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return nonblocking_send(buf, count, type, dest, tag, comm, req, FERRY_MODE_READY, "MPI_Irsend");
}

#pragma weak MPI_Irsend_c = PMPI_Irsend_c
int PMPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    FERRY_API_ENTER();
    return nonblocking_send(buf, count, type, dest, tag, comm, req, FERRY_MODE_READY, "MPI_Irsend_c");
}

#pragma weak MPI_Recv = PMPI_Recv
int PMPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    FERRY_API_ENTER();
    return blocking_recv(buf, count, type, source, tag, comm, status, "MPI_Recv");
}

#pragma weak MPI_Recv_c = PMPI_Recv_c
int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                MPI_Status *status)
{
    FERRY_API_ENTER();
    return blocking_recv(buf, count, type, source, tag, comm, status, "MPI_Recv_c");
}

#pragma weak MPI_Irecv = PMPI_Irecv
int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return nonblocking_recv(buf, count, type, source, tag, comm, req, "MPI_Irecv");
}

#pragma weak MPI_Irecv_c = PMPI_Irecv_c
int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                 MPI_Request *req)
{
    FERRY_API_ENTER();
    return nonblocking_recv(buf, count, type, source, tag, comm, req, "MPI_Irecv_c");
}

/* The send half and the receive half of a (I)Sendrecv(_replace), checked as
 * a send and as a receive. */
static int check_sendrecv(MPI_Comm comm, const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                          const void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int source, int rtag,
                          struct ferry_comm **c, struct ferry_datatype **sdt, struct ferry_datatype **rdt,
                          const char *fn)
{
    int rc = check_p2p(comm, sbuf, scount, stype, dest, stag, 1, c, sdt, fn);
    return rc ? rc : check_p2p(comm, rbuf, rcount, rtype, source, rtag, 0, c, rdt, fn);
}

static int sendrecv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                    MPI_Status *status, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *sdt, *rdt;
    int rc = check_sendrecv(comm, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                            recvtag, &c, &sdt, &rdt, fn);
    if (rc)
        return rc;
    struct ferry_request *rr = ferry_api_start_recv(recvbuf, (size_t)recvcount, rdt, c, source, recvtag);
    struct ferry_request *sr = ferry_api_start_send((void *)sendbuf, (size_t)sendcount, sdt, c, dest, sendtag,
                                                    FERRY_MODE_STANDARD);
    ferry_api_finish(sr, MPI_STATUS_IGNORE, fn);
    return ferry_api_finish(rr, status, fn);
}

#pragma weak MPI_Sendrecv = PMPI_Sendrecv
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    FERRY_API_ENTER();
    return sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                    status, "MPI_Sendrecv");
}

#pragma weak MPI_Sendrecv_c = PMPI_Sendrecv_c
int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                    MPI_Status *status)
{
    FERRY_API_ENTER();
    return sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                    status, "MPI_Sendrecv_c");
}

static int sendrecv_replace(void *buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag, int source,
                            int recvtag, MPI_Comm comm, MPI_Status *status, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_sendrecv(comm, buf, count, type, dest, sendtag, buf, count, type, source, recvtag, &c, &dt, &dt, fn);
    if (rc)
        return rc;
    /* send a packed copy, receive in place */
    size_t bytes = ferry_dt_bytes(dt, (size_t)count);
    void *copy = ferry_xmalloc(bytes);
    ferry_dt_pack(dt, buf, 0, copy, bytes);
    struct ferry_request *rr = ferry_api_start_recv(buf, (size_t)count, dt, c, source, recvtag);
    struct ferry_request *sr = ferry_api_start_send(copy, bytes, ferry_datatype_get(MPI_BYTE), c, dest, sendtag,
                                                    FERRY_MODE_STANDARD);
    ferry_api_finish(sr, MPI_STATUS_IGNORE, fn);
    rc = ferry_api_finish(rr, status, fn);
    free(copy);
    return rc;
}

#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Status *status)
{
    FERRY_API_ENTER();
    return sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status, "MPI_Sendrecv_replace");
}

#pragma weak MPI_Sendrecv_replace_c = PMPI_Sendrecv_replace_c
int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag, int source,
                            int recvtag, MPI_Comm comm, MPI_Status *status)
{
    FERRY_API_ENTER();
    return sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status,
                            "MPI_Sendrecv_replace_c");
}

/* ---- Isendrecv (MPI-4.0) ---------------------------------------------------- */

/* A FERRY_REQ_PAIR over the receive (buf, count, dt from source) and the send
 * (sbuf, scount, sdt to dest); sbuf_owned is freed with the send. Both
 * children exist before either starts: one can complete while it starts (to
 * MPI_PROC_NULL, or a message already waiting). */
static struct ferry_request *start_pair(struct ferry_comm *c, const void *sbuf, size_t scount,
                                        struct ferry_datatype *sdt, int dest, int sendtag, void *rbuf, size_t rcount,
                                        struct ferry_datatype *rdt, int source, int recvtag, void *sbuf_owned)
{
    struct ferry_request *p = ferry_request_new(FERRY_REQ_PAIR);
    ferry_request_setup(p, rbuf, rcount, rdt, c, source, recvtag, c->ctx, FERRY_MODE_STANDARD);
    ferry_request_start(p);
    p->bytes = ferry_dt_bytes(rdt, rcount);   /* for the truncation message */
    p->children_left = 2;
    struct ferry_request *rr = ferry_request_new(FERRY_REQ_RECV);
    ferry_request_setup(rr, rbuf, rcount, rdt, c, source, recvtag, c->ctx, FERRY_MODE_STANDARD);
    struct ferry_request *sr = ferry_request_new(FERRY_REQ_SEND);
    ferry_request_setup(sr, (void *)sbuf, scount, sdt, c, dest, sendtag, c->ctx, FERRY_MODE_STANDARD);
    sr->owned_buf = sbuf_owned;
    rr->parent = sr->parent = p;
    rr->user_freed = sr->user_freed = 1;
    ferry_proto_irecv(rr);
    ferry_proto_isend(sr);
    return p;
}

static int isendrecv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                     MPI_Request *request, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *sdt, *rdt;
    int rc = check_sendrecv(comm, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                            recvtag, &c, &sdt, &rdt, fn);
    if (rc)
        return rc;
    if (!request)
        return ferry_error(c, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    *request = start_pair(c, sendbuf, (size_t)sendcount, sdt, dest, sendtag, recvbuf, (size_t)recvcount, rdt, source,
                          recvtag, NULL)->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Isendrecv = PMPI_Isendrecv
int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                     request, "MPI_Isendrecv");
}

#pragma weak MPI_Isendrecv_c = PMPI_Isendrecv_c
int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                     MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                     request, "MPI_Isendrecv_c");
}

static int isendrecv_replace(void *buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag, int source,
                             int recvtag, MPI_Comm comm, MPI_Request *request, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_sendrecv(comm, buf, count, type, dest, sendtag, buf, count, type, source, recvtag, &c, &dt, &dt, fn);
    if (rc)
        return rc;
    if (!request)
        return ferry_error(c, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    /* as Sendrecv_replace: send a packed copy (owned by the send), receive in place */
    size_t bytes = ferry_dt_bytes(dt, (size_t)count);
    void *copy = ferry_xmalloc(bytes ? bytes : 1);
    ferry_dt_pack(dt, buf, 0, copy, bytes);
    *request = start_pair(c, copy, bytes, ferry_datatype_get(MPI_BYTE), dest, sendtag, buf, (size_t)count, dt, source,
                          recvtag, copy)->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Isendrecv_replace = PMPI_Isendrecv_replace
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return isendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, request,
                             "MPI_Isendrecv_replace");
}

#pragma weak MPI_Isendrecv_replace_c = PMPI_Isendrecv_replace_c
int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag, int source,
                             int recvtag, MPI_Comm comm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return isendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, request,
                             "MPI_Isendrecv_replace_c");
}
