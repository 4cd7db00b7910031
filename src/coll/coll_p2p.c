/* Blocking point-to-point in a communicator's collective context (ctx + 1),
 * the building block of the algorithms in this directory. */
#include "coll/coll_p2p.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/progress.h"
#include "core/request.h"
#include "proto/proto.h"

static struct ferry_request *start(struct ferry_comm *c, void *buf, size_t n, int peer, int tag, int send)
{
    struct ferry_request *r = ferry_request_new(send ? FERRY_REQ_SEND : FERRY_REQ_RECV);
    ferry_request_setup(r, buf, n, ferry_datatype_get(MPI_BYTE), c, peer, tag, c->ctx + 1, FERRY_MODE_STANDARD);
    if (send)
        ferry_proto_isend(r);
    else
        ferry_proto_irecv(r);
    return r;
}

void ferry_coll_sendrecv(struct ferry_comm *c, const void *sbuf, size_t sn, int dest, void *rbuf, size_t rn,
                         int src, int tag)
{
    struct ferry_request *rr = start(c, rbuf, rn, src, tag, 0);
    struct ferry_request *sr = start(c, (void *)sbuf, sn, dest, tag, 1);
    ferry_request_wait(sr);
    ferry_request_wait(rr);
    ferry_request_free(sr);
    ferry_request_free(rr);
}
