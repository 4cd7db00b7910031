/* shm_paths: every shared-memory path delivers every byte, in order.
 *
 * usage: shm_paths [--desc] [--quick] [--timing] [--coll N] [--sizes a,b,c] [--expect-map KIND]
 *
 * Every pair of ranks exchanges messages in both directions at once, of
 * sizes straddling every protocol boundary of the shared-memory transport:
 *
 *   0 1 63 64 65                         empty, tiny, one cache line
 *   959 960 961 4095 4096 4097           payload limit / ring of the tiny-ring
 *                                        run (FERRY_SHM_RING 4096: packets of
 *                                        1024 B = 960 B payload)
 *   16383 16384 16385                    eager limit (16 KiB)
 *   32704 32705                          packet payload limit (32 KiB - 64)
 *   65536 131071 131072 131073           64 KiB: smallest automatic ring;
 *                                        128 KiB: ring of FERRY_SHM_RING 131072
 *   524287 524288 524289                 single-copy chunk (FERRY_CMA_CHUNK
 *                                        512 KiB); ring with 8 local ranks
 *   1048575 1048576 1048577              single copy below 1 MiB, pipelined
 *                                        copy from there (FERRY_CMA_MAX); ring
 *                                        with 2-4 local ranks (1 MiB)
 *   4 MiB + 3                            many chunks / many DATA packets
 *
 * Phases (each checks every byte of every message against a pattern that
 * depends on the byte position, the sender, the receiver, the sequence
 * number, the size and the phase, so a shifted, stale, duplicated, truncated
 * or misrouted payload is caught at the exact byte; 64 guard bytes after each
 * receive buffer must stay untouched, and source, tag and count of every
 * status are checked):
 *
 *   same   per size: K messages of that size to every peer, same tag, in
 *          flight at once (K = 3, 2 from 512 KiB, 1 for 4 MiB+3 with many
 *          ranks). Three posting modes rotate: receives pre-posted (then a
 *          barrier, then the sends), sends first (then a barrier: the
 *          messages arrive unexpected), both at once with the second message
 *          of each group sent with MPI_Issend (synchronous: rendezvous even
 *          for 0 bytes). Message k must land in receive k (non-overtaking).
 *   mixed  every size once to each peer in a per-pair shuffled order, all
 *          with one tag and all in flight at once: eager messages behind
 *          rendezvous ones and vice versa must still match in send order.
 *          Receive buffers are 64 bytes larger than the message (guarded).
 *   flood  400 messages per peer of 0 B to 32 KiB (mostly 16 KiB eager ones,
 *          rendezvous ones between them), one tag, all sent in one burst:
 *          more than any ring holds, so the sender must queue, and nothing
 *          may overtake a queued message. Then one way with the receiver
 *          waiting (draining while the sender sends), and one way with a
 *          slow receiver (byte-by-byte unpacking into MPI_BYTE resized to
 *          extent 2): ring space frees up while older messages still sit in
 *          the sender's queue.
 *   vector a contiguous send into a strided receive datatype and back (the
 *          copy path with unpacking at packet offsets, even with single copy
 *          available).
 *   coll   N (default 20) MPI_Allreduce + MPI_Bcast on MPI_COMM_WORLD with
 *          checked results (the shared-memory collectives when forced).
 *
 * With many ranks a phase whose buffers would be large runs as a round-robin
 * tournament (every pair meets once, both directions at once) instead of
 * all pairs at once.
 *
 *   --desc    sizes in descending order (so a single-copy failure injected
 *             with FERRY_SHM_FAULT_PULL hits the middle of a multi-chunk pull)
 *   --quick   (used with many ranks on few cores) in the same phase one
 *             posting mode per size and one message less per group; the
 *             mixed, flood and vector phases, where they run as a tournament,
 *             only its first two rounds; the both-ways flood in one mode
 *   --sizes   replace the size list
 *   --expect-map KIND   (Ferry-specific) every rank checks /proc/self/maps for
 *             the shared memory it is supposed to use: memfd (anonymous
 *             "memfd:ferry-shm"), posix ("/dev/shm/ferry-<job>-node",
 *             unlinked), coll (a collective segment "/dev/shm/ferry-<job>-c<ctx>-<n>",
 *             checked after the coll phase). Repeatable.
 */
