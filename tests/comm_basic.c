/* comm_basic: communicators and groups.
 *
 * Comm_dup / Comm_compare (IDENT, CONGRUENT, SIMILAR, UNEQUAL), context
 * isolation (same source/tag on world and on a dup never cross, even with
 * MPI_ANY_SOURCE/MPI_ANY_TAG; 40 live dups receive in the opposite order they
 * were sent), Comm_split with colours, reversing keys and MPI_UNDEFINED,
 * traffic inside split communicators, Comm_group / Group_size / Group_rank /
 * Group_translate_ranks (incl. MPI_PROC_NULL and MPI_UNDEFINED results),
 * Group_free / Comm_free nulling handles, 300 (40 with > 2 ranks) dup/free cycles (context id
 * reuse), an MPI_Barrier ordering check, MPI_Comm_get_parent (no parent) and
 * MPI_Comm_disconnect with operations pending.
 */
#include "common.h"

static int rank, size;

static void ring_on(MPI_Comm c, int tag, int salt)
{
    int r, n;
    CHECK_RC(MPI_Comm_rank(c, &r));
    CHECK_RC(MPI_Comm_size(c, &n));
    int buf[2] = {rank, salt}, in[2] = {-1, -1};
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(buf, 2, MPI_INT, (r + 1) % n, tag, in, 2, MPI_INT, (r + n - 1) % n,
                          tag, c, &st));
    CHECK(in[1] == salt, "ring on comm: salt %d expected %d (from world rank %d)", in[1], salt,
          in[0]);
    CHECK(st.MPI_SOURCE == (r + n - 1) % n, "source %d", st.MPI_SOURCE);
}

static void check_group_matches(MPI_Comm c, const int *world_ranks, int n)
{
    MPI_Group g, wg;
    int gs = -1, gr = -2, cr;
    CHECK_RC(MPI_Comm_group(c, &g));
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_RC(MPI_Group_size(g, &gs));
    CHECK_RC(MPI_Group_rank(g, &gr));
    CHECK_RC(MPI_Comm_rank(c, &cr));
    CHECK(gs == n, "group size %d expected %d", gs, n);
    CHECK(gr == cr, "group rank %d != comm rank %d", gr, cr);
    int *in = tc_malloc(sizeof(int) * (size_t)(n + 1));
    int *out = tc_malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        in[i] = i;
    in[n] = MPI_PROC_NULL;
    CHECK_RC(MPI_Group_translate_ranks(g, n + 1, in, wg, out));
    for (int i = 0; i < n; i++)
        CHECK(out[i] == world_ranks[i], "translate: rank %d -> %d, expected %d", i, out[i],
              world_ranks[i]);
    CHECK(out[n] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", out[n]);
    /* world -> g: members map back, non-members give MPI_UNDEFINED */
    int *w_in = tc_malloc(sizeof(int) * (size_t)size), *w_out = tc_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        w_in[i] = i;
    CHECK_RC(MPI_Group_translate_ranks(wg, size, w_in, g, w_out));
    for (int i = 0; i < size; i++) {
        int expect = MPI_UNDEFINED;
        for (int j = 0; j < n; j++)
            if (world_ranks[j] == i)
                expect = j;
        CHECK(w_out[i] == expect, "translate world %d -> %d, expected %d", i, w_out[i], expect);
    }
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Group_free(&wg));
    CHECK(g == MPI_GROUP_NULL && wg == MPI_GROUP_NULL, "MPI_Group_free did not null handle");
    free(in);
    free(out);
    free(w_in);
    free(w_out);
}

