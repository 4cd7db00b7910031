/* p2p_sizes: message sizes straddling likely protocol boundaries.
 *
 * For every size in 0,1,7,8,63,64,65,127,128,129,255,256,1023,1024,1025,4095,
 * 4096,4097,8191,8192,8193,16383,16384,32768,65535,65536,65537,256Ki,1Mi+3,
 * 4Mi,16Mi+1 bytes every rank sends to rank+1 and receives from rank-1 (self
 * with one rank) in several modes:
 *   0 Sendrecv, exact receive count
 *   1 receive posted first (Irecv, Barrier, blocking Send): expected path;
 *     sent as MPI_INT when the size allows
 *   2 Isend, Barrier, then Recv: unexpected path; misaligned buffers
 *   3 blocking Send/Recv, even ranks send first (odd sizes: Sendrecv)
 *   4 Probe, Get_count, then Recv of exactly the probed size
 *   5 Issend / Irecv completed by Waitany, receive buffer larger than message
 * (modes 3-5 only up to 1Mi+3 to keep the run short).  Every byte is checked
 * against a position + sender rank + size + mode dependent pattern; the bytes
 * after the message in the receive buffer must stay untouched; Get_count and
 * status fields are checked.
 */
#include "common.h"

static const size_t sizes[] = {0,     1,     7,     8,     31,    32,    33,    63,    64,          65,
                               127,   128,   129,   255,   256,   1023,        1024,
                               1025,  4095,  4096,  4097,  8191,  8192,        8193,
                               16383, 16384, 32768, 65535, 65536, 65537,       262144,
                               1048576 + 3,  4194304,     16777216 + 1};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define GUARD 64
#define MISALIGN_S 3
#define MISALIGN_R 5

int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    const size_t maxlen = sizes[NSIZES - 1];
    unsigned char *sbase = tc_malloc(maxlen + 16);
    unsigned char *rbase = tc_malloc(maxlen + GUARD + 16);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;

    for (size_t si = 0; si < NSIZES; si++) {
        const size_t len = sizes[si];
        const int nmodes = len > 1048576 + 3 ? 3 : 6;
        for (int mode = 0; mode < nmodes; mode++) {
            const uint64_t salt = si * 16 + (uint64_t)mode;
            const int tag = (int)(si * 16 + (size_t)mode);
            unsigned char *sb = sbase + (mode == 2 ? MISALIGN_S : 0);
            unsigned char *rb = rbase + (mode == 2 ? MISALIGN_R : 0);
            MPI_Status st;
            MPI_Request rq[2];
            int idx;
            tc_fill(sb, len, rank, salt);
            memset(rb, 0xEE, len + GUARD);
            switch (mode) {
            case 0:
                CHECK_RC(MPI_Sendrecv(sb, (int)len, MPI_BYTE, to, tag, rb, (int)len, MPI_BYTE,
                                      from, tag, MPI_COMM_WORLD, &st));
                break;
            case 1: {
                MPI_Datatype t = len % 4 == 0 ? MPI_INT : MPI_BYTE;
                int cnt = (int)(len % 4 == 0 ? len / 4 : len);
                CHECK_RC(MPI_Irecv(rb, cnt, t, from, tag, MPI_COMM_WORLD, &rq[0]));
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                CHECK_RC(MPI_Send(sb, cnt, t, to, tag, MPI_COMM_WORLD));
                CHECK_RC(MPI_Wait(&rq[0], &st));
                CHECK(tc_count(&st, t) == cnt, "mode 1: count %d expected %d", tc_count(&st, t),
                      cnt);
                break;
            }
            case 2:
                CHECK_RC(MPI_Isend(sb, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[0]));
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                CHECK_RC(MPI_Recv(rb, (int)len + GUARD, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st));
                CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
                break;
            case 3:
                if (size % 2 == 0) {
                    if (rank % 2 == 0) {
                        CHECK_RC(MPI_Send(sb, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD));
                        CHECK_RC(MPI_Recv(rb, (int)len + GUARD, MPI_BYTE, from, tag,
                                          MPI_COMM_WORLD, &st));
                    } else {
                        CHECK_RC(MPI_Recv(rb, (int)len + GUARD, MPI_BYTE, from, tag,
                                          MPI_COMM_WORLD, &st));
                        CHECK_RC(MPI_Send(sb, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD));
                    }
                } else {
                    CHECK_RC(MPI_Sendrecv(sb, (int)len, MPI_BYTE, to, tag, rb, (int)len + GUARD,
                                          MPI_BYTE, from, tag, MPI_COMM_WORLD, &st));
                }
                break;
            case 4: {
                int c = -1;
                CHECK_RC(MPI_Isend(sb, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[0]));
                CHECK_RC(MPI_Probe(from, tag, MPI_COMM_WORLD, &st));
                CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &c));
                CHECK(c == (int)len && st.MPI_SOURCE == from && st.MPI_TAG == tag,
                      "Probe: count %d source %d tag %d, expected %zu %d %d", c, st.MPI_SOURCE,
                      st.MPI_TAG, len, from, tag);
                CHECK_RC(MPI_Recv(rb, c, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st));
                CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
                break;
            }
            case 5: {
                MPI_Status sts;
                CHECK_RC(MPI_Irecv(rb, (int)len + GUARD, MPI_BYTE, MPI_ANY_SOURCE, tag,
                                   MPI_COMM_WORLD, &rq[0]));
                CHECK_RC(MPI_Issend(sb, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[1]));
                int seen[2] = {0, 0};
                for (int k = 0; k < 2; k++) {
                    CHECK_RC(MPI_Waitany(2, rq, &idx, &sts));
                    CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
                    CHECK(!seen[idx], "Waitany returned index %d twice", idx);
                    seen[idx] = 1;
                    if (idx == 0)
                        st = sts;
                }
                CHECK_RC(MPI_Waitany(2, rq, &idx, &sts));
                CHECK(idx == MPI_UNDEFINED, "Waitany on null requests gave index %d", idx);
                break;
            }
            }
            CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag, "size %zu mode %d: source %d tag %d",
                  len, mode, st.MPI_SOURCE, st.MPI_TAG);
            if (mode != 1)
                CHECK(tc_count(&st, MPI_BYTE) == (int)len,
                      "size %zu mode %d: received count %d", len, mode, tc_count(&st, MPI_BYTE));
            CHECK_PAT(rb, len, from, salt, "size %zu mode %d", len, mode);
            CHECK_BYTES(rb + len, GUARD, 0xEE, "size %zu mode %d: bytes after the message", len,
                        mode);
        }
    }
    free(sbase);
    free(rbase);
    return tc_finish("p2p_sizes");
}
