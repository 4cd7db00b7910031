/* comm_attr: attribute caching.
 *
 * Communicator keyvals with every kind of copy callback (MPI_COMM_NULL_COPY_FN,
 * MPI_COMM_DUP_FN, a user function that changes the value, one that sets
 * flag = 0, one that fails) and delete callback; the MPI-1 forms
 * (Keyval_create with MPI_NULL_COPY_FN / MPI_DUP_FN, Attr_put / Attr_get /
 * Attr_delete, Keyval_free). Every callback invocation is logged (which
 * callback, keyval, communicator, value) and compared with what must have
 * happened: set / get round trips, overwrite (delete callback with the old
 * value, exactly once), Comm_delete_attr, Comm_dup (one copy call per
 * attribute with a copy function, the dup holds exactly the copied values),
 * Comm_free (one delete call per attribute, on that communicator), a keyval
 * freed while attributes still use it (they keep working; the delete
 * callback still runs; Comm_get_attr / Comm_delete_attr still take it; a
 * delete callback may free its own keyval again), failing callbacks (the call returns an error, the
 * communicator stays usable), Comm_split / Comm_create copy nothing. The
 * predefined attributes (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
 * MPI_UNIVERSE_SIZE, MPI_APPNUM) on world, self, a dup and a split;
 * MPI_ERR_KEYVAL for setting / deleting / freeing them and for a datatype
 * keyval used on a communicator. Datatype keyvals (attributes on a
 * predefined type and a derived one, Type_dup copies, Type_free deletes) and
 * window keyvals (create / free). At MPI_Finalize the attributes of
 * MPI_COMM_SELF are deleted first, in the reverse order they were set, while
 * MPI_Finalized is still false (MPI-3.1 8.7.1); checked after Finalize.
 */
#include "common.h"

static int rank, size;

/* ---- the callback log ---------------------------------------------------- */

enum { EV_COPY, EV_DELETE };
struct event {
    int kind, keyval, extra;
    MPI_Comm comm;
    long val;
};
static struct event ev[256];
static int nev;

static void log_ev(int kind, int keyval, void *extra, MPI_Comm c, void *val)
{
    CHECK(nev < 256, "callback log overflow");
    ev[nev++] = (struct event){kind, keyval, (int)(long)extra, c, (long)val};
}

/* copy: value + 1000, flag 1 */
static int copy_plus(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    log_ev(EV_COPY, k, extra, c, in);
    *(void **)out = (void *)((long)in + 1000);
    *flag = 1;
    return MPI_SUCCESS;
}

/* copy: flag 0 (not copied) */
static int copy_none(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    log_ev(EV_COPY, k, extra, c, in);
    *flag = 0;
    return MPI_SUCCESS;
}

static int copy_fail(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    log_ev(EV_COPY, k, extra, c, in);
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int del_log(MPI_Comm c, int k, void *val, void *extra)
{
    log_ev(EV_DELETE, k, extra, c, val);
    return MPI_SUCCESS;
}

static int fail_deletes = 1;
static int del_fail(MPI_Comm c, int k, void *val, void *extra)
{
    log_ev(EV_DELETE, k, extra, c, val);
    return fail_deletes ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* the log since mark holds exactly these events, in any order */
static void expect_events(int mark, const struct event *want, int n, const char *what)
{
    CHECK(nev - mark == n, "%s: %d callbacks, expected %d", what, nev - mark, n);
    char used[64] = {0};
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int j = mark; j < nev && !found; j++)
            if (!used[j - mark] && ev[j].kind == want[i].kind && ev[j].keyval == want[i].keyval &&
                ev[j].val == want[i].val && ev[j].comm == want[i].comm && ev[j].extra == want[i].extra)
                found = used[j - mark] = 1;
        CHECK(found, "%s: no %s callback for keyval 0x%x value %ld (extra %d)", what,
              want[i].kind == EV_COPY ? "copy" : "delete", (unsigned)want[i].keyval, want[i].val, want[i].extra);
    }
}

static long get(MPI_Comm c, int k, int *flag)
{
    void *v = (void *)-1;
    CHECK_RC(MPI_Comm_get_attr(c, k, &v, flag));
    return *flag ? (long)v : -1;
}

