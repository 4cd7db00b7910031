/* bind: decide, with hwloc, the cpus each rank is bound to.
 *
 * Usable cores are the hwloc cores that intersect both the topology's
 * allowed cpuset (cgroups) and mpiexec's own affinity (taskset); a rank
 * bound to a core gets every allowed PU of that core. --bind-to core binds
 * rank i to usable core i mod ncores (hwthread: to PU i mod nPUs); --bind-to
 * numa (socket) binds consecutive ranks to the allowed cores of one NUMA node
 * (package): rank i to node i * nnodes / N, or i mod nnodes when there are
 * more nodes than ranks. A level the topology lacks falls back to cores,
 * then PUs. The default is core
 * when N <= ncores and none otherwise. A hybrid MPI+OpenMP job (ranks see
 * OMP_NUM_THREADS=T > 1) gets by default min(T, ncores / N) consecutive cores
 * per rank, so its threads are not all bound to one core (explicit
 * --bind-to core still means one core, as in Open MPI). The plan is made
 * here, in the parent; the child only calls sched_setaffinity() with the
 * precomputed mask. It covers world 0 (the command line's ranks, before any
 * spawn); spawned processes are not bound. */
#include "mpiexec.h"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <stdlib.h>
#include <string.h>

static void set_unbound(struct job *j, const char *why)
{
    for (int r = 0; r < j->n; r++) {
        j->ranks[r]->bound = 0;
        snprintf(j->ranks[r]->bind_desc, sizeof j->ranks[r]->bind_desc, "not bound (%s)", why);
    }
}

/* Threads each rank will run: OMP_NUM_THREADS as the ranks will see it (the
 * last -genv of it wins over mpiexec's own environment), its first value
 * when it is a nested list such as "4,2"; 1 when unset or not a number. */
static int threads_per_rank(const struct options *o)
{
    const char *v = getenv("OMP_NUM_THREADS");
    for (int g = 0; g < o->ngenv; g++)
        if (strcmp(o->genv_key[g], "OMP_NUM_THREADS") == 0)
            v = o->genv_val[g];
    if (!v)
        return 1;
    char *end;
    long t = strtol(v, &end, 10);
    if (end == v || (*end && *end != ',') || t < 1)
        return 1;
    return t > 4096 ? 4096 : (int)t;
}

void bind_plan(struct job *j)
{
    enum bind_mode mode = j->opt->bind;
    if (mode == BIND_NONE) {
        set_unbound(j, "--bind-to none");
        return;
    }

    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
        if (mode != BIND_DEFAULT)
            fprintf(stderr, "mpiexec: warning: cannot read the machine topology (hwloc); "
                    "running unbound\n");
        set_unbound(j, "no topology");
        return;
    }

    hwloc_bitmap_t usable = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topo));
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(mine))
        hwloc_bitmap_and(usable, usable, mine);

    hwloc_obj_type_t type = mode == BIND_NUMA ? HWLOC_OBJ_NUMANODE
                          : mode == BIND_SOCKET ? HWLOC_OBJ_PACKAGE
                          : mode == BIND_HWTHREAD ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE;
    int spread = type == HWLOC_OBJ_NUMANODE || type == HWLOC_OBJ_PACKAGE;   /* consecutive ranks share one */
    int nobj = hwloc_get_nbobjs_by_type(topo, type);
    if (nobj <= 0 && spread) {           /* no NUMA or package information: cores */
        spread = 0;
        type = HWLOC_OBJ_CORE;
        nobj = hwloc_get_nbobjs_by_type(topo, type);
    }
    if (nobj <= 0) {                     /* no core level: fall back to PUs */
        type = HWLOC_OBJ_PU;
        nobj = hwloc_get_nbobjs_by_type(topo, type);
    }
    hwloc_bitmap_t *cores = calloc((size_t)(nobj > 0 ? nobj : 1), sizeof *cores);
    int ncores = 0;
    for (int i = 0; i < nobj && cores; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)i);
        if (!o || !o->cpuset)
            continue;
        hwloc_bitmap_t s = hwloc_bitmap_alloc();
        hwloc_bitmap_and(s, o->cpuset, usable);
        if (hwloc_bitmap_iszero(s)) {
            hwloc_bitmap_free(s);
            continue;
        }
        cores[ncores++] = s;
    }

    if (ncores == 0) {
        if (mode != BIND_DEFAULT)
            fprintf(stderr, "mpiexec: warning: no usable core found; running unbound\n");
        set_unbound(j, "no usable core");
    } else if (mode == BIND_DEFAULT && j->n > ncores) {
        char why[96];
        snprintf(why, sizeof why, "%d processes > %d cores", j->n, ncores);
        set_unbound(j, why);
    } else {
        /* cores per rank: one, or the hybrid default described at the top */
        int per = 1;
        if (mode == BIND_DEFAULT && type == HWLOC_OBJ_CORE) {
            per = threads_per_rank(j->opt);
            if (per > ncores / j->n)
                per = ncores / j->n;
        }
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        for (int r = 0; r < j->n; r++) {
            struct rank *rk = j->ranks[r];
            int c = spread && j->n >= ncores ? (int)((long)r * ncores / j->n)
                  : per > 1 ? r * per : r % ncores;
            hwloc_bitmap_zero(set);
            for (int k = 0; k < per; k++)
                hwloc_bitmap_or(set, set, cores[c + k]);
            CPU_ZERO(&rk->cpus);
            if (hwloc_cpuset_to_glibc_sched_affinity(topo, set, &rk->cpus, sizeof rk->cpus) != 0) {
                snprintf(rk->bind_desc, sizeof rk->bind_desc, "not bound (cpu set too large)");
                continue;
            }
            char list[96];
            hwloc_bitmap_list_snprintf(list, sizeof list, set);
            if (per > 1)
                snprintf(rk->bind_desc, sizeof rk->bind_desc,
                         "bound to cores %d-%d (cpus %s; OMP_NUM_THREADS)", c, c + per - 1, list);
            else
                snprintf(rk->bind_desc, sizeof rk->bind_desc, "bound to %s %d (cpus %s)",
                         type == HWLOC_OBJ_CORE ? "core" : type == HWLOC_OBJ_NUMANODE ? "numa node"
                         : type == HWLOC_OBJ_PACKAGE ? "socket" : "pu",
                         c, list);
            rk->bound = 1;
        }
        hwloc_bitmap_free(set);
    }

    for (int i = 0; i < ncores; i++)
        hwloc_bitmap_free(cores[i]);
    free(cores);
    hwloc_bitmap_free(mine);
    hwloc_bitmap_free(usable);
    hwloc_topology_destroy(topo);
}
