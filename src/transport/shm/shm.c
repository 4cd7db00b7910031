/* The shared-memory transport (see shm_layout.h for the layout, segment.h
 * for where the memory comes from).
 *
 * Memory ordering of a ring: the producer fills a packet with plain stores
 * and publishes it twice, with a release store of its header's seal and then
 * one of head. The consumer reads either with an acquire load, so the
 * packet's contents are visible before it reads them: a blocking receive
 * polls the seal at its tail (shm_peek), the progress loop head
 * (poll_ring). A seal found set is this lap's: before sealing a packet, the
 * producer clears the seal where the next packet will start (the
 * terminator), so the consumer, arriving there after this packet, finds 0 or
 * the next packet, never an older lap's header or payload. The consumer
 * finishes reading a packet before its release store of tail; the producer
 * reads tail with acquire before reusing the bytes (and keeps a line free
 * for the terminator). Nothing else is shared on the message path, so no
 * locks and no read-modify-write atomics.
 *
 * Sleeping (oversubscribed nodes only): the owner stores armed = 1, then
 * re-checks every ring, then futex-waits on bell. A producer stores head,
 * then reads armed. Both sides put a full (seq_cst) fence between their store
 * and their load, so at least one of them sees the other's store: either the
 * owner sees the new head and does not sleep, or the producer sees armed and
 * wakes it. Without oversubscription nobody arms and the fence is skipped. */
#include "transport/transport.h"
#include "transport/cma.h"
#include "transport/shm/segment.h"
#include "transport/shm/shm_layout.h"
#include "boot/boot.h"
#include "core/biglock.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/util.h"
#include "proto/proto.h"
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

struct shm_out {            /* this rank's view of its ring in a peer's region */
    struct shm_ring_ctl *ctl;
    char *data;
    struct shm_doorbell *bell;
    uint64_t head;          /* private copy: we are the only writer */
    uint64_t off;           /* head's offset in the ring (head % ring_bytes, kept without dividing) */
    uint64_t tail_cache;    /* last tail we read; refreshed only when the ring looks full */
    struct ferry_pkt *skip; /* a SKIP written by reserve, sealed by commit after the packet */
    uint64_t terminated;    /* ring offset of the terminator reserve wrote (UINT64_MAX: none) */
};

struct shm_in {             /* a ring in our own region */
    struct shm_ring_ctl *ctl;
    char *data;
    uint64_t tail;
    uint64_t off;           /* tail's offset in the ring (tail % ring_bytes, kept without dividing) */
    int world;              /* world rank of the producer */
    uint32_t peek_lines;    /* lines of the next packet shm_peek fetches along with head */
};

static struct {
    uint32_t nlocal, ring_bytes, max_packet;
    size_t stride;              /* bytes per region */
    char *base;                 /* the node segment */
    void *mine;                 /* our region */
    struct shm_in *in;          /* by local index */
    struct shm_out *out;        /* by world rank (only local peers used) */
    unsigned char *pull_ok;     /* by world rank */
    int may_sleep;              /* node is oversubscribed: producers must check doorbells */
    /* hot peers (local indices), see make_hot() */
    int hot_max, nhot;
    uint32_t *hot;              /* [hot_max] */
    int *hot_of;                /* by local index: slot in hot[], or -1 */
    uint64_t *hot_seen;         /* [hot_max]: poll count of the slot's last traffic */
    uint64_t polls;
} shm;

/* Automatic ring sizes: budget / local ranks within these bounds. The floor
 * keeps memory linear in the local ranks up to budget / floor = 1024 of them
 * (a 4 KiB ring still carries 1 KiB packets, many in flight). */
#define SHM_RING_MIN (4u << 10)
/* The ceiling: a ring larger than a core's L2 (1 MiB here) streams about
 * twice as fast, measured: the lines a sender reuses have aged out of the
 * receiver's private cache, so claiming them needs no cross-core snoop. */
