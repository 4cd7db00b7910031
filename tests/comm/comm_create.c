/* comm_create: making communicators from groups, by type, nonblocking, with
 * hints.
 *
 * Comm_create with the same group everywhere (evens, reversed world, one
 * rank, MPI_GROUP_EMPTY) and with disjoint groups per process (MPI-2.2),
 * each checked for size, rank, members (translated to world ranks), a ring
 * exchange and Comm_compare against an equivalent split. Comm_create_group:
 * only the members call it (the others are blocked in a receive that a
 * member only satisfies after its Comm_create_group returned, so a call that
 * needed non-members would hang), two disjoint groups create at the same time
 * with different tags (the context id is unique on every member, even on
 * members that used more ids than the others), a nested create_group from a subcommunicator with a
 * reversed group, and repeated creation with one tag. Comm_split_type
 * (MPI_COMM_TYPE_SHARED against processor names, key order, MPI_UNDEFINED, of an
 * intercommunicator; the MPI-4 hardware splits give MPI_COMM_NULL).
 * Comm_idup (Wait and Test complete it, the communicator works, the request
 * becomes MPI_REQUEST_NULL; it returns before the other members call it;
 * several in flight among blocking dups and splits on ranks that used
 * different numbers of context ids; on an intercommunicator). Comm_dup_with_info / set_info / get_info
 * (values the library reports back must be the ones set), Comm_set_name /
 * get_name (a dup starts unnamed). Traffic on the new communicators never
 * meets traffic on the parent.
 */
#include "common.h"

static int rank, size;
static MPI_Group gw;

/* Context traps: a few private communicators (dups of MPI_COMM_SELF) on this
 * process only, each with a posted wildcard receive. A new communicator whose
 * context id is not unique on this process would lose its messages to them. */
#define NTRAP 3
static MPI_Comm trap[NTRAP];
static MPI_Request trapreq[NTRAP];
static int trapval[NTRAP];

static void traps_set(int set)
{
    (void)set;
    for (int i = 0; i < NTRAP; i++) {
        CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &trap[i]));
        trapval[i] = -1;
        CHECK_RC(MPI_Irecv(&trapval[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, trap[i], &trapreq[i]));
    }
}

static void traps_clear(int set)
{
    (void)set;
    for (int i = 0; i < NTRAP; i++) {
        int flag = 0, v = 1000 + i;
        CHECK_RC(MPI_Test(&trapreq[i], &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a message for another communicator arrived on a private one (value %d)", trapval[i]);
        CHECK_RC(MPI_Send(&v, 1, MPI_INT, 0, 0, trap[i]));
        CHECK_RC(MPI_Wait(&trapreq[i], MPI_STATUS_IGNORE));
        CHECK(trapval[i] == v, "trap %d received %d", i, trapval[i]);
        CHECK_RC(MPI_Comm_free(&trap[i]));
    }
}

/* c's members as world ranks equal ref[0..n); rank, size, ring exchange */
static void check_comm(MPI_Comm c, const int *ref, int n, const char *what)
{
    int cs, cr;
    CHECK_RC(MPI_Comm_size(c, &cs));
    CHECK_RC(MPI_Comm_rank(c, &cr));
    CHECK(cs == n, "%s: size %d, expected %d", what, cs, n);
    CHECK(cr >= 0 && cr < n && ref[cr] == rank, "%s: rank %d does not hold world rank %d", what, cr, rank);
    MPI_Group g;
    CHECK_RC(MPI_Comm_group(c, &g));
    int *in = tc_malloc(sizeof(int) * (size_t)n), *out = tc_malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        in[i] = i;
    CHECK_RC(MPI_Group_translate_ranks(g, n, in, gw, out));
    for (int i = 0; i < n; i++)
        CHECK(out[i] == ref[i], "%s: member %d is world rank %d, expected %d", what, i, out[i], ref[i]);
    CHECK_RC(MPI_Group_free(&g));
    /* a ring with a message that names the sender's world rank */
    int msg[2] = {rank, 0x5eed}, got[2] = {-1, -1};
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(msg, 2, MPI_INT, (cr + 1) % n, 17, got, 2, MPI_INT, MPI_ANY_SOURCE, 17, c, &st));
    int left = (cr + n - 1) % n;
    CHECK(st.MPI_SOURCE == left, "%s: source %d, expected %d", what, st.MPI_SOURCE, left);
    CHECK(got[0] == ref[left] && got[1] == 0x5eed, "%s: got (%d, %x) from the left neighbour, world rank %d", what,
          got[0], got[1], ref[left]);
    free(in);
    free(out);
}

/* the same members through Comm_split, and compare */
static void compare_with_split(MPI_Comm c, int color, int key, int expect, const char *what)
{
    MPI_Comm s;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, color, key, &s));
    if (c == MPI_COMM_NULL) {
        CHECK(s == MPI_COMM_NULL, "%s: split gave a communicator where create gave none", what);
        return;
    }
    int res;
    CHECK_RC(MPI_Comm_compare(c, s, &res));
    CHECK(res == expect, "%s: compare with split = %d, expected %d", what, res, expect);
    CHECK_RC(MPI_Comm_free(&s));
}

