/* Helpers shared by the communicator entry points (comm.c, intercomm.c,
 * topo.c, attr.c). */
#ifndef FERRY_API_COMM_INTERNAL_H
#define FERRY_API_COMM_INTERNAL_H
#include <mpi.h>

struct ferry_comm;
struct ferry_group;
struct ferry_info;

/* Comm_split of an intracommunicator (collective over c); *out NULL for
 * MPI_UNDEFINED. */
void ferry_api_split(struct ferry_comm *c, int color, int key, struct ferry_comm **out);
/* Comm_dup's work (ctx agreement, topology, hints, attribute copies). info:
 * the new communicator's hints (taken over), or NULL to copy c's. Returns
 * MPI_SUCCESS or the failing copy callback's error (already raised). */
int ferry_api_dup(struct ferry_comm *c, struct ferry_info *info, struct ferry_comm **out, const char *fn);
/* Intercommunicator forms of Comm_split and Comm_create (intercomm.c). */
void ferry_api_intercomm_split(struct ferry_comm *c, int color, int key, struct ferry_comm **out);
void ferry_api_intercomm_create(struct ferry_comm *c, struct ferry_group *g, struct ferry_comm **out);
/* Map a user callback's return value to an error class and raise it on c. */
int ferry_api_callback_error(struct ferry_comm *c, int rc, const char *fn, const char *what);
/* Is c an intracommunicator? Raises MPI_ERR_COMM (returning it) if not. */
int ferry_api_need_intra(struct ferry_comm *c, const char *fn);

#endif
