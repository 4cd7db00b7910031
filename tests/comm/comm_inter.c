/* comm_inter: intercommunicators (needs 2 or more ranks).
 *
 * Intercomm_create between the even and the odd ranks (leaders: the last
 * member of each group, peer MPI_COMM_WORLD), between the first third and
 * the rest (leaders: rank 0, peer a dup of the world), and between pairs of
 * processes with MPI_COMM_SELF as the local communicator. For each: the
 * queries (Comm_test_inter, size/rank/remote_size, Comm_group and
 * Comm_remote_group members as world ranks), point-to-point in both
 * directions with specific and wildcard sources (MPI_SOURCE is a rank in the
 * remote group, payloads name their sender), Comm_compare (IDENT,
 * CONGRUENT for a dup, SIMILAR for reordered groups, UNEQUAL for another
 * remote group and against intracommunicators), traffic on a dup
 * never meets the original's, Intercomm_merge with every combination of
 * `high` (the low group first; with equal values both groups agree on one
 * order), Comm_split and Comm_create on the intercommunicator (local and
 * remote groups of the results), and Comm_free. The context id of a new
 * intercommunicator is unique even on a rank that used more ids than the
 * others (messages never reach that rank's private communicators).
 */
#include "common.h"

static int rank, size;
static MPI_Group gw;

/* Context traps: a few private communicators (dups of MPI_COMM_SELF) on this
 * process only, each with a posted wildcard receive. A new communicator whose
 * context id is not unique on this process would lose its messages to them. */
#define NTRAP 3
static MPI_Comm trap[2 * NTRAP];
static MPI_Request trapreq[2 * NTRAP];
static int trapval[2 * NTRAP];

static void traps_set(int set)
{
    for (int i = set * NTRAP; i < (set + 1) * NTRAP; i++) {
        CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &trap[i]));
        trapval[i] = -1;
        CHECK_RC(MPI_Irecv(&trapval[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, trap[i], &trapreq[i]));
    }
}

