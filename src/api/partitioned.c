/* MPI-4.0 partitioned point-to-point communication: Psend_init / Precv_init,
 * Pready(_range, _list), Parrived.
 *
 * A partitioned request is a persistent request over partitions * count
 * elements. Each Start of a receive posts one receive of the whole buffer;
 * a send goes out as one message when its last partition is marked ready
 * (the message is the request's child, core/request.c). Parrived reports a
 * partition once the whole message is in: correct for any split of the
 * buffer into partitions on either side, since the sender's and the
 * receiver's partition counts may differ.
 *
 * Matching. MPI matches partitioned operations in the order of their
 * initialization calls per (communicator, peer, tag), not in the order their
 * messages happen to go out, so the message cannot simply carry the user's
 * tag. The k-th Psend_init to a peer with tag t and the k-th Precv_init from
 * that peer with tag t share a key made of t and k; the message travels with
 * that key as its tag on the communicator's management context (negative
 * tags below -2^30, apart from every other internal message and from user
 * traffic). The key is exact for tags below 2^20 and up to 1024 operations
 * per (communicator, peer, tag); beyond that it is folded into 30 bits. */
#include "api/check.h"
#include "api/p2p_internal.h"
#include "core/info.h"
#include "core/progress.h"
#include "proto/proto.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct part_state {
    int partitions;
    int is_send;
    int not_ready;           /* send: partitions not yet marked ready in this round */
    int wire_tag;            /* the message's tag on the management context */
    unsigned char ready[];   /* send: partition p marked ready in this round */
};

/* Init counters per (context, peer, tag, direction). */
struct part_seq {
    uint32_t ctx;
    int peer, tag, is_send;
    unsigned n;
    struct part_seq *next;
};
static struct part_seq *seqs;

static unsigned next_seq(uint32_t ctx, int peer, int tag, int is_send)
{
    for (struct part_seq *s = seqs; s; s = s->next)
        if (s->ctx == ctx && s->peer == peer && s->tag == tag && s->is_send == is_send)
            return s->n++;
    struct part_seq *s = ferry_xmalloc(sizeof *s);
    *s = (struct part_seq){.ctx = ctx, .peer = peer, .tag = tag, .is_send = is_send, .n = 1, .next = seqs};
    seqs = s;
    return 0;
}

/* The wire tag of the k-th operation with user tag t. */
static int wire_tag(int t, unsigned k)
{
    uint32_t key = ((uint32_t)t < (1u << 20) && k < 1024) ? (k << 20) | (uint32_t)t
                                                           : ((uint32_t)t * 2654435761u + k * 40503u) & 0x3fffffffu;
    return INT_MIN + (int)key;
}

