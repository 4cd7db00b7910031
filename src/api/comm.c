/* Communicator management: rank/size, dup (blocking, nonblocking, with
 * info), split (by color, by type), create (collective over the parent or
 * over the group only), free, compare, groups, intercommunicator queries,
 * hints, names, and Barrier. Intercommunicator construction is in
 * intercomm.c, attributes in attr.c, topologies in topo.c. */
#include "api/check.h"
#include "api/comm_internal.h"
#include "core/universe.h"
#include "coll/coll.h"
#include "core/attr.h"
#include "core/info.h"
#include "core/topo.h"
#include "core/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ferry_api_callback_error(struct ferry_comm *c, int rc, const char *fn, const char *what)
{
    /* a code the application added (Add_error_code) or a predefined one is
     * handed on as it is, so the caller sees its own class and string */
    int code = rc > 0 && ferry_error_class_of(rc) > 0 ? rc : MPI_ERR_OTHER;
    return ferry_error(c, code, fn, "%s callback returned error %d", what, rc);
}

int ferry_api_need_intra(struct ferry_comm *c, const char *fn)
{
    if (c->remote)
        return ferry_error(c, MPI_ERR_COMM, fn, "intercommunicators are not allowed here");
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_rank");
    if (rc)
        return rc;
    if ((rc = check_out(rank, "rank", "MPI_Comm_rank")))
        return rc;
    *rank = c->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_size = PMPI_Comm_size
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_size");
    if (rc)
        return rc;
    if ((rc = check_out(size, "size", "MPI_Comm_size")))
        return rc;
    *size = c->size;
    return MPI_SUCCESS;
}

/* ---- hints -------------------------------------------------------------------- */

/* The communicator hints Ferry keeps: the standard's assertions, which it may
 * always accept (it relies on none of them yet). Every other key is ignored
 * and, as MPI-4 7.4.4 asks of ignored hints, not reported by Comm_get_info. */
static const char *const known_hints[] = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
                                          "mpi_assert_exact_length", "mpi_assert_allow_overtaking"};

static void keep_hints(struct ferry_info *to, const struct ferry_info *from)
{
    for (int i = 0; from && i < from->n; i++)
        for (size_t k = 0; k < sizeof known_hints / sizeof known_hints[0]; k++)
            if (!strcmp(from->keys[i], known_hints[k]))
                ferry_info_set(to, from->keys[i], from->vals[i]);
}

static struct ferry_info *hints_of(const struct ferry_info *in)
{
    struct ferry_info *h = ferry_info_new();
    keep_hints(h, in);
    return h;
}

/* ---- dup ----------------------------------------------------------------------- */

/* What a duplicate copies from c (topology, attributes), into n. Not c's
 * hints: MPI-4.0 (7.4.2, 7.4.4) no longer propagates info hints from one
 * communicator to another, so a plain dup starts with none and the _with_info
 * forms get only the hints they are given. */
static int dup_contents(struct ferry_comm *c, struct ferry_info *info, struct ferry_comm *n, const char *fn)
{
    n->topo = ferry_topo_dup(c->topo);
    n->info = info;
    n->sessions_model = c->sessions_model;   /* the predefined attributes are copied too */
    int rc = ferry_attr_copy_all(&c->attrs, c->handle, &n->attrs, n->handle);
    if (rc) {
        ferry_attr_delete_all(&n->attrs, n->handle);
        return ferry_api_callback_error(c, rc, fn, "attribute copy");
    }
    return MPI_SUCCESS;
}

int ferry_api_dup(struct ferry_comm *c, struct ferry_info *info, struct ferry_comm **out, const char *fn)
{
    uint32_t ctx;
    ferry_comm_agree_ctx_n(c, &ctx, c->remote ? 4 : 2);
    struct ferry_comm *n = ferry_comm_shell(c, ctx, c->errhandler);
    int rc = dup_contents(c, info, n, fn);
    if (rc) {
        ferry_comm_release(n);
        n = NULL;
    }
    *out = n;
    return rc;
}

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c, *n;
    int rc = check_comm(comm, &c, "MPI_Comm_dup");
    if (rc)
        return rc;
    if ((rc = check_out(newcomm, "newcomm", "MPI_Comm_dup")))
        return rc;
    rc = ferry_api_dup(c, NULL, &n, "MPI_Comm_dup");
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return rc;
}