static void test_create(void)
{
    int *ref = tc_malloc(sizeof(int) * (size_t)size);
    MPI_Group g;
    MPI_Comm c;
    /* evens */
    int n = 0;
    for (int i = 0; i < size; i += 2)
        ref[n++] = i;
    CHECK_RC(MPI_Group_incl(gw, n, ref, &g));
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    if (rank % 2 == 0)
        check_comm(c, ref, n, "create(evens)");
    else
        CHECK(c == MPI_COMM_NULL, "odd rank got a communicator from create(evens)");
    compare_with_split(c, rank % 2 == 0 ? 0 : MPI_UNDEFINED, rank, MPI_CONGRUENT, "create(evens)");
    if (c != MPI_COMM_NULL)
        CHECK_RC(MPI_Comm_free(&c));
    CHECK_RC(MPI_Group_free(&g));
    /* reversed world */
    for (int i = 0; i < size; i++)
        ref[i] = size - 1 - i;
    CHECK_RC(MPI_Group_incl(gw, size, ref, &g));
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    check_comm(c, ref, size, "create(reversed)");
    int res;
    CHECK_RC(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "create(reversed) vs world: %d", res);
    compare_with_split(c, 0, -rank, MPI_CONGRUENT, "create(reversed)");
    CHECK_RC(MPI_Comm_free(&c));
    CHECK_RC(MPI_Group_free(&g));
    /* just the last rank */
    ref[0] = size - 1;
    CHECK_RC(MPI_Group_incl(gw, 1, ref, &g));
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    if (rank == size - 1) {
        check_comm(c, ref, 1, "create(last)");
        CHECK_RC(MPI_Comm_compare(c, MPI_COMM_SELF, &res));
        CHECK(res == MPI_CONGRUENT, "create(last) vs self: %d", res);
        CHECK_RC(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL, "create(last) gave rank %d a communicator", rank);
    }
    CHECK_RC(MPI_Group_free(&g));
    /* the empty group */
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "create(MPI_GROUP_EMPTY) gave a communicator");
    /* disjoint groups, one per rank % 3 class, members in reverse order */
    int cls = rank % 3;
    n = 0;
    for (int i = size - 1; i >= 0; i--)
        if (i % 3 == cls)
            ref[n++] = i;
    CHECK_RC(MPI_Group_incl(gw, n, ref, &g));
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    check_comm(c, ref, n, "create(disjoint classes)");
    compare_with_split(c, cls, -rank, MPI_CONGRUENT, "create(disjoint classes)");
    /* traffic on c and on world with the same tags stays apart */
    int x = rank, y = -1, z = -1, cr;
    CHECK_RC(MPI_Comm_rank(c, &cr));
    MPI_Request rq[2];
    CHECK_RC(MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &rq[0]));
    CHECK_RC(MPI_Irecv(&z, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[1]));
    CHECK_RC(MPI_Send(&x, 1, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD));
    x = -rank - 100;
    CHECK_RC(MPI_Send(&x, 1, MPI_INT, (cr + 1) % n, 3, c));
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(z == (rank + size - 1) % size, "world message %d", z);
    CHECK(y == -ref[(cr + n - 1) % n] - 100, "class message %d", y);
    CHECK_RC(MPI_Comm_free(&c));
    CHECK_RC(MPI_Group_free(&g));
    free(ref);
}

