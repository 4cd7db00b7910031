/* Groups: queries, translation, comparison and set operations. */
#include "api/check.h"
#include "core/util.h"
#include <stdlib.h>

int ferry_group_relation(const struct ferry_group *a, const struct ferry_group *b);

static int check_group(MPI_Group h, struct ferry_group **g, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    *g = ferry_group_get(h);
    if (!*g)
        return ferry_error(NULL, MPI_ERR_GROUP, fn, h == MPI_GROUP_NULL ? "group is MPI_GROUP_NULL"
                                                                      : "invalid group handle 0x%x", (unsigned)h);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_size = PMPI_Group_size
int PMPI_Group_size(MPI_Group group, int *size)
{
    struct ferry_group *g;
    int rc = check_group(group, &g, "MPI_Group_size");
    if (rc)
        return rc;
    *size = g->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_rank = PMPI_Group_rank
int PMPI_Group_rank(MPI_Group group, int *rank)
{
    struct ferry_group *g;
    int rc = check_group(group, &g, "MPI_Group_rank");
    if (rc)
        return rc;
    *rank = g->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_free = PMPI_Group_free
int PMPI_Group_free(MPI_Group *group)
{
    struct ferry_group *g;
    int rc = check_group(*group, &g, "MPI_Group_free");
    if (rc)
        return rc;
    if (g != ferry_group_empty)
        ferry_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

static int rank_in(const struct ferry_group *g, int world)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world)
            return i;
    return MPI_UNDEFINED;
}

#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    struct ferry_group *a, *b;
    int rc = check_group(group1, &a, "MPI_Group_translate_ranks");
    if (!rc)
        rc = check_group(group2, &b, "MPI_Group_translate_ranks");
    if (rc)
        return rc;
    if (n < 0)
        return ferry_error(NULL, MPI_ERR_COUNT, "MPI_Group_translate_ranks", "negative count %d", n);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= a->size)
            return ferry_error(NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks", "invalid rank %d (group has %d ranks)",
                               ranks1[i], a->size);
        ranks2[i] = rank_in(b, a->world[ranks1[i]]);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_compare = PMPI_Group_compare
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    struct ferry_group *a, *b;
    int rc = check_group(group1, &a, "MPI_Group_compare");
    if (!rc)
        rc = check_group(group2, &b, "MPI_Group_compare");
    if (rc)
        return rc;
    *result = ferry_group_relation(a, b);
    return MPI_SUCCESS;
}

static MPI_Group make_group(int n, const int *world)
{
    if (n == 0)
        return MPI_GROUP_EMPTY;
    return ferry_group_new(n, world)->handle;
}

#pragma weak MPI_Group_incl = PMPI_Group_incl
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    struct ferry_group *g;
    int rc = check_group(group, &g, "MPI_Group_incl");
    if (rc)
        return rc;
    if (n < 0 || n > g->size)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Group_incl", "invalid count %d (group has %d ranks)", n, g->size);
    int *w = ferry_xmalloc((size_t)(n + 1) * sizeof(int));
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size) {
            free(w);
            return ferry_error(NULL, MPI_ERR_RANK, "MPI_Group_incl", "invalid rank %d (group has %d ranks)", ranks[i],
                               g->size);
        }
        w[i] = g->world[ranks[i]];
    }
    *newgroup = make_group(n, w);
    free(w);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_excl = PMPI_Group_excl
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    struct ferry_group *g;
    int rc = check_group(group, &g, "MPI_Group_excl");
    if (rc)
        return rc;
    if (n < 0 || n > g->size)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Group_excl", "invalid count %d (group has %d ranks)", n, g->size);
    char *drop = ferry_xcalloc((size_t)g->size + 1, 1);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size) {
            free(drop);
            return ferry_error(NULL, MPI_ERR_RANK, "MPI_Group_excl", "invalid rank %d (group has %d ranks)", ranks[i],
                               g->size);
        }
        drop[ranks[i]] = 1;
    }
    int *w = ferry_xmalloc((size_t)g->size * sizeof(int) + 1);
    int m = 0;
    for (int i = 0; i < g->size; i++)
        if (!drop[i])
            w[m++] = g->world[i];
    *newgroup = make_group(m, w);
    free(w);
    free(drop);
    return MPI_SUCCESS;
}

/* Union, intersection, difference: members in the order the standard gives
 * (first group's order, then the second's). */
static int setop(MPI_Group g1, MPI_Group g2, MPI_Group *out, int op, const char *fn)
{
    struct ferry_group *a, *b;
    int rc = check_group(g1, &a, fn);
    if (!rc)
        rc = check_group(g2, &b, fn);
    if (rc)
        return rc;
    int *w = ferry_xmalloc((size_t)(a->size + b->size + 1) * sizeof(int));
    int m = 0;
    for (int i = 0; i < a->size; i++) {
        int in_b = rank_in(b, a->world[i]) != MPI_UNDEFINED;
        if (op == 0 || (op == 1 && in_b) || (op == 2 && !in_b))
            w[m++] = a->world[i];
    }
    if (op == 0)
        for (int i = 0; i < b->size; i++)
            if (rank_in(a, b->world[i]) == MPI_UNDEFINED)
                w[m++] = b->world[i];
    *out = make_group(m, w);
    free(w);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_union = PMPI_Group_union
int PMPI_Group_union(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    return setop(g1, g2, newgroup, 0, "MPI_Group_union");
}

#pragma weak MPI_Group_intersection = PMPI_Group_intersection
int PMPI_Group_intersection(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    return setop(g1, g2, newgroup, 1, "MPI_Group_intersection");
}

#pragma weak MPI_Group_difference = PMPI_Group_difference
int PMPI_Group_difference(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    return setop(g1, g2, newgroup, 2, "MPI_Group_difference");
}
