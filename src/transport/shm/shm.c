/* The shared-memory transport (see shm_layout.h for the layout).
 *
 * Memory ordering: the producer fills a cell with plain stores and then
 * publishes it with a release store of head; the consumer reads head with an
 * acquire load, so the cell contents are visible before it reads them. The
 * consumer finishes reading a cell before its release store of tail; the
 * producer reads tail with acquire before reusing the cell. Nothing else is
 * shared, so no locks and no read-modify-write atomics are needed. */
#include "transport/transport.h"
#include "transport/shm/shm_layout.h"
#include "boot/boot.h"
#include "core/config.h"
#include "core/runtime.h"
#include "core/util.h"
#include "proto/proto.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

struct shm_out {            /* this rank's view of its ring in a peer's region */
    struct shm_ring_ctl *ctl;
    char *cells;
    uint64_t head;          /* private copy: we are the only writer */
    uint64_t tail_cache;    /* last tail we read; refreshed only when the ring looks full */
};

struct shm_in {             /* a ring in our own region */
    struct shm_ring_ctl *ctl;
    char *cells;
    uint64_t tail;
    int world;              /* world rank of the producer */
};

static struct {
    uint32_t nlocal, ncells, cell_size;
    size_t region_size;
    void *mine;                 /* our region */
    void **regions;             /* by local index; regions[local_rank] == mine */
    struct shm_in *in;          /* by local index */
    struct shm_out *out;        /* by world rank (only local peers used) */
    int *world_of_local;
    unsigned char *pull_ok;     /* by world rank */
    char name[128];
    int unlinked;
} shm;

static void region_name(char *buf, size_t len, int world_rank)
{
    snprintf(buf, len, "/ferry-%s-%d", ferry_rt.jobid, world_rank);
}