#define SHM_RING_MAX (2u << 20)
#define SHM_PREFETCH_AHEAD 256   /* bytes: four small packets */
/* Bytes of a reserved packet whose lines the sender asks ownership of at
 * once, before it writes them. The consumer read them a lap ago; left to
 * the copy, each line's ownership request waits its turn in the store
 * buffer, one cross-core round trip after another. 2 ranks, 5 interleaved
 * runs, medians, against none (the same build): latency 256 B 0.38 against
 * 0.43 us, 1 KiB 0.43 against 0.61, 4 KiB 0.95 against 1.08; message rate
 * 256 B 13.7M against 7.6M msg/s; bandwidth 256 B 3.3 against 1.8 GB/s,
 * 4 KiB 14.5 against 11.8; bi-bandwidth 1 KiB 11.4 against 9.7. Whole
 * 32 KiB packets did no better than their first 4 KiB (the copy's own
 * prefetching takes over), and sizes from 32 KiB were unchanged. */
#define SHM_PREFETCH_PACKET 4096
#define SHM_RX_PREFETCH (64 + 1024)   /* bytes of a packet the receiver prefetches */

static inline void *region(uint32_t local)
{
    return shm.base + (size_t)local * shm.stride;
}

static void init_own_region(void)
{
    /* first touch by the owner (the receiver) */
    memset(shm.mine, 0, shm.stride);
    struct shm_region_hdr *h = shm.mine;
    h->version = FERRY_SHM_VERSION;
    h->nlocal = shm.nlocal;
    h->ring_bytes = shm.ring_bytes;
    h->max_packet = shm.max_packet;
    h->owner_rank = ferry_rt.world_rank;
    h->owner_pid = (int32_t)getpid();
    h->cma_probe = FERRY_SHM_MAGIC ^ (uint64_t)getpid();
    cpu_set_t set;
    struct shm_cpuset *mask = shm_cpuset(shm.mine);
    int known = sched_getaffinity(0, sizeof set, &set) == 0;
    for (int c = 0; c < SHM_CPUSET_WORDS * 64; c++)
        if (!known || (c < CPU_SETSIZE && CPU_ISSET(c, &set)))
            mask->bits[c / 64] |= (uint64_t)1 << (c % 64);
    h->magic = FERRY_SHM_MAGIC;
}

static void check_region(uint32_t local, int world)
{
    struct shm_region_hdr *h = region(local);
    if (h->magic != FERRY_SHM_MAGIC || h->version != FERRY_SHM_VERSION || h->nlocal != shm.nlocal ||
        h->ring_bytes != shm.ring_bytes || h->max_packet != shm.max_packet)
        ferry_fatal("MPI_Init: rank %d's shared memory has a different layout (mixed Ferry versions or "
                    "FERRY_SHM_* settings?)", world);
}

/* Map the pages of a ring we write into our page tables now. The owner
 * first-touched them, but our own first store to each page would still take a
 * minor fault: with 2 MiB rings, small-message ping-pong ran about 30% slower
 * for its first ~30000 messages (one fault per 64 messages) until it had
 * walked the whole ring once. Needs Linux 5.14; older kernels fault lazily. */
static void populate(char *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095, e = ((uintptr_t)p + len + 4095) & ~(uintptr_t)4095;
    (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)p, (void)len;
#endif
}

/* Single copy is decided per peer by a real read: same user namespace,
 * ptrace permission, no seccomp filter in the way. */
static int probe_pull(int world, uint64_t remote_hdr)
{
    struct shm_region_hdr *h = region((uint32_t)ferry_rt.peers[world].local);
    uint64_t got = 0;
    struct iovec l = {&got, sizeof got};
    struct iovec r = {(void *)(uintptr_t)(remote_hdr + offsetof(struct shm_region_hdr, cma_probe)), sizeof got};
    ssize_t n = process_vm_readv(h->owner_pid, &l, 1, &r, 1, 0);
    int ok = n == (ssize_t)sizeof got && got == h->cma_probe;
    if (!ok)
        ferry_log(1, "single copy with rank %d unavailable (%s); using the copy path", world,
                  n < 0 ? strerror(errno) : "probe mismatch");
    return ok;
}

