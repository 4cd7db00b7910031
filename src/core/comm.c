/* Communicator and group objects (see comm.h). */
#include "core/comm.h"
#include "coll/coll.h"
#include "core/error.h"
#include "core/handle.h"
#include "core/runtime.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>

static struct ferry_objtab comms, groups;
struct ferry_comm *ferry_comm_world, *ferry_comm_self;
struct ferry_group *ferry_group_empty;
/* Next context id this process has not used; world uses 0/1, self 2/3. */
static uint32_t next_ctx = 4;

struct ferry_group *ferry_group_new(int n, const int *world)
{
    struct ferry_group *g = ferry_xcalloc(1, sizeof *g);
    g->refs = 1;
    g->size = n;
    g->world = ferry_xmalloc((size_t)(n ? n : 1) * sizeof(int));
    memcpy(g->world, world, (size_t)n * sizeof(int));
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (world[i] == ferry_rt.world_rank) {
            g->rank = i;
            break;
        }
    g->handle = ferry_objtab_add(&groups, g);
    return g;
}

void ferry_group_release(struct ferry_group *g)
{
    if (--g->refs > 0)
        return;
    ferry_objtab_remove(&groups, g->handle);
    free(g->world);
    free(g);
}

struct ferry_group *ferry_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return ferry_group_empty;
    return ferry_objtab_get(&groups, h);
}

struct ferry_comm *ferry_comm_new(struct ferry_group *g, uint32_t ctx, MPI_Errhandler eh)
{
    struct ferry_comm *c = ferry_xcalloc(1, sizeof *c);
    c->refs = 1;
    c->ctx = ctx;
    c->group = g;
    c->rank = g->rank;
    c->size = g->size;
    c->errhandler = eh;
    ferry_errhandler_retain(eh);
    c->handle = ferry_objtab_add(&comms, c);
    return c;
}

void ferry_comm_release(struct ferry_comm *c)
{
    if (--c->refs > 0)
        return;
    if (c != ferry_comm_world && c != ferry_comm_self)
        ferry_objtab_remove(&comms, c->handle);
    ferry_errhandler_release(c->errhandler);
    ferry_group_release(c->group);
    if (c->remote)
        ferry_group_release(c->remote);
    free(c);
}

struct ferry_comm *ferry_comm_get(MPI_Comm h)
{
    if (h == MPI_COMM_WORLD)
        return ferry_comm_world;
    if (h == MPI_COMM_SELF)
        return ferry_comm_self;
    return ferry_objtab_get(&comms, h);
}

int ferry_comm_agree_ctx(struct ferry_comm *parent, uint32_t *ctx)
{
    uint32_t v = next_ctx;
    ferry_coll_allreduce_max_u32(parent, &v);
    *ctx = v;
    next_ctx = v + 2;   /* ctx for point-to-point, ctx + 1 for collectives */
    return 0;
}

void ferry_comm_init(void)
{
    ferry_objtab_init(&comms, FERRY_OBJ_COMM, 2);
    ferry_objtab_init(&groups, FERRY_OBJ_GROUP, 2);
    ferry_group_empty = ferry_xcalloc(1, sizeof *ferry_group_empty);
    ferry_group_empty->handle = MPI_GROUP_EMPTY;
    ferry_group_empty->refs = 1 << 30;   /* predefined: never freed by users */
    ferry_group_empty->rank = MPI_UNDEFINED;
    ferry_group_empty->world = ferry_xmalloc(sizeof(int));

    int n = ferry_rt.world_size;
    int *ids = ferry_xmalloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        ids[i] = i;
    struct ferry_group *gw = ferry_group_new(n, ids);
    free(ids);
    struct ferry_group *gs = ferry_group_new(1, &ferry_rt.world_rank);

    ferry_comm_world = ferry_xcalloc(1, sizeof *ferry_comm_world);
    *ferry_comm_world = (struct ferry_comm){.handle = MPI_COMM_WORLD, .refs = 1, .ctx = 0, .rank = gw->rank,
                                            .size = n, .group = gw, .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(ferry_comm_world->name, "MPI_COMM_WORLD");
    ferry_comm_self = ferry_xcalloc(1, sizeof *ferry_comm_self);
    *ferry_comm_self = (struct ferry_comm){.handle = MPI_COMM_SELF, .refs = 1, .ctx = 2, .rank = 0, .size = 1,
                                           .group = gs, .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(ferry_comm_self->name, "MPI_COMM_SELF");
}

void ferry_comm_finalize(void)
{
    ferry_comm_release(ferry_comm_self);
    ferry_comm_release(ferry_comm_world);
    ferry_comm_world = ferry_comm_self = NULL;
    free(ferry_group_empty->world);
    free(ferry_group_empty);
    ferry_objtab_destroy(&comms);
    ferry_objtab_destroy(&groups);
}