static void expect_attr(MPI_Comm c, int k, int present, long val, const char *what)
{
    int flag = -1;
    long v = get(c, k, &flag);
    CHECK(flag == present, "%s: keyval 0x%x flag %d, expected %d", what, (unsigned)k, flag, present);
    if (present)
        CHECK(v == val, "%s: keyval 0x%x value %ld, expected %ld", what, (unsigned)k, v, val);
}

static int err_class(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

/* ---- communicator attributes --------------------------------------------- */

static void test_comm_attrs(void)
{
    int k_plus, k_dupfn, k_null, k_none, k_quiet, k_old_dup, k_old_null;
    CHECK_RC(MPI_Comm_create_keyval(copy_plus, del_log, &k_plus, (void *)1));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del_log, &k_dupfn, (void *)2));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_log, &k_null, (void *)3));
    CHECK_RC(MPI_Comm_create_keyval(copy_none, del_log, &k_none, (void *)4));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k_quiet, (void *)5));
    CHECK_RC(MPI_Keyval_create(MPI_DUP_FN, del_log, &k_old_dup, (void *)6));
    CHECK_RC(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k_old_null, (void *)7));
    int keys[7] = {k_plus, k_dupfn, k_null, k_none, k_quiet, k_old_dup, k_old_null};
    for (int i = 0; i < 7; i++) {
        CHECK(keys[i] != MPI_KEYVAL_INVALID, "keyval %d is MPI_KEYVAL_INVALID", i);
        for (int j = 0; j < i; j++)
            CHECK(keys[i] != keys[j], "keyvals %d and %d are both 0x%x", i, j, (unsigned)keys[i]);
    }

    MPI_Comm c, d;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int mark = nev;
    for (int i = 0; i < 7; i++)
        expect_attr(c, keys[i], 0, 0, "fresh communicator");
    CHECK_RC(MPI_Comm_set_attr(c, k_plus, (void *)10));
    CHECK_RC(MPI_Comm_set_attr(c, k_dupfn, (void *)20));
    CHECK_RC(MPI_Comm_set_attr(c, k_null, (void *)30));
    CHECK_RC(MPI_Comm_set_attr(c, k_none, (void *)40));
    CHECK_RC(MPI_Comm_set_attr(c, k_quiet, (void *)50));
    CHECK_RC(MPI_Attr_put(c, k_old_dup, (void *)60));
    CHECK_RC(MPI_Attr_put(c, k_old_null, (void *)70));
    expect_events(mark, NULL, 0, "setting new attributes");
    long vals[7] = {10, 20, 30, 40, 50, 60, 70};
    for (int i = 0; i < 7; i++)
        expect_attr(c, keys[i], 1, vals[i], "after set");
    {
        void *v;
        int flag;
        CHECK_RC(MPI_Attr_get(c, k_old_dup, &v, &flag));
        CHECK(flag && (long)v == 60, "Attr_get: %d %ld", flag, (long)v);
    }
    /* overwrite: the old value is deleted, once */
    mark = nev;
    CHECK_RC(MPI_Comm_set_attr(c, k_plus, (void *)11));
    struct event w1[] = {{EV_DELETE, k_plus, 1, c, 10}};
    expect_events(mark, w1, 1, "overwrite");
    expect_attr(c, k_plus, 1, 11, "after overwrite");
    vals[0] = 11;

    /* dup: copy callbacks for the user copy functions only */
    mark = nev;
    CHECK_RC(MPI_Comm_dup(c, &d));
    struct event w2[] = {{EV_COPY, k_plus, 1, c, 11}, {EV_COPY, k_none, 4, c, 40}};
    expect_events(mark, w2, 2, "Comm_dup");
    expect_attr(d, k_plus, 1, 1011, "dup");
    expect_attr(d, k_dupfn, 1, 20, "dup");
    expect_attr(d, k_null, 0, 0, "dup");
    expect_attr(d, k_none, 0, 0, "dup");
    expect_attr(d, k_quiet, 0, 0, "dup");
    expect_attr(d, k_old_dup, 1, 60, "dup");
    expect_attr(d, k_old_null, 0, 0, "dup");
    for (int i = 0; i < 7; i++)
        expect_attr(c, keys[i], 1, vals[i], "original after dup");

    /* delete on the dup: one callback with the dup's value; again: nothing */
    mark = nev;
    CHECK_RC(MPI_Comm_delete_attr(d, k_dupfn));
    struct event w3[] = {{EV_DELETE, k_dupfn, 2, d, 20}};
    expect_events(mark, w3, 1, "Comm_delete_attr");
    expect_attr(d, k_dupfn, 0, 0, "after delete");
    expect_attr(c, k_dupfn, 1, 20, "original after the dup's delete");
    mark = nev;
    CHECK_RC(MPI_Comm_delete_attr(d, k_dupfn));
    expect_events(mark, NULL, 0, "deleting an attribute that is not set");
    CHECK_RC(MPI_Attr_delete(d, k_old_dup));
    struct event w4[] = {{EV_DELETE, k_old_dup, 6, d, 60}};
    expect_events(mark, w4, 1, "Attr_delete");

    /* split and create copy no attributes */
    MPI_Comm s;
    mark = nev;
    CHECK_RC(MPI_Comm_split(c, 0, rank, &s));
    for (int i = 0; i < 7; i++)
        expect_attr(s, keys[i], 0, 0, "split");
    CHECK_RC(MPI_Comm_free(&s));
    MPI_Group g;
    CHECK_RC(MPI_Comm_group(c, &g));
    CHECK_RC(MPI_Comm_create(c, g, &s));
    CHECK_RC(MPI_Group_free(&g));
    for (int i = 0; i < 7; i++)
        expect_attr(s, keys[i], 0, 0, "create");
    CHECK_RC(MPI_Comm_free(&s));
    expect_events(mark, NULL, 0, "split/create/free without attributes");

    /* a keyval freed while in use: its attributes live on */
    CHECK_RC(MPI_Comm_free_keyval(&k_plus));
    CHECK(k_plus == MPI_KEYVAL_INVALID, "Comm_free_keyval left 0x%x", (unsigned)k_plus);
    int kp = keys[0];
    /* a new keyval must not take the freed one's value while its attributes
     * live (their callbacks still get that value) */
    int k_new;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k_new, NULL));
    CHECK(k_new != kp, "the freed keyval 0x%x was handed out again while in use", (unsigned)kp);
    CHECK_RC(MPI_Comm_free_keyval(&k_new));
    /* free d: delete callbacks for what d holds (k_plus 1011) */
    mark = nev;
    MPI_Comm dd = d;
    CHECK_RC(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL, "Comm_free left the handle");
    struct event w5[] = {{EV_DELETE, kp, 1, dd, 1011}};
    expect_events(mark, w5, 1, "Comm_free of the dup");
    /* free c: everything it holds that has a delete function */
    mark = nev;
    MPI_Comm cc = c;
    CHECK_RC(MPI_Comm_free(&c));
    struct event w6[] = {{EV_DELETE, kp, 1, cc, 11},
                         {EV_DELETE, k_dupfn, 2, cc, 20},
                         {EV_DELETE, k_null, 3, cc, 30},
                         {EV_DELETE, k_none, 4, cc, 40},
                         {EV_DELETE, k_old_dup, 6, cc, 60}};
    expect_events(mark, w6, 5, "Comm_free");

    /* failing callbacks */
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_RC(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    /* (MPICH 4.0 raises a failed Comm_free on the world's handler) */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int k_cf, k_df;
    CHECK_RC(MPI_Comm_create_keyval(copy_fail, MPI_COMM_NULL_DELETE_FN, &k_cf, (void *)8));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fail, &k_df, (void *)9));
    CHECK_RC(MPI_Comm_set_attr(c, k_cf, (void *)80));
    d = MPI_COMM_WORLD;
    int rc = MPI_Comm_dup(c, &d);
    CHECK(rc != MPI_SUCCESS, "Comm_dup succeeded although a copy callback failed");
    CHECK(d == MPI_COMM_NULL, "failed Comm_dup returned a communicator");
    CHECK_RC(MPI_Comm_delete_attr(c, k_cf));
    CHECK_RC(MPI_Comm_set_attr(c, k_df, (void *)90));
    rc = MPI_Comm_delete_attr(c, k_df);
    CHECK(rc != MPI_SUCCESS, "Comm_delete_attr succeeded although the delete callback failed");
    rc = MPI_Comm_free(&c);
    CHECK(rc != MPI_SUCCESS, "Comm_free succeeded although a delete callback failed");
    CHECK(c != MPI_COMM_NULL, "failed Comm_free nulled the handle");
    /* the communicator still works */
    int x = rank, y = -1;
    CHECK_RC(MPI_Sendrecv(&x, 1, MPI_INT, rank, 0, &y, 1, MPI_INT, rank, 0, c, MPI_STATUS_IGNORE));
    CHECK(y == rank, "communicator after failed callbacks");
    int kdf = k_df;
    CHECK_RC(MPI_Comm_free_keyval(&k_df));   /* the attribute stays */
    CHECK_RC(MPI_Comm_free_keyval(&k_cf));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* once the callback agrees, the communicator goes */
    fail_deletes = 0;
    mark = nev;
    cc = c;
    CHECK_RC(MPI_Comm_free(&c));
    /* (whether the failed attribute is still there is not specified: MPICH
     * drops it with the failed Comm_free, Ferry keeps it) */
    CHECK(nev - mark <= 1, "Comm_free after a failed one: %d callbacks", nev - mark);
    if (nev > mark) {
        struct event w7[] = {{EV_DELETE, kdf, 9, cc, 90}};
        expect_events(mark, w7, 1, "Comm_free after a failed one");
    }

    for (int i = 1; i < 7; i++)
        if (i != 0)
            CHECK_RC(MPI_Comm_free_keyval(&keys[i]));
}