/* The CPUs the ranks of this node may run on: the union of their affinity
 * masks. Ranks bound one per core count one CPU each; ranks that all inherit
 * one CPU from `taskset` on the launcher count one together. */
static uint64_t local_cpus(void)
{
    uint64_t cpus = 0;
    for (int w = 0; w < SHM_CPUSET_WORDS; w++) {
        uint64_t any = 0;
        for (uint32_t i = 0; i < shm.nlocal; i++)
            any |= shm_cpuset(region(i))->bits[w];
        cpus += (uint64_t)__builtin_popcountll(any);
    }
    return cpus ? cpus : 1;
}

/* Oversubscribed when the ranks of this node have fewer CPUs among them than
 * there are ranks. */
static int decide_sleep(void)
{
    if (ferry_cfg.oversubscribe >= 0)
        return (int)ferry_cfg.oversubscribe;
    return (uint64_t)shm.nlocal > (uint64_t)ferry_rt.local_cpus;
}

static int shm_init(void)
{
    int nlocal = ferry_rt.local_size;
    shm.nlocal = (uint32_t)nlocal;
    shm.ring_bytes = (uint32_t)ferry_cfg.shm_ring;
    if (ferry_cfg.shm_ring < 0) {
        /* a fixed budget per receiver, split among its senders: memory per
         * node grows linearly with the local ranks */
        uint64_t r = (uint64_t)ferry_cfg.shm_budget / (uint64_t)nlocal;
        r = r < SHM_RING_MIN ? SHM_RING_MIN : r > SHM_RING_MAX ? SHM_RING_MAX : r;
        shm.ring_bytes = (uint32_t)(r & ~(uint64_t)63);
    }
    /* a packet at most a quarter of the ring, so several pieces of a large
     * message are in flight at once */
    shm.max_packet = (uint32_t)FERRY_MIN((uint64_t)ferry_cfg.shm_max_packet, (uint64_t)shm.ring_bytes / 4);
    shm.stride = shm_region_size(shm.nlocal, shm.ring_bytes);
    shm.in = ferry_xcalloc((size_t)nlocal, sizeof *shm.in);
    shm.out = ferry_xcalloc((size_t)ferry_rt.npeers, sizeof *shm.out);   /* indexed by uid */
    shm.pull_ok = ferry_xcalloc((size_t)ferry_rt.npeers, 1);
    shm.hot_max = (int)FERRY_MIN((long)nlocal, ferry_cfg.shm_hot);
    shm.hot = ferry_xcalloc((size_t)shm.hot_max + 1, sizeof *shm.hot);
    shm.hot_seen = ferry_xcalloc((size_t)shm.hot_max + 1, sizeof *shm.hot_seen);
    shm.hot_of = ferry_xmalloc((size_t)nlocal * sizeof *shm.hot_of);
    for (int i = 0; i < nlocal; i++)
        shm.hot_of[i] = -1;

    if (ferry_cfg.cma != 0)
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);   /* Yama ptrace_scope=1 */
    shm.base = ferry_shm_segment_attach(shm.stride, nlocal, ferry_rt.local_rank);
    shm.mine = region((uint32_t)ferry_rt.local_rank);
    init_own_region();
    /* its pages locked by their owner stay mapped for every rank (a locked
     * page is not reclaimed at all) */
    ferry_shm_keep_resident(shm.mine, shm.stride, "shm: receive rings");
    char val[64];
    snprintf(val, sizeof val, "%llx", (unsigned long long)(uintptr_t)shm.mine);
    ferry_boot_put("shm-addr", val);
    ferry_boot_fence();
    /* Everyone has mapped the segment: a name, if any, can go. From here on a
     * crash of any rank leaves nothing behind in /dev/shm. */
    ferry_shm_segment_seal();

    for (int k = 0; k < ferry_rt.world_size; k++) {
        int w = ferry_rt.uid_base + k;   /* the world rank k's uid */
        int i = ferry_rt.peers[w].local;
        if (i < 0)
            continue;
        check_region((uint32_t)i, k);
        ferry_rt.peers[w].pid = ((struct shm_region_hdr *)region((uint32_t)i))->owner_pid;
        /* our ring inside peer i's region is the one indexed by our local rank */
        shm.out[w].ctl = shm_ring_ctl(region((uint32_t)i), (uint32_t)ferry_rt.local_rank);
        shm.out[w].data = shm_ring_data(region((uint32_t)i), shm.nlocal, shm.ring_bytes, (uint32_t)ferry_rt.local_rank);
        shm.out[w].bell = shm_doorbell(region((uint32_t)i));
        populate(shm.out[w].data, shm.ring_bytes);
        shm.in[i].ctl = shm_ring_ctl(shm.mine, (uint32_t)i);
        shm.in[i].data = shm_ring_data(shm.mine, shm.nlocal, shm.ring_bytes, (uint32_t)i);
        shm.in[i].world = w;
        if (ferry_cfg.cma != 0) {
            char addr[64];
            if (ferry_boot_get(k, "shm-addr", addr, sizeof addr))
                ferry_fatal("MPI_Init: rank %d published no shared-memory address", k);
            shm.pull_ok[w] = (unsigned char)probe_pull(w, strtoull(addr, NULL, 16));
            if (!shm.pull_ok[w] && ferry_cfg.cma == 1)
                fprintf(stderr, "ferry: rank %d: warning: FERRY_CMA=1 but single copy with rank %d is denied\n",
                        ferry_rt.world_rank, k);
        }
    }
    ferry_rt.local_cpus = (int)local_cpus();
    shm.may_sleep = decide_sleep();
    ferry_rt.oversubscribed = shm.may_sleep;
    ferry_log(1, "shm: %u local ranks, %u KiB rings, packets up to %u bytes, %zu KiB per rank%s", shm.nlocal,
              shm.ring_bytes / 1024, shm.max_packet, shm.stride / 1024,
              shm.may_sleep ? ", oversubscribed: idle ranks sleep" : "");
    return 0;
}

