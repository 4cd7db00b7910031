/* Collectives on intercommunicators. Rooted ones follow MPI_ROOT /
 * MPI_PROC_NULL: in the root's group the root passes MPI_ROOT and the others
 * MPI_PROC_NULL (they take no part); the other group passes the root's rank
 * in the remote group. The rest compose a stage inside each group (the local
 * group, SPACE_LOCAL) with an exchange between the groups (SPACE_MAIN, where
 * ranks name the remote group). */
#include "coll/coll_impl.h"
#include "core/comm.h"

static int local_rank(struct ferry_sched *s)
{
    return s->comm->rank;
}

static void use_local(struct ferry_sched *s)
{
    if (!s->sub[SPACE_LOCAL])
        sched_sub(s, SPACE_LOCAL, 0, NULL);
    sched_use(s, SPACE_LOCAL);
}

static int barrier(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    use_local(s);
    build_dissemination(s);
    sched_use(s, SPACE_MAIN);
    if (local_rank(s) == 0) {
        sched_send(s, NULL, 0, sched_byte(), 0);
        sched_recv(s, NULL, 0, sched_byte(), 0);
    }
    sched_fence(s);
    use_local(s);
    build_bcast_binomial(s, NULL, 0, sched_byte(), 0);
    return MPI_SUCCESS;
}

static int bcast(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT) {
        sched_send(s, a->rbuf, a->rcount, a->rdt, 0);
        return MPI_SUCCESS;
    }
    if (local_rank(s) == 0) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, a->root);
        sched_fence(s);
    }
    use_local(s);
    build_bcast_binomial(s, a->rbuf, a->rcount, a->rdt, 0);
    return MPI_SUCCESS;
}

static int gather(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT) {
        sched_send(s, a->sbuf, a->scount, a->sdt, a->root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < s->size; i++)
        sched_recv(s, blk(a->rbuf, (size_t)i, a->rcount, a->rdt), a->rcount, a->rdt, i);
    return MPI_SUCCESS;
}

static int gatherv(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT) {
        sched_send(s, a->sbuf, a->scount, a->sdt, a->root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < s->size; i++)
        sched_recv(s, blk(a->rbuf, (size_t)a->rdispls[i], 1, a->rdt), (size_t)a->rcounts[i], a->rdt, i);
    return MPI_SUCCESS;
}

static int scatter(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, a->root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < s->size; i++)
        sched_send(s, blk(a->sbuf, (size_t)i, a->scount, a->sdt), a->scount, a->sdt, i);
    return MPI_SUCCESS;
}

static int scatterv(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, a->root);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < s->size; i++)
        sched_send(s, blk(a->sbuf, (size_t)a->sdispls[i], 1, a->sdt), (size_t)a->scounts[i], a->sdt, i);
    return MPI_SUCCESS;
}

/* Allgather(v): every rank sends its block to every remote rank. */
static int allgather(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    for (int i = 0; i < s->size; i++)
        sched_recv(s, blk(a->rbuf, (size_t)i, a->rcount, a->rdt), a->rcount, a->rdt, i);
    for (int i = 0; i < s->size; i++)
        sched_send(s, a->sbuf, a->scount, a->sdt, i);
    return MPI_SUCCESS;
}

static int allgatherv(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    for (int i = 0; i < s->size; i++)
        sched_recv(s, blk(a->rbuf, (size_t)a->rdispls[i], 1, a->rdt), (size_t)a->rcounts[i], a->rdt, i);
    for (int i = 0; i < s->size; i++)
        sched_send(s, a->sbuf, a->scount, a->sdt, i);
    return MPI_SUCCESS;
}

static int alltoall(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    for (int i = 0; i < s->size; i++)
        sched_recv(s, blk(a->rbuf, (size_t)i, a->rcount, a->rdt), a->rcount, a->rdt, i);
    for (int i = 0; i < s->size; i++)
        sched_send(s, blk(a->sbuf, (size_t)i, a->scount, a->sdt), a->scount, a->sdt, i);
    return MPI_SUCCESS;
}

static int alltoallv(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    for (int i = 0; i < s->size; i++)
        sched_recv(s, blk(a->rbuf, (size_t)a->rdispls[i], 1, a->rdt), (size_t)a->rcounts[i], a->rdt, i);
    for (int i = 0; i < s->size; i++)
        sched_send(s, blk(a->sbuf, (size_t)a->sdispls[i], 1, a->sdt), (size_t)a->scounts[i], a->sdt, i);
    return MPI_SUCCESS;
}