/* A copy callback that fails with an error code the application added:
 * Comm_dup returns that very code (its class and string are the
 * application's), under MPI_ERRORS_RETURN, and creates nothing. */
static int added_code;
static int copy_fails(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)k, (void)extra, (void)in, (void)out;
    *flag = 0;
    return added_code;
}

static void test_copy_error(void)
{
    int cls, k, len;
    char msg[MPI_MAX_ERROR_STRING];
    CHECK_RC(MPI_Add_error_class(&cls));
    CHECK_RC(MPI_Add_error_code(cls, &added_code));
    CHECK_RC(MPI_Add_error_string(added_code, "the copy callback says no"));
    MPI_Comm d, d2 = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK_RC(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_create_keyval(copy_fails, MPI_COMM_NULL_DELETE_FN, &k, NULL));
    CHECK_RC(MPI_Comm_set_attr(d, k, NULL));
    int rc = MPI_Comm_dup(d, &d2), got = -1;
    CHECK(rc == added_code, "Comm_dup with a failing copy callback returned %d, expected the added code %d", rc,
          added_code);
    MPI_Error_class(rc, &got);
    CHECK(got == cls, "class of the returned code: %d, expected %d", got, cls);
    MPI_Error_string(rc, msg, &len);
    CHECK(!strcmp(msg, "the copy callback says no"), "string of the returned code: \"%s\"", msg);
    CHECK_RC(MPI_Comm_free_keyval(&k));
    CHECK_RC(MPI_Comm_free(&d));
}