static int init(void *buf, int partitions, MPI_Count count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                MPI_Info info, MPI_Request *req, int is_send, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_comm(comm, &c, fn);
    if (rc)
        return rc;
    if (partitions < 1)   /* MPI-4.0 chapter 4: one partition or more */
        return ferry_error(c, MPI_ERR_ARG, fn, "partition count %d: there must be at least one", partitions);
    if (count < 0)
        return ferry_error(c, MPI_ERR_COUNT, fn, "negative count %lld", (long long)count);
    if (count && partitions > INT64_MAX / count)
        return ferry_error(c, MPI_ERR_COUNT, fn, "%d partitions of %lld elements overflow", partitions,
                           (long long)count);
    MPI_Count total = (MPI_Count)partitions * count;
    if ((rc = check_p2p(comm, buf, total, type, peer, tag, is_send, &c, &dt, fn)))
        return rc;
    if (!is_send && peer == MPI_ANY_SOURCE)
        return ferry_error(c, MPI_ERR_RANK, fn, "partitioned receives take no MPI_ANY_SOURCE");
    if (!is_send && tag == MPI_ANY_TAG)
        return ferry_error(c, MPI_ERR_TAG, fn, "partitioned receives take no MPI_ANY_TAG");
    if (c->remote)
        return ferry_error(c, MPI_ERR_COMM, fn, "partitioned communication on an intercommunicator is not supported");
    if (info != MPI_INFO_NULL && !ferry_info_get(info))
        return ferry_error(c, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    if (!req)
        return ferry_error(c, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    struct ferry_request *r = ferry_request_new(FERRY_REQ_PART);
    ferry_request_setup(r, buf, (size_t)total, dt, c, peer, tag, FERRY_CTX_MGMT(c), FERRY_MODE_STANDARD);
    struct part_state *ps = ferry_xmalloc(sizeof *ps + (size_t)partitions);
    ps->partitions = partitions;
    ps->is_send = is_send;
    ps->not_ready = partitions;
    memset(ps->ready, 0, (size_t)partitions);
    ps->wire_tag = wire_tag(tag, next_seq(c->ctx, peer, tag, is_send));
    r->owned_buf = ps;
    r->persistent = 1;
    r->complete = 1;   /* inactive */
    *req = r->handle;
    return MPI_SUCCESS;
}

/* Post the request's message (the whole buffer) as its child. */
static void post(struct ferry_request *r, int is_send)
{
    const struct part_state *ps = r->owned_buf;
    struct ferry_request *m = ferry_request_new(is_send ? FERRY_REQ_SEND : FERRY_REQ_RECV);
    ferry_request_setup(m, r->buf, r->count, r->dt, r->comm, r->peer, ps->wire_tag, r->ctx, FERRY_MODE_STANDARD);
    r->children_left = 1;
    m->parent = r;
    m->user_freed = 1;   /* internal: released when it completes */
    if (is_send)
        ferry_proto_isend(m);
    else
        ferry_proto_irecv(m);
}

void ferry_part_start(struct ferry_request *r)
{
    struct part_state *ps = r->owned_buf;
    ferry_request_start(r);
    ferry_status_set(&r->status, r->peer, r->tag, MPI_SUCCESS, 0, 0);
    if (!ps->is_send) {
        post(r, 0);
        return;
    }
    ps->not_ready = ps->partitions;
    memset(ps->ready, 0, (size_t)ps->partitions);
}

/* Callers start *out and *ps at NULL: the compiler cannot see that a
 * failure here always returns nonzero, and warned of their use otherwise. */
static int get_part(MPI_Request h, int want_send, struct ferry_request **out, struct part_state **ps, const char *fn)
{
    struct ferry_request *r = ferry_request_get(h);
    if (!r || r->kind != FERRY_REQ_PART)
        return ferry_error(NULL, MPI_ERR_REQUEST, fn, "0x%x is not a partitioned request", (unsigned)h);
    *ps = r->owned_buf;
    if ((*ps)->is_send != want_send)
        return ferry_error(r->comm, MPI_ERR_REQUEST, fn, "the request is a partitioned %s", (*ps)->is_send ? "send" : "receive");
    *out = r;
    return MPI_SUCCESS;
}

static int ready(struct ferry_request *r, struct part_state *ps, int p, const char *fn)
{
    if (!r->active)
        return ferry_error(r->comm, MPI_ERR_REQUEST, fn, "the partitioned send is not active (call MPI_Start first)");
    if (p < 0 || p >= ps->partitions)
        return ferry_error(r->comm, MPI_ERR_ARG, fn, "partition %d is outside 0..%d", p, ps->partitions - 1);
    if (ps->ready[p])
        return ferry_error(r->comm, MPI_ERR_ARG, fn, "partition %d is already marked ready", p);
    ps->ready[p] = 1;
    if (--ps->not_ready == 0)
        post(r, 1);
    return MPI_SUCCESS;
}

#pragma weak MPI_Psend_init = PMPI_Psend_init
int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    return init((void *)buf, partitions, count, datatype, dest, tag, comm, info, request, 1, "MPI_Psend_init");
}

#pragma weak MPI_Precv_init = PMPI_Precv_init
int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    return init(buf, partitions, count, datatype, source, tag, comm, info, request, 0, "MPI_Precv_init");
}

#pragma weak MPI_Pready = PMPI_Pready
int PMPI_Pready(int partition, MPI_Request request)
{
    FERRY_API_ENTER();
    struct ferry_request *r = NULL;
    struct part_state *ps = NULL;
    int rc = get_part(request, 1, &r, &ps, "MPI_Pready");
    return rc ? rc : ready(r, ps, partition, "MPI_Pready");
}

#pragma weak MPI_Pready_range = PMPI_Pready_range
int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    FERRY_API_ENTER();
    struct ferry_request *r = NULL;
    struct part_state *ps = NULL;
    int rc = get_part(request, 1, &r, &ps, "MPI_Pready_range");
    if (rc)
        return rc;
    if (partition_low > partition_high)
        return ferry_error(r->comm, MPI_ERR_ARG, "MPI_Pready_range", "empty range %d..%d", partition_low,
                           partition_high);
    for (int p = partition_low; p <= partition_high; p++)
        if ((rc = ready(r, ps, p, "MPI_Pready_range")))
            return rc;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pready_list = PMPI_Pready_list
int PMPI_Pready_list(int length, int array_of_partitions[], MPI_Request request)
{
    FERRY_API_ENTER();
    struct ferry_request *r = NULL;
    struct part_state *ps = NULL;
    int rc = get_part(request, 1, &r, &ps, "MPI_Pready_list");
    if (rc)
        return rc;
    if (length < 0 || (length > 0 && !array_of_partitions))
        return ferry_error(r->comm, MPI_ERR_ARG, "MPI_Pready_list", "invalid partition list (length %d)", length);
    for (int i = 0; i < length; i++)
        if ((rc = ready(r, ps, array_of_partitions[i], "MPI_Pready_list")))
            return rc;
    return MPI_SUCCESS;
}

#pragma weak MPI_Parrived = PMPI_Parrived
int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    FERRY_API_ENTER();
    struct ferry_request *r = NULL;
    struct part_state *ps = NULL;
    int rc = get_part(request, 0, &r, &ps, "MPI_Parrived");
    if (rc)
        return rc;
    if ((rc = check_out(flag, "flag", "MPI_Parrived")))
        return rc;
    if (partition < 0 || partition >= ps->partitions)
        return ferry_error(r->comm, MPI_ERR_ARG, "MPI_Parrived", "partition %d is outside 0..%d", partition,
                           ps->partitions - 1);
    if (r->active && !r->complete)
        ferry_progress();
    *flag = !r->active || r->complete;   /* an inactive request has nothing pending (MPI-4.0 4.2.2) */
    return MPI_SUCCESS;
}
