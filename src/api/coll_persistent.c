/* MPI-4.0 persistent collectives (MPI_Bcast_init ... and their _c forms).
 *
 * Init records the arguments in an inactive persistent request; each Start
 * runs the matching nonblocking collective (which validates the arguments,
 * picks the algorithm and builds the schedule) as the request's child, and
 * the request completes with it (core/request.c). Init is collective (non-local in MPI's terms): it agrees on
 * a private context for the request, so that Starts issued in different
 * orders on different processes still match by Init order. */
#include "api/check.h"
#include "api/p2p_internal.h"
#include "core/info.h"
#include "core/topo.h"
#include <stdlib.h>
#include <string.h>

/* The arguments of one persistent collective, and the nonblocking
 * collective that runs it. The count, displacement and type arrays point at
 * copies made at Init (after the struct, in the same allocation). */
struct pcoll {
    int (*start)(const struct pcoll *a, MPI_Request *r);
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    const void *scounts, *sdispls, *rcounts, *rdispls;   /* int[] or MPI_Count[] / MPI_Aint[] (_c forms) */
    MPI_Datatype stype, rtype;
    const MPI_Datatype *stypes, *rtypes;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    /* which count/displacement/type arrays the request copies at Init, and
     * their element sizes (int, or MPI_Count / MPI_Aint in the _c forms) */
    enum { PC_NONE, PC_ALL, PC_ROOT_RECV, PC_ROOT_SEND, PC_LOCAL_RECV, PC_NEIGHBOR } shape;
    unsigned char csz, sdsz, rdsz;
};

/* element sizes of the count and displacement arrays: int in the C forms,
 * MPI_Count in the _c forms */
#define INT_ARRAYS .csz = sizeof(int), .sdsz = sizeof(int), .rdsz = sizeof(int)
#define COUNT_ARRAYS .csz = sizeof(MPI_Count), .sdsz = sizeof(MPI_Count), .rdsz = sizeof(MPI_Count)

/* Copies are laid out on 8-byte boundaries, so that MPI_Count arrays after
 * an int array stay aligned. */
