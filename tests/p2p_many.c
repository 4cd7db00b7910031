/* p2p_many: thousands of outstanding requests.
 *
 * Every rank exchanges M messages with every rank (itself included), all of
 * them in flight at once: M = 4000 per pair with 1-2 ranks, 2000 with 3-4,
 * 600 with 8 (still ~10000 outstanding requests per rank).  Messages are
 * 8-byte (seq, sender) records, every 97th one 20 KB; tags cycle over 3
 * values, so the i-th receive from a peer with tag t must get that peer's
 * i-th message with tag t.
 *   phase 1  all Irecvs posted, Barrier, all Isends, one MPI_Waitall
 *   phase 2  all Isends first (flood of unexpected messages), Barrier, then
 *            Irecvs; completed by MPI_Waitany (each index exactly once)
 *   phase 3  completed by MPI_Waitsome / MPI_Testsome / MPI_Testany /
 *            MPI_Testall polling loops (alternating per peer)
 */
#include "common.h"

#define BIG 20000
#define BIGEVERY 97

static int rank, size, M;

struct rec {
    int seq, src;
};

static size_t len_of(int seq)
{
    return seq % BIGEVERY == 5 ? BIG : sizeof(struct rec);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    M = size <= 2 ? 4000 : size <= 4 ? 2000 : 600;
    const int nreq = M * size; /* per direction */
    MPI_Request *rrq = tc_malloc(sizeof(MPI_Request) * (size_t)nreq);
    MPI_Request *srq = tc_malloc(sizeof(MPI_Request) * (size_t)nreq);
    MPI_Status *st = tc_malloc(sizeof(MPI_Status) * (size_t)nreq);
    int *idx = tc_malloc(sizeof(int) * (size_t)nreq);
    char *done = tc_malloc((size_t)nreq);
    /* receive slots: BIG bytes for every 97th, record otherwise */
    size_t slot_total = 0;
    size_t *off = tc_malloc(sizeof(size_t) * (size_t)M);
    for (int i = 0; i < M; i++) {
        off[i] = slot_total;
        slot_total += len_of(i);
    }
    unsigned char *rbuf = tc_malloc(slot_total * (size_t)size);
    unsigned char *sbuf = tc_malloc(slot_total * (size_t)size);

    for (int phase = 1; phase <= 3; phase++) {
        memset(rbuf, 0, slot_total * (size_t)size);
        memset(done, 0, (size_t)nreq);
        /* send contents: record, BIG messages patterned after the record */
        for (int peer = 0; peer < size; peer++)
            for (int i = 0; i < M; i++) {
                unsigned char *p = sbuf + slot_total * (size_t)peer + off[i];
                struct rec r = {i + phase * 1000000, rank};
                if (len_of(i) == BIG)
                    tc_fill(p + sizeof r, BIG - sizeof r, rank, (uint64_t)(phase * 1000000 + i));
                memcpy(p, &r, sizeof r);
            }
        for (int pass = 0; pass < 2; pass++) {
            int posting_recvs = (phase == 2) ? pass == 1 : pass == 0;
            for (int i = 0; i < M; i++) /* interleave peers */
                for (int peer = 0; peer < size; peer++) {
                    int k = i * size + peer;
                    if (posting_recvs)
                        CHECK_RC(MPI_Irecv(rbuf + slot_total * (size_t)peer + off[i],
                                           (int)len_of(i), MPI_BYTE, peer, i % 3,
                                           MPI_COMM_WORLD, &rrq[k]));
                    else
                        CHECK_RC(MPI_Isend(sbuf + slot_total * (size_t)peer + off[i],
                                           (int)len_of(i), MPI_BYTE, peer, i % 3,
                                           MPI_COMM_WORLD, &srq[k]));
                }
            if (pass == 0)
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        }
        if (phase == 1) {
            CHECK_RC(MPI_Waitall(nreq, rrq, st));
            for (int k = 0; k < nreq; k++) {
                CHECK(rrq[k] == MPI_REQUEST_NULL, "Waitall left request %d", k);
                CHECK(st[k].MPI_SOURCE == k % size && st[k].MPI_TAG == (k / size) % 3,
                      "Waitall status %d: source %d tag %d", k, st[k].MPI_SOURCE, st[k].MPI_TAG);
            }
        } else if (phase == 2) {
            for (int n = 0; n < nreq; n++) {
                int j = -1;
                MPI_Status s;
                CHECK_RC(MPI_Waitany(nreq, rrq, &j, &s));
                CHECK(j >= 0 && j < nreq && !done[j], "Waitany returned index %d (twice?)", j);
                CHECK(rrq[j] == MPI_REQUEST_NULL, "Waitany did not free request %d", j);
                CHECK(s.MPI_SOURCE == j % size, "Waitany status source %d for request %d",
                      s.MPI_SOURCE, j);
                done[j] = 1;
            }
            int j = 0;
            CHECK_RC(MPI_Waitany(nreq, rrq, &j, MPI_STATUS_IGNORE));
            CHECK(j == MPI_UNDEFINED, "Waitany over all-null requests gave %d", j);
        } else {
            /* per-peer slices of the request array, completed in
             * different ways; requests are interleaved k = i*size + peer,
             * so gather each peer's requests first */
            MPI_Request *mine = tc_malloc(sizeof(MPI_Request) * (size_t)M);
            for (int peer = 0; peer < size; peer++) {
                for (int i = 0; i < M; i++)
                    mine[i] = rrq[i * size + peer];
                int left = M, way = (peer + rank) % 4;
                while (left > 0) {
                    int outc = 0, flag = 0, j = -1;
                    switch (way) {
                    case 0:
                        CHECK_RC(MPI_Waitsome(M, mine, &outc, idx, st));
                        CHECK(outc >= 1 && outc <= left, "Waitsome outcount %d (%d left)",
                              outc, left);
                        break;
                    case 1:
                        CHECK_RC(MPI_Testsome(M, mine, &outc, idx, st));
                        CHECK(outc >= 0 && outc <= left, "Testsome outcount %d (%d left)",
                              outc, left);
                        break;
                    case 2:
                        CHECK_RC(MPI_Testany(M, mine, &j, &flag, st));
                        if (flag) {
                            CHECK(j >= 0 && j < M, "Testany index %d", j);
                            idx[0] = j;
                            outc = 1;
                        }
                        break;
                    case 3:
                        CHECK_RC(MPI_Testall(M, mine, &flag, st));
                        if (flag) {
                            outc = left;
                            for (int i = 0, n = 0; i < M; i++)
                                if (!done[i * size + peer])
                                    idx[n++] = i;
                        }
                        break;
                    }
                    for (int n = 0; n < outc; n++) {
                        int i = idx[n];
                        CHECK(i >= 0 && i < M && !done[i * size + peer],
                              "way %d: completion index %d reported twice or out of range", way,
                              i);
                        CHECK(mine[i] == MPI_REQUEST_NULL, "way %d: request %d not freed", way,
                              i);
                        CHECK(st[n].MPI_SOURCE == peer && st[n].MPI_TAG == i % 3,
                              "way %d: status source %d tag %d for request %d from %d", way,
                              st[n].MPI_SOURCE, st[n].MPI_TAG, i, peer);
                        done[i * size + peer] = 1;
                    }
                    left -= outc;
                }
                int outc = 0;
                CHECK_RC(MPI_Waitsome(M, mine, &outc, idx, MPI_STATUSES_IGNORE));
                CHECK(outc == MPI_UNDEFINED, "Waitsome over all-null requests gave %d", outc);
                CHECK_RC(MPI_Testsome(M, mine, &outc, idx, MPI_STATUSES_IGNORE));
                CHECK(outc == MPI_UNDEFINED, "Testsome over all-null requests gave %d", outc);
                int flag = 0, j = 0;
                CHECK_RC(MPI_Testany(M, mine, &j, &flag, MPI_STATUS_IGNORE));
                CHECK(flag == 1 && j == MPI_UNDEFINED, "Testany over null requests: flag %d idx %d",
                      flag, j);
                for (int i = 0; i < M; i++)
                    rrq[i * size + peer] = MPI_REQUEST_NULL;
            }
            free(mine);
        }
        /* contents */
        for (int peer = 0; peer < size; peer++)
            for (int i = 0; i < M; i++) {
                const unsigned char *p = rbuf + slot_total * (size_t)peer + off[i];
                struct rec r;
                memcpy(&r, p, sizeof r);
                CHECK(r.src == peer && r.seq == i + phase * 1000000,
                      "phase %d: receive #%d from %d holds seq %d from %d", phase, i, peer,
                      r.seq - phase * 1000000, r.src);
                if (len_of(i) == BIG)
                    CHECK_PAT(p + sizeof r, BIG - sizeof r, peer,
                              (uint64_t)(phase * 1000000 + i),
                              "phase %d big message #%d from %d (after header)", phase, i, peer);
            }
        CHECK_RC(MPI_Waitall(nreq, srq, MPI_STATUSES_IGNORE));
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(rrq);
    free(srq);
    free(st);
    free(idx);
    free(done);
    free(off);
    free(rbuf);
    free(sbuf);
    return tc_finish("p2p_many");
}
