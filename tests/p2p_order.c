/* p2p_order: matching order, wildcards and the non-overtaking rule.
 *
 * A  every rank > 0 fires a stream of Isends (mixed 0 B / small / 70 KB,
 *    i.e. eager and rendezvous interleaved) with one tag at rank 0, which
 *    receives them all with MPI_ANY_SOURCE: per sender the sequence numbers
 *    must arrive in order, status source/tag/count must be right (1 rank:
 *    to itself).
 * B  tag selectivity: a partner sends tags 1,2,3,1,2,3,...; the receiver takes
 *    all tag 3 first, then 2, then 1 -- each tag's messages in send order.
 * C  MPI_ANY_TAG receives see the partner's messages in send order.
 * D  posted-receive matching: the receiver posts a random mix of Irecvs with
 *    specific/any source and specific/any tag, then the partner sends a random
 *    tag sequence; the expected assignment (each message matches the earliest
 *    posted pending receive that accepts it) is computed and every request
 *    must get exactly its message.
 * E  the same with all messages sent before the receives are posted
 *    (unexpected queue: each receive takes the earliest matching message).
 * Pairs are (2k, 2k+1); an odd rank out pairs with itself.
 */
#include "common.h"

static int rank, size;

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

static size_t msg_len(int seq)
{
    switch (seq % 10) {
    case 3: return 70000;
    case 7: return 0;
    default: return 4 + (size_t)(seq % 5) * 100;
    }
}