static size_t padded(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static int make(const struct pcoll *args, MPI_Info info, MPI_Request *req, const char *fn)
{
    struct pcoll args_copy = *args;
    struct ferry_comm *c;
    int rc = check_comm(args->comm, &c, fn);
    if (rc)
        return rc;
    if (!req)
        return ferry_error(c, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    if (info != MPI_INFO_NULL && !ferry_info_get(info))
        return ferry_error(c, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    /* The count, displacement and type arrays are copied: MPI asks the
     * application to keep them unchanged while the request exists, but
     * bindings that build them per call (mpi4py) do not keep them. */
    int ns = 0, nr = 0;
    int root_here = c->remote ? args->root == MPI_ROOT : args->root == c->rank;
    switch (args->shape) {
    case PC_NONE: break;
    case PC_ALL: ns = nr = ferry_comm_peer_count(c); break;
    case PC_ROOT_RECV: nr = root_here ? ferry_comm_peer_count(c) : 0; break;
    case PC_ROOT_SEND: ns = root_here ? ferry_comm_peer_count(c) : 0; break;
    case PC_LOCAL_RECV: nr = c->size; break;
    case PC_NEIGHBOR: {
        const int *in, *out;
        if ((rc = check_neighbors(c, &nr, &in, &ns, &out, fn)))
            return rc;
        break;
    }
    }
    struct copy { const void **arr; size_t elt; int n; } copies[] = {
        {&args_copy.scounts, args->csz, ns},  {&args_copy.sdispls, args->sdsz, ns},
        {(const void **)&args_copy.stypes, sizeof(MPI_Datatype), ns},
        {&args_copy.rcounts, args->csz, nr},  {&args_copy.rdispls, args->rdsz, nr},
        {(const void **)&args_copy.rtypes, sizeof(MPI_Datatype), nr}};
    size_t extra = 0;
    for (size_t i = 0; i < sizeof copies / sizeof *copies; i++)
        if (*copies[i].arr)
            extra += padded(copies[i].elt * (size_t)copies[i].n);
    /* MPI matches persistent collectives in the order of their Init calls,
     * whatever order they are started in: each gets a context of its own
     * now, which its Starts use. */
    struct ferry_comm *own;
    if ((rc = ferry_comm_dup_private(c, c->errhandler, &own)))
        return ferry_error(c, rc, fn, "cannot agree on a context id");
    struct ferry_request *r = ferry_request_new(FERRY_REQ_PCOLL);
    struct pcoll *a = ferry_xmalloc(sizeof *a + extra);
    char *tail = (char *)(a + 1);
    for (size_t i = 0; i < sizeof copies / sizeof *copies; i++)
        if (*copies[i].arr && copies[i].n) {
            size_t n = copies[i].elt * (size_t)copies[i].n;
            memcpy(tail, *copies[i].arr, n);
            *copies[i].arr = tail;
            tail += padded(n);
        }
    *a = args_copy;
    a->comm = own->handle;
    r->owned_buf = a;
    r->comm = own;   /* the request's reference: released with it */
    r->persistent = 1;
    r->complete = 1;   /* inactive */
    *req = r->handle;
    return MPI_SUCCESS;
}

int ferry_pcoll_start(struct ferry_request *r)
{
    const struct pcoll *a = r->owned_buf;
    MPI_Request h = MPI_REQUEST_NULL;
    int rc = a->start(a, &h);
    if (rc)
        return rc;   /* reported by the nonblocking collective; the request stays inactive */
    struct ferry_request *child = ferry_request_get(h);
    r->active = 1;
    ferry_request_start(r);
    if (child->complete) {
        r->status = child->status;
        ferry_request_free(child);
        ferry_request_complete(r);
    } else {
        r->children_left = 1;
        child->parent = r;
        child->user_freed = 1;   /* internal: released when it completes */
    }
    return MPI_SUCCESS;
}

static int start_allgather_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iallgather(a->sbuf, (int)a->scount, a->stype, a->rbuf, (int)a->rcount, a->rtype, a->comm, r);
}

#pragma weak MPI_Allgather_init = PMPI_Allgather_init
int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_allgather_init, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Allgather_init");
}

static int start_alltoall_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ialltoall(a->sbuf, (int)a->scount, a->stype, a->rbuf, (int)a->rcount, a->rtype, a->comm, r);
}

#pragma weak MPI_Alltoall_init = PMPI_Alltoall_init
int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_alltoall_init, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Alltoall_init");
}

static int start_neighbor_allgather_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_allgather(a->sbuf, (int)a->scount, a->stype, a->rbuf, (int)a->rcount, a->rtype, a->comm, r);
}

#pragma weak MPI_Neighbor_allgather_init = PMPI_Neighbor_allgather_init
int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_neighbor_allgather_init, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_allgather_init");
}

static int start_neighbor_alltoall_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_alltoall(a->sbuf, (int)a->scount, a->stype, a->rbuf, (int)a->rcount, a->rtype, a->comm, r);
}

#pragma weak MPI_Neighbor_alltoall_init = PMPI_Neighbor_alltoall_init
int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_neighbor_alltoall_init, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_alltoall_init");
}

static int start_gather_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Igather(a->sbuf, (int)a->scount, a->stype, a->rbuf, (int)a->rcount, a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Gather_init = PMPI_Gather_init
int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_gather_init, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root, .comm = comm};
    return make(&a, info, request, "MPI_Gather_init");
}

static int start_scatter_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iscatter(a->sbuf, (int)a->scount, a->stype, a->rbuf, (int)a->rcount, a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Scatter_init = PMPI_Scatter_init
int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_scatter_init, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root, .comm = comm};
    return make(&a, info, request, "MPI_Scatter_init");
}