#define _GNU_SOURCE
#include "common.h"

#define GUARD 64
#define GUARD_BYTE 0xA5
#define TAG_SAME 11
#define TAG_MIXED 12
#define TAG_VEC 13
#define ALLPAIRS_BUDGET (40u << 20) /* bytes of buffers per rank for all-pairs-at-once */

static int rank, size;
static size_t sizes[64];
static int nsizes;

static const size_t default_sizes[] = {0,      1,      63,     64,     65,     959,    960,
                                       961,    4095,   4096,   4097,   16383,  16384,  16385,
                                       32704,  32705,  65536,  131071, 131072, 131073, 524287,
                                       524288, 524289, 1048575, 1048576, 1048577, (4u << 20) + 3};

static uint64_t salt_of(int phase, int sender, int receiver, int seq, size_t n)
{
    return tc_mix(((uint64_t)phase << 56) ^ ((uint64_t)receiver << 48) ^ ((uint64_t)seq << 32) ^
                  (uint64_t)n ^ ((uint64_t)sender << 40));
}

/* ---- peer schedule -------------------------------------------------------- */

/* Round r of a round-robin tournament (circle method); -1: bye. */
static int tournament_partner(int r)
{
    int n2 = size + (size & 1), m = n2 - 1, p;
    if (rank == m)
        p = r;
    else if (rank == r)
        p = m;
    else
        p = ((2 * r - rank) % m + m) % m;
    return p >= size ? -1 : p;
}

/* Rounds to run: all of them, or with --quick the first two of the mixed
 * and flood phases (every rank still sends to and receives from two peers). */
static int quick_rounds;
static int tournament_rounds(void)
{
    int all = size + (size & 1) - 1;
    return quick_rounds && quick_rounds < all ? quick_rounds : all;
}

/* ---- one exchange step ---------------------------------------------------- */

struct msg {
    int peer, seq, sync;
    size_t n;
    unsigned char *buf;
    MPI_Request req;
};

typedef size_t (*seq_fn)(int sender, int receiver, int k, int *count);

/* Exchange with each peer in peers[] (both directions at once): the messages
 * `sender` -> `receiver` are seq(sender, receiver, k) for k < count. */
static int lazy_fill; /* fill each send buffer just before its send (time for the receiver to drain) */