static void test_create_group(void)
{
    /* the odd ranks create a communicator among themselves (reversed), the
     * even ranks theirs, at the same time, with different tags */
    int *ref = tc_malloc(sizeof(int) * (size_t)size);
    int odd = rank % 2, n = 0;
    for (int i = size - 1; i >= 0; i--)
        if (i % 2 == odd)
            ref[n++] = i;
    MPI_Group g;
    MPI_Comm c;
    /* ranks 0 and 1 are the last members of their groups: they use more
     * context ids than the groups' first members */
    if (rank < 2)
        traps_set(0);
    CHECK_RC(MPI_Group_incl(gw, n, ref, &g));
    CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, g, odd ? 11 : 12, &c));
    check_comm(c, ref, n, "create_group(parity)");
    CHECK_RC(MPI_Comm_free(&c));
    CHECK_RC(MPI_Group_free(&g));
    if (rank < 2)
        traps_clear(0);

    /* members only: ranks 1..size-1 create; rank 0 waits for a message that
     * rank 1 sends after its create_group returned */
    if (size > 1) {
        n = 0;
        for (int i = 1; i < size; i++)
            ref[n++] = i;
        if (rank == 0) {
            int v = -1;
            CHECK_RC(MPI_Recv(&v, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == 4242, "token %d", v);
        } else {
            CHECK_RC(MPI_Group_incl(gw, n, ref, &g));
            for (int rep = 0; rep < 3; rep++) {   /* same tag again and again */
                CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, g, 5, &c));
                check_comm(c, ref, n, "create_group(without rank 0)");
                /* nested: from c, a reversed group of c's members */
                MPI_Group cg, rg;
                CHECK_RC(MPI_Comm_group(c, &cg));
                int *rr = tc_malloc(sizeof(int) * (size_t)n), *rw = tc_malloc(sizeof(int) * (size_t)n);
                for (int i = 0; i < n; i++) {
                    rr[i] = n - 1 - i;
                    rw[i] = ref[n - 1 - i];
                }
                CHECK_RC(MPI_Group_incl(cg, n, rr, &rg));
                MPI_Comm c2;
                CHECK_RC(MPI_Comm_create_group(c, rg, 0, &c2));
                check_comm(c2, rw, n, "nested create_group");
                int res;
                CHECK_RC(MPI_Comm_compare(c, c2, &res));
                CHECK(res == (n == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "nested compare %d", res);
                CHECK_RC(MPI_Comm_free(&c2));
                CHECK_RC(MPI_Group_free(&rg));
                CHECK_RC(MPI_Group_free(&cg));
                CHECK_RC(MPI_Comm_free(&c));
                free(rr);
                free(rw);
            }
            CHECK_RC(MPI_Group_free(&g));
            if (rank == 1) {
                int v = 4242;
                CHECK_RC(MPI_Send(&v, 1, MPI_INT, 0, 99, MPI_COMM_WORLD));
            }
        }
    }
    /* a group of one: no messages at all */
    CHECK_RC(MPI_Group_incl(gw, 1, &rank, &g));
    CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c));
    check_comm(c, &rank, 1, "create_group(self)");
    CHECK_RC(MPI_Comm_free(&c));
    CHECK_RC(MPI_Group_free(&g));
    /* not a member: MPI_COMM_NULL at once */
    if (size > 1) {
        int other = (rank + 1) % size;
        CHECK_RC(MPI_Group_incl(gw, 1, &other, &g));
        CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c));
        CHECK(c == MPI_COMM_NULL, "non-member got a communicator");
        CHECK_RC(MPI_Group_free(&g));
        /* ... and the empty group */
        CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 7, &c));
        CHECK(c == MPI_COMM_NULL, "create_group(MPI_GROUP_EMPTY) gave a communicator");
    }
    free(ref);
}