static int start_allgatherv_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iallgatherv(a->sbuf, (int)a->scount, a->stype, a->rbuf, (const int *)a->rcounts,
                            (const int *)a->rdispls, a->rtype, a->comm, r);
}

#pragma weak MPI_Allgatherv_init = PMPI_Allgatherv_init
int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ALL, INT_ARRAYS,
                      .start = start_allgatherv_init, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Allgatherv_init");
}

static int start_neighbor_allgatherv_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_allgatherv(a->sbuf, (int)a->scount, a->stype, a->rbuf, (const int *)a->rcounts,
                                     (const int *)a->rdispls, a->rtype, a->comm, r);
}

#pragma weak MPI_Neighbor_allgatherv_init = PMPI_Neighbor_allgatherv_init
int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_NEIGHBOR, INT_ARRAYS,
                      .start = start_neighbor_allgatherv_init, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_allgatherv_init");
}

static int start_gatherv_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Igatherv(a->sbuf, (int)a->scount, a->stype, a->rbuf, (const int *)a->rcounts, (const int *)a->rdispls,
                         a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Gatherv_init = PMPI_Gatherv_init
int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                      const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ROOT_RECV, INT_ARRAYS,
                      .start = start_gatherv_init, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype, .root = root,
                      .comm = comm};
    return make(&a, info, request, "MPI_Gatherv_init");
}

static int start_scatterv_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iscatterv(a->sbuf, (const int *)a->scounts, (const int *)a->sdispls, a->stype, a->rbuf, (int)a->rcount,
                          a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Scatterv_init = PMPI_Scatterv_init
int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ROOT_SEND, INT_ARRAYS,
                      .start = start_scatterv_init, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs,
                      .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root,
                      .comm = comm};
    return make(&a, info, request, "MPI_Scatterv_init");
}

static int start_alltoallv_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ialltoallv(a->sbuf, (const int *)a->scounts, (const int *)a->sdispls, a->stype, a->rbuf,
                           (const int *)a->rcounts, (const int *)a->rdispls, a->rtype, a->comm, r);
}

#pragma weak MPI_Alltoallv_init = PMPI_Alltoallv_init
int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ALL, INT_ARRAYS,
                      .start = start_alltoallv_init, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
                      .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype,
                      .comm = comm};
    return make(&a, info, request, "MPI_Alltoallv_init");
}

static int start_neighbor_alltoallv_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_alltoallv(a->sbuf, (const int *)a->scounts, (const int *)a->sdispls, a->stype, a->rbuf,
                                    (const int *)a->rcounts, (const int *)a->rdispls, a->rtype, a->comm, r);
}

#pragma weak MPI_Neighbor_alltoallv_init = PMPI_Neighbor_alltoallv_init
int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_NEIGHBOR, INT_ARRAYS,
                      .start = start_neighbor_alltoallv_init, .sbuf = sendbuf, .scounts = sendcounts,
                      .sdispls = sdispls, .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
                      .rdispls = rdispls, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_alltoallv_init");
}

static int start_alltoallw_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ialltoallw(a->sbuf, (const int *)a->scounts, (const int *)a->sdispls, a->stypes, a->rbuf,
                           (const int *)a->rcounts, (const int *)a->rdispls, a->rtypes, a->comm, r);
}

#pragma weak MPI_Alltoallw_init = PMPI_Alltoallw_init
int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ALL, INT_ARRAYS,
                      .start = start_alltoallw_init, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
                      .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,
                      .rtypes = recvtypes, .comm = comm};
    return make(&a, info, request, "MPI_Alltoallw_init");
}

static int start_neighbor_alltoallw_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_alltoallw(a->sbuf, (const int *)a->scounts, (const MPI_Aint *)a->sdispls, a->stypes, a->rbuf,
                                    (const int *)a->rcounts, (const MPI_Aint *)a->rdispls, a->rtypes, a->comm, r);
}

