/* Buffered sends: Buffer_attach / Buffer_detach, Bsend, Ibsend, and their
 * MPI-4 large-count (_c) forms.
 *
 * A buffered send packs the message into the attached buffer and starts an
 * ordinary send of the packed bytes; the user's call returns at once. The
 * buffer is carved first-fit into blocks, each with MPI_BSEND_OVERHEAD bytes
 * of bookkeeping as the standard's sizing rule promises; a block is reclaimed
 * when its send completes. Detach waits until every block is free. */
#include "api/check.h"
#include "api/p2p_internal.h"
#include "core/progress.h"
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bblock {
    size_t off, len;                 /* region of the attached buffer, overhead included */
    struct ferry_request *send;      /* the send of the packed copy */
    struct bblock *next;             /* sorted by offset */
};

static struct {
    char *buf;
    size_t size;
    struct bblock *blocks;
} att;

/* Free blocks whose sends are done. */
static void reclaim(void)
{
    struct bblock **pp = &att.blocks;
    while (*pp) {
        struct bblock *b = *pp;
        if (b->send->complete) {
            ferry_request_free(b->send);
            *pp = b->next;
            free(b);
        } else {
            pp = &b->next;
        }
    }
}

/* First fit; returns the new block or NULL. */
static struct bblock *alloc_block(size_t len)
{
    size_t at = 0;
    struct bblock **pp = &att.blocks;
    for (;;) {
        size_t end = *pp ? (*pp)->off : att.size;
        if (end >= at && end - at >= len) {
            struct bblock *b = ferry_xcalloc(1, sizeof *b);
            b->off = at;
            b->len = len;
            b->next = *pp;
            *pp = b;
            return b;
        }
        if (!*pp)
            return NULL;
        at = (*pp)->off + (*pp)->len;
        at = (at + 15) & ~(size_t)15;
        pp = &(*pp)->next;
    }
}

int ferry_api_bsend(const void *buf, size_t count, struct ferry_datatype *dt, struct ferry_comm *c, int dest, int tag,
                    struct ferry_request *owner, const char *fn)
{
    if (owner && owner->inner) {
        /* a persistent Bsend started again: its previous copy is its own business now */
        ferry_request_unref(owner->inner);
        owner->inner = NULL;
    }
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t bytes = ferry_dt_bytes(dt, count);
    size_t need = bytes + MPI_BSEND_OVERHEAD;
    ferry_progress();
    reclaim();
    struct bblock *b = alloc_block(need);
    if (!b)
        return ferry_error(c, MPI_ERR_BUFFER, fn,
                           "attached buffer too small: %zu bytes needed (message + MPI_BSEND_OVERHEAD), %zu attached",
                           need, att.size);
    char *copy = att.buf + b->off + MPI_BSEND_OVERHEAD;
    ferry_dt_pack(dt, buf, 0, copy, bytes);
    b->send = ferry_api_start_send(copy, bytes, ferry_datatype_get(MPI_BYTE), c, dest, tag, FERRY_MODE_STANDARD);
    if (owner) {
        ferry_request_ref(b->send);
        owner->inner = b->send;
    }
    return MPI_SUCCESS;
}

static int attach(void *buffer, MPI_Count size, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (att.buf)
        return ferry_error(NULL, MPI_ERR_BUFFER, fn, "a buffer is already attached");
    if (size < 0)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "negative size %lld", (long long)size);
    if (!buffer && size > 0)
        return ferry_error(NULL, MPI_ERR_BUFFER, fn, "NULL buffer");
    att.buf = buffer;
    att.size = (size_t)size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
int PMPI_Buffer_attach(void *buffer, int size)
{
    FERRY_API_ENTER();
    return attach(buffer, size, "MPI_Buffer_attach");
}

#pragma weak MPI_Buffer_attach_c = PMPI_Buffer_attach_c
int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    FERRY_API_ENTER();
    return attach(buffer, size, "MPI_Buffer_attach_c");
}

/* Wait until every buffered send has left the buffer, then hand it back.
 * max: the largest size the caller can be told (the int form cannot report
 * a buffer attached with MPI_Buffer_attach_c above INT_MAX: it fails and
 * leaves the buffer attached). */
static int detach(void *buffer_addr, MPI_Count *size, MPI_Count max, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!buffer_addr || !size)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "NULL %s", buffer_addr ? "size" : "buffer_addr");
    if (att.size > (size_t)max)
        return ferry_error(NULL, MPI_ERR_COUNT, fn,
                           "the attached buffer has %zu bytes, more than an int holds (use MPI_Buffer_detach_c)",
                           att.size);
    struct ferry_waiter w = {0};
    for (reclaim(); att.blocks; reclaim())
        ferry_progress_wait(&w);
    *(void **)buffer_addr = att.buf;
    *size = (MPI_Count)att.size;
    att.buf = NULL;
    att.size = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    FERRY_API_ENTER();
    MPI_Count n = 0;
    int rc = detach(buffer_addr, size ? &n : NULL, INT_MAX, "MPI_Buffer_detach");
    if (!rc)
        *size = (int)n;
    return rc;
}

#pragma weak MPI_Buffer_detach_c = PMPI_Buffer_detach_c
int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    FERRY_API_ENTER();
    return detach(buffer_addr, size, PTRDIFF_MAX, "MPI_Buffer_detach_c");
}

static int bsend(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                 const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_p2p(comm, buf, count, type, dest, tag, 1, &c, &dt, fn);
    if (rc)
        return rc;
    return ferry_api_bsend(buf, (size_t)count, dt, c, dest, tag, NULL, fn);
}

#pragma weak MPI_Bsend = PMPI_Bsend
int PMPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return bsend(buf, count, type, dest, tag, comm, "MPI_Bsend");
}

#pragma weak MPI_Bsend_c = PMPI_Bsend_c
int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    FERRY_API_ENTER();
    return bsend(buf, count, type, dest, tag, comm, "MPI_Bsend_c");
}

static int ibsend(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_p2p(comm, buf, count, type, dest, tag, 1, &c, &dt, fn);
    if (rc)
        return rc;
    if (!req)
        return ferry_error(c, MPI_ERR_REQUEST, fn, "request pointer is NULL");
    /* the message is in the attached buffer: the user's request is done */
    struct ferry_request *r = ferry_request_new(FERRY_REQ_SEND);
    if ((rc = ferry_api_bsend(buf, (size_t)count, dt, c, dest, tag, r, fn))) {
        r->complete = 1;
        ferry_request_free(r);
        return rc;
    }
    ferry_request_setup(r, (void *)buf, (size_t)count, dt, c, dest, tag, c->ctx, FERRY_MODE_BUFFERED);
    ferry_request_done_now(r);
    *req = r->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Ibsend = PMPI_Ibsend
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    FERRY_API_ENTER();
    return ibsend(buf, count, type, dest, tag, comm, req, "MPI_Ibsend");
}

#pragma weak MPI_Ibsend_c = PMPI_Ibsend_c
int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    FERRY_API_ENTER();
    return ibsend(buf, count, type, dest, tag, comm, req, "MPI_Ibsend_c");
}
