/* Communicator management: rank/size, dup, split, create, free, compare,
 * group, names, predefined attributes, and Barrier. */
#include "api/check.h"
#include "coll/coll.h"
#include "core/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_rank");
    if (rc)
        return rc;
    if (!rank)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Comm_rank", "rank pointer is NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_size = PMPI_Comm_size
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_size");
    if (rc)
        return rc;
    if (!size)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Comm_size", "size pointer is NULL");
    *size = c->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_dup");
    if (rc)
        return rc;
    uint32_t ctx;
    ferry_comm_agree_ctx(c, &ctx);
    c->group->refs++;
    *newcomm = ferry_comm_new(c->group, ctx, c->errhandler)->handle;
    return MPI_SUCCESS;
}

struct split_key {
    int color, key, rank;
};

static int cmp_split(const void *a, const void *b)
{
    const struct split_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

#pragma weak MPI_Comm_split = PMPI_Comm_split
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_split");
    if (rc)
        return rc;
    if (color < 0 && color != MPI_UNDEFINED)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d", color);
    struct split_key mine = {color, key, c->rank};
    struct split_key *all = ferry_xmalloc((size_t)c->size * sizeof *all);
    ferry_coll_allgather(c, &mine, sizeof mine, all);
    uint32_t ctx;
    ferry_comm_agree_ctx(c, &ctx);   /* every rank of the parent takes part, even MPI_UNDEFINED */
    if (color == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        free(all);
        return MPI_SUCCESS;
    }
    int n = 0;
    for (int i = 0; i < c->size; i++)
        if (all[i].color == color)
            all[n++] = all[i];
    qsort(all, (size_t)n, sizeof *all, cmp_split);
    int *world = ferry_xmalloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        world[i] = ferry_comm_world_rank(c, all[i].rank);
    struct ferry_group *g = ferry_group_new(n, world);
    free(world);
    free(all);
    *newcomm = ferry_comm_new(g, ctx, c->errhandler)->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_create = PMPI_Comm_create
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_create");
    if (rc)
        return rc;
    struct ferry_group *g = ferry_group_get(group);
    if (!g)
        return ferry_error(c, MPI_ERR_GROUP, "MPI_Comm_create", "invalid group handle 0x%x", (unsigned)group);
    uint32_t ctx;
    ferry_comm_agree_ctx(c, &ctx);
    if (g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    g->refs++;
    *newcomm = ferry_comm_new(g, ctx, c->errhandler)->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_free = PMPI_Comm_free
int PMPI_Comm_free(MPI_Comm *comm)
{
    struct ferry_comm *c;
    if (!comm)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Comm_free", "communicator pointer is NULL");
    int rc = check_comm(*comm, &c, "MPI_Comm_free");
    if (rc)
        return rc;
    if (c == ferry_comm_world || c == ferry_comm_self)
        return ferry_error(c, MPI_ERR_COMM, "MPI_Comm_free", "cannot free a predefined communicator");
    /* operations still in flight hold their own references */
    ferry_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* Same members in the same order? Same members at all? */
static int group_relation(const struct ferry_group *a, const struct ferry_group *b)
{
    if (a->size != b->size)
        return MPI_UNEQUAL;
    if (!memcmp(a->world, b->world, (size_t)a->size * sizeof(int)))
        return MPI_IDENT;
    for (int i = 0; i < a->size; i++) {
        int found = 0;
        for (int j = 0; j < b->size && !found; j++)
            found = a->world[i] == b->world[j];
        if (!found)
            return MPI_UNEQUAL;
    }
    return MPI_SIMILAR;
}
int ferry_group_relation(const struct ferry_group *a, const struct ferry_group *b)
{
    return group_relation(a, b);
}

#pragma weak MPI_Comm_compare = PMPI_Comm_compare
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    struct ferry_comm *a, *b;
    int rc = check_comm(comm1, &a, "MPI_Comm_compare");
    if (!rc)
        rc = check_comm(comm2, &b, "MPI_Comm_compare");
    if (rc)
        return rc;
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int rel = group_relation(a->group, b->group);
    *result = rel == MPI_IDENT ? MPI_CONGRUENT : rel;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_group = PMPI_Comm_group
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_group");
    if (rc)
        return rc;
    c->group->refs++;
    *group = c->group->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_test_inter");
    if (rc)
        return rc;
    *flag = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_set_name");
    if (rc)
        return rc;
    snprintf(c->name, sizeof c->name, "%s", name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_get_name");
    if (rc)
        return rc;
    strcpy(name, c->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

/* Predefined attributes; user keyvals arrive with the communicator issue. */
static int attr_tag_ub = 0x7fffffff, attr_host = MPI_PROC_NULL, attr_io = MPI_ANY_SOURCE, attr_wtime_global = 0;
static int attr_universe, attr_appnum;

static int get_attr(MPI_Comm comm, int keyval, void *value, int *flag, const char *fn)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, fn);
    if (rc)
        return rc;
    int *v = NULL;
    attr_universe = ferry_rt.world_size;
    attr_appnum = ferry_rt.appnum;
    switch (keyval) {
    case MPI_TAG_UB: v = &attr_tag_ub; break;
    case MPI_HOST: v = &attr_host; break;
    case MPI_IO: v = &attr_io; break;
    case MPI_WTIME_IS_GLOBAL: v = &attr_wtime_global; break;
    case MPI_UNIVERSE_SIZE: v = &attr_universe; break;
    case MPI_APPNUM: v = &attr_appnum; break;
    default:
        return ferry_error(c, MPI_ERR_KEYVAL, fn, "keyval %d is not a predefined attribute (user keyvals are not "
                           "implemented yet)", keyval);
    }
    *flag = 1;
    *(int **)value = v;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
    return get_attr(comm, keyval, value, flag, "MPI_Comm_get_attr");
}

#pragma weak MPI_Attr_get = PMPI_Attr_get
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *value, int *flag)
{
    return get_attr(comm, keyval, value, flag, "MPI_Attr_get");
}

#pragma weak MPI_Barrier = PMPI_Barrier
int PMPI_Barrier(MPI_Comm comm)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Barrier");
    if (rc)
        return rc;
    return ferry_coll_barrier(c);
}
