/* Bringing the runtime up and down: boot, node discovery, objects, transports. */
#include "boot/boot.h"
#include "coll/coll.h"
#include "core/attr.h"
#include "core/biglock.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/init.h"
#include "core/match.h"
#include "core/progress.h"
#include "core/request.h"
#include "core/runtime.h"
#include "core/universe.h"
#include "core/util.h"
#include "proto/proto.h"
#include "transport/transport.h"
#include "transport/sock/sock.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ferry_runtime ferry_rt = {.world_rank = -1};
static pthread_t main_thread;

/* Which ranks share this node: everyone publishes its host name. */
static void discover_node(int universe)
{
    ferry_boot_put("host", ferry_rt.hostname);
    ferry_boot_fence();
    /* peers[] is indexed by uid (runtime.h): room for this world, and for the
     * rest of the universe when the launcher can spawn */
    int end = ferry_rt.uid_base + ferry_rt.world_size;
    ferry_rt.npeers = universe && end < FERRY_UNIVERSE_MAX ? FERRY_UNIVERSE_MAX : end;
    ferry_rt.peer_end = end;
    ferry_rt.peers = ferry_xcalloc((size_t)ferry_rt.npeers, sizeof *ferry_rt.peers);
    for (int u = 0; u < ferry_rt.npeers; u++)
        ferry_rt.peers[u].local = -1;
    int nlocal = 0;
    for (int w = 0; w < ferry_rt.world_size; w++) {
        char host[MPI_MAX_PROCESSOR_NAME];
        if (w == ferry_rt.world_rank)
            strcpy(host, ferry_rt.hostname);
        else if (ferry_boot_get(w, "host", host, sizeof host))
            ferry_fatal("MPI_Init: rank %d published no host name", w);
        if (strcmp(host, ferry_rt.hostname) != 0)
            ferry_fatal("MPI_Init: rank %d runs on %s, another node; Ferry has no network transport yet", w, host);
        ferry_rt.peers[ferry_rt.uid_base + w].local = nlocal++;
        ferry_rt.peers[ferry_rt.uid_base + w].same_node = 1;
        ferry_rt.peers[ferry_rt.uid_base + w].tr = &ferry_transport_shm;
    }
    ferry_rt.local_rank = ferry_rt.peers[ferry_rt.self].local;
    ferry_rt.local_size = nlocal;
}

/* Started by a launcher, the rank's stdout is a pipe or a file, which the C
 * library buffers fully: when the job is killed because some rank failed or
 * called MPI_Abort, everything the other ranks printed since their last full
 * buffer is lost. Line buffering (as Open MPI sets it; MPICH unbuffers) keeps
 * their complete lines. glibc's setvbuf with a NULL buffer only changes the
 * mode, so output the program wrote before MPI_Init stays where it is. */
static void set_stdout_buffering(void)
{
    if (ferry_cfg.stdout_buf == FERRY_STDOUT_LINE)
        setvbuf(stdout, NULL, _IOLBF, 0);
    else if (ferry_cfg.stdout_buf == FERRY_STDOUT_NONE)
        setvbuf(stdout, NULL, _IONBF, 0);
}

