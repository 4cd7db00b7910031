/* Argument checking shared by the API entry points. Always on: each check is
 * a compare or a table lookup, cheap next to the message itself. Each
 * returns MPI_SUCCESS or the error class already passed through the
 * communicator's error handler (so the caller just returns it). */
#ifndef FERRY_API_CHECK_H
#define FERRY_API_CHECK_H
#include <mpi.h>
#include "core/comm.h"
#include "core/info.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/request.h"
#include "core/topo.h"
#include "core/runtime.h"
#include "core/biglock.h"
#include "core/util.h"

#define FERRY_TAG_UB 0x7fffffff

/* The neighbours of c's process topology for a neighbourhood collective:
 * MPI_ERR_COMM on an intercommunicator, MPI_ERR_TOPOLOGY without a topology
 * or when a neighbour is no rank of c (a graph edge past nnodes, which
 * Graph_create accepts as MPICH does). */
static inline int check_neighbors(struct ferry_comm *c, int *nin, const int **in, int *nout, const int **out,
                                  const char *fn)
{
    if (c->remote)
        return ferry_error(c, MPI_ERR_COMM, fn, "not defined on an intercommunicator");
    if (!c->topo)
        return ferry_error(c, MPI_ERR_TOPOLOGY, fn, "the communicator has no process topology");
    if (c->topo->outside)
        return ferry_error(c, MPI_ERR_TOPOLOGY, fn, "a graph neighbour of rank %d is no rank of the communicator "
                           "(an edge to a node past nnodes = %d)", c->rank, c->topo->nnodes);
    *nin = c->topo->nin, *in = c->topo->in;
    *nout = c->topo->nout, *out = c->topo->out;
    return MPI_SUCCESS;
}

static inline int check_init(const char *fn)
{
    if (FERRY_UNLIKELY(ferry_rt.state != FERRY_INITIALIZED))
        return ferry_error(NULL, MPI_ERR_OTHER, fn,
                           ferry_rt.state == FERRY_PRE_INIT ? "called before MPI_Init" : "called after MPI_Finalize");
    return MPI_SUCCESS;
}

/* An output argument the caller must supply: NULL is MPI_ERR_ARG, raised on
 * MPI_COMM_WORLD's handler (MPICH reports pointer arguments the same way,
 * before it looks at the objects the call is about). */
static inline int check_out(const void *p, const char *what, const char *fn)
{
    return FERRY_LIKELY(p != NULL) ? MPI_SUCCESS : ferry_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", what);
}

/* An info argument: MPI_INFO_NULL or a live object (raised on c, NULL:
 * MPI_COMM_WORLD's handler). */
static inline int check_info_handle(struct ferry_comm *c, MPI_Info info, const char *fn)
{
    if (info != MPI_INFO_NULL && !ferry_info_get(info))
        return ferry_error(c, MPI_ERR_INFO, fn, "invalid info handle 0x%x", (unsigned)info);
    return MPI_SUCCESS;
}

static inline int check_comm(MPI_Comm h, struct ferry_comm **c, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    *c = ferry_comm_get(h);
    if (!*c)
        return ferry_error(NULL, MPI_ERR_COMM, fn, h == MPI_COMM_NULL ? "communicator is MPI_COMM_NULL"
                                                                   : "invalid communicator handle 0x%x", (unsigned)h);
    return MPI_SUCCESS;
}

/* Counts are MPI_Count so that the large-count (_c) forms share the checks. */
static inline int check_count(struct ferry_comm *c, MPI_Count count, const char *fn)
{
    if (count < 0)
        return ferry_error(c, MPI_ERR_COUNT, fn, "negative count %lld", (long long)count);
    return MPI_SUCCESS;
}

static inline int check_type(struct ferry_comm *c, MPI_Datatype h, struct ferry_datatype **dt, const char *fn)
{
    *dt = ferry_datatype_lookup(h);
    if (!*dt)
        return ferry_error(c, MPI_ERR_TYPE, fn, h == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                                                                     : "invalid datatype handle 0x%x", (unsigned)h);
    return MPI_SUCCESS;
}

/* Datatype queries (size, extent, envelope ...): any existing type, committed
 * or not, after checking MPI is initialized. */
