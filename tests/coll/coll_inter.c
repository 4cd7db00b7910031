/* Collectives on an intercommunicator: even world ranks form group A, odd
 * ones group B (different sizes for odd rank counts). Rooted collectives are
 * run with the root in each group (MPI_ROOT at the root, MPI_PROC_NULL at its
 * group's other ranks, the root's rank in the other group); allgather(v),
 * alltoall(v,w), allreduce, reduce_scatter(_block) and barrier exchange data
 * between the groups. Blocking and nonblocking forms. */
#include "collt.h"

static int wrank, wsize, color, lrank, lsize, rsize;
static MPI_Comm inter;

static int world_of(int grp, int r)
{
    return 2 * r + grp;
}

static int val(int w, int i, int salt)
{
    return w * 1000 + i * 3 + salt;
}

static void done(MPI_Request *req, int nb)
{
    if (nb)
        ct_wait(req);
}

/* root: local rank `rr` of group `rg` */
static void rooted(int rg, int rr, int k, int nb, int salt)
{
    int in_root_group = color == rg, am_root = in_root_group && lrank == rr;
    int root = in_root_group ? (am_root ? MPI_ROOT : MPI_PROC_NULL) : rr;
    int other = 1 - rg;   /* the group that is not the root's */
    MPI_Request req = MPI_REQUEST_NULL;
    int *buf = tc_malloc((size_t)((k + 2) * (rsize + lsize) + 4) * sizeof(int));
    int *cnt = tc_malloc((size_t)rsize * sizeof(int)), *dsp = tc_malloc((size_t)rsize * sizeof(int));
    int n_other = in_root_group ? rsize : lsize;

    /* Bcast. Peer deviation: MPICH 4.0's Ibcast on an intercommunicator
     * delivers nothing when the root is not rank 0 of its group. */
    int skip_bcast = nb && rr != 0 && tc_mpich_version();
    for (int i = 0; i < k && !skip_bcast; i++)
        buf[i] = am_root ? val(world_of(rg, rr), i, salt) : -1;
    if (skip_bcast)
        ;
    else if (nb)
        CHECK_RC(MPI_Ibcast(buf, k, MPI_INT, root, inter, &req));
    else
        CHECK_RC(MPI_Bcast(buf, k, MPI_INT, root, inter));
    done(&req, nb);
    if (!in_root_group && !skip_bcast)
        for (int i = 0; i < k; i++)
            CHECK(buf[i] == val(world_of(rg, rr), i, salt), "inter Bcast element %d: %d (root group %d rank %d k %d nb %d)", i, buf[i], rg, rr, k, nb);

    /* Gather / Gatherv: the root collects the other group's blocks */
    for (int v = 0; v < 2; v++) {
        int mine[64];
        int myk = v && k ? k - (lrank % 2) : k;
        for (int i = 0; i < myk; i++)
            mine[i] = val(wrank, i, salt + v);
        int off = 0;
        for (int q = 0; q < n_other; q++) {
            cnt[q % rsize] = v && k ? k - (q % 2) : k;
            dsp[q % rsize] = off;
            off += cnt[q % rsize] + v;
        }
        for (int i = 0; i < off; i++)
            buf[i] = -1;
        if (v && nb)
            CHECK_RC(MPI_Igatherv(mine, myk, MPI_INT, buf, cnt, dsp, MPI_INT, root, inter, &req));
        else if (v)
            CHECK_RC(MPI_Gatherv(mine, myk, MPI_INT, buf, cnt, dsp, MPI_INT, root, inter));
        else if (nb)
            CHECK_RC(MPI_Igather(mine, k, MPI_INT, buf, k, MPI_INT, root, inter, &req));
        else
            CHECK_RC(MPI_Gather(mine, k, MPI_INT, buf, k, MPI_INT, root, inter));
        done(&req, nb);
        if (am_root)
            for (int q = 0; q < rsize; q++)
                for (int i = 0; i < cnt[q]; i++)
                    CHECK(buf[dsp[q] + i] == val(world_of(other, q), i, salt + v), "inter Gather%s from %d[%d]",
                          v ? "v" : "", q, i);
    }

    /* Scatter / Scatterv */
    for (int v = 0; v < 2; v++) {
        int mine[64];
        int off = 0;
        for (int q = 0; q < n_other; q++) {
            cnt[q % rsize] = v && k ? k - (q % 2) : k;
            dsp[q % rsize] = off;
            off += cnt[q % rsize] + v;
        }
        if (am_root)
            for (int q = 0; q < rsize; q++)
                for (int i = 0; i < cnt[q]; i++)
                    buf[dsp[q] + i] = val(world_of(other, q), i, salt + 7 + v);
        int myk = v && k ? k - (lrank % 2) : k;
        for (int i = 0; i < myk; i++)
            mine[i] = -1;
        if (v && nb)
            CHECK_RC(MPI_Iscatterv(buf, cnt, dsp, MPI_INT, mine, myk, MPI_INT, root, inter, &req));
        else if (v)
            CHECK_RC(MPI_Scatterv(buf, cnt, dsp, MPI_INT, mine, myk, MPI_INT, root, inter));
        else if (nb)
            CHECK_RC(MPI_Iscatter(buf, k, MPI_INT, mine, k, MPI_INT, root, inter, &req));
        else
            CHECK_RC(MPI_Scatter(buf, k, MPI_INT, mine, k, MPI_INT, root, inter));
        done(&req, nb);
        if (!in_root_group)
            for (int i = 0; i < myk; i++)
                CHECK(mine[i] == val(wrank, i, salt + 7 + v), "inter Scatter%s element %d: %d", v ? "v" : "", i,
                      mine[i]);
    }

    /* Reduce: the root gets the sum over the other group */
    int mine[64], res[64];
    for (int i = 0; i < k; i++)
        mine[i] = val(wrank, i, salt), res[i] = -1;
    if (nb)
        CHECK_RC(MPI_Ireduce(mine, res, k, MPI_INT, MPI_SUM, root, inter, &req));
    else
        CHECK_RC(MPI_Reduce(mine, res, k, MPI_INT, MPI_SUM, root, inter));
    done(&req, nb);
    if (am_root)
        for (int i = 0; i < k; i++) {
            int want = 0;
            for (int q = 0; q < rsize; q++)
                want += val(world_of(other, q), i, salt);
            CHECK(res[i] == want, "inter Reduce element %d: %d, expected %d", i, res[i], want);
        }
    free(buf), free(cnt), free(dsp);
}

