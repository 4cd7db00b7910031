/* session_basic: MPI-4 sessions.
 *
 * A session opened before MPI_Init: the process sets (mpi://WORLD and
 * mpi://SELF, names compared without case), the length protocol of
 * Session_get_nth_pset, "mpi_size" of each set, a group from each set and a
 * communicator from each group (Comm_create_from_group) that carries a ring
 * exchange and an allreduce checked against values computed here, and of
 * the predefined attributes caches MPI_TAG_UB only (so does its dup, while
 * MPI_COMM_WORLD has MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL too); an
 * intercommunicator between the even and odd ranks from two groups
 * (Intercomm_create_from_groups) pairs rank 2i with 2i+1. Errors go
 * to the session's handler: MPI_ERRORS_RETURN returns the class, a handler
 * made by Session_create_errhandler is called with the code, also one made
 * before Session_init and passed to it. MPI_Init and MPI_Finalize (the world
 * model) while the session is open; the session's communicator still works
 * after MPI_Finalize (Ferry: the runtime stays up while a session is open),
 * then Session_finalize. MPI_Initialized is false
 * before MPI_Init even with a session open.
 * Built against an MPI older than 4.0 (Open MPI 4.1) it only says so.
 */
#include "common.h"

#if MPI_VERSION >= 4 || defined(FERRY)
static int handler_calls, handler_code;
static void on_error(MPI_Session *s, int *code, ...)
{
    (void)s;
    handler_calls++;
    handler_code = *code;
}