static void test_split_type(void)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    CHECK_RC(MPI_Get_processor_name(mine, &len));
    char *all = tc_malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    CHECK_RC(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                           MPI_COMM_WORLD));
    int *ref = tc_malloc(sizeof(int) * (size_t)size), n = 0;
    for (int i = 0; i < size; i++)
        if (!strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, mine))
            ref[n++] = i;
    MPI_Comm c;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    check_comm(c, ref, n, "split_type(shared)");
    CHECK_RC(MPI_Comm_free(&c));
    /* reversed keys */
    for (int i = 0; i < n / 2; i++) {
        int t = ref[i];
        ref[i] = ref[n - 1 - i];
        ref[n - 1 - i] = t;
    }
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &c));
    check_comm(c, ref, n, "split_type(shared, reversed keys)");
    /* from a subcommunicator: the shared split of the shared split is itself */
    MPI_Comm c2;
    CHECK_RC(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c2));
    int res;
    CHECK_RC(MPI_Comm_compare(c, c2, &res));
    CHECK(res == MPI_CONGRUENT, "shared split of a node communicator: compare %d", res);
    CHECK_RC(MPI_Comm_free(&c2));
    CHECK_RC(MPI_Comm_free(&c));
    /* MPI_UNDEFINED on odd ranks */
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                                 MPI_INFO_NULL, &c));
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    } else {
        n = 0;
        for (int i = 0; i < size; i += 2)
            if (!strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, mine))
                ref[n++] = i;
        check_comm(c, ref, n, "split_type(shared, evens)");
        CHECK_RC(MPI_Comm_free(&c));
    }
    /* an intercommunicator (evens | odds) splits like MPI_Comm_split of one:
     * an intercommunicator of this node's members of each group (local
     * ranks in key order), MPI_UNDEFINED gives MPI_COMM_NULL (mpi4py's
     * test_comm_inter; Ferry refused intercommunicators here) */
    if (size >= 2) {
        MPI_Comm half, inter, ic;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 61, &inter));
        CHECK_RC(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &ic));
        CHECK(ic != MPI_COMM_NULL, "split_type(shared) of an intercommunicator gave MPI_COMM_NULL");
        int is_inter = 0, lsize, rsize, lrank, nl = 0, nr = 0, before = 0;
        CHECK_RC(MPI_Comm_test_inter(ic, &is_inter));
        CHECK(is_inter, "split_type(shared) of an intercommunicator gave an intracommunicator");
        CHECK_RC(MPI_Comm_size(ic, &lsize));
        CHECK_RC(MPI_Comm_remote_size(ic, &rsize));
        CHECK_RC(MPI_Comm_rank(ic, &lrank));
        for (int i = 0; i < size; i++) {
            if (strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, mine))
                continue;
            if (i % 2 == rank % 2) {
                nl++;
                before += i > rank;   /* key size - i: higher world ranks first */
            } else {
                nr++;
            }
        }
        CHECK(lsize == nl && rsize == nr && lrank == before,
              "split_type(shared) of an intercommunicator: size %d remote %d rank %d, expected %d %d %d", lsize,
              rsize, lrank, nl, nr, before);
        /* local rank 0 of each side sends its world rank to the other side's 0 */
        if (lrank == 0) {
            int got = -1;
            CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE));
            CHECK(got >= 0 && got % 2 != rank % 2, "intercommunicator from split_type: got %d", got);
        }
        CHECK_RC(MPI_Comm_free(&ic));
        CHECK_RC(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &ic));
        CHECK(ic == MPI_COMM_NULL, "split_type(MPI_UNDEFINED) of an intercommunicator gave a communicator");
        CHECK_RC(MPI_Comm_free(&inter));
        CHECK_RC(MPI_Comm_free(&half));
    }
    /* MPI-4 hardware splits: no resource finer than the node, so MPI_COMM_NULL
     * everywhere (MPI_COMM_TYPE_* come from MPICH's header too) */
#ifdef MPI_COMM_TYPE_HW_GUIDED
    /* the standard: HW_GUIDED without an mpi_hw_resource_type hint gives MPI_COMM_NULL */
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED without a resource type gave a communicator");
    /* Ferry's choice (MPICH may split by a real resource level here) */
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    if (!tc_mpich_version())
        CHECK(c == MPI_COMM_NULL, "HW_UNGUIDED gave a communicator");
    else if (c != MPI_COMM_NULL)
        CHECK_RC(MPI_Comm_free(&c));
    /* the one resource type every MPI-4 library knows: the node's shared memory */
    MPI_Info hint;
    CHECK_RC(MPI_Info_create(&hint));
    CHECK_RC(MPI_Info_set(hint, "mpi_hw_resource_type", "mpi_shared_memory"));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hint, &c));
    n = 0;
    for (int i = 0; i < size; i++)
        if (!strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, mine))
            ref[n++] = i;
    check_comm(c, ref, n, "split_type(hw_guided, mpi_shared_memory)");
    CHECK_RC(MPI_Comm_free(&c));
    CHECK_RC(MPI_Info_free(&hint));
