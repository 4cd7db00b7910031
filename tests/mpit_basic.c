/* mpit_basic: the MPI tool information interface.
 *
 * Before MPI_T_init_thread calls fail with MPI_T_ERR_NOT_INITIALIZED; init
 * and finalize nest. Every control variable has a name, a description (the
 * string-length protocol: length 0 asks for the size, a short buffer gets a
 * NUL-terminated prefix), a datatype MPI_T allows, and can be read through a
 * handle. Categories list control variables by valid indices, and a name
 * finds its index. Performance-variable sessions can be made and freed.
 * With Ferry: the FERRY_* tunables are the (read-only) variables -- a write
 * fails with MPI_T_ERR_CVAR_SET_NEVER -- and FERRY_SHM_BUDGET reads its
 * default; an unknown name and an index past the end are errors.
 */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size, provided, n = -1;
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "cvar_get_num before MPI_T_init_thread");
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));   /* nests */
    tc_init(&argc, &argv, &rank, &size);
    int ferry = !tc_mpich_version();
    CHECK_RC(MPI_T_cvar_get_num(&n));
    CHECK(n >= 0 && (!ferry || n > 10), "%d control variables", n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[4096];
        int nlen = sizeof name, dlen = sizeof desc, verb, bind, scope, need = 0, count;
        MPI_Datatype dt;
        MPI_T_enum et;
        CHECK_RC(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &et, desc, &dlen, &bind, &scope));
        CHECK(nlen == (int)strlen(name) + 1, "cvar %d: name length %d for \"%s\"", i, nlen, name);
        CHECK_RC(MPI_T_cvar_get_info(i, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(need == nlen, "cvar %d: length query %d, name length %d", i, need, nlen);
        char small[4];
        int slen = sizeof small;
        CHECK_RC(MPI_T_cvar_get_info(i, small, &slen, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(slen <= (int)sizeof small && small[slen - 1] == 0 && !strncmp(small, name, (size_t)slen - 1),
              "cvar %d: a short buffer got \"%s\" (%d)", i, small, slen);
        CHECK(dt == MPI_INT || dt == MPI_UNSIGNED || dt == MPI_UNSIGNED_LONG || dt == MPI_UNSIGNED_LONG_LONG ||
                  dt == MPI_COUNT || dt == MPI_CHAR || dt == MPI_DOUBLE,
              "cvar %s: datatype 0x%x", name, (unsigned)dt);
        if (bind != MPI_T_BIND_NO_OBJECT)
            continue;
        MPI_T_cvar_handle h;
        CHECK_RC(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        CHECK(count >= 1, "cvar %s: count %d", name, count);
        if (count == 1 || dt == MPI_CHAR) {
            char *buf = tc_malloc((size_t)count * 16 + 16);
            CHECK_RC(MPI_T_cvar_read(h, buf));
            free(buf);
        }
        int idx = -1;
        CHECK_RC(MPI_T_cvar_get_index(name, &idx));
        CHECK(idx == i, "cvar_get_index(%s) = %d, expected %d", name, idx, i);
        if (ferry) {
            int one = 1;
            CHECK(scope == MPI_T_SCOPE_READONLY && MPI_T_cvar_write(h, &one) == MPI_T_ERR_CVAR_SET_NEVER,
                  "cvar %s: writable", name);
        }
        CHECK_RC(MPI_T_cvar_handle_free(&h));
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "cvar_handle_free left the handle");
    }
    if (ferry) {
        int idx = -1, count;
        MPI_Datatype dt;
        MPI_T_cvar_handle h;
        CHECK_RC(MPI_T_cvar_get_index("FERRY_SHM_BUDGET", &idx));
        CHECK_RC(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &dt, NULL, NULL, NULL, NULL, NULL));
        CHECK_RC(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
        long long v = -1;
        if (dt == MPI_COUNT) {
            MPI_Count c = -1;
            CHECK_RC(MPI_T_cvar_read(h, &c));
            v = c;
        } else {
            int i = -1;
            CHECK(dt == MPI_INT, "FERRY_SHM_BUDGET has datatype 0x%x", (unsigned)dt);
            CHECK_RC(MPI_T_cvar_read(h, &i));
            v = i;
        }
        CHECK(v == 4 << 20, "FERRY_SHM_BUDGET reads %lld, expected the default %d", v, 4 << 20);
        CHECK_RC(MPI_T_cvar_handle_free(&h));
        CHECK(MPI_T_cvar_get_index("FERRY_NO_SUCH_VARIABLE", &idx) == MPI_T_ERR_INVALID_NAME, "unknown name");
        CHECK(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
              "cvar index past the end");
    }
    /* categories */
    int ncat = -1;
    CHECK_RC(MPI_T_category_get_num(&ncat));
    for (int c = 0; c < ncat; c++) {
        char name[256];
        int nlen = sizeof name, ncv = -1, npv = -1, nsub = -1, idx = -1;
        CHECK_RC(MPI_T_category_get_info(c, name, &nlen, NULL, NULL, &ncv, &npv, &nsub));
        CHECK(ncv >= 0 && ncv <= n, "category %s: %d control variables of %d", name, ncv, n);
        if (ncv > 0) {
            int *ix = tc_malloc(sizeof(int) * (size_t)ncv);
            CHECK_RC(MPI_T_category_get_cvars(c, ncv, ix));
            for (int k = 0; k < ncv; k++)
                CHECK(ix[k] >= 0 && ix[k] < n, "category %s lists control variable %d of %d", name, ix[k], n);
            free(ix);
        }
        CHECK_RC(MPI_T_category_get_index(name, &idx));
        CHECK(idx == c, "category_get_index(%s) = %d, expected %d", name, idx, c);
    }
    /* performance variables: sessions work even when there are none */
    int npv = -1;
    CHECK_RC(MPI_T_pvar_get_num(&npv));
    CHECK(npv >= 0, "%d performance variables", npv);
    MPI_T_pvar_session ses;
    CHECK_RC(MPI_T_pvar_session_create(&ses));
    CHECK_RC(MPI_T_pvar_session_free(&ses));
    CHECK(ses == MPI_T_PVAR_SESSION_NULL, "pvar_session_free left the handle");
    CHECK_RC(MPI_T_finalize());
    CHECK_RC(MPI_T_finalize());
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "cvar_get_num after the last MPI_T_finalize");
    return tc_finish("mpit_basic");
}
