/* The protocol ladder: which mechanism carries a message of n bytes.
 *
 *   inline      n <= FERRY_PKT_INLINE_MAX: inside the packet header (always)
 *   eager       one packet, copied in by the sender and out by the receiver
 *   cma         rendezvous, the receiver pulls with single copy (process_vm_readv)
 *   split       rendezvous, single copy shared by both ends: the sender writes
 *               the head of the message into the receiver's buffer
 *               (process_vm_writev) while the receiver pulls the tail, so
 *               both cores copy at once
 *   pipeline    rendezvous, DATA packets streamed through the transport
 *
 * The choice comes from a cost model: for each mechanism, measured one-way
 * times at a set of sizes, interpolated linearly in between (each segment is a
 * per-message plus a per-byte cost). At init the ladder walks the sizes and
 * keeps, at each, the cheapest mechanism; that gives the thresholds eager_max,
 * [cma_min, cma_max) and [split_min, split_max). eager_max holds for a
 * receiver that waits for the message; to one behind in a stream, eager
 * carries every message a packet holds (eager_behind_max), whose copies then
 * overlap the receiver's (the model's mean of ping-pong and a window of 8
 * picks single copy from about 10 KiB on the development VM's Intel host,
 * where streams of 16 KiB still ran 18-25% faster eagerly). The built-in
 * model was measured on the development VM; `mpiexec -n 2 ferry-tune --p2p
 * -o FILE` measures this machine and
 * FERRY_P2P_MODEL=FILE loads it. FERRY_EAGER_MAX, FERRY_CMA_MIN/MAX and
 * FERRY_SPLIT_MIN/MAX override the thresholds one by one. */
#ifndef FERRY_LADDER_H
#define FERRY_LADDER_H
#include <stddef.h>
#include <stdio.h>

enum ferry_mech { FERRY_MECH_EAGER, FERRY_MECH_PIPELINE, FERRY_MECH_CMA, FERRY_MECH_SPLIT, FERRY_MECH_COUNT };
extern const char *const ferry_mech_names[FERRY_MECH_COUNT];

struct ferry_ladder {
    size_t eager_max;   /* largest message sent eagerly to a receiver that waits for it (it has taken
                         * every earlier packet but at most one header-only packet: a ping-pong, a
                         * message after a pause) */
    size_t eager_behind_max; /* ... to one behind in a stream (>= eager_max: the largest eager message to
                              * any receiver); both further capped by the packet */
    size_t cma_min;     /* rendezvous messages in [cma_min, cma_max) are pulled with single copy */
    size_t cma_max;
    size_t split_min;   /* ... and those in [split_min, split_max) with split single copy (checked first) */
    size_t split_max;
};
extern struct ferry_ladder ferry_ladder;

/* Load the model (FERRY_P2P_MODEL or built in) and derive the thresholds. */
void ferry_ladder_init(void);
/* Modelled one-way time in microseconds of an n-byte message by mechanism m. */
double ferry_ladder_cost(enum ferry_mech m, size_t n);
/* The rendezvous mechanism for a message of n bytes (single copy only where
 * the peer allows it and both buffers are contiguous; else the pipeline). */
static inline enum ferry_mech ferry_ladder_rndv(size_t n)
{
    if (n >= ferry_ladder.split_min && n < ferry_ladder.split_max)
        return FERRY_MECH_SPLIT;
    if (n >= ferry_ladder.cma_min && n < ferry_ladder.cma_max)
        return FERRY_MECH_CMA;
    return FERRY_MECH_PIPELINE;
}
/* Testing and calibration (MPIX_Ferry_p2p_force): every message by mechanism
 * m as far as it can carry it; FERRY_MECH_COUNT goes back to the model. */
void ferry_ladder_force(enum ferry_mech m);
/* Whether the rendezvous thresholds were set by hand (FERRY_CMA_MIN/MAX,
 * FERRY_SPLIT_MIN/MAX) or forced by a call: then they hold for every message. */
int ferry_ladder_forced(void);
/* The model and the thresholds, for FERRY_VERBOSE and ferry_info. */
void ferry_ladder_print(FILE *out);

#endif
