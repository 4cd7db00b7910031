/* comm_groups: every group operation against a reference computed here.
 *
 * Group_incl/excl with pseudo-random subsets and orders, Group_range_incl /
 * range_excl with forward, backward, strided and multiple triplets and one
 * whose last rank lies past the group while the ranks it names do not (the
 * expected member list is expanded here), union / intersection / difference
 * of many group pairs (the standard's ordering: the first group's order,
 * then the second's), Group_compare (IDENT / SIMILAR / UNEQUAL),
 * translate_ranks (MPI_PROC_NULL, MPI_UNDEFINED, to MPI_GROUP_EMPTY),
 * Group_rank of members and non-members, MPI_GROUP_EMPTY as input and output
 * of every operation, Group_free, and the error classes of bad arguments
 * (MPI_ERR_RANK for bad ranks in incl/excl/translate, MPI_ERR_ARG for bad
 * range triplets, MPI_ERR_GROUP for MPI_GROUP_NULL).
 */
#include "common.h"

static int rank, size;
static MPI_Group gw;

/* members of g as world ranks */
static int members(MPI_Group g, int *out)
{
    int n;
    CHECK_RC(MPI_Group_size(g, &n));
    int *in = tc_malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        in[i] = i;
    if (n > 0)
        CHECK_RC(MPI_Group_translate_ranks(g, n, in, gw, out));
    free(in);
    return n;
}

/* g holds exactly ref[0..n) in this order; Group_rank agrees */
static void expect_group(MPI_Group g, const int *ref, int n, const char *what)
{
    int *m = tc_malloc(sizeof(int) * (size_t)(size + 1));
    int gn = members(g, m);
    CHECK(gn == n, "%s: size %d, expected %d", what, gn, n);
    int myrank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        CHECK(m[i] == ref[i], "%s: member %d is world rank %d, expected %d", what, i, m[i], ref[i]);
        if (ref[i] == rank)
            myrank = i;
    }
    int r;
    CHECK_RC(MPI_Group_rank(g, &r));
    CHECK(r == myrank, "%s: Group_rank %d, expected %d", what, r, myrank);
    free(m);
}

static unsigned lcg = 12345;
static unsigned rnd(unsigned n)
{
    lcg = lcg * 1103515245u + 12345u;
    return (lcg >> 8) % n;
}

/* random subset of 0..size-1 in random order; returns its size */
static int random_subset(int *out)
{
    int *p = tc_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        p[i] = i;
    for (int i = size - 1; i > 0; i--) {
        int j = (int)rnd((unsigned)i + 1), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    int n = (int)rnd((unsigned)size + 1);
    memcpy(out, p, sizeof(int) * (size_t)n);
    free(p);
    return n;
}

static int contains(const int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (a[i] == v)
            return 1;
    return 0;
}

static void test_incl_excl(void)
{
    int *sub = tc_malloc(sizeof(int) * (size_t)size), *ref = tc_malloc(sizeof(int) * (size_t)size);
    for (int iter = 0; iter < 40; iter++) {
        int n = random_subset(sub);
        MPI_Group g;
        CHECK_RC(MPI_Group_incl(gw, n, sub, &g));
        expect_group(g, sub, n, "Group_incl");
        /* incl of a group that is not the world: ranks are relative to it */
        if (n > 0) {
            int idx[1] = {n - 1};
            MPI_Group g1;
            CHECK_RC(MPI_Group_incl(g, 1, idx, &g1));
            expect_group(g1, &sub[n - 1], 1, "Group_incl of a subgroup");
            CHECK_RC(MPI_Group_free(&g1));
        }
        CHECK_RC(MPI_Group_free(&g));
        CHECK(g == MPI_GROUP_NULL, "Group_free did not null the handle");

        CHECK_RC(MPI_Group_excl(gw, n, sub, &g));
        int m = 0;
        for (int i = 0; i < size; i++)
            if (!contains(sub, n, i))
                ref[m++] = i;
        expect_group(g, ref, m, "Group_excl");
        CHECK_RC(MPI_Group_free(&g));
    }
    free(sub);
    free(ref);
}

/* expand triplets as the standard defines them */
static int expand(int n, int ranges[][3], int *out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];
        for (int r = f; s > 0 ? r <= l : r >= l; r += s)
            out[m++] = r;
    }
    return m;
}