static int info_arg(struct ferry_comm *c, MPI_Info info, struct ferry_info **out, const char *fn)
{
    *out = NULL;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    *out = ferry_info_get(info);
    if (!*out)
        return ferry_error(c, MPI_ERR_INFO, fn, "invalid info handle 0x%x", (unsigned)info);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c, *n;
    struct ferry_info *in;
    int rc = check_comm(comm, &c, "MPI_Comm_dup_with_info");
    if (rc || (rc = info_arg(c, info, &in, "MPI_Comm_dup_with_info")))
        return rc;
    if ((rc = check_out(newcomm, "newcomm", "MPI_Comm_dup_with_info")))
        return rc;
    rc = ferry_api_dup(c, hints_of(in), &n, "MPI_Comm_dup_with_info");
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return rc;
}

/* The new communicator exists (and has its attributes) at once; its context
 * id is agreed on by a schedule that runs while the application goes on
 * (coll/ctx_agree.c), so Comm_idup returns before the other members call it. */
static int idup(MPI_Comm comm, MPI_Info info, int with_info, MPI_Comm *newcomm, MPI_Request *request, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_info *in = NULL;
    int rc = check_comm(comm, &c, fn);
    if (rc || (with_info && (rc = info_arg(c, info, &in, fn))))
        return rc;
    if (!newcomm || !request)
        return ferry_error(c, MPI_ERR_ARG, fn, "NULL newcomm or request pointer");
    struct ferry_comm *n = ferry_comm_shell(c, 0, c->errhandler);   /* id set when the agreement ends */
    struct ferry_request *r;
    ferry_coll_agree_ctx_start(c, n, c->remote ? 4 : 2, &r);
    *request = r->handle;
    /* with_info: the new communicator gets the given hints, not c's (as
     * Comm_dup_with_info) */
    rc = dup_contents(c, with_info ? hints_of(in) : NULL, n, fn);
    if (rc) {
        /* the agreement still runs (the other members take part in it) */
        ferry_comm_release(n);
        *newcomm = MPI_COMM_NULL;
        return rc;
    }
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_idup = PMPI_Comm_idup
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return idup(comm, MPI_INFO_NULL, 0, newcomm, request, "MPI_Comm_idup");
}

#pragma weak MPI_Comm_idup_with_info = PMPI_Comm_idup_with_info
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    FERRY_API_ENTER();
    return idup(comm, info, 1, newcomm, request, "MPI_Comm_idup_with_info");
}

/* ---- split ------------------------------------------------------------------- */

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