static int expected_compare(const int *world_ranks, int n)
{
    if (n != size)
        return MPI_UNEQUAL;
    for (int i = 0; i < n; i++)
        if (world_ranks[i] != i)
            return MPI_SIMILAR;
    return MPI_CONGRUENT;
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    int res = -1;

    /* ---- compare / dup */
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_IDENT, "compare(world, world) = %d", res);
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT, "compare(world, dup) = %d", res);
    CHECK_RC(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_SELF, &res));
    CHECK(res == MPI_IDENT, "compare(self, self) = %d", res);
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res));
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare(world, self) = %d", res);
    int dr, ds;
    CHECK_RC(MPI_Comm_rank(dup, &dr));
    CHECK_RC(MPI_Comm_size(dup, &ds));
    CHECK(dr == rank && ds == size, "dup rank %d size %d", dr, ds);
    int *ident = tc_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        ident[i] = i;
    check_group_matches(dup, ident, size);

    /* ---- isolation: world message sent first, dup receive posted first with
     * wildcards; the dup receive must get the dup message */
    {
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        int w = 1000 + rank, d = 2000 + rank, gw = -1, gd = -1;
        MPI_Request rq[2];
        MPI_Status st;
        CHECK_RC(MPI_Isend(&w, 1, MPI_INT, to, 5, MPI_COMM_WORLD, &rq[0]));
        CHECK_RC(MPI_Isend(&d, 1, MPI_INT, to, 5, dup, &rq[1]));
        CHECK_RC(MPI_Recv(&gd, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st));
        CHECK(gd == 2000 + from && st.MPI_SOURCE == from && st.MPI_TAG == 5,
              "dup received %d from %d tag %d", gd, st.MPI_SOURCE, st.MPI_TAG);
        CHECK_RC(MPI_Recv(&gw, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(gw == 1000 + from, "world received %d", gw);
        CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    }

    /* ---- many live dups, messages received in reverse communicator order */
    {
        enum { NC = 40 };
        MPI_Comm cs[NC];
        MPI_Request rq[NC];
        int vals[NC];
        for (int i = 0; i < NC; i++)
            CHECK_RC(MPI_Comm_dup(i % 2 ? dup : MPI_COMM_WORLD, &cs[i]));
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        for (int i = 0; i < NC; i++) {
            vals[i] = i * 1000 + rank;
            CHECK_RC(MPI_Isend(&vals[i], 1, MPI_INT, to, 0, cs[i], &rq[i]));
        }
        for (int i = NC - 1; i >= 0; i--) {
            int got = -1;
            CHECK_RC(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, cs[i],
                              MPI_STATUS_IGNORE));
            CHECK(got == i * 1000 + from, "comm #%d received %d", i, got);
        }
        CHECK_RC(MPI_Waitall(NC, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NC; i++) {
            CHECK_RC(MPI_Comm_free(&cs[i]));
            CHECK(cs[i] == MPI_COMM_NULL, "MPI_Comm_free did not null handle");
        }
    }

    /* ---- dup/free cycles: context ids are recycled without mixing */
    const int cycles = size > 2 ? 40 : 300;
    for (int i = 0; i < cycles; i++) {
        MPI_Comm c;
        CHECK_RC(MPI_Comm_dup(i % 3 ? MPI_COMM_WORLD : dup, &c));
        if (i % 20 == 0)
            ring_on(c, i, i);
        CHECK_RC(MPI_Comm_free(&c));
    }

    /* ---- split: parity colours, reversed keys */
    {
        MPI_Comm sp;
        int color = rank % 2;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &sp));
        CHECK(sp != MPI_COMM_NULL, "split returned MPI_COMM_NULL");
        int members[1024], n = 0;
        for (int i = size - 1; i >= 0; i--) /* key -rank: descending world rank */
            if (i % 2 == color)
                members[n++] = i;
        int sr, ss;
        CHECK_RC(MPI_Comm_rank(sp, &sr));
        CHECK_RC(MPI_Comm_size(sp, &ss));
        CHECK(ss == n, "split size %d expected %d", ss, n);
        CHECK(members[sr] == rank, "split rank %d, expected world rank %d there", sr, rank);
        check_group_matches(sp, members, n);
        CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, sp, &res));
        CHECK(res == expected_compare(members, n), "compare(world, parity split) = %d", res);
        ring_on(sp, 7, 77);
        CHECK_RC(MPI_Barrier(sp));
        CHECK_RC(MPI_Comm_free(&sp));
    }
    /* all one colour, reversed keys: SIMILAR (CONGRUENT for 1 rank) */
    {
        MPI_Comm sp;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 3, size - rank, &sp));
        int members[1024];
        for (int i = 0; i < size; i++)
            members[i] = size - 1 - i;
        check_group_matches(sp, members, size);
        CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, sp, &res));
        CHECK(res == expected_compare(members, size), "compare(world, reversed) = %d", res);
        ring_on(sp, 8, 88);
        CHECK_RC(MPI_Comm_free(&sp));
    }
    /* equal keys keep world order: CONGRUENT */
    {
        MPI_Comm sp;
        CHECK_RC(MPI_Comm_split(dup, 0, 0, &sp));
        CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, sp, &res));
        CHECK(res == MPI_CONGRUENT, "compare(world, split same order) = %d", res);
        check_group_matches(sp, ident, size);
        CHECK_RC(MPI_Comm_free(&sp));
    }
    /* MPI_UNDEFINED colour on rank 0 */
    {
        MPI_Comm sp;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &sp));
        if (rank == 0) {
            CHECK(sp == MPI_COMM_NULL, "MPI_UNDEFINED colour did not give MPI_COMM_NULL");
        } else {
            int members[1024];
            for (int i = 1; i < size; i++)
                members[i - 1] = i;
            check_group_matches(sp, members, size - 1);
            ring_on(sp, 9, 99);
            CHECK_RC(MPI_Comm_free(&sp));
        }
    }
    /* split of a split */
    {
        MPI_Comm a, b;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &a));
        CHECK_RC(MPI_Comm_split(a, 0, -rank, &b));
        int as, bs, br;
        CHECK_RC(MPI_Comm_size(a, &as));
        CHECK_RC(MPI_Comm_size(b, &bs));
        CHECK_RC(MPI_Comm_rank(b, &br));
        CHECK(as == bs, "nested split sizes %d %d", as, bs);
        int lo = rank < size / 2 ? 0 : size / 2;
        int members[1024];
        for (int i = 0; i < bs; i++)
            members[i] = lo + bs - 1 - i;
        check_group_matches(b, members, bs);
        ring_on(b, 10, 1010);
        CHECK_RC(MPI_Comm_free(&b));
        CHECK_RC(MPI_Comm_free(&a));
    }

    /* ---- barrier ordering: phase p messages all reach rank 0 before any
     * rank can leave barrier p+1 and send its phase p+1 message */
    const int phases = size > 2 ? 15 : 60;
    for (int p = 0; p < phases; p++) {
        if (rank == 0) {
            for (int i = 1; i < size; i++) {
                int v = -1;
                MPI_Status st;
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st));
                CHECK(st.MPI_TAG == p && v == p,
                      "phase %d: got phase %d message from rank %d (barrier let it through early)",
                      p, st.MPI_TAG, st.MPI_SOURCE);
            }
        } else {
            CHECK_RC(MPI_Send(&p, 1, MPI_INT, 0, p, dup));
        }
        CHECK_RC(MPI_Barrier(p % 2 ? dup : MPI_COMM_WORLD));
    }

    CHECK_RC(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "MPI_Comm_free did not null handle");

    /* ---- a job started whole has no parent; Comm_disconnect of a
     * duplicate with a send and a receive still pending: they complete
     * afterwards with the right data, and the handle is nulled */
    {
        MPI_Comm parent = MPI_COMM_WORLD;
        CHECK_RC(MPI_Comm_get_parent(&parent));
        CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent gave a communicator");
        MPI_Comm dc;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dc));
        int to = (rank + 1) % size, from = (rank + size - 1) % size, out = 500 + rank, in = -1;
        MPI_Request rq[2];
        CHECK_RC(MPI_Irecv(&in, 1, MPI_INT, from, 4, dc, &rq[0]));
        CHECK_RC(MPI_Isend(&out, 1, MPI_INT, to, 4, dc, &rq[1]));
        CHECK_RC(MPI_Comm_disconnect(&dc));
        CHECK(dc == MPI_COMM_NULL, "MPI_Comm_disconnect did not null the handle");
        CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(in == 500 + from, "after disconnect: received %d, want %d", in, 500 + from);
    }
    free(ident);
    return tc_finish("comm_basic");
}
