/* comm_dims: MPI_Dims_create against an exhaustive reference.
 *
 * The standard asks for dimensions "as close to each other as possible", in
 * non-increasing order, leaving the positive entries alone. The reference
 * here enumerates every factorization of the free part into the free
 * dimensions and picks the one whose largest and smallest factors differ
 * least; among those, the one with the largest smallest factor, then the
 * largest second-smallest, and so on. That is exactly MPICH's choice (this
 * test passes under MPICH 4.0 for every case below), so Ferry and MPICH
 * build the same grids. Cases: nnodes 1..1200 with 1 to 6 free dimensions,
 * spread over the ranks; a set of larger nnodes; entries preset to fixed
 * values in various positions; a table of results taken from MPICH, including
 * the cases where several factorizations are equally balanced; and the error
 * classes (MPI_ERR_DIMS when the fixed entries do not divide nnodes or are
 * negative, MPI_ERR_ARG for negative nnodes or ndims).
 */
#include "common.h"

static int rank, size;

struct search {
    int k, *a, *best, bestbal, found;
};

/* a[pos..k) non-decreasing factors >= a[pos-1] with product r */
static void enumerate(struct search *s, int pos, long r)
{
    int lo = pos ? s->a[pos - 1] : 1;
    if (pos == s->k - 1) {
        if (r < lo)
            return;
        s->a[pos] = (int)r;
        int bal = s->a[pos] - s->a[0];
        int better = !s->found || bal < s->bestbal;
        if (!better && bal == s->bestbal)
            for (int i = 0; i < s->k; i++)   /* larger smallest factor, then the next ... */
                if (s->a[i] != s->best[i]) {
                    better = s->a[i] > s->best[i];
                    break;
                }
        if (better) {
            memcpy(s->best, s->a, sizeof(int) * (size_t)s->k);
            s->bestbal = bal;
            s->found = 1;
        }
        return;
    }
    for (long f = lo; f <= r; f++) {
        long p = 1;
        for (int i = pos; i < s->k && p <= r; i++)
            p *= f;
        if (p > r)
            break;
        if (r % f == 0) {
            s->a[pos] = (int)f;
            enumerate(s, pos + 1, r / f);
        }
    }
}

/* the reference result for (nnodes, ndims, dims preset) */
static void reference(int nnodes, int ndims, const int *preset, int *out)
{
    int k = 0;
    long fixed = 1;
    for (int i = 0; i < ndims; i++) {
        out[i] = preset[i];
        if (preset[i])
            fixed *= preset[i];
        else
            k++;
    }
    if (k == 0)
        return;
    int a[16], best[16];
    struct search s = {k, a, best, 0, 0};
    enumerate(&s, 0, nnodes / fixed);
    CHECK(s.found, "no factorization of %ld into %d", nnodes / fixed, k);
    for (int i = 0, j = k - 1; i < ndims; i++)
        if (!preset[i])
            out[i] = best[j--];
}

static void check_case(int nnodes, int ndims, const int *preset)
{
    int dims[16], ref[16];
    memcpy(dims, preset, sizeof(int) * (size_t)ndims);
    CHECK_RC(MPI_Dims_create(nnodes, ndims, dims));
    reference(nnodes, ndims, preset, ref);
    for (int i = 0; i < ndims; i++)
        if (dims[i] != ref[i]) {
            char got[128] = "", want[128] = "", pre[128] = "";
            for (int j = 0; j < ndims; j++) {
                snprintf(got + strlen(got), sizeof got - strlen(got), " %d", dims[j]);
                snprintf(want + strlen(want), sizeof want - strlen(want), " %d", ref[j]);
                snprintf(pre + strlen(pre), sizeof pre - strlen(pre), " %d", preset[j]);
            }
            CHECK(0, "Dims_create(%d, %d, {%s }) gave {%s }, expected {%s }", nnodes, ndims, pre, got, want);
        }
}