static void test_predefined(void)
{
    MPI_Comm d, s;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, 0, &s));
    MPI_Comm comms[4] = {MPI_COMM_WORLD, MPI_COMM_SELF, d, s};
    for (int i = 0; i < 4; i++) {
        int *v, flag;
        CHECK_RC(MPI_Comm_get_attr(comms[i], MPI_TAG_UB, &v, &flag));
        CHECK(flag && *v >= 32767, "MPI_TAG_UB: flag %d value %d", flag, flag ? *v : 0);
        int tag_ub = *v;
        CHECK_RC(MPI_Attr_get(comms[i], MPI_TAG_UB, &v, &flag));
        CHECK(flag && *v == tag_ub, "Attr_get(MPI_TAG_UB)");
        CHECK_RC(MPI_Comm_get_attr(comms[i], MPI_HOST, &v, &flag));
        CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < size)), "MPI_HOST: %d %d", flag, flag ? *v : 0);
        CHECK_RC(MPI_Comm_get_attr(comms[i], MPI_IO, &v, &flag));
        CHECK(flag && (*v == MPI_PROC_NULL || *v == MPI_ANY_SOURCE || (*v >= 0 && *v < size)), "MPI_IO: %d %d", flag,
              flag ? *v : 0);
        CHECK_RC(MPI_Comm_get_attr(comms[i], MPI_WTIME_IS_GLOBAL, &v, &flag));
        CHECK(!flag || *v == 0 || *v == 1, "MPI_WTIME_IS_GLOBAL %d", *v);
        CHECK_RC(MPI_Comm_get_attr(comms[i], MPI_UNIVERSE_SIZE, &v, &flag));
        CHECK(!flag || *v >= size, "MPI_UNIVERSE_SIZE %d < %d", *v, size);
        /* the launcher's value, else none: Ferry's mpiexec and hydra leave it
         * unset (a guess misleads programs that size their spawns by it) */
        const char *usize = getenv("MPIEXEC_UNIVERSE_SIZE");
        if (usize && *usize)
            CHECK(flag && *v == atoi(usize), "MPI_UNIVERSE_SIZE: flag %d value %d, MPIEXEC_UNIVERSE_SIZE=%s", flag,
                  flag ? *v : 0, usize);
        else if (getenv("PMI_FERRY_UNIVERSE") || getenv("PMI_FD"))
            CHECK(!flag, "MPI_UNIVERSE_SIZE has a value (%d) that nobody gave", *v);
        CHECK_RC(MPI_Comm_get_attr(comms[i], MPI_APPNUM, &v, &flag));
        CHECK(!flag || *v >= 0, "MPI_APPNUM %d", *v);
    }
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int k = MPI_TAG_UB, one = 1;
    CHECK(err_class(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &one)) == MPI_ERR_KEYVAL, "set MPI_TAG_UB");
    CHECK(err_class(MPI_Attr_put(MPI_COMM_WORLD, MPI_TAG_UB, &one)) == MPI_ERR_KEYVAL, "Attr_put MPI_TAG_UB");
    CHECK(err_class(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB)) == MPI_ERR_KEYVAL, "delete MPI_TAG_UB");
    CHECK(err_class(MPI_Comm_free_keyval(&k)) == MPI_ERR_KEYVAL, "free MPI_TAG_UB");
    int tk;
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
    void *p;
    int flag;
    CHECK(err_class(MPI_Comm_get_attr(MPI_COMM_WORLD, tk, &p, &flag)) == MPI_ERR_KEYVAL, "datatype keyval on a comm");
    CHECK(err_class(MPI_Comm_set_attr(MPI_COMM_WORLD, tk, &one)) == MPI_ERR_KEYVAL, "datatype keyval set on a comm");
    int freed = tk;
    CHECK_RC(MPI_Type_free_keyval(&tk));
    CHECK(tk == MPI_KEYVAL_INVALID, "Type_free_keyval left 0x%x", (unsigned)tk);
    (void)freed;
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_RC(MPI_Comm_free(&d));
    CHECK_RC(MPI_Comm_free(&s));
}

