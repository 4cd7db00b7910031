/* Helpers shared by the point-to-point entry points (p2p.c, probe.c,
 * persistent.c, bsend.c). */
#ifndef FERRY_API_P2P_INTERNAL_H
#define FERRY_API_P2P_INTERNAL_H
#include <mpi.h>
#include <stddef.h>
#include "core/request.h"

struct ferry_request *ferry_api_start_send(void *buf, size_t count, struct ferry_datatype *dt, struct ferry_comm *c,
                                           int dest, int tag, enum ferry_send_mode mode);
struct ferry_request *ferry_api_start_recv(void *buf, size_t count, struct ferry_datatype *dt, struct ferry_comm *c,
                                           int src, int tag);
/* Wait for r, copy its status out, free it; returns the operation's error
 * (already passed through the error handler). */
int ferry_api_finish(struct ferry_request *r, MPI_Status *status, const char *fn);
/* Raise err (a truncation, or MPI_ERR_TYPE) of the completed receive r through its
 * communicator's handler, naming both sizes and the sender. */
int ferry_api_truncated(struct ferry_request *r, int err, const char *fn);
/* Buffered send (bsend.c): copy into the attached buffer and start the send.
 * owner (Ibsend's or a persistent Bsend's request, or NULL) keeps a
 * reference to that send in owner->inner, so that cancelling owner can
 * cancel it. */
int ferry_api_bsend(const void *buf, size_t count, struct ferry_datatype *dt, struct ferry_comm *c, int dest, int tag,
                    struct ferry_request *owner, const char *fn);

/* Generalized requests (grequest.c): a new active one (arguments checked by
 * the caller); call the application's query_fn (fills
 * r->status, its result also in r->status.MPI_ERROR), free_fn (once) or
 * cancel_fn; each returns the callback's error code. */
struct ferry_request *ferry_greq_new(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                                     MPI_Grequest_cancel_function *cancel_fn, void *extra_state);
int ferry_greq_query(struct ferry_request *r);
int ferry_greq_free(struct ferry_request *r);
int ferry_greq_cancel(struct ferry_request *r);
/* MPIX_Grequest_start's requests (grequest_mpix.c): r, now complete, is no
 * longer polled */
void ferry_greq_unpoll(struct ferry_request *r);

/* Start a persistent collective (coll_persistent.c): runs its nonblocking
 * collective; on error the request stays inactive. */
int ferry_pcoll_start(struct ferry_request *r);
/* Start a partitioned send or receive (partitioned.c). */
void ferry_part_start(struct ferry_request *r);

#endif