static void traps_clear(int set)
{
    for (int i = set * NTRAP; i < (set + 1) * NTRAP; i++) {
        int flag = 0, v = 1000 + i;
        CHECK_RC(MPI_Test(&trapreq[i], &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a message for another communicator arrived on a private one (value %d)", trapval[i]);
        CHECK_RC(MPI_Send(&v, 1, MPI_INT, 0, 0, trap[i]));
        CHECK_RC(MPI_Wait(&trapreq[i], MPI_STATUS_IGNORE));
        CHECK(trapval[i] == v, "trap %d received %d", i, trapval[i]);
        CHECK_RC(MPI_Comm_free(&trap[i]));
    }
}

static int *group_world(MPI_Group g, int *n)
{
    CHECK_RC(MPI_Group_size(g, n));
    int *in = tc_malloc(sizeof(int) * (size_t)(*n + 1)), *out = tc_malloc(sizeof(int) * (size_t)(*n + 1));
    for (int i = 0; i < *n; i++)
        in[i] = i;
    if (*n)
        CHECK_RC(MPI_Group_translate_ranks(g, *n, in, gw, out));
    free(in);
    return out;
}

static void expect_members(MPI_Group g, const int *ref, int n, const char *what)
{
    int gn;
    int *m = group_world(g, &gn);
    CHECK(gn == n, "%s: %d members, expected %d", what, gn, n);
    for (int i = 0; i < n; i++)
        CHECK(m[i] == ref[i], "%s: member %d is world rank %d, expected %d", what, i, m[i], ref[i]);
    free(m);
}

/* ic joins local = lw[0..nl) (this process among them) with remote = rw[0..nr) */
static void check_inter(MPI_Comm ic, const int *lw, int nl, const int *rw, int nr, const char *what)
{
    int flag = -1, s, r, rs;
    CHECK_RC(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag == 1, "%s: test_inter %d", what, flag);
    CHECK_RC(MPI_Comm_size(ic, &s));
    CHECK_RC(MPI_Comm_rank(ic, &r));
    CHECK_RC(MPI_Comm_remote_size(ic, &rs));
    CHECK(s == nl && rs == nr, "%s: size %d remote %d, expected %d and %d", what, s, rs, nl, nr);
    CHECK(r >= 0 && r < nl && lw[r] == rank, "%s: rank %d", what, r);
    MPI_Group g;
    CHECK_RC(MPI_Comm_group(ic, &g));
    expect_members(g, lw, nl, what);
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Comm_remote_group(ic, &g));
    expect_members(g, rw, nr, what);
    CHECK_RC(MPI_Group_free(&g));

    /* every local rank sends to every remote rank: {world rank, local rank, to} */
    MPI_Request *rq = tc_malloc(sizeof(MPI_Request) * (size_t)(2 * nr));
    int *out = tc_malloc(sizeof(int) * 3 * (size_t)nr), *in = tc_malloc(sizeof(int) * 3 * (size_t)nr);
    for (int j = 0; j < nr; j++) {
        out[3 * j] = rank, out[3 * j + 1] = r, out[3 * j + 2] = j;
        CHECK_RC(MPI_Isend(&out[3 * j], 3, MPI_INT, j, 1000 + r, ic, &rq[j]));
    }
    /* specific sources, in reverse order */
    for (int j = nr - 1; j >= 0; j--) {
        MPI_Status st;
        CHECK_RC(MPI_Recv(&in[3 * j], 3, MPI_INT, j, 1000 + j, ic, &st));
        CHECK(st.MPI_SOURCE == j && st.MPI_TAG == 1000 + j, "%s: status (%d, %d) for source %d", what,
              st.MPI_SOURCE, st.MPI_TAG, j);
        CHECK(in[3 * j] == rw[j] && in[3 * j + 1] == j && in[3 * j + 2] == r,
              "%s: from remote %d got {%d, %d, %d}, expected {%d, %d, %d}", what, j, in[3 * j], in[3 * j + 1],
              in[3 * j + 2], rw[j], j, r);
    }
    CHECK_RC(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
    /* wildcard sources: each remote rank exactly once */
    for (int j = 0; j < nr; j++)
        CHECK_RC(MPI_Isend(&out[3 * j], 3, MPI_INT, j, 7, ic, &rq[j]));
    char *seen = calloc((size_t)nr, 1);
    for (int k = 0; k < nr; k++) {
        MPI_Status st;
        int v[3];
        /* (not MPI_ANY_TAG: a remote rank that is done may already send the
         * next test's messages) */
        CHECK_RC(MPI_Recv(v, 3, MPI_INT, MPI_ANY_SOURCE, 7, ic, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nr && !seen[st.MPI_SOURCE], "%s: wildcard source %d", what,
              st.MPI_SOURCE);
        seen[st.MPI_SOURCE] = 1;
        CHECK(st.MPI_TAG == 7 && v[0] == rw[st.MPI_SOURCE] && v[1] == st.MPI_SOURCE && v[2] == r,
              "%s: wildcard message {%d, %d, %d} tag %d from %d", what, v[0], v[1], v[2], st.MPI_TAG, st.MPI_SOURCE);
    }
    CHECK_RC(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
    /* MPI_PROC_NULL works, and ranks beyond the remote group are errors */
    MPI_Status st;
    CHECK_RC(MPI_Recv(in, 3, MPI_INT, MPI_PROC_NULL, 0, ic, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "%s: PROC_NULL status source %d", what, st.MPI_SOURCE);
    free(seen);
    free(rq);
    free(out);
    free(in);
}

/* dup: congruent, and its traffic never meets the original's */
static void check_dup(MPI_Comm ic, const int *lw, int nl, const int *rw, int nr, const char *what)
{
    MPI_Comm d;
    int res, r;
    CHECK_RC(MPI_Comm_dup(ic, &d));
    CHECK_RC(MPI_Comm_compare(ic, ic, &res));
    CHECK(res == MPI_IDENT, "%s: compare with itself %d", what, res);
    CHECK_RC(MPI_Comm_compare(ic, d, &res));
    CHECK(res == MPI_CONGRUENT, "%s: compare with its dup %d", what, res);
    CHECK_RC(MPI_Comm_compare(ic, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_UNEQUAL, "%s: compare with world %d", what, res);
    CHECK_RC(MPI_Comm_compare(MPI_COMM_SELF, d, &res));
    CHECK(res == MPI_UNEQUAL, "%s: compare self with the dup %d", what, res);
    check_inter(d, lw, nl, rw, nr, what);
    CHECK_RC(MPI_Comm_rank(ic, &r));
    /* to remote rank r % nr: one message on ic, then one on d, same tag;
     * receive d's first with a wildcard source */
    int a = 1000 + rank, b = 2000 + rank, x = -1, y = -1;
    CHECK_RC(MPI_Send(&a, 1, MPI_INT, r % nr, 5, ic));
    CHECK_RC(MPI_Send(&b, 1, MPI_INT, r % nr, 5, d));
    MPI_Status st;
    int *rsrc = tc_malloc(sizeof(int) * (size_t)(nr + 1)), nsrc = 0;
    for (int j = 0; j < nr; j++)   /* remote rank j sends to my rank j % nl */
        if (j % nl == r)
            rsrc[nsrc++] = j;
    for (int k = 0; k < nsrc; k++) {
        CHECK_RC(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 5, d, &st));
        CHECK(y == 2000 + rw[st.MPI_SOURCE], "%s: dup delivered %d from %d", what, y, st.MPI_SOURCE);
    }
    for (int k = 0; k < nsrc; k++) {
        CHECK_RC(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
        CHECK(x == 1000 + rw[st.MPI_SOURCE], "%s: original delivered %d from %d", what, x, st.MPI_SOURCE);
    }
    free(rsrc);
    CHECK_RC(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL, "Comm_free of an intercommunicator left the handle");
}

/* merge with this side's `high`; the other side passes rhigh */
static void check_merge(MPI_Comm ic, int high, int rhigh, const int *lw, int nl, const int *rw, int nr,
                        const char *what)
{
    MPI_Comm m;
    CHECK_RC(MPI_Intercomm_merge(ic, high, &m));
    int flag, s, r;
    CHECK_RC(MPI_Comm_test_inter(m, &flag));
    CHECK(!flag, "%s: merged communicator is an intercommunicator", what);
    CHECK_RC(MPI_Comm_size(m, &s));
    CHECK(s == nl + nr, "%s: merged size %d", what, s);
    int *all = tc_malloc(sizeof(int) * (size_t)s);
    CHECK_RC(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, m));
    MPI_Group g;
    CHECK_RC(MPI_Comm_group(m, &g));
    expect_members(g, all, s, what);   /* the group is the ranks' order */
    CHECK_RC(MPI_Group_free(&g));
    int local_first;
    if (high != rhigh) {
        local_first = !high;
    } else {
        /* either order, but one of the two */
        local_first = all[0] == lw[0];
    }
    const int *first = local_first ? lw : rw, *second = local_first ? rw : lw;
    int n1 = local_first ? nl : nr;
    for (int i = 0; i < s; i++) {
        int e = i < n1 ? first[i] : second[i - n1];
        CHECK(all[i] == e, "%s (high %d/%d): merged rank %d is world rank %d, expected %d", what, high, rhigh, i,
              all[i], e);
    }
    CHECK_RC(MPI_Comm_rank(m, &r));
    CHECK(all[r] == rank, "%s: merged rank %d", what, r);
    /* a ring on the merged communicator */
    int v = rank, u = -1;
    CHECK_RC(MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % s, 9, &u, 1, MPI_INT, (r + s - 1) % s, 9, m, MPI_STATUS_IGNORE));
    CHECK(u == all[(r + s - 1) % s], "%s: merged ring got %d", what, u);
    free(all);
    CHECK_RC(MPI_Comm_free(&m));
}

/* split: color = local rank % 2, key = -local rank */
static void check_split(MPI_Comm ic, const int *lw, int nl, const int *rw, int nr, const char *what)
{
    int r;
    CHECK_RC(MPI_Comm_rank(ic, &r));
    int color = r % 2;
    MPI_Comm s;
    CHECK_RC(MPI_Comm_split(ic, color, -r, &s));
    int *el = tc_malloc(sizeof(int) * (size_t)nl), *er = tc_malloc(sizeof(int) * (size_t)nr), kl = 0, kr = 0;
    for (int i = nl - 1; i >= 0; i--)
        if (i % 2 == color)
            el[kl++] = lw[i];
    for (int i = nr - 1; i >= 0; i--)
        if (i % 2 == color)
            er[kr++] = rw[i];
    if (kr == 0) {
        CHECK(s == MPI_COMM_NULL, "%s: split with an empty remote side gave a communicator", what);
    } else {
        CHECK(s != MPI_COMM_NULL, "%s: split gave MPI_COMM_NULL", what);
        check_inter(s, el, kl, er, kr, what);
        CHECK_RC(MPI_Comm_free(&s));
    }
    /* MPI_UNDEFINED everywhere but local rank 0 */
    CHECK_RC(MPI_Comm_split(ic, r == 0 ? 0 : MPI_UNDEFINED, 0, &s));
    if (r == 0) {
        CHECK(s != MPI_COMM_NULL, "%s: split of the two leaders failed", what);
        check_inter(s, lw, 1, rw, 1, what);
        CHECK_RC(MPI_Comm_free(&s));
    } else {
        CHECK(s == MPI_COMM_NULL, "%s: MPI_UNDEFINED gave a communicator", what);
    }
    free(el);
    free(er);
}

/* Comm_compare between intercommunicators with the same members in another
 * order (SIMILAR) and with a smaller remote group (UNEQUAL) */
static void check_compare(MPI_Comm ic, int side, int nl, int nr, const char *what)
{
    int r, res;
    CHECK_RC(MPI_Comm_rank(ic, &r));
    MPI_Comm s;
    CHECK_RC(MPI_Comm_split(ic, 0, -r, &s));
    CHECK_RC(MPI_Comm_compare(ic, s, &res));
    int expect = nl > 1 || nr > 1 ? MPI_SIMILAR : MPI_CONGRUENT;
    CHECK(res == expect, "%s: compare with the reversed split %d, expected %d", what, res, expect);
    CHECK_RC(MPI_Comm_free(&s));
    /* side 0 keeps its whole group, side 1 only its rank 0 */
    MPI_Group lg, sub;
    CHECK_RC(MPI_Comm_group(ic, &lg));
    int zero = 0;
    if (side == 0)
        sub = lg;
    else
        CHECK_RC(MPI_Group_incl(lg, 1, &zero, &sub));
    CHECK_RC(MPI_Comm_create(ic, sub, &s));
    if (side == 0) {
        CHECK_RC(MPI_Comm_compare(ic, s, &res));
        expect = nr > 1 ? MPI_UNEQUAL : MPI_CONGRUENT;
        CHECK(res == expect, "%s: compare with a smaller remote group %d, expected %d", what, res, expect);
    }
    if (s != MPI_COMM_NULL)
        CHECK_RC(MPI_Comm_free(&s));
    if (side == 1)
        CHECK_RC(MPI_Group_free(&sub));
    CHECK_RC(MPI_Group_free(&lg));
}

/* create: each side keeps its first half (at least one) */
static void check_create(MPI_Comm ic, const int *lw, int nl, const int *rw, int nr, const char *what)
{
    int r;
    CHECK_RC(MPI_Comm_rank(ic, &r));
    MPI_Group lg, sub;
    CHECK_RC(MPI_Comm_group(ic, &lg));
    int kl = (nl + 1) / 2, kr = (nr + 1) / 2;
    int range[1][3] = {{0, kl - 1, 1}};
    CHECK_RC(MPI_Group_range_incl(lg, 1, range, &sub));
    MPI_Comm c;
    CHECK_RC(MPI_Comm_create(ic, sub, &c));
    if (r < kl) {
        CHECK(c != MPI_COMM_NULL, "%s: create gave a member MPI_COMM_NULL", what);
        check_inter(c, lw, kl, rw, kr, what);
        CHECK_RC(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL, "%s: create gave a non-member a communicator", what);
    }
    CHECK_RC(MPI_Group_free(&sub));
    CHECK_RC(MPI_Group_free(&lg));
}

static void run_all(MPI_Comm ic, int side, const int *lw, int nl, const int *rw, int nr, const char *what)
{
    check_inter(ic, lw, nl, rw, nr, what);
    check_dup(ic, lw, nl, rw, nr, what);
    check_merge(ic, side, !side, lw, nl, rw, nr, what);
    check_merge(ic, !side, side, lw, nl, rw, nr, what);
    check_merge(ic, 0, 0, lw, nl, rw, nr, what);
    check_merge(ic, 1, 1, lw, nl, rw, nr, what);
    check_split(ic, lw, nl, rw, nr, what);
    check_create(ic, lw, nl, rw, nr, what);
    check_compare(ic, side, nl, nr, what);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    CHECK(size >= 2, "comm_inter needs at least 2 ranks, not %d", size);
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    int *lw = tc_malloc(sizeof(int) * (size_t)size), *rw = tc_malloc(sizeof(int) * (size_t)size), nl, nr;

    /* 1. evens and odds; leaders: each group's last member; peer: world */
    {
        int side = rank % 2;
        MPI_Comm local, ic;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, side, rank, &local));
        nl = nr = 0;
        for (int i = 0; i < size; i++) {
            if (i % 2 == side)
                lw[nl++] = i;
            else
                rw[nr++] = i;
        }
        /* rank 1 uses more context ids than everybody else, before the
         * intercommunicator is made and again before it is dup'ed, merged,
         * split ... (the odd group then has the larger next free id) */
        if (rank == 1)
            traps_set(0);
        CHECK_RC(MPI_Intercomm_create(local, nl - 1, MPI_COMM_WORLD, rw[nr - 1], 77, &ic));
        if (rank == 1)
            traps_set(1);
        run_all(ic, side, lw, nl, rw, nr, "evens/odds");
        if (rank == 1) {
            traps_clear(1);
            traps_clear(0);
        }
        CHECK_RC(MPI_Comm_free(&ic));
        CHECK_RC(MPI_Comm_free(&local));
    }
    /* 2. the first third (at least one) and the rest, local order reversed;
     *    leaders: local rank 0; peer: a dup of the world */
    {
        int k = size / 3 > 0 ? size / 3 : 1, side = rank >= k;
        MPI_Comm local, ic, peer;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &peer));
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, side, -rank, &local));
        nl = nr = 0;
        for (int i = size - 1; i >= 0; i--) {
            if ((i >= k) == side)
                lw[nl++] = i;
            else
                rw[nr++] = i;
        }
        CHECK_RC(MPI_Intercomm_create(local, 0, peer, rw[0], 78, &ic));
        run_all(ic, side, lw, nl, rw, nr, "third/rest");
        /* an intercommunicator from the merged one's halves again */
        CHECK_RC(MPI_Comm_free(&ic));
        CHECK_RC(MPI_Comm_free(&local));
        CHECK_RC(MPI_Comm_free(&peer));
    }
    /* 3. pairs (0,1), (2,3), ...: MPI_COMM_SELF as the local communicator */
    if (rank < size - size % 2) {
        MPI_Comm ic;
        int other = rank ^ 1;
        CHECK_RC(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, other, 79, &ic));
        check_inter(ic, &rank, 1, &other, 1, "pair");
        check_dup(ic, &rank, 1, &other, 1, "pair");
        check_merge(ic, rank & 1, !(rank & 1), &rank, 1, &other, 1, "pair");
        check_merge(ic, 1, 1, &rank, 1, &other, 1, "pair");
        CHECK_RC(MPI_Comm_free(&ic));
    }
    free(lw);
    free(rw);
    CHECK_RC(MPI_Group_free(&gw));
    return tc_finish("comm_inter");
}
