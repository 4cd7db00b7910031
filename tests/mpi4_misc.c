/* mpi4_misc: small MPI-4.0 additions that MPICH 4 programs use.
 *
 * 1 MPI_Info_get_string: the value and, in buflen, the size it needs (NUL
 *   included); truncation to buflen-1 characters plus NUL; buflen 0 only
 *   asks the size (the buffer is left alone); a missing key sets flag 0 and leaves
 *   buflen and the buffer alone; an empty value.
 * 2 MPI_Comm_idup_with_info: a working duplicate (own context: traffic on
 *   the parent does not match on it), whose info hints are the given ones,
 *   not the parent's; with MPI_INFO_NULL too; several in flight at once.
 * 3 Hints do not propagate (MPI-4.0 7.4.4): MPI_Comm_dup and MPI_Comm_idup of
 *   a communicator with an assertion set do not report it; MPI_Comm_split_type
 *   given the assertion reports it wherever Comm_dup_with_info does.
 * 4 (Ferry's header) MPIX_Comm_agree / MPIX_Comm_iagree: the AND of the
 *   flags, in an order of their own beside the communicator's collectives.
 *
 * Built against an MPI-3 library (Open MPI 4.1, used to validate the tests)
 * the program only says so.
 */
#include "common.h"

#if MPI_VERSION >= 4 || defined(FERRY_MPI_H_INCLUDED)
static int rank, size;

static void info_get_string(void)
{
    MPI_Info in;
    CHECK_RC(MPI_Info_create(&in));
    CHECK_RC(MPI_Info_set(in, "alpha", "0123456789"));
    CHECK_RC(MPI_Info_set(in, "empty", ""));
    char buf[32];
    int len = (int)sizeof buf, flag = -1;
    CHECK_RC(MPI_Info_get_string(in, "alpha", &len, buf, &flag));
    CHECK(flag == 1 && len == 11 && !strcmp(buf, "0123456789"), "whole value: flag %d len %d '%s'", flag, len, buf);

    memset(buf, 'x', sizeof buf);
    len = 5;
    CHECK_RC(MPI_Info_get_string(in, "alpha", &len, buf, &flag));
    CHECK(flag == 1 && len == 11, "truncated: flag %d, buflen %d should be the full size 11", flag, len);
    CHECK(!memcmp(buf, "0123", 5) && buf[5] == 'x', "truncated to buflen 5: '%.5s' then '%c'", buf, buf[5]);

    len = 0;
    flag = -1;
    memset(buf, 'x', sizeof buf);
    CHECK_RC(MPI_Info_get_string(in, "alpha", &len, buf, &flag));
    CHECK(flag == 1 && len == 11 && buf[0] == 'x', "size query: flag %d len %d, buffer touched %d", flag, len,
          buf[0] != 'x');

    len = 11;
    memset(buf, 'x', sizeof buf);
    CHECK_RC(MPI_Info_get_string(in, "alpha", &len, buf, &flag));
    CHECK(len == 11 && !strcmp(buf, "0123456789"), "exact size: len %d '%s'", len, buf);

    len = (int)sizeof buf;
    memset(buf, 'x', sizeof buf);
    CHECK_RC(MPI_Info_get_string(in, "empty", &len, buf, &flag));
    CHECK(flag == 1 && len == 1 && buf[0] == 0, "empty value: flag %d len %d", flag, len);

    len = 7;
    flag = -1;
    memset(buf, 'x', sizeof buf);
    CHECK_RC(MPI_Info_get_string(in, "missing", &len, buf, &flag));
    CHECK(flag == 0 && len == 7 && buf[0] == 'x', "missing key: flag %d len %d, buffer touched %d", flag, len,
          buf[0] != 'x');
    CHECK_RC(MPI_Info_free(&in));
}