static void check_ranges(int n, int ranges[][3], const char *what)
{
    int *ref = tc_malloc(sizeof(int) * (size_t)(size + 1)), *ex = tc_malloc(sizeof(int) * (size_t)(size + 1));
    int m = expand(n, ranges, ref);
    MPI_Group g;
    CHECK_RC(MPI_Group_range_incl(gw, n, ranges, &g));
    expect_group(g, ref, m, what);
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Group_range_excl(gw, n, ranges, &g));
    int k = 0;
    for (int i = 0; i < size; i++)
        if (!contains(ref, m, i))
            ex[k++] = i;
    expect_group(g, ex, k, what);
    CHECK_RC(MPI_Group_free(&g));
    free(ref);
    free(ex);
}

static void test_ranges(void)
{
    int last = size - 1;
    int r1[1][3] = {{0, last, 1}};
    check_ranges(1, r1, "range 0..last");
    int r2[1][3] = {{last, 0, -1}};
    check_ranges(1, r2, "range last..0 step -1");
    int r3[1][3] = {{0, last, 2}};
    check_ranges(1, r3, "range evens");
    int r4[1][3] = {{last, 0, -3}};
    check_ranges(1, r4, "range backwards by 3");
    int r5[1][3] = {{0, last, size + 5}};
    check_ranges(1, r5, "range with a stride past the end");
    check_ranges(0, r1, "no ranges");
    if (size > 1) {
        int r6[2][3] = {{1, last, 2}, {0, last, 2}};
        check_ranges(2, r6, "odds then evens");
        int r7[2][3] = {{last, last, 1}, {0, last - 1, 1}};
        check_ranges(2, r7, "rotation");
    }
    if (size > 4) {
        int r8[3][3] = {{2, 3, 1}, {0, 0, 5}, {last, 4, -1}};
        check_ranges(3, r8, "three ranges");
    }
}

/* the standard's set operations, on world-rank lists */
static int ref_setop(int op, const int *a, int na, const int *b, int nb, int *out)
{
    int m = 0;
    for (int i = 0; i < na; i++) {
        int inb = contains(b, nb, a[i]);
        if (op == 0 || (op == 1 && inb) || (op == 2 && !inb))
            out[m++] = a[i];
    }
    if (op == 0)
        for (int i = 0; i < nb; i++)
            if (!contains(a, na, b[i]))
                out[m++] = b[i];
    return m;
}

static void test_setops(void)
{
    int *a = tc_malloc(sizeof(int) * (size_t)size), *b = tc_malloc(sizeof(int) * (size_t)size);
    int *ref = tc_malloc(sizeof(int) * (size_t)(2 * size + 1));
    for (int iter = 0; iter < 40; iter++) {
        int na = random_subset(a), nb = random_subset(b);
        MPI_Group ga, gb;
        CHECK_RC(MPI_Group_incl(gw, na, a, &ga));
        CHECK_RC(MPI_Group_incl(gw, nb, b, &gb));
        if (iter % 7 == 0) {   /* MPI_GROUP_EMPTY itself as an operand */
            CHECK_RC(MPI_Group_free(&gb));
            gb = MPI_GROUP_EMPTY;
            nb = 0;
        }
        MPI_Group g;
        static const char *names[] = {"union", "intersection", "difference"};
        for (int op = 0; op < 3; op++) {
            int (*fn)(MPI_Group, MPI_Group, MPI_Group *) =
                op == 0 ? MPI_Group_union : op == 1 ? MPI_Group_intersection : MPI_Group_difference;
            CHECK_RC(fn(ga, gb, &g));
            int m = ref_setop(op, a, na, b, nb, ref);
            expect_group(g, ref, m, names[op]);
            if (m == 0) {
                int res;
                CHECK_RC(MPI_Group_compare(g, MPI_GROUP_EMPTY, &res));
                CHECK(res == MPI_IDENT, "empty %s compares %d with MPI_GROUP_EMPTY", names[op], res);
            }
            if (g != MPI_GROUP_EMPTY)
                CHECK_RC(MPI_Group_free(&g));
            /* and the other way round */
            CHECK_RC(fn(gb, ga, &g));
            m = ref_setop(op, b, nb, a, na, ref);
            expect_group(g, ref, m, names[op]);
            if (g != MPI_GROUP_EMPTY)
                CHECK_RC(MPI_Group_free(&g));
        }
        /* compare: same members in the same order / another order / others */
        int res;
        CHECK_RC(MPI_Group_compare(ga, ga, &res));
        CHECK(res == MPI_IDENT, "compare(g, g) = %d", res);
        int *rev = tc_malloc(sizeof(int) * (size_t)(na + 1));
        for (int i = 0; i < na; i++)
            rev[i] = a[na - 1 - i];
        MPI_Group gr;
        CHECK_RC(MPI_Group_incl(gw, na, rev, &gr));
        CHECK_RC(MPI_Group_compare(ga, gr, &res));
        CHECK(res == (na <= 1 ? MPI_IDENT : MPI_SIMILAR), "compare(g, reversed g) = %d (size %d)", res, na);
        CHECK_RC(MPI_Group_free(&gr));
        free(rev);
        int same = na == nb, sameset = na == nb;
        for (int i = 0; i < na && same; i++)
            same = a[i] == b[i];
        for (int i = 0; i < na && sameset; i++)
            sameset = contains(b, nb, a[i]);
        CHECK_RC(MPI_Group_compare(ga, gb, &res));
        int expect = same ? MPI_IDENT : sameset ? MPI_SIMILAR : MPI_UNEQUAL;
        CHECK(res == expect, "compare = %d, expected %d", res, expect);

        /* translate a -> b: every rank, plus MPI_PROC_NULL */
        int *in = tc_malloc(sizeof(int) * (size_t)(na + 1)), *out = tc_malloc(sizeof(int) * (size_t)(na + 1));
        for (int i = 0; i < na; i++)
            in[i] = na - 1 - i;
        in[na] = MPI_PROC_NULL;
        CHECK_RC(MPI_Group_translate_ranks(ga, na + 1, in, gb, out));
        for (int i = 0; i < na; i++) {
            int w = a[in[i]], e = MPI_UNDEFINED;
            for (int j = 0; j < nb; j++)
                if (b[j] == w)
                    e = j;
            CHECK(out[i] == e, "translate rank %d (world %d) -> %d, expected %d", in[i], w, out[i], e);
        }
        /* (MPICH 4.0 gives MPI_UNDEFINED when translating into an empty group) */
        if (nb > 0)
            CHECK(out[na] == MPI_PROC_NULL, "translate MPI_PROC_NULL -> %d", out[na]);
        free(in);
        free(out);
        CHECK_RC(MPI_Group_free(&ga));
        if (gb != MPI_GROUP_EMPTY)
            CHECK_RC(MPI_Group_free(&gb));
    }
    free(a);
    free(b);
    free(ref);
}