static inline int check_type_query(MPI_Datatype h, struct ferry_datatype **dt, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    *dt = ferry_datatype_get_any(h);
    if (!*dt)
        return ferry_error(NULL, MPI_ERR_TYPE, fn, h == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                                                                       : "invalid datatype handle 0x%x", (unsigned)h);
    return MPI_SUCCESS;
}

static inline int check_buf(struct ferry_comm *c, const void *buf, MPI_Count count, const struct ferry_datatype *dt,
                            const char *fn)
{
    /* MPI_BOTTOM is NULL, legal with derived types holding absolute
     * addresses; with a predefined type a NULL buffer is a mistake. */
    if (!buf && count > 0 && dt->size > 0 && dt->predefined)
        return ferry_error(c, MPI_ERR_BUFFER, fn, "NULL buffer with count %lld", (long long)count);
    return MPI_SUCCESS;
}

/* count elements of dt must be addressable as one byte count (large counts). */
static inline int check_bytes(struct ferry_comm *c, MPI_Count count, const struct ferry_datatype *dt, const char *fn)
{
    size_t bytes;
    if (__builtin_mul_overflow((size_t)count, dt->size, &bytes) || bytes > (size_t)PTRDIFF_MAX)
        return ferry_error(c, MPI_ERR_COUNT, fn, "count %lld of a %zu-byte type overflows the address space",
                           (long long)count, dt->size);
    return MPI_SUCCESS;
}

/* Destination rank of a send: a rank of c or MPI_PROC_NULL. */
static inline int check_dest(struct ferry_comm *c, int rank, const char *fn)
{
    int n = ferry_comm_peer_count(c);
    if (rank == MPI_PROC_NULL || (rank >= 0 && rank < n))
        return MPI_SUCCESS;
    return ferry_error(c, MPI_ERR_RANK, fn, "invalid rank %d (communicator has %d ranks)", rank, n);
}

/* Source rank of a receive: also MPI_ANY_SOURCE. */
static inline int check_source(struct ferry_comm *c, int rank, const char *fn)
{
    if (rank == MPI_ANY_SOURCE)
        return MPI_SUCCESS;
    return check_dest(c, rank, fn);
}

static inline int check_send_tag(struct ferry_comm *c, int tag, const char *fn)
{
    if (tag >= 0 && tag <= FERRY_TAG_UB)
        return MPI_SUCCESS;
    return ferry_error(c, MPI_ERR_TAG, fn, "invalid tag %d for a send (must be 0..%d)", tag, FERRY_TAG_UB);
}

static inline int check_recv_tag(struct ferry_comm *c, int tag, const char *fn)
{
    if (tag == MPI_ANY_TAG || (tag >= 0 && tag <= FERRY_TAG_UB))
        return MPI_SUCCESS;
    return ferry_error(c, MPI_ERR_TAG, fn, "invalid tag %d for a receive (must be 0..%d or MPI_ANY_TAG)", tag,
                       FERRY_TAG_UB);
}

/* The common prologue of every point-to-point call; inlined, so that the
 * blocking calls' fast paths do not pay a call of ten arguments. */
static inline __attribute__((always_inline)) int check_p2p(MPI_Comm comm, const void *buf, MPI_Count count,
                                                            MPI_Datatype type, int rank, int tag, int is_send,
                                                            struct ferry_comm **c, struct ferry_datatype **dt,
                                                            const char *fn)
{
    int rc;
    /* An empty message may name MPI_DATATYPE_NULL, as MPICH accepts (its own
     * tests send one that way). */
    if (count == 0 && type == MPI_DATATYPE_NULL)
        type = MPI_BYTE;
    if ((rc = check_comm(comm, c, fn)) || (rc = check_count(*c, count, fn)) || (rc = check_type(*c, type, dt, fn)) ||
        (rc = check_bytes(*c, count, *dt, fn)) || (rc = check_buf(*c, buf, count, *dt, fn)))
        return rc;
    if (is_send)
        rc = check_dest(*c, rank, fn) ? MPI_ERR_RANK : check_send_tag(*c, tag, fn);
    else
        rc = check_source(*c, rank, fn) ? MPI_ERR_RANK : check_recv_tag(*c, tag, fn);
    return rc;
}

#define FERRY_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