static void shm_finalize(void)
{
    ferry_shm_segment_detach(shm.base, shm.stride * shm.nlocal);
    free(shm.in);
    free(shm.out);
    free(shm.pull_ok);
    free(shm.hot);
    free(shm.hot_seen);
    free(shm.hot_of);
    memset(&shm, 0, sizeof shm);
}

/* A blocking receive spinning in shm_peek fetches the next packet's first
 * lines together with head: the loads then travel at once, where otherwise
 * the packet's load waits for head's (the branch on head predicts "empty"
 * while spinning). It costs the sender an ownership request for lines the
 * spinning receiver keeps reading, which pays for small packets only; the
 * span of the last packet taken here predicts the next one's (a ping-pong
 * repeats its size). 2 ranks, 5 interleaved runs, medians, one-way latency
 * against no prefetch: 0-32 B 0.21-0.23 against 0.25-0.29 us, 64 B 0.27
 * against 0.29, 128 B 0.35 against 0.41, 512 B 0.50 against 0.52; from 1 KiB
 * on it was 5% slower, so no prefetch there. Streams (bw, bibw, message rate)
 * wait in poll_ring and do not come here: unchanged, once both builds had
 * their functions at the same alignment (a shift of the hot ring functions
 * alone moved small-message bi-bandwidth by 10%). */
#define SHM_PEEK_SPAN_MAX (64 + 512)

static inline void note_span(struct shm_in *in, uint64_t span)
{
    in->peek_lines = span <= 64 ? 1 : span <= SHM_PEEK_SPAN_MAX ? 2 : 0;
}

/* Ring offset x (below twice the ring's size) brought into the ring. Head
 * and tail carry their offsets along this way: a 64-bit division per use
 * (the ring need not be a power of two) was several on every message's
 * path, one on every poll. */