#endif
#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
    /* MPICH's extension: the ranks sharing a directory that every rank names
     * alike; a mismatch, or no hint, gives MPI_COMM_NULL everywhere */
    CHECK_RC(MPI_Info_create(&hint));
    CHECK_RC(MPI_Info_set(hint, "nbhd_common_dirname", "."));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, 0, hint, &c));
    CHECK(c != MPI_COMM_NULL, "NEIGHBORHOOD with a common directory gave MPI_COMM_NULL");
    int nsize;
    CHECK_RC(MPI_Comm_size(c, &nsize));
    CHECK(nsize >= 1 && nsize <= size, "NEIGHBORHOOD communicator of %d ranks", nsize);
    CHECK_RC(MPI_Comm_free(&c));
    CHECK_RC(MPI_Info_set(hint, "nbhd_common_dirname", rank == size - 1 ? "/" : "."));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, 0, hint, &c));
    CHECK(size == 1 || c == MPI_COMM_NULL, "NEIGHBORHOOD with different directories gave a communicator");
    if (c != MPI_COMM_NULL)
        CHECK_RC(MPI_Comm_free(&c));
    CHECK_RC(MPI_Info_delete(hint, "nbhd_common_dirname"));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, 0, hint, &c));
    CHECK(c == MPI_COMM_NULL, "NEIGHBORHOOD without a directory gave a communicator");
    CHECK_RC(MPI_Info_free(&hint));
#endif
    free(all);
    free(ref);
}