static void exchange(int phase, int tag, int mode, const int *peers, int npeers, seq_fn seq, const char *what)
{
    int cnt = 0, tot_s = 0, tot_r = 0;
    for (int i = 0; i < npeers; i++) {
        seq(rank, peers[i], 0, &cnt);
        tot_s += cnt;
        seq(peers[i], rank, 0, &cnt);
        tot_r += cnt;
    }
    struct msg *s = calloc((size_t)tot_s + 1, sizeof *s), *r = calloc((size_t)tot_r + 1, sizeof *r);
    CHECK(s && r, "calloc");
    int ns = 0, nr = 0;
    for (int i = 0; i < npeers; i++) {
        int p = peers[i];
        seq(rank, p, 0, &cnt);
        for (int k = 0; k < cnt; k++) {
            struct msg *m = &s[ns++];
            m->peer = p, m->seq = k, m->n = seq(rank, p, k, &cnt);
            m->sync = mode == 2 && k == 1;
            m->buf = tc_malloc(m->n);
            if (!lazy_fill)
                tc_fill(m->buf, m->n, rank, salt_of(phase, rank, p, k, m->n));
        }
        seq(p, rank, 0, &cnt);
        for (int k = 0; k < cnt; k++) {
            struct msg *m = &r[nr++];
            m->peer = p, m->seq = k, m->n = seq(p, rank, k, &cnt);
            m->buf = tc_malloc(m->n + GUARD);
            memset(m->buf, GUARD_BYTE, m->n + GUARD);
        }
    }
    /* receives of one peer are posted in sequence order: with one tag,
     * message k of a sender must land in receive k */
#define POST_RECVS()                                                                               \
    for (int i = 0; i < nr; i++)                                                                   \
        CHECK_RC(MPI_Irecv(r[i].buf, (int)(r[i].n + GUARD), MPI_BYTE, r[i].peer, tag, MPI_COMM_WORLD, \
                           &r[i].req))
#define POST_SENDS()                                                                               \
    for (int i = 0; i < ns; i++) {                                                                 \
        if (lazy_fill)                                                                             \
            tc_fill(s[i].buf, s[i].n, rank, salt_of(phase, rank, s[i].peer, s[i].seq, s[i].n));    \
        CHECK_RC((s[i].sync ? MPI_Issend : MPI_Isend)(s[i].buf, (int)s[i].n, MPI_BYTE, s[i].peer, tag,  \
                                                      MPI_COMM_WORLD, &s[i].req));                 \
    }
    if (mode == 0) {        /* pre-posted */
        POST_RECVS();
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        POST_SENDS();
    } else if (mode == 1) { /* unexpected */
        POST_SENDS();
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        POST_RECVS();
    } else {                /* racing, some synchronous */
        if (rank & 1) {
            POST_SENDS();
            POST_RECVS();
        } else {
            POST_RECVS();
            POST_SENDS();
        }
    }
    MPI_Request *reqs = tc_malloc(((size_t)ns + (size_t)nr) * sizeof *reqs);
    MPI_Status *st = tc_malloc(((size_t)ns + (size_t)nr) * sizeof *st);
    for (int i = 0; i < nr; i++)
        reqs[i] = r[i].req;
    for (int i = 0; i < ns; i++)
        reqs[nr + i] = s[i].req;
    int rc = MPI_Waitall(nr + ns, reqs, st);
    for (int i = 0; rc == MPI_ERR_IN_STATUS && i < nr + ns; i++)
        CHECK(st[i].MPI_ERROR == MPI_SUCCESS || st[i].MPI_ERROR == MPI_ERR_PENDING,
              "%s: %s %d (peer %d, seq %d, %zu bytes) failed: %s", what, i < nr ? "receive" : "send",
              i < nr ? i : i - nr, i < nr ? r[i].peer : s[i - nr].peer, i < nr ? r[i].seq : s[i - nr].seq,
              i < nr ? r[i].n : s[i - nr].n, tc_errstr(st[i].MPI_ERROR));
    CHECK_RC(rc);
    for (int i = 0; i < nr; i++) {
        struct msg *m = &r[i];
        int c = tc_count(&st[i], MPI_BYTE);
        CHECK(st[i].MPI_SOURCE == m->peer && st[i].MPI_TAG == tag,
              "%s: receive seq %d from %d: status source %d tag %d", what, m->seq, m->peer, st[i].MPI_SOURCE,
              st[i].MPI_TAG);
        CHECK(c == (int)m->n,
              "%s: message seq %d from rank %d has %d bytes, expected %zu (overtaken or truncated)", what, m->seq,
              m->peer, c, m->n);
        CHECK_PAT(m->buf, m->n, m->peer, salt_of(phase, m->peer, rank, m->seq, m->n),
                  "%s: message seq %d (%zu bytes) from rank %d", what, m->seq, m->n, m->peer);
        CHECK_BYTES(m->buf + m->n, GUARD, GUARD_BYTE, "%s: guard after message seq %d (%zu bytes) from rank %d",
                    what, m->seq, m->n, m->peer);
    }
    for (int i = 0; i < ns; i++) {
        /* the send buffer is the user's: nobody may have written into it */
        CHECK_PAT(s[i].buf, s[i].n, rank, salt_of(phase, rank, s[i].peer, s[i].seq, s[i].n),
                  "%s: send buffer seq %d to rank %d after the send", what, s[i].seq, s[i].peer);
        free(s[i].buf);
    }
    for (int i = 0; i < nr; i++)
        free(r[i].buf);
    free(s);
    free(r);
    free(reqs);
    free(st);
}

/* Run `seq` either with all peers at once or, when that needs more than the
 * budget, in tournament rounds (one partner per round). */