#pragma weak MPI_Neighbor_alltoallw_init = PMPI_Neighbor_alltoallw_init
int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_NEIGHBOR, .csz = sizeof(int), .sdsz = sizeof(MPI_Aint), .rdsz = sizeof(MPI_Aint),
                      .start = start_neighbor_alltoallw_init, .sbuf = sendbuf, .scounts = sendcounts,
                      .sdispls = sdispls, .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts,
                      .rdispls = rdispls, .rtypes = recvtypes, .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_alltoallw_init");
}

static int start_allreduce_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iallreduce(a->sbuf, a->rbuf, (int)a->rcount, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Allreduce_init = PMPI_Allreduce_init
int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_allreduce_init, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
                      .rtype = datatype, .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Allreduce_init");
}

static int start_scan_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iscan(a->sbuf, a->rbuf, (int)a->rcount, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Scan_init = PMPI_Scan_init
int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_scan_init, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count, .rtype = datatype,
                      .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Scan_init");
}

static int start_exscan_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iexscan(a->sbuf, a->rbuf, (int)a->rcount, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Exscan_init = PMPI_Exscan_init
int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_exscan_init, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count, .rtype = datatype,
                      .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Exscan_init");
}

static int start_reduce_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ireduce(a->sbuf, a->rbuf, (int)a->rcount, a->rtype, a->op, a->root, a->comm, r);
}

#pragma weak MPI_Reduce_init = PMPI_Reduce_init
int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_reduce_init, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count, .rtype = datatype,
                      .op = op, .root = root, .comm = comm};
    return make(&a, info, request, "MPI_Reduce_init");
}

static int start_reduce_scatter_block_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ireduce_scatter_block(a->sbuf, a->rbuf, (int)a->rcount, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Reduce_scatter_block_init = PMPI_Reduce_scatter_block_init
int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_reduce_scatter_block_init, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = recvcount,
                      .rtype = datatype, .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Reduce_scatter_block_init");
}

static int start_reduce_scatter_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ireduce_scatter(a->sbuf, a->rbuf, (const int *)a->rcounts, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Reduce_scatter_init = PMPI_Reduce_scatter_init
int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_LOCAL_RECV, INT_ARRAYS,
                      .start = start_reduce_scatter_init, .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts,
                      .rtype = datatype, .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Reduce_scatter_init");
}

static int start_bcast_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ibcast(a->rbuf, (int)a->rcount, a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Bcast_init = PMPI_Bcast_init
int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_bcast_init, .rbuf = buffer, .rcount = count, .rtype = datatype, .root = root,
                      .comm = comm};
    return make(&a, info, request, "MPI_Bcast_init");
}

static int start_allgather_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iallgather_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm, r);
}

#pragma weak MPI_Allgather_init_c = PMPI_Allgather_init_c
int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_allgather_init_c, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Allgather_init_c");
}

static int start_alltoall_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ialltoall_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm, r);
}

#pragma weak MPI_Alltoall_init_c = PMPI_Alltoall_init_c
int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_alltoall_init_c, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Alltoall_init_c");
}

static int start_neighbor_allgather_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_allgather_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm, r);
}

#pragma weak MPI_Neighbor_allgather_init_c = PMPI_Neighbor_allgather_init_c
int PMPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_neighbor_allgather_init_c, .sbuf = sendbuf, .scount = sendcount,
                      .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_allgather_init_c");
}

static int start_neighbor_alltoall_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_alltoall_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm, r);
}

#pragma weak MPI_Neighbor_alltoall_init_c = PMPI_Neighbor_alltoall_init_c
int PMPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_neighbor_alltoall_init_c, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_alltoall_init_c");
}

static int start_gather_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Igather_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Gather_init_c = PMPI_Gather_init_c
int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_gather_init_c, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root, .comm = comm};
    return make(&a, info, request, "MPI_Gather_init_c");
}