static inline uint64_t ring_wrap(uint64_t x)
{
    return x >= shm.ring_bytes ? x - shm.ring_bytes : x;
}

/* The packet at a consumer's tail, if the producer has sealed it. */
static inline const struct ferry_pkt *sealed_at(const struct shm_in *in)
{
    const struct ferry_pkt *pkt = (const struct ferry_pkt *)(in->data + in->off);
    return __atomic_load_n(&pkt->seal, __ATOMIC_ACQUIRE) ? pkt : NULL;
}

/* Done reading bytes at the ring's tail: hand them back to the producer. */
static inline void ring_release(struct shm_in *in, uint64_t bytes)
{
    in->tail += bytes;
    in->off = ring_wrap(in->off + bytes);
    __atomic_store_n(&in->ctl->tail, in->tail, __ATOMIC_RELEASE);
}

/* Drain ring i; returns the packets handled. */
static int poll_ring(uint32_t i)
{
    int handled = 0;
    struct shm_in *in = &shm.in[i];
    uint64_t head = __atomic_load_n(&in->ctl->head, __ATOMIC_ACQUIRE);
    while (in->tail < head) {
        uint64_t off = in->off;
        const struct ferry_pkt *pkt = (const struct ferry_pkt *)(in->data + off);
        /* more than a header arrived: fetch the next lines while the
         * header's line is on its way, so the transfers overlap (up to a
         * 1 KiB payload: 256 B latency 0.15 -> 0.125 us against fetching
         * three lines; they stop at head and at the ring's end) */
        for (uint64_t l = 64; l < SHM_RX_PREFETCH && l < head - in->tail && off + l < shm.ring_bytes; l += 64)
            __builtin_prefetch((const char *)pkt + l);
        uint64_t span = shm.ring_bytes - off;   /* SKIP: the rest of the ring */
        if (pkt->type != SHM_PKT_SKIP) {
            ferry_proto_receive(in->world, pkt);
            span = shm_pkt_span(pkt->payload);
            handled++;
        }
        ring_release(in, span);
    }
    return handled;
}

/* Our ring from world rank peer. */
static struct shm_in *ring_from(int peer)
{
    return &shm.in[ferry_rt.peers[peer].local];
}

/* The next packet on the ring from world rank peer (SKIPs stepped over). */
static const struct ferry_pkt *shm_peek(int peer)
{
    struct shm_in *in = ring_from(peer);
    uint64_t next = in->off;
    for (uint32_t l = 1; l < in->peek_lines && next + 64 * l < shm.ring_bytes; l++)
        __builtin_prefetch(in->data + next + 64 * l);   /* see SHM_PEEK_SPAN_MAX */
    const struct ferry_pkt *pkt;
    while ((pkt = sealed_at(in))) {
        if (pkt->type != SHM_PKT_SKIP)
            return pkt;
        ring_release(in, shm.ring_bytes - in->off);
    }
    return NULL;
}

/* The packet shm_peek returned is handled: hand its bytes back. */
static void shm_consume(int peer)
{
    struct shm_in *in = ring_from(peer);
    const struct ferry_pkt *pkt = (const struct ferry_pkt *)(in->data + in->off);
    uint64_t span = shm_pkt_span(pkt->payload);
    note_span(in, span);
    ring_release(in, span);
}

/* Hot peers: with many local ranks, every poll reads the rings of at most
 * FERRY_SHM_HOT peers (those that sent to us or that we sent to lately), and
 * only every FERRY_SHM_COLD_SCAN-th poll reads all the others; a cold ring
 * found with data becomes hot, replacing the one idle longest. Polling cost
 * then follows the peers a rank talks to, not the job size; a message from a
 * cold peer waits at most one scan interval longer. */
