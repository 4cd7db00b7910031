/* The FERRY_* configuration table (see config.h). */
#include "core/config.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ferry_config ferry_cfg;

/* An integer variable, or, when `choices` is set, one of a comma-separated
 * list of names stored as its index (min/max are ignored then). */
struct config_var {
    const char *name;
    long *value;
    long dflt;
    long min, max;
    const char *help;
    const char *choices;
    const char **svalue;     /* a string variable: stored as is (value, min, max unused) */
    const char *sdflt;
};
#define COLL_VAR(NAME, field, algs)                                                                      \
    {.name = "FERRY_COLL_" NAME, .svalue = &ferry_cfg.field, .sdflt = "auto",                           \
     .help = "Force the " NAME " algorithm: auto|" algs "."}

static const struct config_var vars[] = {
    {"FERRY_SHM_RING", &ferry_cfg.shm_ring, -1, -1, 1L << 30,
     "Bytes of each sender->receiver shared-memory ring (one per pair of local ranks); a multiple of 64. "
     "-1: FERRY_SHM_BUDGET / local ranks, between 4 KiB and 2 MiB."},
    {"FERRY_SHM_BUDGET", &ferry_cfg.shm_budget, 4L << 20, 64L << 10, 1L << 34,
     "Bytes of receive rings each rank owns when FERRY_SHM_RING is -1; shared memory per node is then "
     "local ranks x this (linear in the number of ranks)."},
    {"FERRY_SHM_MAX_PACKET", &ferry_cfg.shm_max_packet, 32 * 1024, 256, 1L << 30,
     "Largest shared-memory packet in bytes, 64-byte header included (at most a quarter of the ring)."},
    {"FERRY_EAGER_MAX", &ferry_cfg.eager_max, -1, -1, 1L << 40,
     "Largest message (bytes) sent eagerly in one packet (never more than the packet's payload) to a receiver "
     "that waits for it (it has taken every earlier packet, but at most one header-only packet such as the FIN "
     "just sent to it: a ping-pong, a message after a pause); larger ones "
     "use rendezvous. -1: from the protocol cost model (FERRY_P2P_MODEL)."},
    {"FERRY_EAGER_BEHIND_MAX", &ferry_cfg.eager_behind_max, -1, -1, 1L << 40,
     "Largest message sent eagerly to a receiver still behind in a stream, whose copy-out then overlaps the "
     "sender's copy-in (never less than FERRY_EAGER_MAX). -1: every message a packet holds, or FERRY_EAGER_MAX when "
     "that is set. On the "
     "development VM, streams of 16 KiB ran 18-25% faster eagerly, where a ping-pong took 1.5-2.1 us by "
     "single copy against 2.3-2.6 eagerly."},
    {"FERRY_EAGER_STREAM", &ferry_cfg.eager_stream, 8192, -1, 1L << 40,
     "Eager messages from this many bytes up are published before they are written: the sender writes the "
     "packet in FERRY_EAGER_STREAM_CHUNK pieces and publishes each, so the receiver copies each piece out "
     "while the next goes in, instead of starting after the whole packet. Never while ranks outnumber CPUs "
     "(the receiver would wait on a sender that has no CPU). -1: never."},
    {"FERRY_EAGER_STREAM_CHUNK", &ferry_cfg.eager_stream_chunk, 4096, 64, 1L << 30,
     "Bytes of a streamed eager packet written between two publications of its progress."},
    {"FERRY_COLL_PULL_MIN", &ferry_cfg.coll_pull_min, 8192, -1, 1L << 40,
     "Messages of a binomial reduce (the receiver reduces them straight away) from this many bytes up go by "
     "rendezvous and the receiver pulls them whole with single copy, where the peer allows it, whatever the "
     "eager limit: the data then crosses the cores once, into the receiver's cache, instead of twice through "
     "the ring. -1: as any other message."},
    {.name = "FERRY_P2P_MODEL", .svalue = &ferry_cfg.p2p_model, .sdflt = "",
     .help = "Point-to-point cost model written by `mpiexec -n 2 ferry-tune --p2p -o FILE` (one-way times of "
             "eager, pipeline, cma and split per size); the ladder's thresholds are where the cheapest mechanism "
             "changes. \"\": the built-in model, measured on the development machine."},
    {"FERRY_CMA", &ferry_cfg.cma, -1, -1, 1,
     "Single-copy rendezvous with process_vm_readv: -1 probe each peer, 0 never, 1 probe and warn if denied."},
    {"FERRY_WIN_CMA", &ferry_cfg.win_cma, -1, -1, 0,
     "One-sided: reach MPI_Win_create and dynamic window memory of other ranks with process_vm_readv/writev: "
     "-1 where the probe allows it, 0 never (such windows then use active messages that the target serves "
     "while inside MPI calls; MPI_Win_allocate windows are shared memory either way)."},
    {"FERRY_SHM_FAULT_PULL", &ferry_cfg.shm_fault_pull, -1, -1, 1L << 40,
     "Testing only: -1 off; N >= 0: every single-copy pull or write after the first N fails with EPERM (simulates "
     "Cross Memory Attach denied mid-run; the copy path must take over)."},
    {"FERRY_SHM_FAULT_PUSH", &ferry_cfg.shm_fault_push, -1, -1, 1L << 40,
     "Testing only: -1 off; N >= 0: every single-copy write (the sender's share of a split single copy) "
     "after the first N fails with EPERM."},
    {"FERRY_CMA_MIN", &ferry_cfg.cma_min, -1, -1, 1L << 50,
     "Rendezvous messages from this size up (and below FERRY_CMA_MAX) are pulled with single copy "
     "(process_vm_readv) when the peer allows it. -1: from the cost model."},
    {"FERRY_CMA_MAX", &ferry_cfg.cma_max, -1, -1, 1L << 50,
     "Rendezvous messages from this size up take the pipelined copy through the rings instead of single "
     "copy. -1: from the cost model (on the development VM split single copy won at every "
     "rendezvous size, and pulled single copy at none)."},
    {"FERRY_SPLIT_MIN", &ferry_cfg.split_min, -1, -1, 1L << 50,
     "Rendezvous messages from this size up (and below FERRY_SPLIT_MAX) use split single copy when the peer "
     "allows it: the sender writes the head of the message into the receiver's buffer (process_vm_writev) "
     "while the receiver pulls the tail, so both cores copy at once. Checked before FERRY_CMA_MIN/MAX; "
     "-1: from the cost model, or none when FERRY_CMA_MIN/MAX are set and these are not. FERRY_CMA=0 turns "
     "it off with pulled single copy."},
    {"FERRY_SPLIT_MAX", &ferry_cfg.split_max, -1, -1, 1L << 50,
     "Rendezvous messages from this size up no longer use split single copy. -1: from the cost model."},
    {"FERRY_SPLIT_SHARE", &ferry_cfg.split_share, 50, 0, 100,
     "Split single copy: percent of the message the sender writes (the receiver pulls the rest)."},
    {"FERRY_RNDV_BOTH_WAYS", &ferry_cfg.rndv_both_ways, -1, -1, 1,
     "A rendezvous message from a peer this rank also sends rendezvous messages to (in flight, or started "
     "since the last one it received from there: an exchange, a bidirectional stream, a ping-pong): -1 single "
     "copy or the pipelined copy through the rings, whichever the receiver measured faster for that peer and "
     "size class (it times periods of receives from that peer: a message, an exchange or a window, and retries "
     "the slower mechanism every 20-640 ms, or 16 times the retry's length if longer, with a burst of 4 messages, "
     "the cheapest period counting); 1 always through "
     "the rings; 0 always as the ladder says (single copy). On the development VM the rings won 1.5-2.5x "
     "while its cores exchanged cache lines quickly and lost 5-10x in its slow phases (0-byte latency 0.38 instead of 0.10 us), where single copy kept its "
     "speed. Never when ranks outnumber CPUs or the thresholds are set by hand."},
    {"FERRY_RNDV_OVERSUB", &ferry_cfg.rndv_oversub, -1, -1, 1,
     "Rendezvous messages while ranks outnumber CPUs: 1 through the rings, 0 single copy (pulled by the "
     "receiver), -1 the rings up to 2 local ranks per CPU (of at least 2 CPUs) and single copy beyond, "
     "and single copy whenever large messages also go the other way between the pair (an alltoall, an "
     "exchange: every rank has "
     "copies of its own to make, and the rings copy each byte twice; 4 ranks on 2 CPUs, alltoall 128 KiB "
     "92 against 154 us, 2 MiB 1613 against 2315). With the rings the "
     "sender's copy-in and the receiver's copy-out run on both CPUs; with single copy the receiver copies "
     "alone, while the sender, which needs no CPU, may sleep. At 4 ranks on 2 CPUs of the development VM "
     "the rings were faster for one-way traffic (gather 1 MiB 168 against 394 us, scatter 256 KiB 38 "
     "against 112; an earlier run also had alltoall 1 MiB 1024 against 1470, which later interleaved runs "
     "did not repeat); at 8 ranks single copy mostly was (alltoall 1 MiB 7962 against 13003, "
     "multi-pair latency 1 MiB 251 against 384): a pipeline needs both ends on a CPU at once; on one CPU "
     "single copy (2 ranks, one-way 1-4 MiB 15.4-19.6 against 4.7-6.3 GB/s). Hand-set "
     "thresholds (FERRY_CMA_MIN/MAX, FERRY_SPLIT_MIN/MAX) win."},
    {"FERRY_CMA_CHUNK", &ferry_cfg.cma_chunk, 512 * 1024, 4096, 1L << 40,
     "Bytes copied per process_vm_readv/writev call (bounded so other traffic keeps moving)."},
    {"FERRY_STREAM_POLL_PAUSES", &ferry_cfg.stream_poll_pauses, 4, 1, 1L << 20,
     "With a CPU per rank: pause instructions between the empty polls of MPI_Waitall on more than 4 requests "
     "(a window of a stream; other waits pause once). Each poll reads the ring's head line, which a sender "
     "still streaming must take back for its next packet. 2 ranks on the development VM, 10 interleaved "
     "runs, 4 against 1: message rate 0-64 B 8.2-9.0M against 6.6-8.5M msg/s, bi-bandwidth unchanged. Not "
     "for every wait: with 4 pauses, waits for one or two requests (collectives, rendezvous) were up to 8% "
     "slower."},
    {"FERRY_CONNECT_TIMEOUT", &ferry_cfg.connect_timeout, 180, 0, 1L << 30,
     "Seconds MPI_Comm_connect waits for an MPI_Comm_accept on an open port before it fails with MPI_ERR_PORT "
     "(MPI: the attempt times out after an implementation-defined time); 0: it waits for ever. The info key "
     "\"timeout\" (seconds, as MPICH reads it) of a call overrides it."},
    {"FERRY_SPIN", &ferry_cfg.spin, 2000, 0, 1L << 40,
     "Empty progress polls a waiting rank makes before it yields the CPU (then once every 256 polls; oversubscribed ranks instead yield and sleep after a short spin)."},
    {"FERRY_THREAD_MAX", &ferry_cfg.thread_max, 3, 0, 3,
     "Highest thread level MPI_Init_thread provides: 0 single, 1 funneled, 2 serialized, 3 multiple (every MPI "
     "call then holds one process-wide lock, which waits hand to other threads)."},
    {"FERRY_VERBOSE", &ferry_cfg.verbose, 0, 0, 10,
     "Diagnostics on stderr: 1 decisions (transports, single copy), 2 more."},
    {"FERRY_STDOUT", &ferry_cfg.stdout_buf, FERRY_STDOUT_LINE, 0, 0,
     "Buffering of a rank's stdout when a launcher started it (MPI_Init sets it): line (Open MPI's choice), "
     "none (MPICH's) or keep (the C library's: full buffering into a pipe or file). With line or none, a "
     "rank killed because another one failed or called MPI_Abort has written the lines it printed.",
     "line,none,keep"},
    {"FERRY_EXIT_GRACE_MS", &ferry_cfg.exit_grace_ms, 1000, 0, 3600000,
     "Ferry's mpiexec: when a rank exits with status 0 without calling MPI_Finalize, the other ranks have this "
     "many milliseconds to finish on their own (as under hydra), then they are killed (a rank waiting for the one "
     "gone would wait for ever); the job's status is 1 either way. 0: kill them at once."},
    {"FERRY_OVERSUBSCRIBE", &ferry_cfg.oversubscribe, -1, -1, 1,
     "Idle ranks sleep on a futex instead of polling: -1 when local ranks outnumber their CPUs, 0 never, 1 always."},
    {"FERRY_SHM_HOT", &ferry_cfg.shm_hot, 16, 1, 1L << 20,
     "With more local ranks than this, a poll reads only the rings of this many hot peers (recent senders "
     "and receivers) and all others every FERRY_SHM_COLD_SCAN polls: polling cost follows the peers a rank "
     "talks to, not the job size."},
    {"FERRY_SHM_COLD_SCAN", &ferry_cfg.shm_cold_scan, 16, 1, 1L << 20,
     "Polls between reads of the rings of peers that are not hot (see FERRY_SHM_HOT)."},
    {"FERRY_OVERSUB_SPIN", &ferry_cfg.oversub_spin, 64, 0, 1L << 40,
     "Oversubscribed: empty progress polls a waiting rank makes before it starts yielding the CPU."},
    {"FERRY_OVERSUB_YIELDS", &ferry_cfg.oversub_yields, 16, 0, 1L << 40,
     "Oversubscribed: sched_yield calls a waiting rank makes (letting the peers it waits for run) before it "
     "sleeps on its futex until a sender rings it."},
    {"FERRY_OVERSUB_YIELD_US", &ferry_cfg.oversub_yield_us, 50, 0, 1L << 30,
     "Oversubscribed: microseconds a waiting rank goes on yielding after its count of yields "
     "(FERRY_OVERSUB_YIELDS, FERRY_COLL_SHM_YIELDS) before it sleeps on its futex; 0: sleep at once. Waking a "
     "sleeper costs far more than a yield where a CPU had nothing to run (on the development VM, 4 ranks on 2 "
     "CPUs, allreduce 16 KiB took 30-37 us in the runs where its ranks slept, 9-12 us in the others; yielding "
     "for 50 us first left no slow run)."},
    {"FERRY_SHM_BACKEND", &ferry_cfg.shm_backend, FERRY_SHM_BACKEND_MEMFD, 0, 0,
     "Where shared memory comes from: memfd (anonymous, handed over a UNIX socket; independent of /dev/shm) "
     "or posix (shm_open in /dev/shm).", "memfd,posix"},
    COLL_VAR("BARRIER", coll_barrier, "dissemination|binomial|shm"),
    COLL_VAR("BCAST", coll_bcast, "binomial|scatter_allgather|chain|hier|shm"),
    COLL_VAR("GATHER", coll_gather, "binomial|linear|shm"),
    COLL_VAR("GATHERV", coll_gatherv, "linear"),
    COLL_VAR("SCATTER", coll_scatter, "binomial|linear|shm"),
    COLL_VAR("SCATTERV", coll_scatterv, "linear"),
    COLL_VAR("ALLGATHER", coll_allgather, "ring|recursive_doubling|bruck|linear|shm"),
    COLL_VAR("ALLGATHERV", coll_allgatherv, "ring|linear"),
    COLL_VAR("ALLTOALL", coll_alltoall, "pairwise|linear|bruck|shm"),
    COLL_VAR("ALLTOALLV", coll_alltoallv, "pairwise|linear"),
    COLL_VAR("ALLTOALLW", coll_alltoallw, "pairwise|linear"),
    COLL_VAR("REDUCE", coll_reduce, "binomial|redscat_gather|hier|shm"),
    COLL_VAR("ALLREDUCE", coll_allreduce, "recursive_doubling|redscat_allgather|ring|reduce_bcast|hier|shm"),
    COLL_VAR("REDUCE_SCATTER", coll_reduce_scatter, "reduce_scatterv|ring|pairwise"),
    COLL_VAR("REDUCE_SCATTER_BLOCK", coll_reduce_scatter_block, "reduce_scatterv|ring|pairwise"),
    COLL_VAR("SCAN", coll_scan, "recursive_doubling|linear"),
    COLL_VAR("EXSCAN", coll_exscan, "recursive_doubling|linear"),
    {.name = "FERRY_COLL_TABLE", .svalue = &ferry_cfg.coll_table, .sdflt = "",
     .help = "Collective algorithm table written by ferry-tune; forced algorithms (FERRY_COLL_<NAME>) win."},
    {"FERRY_COLL_SEGMENT", &ferry_cfg.coll_segment, 64 * 1024, 64, 1L << 30,
     "Bytes per segment of pipelined collective algorithms (bcast chain)."},
    {"FERRY_COLL_FAKE_PPN", &ferry_cfg.coll_fake_ppn, 0, 0, 1 << 20,
     "Testing: node-aware collectives pretend nodes of this many consecutive ranks; 0: real placement."},
    {"FERRY_COLL_SHM", &ferry_cfg.coll_shm, 1, 0, 1,
     "Shared-memory collectives (per-rank flags in a per-communicator segment) for ranks of one node."},
    {"FERRY_COLL_SHM_SLOT", &ferry_cfg.coll_shm_slot, 128 * 1024, 4096, 1L << 30,
     "Bytes of each rank's slot (two per rank) in a communicator's collective segment; larger messages "
     "are pipelined through it in chunks. Halved per doubling of ranks above 8 (down to 16 KiB)."},
    {"FERRY_COLL_SHM_CHUNK", &ferry_cfg.coll_shm_chunk, 32 * 1024, 4096, 1L << 30,
     "With a CPU per rank: bytes per step of a shared-memory collective (a rank's two slots hold "
     "2 * slot / chunk steps in flight, so that copy-in and copy-out of large messages overlap). "
     "Oversubscribed, a step is a whole slot."},
    {"FERRY_COLL_SHM_MAX", &ferry_cfg.coll_shm_max, 32768, 0, 1L << 40,
     "Default rules with a CPU per rank: bcast, scatter and alltoall up to this many bytes per rank use "
     "shared memory (above, the point-to-point algorithms over the pipelined rings move the data)."},
    {"FERRY_COLL_SHM_GATHER_MAX", &ferry_cfg.coll_shm_gather_max, 16384, 0, 1L << 40,
     "The same limit for gather (above it, with 2 MiB point-to-point rings, the pipelined point-to-point "
     "algorithms were twice as fast at 128 KiB on the development VM)."},
    {"FERRY_COLL_SHM_ALLGATHER_MAX", &ferry_cfg.coll_shm_allgather_max, 16384, 0, 1L << 40,
     "The same limit for allgather."},
    {"FERRY_COLL_SHM_PAIR_MAX", &ferry_cfg.coll_shm_pair_max, 4096, 0, 1L << 40,
     "Default rules with a CPU per rank, for communicators of 2 ranks: every collective but reduce above "
     "this many bytes per rank runs point to point, whatever the limits above. With two ranks the segment "
     "brings no fan-out, only two copies through lines the previous call left in the other core's cache; the "
     "point-to-point rings (2 MiB, aged out of that cache) and single copy were faster from 8-16 KiB on "
     "the development VM (16 KiB: bcast 2.2 against 2.7 us, reduce 2.6 against 4.1, alltoall 1.9 against "
     "3.2), and kept their speed when the VM's cross-core latency tripled (bcast 16 KiB 7.6 against 11.1)."},
    {"FERRY_COLL_SHM_PAIR_REDUCE_MAX", &ferry_cfg.coll_shm_pair_reduce_max, -1, -1, 1L << 40,
     "Default rules with a CPU per rank: reduce in a communicator of 2 ranks uses shared memory up to this "
     "many bytes (-1: at every size), not FERRY_COLL_SHM_PAIR_MAX. The root reduces straight out of the "
     "peer's slot into the result while the peer copies its next chunk in, so both cores work at once; "
     "point to point receives the whole vector, then reduces it. 2 ranks on the development VM, float sum: "
     "16 KiB 3.1 against 3.4 us, 64 KiB 7.5 against 10.4, 256 KiB 20.7 against 29.8, 1 MiB 93 against 121 "
     "(with the vectorized three-operand reduction; allreduce stays faster point to point). Sizes in "
     "FERRY_COLL_PAIR_REDUCE_P2P_MIN..MAX go point to point all the same."},
    {"FERRY_COLL_PAIR_REDUCE_P2P_MIN", &ferry_cfg.coll_pair_reduce_p2p_min, 16384, -1, 1L << 40,
     "Default rules with a CPU per rank: reduce in a communicator of 2 ranks goes point to point (binomial) "
     "from this many bytes up to FERRY_COLL_PAIR_REDUCE_P2P_MAX, whatever FERRY_COLL_SHM_PAIR_REDUCE_MAX says "
     "(-1: never). The root pulls the peer's whole vector with single copy into the result and reduces it "
     "there: one crossing of the cores per byte, where the shared-memory slot takes two (the peer's copy-in "
     "takes the lines from the root's cache). Float sum, 2 ranks, 2 interleaved runs against shared memory: "
     "32 KiB 3.2-4.1 against 5.9-6.0 us, 128 KiB 8.8-10.3 against 13.6-14.0, 512 KiB 36-41 against 39-40; at "
     "1 MiB and above shared memory's overlap of the two cores wins (88-96 against 138-158)."},
    {"FERRY_COLL_PAIR_REDUCE_P2P_MAX", &ferry_cfg.coll_pair_reduce_p2p_max, 524288, -1, 1L << 40,
     "The largest reduce of 2 ranks that FERRY_COLL_PAIR_REDUCE_P2P_MIN sends point to point."},
    {"FERRY_COLL_SHM_OVERSUB_MAX", &ferry_cfg.coll_shm_oversub_max, -1, -1, 1L << 40,
     "Default rules when ranks outnumber CPUs: the same limit for every collective. -1: per collective, as "
     "measured on the development VM at 4 and 8 ranks on 2 CPUs: scatter up to 4 KiB and from the eager "
     "limit up to 32 KiB (between, the linear algorithm's eager sends let each receiver copy while the root "
     "writes the next block: 16 KiB 1.5x faster; above, its root cuts a step into one block per rank, and at "
     "64 KiB linear was 1.1x faster at 4 ranks, 1.4x at 8); alltoall up to 32 KiB "
     "per block (at 64 KiB the linear algorithm was as fast at 4 ranks, with no slow runs, where shared "
     "memory took 78-96 us in 3 of 7, and 1.35x faster at 8 ranks: 253 against 345 us; at 128 KiB 1.15x "
     "and 1.6x, at 256 KiB 1.3x and 2x); gather "
     "and allreduce up to 512 KiB (above, the point-to-point algorithms, whose per-pair rings take a whole "
     "message without waiting, were 1.3-2x faster); bcast (and ibcast) up to 2 MiB (at 8 ranks and 1 MiB "
     "1.3-2.5x faster than the point-to-point ones; at 4 MiB no better); reduce and allgather always."},
    {"FERRY_COLL_SHM_BARRIER", &ferry_cfg.coll_shm_barrier, FERRY_SHM_BARRIER_AUTO, 0, 0,
     "Shared-memory barrier: flat (every rank waits for every arrival; the last to arrive leaves at once) "
     "or release (a lead rank waits for the arrivals, then releases the others: one more hand-over, but the "
     "lead leaves first; lead: the root of the rooted collective called right after the previous barrier on "
     "the communicator, else rank 0). auto: when that call was a bcast or scatter, release by its root (when "
     "the pattern repeats, the root's data is posted before the others look); a gather or reduce, flat with "
     "its root leaving last, once the others have left (their data is posted before the root looks); "
     "otherwise flat (a barrier loop then costs one hand-over, oversubscribed one context switch per CPU and "
     "barrier, not two). With a CPU per rank, 2 ranks, 2 interleaved runs against flat: the time per call "
     "after a barrier (what OSU-style benchmarks report) of bcast 64 B 0.24-0.25 against 0.35-0.45 us, "
     "gather 64 B 0.21-0.26 against 0.52, scatter 4 KiB 1.10 against 1.29-1.34; barrier plus call 0.57-0.58 "
     "against 0.57-0.60, 0.61-0.65 against 0.66-0.68 and 1.44-1.48 against 1.45-1.49 (reduce 64 B 0.72-0.76 "
     "against 0.68-0.70).", "auto,flat,release"},
    {"FERRY_COLL_SHM_REDUCE_MAX", &ferry_cfg.coll_shm_reduce_max, 16384, 0, 1L << 40,
     "Default rules with a CPU per rank: reduce and allreduce up to this many bytes use shared memory "
     "(above, point-to-point reduce-scatter/allgather and binomial trees won on the development VM); "
     "oversubscribed, FERRY_COLL_SHM_OVERSUB_MAX applies."},
    {"FERRY_COLL_SHM_FLAT_MAX", &ferry_cfg.coll_shm_flat_max, 16384, 0, 1L << 40,
     "Shared-memory allreduce: vectors up to this many bytes are reduced whole by every rank (one step); "
     "larger ones by reduce-scatter + allgather (each rank reduces 1/n)."},
    {"FERRY_COLL_SHM_SPIN", &ferry_cfg.coll_shm_spin, 0, 0, 1L << 30,
     "Oversubscribed: empty polls (with a pause) a rank waiting in a shared-memory collective makes before "
     "it yields. The flags it waits for come from ranks that need its CPU: at 4 and 8 ranks on 2 CPUs of "
     "the development VM, yielding at once made small collectives 25-40% faster than 16 polls."},
    {"FERRY_COLL_SHM_YIELDS", &ferry_cfg.coll_shm_yields, 8, 0, 1L << 30,
     "Oversubscribed: a rank waiting in a shared-memory collective yields the CPU this many times, then "
     "sleeps on a futex until a peer publishes."},
};