static void test_idup(void)
{
    int *ref = tc_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        ref[i] = i;
    MPI_Comm c, c2;
    MPI_Request r;
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &c, &r));
    CHECK(r != MPI_REQUEST_NULL, "Comm_idup returned MPI_REQUEST_NULL");
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "Wait left the request");
    check_comm(c, ref, size, "idup(world)");
    int res;
    CHECK_RC(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT, "idup vs world: %d", res);
    /* Test until complete; two idups in flight at once */
    MPI_Request rr[2];
    MPI_Comm d[2];
    CHECK_RC(MPI_Comm_idup(c, &d[0], &rr[0]));
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d[1], &rr[1]));
    int flag = 0;
    while (!flag)
        CHECK_RC(MPI_Testall(2, rr, &flag, MPI_STATUSES_IGNORE));
    CHECK(rr[0] == MPI_REQUEST_NULL && rr[1] == MPI_REQUEST_NULL, "Testall left requests");
    check_comm(d[0], ref, size, "idup(idup)");
    check_comm(d[1], ref, size, "second idup");
    CHECK_RC(MPI_Comm_compare(d[0], d[1], &res));
    CHECK(res == MPI_CONGRUENT, "two idups: %d", res);
    CHECK_RC(MPI_Comm_free(&d[0]));
    CHECK_RC(MPI_Comm_free(&d[1]));
    CHECK_RC(MPI_Comm_idup(c, &c2, &r));
    flag = 0;
    while (!flag)
        CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    check_comm(c2, ref, size, "idup after Test");
    CHECK_RC(MPI_Comm_free(&c2));

    /* Comm_idup must not wait for the other members: every rank but 0 starts
     * it, then sends synchronously to rank 0, which starts its own idup only
     * after receiving from all (a blocking idup deadlocks here) */
    int v = rank, got;
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            CHECK_RC(MPI_Recv(&got, 1, MPI_INT, i, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(got == i, "idup ordering: got %d from %d", got, i);
        }
        CHECK_RC(MPI_Comm_idup(c, &c2, &r));
    } else {
        CHECK_RC(MPI_Comm_idup(c, &c2, &r));
        CHECK_RC(MPI_Ssend(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
    }
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_comm(c2, ref, size, "idup started at different times");
    CHECK_RC(MPI_Comm_free(&c2));

    /* Context ids settled while other communicators are made: ranks use
     * different numbers of ids first (odd ranks make extra private ones), then
     * several idups are in flight with a blocking dup and a split among them.
     * Every new communicator must work and be distinct from the others and
     * from the private traps. */
    MPI_Comm extra[3] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
    for (int i = 0; i < (rank % 2 ? 2 : 0) + (rank % 3 == 1); i++)
        CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &extra[i]));
    traps_set(0);
    enum { NID = 5 };
    MPI_Comm nb[NID], bd, sp;
    MPI_Request nr[NID];
    CHECK_RC(MPI_Comm_idup(c, &nb[0], &nr[0]));
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &nb[1], &nr[1]));
    CHECK_RC(MPI_Comm_dup(c, &bd));
    CHECK_RC(MPI_Comm_idup(c, &nb[2], &nr[2]));
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &sp));
    CHECK_RC(MPI_Comm_idup(bd, &nb[3], &nr[3]));
    CHECK_RC(MPI_Comm_idup(sp, &nb[4], &nr[4]));
    CHECK_RC(MPI_Waitall(NID, nr, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NID - 1; i++)
        check_comm(nb[i], ref, size, "idups in flight together");
    check_comm(bd, ref, size, "dup among idups");
    int *rev = tc_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        rev[i] = size - 1 - i;
    check_comm(sp, rev, size, "split among idups");
    check_comm(nb[4], rev, size, "idup of the split");
    /* one message per communicator, same tag, received in reverse order:
     * each must arrive on its own communicator */
    MPI_Comm all[NID + 2] = {nb[0], nb[1], nb[2], nb[3], nb[4], bd, sp};
    int sv[NID + 2], rv[NID + 2];
    MPI_Request q[2 * (NID + 2)];
    for (int i = NID + 1; i >= 0; i--)
        CHECK_RC(MPI_Irecv(&rv[i], 1, MPI_INT, MPI_ANY_SOURCE, 9, all[i], &q[i]));
    for (int i = 0; i < NID + 2; i++) {
        int cr;
        CHECK_RC(MPI_Comm_rank(all[i], &cr));
        sv[i] = 100 * i + rank;
        CHECK_RC(MPI_Isend(&sv[i], 1, MPI_INT, cr, 9, all[i], &q[NID + 2 + i]));
    }
    CHECK_RC(MPI_Waitall(2 * (NID + 2), q, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NID + 2; i++)
        CHECK(rv[i] == 100 * i + rank, "communicator %d of the idup mix received %d", i, rv[i]);
    traps_clear(0);
    for (int i = 0; i < NID; i++)
        CHECK_RC(MPI_Comm_free(&nb[i]));
    CHECK_RC(MPI_Comm_free(&bd));
    CHECK_RC(MPI_Comm_free(&sp));
    for (int i = 0; i < 3; i++)
        if (extra[i] != MPI_COMM_NULL)
            CHECK_RC(MPI_Comm_free(&extra[i]));
    free(rev);

    /* an intercommunicator (evens and odds), idup started at different times
     * in each group */
    if (size >= 2) {
        MPI_Comm half, ic, icd;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 21, &ic));
        if (rank % 2) {
            CHECK_RC(MPI_Barrier(half));
            CHECK_RC(MPI_Comm_idup(ic, &icd, &r));
        } else {
            CHECK_RC(MPI_Comm_idup(ic, &icd, &r));
            CHECK_RC(MPI_Barrier(half));
        }
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int lsum = -1, rsz, want = 0;
        CHECK_RC(MPI_Comm_remote_size(icd, &rsz));
        for (int i = 0; i < size; i++)
            if (i % 2 != rank % 2)
                want += i;
        CHECK_RC(MPI_Allreduce(&rank, &lsum, 1, MPI_INT, MPI_SUM, icd));
        CHECK(lsum == want, "Allreduce on an idup'ed intercommunicator: %d, expected %d", lsum, want);
        CHECK_RC(MPI_Comm_free(&icd));
        CHECK_RC(MPI_Comm_free(&ic));
        CHECK_RC(MPI_Comm_free(&half));
    }
    CHECK_RC(MPI_Comm_free(&c));
    free(ref);
}