static void test_empty(void)
{
    int n, r, res;
    CHECK_RC(MPI_Group_size(MPI_GROUP_EMPTY, &n));
    CHECK(n == 0, "MPI_GROUP_EMPTY size %d", n);
    CHECK_RC(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    CHECK(r == MPI_UNDEFINED, "MPI_GROUP_EMPTY rank %d", r);
    MPI_Group g;
    CHECK_RC(MPI_Group_incl(gw, 0, NULL, &g));
    CHECK_RC(MPI_Group_size(g, &n));
    CHECK(n == 0, "incl of nothing has size %d", n);
    CHECK_RC(MPI_Group_compare(g, MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_IDENT, "empty incl compares %d with MPI_GROUP_EMPTY", res);
    if (g != MPI_GROUP_EMPTY)
        CHECK_RC(MPI_Group_free(&g));
    int *all = tc_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        all[i] = i;
    CHECK_RC(MPI_Group_excl(gw, size, all, &g));
    CHECK_RC(MPI_Group_size(g, &n));
    CHECK(n == 0, "excl of everything has size %d", n);
    CHECK_RC(MPI_Group_rank(g, &r));
    CHECK(r == MPI_UNDEFINED, "rank in an empty group %d", r);
    if (g != MPI_GROUP_EMPTY)
        CHECK_RC(MPI_Group_free(&g));
    /* translate into the empty group */
    int *out = tc_malloc(sizeof(int) * (size_t)size);
    CHECK_RC(MPI_Group_translate_ranks(gw, size, all, MPI_GROUP_EMPTY, out));
    for (int i = 0; i < size; i++)
        CHECK(out[i] == MPI_UNDEFINED, "rank %d translated into MPI_GROUP_EMPTY: %d", i, out[i]);
    /* incl / excl / ranges of the empty group */
    CHECK_RC(MPI_Group_incl(MPI_GROUP_EMPTY, 0, NULL, &g));
    CHECK_RC(MPI_Group_size(g, &n));
    CHECK(n == 0, "incl of MPI_GROUP_EMPTY has size %d", n);
    if (g != MPI_GROUP_EMPTY)
        CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Group_excl(MPI_GROUP_EMPTY, 0, NULL, &g));
    CHECK_RC(MPI_Group_size(g, &n));
    CHECK(n == 0, "excl of MPI_GROUP_EMPTY has size %d", n);
    if (g != MPI_GROUP_EMPTY)
        CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Group_union(MPI_GROUP_EMPTY, gw, &g));
    expect_group(g, all, size, "union(empty, world)");
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Group_compare(MPI_GROUP_EMPTY, gw, &res));
    CHECK(res == MPI_UNEQUAL, "compare(empty, world) = %d", res);
    /* a comm group from Comm_group is a full group */
    MPI_Group gs;
    CHECK_RC(MPI_Comm_group(MPI_COMM_SELF, &gs));
    expect_group(gs, &rank, 1, "self group");
    CHECK_RC(MPI_Group_compare(gs, gw, &res));
    CHECK(res == (size == 1 ? MPI_IDENT : MPI_UNEQUAL), "compare(self, world) = %d", res);
    CHECK_RC(MPI_Group_free(&gs));
    free(all);
    free(out);
}