/* Index of s in the comma-separated list, -1 if absent. */
static long choice_index(const char *choices, const char *s)
{
    size_t n = strlen(s);
    long i = 0;
    for (const char *p = choices; *p; i++) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, s, n))
            return i;
        if (!e)
            break;
        p = e + 1;
    }
    return -1;
}

/* Name of choice i (into buf). */
static const char *choice_name(const char *choices, long i, char *buf, size_t len)
{
    const char *p = choices;
    for (; i > 0 && p; i--) {
        p = strchr(p, ',');
        if (p)
            p++;
    }
    if (!p)
        return "?";
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
    return buf;
}

/* An integer, optionally with a binary suffix K, M or G (FERRY_CMA_MAX=1G):
 * most variables are byte counts. Unlike ferry-bench's --min-size, no B or
 * iB after it: a FERRY_* value is the number alone. */
static int parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 0);
    if (errno || end == s)
        return -1;
    int shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    default: return -1;
    }
    if (shift && end[1])
        return -1;
    if (x > (LONG_MAX >> shift) || x < (LONG_MIN >> shift))
        return -1;
    *out = x * (1L << shift);
    return 0;
}

static void die_bad(const struct config_var *v, const char *s)
{
    if (v->choices)
        fprintf(stderr, "ferry: invalid value '%s' for %s (expected one of %s): %s\n", s, v->name, v->choices,
                v->help);
    else
        fprintf(stderr, "ferry: invalid value '%s' for %s (expected an integer in [%ld, %ld], optionally with "
                "K, M or G): %s\n", s, v->name, v->min, v->max, v->help);
    exit(1);
}

