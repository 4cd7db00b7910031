/* The shared-memory layout, in one place.
 *
 * Every local rank owns one region (a POSIX shm object named
 * /ferry-<jobid>-<world rank>, mode 0600, unlinked as soon as every local rank
 * has mapped it). The owner creates it, reserves its memory up front
 * (posix_fallocate, so a too-small /dev/shm fails at MPI_Init instead of
 * SIGBUS later) and first-touches it, so its pages sit near the receiver.
 *
 *   struct shm_region_hdr                      64 bytes
 *   struct shm_ring_ctl   ctl[nlocal]          128 bytes each: ring from local rank i
 *   cells[nlocal][ncells][cell_size]           cell = struct ferry_pkt + payload
 *
 * Ring i carries packets from local rank i to the owner: single producer,
 * single consumer. head and tail count cells ever published / consumed; they
 * live on separate cache lines so producer and consumer do not false-share. */
#ifndef FERRY_SHM_LAYOUT_H
#define FERRY_SHM_LAYOUT_H
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define FERRY_SHM_MAGIC 0x46455252595348ull   /* "FERRYSH" */
#define FERRY_SHM_VERSION 1

struct shm_region_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t nlocal;
    uint32_t ncells;
    uint32_t cell_size;
    int32_t owner_rank;
    int32_t owner_pid;
    uint64_t cma_probe;     /* a value peers read with process_vm_readv to test single copy */
    uint8_t pad[24];
};
static_assert(sizeof(struct shm_region_hdr) == 64, "region header is one cache line");

struct shm_ring_ctl {
    _Alignas(64) uint64_t head;   /* written by the producer (the sending rank), release */
    _Alignas(64) uint64_t tail;   /* written by the consumer (the owner), release */
};
static_assert(sizeof(struct shm_ring_ctl) == 128, "ring control is two cache lines");
static_assert(offsetof(struct shm_ring_ctl, tail) == 64, "head and tail on separate cache lines");

static inline size_t shm_region_size(uint32_t nlocal, uint32_t ncells, uint32_t cell_size)
{
    return sizeof(struct shm_region_hdr) + (size_t)nlocal * sizeof(struct shm_ring_ctl) +
           (size_t)nlocal * ncells * cell_size;
}
static inline struct shm_ring_ctl *shm_ring_ctl(void *region, uint32_t i)
{
    return (struct shm_ring_ctl *)((char *)region + sizeof(struct shm_region_hdr)) + i;
}
static inline char *shm_ring_cells(void *region, uint32_t nlocal, uint32_t ncells, uint32_t cell_size, uint32_t i)
{
    return (char *)region + sizeof(struct shm_region_hdr) + (size_t)nlocal * sizeof(struct shm_ring_ctl) +
           (size_t)i * ncells * cell_size;
}

#endif
