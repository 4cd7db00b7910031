/* Ferry extension for the point-to-point protocols (used by ferry-tune --p2p
 * and by tests). */
#include "api/check.h"
#include "core/runtime.h"
#include "proto/ladder.h"
#include "transport/transport.h"
#include <string.h>

/* MPIX_Ferry_p2p_set(mechanism, peer, &limit): carry every message by
 * "eager", "pipeline", "cma" or "split" as far as that mechanism can; "auto" or NULL:
 * back to the cost model. *limit (if not NULL) gets the largest message the
 * mechanism carries to world rank peer (eager: one packet's payload; cma,
 * split: 0 when single copy with that peer is unavailable). Both
 * ends of a message must make the same call before it is sent. MPI_ERR_ARG
 * for an unknown mechanism or peer. */
int MPIX_Ferry_p2p_set(const char *mechanism, int peer, size_t *limit);
int MPIX_Ferry_p2p_set(const char *mechanism, int peer, size_t *limit)
{
    const char *fn = "MPIX_Ferry_p2p_set";
    int rc = check_init(fn);
    if (rc)
        return rc;
    int m = FERRY_MECH_COUNT;
    if (mechanism && strcmp(mechanism, "auto")) {
        for (m = 0; m < FERRY_MECH_COUNT && strcmp(mechanism, ferry_mech_names[m]); m++)
            ;
        if (m == FERRY_MECH_COUNT)
            return ferry_error(NULL, MPI_ERR_ARG, fn, "unknown mechanism '%s' (eager, pipeline, cma, split, auto)",
                               mechanism);
    }
    if (peer < 0 || peer >= ferry_rt.world_size)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "peer %d is not a rank of MPI_COMM_WORLD", peer);
    ferry_ladder_force((enum ferry_mech)m);
    if (limit) {
        int uid = ferry_rt.uid_base + peer;
        const struct ferry_transport *tr = ferry_rt.peers[uid].tr;
        *limit = m == FERRY_MECH_EAGER ? tr->max_payload(uid)
                 : (m == FERRY_MECH_CMA || m == FERRY_MECH_SPLIT) && !(tr->pull && tr->can_pull(uid)) ? 0
                                                                             : (size_t)-1;
    }
    return MPI_SUCCESS;
}