int ferry_init(int required, int *provided)
{
    ferry_config_load();
    ferry_verbose = (int)ferry_cfg.verbose;
    struct ferry_boot_info info;
    if (ferry_boot_init(&info))
        exit(1);
    ferry_rt.world_rank = info.rank;
    ferry_rt.world_size = info.size;
    ferry_rt.uid_base = info.uid_base;
    ferry_rt.self = info.uid_base + info.rank;
    if (info.rank == 0)   /* once per job */
        ferry_config_unknown(stderr);
    ferry_rt.appnum = info.appnum;
    ferry_rt.universe_size = info.universe_size > 0 ? info.universe_size : 0;   /* 0: unset */
    ferry_rt.singleton = info.singleton;
    if (!info.singleton)
        set_stdout_buffering();
    snprintf(ferry_rt.jobid, sizeof ferry_rt.jobid, "%s", info.jobid);
    if (gethostname(ferry_rt.hostname, sizeof ferry_rt.hostname))
        strcpy(ferry_rt.hostname, "localhost");
    ferry_rt.hostname[sizeof ferry_rt.hostname - 1] = 0;
    ferry_rt.thread_level = ferry_thread_level(required);
    if (provided)
        *provided = ferry_rt.thread_level;
    main_thread = pthread_self();

    discover_node(info.universe[0] != 0 || info.singleton);   /* a singleton may spawn */
    ferry_datatype_init();
    ferry_errhandler_init();
    ferry_request_init();
    ferry_comm_init();
    ferry_proto_init();
    ferry_transport_shm.init();
    ferry_rt.state = FERRY_INITIALIZED;
    ferry_universe_init(&info);   /* spawned: connects to the parents */
    return MPI_SUCCESS;
}

static int world_state;  /* 0 never initialized, 1 between MPI_Init and MPI_Finalize, 2 finalized */
static int sessions;     /* live sessions */

/* At exit, a runtime that only sessions used and all of them finalized. */
static void finalize_at_exit(void)
{
    if (ferry_rt.state == FERRY_INITIALIZED && sessions == 0 && world_state != 1)
        ferry_finalize();
}

/* The last session is finalized and MPI_Init was never called: the
 * sessions model lets the process start a session again, or call MPI_Init
 * (Open MPI and MPICH from 4.1 allow both), so the runtime stays up, idle,
 * and is taken down when the process exits (the teardown's barrier then
 * waits for the other ranks to get there too). */
static void keep_runtime_until_exit(void)
{
    static int registered;
    if (!registered && atexit(finalize_at_exit) == 0)
        registered = 1;
    else if (!registered)
        ferry_finalize();
}

int ferry_runtime_start(int required, int *provided, int world_model)
{
    if (ferry_rt.state == FERRY_FINALIZED)
        return -1;
    if (ferry_rt.state == FERRY_PRE_INIT)
        ferry_init(required, provided);
    else if (provided)
        *provided = ferry_rt.thread_level;
    if (world_model)
        world_state = 1;
    else
        sessions++;
    return MPI_SUCCESS;
}

void ferry_runtime_stop(int world_model)
{
    /* MPI_Finalized turns true only once the teardown (whose attribute
     * callbacks still use MPI) is over */
    if (world_model) {
        if (sessions == 0)
            ferry_finalize();
        world_state = 2;
    } else if (--sessions == 0 && world_state == 2) {
        ferry_finalize();
    } else if (sessions == 0 && world_state == 0) {
        keep_runtime_until_exit();
    }
}

int ferry_world_initialized(void)
{
    return world_state != 0;
}

int ferry_world_finalized(void)
{
    return world_state == 2;
}

int ferry_is_main_thread(void)
{
    return pthread_equal(main_thread, pthread_self());
}

int ferry_finalize(void)
{
    /* MPI_COMM_SELF's attribute delete callbacks run first, while MPI is
     * still fully usable (MPI-3.1 8.7.1). */
    ferry_attr_finalize();
    /* Sends the application no longer waits for (Request_free'd, buffered)
     * must still reach their receivers. */
    struct ferry_waiter w = {0};
    while (ferry_proto_sends_inflight() || ferry_sock_pending())
        ferry_progress_wait(&w);
    ferry_coll_barrier(ferry_comm_world);
    ferry_universe_finalize();
    ferry_transport_shm.finalize();
    ferry_boot_finalize();
    ferry_rt.state = FERRY_FINALIZED;
    ferry_proto_finalize();
    ferry_match_finalize();
    ferry_comm_finalize();
    ferry_request_finalize();
    ferry_datatype_finalize();
    ferry_user_errors_finalize();
    free(ferry_rt.peers);
    ferry_rt.peers = NULL;
    return MPI_SUCCESS;
}