/* Every hint the library reports must have the value that was set. */
static void check_hints(MPI_Comm c, MPI_Info set, const char *what)
{
    MPI_Info used;
    int n;
    CHECK_RC(MPI_Comm_get_info(c, &used));
    CHECK(used != MPI_INFO_NULL, "%s: get_info gave MPI_INFO_NULL", what);
    CHECK_RC(MPI_Info_get_nkeys(used, &n));
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1], v1[MPI_MAX_INFO_VAL + 1], v2[MPI_MAX_INFO_VAL + 1];
        int f1, f2;
        CHECK_RC(MPI_Info_get_nthkey(used, i, key));
        CHECK_RC(MPI_Info_get(used, key, MPI_MAX_INFO_VAL, v1, &f1));
        CHECK(f1, "%s: key %s listed but not found", what, key);
        CHECK_RC(MPI_Info_get(set, key, MPI_MAX_INFO_VAL, v2, &f2));
        if (f2)
            CHECK(!strcmp(v1, v2), "%s: hint %s is \"%s\", set to \"%s\"", what, key, v1, v2);
    }
    CHECK_RC(MPI_Info_free(&used));
}

static void test_info_and_names(void)
{
    MPI_Info in;
    CHECK_RC(MPI_Info_create(&in));
    CHECK_RC(MPI_Info_set(in, "mpi_assert_no_any_tag", "true"));
    CHECK_RC(MPI_Info_set(in, "ferry_test_key", "some value"));
    MPI_Comm c, c2;
    CHECK_RC(MPI_Comm_dup_with_info(MPI_COMM_WORLD, in, &c));
    int *ref = tc_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        ref[i] = i;
    check_comm(c, ref, size, "dup_with_info");
    check_hints(c, in, "dup_with_info");
    /* a hint the library ignores is not reported back (MPI-4 7.4.4; MPICH
     * drops it too, Open MPI 4.1 keeps it) */
    if (!tc_is_open_mpi()) {
        MPI_Info used;
        char v[64];
        int flag = -1;
        CHECK_RC(MPI_Comm_get_info(c, &used));
        CHECK_RC(MPI_Info_get(used, "ferry_test_key", 63, v, &flag));
        CHECK(!flag, "dup_with_info reports the ignored hint ferry_test_key (\"%s\")", v);
        CHECK_RC(MPI_Info_free(&used));
    }
    CHECK_RC(MPI_Info_set(in, "mpi_assert_no_any_tag", "false"));
    CHECK_RC(MPI_Comm_set_info(c, in));
    check_hints(c, in, "set_info");
    CHECK_RC(MPI_Comm_dup(c, &c2));
    check_hints(c2, in, "dup of a communicator with hints");
    CHECK_RC(MPI_Comm_free(&c2));
    /* dup_with_info takes the hints given, not the parent's */
    MPI_Info empty, used;
    CHECK_RC(MPI_Info_create(&empty));
    CHECK_RC(MPI_Comm_dup_with_info(c, empty, &c2));
    check_comm(c2, ref, size, "dup_with_info(empty)");
    CHECK_RC(MPI_Comm_get_info(c2, &used));
    char v[64];
    int flag = -1;
    CHECK_RC(MPI_Info_get(used, "ferry_test_key", 63, v, &flag));
    CHECK(!flag, "dup_with_info(empty) kept the parent's hint (\"%s\")", v);
    CHECK_RC(MPI_Info_free(&used));
    CHECK_RC(MPI_Info_free(&empty));
    CHECK_RC(MPI_Comm_free(&c2));
    CHECK_RC(MPI_Info_free(&in));

    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world is named \"%s\" (%d)", name, len);
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_SELF"), "self is named \"%s\"", name);
    CHECK_RC(MPI_Comm_get_name(c, name, &len));
    CHECK(len == 0 && name[0] == 0, "a dup is named \"%s\"", name);
    CHECK_RC(MPI_Comm_set_name(c, "ferry test communicator"));
    CHECK_RC(MPI_Comm_get_name(c, name, &len));
    CHECK(!strcmp(name, "ferry test communicator") && len == 23, "name \"%s\" (%d)", name, len);
    CHECK_RC(MPI_Comm_dup(c, &c2));
    CHECK_RC(MPI_Comm_get_name(c2, name, &len));
    CHECK(len == 0, "the dup of a named communicator is named \"%s\"", name);
    CHECK_RC(MPI_Comm_free(&c2));
    CHECK_RC(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL, "Comm_free did not null the handle");
    free(ref);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    test_create();
    test_create_group();
    test_split_type();
    test_idup();
    test_info_and_names();
    CHECK_RC(MPI_Group_free(&gw));
    return tc_finish("comm_create");
}