/* results printed by MPICH 4.0.2's MPI_Dims_create */
static const struct {
    int n, nd, d[6];
} table[] = {
    {12, 2, {4, 3}},          {16, 3, {4, 2, 2}},        {24, 3, {4, 3, 2}},       {36, 3, {4, 3, 3}},
    {60, 3, {5, 4, 3}},       {64, 3, {4, 4, 4}},        {72, 2, {9, 8}},          {72, 3, {6, 4, 3}},
    {96, 3, {6, 4, 4}},       {100, 3, {5, 5, 4}},       {128, 3, {8, 4, 4}},      {360, 2, {20, 18}},
    {360, 3, {10, 6, 6}},     {720, 3, {10, 9, 8}},      {1024, 3, {16, 8, 8}},    {12, 4, {3, 2, 2, 1}},
    {20, 4, {5, 2, 2, 1}},    {28, 4, {7, 2, 2, 1}},     {42, 4, {7, 3, 2, 1}},    {60, 4, {5, 3, 2, 2}},
    {360, 4, {6, 5, 4, 3}},   {720, 4, {6, 6, 5, 4}},    {1024, 4, {8, 8, 4, 4}},  {2160, 4, {10, 6, 6, 6}},
    {2520, 4, {10, 7, 6, 6}}, {3696, 3, {22, 14, 12}},   {5040, 3, {21, 16, 15}},  {6240, 3, {26, 16, 15}},
    {10800, 3, {27, 20, 20}}, {13104, 4, {14, 13, 9, 8}}, {18000, 5, {10, 10, 6, 6, 5}},
    {19800, 5, {11, 10, 6, 6, 5}}, {7, 3, {7, 1, 1}},    {1, 4, {1, 1, 1, 1}},     {6211, 6, {6211, 1, 1, 1, 1, 1}},
};

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    int zero[16] = {0};
    /* every rank takes its share of nnodes */
    for (int n = 1 + rank; n <= 1200; n += size)
        for (int nd = 1; nd <= 6; nd++)
            check_case(n, nd, zero);
    static const int larger[] = {2048, 2310, 3600, 4096, 5040, 7560, 10080, 27720, 65536, 100000, 362880, 1000000};
    for (unsigned i = (unsigned)rank; i < sizeof larger / sizeof *larger; i += (unsigned)size)
        for (int nd = 2; nd <= 4; nd++)
            check_case(larger[i], nd, zero);
    /* presets */
    static const int pre[][4] = {{0, 2, 0, 0}, {3, 0, 0, 0}, {0, 0, 5, 0}, {2, 0, 0, 2}, {0, 1, 0, 0},
                                 {0, 0, 0, 7}, {6, 0, 1, 0}, {4, 4, 0, 0}, {1, 1, 1, 0}, {2, 3, 5, 7}};
    for (unsigned p = 0; p < sizeof pre / sizeof *pre; p++)
        for (int n = 1 + rank; n <= 420; n += size) {
            int fixed = 1;
            for (int i = 0; i < 4; i++)
                if (pre[p][i])
                    fixed *= pre[p][i];
            if (n % fixed == 0)
                check_case(n, 4, pre[p]);
        }
    /* MPICH's own answers */
    for (unsigned t = 0; t < sizeof table / sizeof *table; t++) {
        int dims[6] = {0};
        CHECK_RC(MPI_Dims_create(table[t].n, table[t].nd, dims));
        for (int i = 0; i < table[t].nd; i++)
            CHECK(dims[i] == table[t].d[i], "Dims_create(%d, %d)[%d] = %d, MPICH gives %d", table[t].n, table[t].nd,
                  i, dims[i], table[t].d[i]);
    }
    /* nothing to fill in: unchanged */
    int all[3] = {2, 3, 4};
    CHECK_RC(MPI_Dims_create(24, 3, all));
    CHECK(all[0] == 2 && all[1] == 3 && all[2] == 4, "fully preset dims changed");
    /* errors */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int d2[2] = {4, 0}, d3[2] = {-1, 0}, d4[2] = {0, 0}, cls;
    int rc = MPI_Dims_create(6, 2, d2);
    cls = rc;
    if (rc)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_DIMS, "fixed entry not dividing nnodes: class %d", cls);
    rc = MPI_Dims_create(6, 2, d3);
    cls = rc;
    if (rc)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_DIMS, "negative entry: class %d", cls);
    rc = MPI_Dims_create(-1, 2, d4);
    cls = rc;
    if (rc)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "negative nnodes: class %d", cls);
    rc = MPI_Dims_create(6, -1, d4);
    cls = rc;
    if (rc)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "negative ndims: class %d", cls);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    return tc_finish("comm_dims");
}