static int err_class(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static void test_errors(void)
{
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Group g = MPI_GROUP_NULL;
    int bad[1] = {size}, neg[1] = {-1}, res;
    CHECK(err_class(MPI_Group_incl(gw, 1, bad, &g)) == MPI_ERR_RANK, "incl of rank size");
    CHECK(err_class(MPI_Group_incl(gw, 1, neg, &g)) == MPI_ERR_RANK, "incl of rank -1");
    CHECK(err_class(MPI_Group_excl(gw, 1, bad, &g)) == MPI_ERR_RANK, "excl of rank size");
    int out[1];
    CHECK(err_class(MPI_Group_translate_ranks(gw, 1, bad, gw, out)) == MPI_ERR_RANK, "translate of rank size");
    int r1[1][3] = {{0, size, 1}};
    CHECK(err_class(MPI_Group_range_incl(gw, 1, r1, &g)) == MPI_ERR_ARG, "range past the end");
    CHECK(err_class(MPI_Group_range_excl(gw, 1, r1, &g)) == MPI_ERR_ARG, "excl range past the end");
    /* only the ranks a triplet names must be in the group: (0, size, size + 1)
     * names rank 0 alone (the IBM suite's group/range relies on this) */
    int r6[1][3] = {{0, size, size + 1}}, gs = -1, first = -1, zero = 0;
    CHECK_RC(MPI_Group_range_incl(gw, 1, r6, &g));
    CHECK_RC(MPI_Group_size(g, &gs));
    CHECK_RC(MPI_Group_translate_ranks(g, 1, &zero, gw, &first));
    CHECK(gs == 1 && first == 0, "range (0, %d, %d) gave %d ranks, the first %d", size, size + 1, gs, first);
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Group_range_excl(gw, 1, r6, &g));
    CHECK_RC(MPI_Group_size(g, &gs));
    CHECK(gs == size - 1, "excl range (0, %d, %d) left %d ranks", size, size + 1, gs);
    CHECK_RC(MPI_Group_free(&g));
    int r2[1][3] = {{0, 0, 0}};
    CHECK(err_class(MPI_Group_range_incl(gw, 1, r2, &g)) == MPI_ERR_ARG, "zero stride");
    int r3[1][3] = {{-1, 0, 1}};
    CHECK(err_class(MPI_Group_range_incl(gw, 1, r3, &g)) == MPI_ERR_ARG, "negative first rank");
    int r4[2][3] = {{0, 0, 1}, {0, 0, 1}};
    CHECK(err_class(MPI_Group_range_incl(gw, 2, r4, &g)) == MPI_ERR_ARG, "rank named twice");
    if (size > 1) {
        int r5[1][3] = {{0, 1, -1}};
        CHECK(err_class(MPI_Group_range_incl(gw, 1, r5, &g)) == MPI_ERR_ARG, "stride away from last");
    }
    CHECK(err_class(MPI_Group_incl(gw, -1, bad, &g)) == MPI_ERR_ARG, "negative count");
    int n;
    CHECK(err_class(MPI_Group_size(MPI_GROUP_NULL, &n)) == MPI_ERR_GROUP, "size of MPI_GROUP_NULL");
    CHECK(err_class(MPI_Group_compare(MPI_GROUP_NULL, gw, &res)) == MPI_ERR_GROUP, "compare MPI_GROUP_NULL");
    CHECK(g == MPI_GROUP_NULL, "failed calls must not create groups");
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    lcg = 777u + (unsigned)size;   /* the same sequence on every rank */
    test_incl_excl();
    test_ranges();
    test_setops();
    test_empty();
    test_errors();
    /* freeing MPI_GROUP_EMPTY is allowed and nulls the handle */
    MPI_Group e = MPI_GROUP_EMPTY;
    CHECK_RC(MPI_Group_free(&e));
    CHECK(e == MPI_GROUP_NULL, "Group_free(MPI_GROUP_EMPTY) left 0x%x", (unsigned)e);
    CHECK_RC(MPI_Group_free(&gw));
    return tc_finish("comm_groups");
}
