/* bind: decide, with hwloc, the cpus each rank is bound to.
 *
 * Usable cores are the hwloc cores that intersect both the topology's
 * allowed cpuset (cgroups) and mpiexec's own affinity (taskset); a rank
 * bound to a core gets every allowed PU of that core. --bind-to core binds
 * rank i to usable core i mod ncores; --bind-to numa binds consecutive
 * ranks to the allowed cores of one NUMA node (rank i to node i * nnodes / N,
 * or i mod nnodes when there are more nodes than ranks); the default is core
 * when N <= ncores and none otherwise. The plan is made here, in the parent; the child only
 * calls sched_setaffinity() with the precomputed mask. */
#include "mpiexec.h"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <stdlib.h>
#include <string.h>

static void set_unbound(struct job *j, const char *why)
{
    for (int r = 0; r < j->n; r++) {
        j->ranks[r].bound = 0;
        snprintf(j->ranks[r].bind_desc, sizeof j->ranks[r].bind_desc, "not bound (%s)", why);
    }
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
        if (mode == BIND_CORE || mode == BIND_NUMA)
            fprintf(stderr, "mpiexec: warning: cannot read the machine topology (hwloc); "
                    "running unbound\n");
        set_unbound(j, "no topology");
        return;
    }

    hwloc_bitmap_t usable = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topo));
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(mine))
        hwloc_bitmap_and(usable, usable, mine);

    hwloc_obj_type_t type = mode == BIND_NUMA ? HWLOC_OBJ_NUMANODE : HWLOC_OBJ_CORE;
    int nobj = hwloc_get_nbobjs_by_type(topo, type);
    if (nobj <= 0 && type == HWLOC_OBJ_NUMANODE) {   /* no NUMA information: cores */
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
        if (mode == BIND_CORE || mode == BIND_NUMA)
            fprintf(stderr, "mpiexec: warning: no usable core found; running unbound\n");
        set_unbound(j, "no usable core");
    } else if (mode == BIND_DEFAULT && j->n > ncores) {
        char why[96];
        snprintf(why, sizeof why, "%d processes > %d cores", j->n, ncores);
        set_unbound(j, why);
    } else {
        for (int r = 0; r < j->n; r++) {
            struct rank *rk = &j->ranks[r];
            int c = type == HWLOC_OBJ_NUMANODE && j->n >= ncores ? (int)((long)r * ncores / j->n) : r % ncores;
            CPU_ZERO(&rk->cpus);
            if (hwloc_cpuset_to_glibc_sched_affinity(topo, cores[c], &rk->cpus,
                                                     sizeof rk->cpus) != 0) {
                snprintf(rk->bind_desc, sizeof rk->bind_desc, "not bound (cpu set too large)");
                continue;
            }
            char list[96];
            hwloc_bitmap_list_snprintf(list, sizeof list, cores[c]);
            snprintf(rk->bind_desc, sizeof rk->bind_desc, "bound to %s %d (cpus %s)",
                     type == HWLOC_OBJ_CORE ? "core" : type == HWLOC_OBJ_NUMANODE ? "numa node" : "pu", c,
                     list);
            rk->bound = 1;
        }
    }

    for (int i = 0; i < ncores; i++)
        hwloc_bitmap_free(cores[i]);
    free(cores);
    hwloc_bitmap_free(mine);
    hwloc_bitmap_free(usable);
    hwloc_topology_destroy(topo);
}