/* ---------------------------------------------------------------- A */
static void any_source_stream(void)
{
    const int K = size <= 2 ? 300 : size <= 4 ? 120 : 40;
    const int TAG = 17;
    size_t total = 0;
    for (int s = 0; s < K; s++)
        total += msg_len(s);
    if (rank != 0 || size == 1) {
        unsigned char *sb = tc_malloc(total);
        MPI_Request *rq = tc_malloc(sizeof(MPI_Request) * (size_t)K);
        size_t off = 0;
        for (int s = 0; s < K; s++) {
            tc_fill(sb + off, msg_len(s), rank, (uint64_t)s);
            CHECK_RC(MPI_Isend(sb + off, (int)msg_len(s), MPI_BYTE, 0, TAG, MPI_COMM_WORLD, &rq[s]));
            off += msg_len(s);
        }
        if (size == 1)
            goto receive;
        CHECK_RC(MPI_Waitall(K, rq, MPI_STATUSES_IGNORE));
        free(sb);
        free(rq);
        return;
    receive:;
        /* size 1: fall through to the receiving side, complete sends after */
        int next = 0;
        unsigned char *rb = tc_malloc(70000);
        for (int i = 0; i < K; i++) {
            MPI_Status st;
            CHECK_RC(MPI_Recv(rb, 70000, MPI_BYTE, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == TAG, "self stream: source %d tag %d",
                  st.MPI_SOURCE, st.MPI_TAG);
            CHECK(tc_count(&st, MPI_BYTE) == (int)msg_len(next),
                  "self stream message %d: count %d, expected %zu (overtaken?)", next,
                  tc_count(&st, MPI_BYTE), msg_len(next));
            CHECK_PAT(rb, msg_len(next), 0, (uint64_t)next, "self stream message %d", next);
            next++;
        }
        CHECK_RC(MPI_Waitall(K, rq, MPI_STATUSES_IGNORE));
        free(rb);
        free(sb);
        free(rq);
        return;
    }
    /* rank 0 of >1 */
    int *next = tc_malloc(sizeof(int) * (size_t)size);
    memset(next, 0, sizeof(int) * (size_t)size);
    unsigned char *rb = tc_malloc(70000);
    for (int i = 0; i < K * (size - 1); i++) {
        MPI_Status st;
        CHECK_RC(MPI_Recv(rb, 70000, MPI_BYTE, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &st));
        int src = st.MPI_SOURCE;
        CHECK(src > 0 && src < size && st.MPI_TAG == TAG, "stream: source %d tag %d", src,
              st.MPI_TAG);
        int s = next[src]++;
        CHECK(s < K, "more than %d messages from rank %d", K, src);
        CHECK(tc_count(&st, MPI_BYTE) == (int)msg_len(s),
              "message %d from rank %d: count %d, expected %zu (overtaken?)", s, src,
              tc_count(&st, MPI_BYTE), msg_len(s));
        CHECK_PAT(rb, msg_len(s), src, (uint64_t)s, "message %d from rank %d", s, src);
    }
    free(rb);
    free(next);
}

static int partner(void)
{
    int p = rank ^ 1;
    return p < size ? p : rank;
}

/* ---------------------------------------------------------------- B, C */
static void tag_selective_and_any_tag(void)
{
    const int M = 36, p = partner();
    unsigned char *sb = tc_malloc((size_t)M * 70000), *rb = tc_malloc(70000);
    MPI_Request *rq = tc_malloc(sizeof(MPI_Request) * (size_t)M);
    for (int pass = 0; pass < 2; pass++) {
        int tags[36];
        for (int i = 0; i < M; i++)
            tags[i] = pass == 0 ? 1 + i % 3 : 1 + (int)((i * 7 + i / 5) % 4);
        for (int i = 0; i < M; i++) {
            size_t len = msg_len(i);
            tc_fill(sb + (size_t)i * 70000, len, rank, 1000 * (uint64_t)pass + (uint64_t)i);
            CHECK_RC(MPI_Isend(sb + (size_t)i * 70000, (int)len, MPI_BYTE, p, 100 + tags[i],
                               MPI_COMM_WORLD, &rq[i]));
        }
        if (pass == 0) { /* B: tag 3, then 2, then 1 */
            for (int t = 3; t >= 1; t--)
                for (int i = 0; i < M; i++) {
                    if (tags[i] != t)
                        continue;
                    MPI_Status st;
                    CHECK_RC(MPI_Recv(rb, 70000, MPI_BYTE, p, 100 + t, MPI_COMM_WORLD, &st));
                    CHECK(tc_count(&st, MPI_BYTE) == (int)msg_len(i),
                          "tag %d: got count %d, expected message %d (%zu bytes)", t,
                          tc_count(&st, MPI_BYTE), i, msg_len(i));
                    CHECK_PAT(rb, msg_len(i), p, (uint64_t)i, "tag-selective message %d", i);
                }
        } else { /* C: ANY_TAG in send order */
            for (int i = 0; i < M; i++) {
                MPI_Status st;
                CHECK_RC(MPI_Recv(rb, 70000, MPI_BYTE, p, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                CHECK(st.MPI_TAG == 100 + tags[i] && st.MPI_SOURCE == p,
                      "ANY_TAG receive #%d: tag %d source %d, expected tag %d", i, st.MPI_TAG,
                      st.MPI_SOURCE, 100 + tags[i]);
                CHECK(tc_count(&st, MPI_BYTE) == (int)msg_len(i), "ANY_TAG #%d count %d", i,
                      tc_count(&st, MPI_BYTE));
                CHECK_PAT(rb, msg_len(i), p, 1000 + (uint64_t)i, "ANY_TAG message %d", i);
            }
        }
        CHECK_RC(MPI_Waitall(M, rq, MPI_STATUSES_IGNORE));
    }
    free(sb);
    free(rb);
    free(rq);
}

/* ---------------------------------------------------------------- D, E */
#define NM 24
struct rpat {
    int any_src, tag; /* tag: 1..3 or MPI_ANY_TAG */
};

static void gen_msgs(int sender, int round, int *mtag)
{
    rng_state = 0x1234567ULL + (uint64_t)sender * 7919 + (uint64_t)round * 104729;
    for (int i = 0; i < NM; i++)
        mtag[i] = 1 + (int)(rnd() % 3);
}

static int accepts(const struct rpat *r, int tag)
{
    return r->tag == MPI_ANY_TAG || r->tag == tag;
}

/* greedy: message i (in order) goes to the earliest posted pending receive
 * accepting it; all receives are posted before the messages arrive (D) or
 * after (E) -- both give the same assignment with a single sender. */
static int simulate(const struct rpat *r, const int *mtag, int *match)
{
    int used[NM] = {0};
    for (int j = 0; j < NM; j++)
        match[j] = -1;
    for (int i = 0; i < NM; i++) {
        int j;
        for (j = 0; j < NM; j++)
            if (!used[j] && accepts(&r[j], mtag[i]))
                break;
        if (j == NM)
            return 0;
        used[j] = 1;
        match[j] = i;
    }
    return 1;
}

static void posted_matching(int unexpected)
{
    const int p = partner();
    const int rounds = size > 4 ? 4 : 10;
    unsigned char *sb = tc_malloc((size_t)NM * 70000), *rb = tc_malloc((size_t)NM * 70000);
    MPI_Request srq[NM], rrq[NM];
    MPI_Status st[NM];
    for (int round = 0; round < rounds; round++) {
        int mine[NM], theirs[NM], match[NM];
        struct rpat r[NM];
        gen_msgs(rank, round, mine);
        gen_msgs(p, round, theirs);
        rng_state = 0xabcdefULL + (uint64_t)rank * 31 + (uint64_t)round * 1009;
        do {
            for (int j = 0; j < NM; j++) {
                r[j].any_src = (int)(rnd() % 2);
                uint32_t t = rnd() % 5;
                r[j].tag = t >= 3 ? MPI_ANY_TAG : 1 + (int)t;
            }
        } while (!simulate(r, theirs, match));
        uint64_t salt0 = (uint64_t)(unexpected * 100000 + round * 100);
        if (!unexpected) {
            for (int j = 0; j < NM; j++)
                CHECK_RC(MPI_Irecv(rb + (size_t)j * 70000, 70000, MPI_BYTE,
                                   r[j].any_src ? MPI_ANY_SOURCE : p,
                                   r[j].tag == MPI_ANY_TAG ? MPI_ANY_TAG : 200 + r[j].tag,
                                   MPI_COMM_WORLD, &rrq[j]));
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        }
        for (int i = 0; i < NM; i++) {
            tc_fill(sb + (size_t)i * 70000, msg_len(i), rank, salt0 + (uint64_t)i);
            CHECK_RC(MPI_Isend(sb + (size_t)i * 70000, (int)msg_len(i), MPI_BYTE, p,
                               200 + mine[i], MPI_COMM_WORLD, &srq[i]));
        }
        if (unexpected) {
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            for (int j = 0; j < NM; j++)
                CHECK_RC(MPI_Irecv(rb + (size_t)j * 70000, 70000, MPI_BYTE,
                                   r[j].any_src ? MPI_ANY_SOURCE : p,
                                   r[j].tag == MPI_ANY_TAG ? MPI_ANY_TAG : 200 + r[j].tag,
                                   MPI_COMM_WORLD, &rrq[j]));
        }
        CHECK_RC(MPI_Waitall(NM, rrq, st));
        for (int j = 0; j < NM; j++) {
            int i = match[j];
            CHECK(st[j].MPI_SOURCE == p && st[j].MPI_TAG == 200 + theirs[i],
                  "%s round %d: receive #%d (src %s, tag %d) got tag %d from %d; expected "
                  "message #%d with tag %d",
                  unexpected ? "unexpected" : "posted", round, j, r[j].any_src ? "ANY" : "p",
                  r[j].tag, st[j].MPI_TAG, st[j].MPI_SOURCE, i, 200 + theirs[i]);
            CHECK(tc_count(&st[j], MPI_BYTE) == (int)msg_len(i),
                  "%s round %d: receive #%d got %d bytes, expected message #%d (%zu bytes)",
                  unexpected ? "unexpected" : "posted", round, j, tc_count(&st[j], MPI_BYTE), i,
                  msg_len(i));
            CHECK_PAT(rb + (size_t)j * 70000, msg_len(i), p, salt0 + (uint64_t)i,
                      "round %d receive #%d = message #%d", round, j, i);
        }
        CHECK_RC(MPI_Waitall(NM, srq, MPI_STATUSES_IGNORE));
        /* nobody may start the next round's traffic while a wildcard
         * receive of this round could still be pending elsewhere */
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    any_source_stream();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    tag_selective_and_any_tag();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    posted_matching(0);
    posted_matching(1);
    return tc_finish("p2p_order");
}