/* ---- datatype and window keyvals --------------------------------------- */

static int tcopy(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    log_ev(EV_COPY, k, extra, (MPI_Comm)t, in);
    *(void **)out = (void *)((long)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int tdel(MPI_Datatype t, int k, void *val, void *extra)
{
    log_ev(EV_DELETE, k, extra, (MPI_Comm)t, val);
    return MPI_SUCCESS;
}

static int tcopy_fail(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    *flag = 0;
    return MPI_ERR_OTHER;
}

static void test_type_attrs(void)
{
    int tk, tk2;
    CHECK_RC(MPI_Type_create_keyval(tcopy, tdel, &tk, (void *)11));
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &tk2, (void *)12));
    MPI_Datatype t, t2;
    CHECK_RC(MPI_Type_contiguous(3, MPI_INT, &t));
    CHECK_RC(MPI_Type_commit(&t));
    void *v;
    int flag = -1;
    CHECK_RC(MPI_Type_get_attr(t, tk, &v, &flag));
    CHECK(!flag, "fresh type has the attribute");
    CHECK_RC(MPI_Type_set_attr(t, tk, (void *)100));
    CHECK_RC(MPI_Type_set_attr(t, tk2, (void *)200));
    CHECK_RC(MPI_Type_get_attr(t, tk, &v, &flag));
    CHECK(flag && (long)v == 100, "type attribute %d %ld", flag, (long)v);
    /* on a predefined type too */
    CHECK_RC(MPI_Type_set_attr(MPI_DOUBLE, tk2, (void *)300));
    CHECK_RC(MPI_Type_get_attr(MPI_DOUBLE, tk2, &v, &flag));
    CHECK(flag && (long)v == 300, "attribute on MPI_DOUBLE %d %ld", flag, (long)v);
    CHECK_RC(MPI_Type_delete_attr(MPI_DOUBLE, tk2));
    CHECK_RC(MPI_Type_get_attr(MPI_DOUBLE, tk2, &v, &flag));
    CHECK(!flag, "deleted attribute on MPI_DOUBLE still there");
    int mark = nev;
    CHECK_RC(MPI_Type_dup(t, &t2));
    struct event w1[] = {{EV_COPY, tk, 11, (MPI_Comm)t, 100}};
    expect_events(mark, w1, 1, "Type_dup");
    CHECK_RC(MPI_Type_get_attr(t2, tk, &v, &flag));
    CHECK(flag && (long)v == 101, "Type_dup copied %d %ld", flag, (long)v);
    CHECK_RC(MPI_Type_get_attr(t2, tk2, &v, &flag));
    CHECK(flag && (long)v == 200, "Type_dup with MPI_TYPE_DUP_FN: %d %ld", flag, (long)v);
    mark = nev;
    MPI_Datatype tt = t2;
    CHECK_RC(MPI_Type_free(&t2));
    struct event w2[] = {{EV_DELETE, tk, 11, (MPI_Comm)tt, 101}};
    expect_events(mark, w2, 1, "Type_free");
    mark = nev;
    CHECK_RC(MPI_Type_delete_attr(t, tk));
    struct event w3[] = {{EV_DELETE, tk, 11, (MPI_Comm)t, 100}};
    expect_events(mark, w3, 1, "Type_delete_attr");
    CHECK_RC(MPI_Type_free(&t));
    expect_events(mark, w3, 1, "Type_free without user attributes");
    CHECK_RC(MPI_Type_free_keyval(&tk));
    CHECK_RC(MPI_Type_free_keyval(&tk2));

    /* a failing copy callback: Type_dup returns the error and MPI_DATATYPE_NULL */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Type_create_keyval(tcopy_fail, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK_RC(MPI_Type_set_attr(t, tk, (void *)7));
    t2 = MPI_INT;
    int rc = MPI_Type_dup(t, &t2);
    CHECK(rc != MPI_SUCCESS, "Type_dup succeeded although the copy callback failed");
    CHECK(t2 == MPI_DATATYPE_NULL, "failed Type_dup gave 0x%x, not MPI_DATATYPE_NULL", (unsigned)t2);
    CHECK_RC(MPI_Type_free(&t));
    CHECK_RC(MPI_Type_free_keyval(&tk));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));

    int wk;
    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &wk, NULL));
    CHECK(wk != MPI_KEYVAL_INVALID, "Win_create_keyval");
    CHECK_RC(MPI_Win_free_keyval(&wk));
    CHECK(wk == MPI_KEYVAL_INVALID, "Win_free_keyval left 0x%x", (unsigned)wk);
}