static int alltoallw(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    for (int i = 0; i < s->size; i++)
        sched_recv(s, (char *)a->rbuf + a->rdispls[i], (size_t)a->rcounts[i], a->rdts[i], i);
    for (int i = 0; i < s->size; i++)
        sched_send(s, (const char *)a->sbuf + a->sdispls[i], (size_t)a->scounts[i], a->sdts[i], i);
    return MPI_SUCCESS;
}

/* Reduce: the non-root group reduces to its rank 0 (in rank order), which
 * sends the result to the root. */
static int reduce(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT) {
        sched_recv(s, a->rbuf, a->rcount, a->rdt, 0);
        return MPI_SUCCESS;
    }
    struct red R;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    use_local(s);
    void *acc = build_reduce_binomial(s, &R, a->sbuf, NULL, 0);
    sched_use(s, SPACE_MAIN);
    if (acc) {
        sched_fence(s);
        sched_send(s, acc, R.n, R.unit, a->root);
    }
    return MPI_SUCCESS;
}

/* Each group reduces its vector to its rank 0; the two rank 0s swap results. */
static void *reduce_and_swap(struct ferry_sched *s, struct red *R, const void *src, void *dst)
{
    use_local(s);
    void *acc = build_reduce_binomial(s, R, src, NULL, 0);
    sched_use(s, SPACE_MAIN);
    if (!acc)
        return NULL;
    sched_fence(s);
    sched_send(s, acc, R->n, R->unit, 0);
    sched_recv(s, dst, R->n, R->unit, 0);
    return dst;
}

/* Allreduce: reduce in each group, swap between the groups' rank 0s,
 * broadcast in each group. */
static int allreduce(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    struct red R;
    red_init(s, a->op, a->rdt, a->rcount, &R);
    void *res = R.dt == R.unit ? a->rbuf : sched_tmp(s, R.unit, R.n);
    reduce_and_swap(s, &R, a->sbuf, res);
    sched_fence(s);
    use_local(s);
    build_bcast_binomial(s, res, R.n, R.unit, 0);
    sched_fence(s);
    red_out(s, &R, res, a->rbuf);
    return MPI_SUCCESS;
}

/* Reduce_scatter: reduce in each group, swap, scatter the other group's
 * result in each group by the local counts. */
static int reduce_scatter_common(struct ferry_sched *s, const struct ferry_coll_args *a, const int *counts)
{
    struct red R;
    int n = s->comm->size, r = local_rank(s);
    size_t tot = 0;
    for (int i = 0; i < n; i++)
        tot += (size_t)counts[i];
    red_init(s, a->op, a->rdt, tot, &R);
    void *res = r == 0 ? sched_tmp(s, R.unit, R.n) : NULL;
    reduce_and_swap(s, &R, a->sbuf, res);
    sched_fence(s);
    use_local(s);
    if (r != 0) {
        sched_recv(s, a->rbuf, (size_t)counts[r], R.dt, 0);
        return MPI_SUCCESS;
    }
    size_t off = (size_t)counts[0] * R.per;
    for (int i = 1; i < n; i++) {
        size_t k = (size_t)counts[i] * R.per;
        sched_send(s, sched_at(res, off, R.unit->extent), k, R.unit, i);
        off += k;
    }
    sched_copy(s, res, (size_t)counts[0] * R.per, R.unit, a->rbuf, (size_t)counts[0], R.dt);
    return MPI_SUCCESS;
}

static int reduce_scatter(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    return reduce_scatter_common(s, a, a->rcounts);
}

static int reduce_scatter_block(struct ferry_sched *s, const struct ferry_coll_args *a)
{
    int n = s->comm->size;
    int *counts = sched_alloc(s, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        counts[i] = (int)a->rcount;
    return reduce_scatter_common(s, a, counts);
}

const coll_build_fn coll_inter[FERRY_COLL_KINDS] = {
    [FERRY_COLL_BARRIER] = barrier,
    [FERRY_COLL_BCAST] = bcast,
    [FERRY_COLL_GATHER] = gather,
    [FERRY_COLL_GATHERV] = gatherv,
    [FERRY_COLL_SCATTER] = scatter,
    [FERRY_COLL_SCATTERV] = scatterv,
    [FERRY_COLL_ALLGATHER] = allgather,
    [FERRY_COLL_ALLGATHERV] = allgatherv,
    [FERRY_COLL_ALLTOALL] = alltoall,
    [FERRY_COLL_ALLTOALLV] = alltoallv,
    [FERRY_COLL_ALLTOALLW] = alltoallw,
    [FERRY_COLL_REDUCE] = reduce,
    [FERRY_COLL_ALLREDUCE] = allreduce,
    [FERRY_COLL_REDUCE_SCATTER] = reduce_scatter,
    [FERRY_COLL_REDUCE_SCATTER_BLOCK] = reduce_scatter_block,
};