void ferry_config_load(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const struct config_var *v = &vars[i];
        const char *s = getenv(v->name);
        if (v->svalue) {
            *v->svalue = s && *s ? s : v->sdflt;
            continue;
        }
        *v->value = v->dflt;
        if (!s || !*s)
            continue;
        if (v->choices) {
            long i = choice_index(v->choices, s);
            if (i < 0)
                die_bad(v, s);
            *v->value = i;
            continue;
        }
        long x;
        if (parse_count(s, &x) || x < v->min || x > v->max)
            die_bad(v, s);
        *v->value = x;
    }
    if (ferry_cfg.shm_ring != -1 && (ferry_cfg.shm_ring < 4096 || ferry_cfg.shm_ring % 64))
        die_bad(&vars[0], getenv("FERRY_SHM_RING"));
}

/* FERRY_* names that are not tunables but are set for Ferry by its own
 * tools (mpiexec, mpicc, the benchmark and test drivers). */
static int internal_name(const char *name, size_t len)
{
    static const char *const names[] = {"FERRY_LOCAL_RANK", "FERRY_LOCAL_SIZE", "FERRY_MPICC_ACTIVE",
                                        "FERRY_COMPARE_REEXEC"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && !strncmp(names[i], name, len))
            return 1;
    return len > 11 && !strncmp(name, "FERRY_TEST_", 11);
}

