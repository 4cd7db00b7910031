/* Groups: queries, translation, comparison and set operations. */
#include "api/check.h"
#include "core/util.h"
#include <stdlib.h>

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
    FERRY_API_ENTER();
    struct ferry_group *g;
    int rc = check_group(group, &g, "MPI_Group_size");
    if (rc || (rc = check_out(size, "size", "MPI_Group_size")))
        return rc;
    *size = g->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_rank = PMPI_Group_rank
int PMPI_Group_rank(MPI_Group group, int *rank)
{
    FERRY_API_ENTER();
    struct ferry_group *g;
    int rc = check_group(group, &g, "MPI_Group_rank");
    if (rc || (rc = check_out(rank, "rank", "MPI_Group_rank")))
        return rc;
    *rank = g->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_free = PMPI_Group_free
int PMPI_Group_free(MPI_Group *group)
{
    FERRY_API_ENTER();
    struct ferry_group *g;
    if (!group)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Group_free", "group pointer is NULL");
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
    return ferry_group_rank_of(g, world);
}

#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    FERRY_API_ENTER();
    struct ferry_group *a, *b;
    int rc = check_group(group1, &a, "MPI_Group_translate_ranks");
    if (!rc)
        rc = check_group(group2, &b, "MPI_Group_translate_ranks");
    if (rc)
        return rc;
    if (n < 0)
        return ferry_error(NULL, MPI_ERR_COUNT, "MPI_Group_translate_ranks", "negative count %d", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Group_translate_ranks", "NULL rank array");
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
    FERRY_API_ENTER();
    struct ferry_group *a, *b;
    int rc = check_group(group1, &a, "MPI_Group_compare");
    if (!rc)
        rc = check_group(group2, &b, "MPI_Group_compare");
    if (rc)
        return rc;
    if ((rc = check_out(result, "result", "MPI_Group_compare")))
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
    FERRY_API_ENTER();
    struct ferry_group *g;
    int rc = check_group(group, &g, "MPI_Group_incl");
    if (rc)
        return rc;
    if ((rc = check_out(newgroup, "newgroup", "MPI_Group_incl")))
        return rc;
    if (n < 0 || n > g->size)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Group_incl", "invalid count %d (group has %d ranks)", n, g->size);
    if (n > 0 && !ranks)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Group_incl", "ranks array is NULL");
    int *w = ferry_xmalloc((size_t)(n + 1) * sizeof(int));
    char *seen = ferry_xcalloc((size_t)g->size + 1, 1);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size || seen[ranks[i]]) {
            int r = ranks[i];
            free(w);
            free(seen);
            if (r >= 0 && r < g->size)
                return ferry_error(NULL, MPI_ERR_RANK, "MPI_Group_incl", "rank %d listed twice", r);
            return ferry_error(NULL, MPI_ERR_RANK, "MPI_Group_incl", "invalid rank %d (group has %d ranks)", r,
                               g->size);
        }
        seen[ranks[i]] = 1;
        w[i] = g->world[ranks[i]];
    }
    *newgroup = make_group(n, w);
    free(seen);
    free(w);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_excl = PMPI_Group_excl
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    FERRY_API_ENTER();
    struct ferry_group *g;
    int rc = check_group(group, &g, "MPI_Group_excl");
    if (rc)
        return rc;
    if ((rc = check_out(newgroup, "newgroup", "MPI_Group_excl")))
        return rc;
    if (n < 0 || n > g->size)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Group_excl", "invalid count %d (group has %d ranks)", n, g->size);
    if (n > 0 && !ranks)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Group_excl", "ranks array is NULL");
    char *drop = ferry_xcalloc((size_t)g->size + 1, 1);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size || drop[ranks[i]]) {
            int r = ranks[i];
            free(drop);
            if (r >= 0 && r < g->size)
                return ferry_error(NULL, MPI_ERR_RANK, "MPI_Group_excl", "rank %d listed twice", r);
            return ferry_error(NULL, MPI_ERR_RANK, "MPI_Group_excl", "invalid rank %d (group has %d ranks)", r,
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
    if ((rc = check_out(out, "out", fn)))
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
    FERRY_API_ENTER();
    return setop(g1, g2, newgroup, 0, "MPI_Group_union");
}

#pragma weak MPI_Group_intersection = PMPI_Group_intersection
int PMPI_Group_intersection(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    FERRY_API_ENTER();
    return setop(g1, g2, newgroup, 1, "MPI_Group_intersection");
}

#pragma weak MPI_Group_difference = PMPI_Group_difference
int PMPI_Group_difference(MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
    FERRY_API_ENTER();
    return setop(g1, g2, newgroup, 2, "MPI_Group_difference");
}

/* The ranks a list of (first, last, stride) triplets names, in order, into
 * out (sized g->size); MPI_ERR_ARG for a zero stride, a triplet that runs
 * away from its last rank, a named rank outside the group, or a rank named
 * twice (as MPICH reports them). Only the ranks a triplet names must be in
 * the group, not `last` itself: (5, 8, 2) on 8 ranks names 5 and 7 (IBM's
 * group/range test, which MPICH passes). Returns the count or -1 after
 * raising the error. */
static int expand_ranges(const struct ferry_group *g, int n, int ranges[][3], int *out, const char *fn)
{
    char *seen = ferry_xcalloc((size_t)g->size + 1, 1);
    int m = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        const char *why = NULL;
        if (stride == 0)
            why = "zero stride";
        else if ((stride > 0 && first > last) || (stride < 0 && first < last))
            why = "stride points away from the last rank";
        for (long r = first; !why && (stride > 0 ? r <= last : r >= last); r += stride) {
            if (r < 0 || r >= g->size) {
                why = "rank outside the group";
                break;
            }
            if (seen[r]) {
                why = "rank named twice";
                break;
            }
            seen[r] = 1;
            out[m++] = (int)r;
        }
        if (why) {
            free(seen);
            ferry_error(NULL, MPI_ERR_ARG, fn, "invalid range %d (%d, %d, %d) for a group of %d: %s", i, first, last,
                        stride, g->size, why);
            return -1;
        }
    }
    free(seen);
    return m;
}

static int range_op(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, int incl, const char *fn)
{
    struct ferry_group *g;
    int rc = check_group(group, &g, fn);
    if (rc)
        return rc;
    if (n < 0)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "negative count %d", n);
    if ((n > 0 && !ranges) || !newgroup)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "NULL ranges or newgroup pointer");
    int *r = ferry_xmalloc((size_t)g->size * sizeof(int) + 1);
    int m = expand_ranges(g, n, ranges, r, fn);
    if (m < 0) {
        free(r);
        return MPI_ERR_ARG;
    }
    int *w = ferry_xmalloc((size_t)g->size * sizeof(int) + 1);
    int k = 0;
    if (incl) {
        for (int i = 0; i < m; i++)
            w[k++] = g->world[r[i]];
    } else {
        char *drop = ferry_xcalloc((size_t)g->size + 1, 1);
        for (int i = 0; i < m; i++)
            drop[r[i]] = 1;
        for (int i = 0; i < g->size; i++)
            if (!drop[i])
                w[k++] = g->world[i];
        free(drop);
    }
    *newgroup = make_group(k, w);
    free(w);
    free(r);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    FERRY_API_ENTER();
    return range_op(group, n, ranges, newgroup, 1, "MPI_Group_range_incl");
}

#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    FERRY_API_ENTER();
    return range_op(group, n, ranges, newgroup, 0, "MPI_Group_range_excl");
}