static void idup_with_info(void)
{
    MPI_Info hints, got;
    CHECK_RC(MPI_Info_create(&hints));
    CHECK_RC(MPI_Info_set(hints, "mpi_assert_no_any_tag", "true"));
    enum { N = 4 };
    MPI_Comm dups[N];
    MPI_Request r[N];
    for (int i = 0; i < N; i++)
        CHECK_RC(MPI_Comm_idup_with_info(MPI_COMM_WORLD, i % 2 ? MPI_INFO_NULL : hints, &dups[i], &r[i]));
    CHECK_RC(MPI_Info_free(&hints));   /* the communicators keep their own copies */
    CHECK_RC(MPI_Waitall(N, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) {
        int res = -1, nkeys = -1, flag = 0;
        CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, dups[i], &res));
        CHECK(res == MPI_CONGRUENT, "idup_with_info %d: compare gives %d", i, res);
        CHECK_RC(MPI_Comm_get_info(dups[i], &got));
        if (i % 2 == 0) {
            /* an implementation may drop hints it does not use; one it keeps is
             * the given value */
            char v[16];
            int len = (int)sizeof v;
            CHECK_RC(MPI_Info_get_string(got, "mpi_assert_no_any_tag", &len, v, &flag));
            CHECK(!flag || !strcmp(v, "true"), "idup_with_info %d: hint is '%s'", i, v);
        } else {
            char v[16];
            int len = (int)sizeof v;
            CHECK_RC(MPI_Info_get_nkeys(got, &nkeys));
            CHECK(nkeys >= 0, "Info_get_nkeys gave %d", nkeys);
            CHECK_RC(MPI_Info_get_string(got, "mpi_assert_no_any_tag", &len, v, &flag));
            /* no hint, or the default (MPICH lists every hint it knows) */
            CHECK(!flag || strcmp(v, "true"), "idup_with_info(MPI_INFO_NULL) %d has the other communicators' hint",
                  i);
        }
        CHECK_RC(MPI_Info_free(&got));
    }
    /* own context: a message on the parent is not received on a dup */
    int to = (rank + 1) % size, from = (rank + size - 1) % size, out = rank, in = -1, flag = 1;
    MPI_Request s;
    CHECK_RC(MPI_Isend(&out, 1, MPI_INT, to, 9, MPI_COMM_WORLD, &s));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        CHECK_RC(MPI_Iprobe(from, 9, dups[i], &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a message on MPI_COMM_WORLD is visible on duplicate %d", i);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        CHECK_RC(MPI_Sendrecv(&out, 1, MPI_INT, to, 9, &in, 1, MPI_INT, from, 9, dups[i], MPI_STATUS_IGNORE));
        CHECK(in == from, "duplicate %d: got %d from %d", i, in, from);
    }
    CHECK_RC(MPI_Recv(&in, 1, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK_RC(MPI_Comm_free(&dups[i]));
}

#ifdef FERRY_MPI_H_INCLUDED
/* Agreements: the AND of every rank's flag, in an order of their own beside
 * the collectives (as mpi4py's tests use them: the root starts one before a
 * barrier that the others enter first, then start theirs). */
static void agreements(void)
{
    MPI_Comm comm;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    for (int i = 0; i < 5; i++) {
        int flag = i;
        CHECK_RC(MPIX_Comm_agree(comm, &flag));
        CHECK(flag == i, "MPIX_Comm_agree of %d everywhere gave %d", i, flag);
    }
    for (int root = 0; root < size; root++) {
        int flag, done = 0;
        MPI_Request r;
        CHECK_RC(MPI_Barrier(comm));
        if (rank == root) {
            flag = 0xB;
            CHECK_RC(MPIX_Comm_iagree(comm, &flag, &r));
            CHECK_RC(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
            CHECK(!done || size == 1, "root %d: Iagree completed before the others started theirs", root);
            CHECK_RC(MPI_Barrier(comm));
        } else {
            flag = 0xD;
            CHECK_RC(MPI_Barrier(comm));
            CHECK_RC(MPIX_Comm_iagree(comm, &flag, &r));
        }
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(flag == (size == 1 ? 0xB : 0x9), "root %d: Iagree gave 0x%x", root, flag);
    }
    CHECK_RC(MPI_Comm_free(&comm));
}
#endif

/* flag and value of key in comm's hints */
static int hint_of(MPI_Comm comm, const char *key, char *v, int vlen)
{
    MPI_Info got;
    int flag = 0;
    CHECK_RC(MPI_Comm_get_info(comm, &got));
    v[0] = 0;
    CHECK_RC(MPI_Info_get_string(got, key, &vlen, v, &flag));
    CHECK_RC(MPI_Info_free(&got));
    return flag;
}

static void hint_propagation(void)
{
    static const char *const keys[] = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
                                       "mpi_assert_exact_length", "mpi_assert_allow_overtaking"};
    for (int k = 0; k < 4; k++) {
        MPI_Info hints;
        MPI_Comm with, dup, idup, split;
        MPI_Request r;
        char v[16];
        CHECK_RC(MPI_Info_create(&hints));
        CHECK_RC(MPI_Info_set(hints, keys[k], "true"));
        CHECK_RC(MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, &with));
        int kept = hint_of(with, keys[k], v, (int)sizeof v);
        CHECK(!kept || !strcmp(v, "true"), "Comm_dup_with_info: %s is '%s'", keys[k], v);

        CHECK_RC(MPI_Comm_dup(with, &dup));
        int flag = hint_of(dup, keys[k], v, (int)sizeof v);
        CHECK(!flag || strcmp(v, "true"), "Comm_dup copied the hint %s=%s of its parent", keys[k], v);
        CHECK_RC(MPI_Comm_idup(with, &idup, &r));
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        flag = hint_of(idup, keys[k], v, (int)sizeof v);
        CHECK(!flag || strcmp(v, "true"), "Comm_idup copied the hint %s=%s of its parent", keys[k], v);

        /* split_type applies the hints it is given, as dup_with_info does */
        CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, hints, &split));
        CHECK(split != MPI_COMM_NULL, "Comm_split_type(SHARED) gave MPI_COMM_NULL");
        flag = hint_of(split, keys[k], v, (int)sizeof v);
        CHECK(flag == kept && (!flag || !strcmp(v, "true")),
              "Comm_split_type with %s=true: flag %d value '%s' (Comm_dup_with_info: flag %d)", keys[k], flag, v,
              kept);
        /* and a plain dup of the split does not carry them on */
        CHECK_RC(MPI_Comm_free(&dup));
        CHECK_RC(MPI_Comm_dup(split, &dup));
        flag = hint_of(dup, keys[k], v, (int)sizeof v);
        CHECK(!flag || strcmp(v, "true"), "Comm_dup of the split copied %s=%s", keys[k], v);

        /* the duplicates work: an Allreduce on each */
        MPI_Comm cs[4] = {with, dup, idup, split};
        for (int i = 0; i < 4; i++) {
            int in = rank + 1, out = -1;
            CHECK_RC(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, cs[i]));
            int n;
            CHECK_RC(MPI_Comm_size(cs[i], &n));
            if (i < 3 || n == size)   /* the split: all of world where one node holds it */
                CHECK(out == size * (size + 1) / 2, "Allreduce on communicator %d gave %d", i, out);
            else
                CHECK(out >= n * (n + 1) / 2, "Allreduce on the split gave %d for %d ranks", out, n);
            CHECK_RC(MPI_Comm_free(&cs[i]));
        }
        CHECK_RC(MPI_Info_free(&hints));
    }
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    info_get_string();
    idup_with_info();
    hint_propagation();
#ifdef FERRY_MPI_H_INCLUDED
    agreements();
#endif
    return tc_finish("mpi4_misc");
}
#else
int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    if (rank == 0)
        printf("mpi4_misc: this MPI (MPI_VERSION %d) has no MPI-4 functions, nothing checked\n", MPI_VERSION);
    return tc_finish("mpi4_misc");
}
#endif
