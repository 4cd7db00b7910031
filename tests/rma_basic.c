/* One-sided communication: Put/Get with fence on Win_create and Win_allocate
 * windows (ring, sizes 0 .. 1 MiB, a strided derived type), Accumulate SUM to
 * rank 0, Fetch_and_op and Compare_and_swap counters under lock/unlock,
 * lock_all + flush, Get_accumulate, Win_allocate_shared + Win_shared_query
 * loads/stores, PSCW ring, request-based Rput/Rget, predefined attributes,
 * MPI_ERR_RANK / MPI_ERR_WIN under MPI_ERRORS_RETURN. */
#include "common.h"

static int rank, size;

/* Win_allocate sizes are rounded up to whole pages: with MPICH 4.0.2 (the
 * reference the test is validated against), Puts into a Win_allocate window
 * of some sizes (8 or 72 bytes per rank at 2 ranks) land in rank 0's memory */
#define WSIZE(b) ((MPI_Aint)(((b) + 4095) / 4096 * 4096))

static unsigned char pat(int src, size_t i, int salt)
{
    return (unsigned char)(src * 31 + i * 7 + salt * 13 + (i >> 8));
}

/* ring Put then Get of n bytes on win (memory mem of cap bytes) */
static void ring_put_get(MPI_Win win, unsigned char *mem, size_t n, int salt)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char *src = malloc(n + 1), *back = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        src[i] = pat(rank, i, salt);
    memset(mem, 0, n);
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(src, (int)n, MPI_BYTE, right, 0, (int)n, MPI_BYTE, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (size_t i = 0; i < n; i++)
        CHECK(mem[i] == pat(left, i, salt), "put size %zu (salt %d) byte %zu: %d, want %d", n, salt, i, mem[i], pat(left, i, salt));
    /* read back what the left neighbour received: our own pattern's successor */
    CHECK_RC(MPI_Get(back, (int)n, MPI_BYTE, right, 0, (int)n, MPI_BYTE, win));
    CHECK_RC(MPI_Win_fence(0, win));
    /* MPICH 4.0.2 (the reference) at 8 ranks on 2 CPUs now and then returns
     * from the fence before a 1 MiB Get has landed; the barrier gives it the
     * progress to finish before anything is checked or overwritten */
    if (tc_mpich_version() > 0)
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    for (size_t i = 0; i < n; i++)
        CHECK(back[i] == pat(rank, i, salt), "get size %zu (salt %d) byte %zu: %d, want %d", n, salt, i, back[i], pat(rank, i, salt));
    free(src);
    free(back);
}