static void exchange_all(int phase, int tag, int mode, seq_fn seq, size_t bytes_per_peer, const char *what)
{
    int peers[1024], np = 0;
    if ((size_t)(size - 1) * bytes_per_peer <= ALLPAIRS_BUDGET) {
        for (int p = 0; p < size; p++)
            if (p != rank)
                peers[np++] = p;
        exchange(phase, tag, mode, peers, np, seq, what);
        return;
    }
    for (int rd = 0; rd < tournament_rounds(); rd++) {
        int p = tournament_partner(rd);
        exchange(phase, tag, mode, &p, p >= 0, seq, what);
    }
}

/* ---- phases ----------------------------------------------------------- */

static size_t cur_size;
static int cur_k;

static size_t seq_same(int sender, int receiver, int k, int *count)
{
    *count = cur_k;
    return cur_size;
}

/* every size once, in an order shuffled per (sender, receiver) */
static size_t seq_mixed(int sender, int receiver, int k, int *count)
{
    static int order[64];
    static int for_s = -1, for_r = -1;
    *count = nsizes;
    if (sender != for_s || receiver != for_r) {
        for (int i = 0; i < nsizes; i++)
            order[i] = i;
        uint64_t x = (uint64_t)sender * 1000003u + (uint64_t)receiver + 17;
        for (int i = nsizes - 1; i > 0; i--) {
            x = tc_mix(x + 0x9E3779B97F4A7C15ULL);
            int j = (int)(x % (uint64_t)(i + 1));
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for_s = sender, for_r = receiver;
    }
    return sizes[order[k]];
}

/* a burst of small messages larger than any ring: once the ring is full the
 * sender queues, and eager messages must not overtake queued ones */
#define FLOOD 400
static size_t seq_flood(int sender, int receiver, int k, int *count)
{
    /* ~3.3 MiB of eager messages: more than the largest ring (1 MiB) */
    static const size_t cycle[] = {16384, 16385, 16384, 0,   16384, 1,     16383,
                                   16384, 65,    16384, 959, 961,   16384, 32705};
    const int nc = (int)(sizeof cycle / sizeof cycle[0]);
    *count = FLOOD;
    return cycle[(k + sender + 3 * receiver) % nc];
}

/* one way: only flood_sender sends (to its tournament partner) */
static int flood_sender;
static size_t seq_flood_oneway(int sender, int receiver, int k, int *count)
{
    size_t n = seq_flood(sender, receiver, k, count);
    if (sender != flood_sender)
        *count = 0;
    return n;
}

static void phase_flood(int quick)
{
    char what[96];
    /* both directions at once, everybody with everybody */
    for (int mode = quick ? 2 : 1; mode <= 2; mode++) {
        snprintf(what, sizeof what, "flood of %d messages, one tag, mode %d", FLOOD, mode);
        exchange_all(20 + mode, TAG_MIXED, mode, seq_flood, 2 * FLOOD * (16384 + 2 * GUARD), what);
    }
    /* one way, the receiver already waiting and draining the ring while the
     * sender fills each buffer just before its send: ring space frees up
     * between sends while older messages still sit in the sender's queue */
    lazy_fill = 1;
    for (int rd = 0; rd < tournament_rounds(); rd++) {
        int p = tournament_partner(rd);
        for (int dir = 0; dir < 2; dir++) {
            flood_sender = p < 0 ? -1 : (dir == 0) == (rank < p) ? rank : p;
            snprintf(what, sizeof what, "one-way flood of %d messages, rank %d -> %d", FLOOD, flood_sender,
                     flood_sender == rank ? p : rank);
            exchange(23, TAG_MIXED, 0, &p, p >= 0, seq_flood_oneway, what);
        }
    }
    lazy_fill = 0;
}

/* One way again, with a slow receiver: it unpacks every message byte by byte
 * (MPI_BYTE resized to extent 2), so the ring fills, the sender queues, and
 * space frees up while the sender is still sending: a message sent then must
 * still not overtake the queued ones. */
static void phase_flood_slow(int quick)
{
    MPI_Datatype spread;
    CHECK_RC(MPI_Type_create_resized(MPI_BYTE, 0, 2, &spread));
    CHECK_RC(MPI_Type_commit(&spread));
    const size_t cap = 32768;
    int cnt;
    for (int rd = 0; rd < tournament_rounds(); rd++) {
        int p = tournament_partner(rd);
        for (int dir = 0; dir < 2; dir++) {
            int snd = p >= 0 && (dir == 0) == (rank < p), rcv = p >= 0 && !snd;
            unsigned char **b = calloc(FLOOD, sizeof *b);
            MPI_Request *q = calloc(FLOOD, sizeof *q);
            MPI_Status *st = calloc(FLOOD, sizeof *st);
            CHECK(b && q && st, "calloc");
            for (int k = 0; rcv && k < FLOOD; k++) {
                b[k] = tc_malloc(2 * cap);
                memset(b[k], GUARD_BYTE, 2 * cap);
                CHECK_RC(MPI_Irecv(b[k], (int)cap, spread, p, TAG_MIXED, MPI_COMM_WORLD, &q[k]));
            }
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            for (int k = 0; snd && k < FLOOD; k++) {
                size_t n = seq_flood(rank, p, k, &cnt);
                b[k] = tc_malloc(n);
                tc_fill(b[k], n, rank, salt_of(24, rank, p, k, n));
                CHECK_RC(MPI_Isend(b[k], (int)n, MPI_BYTE, p, TAG_MIXED, MPI_COMM_WORLD, &q[k]));
            }
            if (p >= 0)
                CHECK_RC(MPI_Waitall(FLOOD, q, st));
            for (int k = 0; rcv && k < FLOOD; k++) {
                size_t n = seq_flood(p, rank, k, &cnt);
                int c = tc_count(&st[k], spread);
                CHECK(c == (int)n, "slow-receiver flood: message %d from rank %d has %d bytes, expected %zu "
                      "(overtaken?)", k, p, c, n);
                for (size_t i = 0; i < n; i++)
                    b[k][i] = b[k][2 * i];
                CHECK_PAT(b[k], n, p, salt_of(24, p, rank, k, n), "slow-receiver flood: message %d (%zu bytes) "
                          "from rank %d", k, n, p);
            }
            for (int k = 0; k < FLOOD; k++)
                free(b[k]);
            free(b);
            free(q);
            free(st);
        }
    }
    CHECK_RC(MPI_Type_free(&spread));
}

static void phase_same(int quick)
{
    for (int i = 0; i < nsizes; i++) {
        size_t n = sizes[i];
        cur_size = n;
        cur_k = n >= (4u << 20) && size > 4 ? 1 : n >= 524288 ? 2 : 3;
        if (quick && cur_k > 1)
            cur_k--;
        int m0 = quick ? i % 3 : 0, m1 = quick ? i % 3 : 2;
        for (int mode = m0; mode <= m1; mode++) {
            char what[96];
            snprintf(what, sizeof what, "same-size %zu B x%d, mode %d", n, cur_k, mode);
            exchange_all(1 + mode, TAG_SAME, mode, seq_same, 2 * (size_t)cur_k * (n + GUARD), what);
        }
    }
}

static void phase_mixed(void)
{
    size_t total = 0;
    for (int i = 0; i < nsizes; i++)
        total += 2 * (sizes[i] + GUARD);
    exchange_all(8, TAG_MIXED, 2, seq_mixed, total, "mixed sizes, one tag");
}

/* contiguous bytes <-> MPI_Type_vector(nb, 3, 5, MPI_BYTE) */
static void phase_vector(void)
{
    static const int nbs[] = {1, 21, 320, 5461, 5462, 10901, 10902, 21845, 174763};
    for (size_t t = 0; t < sizeof nbs / sizeof nbs[0]; t++) {
        int nb = nbs[t];
        size_t bytes = 3 * (size_t)nb, ext = 5 * (size_t)nb;
        MPI_Datatype vec;
        CHECK_RC(MPI_Type_vector(nb, 3, 5, MPI_BYTE, &vec));
        CHECK_RC(MPI_Type_commit(&vec));
        for (int rd = 0; rd < tournament_rounds(); rd++) {
            int p = tournament_partner(rd);
            if (p < 0)
                continue;
            for (int dir = 0; dir < 2; dir++) {
                /* dir 0: contiguous send, strided receive; dir 1: the reverse */
                uint64_t salt = salt_of(9 + dir, rank, p, (int)t, bytes), rsalt = salt_of(9 + dir, p, rank, (int)t, bytes);
                unsigned char *c = tc_malloc(bytes), *v = tc_malloc(ext + GUARD), *rc_ = tc_malloc(bytes + GUARD);
                memset(v, GUARD_BYTE, ext + GUARD);
                memset(rc_, GUARD_BYTE, bytes + GUARD);
                tc_fill(c, bytes, rank, salt);
                MPI_Request q[2];
                MPI_Status st[2];
                if (dir == 0) {
                    CHECK_RC(MPI_Irecv(v, 1, vec, p, TAG_VEC, MPI_COMM_WORLD, &q[0]));
                    CHECK_RC(MPI_Isend(c, (int)bytes, MPI_BYTE, p, TAG_VEC, MPI_COMM_WORLD, &q[1]));
                } else {
                    /* spread our pattern into the strided layout and send that */
                    for (size_t b = 0; b < bytes; b++)
                        v[(b / 3) * 5 + b % 3] = c[b];
                    CHECK_RC(MPI_Irecv(rc_, (int)(bytes + GUARD), MPI_BYTE, p, TAG_VEC, MPI_COMM_WORLD, &q[0]));
                    CHECK_RC(MPI_Isend(v, 1, vec, p, TAG_VEC, MPI_COMM_WORLD, &q[1]));
                }
                CHECK_RC(MPI_Waitall(2, q, st));
                CHECK(tc_count(&st[0], MPI_BYTE) == (int)bytes, "vector: %d bytes from rank %d, expected %zu",
                      tc_count(&st[0], MPI_BYTE), p, bytes);
                if (dir == 0) {
                    unsigned char *g = tc_malloc(bytes);
                    for (size_t b = 0; b < bytes; b++) {
                        g[b] = v[(b / 3) * 5 + b % 3];
                        size_t gap = (b / 3) * 5 + 3;
                        if (b % 3 == 2 && b + 1 < bytes)
                            CHECK(v[gap] == GUARD_BYTE && v[gap + 1] == GUARD_BYTE,
                                  "vector receive (%zu bytes) from rank %d wrote into the gap at %zu", bytes, p, gap);
                    }
                    CHECK_PAT(g, bytes, p, rsalt, "contiguous -> vector, %zu bytes from rank %d", bytes, p);
                    CHECK_BYTES(v + ext - 2, GUARD + 2, GUARD_BYTE, "vector receive guard, %zu bytes", bytes);
                    free(g);
                } else {
                    CHECK_PAT(rc_, bytes, p, rsalt, "vector -> contiguous, %zu bytes from rank %d", bytes, p);
                    CHECK_BYTES(rc_ + bytes, GUARD, GUARD_BYTE, "contiguous receive guard, %zu bytes", bytes);
                }
                free(c);
                free(v);
                free(rc_);
            }
        }
        CHECK_RC(MPI_Type_free(&vec));
    }
}

static void phase_coll(int iters)
{
    for (int it = 0; it < iters; it++) {
        long in[4] = {rank + it, 1, (long)rank * rank, -rank}, out[4];
        CHECK_RC(MPI_Allreduce(in, out, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        long n = size, s = n * (n - 1) / 2;
        CHECK(out[0] == s + n * it && out[1] == n && out[2] == (n - 1) * n * (2 * n - 1) / 6 && out[3] == -s,
              "allreduce %d: got %ld %ld %ld %ld", it, out[0], out[1], out[2], out[3]);
        unsigned char b[4096];
        int root = it % size;
        if (rank == root)
            tc_fill(b, sizeof b, root, 500 + (uint64_t)it);
        else
            memset(b, 0, sizeof b);
        CHECK_RC(MPI_Bcast(b, (int)sizeof b, MPI_BYTE, root, MPI_COMM_WORLD));
        CHECK_PAT(b, sizeof b, root, 500 + (uint64_t)it, "bcast %d from root %d", it, root);
        /* blocks that go by rendezvous, from a root sending to every rank */
        size_t blk = 65536 + 3 * (size_t)it;
        unsigned char *all = rank == root ? tc_malloc(blk * (size_t)size) : NULL, *mine = tc_malloc(blk);
        for (int i = 0; all && i < size; i++)
            tc_fill(all + (size_t)i * blk, blk, i, 700 + (uint64_t)it);
        memset(mine, 0, blk);
        CHECK_RC(MPI_Scatter(all, (int)blk, MPI_BYTE, mine, (int)blk, MPI_BYTE, root, MPI_COMM_WORLD));
        CHECK_PAT(mine, blk, rank, 700 + (uint64_t)it, "scatter %d from root %d", it, root);
        free(all);
        free(mine);
    }
}

/* Does this process map the shared memory of `kind`? */
static int has_map(const char *kind)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL, "cannot read /proc/self/maps");
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "/dev/shm/ferry-");
        if (!strcmp(kind, "memfd"))
            found = strstr(line, "/memfd:ferry-shm") != NULL;
        else if (!strcmp(kind, "posix"))
            found = p && strstr(p, "-node") != NULL;
        else if (!strcmp(kind, "coll")) {
            unsigned a, b;
            for (const char *q = p ? strstr(p, "-c") : NULL; q && !found; q = strstr(q + 1, "-c"))
                found = sscanf(q, "-c%u-%u", &a, &b) == 2;
        } else
            CHECK(0, "unknown --expect-map kind '%s'", kind);
    }
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int desc = 0, quick = 0, coll = 20, nmaps = 0, timing = 0;
    const char *maps[8];
    nsizes = (int)(sizeof default_sizes / sizeof default_sizes[0]);
    memcpy(sizes, default_sizes, sizeof default_sizes);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--desc"))
            desc = 1;
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--timing"))
            timing = 1;
        else if (!strcmp(argv[i], "--expect-map") && i + 1 < argc && nmaps < 8)
            maps[nmaps++] = argv[++i];
        else if (!strcmp(argv[i], "--coll") && i + 1 < argc)
            coll = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            nsizes = 0;
            for (char *p = argv[++i]; *p && nsizes < 64;) {
                char *e;
                sizes[nsizes++] = (size_t)strtoull(p, &e, 0);
                p = *e ? e + 1 : e;
            }
        } else
            CHECK(0, "unknown argument '%s'", argv[i]);
    }
    if (desc)
        for (int i = 0; i < nsizes / 2; i++) {
            size_t t = sizes[i];
            sizes[i] = sizes[nsizes - 1 - i];
            sizes[nsizes - 1 - i] = t;
        }
    for (int i = 0; i < nmaps; i++)
        CHECK(!strcmp(maps[i], "coll") || has_map(maps[i]),
              "this rank does not map the %s shared memory it should use", maps[i]);
    double t0 = MPI_Wtime();
#define TIMED(call)                                                                                \
    do {                                                                                           \
        call;                                                                                      \
        if (timing && rank == 0)                                                                   \
            fprintf(stderr, "shm_paths: %-20s %.2f s\n", #call, MPI_Wtime() - t0);                 \
        t0 = MPI_Wtime();                                                                          \
    } while (0)
    if (size > 1) {
        TIMED(phase_same(quick));
        quick_rounds = quick ? 2 : 0;
        TIMED(phase_mixed());
        TIMED(phase_flood(quick));
        TIMED(phase_flood_slow(quick));
        TIMED(phase_vector());
    }
    TIMED(phase_coll(coll));
    for (int i = 0; i < nmaps; i++)
        CHECK(strcmp(maps[i], "coll") || has_map(maps[i]),
              "this rank maps no shared-memory collective segment after %d allreduces", coll);
    return tc_finish("shm_paths");
}