void ferry_api_split(struct ferry_comm *c, int color, int key, struct ferry_comm **out)
{
    struct split_key mine = {color, key, c->rank};
    struct split_key *all = ferry_xmalloc((size_t)c->size * sizeof *all);
    ferry_coll_allgather(c, &mine, sizeof mine, all);
    uint32_t ctx;
    ferry_comm_agree_ctx(c, &ctx);   /* every rank of the parent takes part, even MPI_UNDEFINED */
    *out = NULL;
    if (color == MPI_UNDEFINED) {
        free(all);
        return;
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
    *out = ferry_comm_new(g, ctx, c->errhandler);
}

#pragma weak MPI_Comm_split = PMPI_Comm_split
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c, *n;
    int rc = check_comm(comm, &c, "MPI_Comm_split");
    if (rc)
        return rc;
    if (color < 0 && color != MPI_UNDEFINED)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d", color);
    if ((rc = check_out(newcomm, "newcomm", "MPI_Comm_split")))
        return rc;
    if (c->remote)
        ferry_api_intercomm_split(c, color, key, &n);
    else
        ferry_api_split(c, color, key, &n);
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#define TAG_SPLIT_HINT (-401)

/* Did every rank of c pass the same value (NULL: none) for a hint? Two
 * max-reductions give the largest and the smallest hash; equal means
 * agreement, and every rank reaches the same answer. */
static int hint_agreed(struct ferry_comm *c, const char *value)
{
    uint32_t h = value ? ferry_hash_str(value, 0) : 0;   /* 0 stands for "no value" */
    uint32_t hi = h, lo = ~h;
    ferry_comm_mgmt_allreduce_max(c, &hi, TAG_SPLIT_HINT);
    ferry_comm_mgmt_allreduce_max(c, &lo, TAG_SPLIT_HINT);
    return hi == ~lo;
}

/* The processes sharing this node, named by the node's host name: every
 * process of every world on it (windows and shared memory span worlds,
 * api/win.c), where a world's rank numbers would part the worlds. */
static int node_color(void)
{
    return (int)(ferry_hash_str(ferry_rt.hostname, 0) & 0x7fffffff);
}

#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c, *n;
    struct ferry_info *in;
    int rc = check_comm(comm, &c, "MPI_Comm_split_type");
    if (rc || (rc = info_arg(c, info, &in, "MPI_Comm_split_type")))
        return rc;
    if ((rc = check_out(newcomm, "newcomm", "MPI_Comm_split_type")))
        return rc;
    int color;
    if (split_type == MPI_UNDEFINED) {
        color = MPI_UNDEFINED;
    } else if (split_type == MPI_COMM_TYPE_SHARED) {
        color = node_color();
    } else if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
        /* MPI-4: a split by the hardware resource the info names. The one
         * resource Ferry tells apart is the node's shared memory (the value
         * every MPI must know); any other gives MPI_COMM_NULL, which MPI-4
         * allows (still a collective call: every rank takes part). */
        const char *res = ferry_info_lookup(in, "mpi_hw_resource_type");
        color = res && !strcmp(res, "mpi_shared_memory") ? node_color() : MPI_UNDEFINED;
    } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        /* a proper subset finer than the node: none Ferry knows */
        color = MPI_UNDEFINED;
    } else if (split_type == MPIX_COMM_TYPE_NEIGHBORHOOD) {
        /* MPICH's extension: the ranks that share the directory named by
         * "nbhd_common_dirname", which must be the same on every rank (else,
         * or without the hint, MPI_COMM_NULL). Ferry takes a node's ranks as
         * those that share a directory. */
        const char *dir = ferry_info_lookup(in, "nbhd_common_dirname");
        int agreed = hint_agreed(c->remote ? c->local_comm : c, dir);
        color = dir && agreed && access(dir, R_OK | X_OK) == 0 ? node_color() : MPI_UNDEFINED;
    } else {
        return ferry_error(c, MPI_ERR_ARG, "MPI_Comm_split_type", "unknown split type %d", split_type);
    }
    /* an intercommunicator splits as MPI_Comm_split splits one (as MPICH
     * does): each group by the type's colour, the new intercommunicator
     * pairing the local and remote members of a colour */
    if (c->remote)
        ferry_api_intercomm_split(c, color, key, &n);
    else
        ferry_api_split(c, color, key, &n);
    /* the hints given apply to the new communicator (as Comm_dup_with_info) */
    if (n)
        n->info = hints_of(in);
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* ---- create ------------------------------------------------------------------ */

/* Every member of g in c's local group? */
static int subgroup_of(const struct ferry_group *g, const struct ferry_group *of)
{
    for (int i = 0; i < g->size; i++)
        if (ferry_group_rank_of(of, g->world[i]) == MPI_UNDEFINED)
            return 0;
    return 1;
}

#pragma weak MPI_Comm_create = PMPI_Comm_create
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c, *n = NULL;
    int rc = check_comm(comm, &c, "MPI_Comm_create");
    if (rc)
        return rc;
    struct ferry_group *g = ferry_group_get(group);
    if (!g)
        return ferry_error(c, MPI_ERR_GROUP, "MPI_Comm_create", "invalid group handle 0x%x", (unsigned)group);
    if (!subgroup_of(g, c->group))
        return ferry_error(c, MPI_ERR_GROUP, "MPI_Comm_create", "the group is not a subgroup of the communicator's");
    if ((rc = check_out(newcomm, "newcomm", "MPI_Comm_create")))
        return rc;
    if (c->remote) {
        ferry_api_intercomm_create(c, g, &n);
    } else {
        uint32_t ctx;
        ferry_comm_agree_ctx(c, &ctx);
        if (g->rank != MPI_UNDEFINED) {
            g->refs++;
            n = ferry_comm_new(g, ctx, c->errhandler);
        }
    }
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* Collective over the members of the group only: the context id is agreed
 * among them with messages on the parent (management context, user tag);
 * the parent's other ranks are not involved. */
#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_create_group");
    if (rc || (rc = ferry_api_need_intra(c, "MPI_Comm_create_group")))
        return rc;
    struct ferry_group *g = ferry_group_get(group);
    if (!g)
        return ferry_error(c, MPI_ERR_GROUP, "MPI_Comm_create_group", "invalid group handle 0x%x", (unsigned)group);
    if (tag < 0 || tag > FERRY_TAG_UB)
        return ferry_error(c, MPI_ERR_TAG, "MPI_Comm_create_group", "invalid tag %d", tag);
    if (!subgroup_of(g, c->group))
        return ferry_error(c, MPI_ERR_GROUP, "MPI_Comm_create_group",
                           "the group is not a subgroup of the communicator's");
    if ((rc = check_out(newcomm, "newcomm", "MPI_Comm_create_group")))
        return rc;
    if (g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    uint32_t ctx;
    ferry_comm_agree_ctx_group(c, g, tag, &ctx);
    g->refs++;
    *newcomm = ferry_comm_new(g, ctx, c->errhandler)->handle;
    return MPI_SUCCESS;
}

