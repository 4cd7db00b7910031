/* The shared-memory layout, in one place.
 *
 * The node segment (segment.h) holds one region per local rank, `stride`
 * bytes apart. Each owner reserves its region (posix_fallocate, so a shortage
 * fails at MPI_Init instead of SIGBUS later) and first-touches it, so its pages
 * sit near the receiver.
 *
 *   struct shm_region_hdr                      64 bytes
 *   struct shm_doorbell                        64 bytes: futex the owner sleeps on
 *   struct shm_cpuset                          128 bytes: the owner's affinity mask
 *   struct shm_ring_ctl   ctl[nlocal]          128 bytes each: ring from local rank i
 *   rings[nlocal][ring_bytes]                  packets: struct ferry_pkt + payload
 *
 * Ring i carries packets from local rank i to the owner: single producer,
 * single consumer, a byte ring. A packet takes its 64-byte header plus its
 * payload rounded up to 64 bytes, so a ring holds thousands of small messages
 * and a few large pieces. A packet never wraps: when it does not fit before
 * the end, the producer writes a SKIP header there and starts at offset 0.
 *
 * head and tail count bytes ever published / consumed; they live on separate
 * cache lines so producer and consumer do not false-share.
 *
 * Each packet is also published in band: the producer seals it (a release
 * store of the header's seal) before it stores head, having cleared the seal
 * where the next packet will start (shm.c). A blocking receive waiting for
 * one message polls the seal at its tail, one line, where head and the
 * packet were two: 2 ranks on the development VM, 6 interleaved runs,
 * one-way latency 0-16 B 0.23-0.24 against 0.26-0.29 us, 1 KiB 0.51 against
 * 0.58. The progress loop reads head instead: one load covers every packet
 * that arrived, where polling seals had the consumer read each next packet's
 * line while the producer was still writing it (message rate 64 and 256 B
 * 9% and 15% lower). */
#ifndef FERRY_SHM_LAYOUT_H
#define FERRY_SHM_LAYOUT_H
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define FERRY_SHM_MAGIC 0x46455252595348ull   /* "FERRYSH" */
#define FERRY_SHM_VERSION 4

#define SHM_PKT_SKIP 0xff   /* packet type: the rest of the ring up to its end is empty */

struct shm_region_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t nlocal;
    uint32_t ring_bytes;
    uint32_t max_packet;
    int32_t owner_rank;
    int32_t owner_pid;
    uint64_t cma_probe;     /* a value peers read with process_vm_readv to test single copy */
    uint32_t cur_cpu;       /* the CPU the owner last ran on when it began to wait (a hint: ranks migrate) */
    uint8_t pad[20];
};
static_assert(sizeof(struct shm_region_hdr) == 64, "region header is one cache line");

/* An oversubscribed owner with nothing to do sleeps on `bell` (futex) after
 * setting `armed`; a producer that publishes a cell and then sees `armed`
 * clears it, bumps `bell` and wakes the owner. See shm.c for the ordering. */
struct shm_doorbell {
    uint32_t bell;
    uint32_t armed;
    uint8_t pad[56];
};
static_assert(sizeof(struct shm_doorbell) == 64, "doorbell is one cache line");

/* The CPUs the owner may run on (bit c % 64 of word c / 64: CPU c), for the
 * oversubscription decision: the ranks of a node share CPUs when the union
 * of their masks has fewer CPUs than there are ranks. A count per rank cannot
 * tell ranks pinned to distinct cores from ranks all pinned to one (taskset
 * on the launcher). 1024 CPUs, glibc's CPU_SETSIZE; an owner whose mask
 * cannot be read that way (more CPUs) sets every bit. */
#define SHM_CPUSET_WORDS 16
struct shm_cpuset {
    uint64_t bits[SHM_CPUSET_WORDS];
};
static_assert(sizeof(struct shm_cpuset) == 128, "affinity mask is two cache lines");

struct shm_ring_ctl {
    _Alignas(64) uint64_t head;   /* written by the producer (the sending rank), release */
    _Alignas(64) uint64_t tail;   /* written by the consumer (the owner), release */
};
static_assert(sizeof(struct shm_ring_ctl) == 128, "ring control is two cache lines");
static_assert(offsetof(struct shm_ring_ctl, tail) == 64, "head and tail on separate cache lines");

#define SHM_CPUSET_OFFSET (sizeof(struct shm_region_hdr) + sizeof(struct shm_doorbell))
#define SHM_CTL_OFFSET (SHM_CPUSET_OFFSET + sizeof(struct shm_cpuset))

/* Bytes of one region, rounded to whole pages so regions never share a page. */
static inline size_t shm_region_size(uint32_t nlocal, uint32_t ring_bytes)
{
    size_t n = SHM_CTL_OFFSET + (size_t)nlocal * sizeof(struct shm_ring_ctl) + (size_t)nlocal * ring_bytes;
    return (n + 4095) & ~(size_t)4095;
}
static inline struct shm_doorbell *shm_doorbell(void *region)
{
    return (struct shm_doorbell *)((char *)region + sizeof(struct shm_region_hdr));
}
static inline struct shm_cpuset *shm_cpuset(void *region)
{
    return (struct shm_cpuset *)((char *)region + SHM_CPUSET_OFFSET);
}
static inline struct shm_ring_ctl *shm_ring_ctl(void *region, uint32_t i)
{
    return (struct shm_ring_ctl *)((char *)region + SHM_CTL_OFFSET) + i;
}
static inline char *shm_ring_data(void *region, uint32_t nlocal, uint32_t ring_bytes, uint32_t i)
{
    return (char *)region + SHM_CTL_OFFSET + (size_t)nlocal * sizeof(struct shm_ring_ctl) + (size_t)i * ring_bytes;
}
/* Bytes a packet with `payload` bytes occupies in a ring. */
static inline uint64_t shm_pkt_span(uint64_t payload)
{
    return (64 + payload + 63) & ~(uint64_t)63;
}

#endif