static void make_hot(uint32_t i)
{
    if (shm.hot_of[i] >= 0) {
        shm.hot_seen[shm.hot_of[i]] = shm.polls;
        return;
    }
    int slot = 0;
    if (shm.nhot < shm.hot_max) {
        slot = shm.nhot++;
    } else {
        for (int k = 1; k < shm.nhot; k++)
            if (shm.hot_seen[k] < shm.hot_seen[slot])
                slot = k;
        shm.hot_of[shm.hot[slot]] = -1;
    }
    shm.hot[slot] = i;
    shm.hot_of[i] = slot;
    shm.hot_seen[slot] = shm.polls;
}

static int shm_poll(void)
{
    int handled = 0;
    if (shm.nlocal <= (uint32_t)shm.hot_max) {
        for (uint32_t i = 0; i < shm.nlocal; i++)
            handled += poll_ring(i);
        return handled;
    }
    shm.polls++;
    for (int k = 0; k < shm.nhot; k++) {
        int n = poll_ring(shm.hot[k]);
        if (n)
            shm.hot_seen[k] = shm.polls;
        handled += n;
    }
    if (shm.polls % (uint64_t)ferry_cfg.shm_cold_scan == 0) {
        for (uint32_t i = 0; i < shm.nlocal; i++) {
            if (shm.hot_of[i] >= 0)
                continue;
            int n = poll_ring(i);
            if (n)
                make_hot(i);
            handled += n;
        }
    }
    return handled;
}

/* Clear the seal where the packet after one ending at ring offset `end`
 * (within the ring) starts: the consumer finds 0 there until that packet is
 * sealed. */
static inline void terminate(struct shm_out *o, uint64_t end)
{
    struct ferry_pkt *next = (struct ferry_pkt *)(o->data + end);
    __atomic_store_n(&next->seal, 0, __ATOMIC_RELAXED);   /* ordered before the seal by its release */
}

static struct ferry_pkt *shm_reserve(int peer, size_t payload)
{
    struct shm_out *o = &shm.out[peer];
    uint64_t span = shm_pkt_span(payload);
    uint64_t off = o->off;
    uint64_t skip = off + span > shm.ring_bytes ? shm.ring_bytes - off : 0;
    /* + a line: the terminator after the packet must not land on bytes the
     * consumer has yet to read */
    uint64_t need = o->head + skip + span + FERRY_CACHELINE;
    if (need - o->tail_cache > shm.ring_bytes) {
        o->tail_cache = __atomic_load_n(&o->ctl->tail, __ATOMIC_ACQUIRE);
        if (need - o->tail_cache > shm.ring_bytes)
            return NULL;
    }
    if (skip) {
        /* sealed by commit after the packet at 0, so the consumer, once past
         * it, finds that packet (which a terminator never cleared) sealed */
        o->skip = (struct ferry_pkt *)(o->data + off);
        o->skip->type = SHM_PKT_SKIP;
        o->head += skip;
        o->off = off = 0;
    }
    /* The terminator: a small packet's is written now, its line's ownership
     * asked for with the packet's (written at commit, right before the seal,
     * it cost 0-16 B latency 0.29-0.31 against 0.25-0.28 us); a large one's
     * at commit, its line asked for now, so that the copy of the payload does
     * not queue in the store buffer behind that store's ownership request
     * (4-8 KiB latency 2-5% higher otherwise). */
    uint64_t end = ring_wrap(off + span);
    if (span + FERRY_CACHELINE <= SHM_PREFETCH_PACKET) {
        ferry_prefetch_range_for_write(o->data + off, FERRY_MIN(span + FERRY_CACHELINE, shm.ring_bytes - off),
                                       SHM_PREFETCH_PACKET);
        terminate(o, end);
        o->terminated = end;
    } else {
        ferry_prefetch_range_for_write(o->data + off, span, SHM_PREFETCH_PACKET);
        ferry_prefetch_for_write(o->data + end);
        o->terminated = UINT64_MAX;
    }
    /* and head's line, which a consumer polling it took away: commit's store
     * of head then finds it owned instead of stalling the stores behind it
     * (message rate 0 and 64 B 4-6% higher, 8 interleaved runs; bandwidth
     * 16-64 B 5-12%) */
    ferry_prefetch_for_write(&o->ctl->head);
    return (struct ferry_pkt *)(o->data + off);
}