static MPI_Comm comm_from_pset(MPI_Session s, const char *pset, const char *tag)
{
    MPI_Group g;
    MPI_Comm c;
    CHECK_RC(MPI_Group_from_session_pset(s, pset, &g));
    CHECK_RC(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    CHECK_RC(MPI_Group_free(&g));
    CHECK(c != MPI_COMM_NULL, "Comm_create_from_group(%s) gave MPI_COMM_NULL", pset);
    return c;
}

/* Which predefined attributes c caches: MPI_TAG_UB (at least 32767) always;
 * the environment's (MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL) only when env is
 * set (MPI_COMM_WORLD), not on a communicator of the sessions model. */
static void check_predefined(MPI_Comm c, int env, const char *what)
{
    int *v = NULL, flag = 0;
    CHECK_RC(MPI_Comm_get_attr(c, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "%s: MPI_TAG_UB flag %d value %d", what, flag, flag ? *v : 0);
    const int keys[] = {MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL};
    const char *names[] = {"MPI_HOST", "MPI_IO", "MPI_WTIME_IS_GLOBAL"};
    for (int i = 0; i < 3; i++) {
        CHECK_RC(MPI_Comm_get_attr(c, keys[i], &v, &flag));
        CHECK(flag == env, "%s: %s flag %d, expected %d", what, names[i], flag, env);
    }
}

/* A ring exchange and an allreduce over c. */
static void use_comm(MPI_Comm c, int expect_size)
{
    int rank, size;
    CHECK_RC(MPI_Comm_rank(c, &rank));
    CHECK_RC(MPI_Comm_size(c, &size));
    CHECK(size == expect_size, "communicator of %d ranks, expected %d", size, expect_size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size, out = 1000 + rank, in = -1;
    CHECK_RC(MPI_Sendrecv(&out, 1, MPI_INT, to, 3, &in, 1, MPI_INT, from, 3, c, MPI_STATUS_IGNORE));
    CHECK(in == 1000 + from, "ring: got %d from rank %d", in, from);
    int sum = -1;
    CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "allreduce: %d", sum);
}

int main(int argc, char **argv)
{
    MPI_Session s;
    int flag = -1;
    /* a handler made before anything is initialized, to pass to Session_init,
     * survives the start of the runtime (MPICH 4.0.2 refuses the call) */
    MPI_Errhandler early = MPI_ERRHANDLER_NULL;
    if (!tc_mpich_version())
        CHECK_RC(MPI_Session_create_errhandler(on_error, &early));
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, early != MPI_ERRHANDLER_NULL ? early : MPI_ERRORS_RETURN, &s));
    if (early != MPI_ERRHANDLER_NULL) {
        CHECK_RC(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
        CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER, "handler made before Session_init: %d calls, code %d",
              handler_calls, handler_code);
        CHECK_RC(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
        CHECK_RC(MPI_Errhandler_free(&early));
        handler_calls = 0;
    }
    CHECK_RC(MPI_Initialized(&flag));
    CHECK(!flag, "MPI_Initialized is true with only a session open");

    /* process sets */
    int n = -1, world = -1, self = -1;
    CHECK_RC(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "%d process sets", n);
    for (int i = 0; i < n; i++) {
        int len = 0;
        CHECK_RC(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len < 1024, "pset %d: length %d", i, len);
        char *name = malloc((size_t)len), small[4];
        CHECK_RC(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK((int)strlen(name) + 1 == len, "pset %d: \"%s\" for length %d", i, name, len);
        int slen = (int)sizeof small;
        CHECK_RC(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &slen, small));
        CHECK(strlen(small) == sizeof small - 1 && !strncmp(small, name, sizeof small - 1),
              "pset %d truncated to \"%s\"", i, small);
        MPI_Info info;
        char v[32];
        CHECK_RC(MPI_Session_get_pset_info(s, name, &info));
        CHECK_RC(MPI_Info_get(info, "mpi_size", sizeof v - 1, v, &flag));
        CHECK(flag && atoi(v) > 0, "pset %s: mpi_size \"%s\"", name, flag ? v : "");
        if (!strcmp(name, "mpi://WORLD"))
            world = atoi(v);
        if (!strcmp(name, "mpi://SELF"))
            self = atoi(v);
        CHECK_RC(MPI_Info_free(&info));
        free(name);
    }
    CHECK(world > 0 && self == 1, "mpi://WORLD size %d, mpi://SELF size %d", world, self);

    /* communicators from the sets */
    MPI_Comm wc = comm_from_pset(s, "mpi://WORLD", "org.ferry.session_basic.world");
    MPI_Comm sc = comm_from_pset(s, "mpi://self", "org.ferry.session_basic.self");
    use_comm(wc, world);
    use_comm(sc, 1);
    CHECK_RC(MPI_Comm_free(&sc));
    /* MPICH 4.0 gives a communicator of the sessions model all of them */
    int sessions_attrs = !tc_mpich_version();
    MPI_Comm wdup;
    check_predefined(wc, !sessions_attrs, "communicator from mpi://WORLD");
    CHECK_RC(MPI_Comm_dup(wc, &wdup));
    check_predefined(wdup, !sessions_attrs, "dup of the communicator from mpi://WORLD");
    CHECK_RC(MPI_Comm_free(&wdup));

    /* an intercommunicator between the even and the odd ranks, from groups */
    if (world >= 2) {
        MPI_Group wg, even, odd;
        int me, ne = (world + 1) / 2, no = world / 2, *er = malloc(sizeof(int) * (size_t)ne),
                *orr = malloc(sizeof(int) * (size_t)no);
        for (int i = 0; i < ne; i++)
            er[i] = 2 * i;
        for (int i = 0; i < no; i++)
            orr[i] = 2 * i + 1;
        CHECK_RC(MPI_Comm_rank(wc, &me));
        CHECK_RC(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
        CHECK_RC(MPI_Group_incl(wg, ne, er, &even));
        CHECK_RC(MPI_Group_incl(wg, no, orr, &odd));
        MPI_Comm ic;
        CHECK_RC(MPI_Intercomm_create_from_groups(me % 2 ? odd : even, 0, me % 2 ? even : odd, 0,
                                                  "org.ferry.session_basic.inter", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                                  &ic));
        int rsize = -1, flag = 0, lrank, peer = -1;
        CHECK_RC(MPI_Comm_test_inter(ic, &flag));
        CHECK_RC(MPI_Comm_remote_size(ic, &rsize));
        CHECK(flag && rsize == (me % 2 ? ne : no), "intercommunicator from groups: inter %d, remote size %d", flag,
              rsize);
        CHECK_RC(MPI_Comm_rank(ic, &lrank));
        if (lrank < ne && lrank < no)   /* pairs: even i <-> odd i */
            CHECK_RC(MPI_Sendrecv(&me, 1, MPI_INT, lrank, 5, &peer, 1, MPI_INT, lrank, 5, ic, MPI_STATUS_IGNORE));
        if (lrank < ne && lrank < no)
            CHECK(peer == (me % 2 ? me - 1 : me + 1), "intercommunicator partner of %d is %d", me, peer);
        CHECK_RC(MPI_Comm_free(&ic));
        CHECK_RC(MPI_Group_free(&wg));
        CHECK_RC(MPI_Group_free(&even));
        CHECK_RC(MPI_Group_free(&odd));
        free(er);
        free(orr);
    }

    /* errors through the session's handler */
    /* (MPICH 4.0.2 aborts here: it ignores the session's MPI_ERRORS_RETURN) */
    if (!tc_mpich_version()) {
        MPI_Group g = MPI_GROUP_NULL;
        int rc = MPI_Group_from_session_pset(s, "mpi://NO_SUCH_SET", &g), cls = -1;
        CHECK(rc != MPI_SUCCESS && g == MPI_GROUP_NULL, "an unknown process set gave a group");
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_ARG, "unknown process set: class %d", cls);
    }
    MPI_Errhandler eh, got;
    CHECK_RC(MPI_Session_create_errhandler(on_error, &eh));
    CHECK_RC(MPI_Session_set_errhandler(s, eh));
    CHECK_RC(MPI_Session_get_errhandler(s, &got));
    CHECK(got == eh, "Session_get_errhandler gave another handler");
    CHECK_RC(MPI_Errhandler_free(&got));
    CHECK_RC(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER, "handler: %d calls, code %d", handler_calls,
          handler_code);
    CHECK_RC(MPI_Errhandler_free(&eh));
    CHECK_RC(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));

    /* the world model alongside the session */
    int rank;
    CHECK_RC(MPI_Init(&argc, &argv));
    CHECK_RC(MPI_Initialized(&flag));
    CHECK(flag, "MPI_Initialized is false after MPI_Init");
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    use_comm(MPI_COMM_WORLD, world);
    use_comm(wc, world);
    check_predefined(MPI_COMM_WORLD, 1, "MPI_COMM_WORLD");
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        printf("session_basic: OK (%d rank%s)\n", world, world == 1 ? "" : "s");
        fflush(stdout);
    }
    CHECK_RC(MPI_Finalize());
#if defined(FERRY)
    use_comm(wc, world);   /* the session keeps MPI up */
#endif
    CHECK_RC(MPI_Comm_free(&wc));
    CHECK_RC(MPI_Session_finalize(&s));
    CHECK(s == MPI_SESSION_NULL, "Session_finalize left the handle");
    return 0;
}
#else
int main(void)
{
    printf("session_basic: OK (MPI %d.%d has no sessions; nothing tested)\n", MPI_VERSION, MPI_SUBVERSION);
    return 0;
}
#endif