static int start_scatter_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iscatter_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Scatter_init_c = PMPI_Scatter_init_c
int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_scatter_init_c, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root, .comm = comm};
    return make(&a, info, request, "MPI_Scatter_init_c");
}

static int start_allgatherv_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iallgatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, (const MPI_Count *)a->rcounts,
                              (const MPI_Aint *)a->rdispls, a->rtype, a->comm, r);
}

#pragma weak MPI_Allgatherv_init_c = PMPI_Allgatherv_init_c
int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ALL, COUNT_ARRAYS,
                      .start = start_allgatherv_init_c, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Allgatherv_init_c");
}

static int start_neighbor_allgatherv_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_allgatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, (const MPI_Count *)a->rcounts,
                                       (const MPI_Aint *)a->rdispls, a->rtype, a->comm, r);
}

#pragma weak MPI_Neighbor_allgatherv_init_c = PMPI_Neighbor_allgatherv_init_c
int PMPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_NEIGHBOR, COUNT_ARRAYS,
                      .start = start_neighbor_allgatherv_init_c, .sbuf = sendbuf, .scount = sendcount,
                      .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype,
                      .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_allgatherv_init_c");
}

static int start_gatherv_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Igatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, (const MPI_Count *)a->rcounts,
                           (const MPI_Aint *)a->rdispls, a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Gatherv_init_c = PMPI_Gatherv_init_c
int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ROOT_RECV, COUNT_ARRAYS,
                      .start = start_gatherv_init_c, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype, .root = root,
                      .comm = comm};
    return make(&a, info, request, "MPI_Gatherv_init_c");
}

static int start_scatterv_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iscatterv_c(a->sbuf, (const MPI_Count *)a->scounts, (const MPI_Aint *)a->sdispls, a->stype, a->rbuf,
                            a->rcount, a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Scatterv_init_c = PMPI_Scatterv_init_c
int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ROOT_SEND, COUNT_ARRAYS,
                      .start = start_scatterv_init_c, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs,
                      .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root,
                      .comm = comm};
    return make(&a, info, request, "MPI_Scatterv_init_c");
}

static int start_alltoallv_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ialltoallv_c(a->sbuf, (const MPI_Count *)a->scounts, (const MPI_Aint *)a->sdispls, a->stype, a->rbuf,
                             (const MPI_Count *)a->rcounts, (const MPI_Aint *)a->rdispls, a->rtype, a->comm, r);
}

#pragma weak MPI_Alltoallv_init_c = PMPI_Alltoallv_init_c
int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ALL, COUNT_ARRAYS,
                      .start = start_alltoallv_init_c, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
                      .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype,
                      .comm = comm};
    return make(&a, info, request, "MPI_Alltoallv_init_c");
}

static int start_neighbor_alltoallv_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_alltoallv_c(a->sbuf, (const MPI_Count *)a->scounts, (const MPI_Aint *)a->sdispls, a->stype,
                                      a->rbuf, (const MPI_Count *)a->rcounts, (const MPI_Aint *)a->rdispls, a->rtype,
                                      a->comm, r);
}

#pragma weak MPI_Neighbor_alltoallv_init_c = PMPI_Neighbor_alltoallv_init_c
int PMPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                   MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_NEIGHBOR, COUNT_ARRAYS,
                      .start = start_neighbor_alltoallv_init_c, .sbuf = sendbuf, .scounts = sendcounts,
                      .sdispls = sdispls, .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
                      .rdispls = rdispls, .rtype = recvtype, .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_alltoallv_init_c");
}

static int start_alltoallw_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ialltoallw_c(a->sbuf, (const MPI_Count *)a->scounts, (const MPI_Aint *)a->sdispls, a->stypes, a->rbuf,
                             (const MPI_Count *)a->rcounts, (const MPI_Aint *)a->rdispls, a->rtypes, a->comm, r);
}