/* ---- MPI_COMM_SELF at Finalize ----------------------------------------- */

static int fin_order[8], fin_n, fin_bad;

static int del_self(MPI_Comm c, int k, void *val, void *extra)
{
    int fin = 1, r = -1;
    MPI_Finalized(&fin);
    if (fin)
        fin_bad = 1;   /* MPI must still be usable */
    if (MPI_Comm_rank(MPI_COMM_WORLD, &r) != MPI_SUCCESS || r != rank)
        fin_bad = 2;
    if (c != MPI_COMM_SELF)
        fin_bad = 3;
    if (fin_n < 8)
        fin_order[fin_n] = (int)(long)val;
    fin_n++;
    return MPI_SUCCESS;
}

/* A keyval the program freed while attributes use it (MPI-3.1 6.7.2): the
 * program removes those attributes with Comm_delete_attr / Type_delete_attr
 * (which must take the freed value and run the callback once), reading them
 * still works, freeing again is harmless; once the last attribute is gone
 * the value is invalid. */
static int del_frees_keyval(MPI_Comm c, int k, void *val, void *extra)
{
    log_ev(EV_DELETE, k, extra, c, val);
    return MPI_Comm_free_keyval(&k);   /* common idiom: free the keyval in its delete callback */
}

static void test_freed_keyval(void)
{
    MPI_Comm d;
    int mark, k2, saved;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK_RC(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_log, &k2, (void *)13));
    saved = k2;
    CHECK_RC(MPI_Comm_set_attr(d, k2, (void *)130));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_WORLD, k2, (void *)131));
    CHECK_RC(MPI_Comm_free_keyval(&k2));
    expect_attr(d, saved, 1, 130, "Comm_get_attr with a freed keyval");
    mark = nev;
    CHECK_RC(MPI_Attr_delete(d, saved));
    CHECK_RC(MPI_Comm_delete_attr(MPI_COMM_WORLD, saved));
    struct event w[] = {{EV_DELETE, saved, 13, d, 130}, {EV_DELETE, saved, 13, MPI_COMM_WORLD, 131}};
    expect_events(mark, w, 2, "delete_attr with a freed keyval");

    /* a delete callback that frees its own keyval, on two communicators */
    int k3, k3s;
    MPI_Comm e;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &e));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_frees_keyval, &k3, (void *)14));
    k3s = k3;
    CHECK_RC(MPI_Comm_set_attr(d, k3, (void *)140));
    CHECK_RC(MPI_Comm_set_attr(e, k3, (void *)141));
    mark = nev;
    CHECK_RC(MPI_Comm_free(&e));        /* the callback frees k3 */
    CHECK_RC(MPI_Comm_free_keyval(&k3));  /* freed already, still used by d: harmless */
    CHECK(k3 == MPI_KEYVAL_INVALID, "Comm_free_keyval left 0x%x", (unsigned)k3);
    expect_attr(d, k3s, 1, 140, "attribute of a twice-freed keyval");
    CHECK_RC(MPI_Comm_free(&d));        /* the callback frees it once more */
    CHECK(nev - mark == 2, "delete callbacks of the self-freeing keyval: %d, expected 2", nev - mark);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    test_comm_attrs();
    test_freed_keyval();
    test_predefined();
    test_copy_error();
    test_type_attrs();

    int ks[4];
    for (int i = 0; i < 4; i++)
        CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_self, &ks[i], NULL));
    /* set in the order 2, 0, 3, 1: deleted in the order 1, 3, 0, 2 */
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, ks[2], (void *)2));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, ks[0], (void *)0));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, ks[3], (void *)3));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, ks[1], (void *)1));
    CHECK_RC(MPI_Comm_free_keyval(&ks[3]));   /* still deleted at Finalize */
    CHECK(fin_n == 0, "a delete callback ran before MPI_Finalize");
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Finalize());
    static const int expect[4] = {1, 3, 0, 2};
    if (fin_n != 4 || fin_bad) {
        fprintf(stderr, "FAIL [rank %d] comm_attr: %d delete callbacks for MPI_COMM_SELF at Finalize (expected 4), "
                "check %d failed\n", rank, fin_n, fin_bad);
        return 1;
    }
    for (int i = 0; i < 4; i++)
        if (fin_order[i] != expect[i]) {
            fprintf(stderr, "FAIL [rank %d] comm_attr: MPI_COMM_SELF attributes deleted in the order %d %d %d %d, "
                    "expected 1 3 0 2 (reverse of setting)\n", rank, fin_order[0], fin_order[1], fin_order[2],
                    fin_order[3]);
            return 1;
        }
    if (rank == 0)
        printf("comm_attr: OK (%d rank%s)\n", size, size == 1 ? "" : "s");
    return 0;
}