/* ---- free, compare, groups ------------------------------------------------- */

#pragma weak MPI_Comm_free = PMPI_Comm_free
int PMPI_Comm_free(MPI_Comm *comm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    if (!comm)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Comm_free", "communicator pointer is NULL");
    int rc = check_comm(*comm, &c, "MPI_Comm_free");
    if (rc)
        return rc;
    if (c == ferry_comm_world || c == ferry_comm_self)
        return ferry_error(c, MPI_ERR_COMM, "MPI_Comm_free", "cannot free a predefined communicator");
    rc = ferry_attr_delete_all(&c->attrs, c->handle);
    if (rc)
        return ferry_api_callback_error(c, rc, "MPI_Comm_free", "attribute delete");
    if (c == ferry_universe_parent)   /* MPI_Comm_get_parent gives MPI_COMM_NULL from now on */
        ferry_universe_parent = NULL;
    /* operations still in flight hold their own references */
    ferry_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_compare = PMPI_Comm_compare
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    FERRY_API_ENTER();
    struct ferry_comm *a, *b;
    int rc = check_comm(comm1, &a, "MPI_Comm_compare");
    if (!rc)
        rc = check_comm(comm2, &b, "MPI_Comm_compare");
    if (rc)
        return rc;
    if (!result)
        return ferry_error(a, MPI_ERR_ARG, "MPI_Comm_compare", "result pointer is NULL");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (!a->remote != !b->remote) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int rel = ferry_group_relation(a->group, b->group);
    if (a->remote) {
        int rrel = ferry_group_relation(a->remote, b->remote);
        if (rrel > rel)
            rel = rrel;   /* IDENT < SIMILAR < UNEQUAL */
    }
    *result = rel == MPI_IDENT ? MPI_CONGRUENT : rel;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_group = PMPI_Comm_group
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_group");
    if (rc)
        return rc;
    if ((rc = check_out(group, "group", "MPI_Comm_group")))
        return rc;
    c->group->refs++;
    *group = c->group->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_test_inter");
    if (rc)
        return rc;
    if ((rc = check_out(flag, "flag", "MPI_Comm_test_inter")))
        return rc;
    *flag = c->remote != NULL;
    return MPI_SUCCESS;
}

static int need_inter(MPI_Comm comm, struct ferry_comm **c, const char *fn)
{
    int rc = check_comm(comm, c, fn);
    if (rc)
        return rc;
    if (!(*c)->remote)
        return ferry_error(*c, MPI_ERR_COMM, fn, "not an intercommunicator");
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = need_inter(comm, &c, "MPI_Comm_remote_size");
    if (rc)
        return rc;
    if ((rc = check_out(size, "size", "MPI_Comm_remote_size")))
        return rc;
    *size = c->remote->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = need_inter(comm, &c, "MPI_Comm_remote_group");
    if (rc)
        return rc;
    if ((rc = check_out(group, "group", "MPI_Comm_remote_group")))
        return rc;
    c->remote->refs++;
    *group = c->remote->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    struct ferry_info *in;
    int rc = check_comm(comm, &c, "MPI_Comm_set_info");
    if (rc || (rc = info_arg(c, info, &in, "MPI_Comm_set_info")))
        return rc;
    if (!in)
        return MPI_SUCCESS;
    if (!c->info)
        c->info = ferry_info_new();
    keep_hints(c->info, in);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_get_info");
    if (rc)
        return rc;
    if ((rc = check_out(info_used, "info", "MPI_Comm_get_info")))
        return rc;
    *info_used = (c->info ? ferry_info_dup(c->info) : ferry_info_new())->handle;
    return MPI_SUCCESS;
}

/* ---- names ------------------------------------------------------------------ */

#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_set_name");
    if (rc)
        return rc;
    if (!name)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Comm_set_name", "name is NULL");
    snprintf(c->name, sizeof c->name, "%s", name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_get_name");
    if (rc)
        return rc;
    if (!name || !resultlen)
        return ferry_error(c, MPI_ERR_ARG, "MPI_Comm_get_name", "NULL name or resultlen pointer");
    strcpy(name, c->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Barrier = PMPI_Barrier
int PMPI_Barrier(MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Barrier");
    if (rc)
        return rc;
    return ferry_coll_barrier(c);
}