static void create_own_region(void)
{
    region_name(shm.name, sizeof shm.name, ferry_rt.world_rank);
    int fd = shm_open(shm.name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        ferry_fatal("MPI_Init: cannot create shared memory %s: %s", shm.name, strerror(errno));
    /* Reserve every page now: a /dev/shm that is too small (Docker's default
     * is 64 MiB) must fail here with the fix, not SIGBUS in the middle of a run. */
    int rc = ftruncate(fd, (off_t)shm.region_size) ? errno : posix_fallocate(fd, 0, (off_t)shm.region_size);
    if (rc) {
        close(fd);
        shm_unlink(shm.name);
        ferry_fatal("MPI_Init: cannot reserve %zu KiB of shared memory in /dev/shm (%s); %u local ranks need "
                    "%zu KiB in all. Give the job more: docker run --shm-size=1g, AWS Batch "
                    "linuxParameters.sharedMemorySize, Kubernetes emptyDir {medium: Memory}; or lower "
                    "FERRY_SHM_CELLS / FERRY_SHM_CELL_SIZE",
                    shm.region_size / 1024, strerror(rc), shm.nlocal, shm.region_size / 1024 * shm.nlocal);
    }
    shm.mine = mmap(NULL, shm.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (shm.mine == MAP_FAILED)
        ferry_fatal("MPI_Init: cannot map shared memory: %s", strerror(errno));
    /* first touch by the owner (the receiver) */
    memset(shm.mine, 0, shm.region_size);
    struct shm_region_hdr *h = shm.mine;
    h->version = FERRY_SHM_VERSION;
    h->nlocal = shm.nlocal;
    h->ncells = shm.ncells;
    h->cell_size = shm.cell_size;
    h->owner_rank = ferry_rt.world_rank;
    h->owner_pid = (int32_t)getpid();
    h->cma_probe = FERRY_SHM_MAGIC ^ (uint64_t)getpid();
    h->magic = FERRY_SHM_MAGIC;
}

static void *map_peer_region(int world_rank)
{
    char name[128];
    region_name(name, sizeof name, world_rank);
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0)
        ferry_fatal("MPI_Init: cannot open rank %d's shared memory %s: %s", world_rank, name, strerror(errno));
    void *p = mmap(NULL, shm.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        ferry_fatal("MPI_Init: cannot map rank %d's shared memory: %s", world_rank, strerror(errno));
    struct shm_region_hdr *h = p;
    if (h->magic != FERRY_SHM_MAGIC || h->version != FERRY_SHM_VERSION || h->nlocal != shm.nlocal ||
        h->ncells != shm.ncells || h->cell_size != shm.cell_size)
        ferry_fatal("MPI_Init: rank %d's shared memory has a different layout (mixed Ferry versions or "
                    "FERRY_SHM_* settings?)", world_rank);
    return p;
}

/* Single copy is decided per peer by a real read: same user namespace,
 * ptrace permission, no seccomp filter in the way. */
static int probe_pull(int world_rank, uint64_t remote_hdr)
{
    struct shm_region_hdr *h = shm.regions[ferry_rt.peers[world_rank].local];
    uint64_t got = 0;
    struct iovec l = {&got, sizeof got};
    struct iovec r = {(void *)(uintptr_t)(remote_hdr + offsetof(struct shm_region_hdr, cma_probe)), sizeof got};
    ssize_t n = process_vm_readv(h->owner_pid, &l, 1, &r, 1, 0);
    int ok = n == (ssize_t)sizeof got && got == h->cma_probe;
    if (!ok)
        ferry_log(1, "single copy with rank %d unavailable (%s); using the copy path",
                  world_rank, n < 0 ? strerror(errno) : "probe mismatch");
    return ok;
}

static int shm_init(void)
{
    int nlocal = ferry_rt.local_size;
    shm.nlocal = (uint32_t)nlocal;
    shm.ncells = (uint32_t)ferry_cfg.shm_cells;
    shm.cell_size = (uint32_t)ferry_cfg.shm_cell_size;
    shm.region_size = shm_region_size(shm.nlocal, shm.ncells, shm.cell_size);
    shm.regions = ferry_xcalloc((size_t)nlocal, sizeof *shm.regions);
    shm.in = ferry_xcalloc((size_t)nlocal, sizeof *shm.in);
    shm.out = ferry_xcalloc((size_t)ferry_rt.world_size, sizeof *shm.out);
    shm.pull_ok = ferry_xcalloc((size_t)ferry_rt.world_size, 1);
    shm.world_of_local = ferry_xcalloc((size_t)nlocal, sizeof(int));
    for (int w = 0; w < ferry_rt.world_size; w++)
        if (ferry_rt.peers[w].local >= 0)
            shm.world_of_local[ferry_rt.peers[w].local] = w;

    if (ferry_cfg.cma != 0)
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);   /* Yama ptrace_scope=1 */
    create_own_region();
    char val[64];
    snprintf(val, sizeof val, "%llx", (unsigned long long)(uintptr_t)shm.mine);
    ferry_boot_put("shm-addr", val);
    ferry_boot_fence();

    for (int i = 0; i < nlocal; i++) {
        int w = shm.world_of_local[i];
        shm.regions[i] = w == ferry_rt.world_rank ? shm.mine : map_peer_region(w);
        ferry_rt.peers[w].pid = ((struct shm_region_hdr *)shm.regions[i])->owner_pid;
        /* our ring inside peer i's region is the one indexed by our local rank */
        shm.out[w].ctl = shm_ring_ctl(shm.regions[i], (uint32_t)ferry_rt.local_rank);
        shm.out[w].cells = shm_ring_cells(shm.regions[i], shm.nlocal, shm.ncells, shm.cell_size,
                                          (uint32_t)ferry_rt.local_rank);
        shm.in[i].ctl = shm_ring_ctl(shm.mine, (uint32_t)i);
        shm.in[i].cells = shm_ring_cells(shm.mine, shm.nlocal, shm.ncells, shm.cell_size, (uint32_t)i);
        shm.in[i].world = w;
        if (ferry_cfg.cma != 0) {
            char addr[64];
            if (ferry_boot_get(w, "shm-addr", addr, sizeof addr))
                ferry_fatal("MPI_Init: rank %d published no shared-memory address", w);
            shm.pull_ok[w] = (unsigned char)probe_pull(w, strtoull(addr, NULL, 16));
            if (!shm.pull_ok[w] && ferry_cfg.cma == 1)
                fprintf(stderr, "ferry: rank %d: warning: FERRY_CMA=1 but single copy with rank %d is denied\n",
                        ferry_rt.world_rank, w);
        }
    }
    /* Everyone has mapped every region: the names can go. From here on a
     * crash of any rank leaves nothing behind in /dev/shm. */
    ferry_boot_fence();
    shm_unlink(shm.name);
    shm.unlinked = 1;
    return 0;
}

static void shm_finalize(void)
{
    for (uint32_t i = 0; i < shm.nlocal; i++)
        if (shm.regions[i])
            munmap(shm.regions[i], shm.region_size);
    if (!shm.unlinked)
        shm_unlink(shm.name);
    free(shm.regions);
    free(shm.in);
    free(shm.out);
    free(shm.pull_ok);
    free(shm.world_of_local);
    memset(&shm, 0, sizeof shm);
}

static int shm_poll(void)
{
    int handled = 0;
    for (uint32_t i = 0; i < shm.nlocal; i++) {
        struct shm_in *in = &shm.in[i];
        uint64_t head = __atomic_load_n(&in->ctl->head, __ATOMIC_ACQUIRE);
        while (in->tail < head) {
            const struct ferry_pkt *pkt =
                (const struct ferry_pkt *)(in->cells + (size_t)(in->tail % shm.ncells) * shm.cell_size);
            ferry_proto_receive(in->world, pkt);
            in->tail++;
            /* done reading the cell: hand it back to the producer */
            __atomic_store_n(&in->ctl->tail, in->tail, __ATOMIC_RELEASE);
            handled++;
        }
    }
    return handled;
}

static struct ferry_pkt *shm_reserve(int peer)
{
    struct shm_out *o = &shm.out[peer];
    if (o->head - o->tail_cache >= shm.ncells) {
        o->tail_cache = __atomic_load_n(&o->ctl->tail, __ATOMIC_ACQUIRE);
        if (o->head - o->tail_cache >= shm.ncells)
            return NULL;
    }
    return (struct ferry_pkt *)(o->cells + (size_t)(o->head % shm.ncells) * shm.cell_size);
}

static void shm_commit(int peer, struct ferry_pkt *pkt)
{
    struct shm_out *o = &shm.out[peer];
    o->head++;
    /* publish: the cell's contents happen-before the consumer sees head */
    __atomic_store_n(&o->ctl->head, o->head, __ATOMIC_RELEASE);
}

static size_t shm_max_payload(int peer)
{
    return shm.cell_size - sizeof(struct ferry_pkt);
}

static int shm_pull(int peer, void *local, uint64_t remote, size_t len)
{
    char *dst = local;
    while (len > 0) {
        struct iovec l = {dst, len};
        struct iovec r = {(void *)(uintptr_t)remote, len};
        ssize_t n = process_vm_readv(ferry_rt.peers[peer].pid, &l, 1, &r, 1, 0);
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        dst += n;
        remote += (uint64_t)n;
        len -= (size_t)n;
    }
    return 0;
}

static int shm_can_pull(int peer)
{
    return shm.pull_ok[peer];
}

static void shm_disable_pull(int peer)
{
    shm.pull_ok[peer] = 0;
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
    .can_pull = shm_can_pull,
    .disable_pull = shm_disable_pull,
};