static void symmetric(int k, int nb, int salt)
{
    int other = 1 - color, n = rsize;
    MPI_Request req = MPI_REQUEST_NULL;
    int L = lsize * rsize * 2;   /* reduce_scatter vector length, the same in both groups */
    size_t cap = (size_t)((k + 2) * (n + 1) * 2 + L);
    int *sb = tc_malloc(cap * sizeof(int)), *rb = tc_malloc(cap * sizeof(int));
    int *sc = tc_malloc((size_t)n * sizeof(int)), *sd = tc_malloc((size_t)n * sizeof(int));
    int *rc = tc_malloc((size_t)n * sizeof(int)), *rd = tc_malloc((size_t)n * sizeof(int));
    MPI_Datatype *st = tc_malloc((size_t)n * sizeof(MPI_Datatype)), *rt = tc_malloc((size_t)n * sizeof(MPI_Datatype));

    /* Barrier */
    if (nb) {
        CHECK_RC(MPI_Ibarrier(inter, &req));
        ct_wait(&req);
    } else {
        CHECK_RC(MPI_Barrier(inter));
    }

    /* Allgather: the other group's blocks */
    for (int i = 0; i < k; i++)
        sb[i] = val(wrank, i, salt);
    if (nb)
        CHECK_RC(MPI_Iallgather(sb, k, MPI_INT, rb, k, MPI_INT, inter, &req));
    else
        CHECK_RC(MPI_Allgather(sb, k, MPI_INT, rb, k, MPI_INT, inter));
    done(&req, nb);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < k; i++)
            CHECK(rb[q * k + i] == val(world_of(other, q), i, salt), "inter Allgather from %d[%d]", q, i);

    /* Allgatherv: remote rank q contributes k - q%2 */
    int myk = k ? k - lrank % 2 : 0, off = 0;
    for (int q = 0; q < n; q++)
        rc[q] = k ? k - q % 2 : 0, rd[q] = off, off += rc[q] + 1;
    if (nb)
        CHECK_RC(MPI_Iallgatherv(sb, myk, MPI_INT, rb, rc, rd, MPI_INT, inter, &req));
    else
        CHECK_RC(MPI_Allgatherv(sb, myk, MPI_INT, rb, rc, rd, MPI_INT, inter));
    done(&req, nb);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < rc[q]; i++)
            CHECK(rb[rd[q] + i] == val(world_of(other, q), i, salt), "inter Allgatherv from %d[%d]", q, i);

    /* Alltoall: block q goes to remote rank q */
    for (int q = 0; q < n; q++)
        for (int i = 0; i < k; i++)
            sb[q * k + i] = val(wrank, i, salt + 10 * q);
    if (nb)
        CHECK_RC(MPI_Ialltoall(sb, k, MPI_INT, rb, k, MPI_INT, inter, &req));
    else
        CHECK_RC(MPI_Alltoall(sb, k, MPI_INT, rb, k, MPI_INT, inter));
    done(&req, nb);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < k; i++)
            CHECK(rb[q * k + i] == val(world_of(other, q), i, salt + 10 * lrank), "inter Alltoall from %d[%d]", q, i);

    /* Alltoallv / Alltoallw: k elements each, blocks in reverse order */
    for (int q = 0; q < n; q++) {
        sc[q] = rc[q] = k;
        sd[q] = (n - 1 - q) * k, rd[q] = q * k;
        st[q] = rt[q] = MPI_INT;
    }
    for (int w = 0; w < 2; w++) {
        for (int q = 0; q < n; q++)
            for (int i = 0; i < k; i++)
                sb[sd[q] + i] = val(wrank, i, salt + 10 * q + w);
        int *sdb = tc_malloc((size_t)n * sizeof(int)), *rdb = tc_malloc((size_t)n * sizeof(int));
        for (int q = 0; q < n; q++)
            sdb[q] = sd[q] * (int)sizeof(int), rdb[q] = rd[q] * (int)sizeof(int);
        if (w && nb)
            CHECK_RC(MPI_Ialltoallw(sb, sc, sdb, st, rb, rc, rdb, rt, inter, &req));
        else if (w)
            CHECK_RC(MPI_Alltoallw(sb, sc, sdb, st, rb, rc, rdb, rt, inter));
        else if (nb)
            CHECK_RC(MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, inter, &req));
        else
            CHECK_RC(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, inter));
        done(&req, nb);
        for (int q = 0; q < n; q++)
            for (int i = 0; i < k; i++)
                CHECK(rb[rd[q] + i] == val(world_of(other, q), i, salt + 10 * lrank + w), "inter Alltoall%s from %d[%d]",
                      w ? "w" : "v", q, i);
        free(sdb), free(rdb);
    }

    /* Allreduce: each group gets the other group's sum */
    for (int i = 0; i < k; i++)
        sb[i] = val(wrank, i, salt);
    if (nb)
        CHECK_RC(MPI_Iallreduce(sb, rb, k, MPI_INT, MPI_SUM, inter, &req));
    else
        CHECK_RC(MPI_Allreduce(sb, rb, k, MPI_INT, MPI_SUM, inter));
    done(&req, nb);
    for (int i = 0; i < k; i++) {
        int want = 0;
        for (int q = 0; q < n; q++)
            want += val(world_of(other, q), i, salt);
        CHECK(rb[i] == want, "inter Allreduce element %d: %d, expected %d", i, rb[i], want);
    }

    /* Reduce_scatter_block / Reduce_scatter: the vector has L elements in
     * both groups; each group scatters the other group's sum over itself */
    for (int blk = 0; blk < 2; blk++) {
        int *cnts = tc_malloc((size_t)lsize * sizeof(int)), first = 0;
        for (int q = 0; q < lsize; q++) {
            cnts[q] = blk ? L / lsize : (q == 0 ? L - (lsize - 1) * (L / lsize) : L / lsize);
            if (q < lrank)
                first += cnts[q];
        }
        for (int i = 0; i < L; i++)
            sb[i] = val(wrank, i, salt + blk);
        if (blk && nb)
            CHECK_RC(MPI_Ireduce_scatter_block(sb, rb, L / lsize, MPI_INT, MPI_SUM, inter, &req));
        else if (blk)
            CHECK_RC(MPI_Reduce_scatter_block(sb, rb, L / lsize, MPI_INT, MPI_SUM, inter));
        else if (nb)
            CHECK_RC(MPI_Ireduce_scatter(sb, rb, cnts, MPI_INT, MPI_SUM, inter, &req));
        else
            CHECK_RC(MPI_Reduce_scatter(sb, rb, cnts, MPI_INT, MPI_SUM, inter));
        done(&req, nb);
        for (int i = 0; i < cnts[lrank]; i++) {
            int want = 0;
            for (int q = 0; q < n; q++)
                want += val(world_of(other, q), first + i, salt + blk);
            CHECK(rb[i] == want, "inter Reduce_scatter%s element %d: %d, expected %d", blk ? "_block" : "", i, rb[i],
                  want);
        }
        free(cnts);
    }
    free(sb), free(rb), free(sc), free(sd), free(rc), free(rd), free(st), free(rt);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &wrank, &wsize);
    if (wsize < 2)
        return tc_finish("coll_inter");
    color = wrank % 2;
    MPI_Comm local;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local));
    CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 77, &inter));
    CHECK_RC(MPI_Comm_rank(inter, &lrank));
    CHECK_RC(MPI_Comm_size(inter, &lsize));
    CHECK_RC(MPI_Comm_remote_size(inter, &rsize));
    int salt = 0;
    static const int ks[] = {0, 1, 7, 40};
    for (int ki = 0; ki < 4; ki++)
        for (int nb = 0; nb < 2; nb++) {
            int k = ks[ki];
            for (int rg = 0; rg < 2; rg++) {
                int gsize = color == rg ? lsize : rsize;
                rooted(rg, 0, k, nb, ++salt);
                rooted(rg, gsize - 1, k, nb, ++salt);
            }
            symmetric(k, nb, ++salt);
        }
    CHECK_RC(MPI_Comm_free(&inter));
    CHECK_RC(MPI_Comm_free(&local));
    return tc_finish("coll_inter");
}