#pragma weak MPI_Alltoallw_init_c = PMPI_Alltoallw_init_c
int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_ALL, COUNT_ARRAYS,
                      .start = start_alltoallw_init_c, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
                      .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,
                      .rtypes = recvtypes, .comm = comm};
    return make(&a, info, request, "MPI_Alltoallw_init_c");
}

static int start_neighbor_alltoallw_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ineighbor_alltoallw_c(a->sbuf, (const MPI_Count *)a->scounts, (const MPI_Aint *)a->sdispls, a->stypes,
                                      a->rbuf, (const MPI_Count *)a->rcounts, (const MPI_Aint *)a->rdispls, a->rtypes,
                                      a->comm, r);
}

#pragma weak MPI_Neighbor_alltoallw_init_c = PMPI_Neighbor_alltoallw_init_c
int PMPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                   const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                   MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_NEIGHBOR, COUNT_ARRAYS,
                      .start = start_neighbor_alltoallw_init_c, .sbuf = sendbuf, .scounts = sendcounts,
                      .sdispls = sdispls, .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts,
                      .rdispls = rdispls, .rtypes = recvtypes, .comm = comm};
    return make(&a, info, request, "MPI_Neighbor_alltoallw_init_c");
}

static int start_allreduce_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iallreduce_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Allreduce_init_c = PMPI_Allreduce_init_c
int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_allreduce_init_c, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
                      .rtype = datatype, .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Allreduce_init_c");
}

static int start_scan_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iscan_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Scan_init_c = PMPI_Scan_init_c
int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_scan_init_c, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count, .rtype = datatype,
                      .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Scan_init_c");
}

static int start_exscan_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Iexscan_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Exscan_init_c = PMPI_Exscan_init_c
int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_exscan_init_c, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
                      .rtype = datatype, .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Exscan_init_c");
}

static int start_reduce_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ireduce_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, a->comm, r);
}

#pragma weak MPI_Reduce_init_c = PMPI_Reduce_init_c
int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_reduce_init_c, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
                      .rtype = datatype, .op = op, .root = root, .comm = comm};
    return make(&a, info, request, "MPI_Reduce_init_c");
}

static int start_reduce_scatter_block_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ireduce_scatter_block_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Reduce_scatter_block_init_c = PMPI_Reduce_scatter_block_init_c
int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_reduce_scatter_block_init_c, .sbuf = sendbuf, .rbuf = recvbuf,
                      .rcount = recvcount, .rtype = datatype, .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Reduce_scatter_block_init_c");
}

static int start_reduce_scatter_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ireduce_scatter_c(a->sbuf, a->rbuf, (const MPI_Count *)a->rcounts, a->rtype, a->op, a->comm, r);
}

#pragma weak MPI_Reduce_scatter_init_c = PMPI_Reduce_scatter_init_c
int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.shape = PC_LOCAL_RECV, COUNT_ARRAYS,
                      .start = start_reduce_scatter_init_c, .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts,
                      .rtype = datatype, .op = op, .comm = comm};
    return make(&a, info, request, "MPI_Reduce_scatter_init_c");
}

static int start_bcast_init_c(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ibcast_c(a->rbuf, a->rcount, a->rtype, a->root, a->comm, r);
}

#pragma weak MPI_Bcast_init_c = PMPI_Bcast_init_c
int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_bcast_init_c, .rbuf = buffer, .rcount = count, .rtype = datatype, .root = root,
                      .comm = comm};
    return make(&a, info, request, "MPI_Bcast_init_c");
}

static int start_barrier_init(const struct pcoll *a, MPI_Request *r)
{
    return PMPI_Ibarrier(a->comm, r);
}

#pragma weak MPI_Barrier_init = PMPI_Barrier_init
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct pcoll a = {.start = start_barrier_init, .comm = comm};
    return make(&a, info, request, "MPI_Barrier_init");
}