static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static void shm_commit(int peer, struct ferry_pkt *pkt)
{
    struct shm_out *o = &shm.out[peer];
    if (FERRY_UNLIKELY(shm.nlocal > (uint32_t)shm.hot_max))
        make_hot((uint32_t)ferry_rt.peers[peer].local);   /* a reply will come on its ring */
    uint64_t span = shm_pkt_span(pkt->payload);
    uint64_t end = ring_wrap((uint64_t)((char *)pkt - o->data) + span);
    if (end != o->terminated)   /* a large packet, or one the protocol filled less than it reserved */
        terminate(o, end);
    o->head += span;
    o->off = end;
    /* publish: the packet's bytes (and the terminator after it) happen-before
     * the consumer sees the seal; then a SKIP before it */
    __atomic_store_n(&pkt->seal, 1, __ATOMIC_RELEASE);
    if (o->skip) {
        __atomic_store_n(&o->skip->seal, 1, __ATOMIC_RELEASE);
        o->skip = NULL;
    }
    __atomic_store_n(&o->ctl->head, o->head, __ATOMIC_RELEASE);   /* for poll_ring and a consumer about to sleep */
    /* Ask for ownership of the ring line a few packets ahead: the consumer
     * read it a lap ago, so writing it costs a cross-core round trip, which
     * would otherwise stall a stream of small sends on a full store buffer.
     * (A prefetch changes no memory: harmless if the line is still unread.) */
    ferry_prefetch_for_write(o->data + ring_wrap(o->off + SHM_PREFETCH_AHEAD));
    if (shm.may_sleep) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* store head, then load armed (see top) */
        if (__atomic_load_n(&o->bell->armed, __ATOMIC_RELAXED) &&
            __atomic_exchange_n(&o->bell->armed, 0, __ATOMIC_SEQ_CST)) {
            __atomic_fetch_add(&o->bell->bell, 1, __ATOMIC_SEQ_CST);
            futex(&o->bell->bell, FUTEX_WAKE, 1, NULL);
        }
    }
}

/* Reads the tails the consumer published, not its private copies: under
 * MPI_THREAD_MULTIPLE a thread about to sleep runs this without the lock
 * while the lock's owner polls the rings. */
static int rings_pending(void)
{
    for (uint32_t i = 0; i < shm.nlocal; i++)
        if (__atomic_load_n(&shm.in[i].ctl->head, __ATOMIC_RELAXED) !=
            __atomic_load_n(&shm.in[i].ctl->tail, __ATOMIC_RELAXED))
            return 1;
    return 0;
}

/* Sleep until a producer rings (or a short timeout, the safety net for
 * waits no producer rings for, such as ring space freeing up). */
static void shm_sleep(void)
{
    if (!shm.may_sleep) {
        sched_yield();
        return;
    }
    struct shm_doorbell *d = shm_doorbell(shm.mine);
    uint32_t seen = __atomic_load_n(&d->bell, __ATOMIC_ACQUIRE);
    __atomic_store_n(&d->armed, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);       /* store armed, then load heads (see top) */
    if (!rings_pending() && !ferry_biglock_woken()) {
        struct timespec ts = {0, 2 * 1000 * 1000};
        futex(&d->bell, FUTEX_WAIT, seen, &ts);
    }
    __atomic_store_n(&d->armed, 0, __ATOMIC_RELAXED);
}

/* Ring this rank's own doorbell, as a producer would. The caller published
 * its reason (ferry_biglock_woken) with a seq_cst store before: either the
 * sleeper sees it after arming, or this sees the sleeper armed. */