static void test_put_get(void)
{
    static const size_t sizes[] = {0, 1, 7, 64, 4097, 65536, 1 << 20};
    size_t cap = 1 << 20;
    unsigned char *mem = malloc(cap);
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, (MPI_Aint)cap, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        ring_put_get(win, mem, sizes[k], (int)k);
    CHECK_RC(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");
    free(mem);

    unsigned char *amem;
    CHECK_RC(MPI_Win_allocate((MPI_Aint)cap, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &amem, &win));
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        ring_put_get(win, amem, sizes[k], (int)k + 10);
    CHECK_RC(MPI_Win_free(&win));
}

/* a strided vector: every other int of 100 goes into every third int */
static void test_derived(int allocate)
{
    const int n = 100;
    int *mem, right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win win;
    if (allocate) {
        CHECK_RC(MPI_Win_allocate(WSIZE(3 * n * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    } else {
        mem = malloc(3 * n * sizeof(int));
        CHECK_RC(MPI_Win_create(mem, 3 * n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    MPI_Datatype ovec, tvec;
    CHECK_RC(MPI_Type_vector(n, 1, 2, MPI_INT, &ovec));
    CHECK_RC(MPI_Type_vector(n, 1, 3, MPI_INT, &tvec));
    CHECK_RC(MPI_Type_commit(&ovec));
    CHECK_RC(MPI_Type_commit(&tvec));
    int *src = malloc(2 * n * sizeof(int)), *back = malloc(2 * n * sizeof(int));
    for (int i = 0; i < 3 * n; i++)
        mem[i] = -1;
    for (int i = 0; i < 2 * n; i++)
        src[i] = rank * 100000 + i;
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(src, 1, ovec, right, 1, 1, tvec, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int i = 0; i < 3 * n; i++) {
        int want = (i >= 1 && (i - 1) % 3 == 0 && (i - 1) / 3 < n) ? left * 100000 + 2 * ((i - 1) / 3) : -1;
        CHECK(mem[i] == want, "derived put (allocate %d) int %d: %d, want %d", allocate, i, mem[i], want);
    }
    for (int i = 0; i < 2 * n; i++)
        back[i] = -7;
    CHECK_RC(MPI_Get(back, 1, ovec, right, 1, 1, tvec, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int i = 0; i < 2 * n; i++) {
        int want = i % 2 == 0 ? rank * 100000 + i : -7;
        CHECK(back[i] == want, "derived get int %d: %d, want %d", i, back[i], want);
    }
    CHECK_RC(MPI_Type_free(&ovec));
    CHECK_RC(MPI_Type_free(&tvec));
    CHECK_RC(MPI_Win_free(&win));
    if (!allocate)
        free(mem);
    free(src);
    free(back);
}

static void test_accumulate(void)
{
    const int n = 1000;
    long long *mem = calloc(n, sizeof *mem), *src = malloc(n * sizeof *src);
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, n * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int i = 0; i < n; i++)
        src[i] = (long long)(rank + 1) * (i + 1);
    CHECK_RC(MPI_Win_fence(0, win));
    for (int rep = 0; rep < 3; rep++)
        CHECK_RC(MPI_Accumulate(src, n, MPI_LONG_LONG, 0, 0, n, MPI_LONG_LONG, MPI_SUM, win));
    CHECK_RC(MPI_Win_fence(0, win));
    if (rank == 0) {
        long long s = (long long)size * (size + 1) / 2;
        for (int i = 0; i < n; i++)
            CHECK(mem[i] == 3 * s * (i + 1), "accumulate elem %d: %lld, want %lld", i, mem[i], 3 * s * (i + 1));
    }
    /* MPI_MAX from everyone into every rank, through a lock epoch */
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int t = 0; t < size; t++) {
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        CHECK_RC(MPI_Accumulate(src, n, MPI_LONG_LONG, t, 0, n, MPI_LONG_LONG, MPI_MAX, win));
        CHECK_RC(MPI_Win_unlock(t, win));
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < n; i++) {
        long long want = (long long)size * (i + 1);
        if (rank == 0 && 3 * (long long)size * (size + 1) / 2 * (i + 1) > want)
            want = 3 * (long long)size * (size + 1) / 2 * (i + 1);
        CHECK(mem[i] == want, "max accumulate elem %d: %lld, want %lld", i, mem[i], want);
    }
    CHECK_RC(MPI_Win_unlock(rank, win));
    CHECK_RC(MPI_Win_free(&win));
    free(mem);
    free(src);
}

static void test_atomics(void)
{
    const int iters = 200;
    long *mem;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(WSIZE(2 * sizeof(long)), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    mem[0] = mem[1] = 0;
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    long one = 1, old, sum_old = 0;
    for (int i = 0; i < iters; i++) {
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_RC(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        CHECK(old >= 0 && old < (long)iters * size, "fetch_and_op old value %ld", old);
        sum_old += old;
    }
    /* compare-and-swap counter: retry until our increment lands */
    for (int i = 0; i < iters; i++) {
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        long cur = 0, res;
        for (;;) {
            long next = cur + 1;
            CHECK_RC(MPI_Compare_and_swap(&next, &cur, &res, MPI_LONG, 0, 1, win));
            CHECK_RC(MPI_Win_flush(0, win));   /* res is only valid after a flush */
            if (res == cur)
                break;
            cur = res;
        }
        CHECK_RC(MPI_Win_unlock(0, win));
    }
    long total = 0;
    CHECK_RC(MPI_Allreduce(&sum_old, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        long n = (long)iters * size;
        CHECK(mem[0] == n, "fetch_and_op counter %ld, want %ld", mem[0], n);
        CHECK(mem[1] == n, "compare_and_swap counter %ld, want %ld", mem[1], n);
        CHECK(total == n * (n - 1) / 2, "fetched values sum %ld, want %ld", total, n * (n - 1) / 2);
        CHECK_RC(MPI_Win_unlock(0, win));
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    /* lock_all + flush: everyone writes its slot of rank 0's... every rank's array */
    int *arr;
    MPI_Win w2;
    CHECK_RC(MPI_Win_allocate(WSIZE(size * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &arr, &w2));
    for (int i = 0; i < size; i++)
        arr[i] = -1;
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_lock_all(0, w2));
    int *vals = malloc(size * sizeof(int)), *got = malloc(size * sizeof(int));
    for (int t = 0; t < size; t++) {
        vals[t] = rank * 10 + t;
        CHECK_RC(MPI_Put(&vals[t], 1, MPI_INT, t, rank, 1, MPI_INT, w2));
        CHECK_RC(MPI_Win_flush(t, w2));
        got[t] = -5;
        CHECK_RC(MPI_Get(&got[t], 1, MPI_INT, t, rank, 1, MPI_INT, w2));
        CHECK_RC(MPI_Win_flush_local(t, w2));
        CHECK(got[t] == vals[t], "get after flush: %d, want %d", got[t], vals[t]);
    }
    for (int t = 0; t < size; t++) {
        long r = 0, add = 2;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_RC(MPI_Get_accumulate(&add, 1, MPI_LONG, &r, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        CHECK(r >= (long)iters * size, "get_accumulate old value %ld", r);
    }
    free(vals);
    free(got);
    CHECK_RC(MPI_Win_flush_all(w2));
    CHECK_RC(MPI_Win_unlock_all(w2));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w2));
    for (int i = 0; i < size; i++)
        CHECK(arr[i] == i * 10 + rank, "lock_all put from %d: %d, want %d", i, arr[i], i * 10 + rank);
    CHECK_RC(MPI_Win_unlock(rank, w2));
    if (rank == 0)
        CHECK(mem[0] == (long)iters * size + 2L * size * size, "get_accumulate counter %ld", mem[0]);
    CHECK_RC(MPI_Win_free(&w2));
    CHECK_RC(MPI_Win_free(&win));
}

static void test_shared(void)
{
    MPI_Comm node;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    int *mine;
    MPI_Win win;
    MPI_Aint mysize = (nr % 2) ? 0 : 16 * sizeof(int);
    CHECK_RC(MPI_Win_allocate_shared(mysize, sizeof(int), MPI_INFO_NULL, node, &mine, &win));
    CHECK_RC(MPI_Win_lock_all(0, win));
    for (int i = 0; i < (int)(mysize / sizeof(int)); i++)
        mine[i] = nr * 1000 + i;
    CHECK_RC(MPI_Win_sync(win));
    CHECK_RC(MPI_Barrier(node));
    CHECK_RC(MPI_Win_sync(win));
    for (int r = 0; r < ns; r++) {
        MPI_Aint sz;
        int du;
        int *p;
        CHECK_RC(MPI_Win_shared_query(win, r, &sz, &du, &p));
        CHECK(du == sizeof(int), "shared_query disp_unit %d", du);
        CHECK(sz == ((r % 2) ? 0 : 16 * (MPI_Aint)sizeof(int)), "shared_query size %ld of rank %d", (long)sz, r);
        for (int i = 0; i < (int)(sz / sizeof(int)); i++)
            CHECK(p[i] == r * 1000 + i, "shared load rank %d int %d: %d", r, i, p[i]);
    }
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Win_free(&win));
    CHECK_RC(MPI_Comm_free(&node));
}

static void test_pscw(void)
{
    if (size < 2)
        return;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *mem = calloc(4, sizeof(int));
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group world, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &lg);
    MPI_Group_incl(world, 1, &right, &rg);
    for (int rep = 0; rep < 3; rep++) {
        CHECK_RC(MPI_Win_post(lg, 0, win));
        CHECK_RC(MPI_Win_start(rg, 0, win));
        int v[2] = {rank * 10 + rep, rep};
        CHECK_RC(MPI_Put(v, 2, MPI_INT, right, 1, 2, MPI_INT, win));
        CHECK_RC(MPI_Win_complete(win));
        if (rep == 2) {
            int flag = 0;
            while (!flag)
                CHECK_RC(MPI_Win_test(win, &flag));
        } else {
            CHECK_RC(MPI_Win_wait(win));
        }
        CHECK(mem[1] == left * 10 + rep && mem[2] == rep, "pscw rep %d: %d %d", rep, mem[1], mem[2]);
    }
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Group_free(&world);
    CHECK_RC(MPI_Win_free(&win));
    free(mem);
}

static void test_requests(void)
{
    double *mem;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(WSIZE(8 * sizeof(double)), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < 8; i++)
        mem[i] = 0;
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    int right = (rank + 1) % size;
    CHECK_RC(MPI_Win_lock_all(0, win));
    double v[8], back[8];
    for (int i = 0; i < 8; i++)
        v[i] = rank + i * 0.5;
    MPI_Request rq[2];
    CHECK_RC(MPI_Rput(v, 8, MPI_DOUBLE, right, 0, 8, MPI_DOUBLE, win, &rq[0]));
    CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Rget(back, 8, MPI_DOUBLE, right, 0, 8, MPI_DOUBLE, win, &rq[1]));
    CHECK_RC(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(back[i] == v[i], "rget %d: %g want %g", i, back[i], v[i]);
#if MPI_VERSION >= 4
    /* large-count forms */
    double w4[4] = {rank + 0.25, rank + 1.25, rank + 2.25, rank + 3.25}, b4[4] = {0};
    CHECK_RC(MPI_Put_c(w4, 4, MPI_DOUBLE, right, 4, 4, MPI_DOUBLE, win));
    CHECK_RC(MPI_Win_flush(right, win));
    CHECK_RC(MPI_Get_c(b4, 4, MPI_DOUBLE, right, 4, 4, MPI_DOUBLE, win));
    CHECK_RC(MPI_Win_flush(right, win));
    for (int i = 0; i < 4; i++)
        CHECK(b4[i] == w4[i], "Get_c %d: %g want %g", i, b4[i], w4[i]);
#endif
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Win_free(&win));
}

static void test_dynamic(void)
{
    const int n = 300;
    int *buf = malloc(n * sizeof(int)), right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win win;
    CHECK_RC(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(MPI_Win_attach(win, buf, n * sizeof(int)));
    for (int i = 0; i < n; i++)
        buf[i] = -1;
    MPI_Aint mine, *addr = malloc(size * sizeof(MPI_Aint));
    CHECK_RC(MPI_Get_address(buf, &mine));
    CHECK_RC(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));
    int *src = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        src[i] = rank * 7 + i;
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(src, n - 1, MPI_INT, right, MPI_Aint_add(addr[right], sizeof(int)), n - 1, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int i = 0; i < n; i++)
        CHECK(buf[i] == (i == 0 ? -1 : left * 7 + i - 1), "dynamic put int %d: %d", i, buf[i]);
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Win_detach(win, buf));
    CHECK_RC(MPI_Win_free(&win));
    free(buf);
    free(src);
    free(addr);
}

static void test_attrs_errors(void)
{
    _Alignas(16) char buf[64];
    MPI_Win win;
    CHECK_RC(MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    void *base;
    MPI_Aint *sz;
    int *du, *flavor, *model, flag;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == buf, "MPI_WIN_BASE");
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && *sz == sizeof buf, "MPI_WIN_SIZE %ld", (long)*sz);
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    CHECK(flag && *du == 4, "MPI_WIN_DISP_UNIT");
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR");
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE), "MPI_WIN_MODEL");
    MPI_Group g, wg;
    int cmp;
    CHECK_RC(MPI_Win_get_group(win, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "Win_get_group");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_RC(MPI_Win_set_name(win, "ferry-window"));
    CHECK_RC(MPI_Win_get_name(win, name, &len));
    CHECK(len == 12 && !strcmp(name, "ferry-window"), "Win_get_name '%s'", name);

    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Errhandler eh;
    CHECK_RC(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "Win_get_errhandler");
    CHECK_RC(MPI_Errhandler_free(&eh));
    int cls, rc;
    CHECK_RC(MPI_Win_fence(0, win));
    rc = MPI_Put(buf, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "Put to rank %d: class %d", size, cls);
    rc = MPI_Get(buf, 1, MPI_INT, -5, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "Get from rank -5: class %d", cls);
    CHECK_RC(MPI_Put(buf, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    /* Compare_and_swap takes integer, logical, byte and multi-language
     * types only (MPI-3.1 11.3.4): floating point is MPI_ERR_TYPE */
    {
        MPI_Datatype bad[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
        for (int i = 0; i < 3; i++) {
            long double o = 1, c = 0, r = 0;
            rc = MPI_Compare_and_swap(&o, &c, &r, bad[i], rank, 0, win);
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TYPE, "Compare_and_swap on floating-point type %d: class %d", i, cls);
        }
        memset(buf, 0, sizeof buf);
        CHECK_RC(MPI_Win_fence(0, win));
        /* each on its own word of this rank's window: 0 -> 1 */
        _Bool bo = 1, bc = 0, br = 1;
        unsigned char yo = 0x5a, yc = 0, yr = 1;
        MPI_Aint ao = 77, ac = 0, ar = 1;
        CHECK_RC(MPI_Compare_and_swap(&bo, &bc, &br, MPI_C_BOOL, rank, 0, win));
        CHECK_RC(MPI_Compare_and_swap(&yo, &yc, &yr, MPI_BYTE, rank, 1, win));
        CHECK_RC(MPI_Compare_and_swap(&ao, &ac, &ar, MPI_AINT, rank, 2, win));
        CHECK_RC(MPI_Win_fence(0, win));
        MPI_Aint got;
        memcpy(&got, buf + 8, sizeof got);
        CHECK(br == 0 && yr == 0 && ar == 0, "Compare_and_swap results %d %d %ld", (int)br, (int)yr, (long)ar);
        CHECK(buf[0] == 1 && (unsigned char)buf[4] == 0x5a && got == 77,
              "Compare_and_swap on C_BOOL/BYTE/AINT left %d %d %ld", buf[0], buf[4], (long)got);
    }
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    /* outside any epoch: MPI_ERR_RMA_SYNC */
    rc = MPI_Get(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "Get outside an epoch: class %d", cls);
    rc = MPI_Win_unlock(0, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "Unlock without a lock: class %d", cls);
    CHECK_RC(MPI_Win_free(&win));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Win_fence(0, MPI_WIN_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_WIN, "fence on MPI_WIN_NULL: class %d", cls);
    rc = MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_WIN, "put on MPI_WIN_NULL: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, ferry = 0;
    if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS)
        ferry = strncmp(lib, "Ferry", 5) == 0;
    /* nocma: on Ferry, everything again with Win_create and dynamic window
     * memory out of Cross Memory Attach's reach (FERRY_WIN_CMA=0, as where the
     * kernel denies it): the active-message fallback carries those operations */
    if (argc > 1 && !strcmp(argv[1], "nocma") && ferry)
        setenv("FERRY_WIN_CMA", "0", 1);
    tc_init(&argc, &argv, &rank, &size);
    test_put_get();
    test_derived(0);
    test_derived(1);
    test_accumulate();
    test_atomics();
    test_shared();
    test_pscw();
    test_requests();
    test_dynamic();
    test_attrs_errors();
    return tc_finish("rma_basic");
}