int ferry_config_unknown(FILE *out)
{
    extern char **environ;
    int n = 0;
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
        if (strncmp(*e, "FERRY_", 6) || internal_name(*e, len))
            continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)len, *e);
        if (len < sizeof name && ferry_config_index(name) >= 0)
            continue;
        fprintf(out, "ferry: %.*s is not a Ferry variable and is ignored (`ferry_info --env` lists them)\n", (int)len,
                *e);
        n++;
    }
    return n;
}

void ferry_config_print(FILE *out)
{
    fprintf(out, "%-22s %-10s %s\n", "Variable", "Default", "Meaning");
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const struct config_var *v = &vars[i];
        char d[64];
        if (v->svalue)
            snprintf(d, sizeof d, "%s", *v->sdflt ? v->sdflt : "\"\"");
        else if (v->choices)
            choice_name(v->choices, v->dflt, d, sizeof d);
        else
            snprintf(d, sizeof d, "%ld", v->dflt);
        fprintf(out, "%-22s %-10s %s%s%s%s\n", v->name, d, v->help, v->choices ? " Choices: " : "",
                v->choices ? v->choices : "", v->choices ? "." : "");
    }
}

/* ---- the table as data, for the MPI_T tool interface (api/mpit.c) ---------- */

int ferry_config_count(void)
{
    return (int)(sizeof vars / sizeof vars[0]);
}

int ferry_config_index(const char *name)
{
    for (int i = 0; name && i < ferry_config_count(); i++)
        if (!strcmp(vars[i].name, name))
            return i;
    return -1;
}

void ferry_config_describe(int i, struct ferry_config_desc *d)
{
    const struct config_var *v = &vars[i];
    d->name = v->name;
    d->help = v->help;
    d->choices = v->choices;
    d->is_string = v->svalue != NULL;
    d->fits_int = !d->is_string && v->min >= -2147483647L - 1 && v->max <= 2147483647L;
}

long ferry_config_value(int i)
{
    return vars[i].value ? *vars[i].value : 0;
}

const char *ferry_config_string(int i)
{
    return vars[i].svalue && *vars[i].svalue ? *vars[i].svalue : "";
}