static void shm_wake(void)
{
    struct shm_doorbell *d = shm_doorbell(shm.mine);
    if (__atomic_load_n(&d->armed, __ATOMIC_SEQ_CST) && __atomic_exchange_n(&d->armed, 0, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&d->bell, 1, __ATOMIC_SEQ_CST);
        futex(&d->bell, FUTEX_WAKE, 1, NULL);
    }
}

static size_t shm_max_payload(int peer)
{
    return shm.max_packet - sizeof(struct ferry_pkt);
}

/* Testing: Cross Memory Attach denied mid-run. FERRY_SHM_FAULT_PULL counts
 * pulls and pushes together, FERRY_SHM_FAULT_PUSH pushes alone. */
static int cma_fault(int write)
{
    static long calls, pushes;
    if (FERRY_UNLIKELY(ferry_cfg.shm_fault_pull >= 0) && ++calls > ferry_cfg.shm_fault_pull)
        return 1;
    return write && FERRY_UNLIKELY(ferry_cfg.shm_fault_push >= 0) && ++pushes > ferry_cfg.shm_fault_push;
}

/* Cross Memory Attach, unless a test injects a failure. */
static int cma_copy(int peer, char *local, uint64_t remote, size_t len, int write)
{
    if (cma_fault(write))
        return -EPERM;
    return ferry_cma_copy(ferry_rt.peers[peer].pid, local, remote, len, write);
}

static int shm_pull(int peer, void *local, uint64_t remote, size_t len)
{
    return cma_copy(peer, local, remote, len, 0);
}

static int shm_push(int peer, uint64_t remote, const void *local, size_t len)
{
    return cma_copy(peer, (char *)local, remote, len, 1);
}

static int shm_can_pull(int peer)
{
    return shm.pull_ok[peer];
}

static void shm_disable_pull(int peer)
{
    shm.pull_ok[peer] = 0;
}

static int shm_shares_cpu(int peer)
{
    int cpu = sched_getcpu();
    if (cpu < 0)
        return 0;
    struct shm_region_hdr *me = shm.mine;
    /* +1: 0 means "never waited yet" */
    __atomic_store_n(&me->cur_cpu, (uint32_t)cpu + 1, __ATOMIC_RELAXED);
    if (peer < 0 || ferry_rt.peers[peer].tr != &ferry_transport_shm)
        return 0;
    const struct shm_region_hdr *h = region(ferry_rt.peers[peer].local);
    return __atomic_load_n(&h->cur_cpu, __ATOMIC_RELAXED) == (uint32_t)cpu + 1;
}

/* The consumer's tail is where the reserved packet starts, or one
 * header-only packet before it: it has handed back every packet before (a
 * skip before the packet, not yet published, keeps tail behind: no). The one
 * packet of slack is the FIN or CTS this rank has just answered the peer's
 * own message with, which a receiver waiting for our next message reads on
 * its next poll; counting it as "behind" sent every rendezvous-sized
 * ping-pong eagerly (16 KiB one way 2.3 against 1.6 us). A receiver behind in
 * a stream has a data packet, or several, unread. One load of the consumer's
 * line, which the next reserve can use as well. */
static int shm_caught_up(int peer)
{
    struct shm_out *o = &shm.out[peer];
    o->tail_cache = __atomic_load_n(&o->ctl->tail, __ATOMIC_ACQUIRE);
    return o->head - o->tail_cache <= shm_pkt_span(0);
}

const struct ferry_transport ferry_transport_shm = {
    .name = "shm",
    .init = shm_init,
    .finalize = shm_finalize,
    .poll = shm_poll,
    .reserve = shm_reserve,
    .commit = shm_commit,
    .max_payload = shm_max_payload,
    .pull = shm_pull,
    .push = shm_push,
    .can_pull = shm_can_pull,
    .disable_pull = shm_disable_pull,
    .sleep = shm_sleep,
    .wake = shm_wake,
    .peek = shm_peek,
    .consume = shm_consume,
    .shares_cpu = shm_shares_cpu,
    .caught_up = shm_caught_up,
};
