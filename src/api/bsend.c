/* Buffered sends: Buffer_attach / Buffer_detach, Bsend, Ibsend.
 *
 * A buffered send packs the message into the attached buffer and starts an
 * ordinary send of the packed bytes; the user's call returns at once. The
 * buffer is carved first-fit into blocks, each with MPI_BSEND_OVERHEAD bytes
 * of bookkeeping as the standard's sizing rule promises; a block is reclaimed
 * when its send completes. Detach waits until every block is free. */
#include "api/check.h"
#include "api/p2p_internal.h"
#include "core/progress.h"
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

int ferry_api_bsend(const void *buf, int count, struct ferry_datatype *dt, struct ferry_comm *c, int dest, int tag,
                    struct ferry_request *owner, const char *fn)
{
    if (owner && owner->inner) {
        /* a persistent Bsend started again: its previous copy is its own business now */
        ferry_request_unref(owner->inner);
        owner->inner = NULL;
    }
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t bytes = ferry_dt_bytes(dt, (size_t)count);
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

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
int PMPI_Buffer_attach(void *buffer, int size)
{
    int rc = check_init("MPI_Buffer_attach");
    if (rc)
        return rc;
    if (att.buf)
        return ferry_error(NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach", "a buffer is already attached");
    if (size < 0)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Buffer_attach", "negative size %d", size);
    if (!buffer && size > 0)
        return ferry_error(NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach", "NULL buffer");
    att.buf = buffer;
    att.size = (size_t)size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    int rc = check_init("MPI_Buffer_detach");
    if (rc)
        return rc;
    struct ferry_waiter w = {0};
    for (reclaim(); att.blocks; reclaim())
        ferry_progress_wait(&w);
    *(void **)buffer_addr = att.buf;
    *size = (int)att.size;
    att.buf = NULL;
    att.size = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Bsend = PMPI_Bsend
int PMPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_p2p(comm, buf, count, type, dest, tag, 1, &c, &dt, "MPI_Bsend");
    if (rc)
        return rc;
    return ferry_api_bsend(buf, count, dt, c, dest, tag, NULL, "MPI_Bsend");
}

#pragma weak MPI_Ibsend = PMPI_Ibsend
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    struct ferry_comm *c;
    struct ferry_datatype *dt;
    int rc = check_p2p(comm, buf, count, type, dest, tag, 1, &c, &dt, "MPI_Ibsend");
    if (rc)
        return rc;
    /* the message is in the attached buffer: the user's request is done */
    struct ferry_request *r = ferry_request_new(FERRY_REQ_SEND);
    if ((rc = ferry_api_bsend(buf, count, dt, c, dest, tag, r, "MPI_Ibsend"))) {
        r->complete = 1;
        ferry_request_free(r);
        return rc;
    }
    ferry_request_setup(r, (void *)buf, (size_t)count, dt, c, dest, tag, c->ctx, FERRY_MODE_BUFFERED);
    ferry_request_done_now(r);
    *req = r->handle;
    return MPI_SUCCESS;
}
