/* p2p_progress: nonblocking operations progress while the rank sits in a
 * blocking call.
 *
 * Pairs (A, B) = (2k, 2k+1).  A posts Irecv(big from B) and Isend(big to B)
 * (2 MiB+5: far beyond any eager limit, so the data only moves if A's library
 * makes progress), and then enters ONE blocking call that can only return
 * after B has finished: B does a blocking Send(big) to A and a blocking
 * Recv(big) from A, then releases A.  The blocking calls tried on A:
 *   Recv, Probe, Mprobe, Wait on another request, Waitall/Waitany on another
 *   request, Ssend, Sendrecv, Sendrecv_replace, Barrier, Comm_dup,
 *   Comm_split; B's big send is done with Send, Issend+Wait, or Ssend (only
 *   Send with more than 4 ranks).  Then A and B swap roles.  A rank left over
 *   (odd size; the only rank with 1) just takes part in the collective
 *   variants.  A library that only progresses inside MPI_Wait of the very
 *   request (or in MPI_Test loops) deadlocks -> ctest timeout.
 */
#include "common.h"

static int rank, size;
static unsigned char *sbig, *rbig;
static const size_t BIGLEN = 2 * 1048576 + 5;

enum {
    X_RECV, X_PROBE, X_MPROBE, X_WAIT_OTHER, X_WAITALL_OTHER, X_WAITANY_OTHER, X_SSEND,
    X_SENDRECV, X_SENDRECV_REPLACE, X_BARRIER, X_COMM_DUP, X_COMM_SPLIT, NX
};
static const char *xname[NX] = {"Recv",     "Probe",    "Mprobe",           "Wait(other)",
                                "Waitall(other)", "Waitany(other)", "Ssend", "Sendrecv",
                                "Sendrecv_replace", "Barrier", "Comm_dup", "Comm_split"};

#define T_AB 10 /* A -> B data */
#define T_BA 11 /* B -> A data */
#define T_REL 12 /* B releases A */

static int collective(int x)
{
    return x == X_BARRIER || x == X_COMM_DUP || x == X_COMM_SPLIT;
}

/* A's blocking call; returns once B released it */
static void a_block(int x, int b)
{
    int v = 0;
    MPI_Status st;
    MPI_Request r;
    MPI_Message m;
    MPI_Comm c;
    switch (x) {
    case X_RECV:
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, b, T_REL, MPI_COMM_WORLD, &st));
        break;
    case X_PROBE:
        CHECK_RC(MPI_Probe(b, T_REL, MPI_COMM_WORLD, &st));
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, b, T_REL, MPI_COMM_WORLD, &st));
        break;
    case X_MPROBE:
        CHECK_RC(MPI_Mprobe(b, T_REL, MPI_COMM_WORLD, &m, &st));
        CHECK_RC(MPI_Mrecv(&v, 1, MPI_INT, &m, &st));
        break;
    case X_WAIT_OTHER:
    case X_WAITALL_OTHER:
    case X_WAITANY_OTHER: {
        int i;
        CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, b, T_REL, MPI_COMM_WORLD, &r));
        if (x == X_WAIT_OTHER)
            CHECK_RC(MPI_Wait(&r, &st));
        else if (x == X_WAITALL_OTHER)
            CHECK_RC(MPI_Waitall(1, &r, &st));
        else
            CHECK_RC(MPI_Waitany(1, &r, &i, &st));
        break;
    }
    case X_SSEND:
        v = 1;
        CHECK_RC(MPI_Ssend(&v, 1, MPI_INT, b, T_REL, MPI_COMM_WORLD));
        break;
    case X_SENDRECV: {
        int w = 1;
        CHECK_RC(MPI_Sendrecv(&w, 1, MPI_INT, b, T_REL + 1, &v, 1, MPI_INT, b, T_REL,
                              MPI_COMM_WORLD, &st));
        break;
    }
    case X_SENDRECV_REPLACE:
        v = 1;
        CHECK_RC(MPI_Sendrecv_replace(&v, 1, MPI_INT, b, T_REL + 1, b, T_REL, MPI_COMM_WORLD, &st));
        break;
    case X_BARRIER:
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        break;
    case X_COMM_DUP:
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        CHECK_RC(MPI_Comm_free(&c));
        break;
    case X_COMM_SPLIT:
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c));
        CHECK_RC(MPI_Comm_free(&c));
        break;
    }
}

/* B's side, then it releases A in the way a_block(x) waits for */
static void b_side(int x, int a, int how, uint64_t salt)
{
    MPI_Status st;
    int v = 1;
    /* 1. B -> A big, blocking (or Issend+Wait, or Bsend) */
    tc_fill(sbig, BIGLEN, rank, salt + 1);
    if (how == 0) {
        CHECK_RC(MPI_Send(sbig, (int)BIGLEN, MPI_BYTE, a, T_BA, MPI_COMM_WORLD));
    } else if (how == 1) {
        MPI_Request r;
        CHECK_RC(MPI_Issend(sbig, (int)BIGLEN, MPI_BYTE, a, T_BA, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        CHECK_RC(MPI_Ssend(sbig, (int)BIGLEN, MPI_BYTE, a, T_BA, MPI_COMM_WORLD));
    }
    /* 2. A -> B big, blocking receive */
    CHECK_RC(MPI_Recv(rbig, (int)BIGLEN, MPI_BYTE, a, T_AB, MPI_COMM_WORLD, &st));
    CHECK_PAT(rbig, BIGLEN, a, salt, "B side: data from A while A sat in %s", xname[x]);
    /* 3. release A */
    switch (x) {
    case X_SSEND:
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT, a, T_REL, MPI_COMM_WORLD, &st));
        break;
    case X_SENDRECV:
    case X_SENDRECV_REPLACE:
        CHECK_RC(MPI_Sendrecv(&v, 1, MPI_INT, a, T_REL, &v, 1, MPI_INT, a, T_REL + 1,
                              MPI_COMM_WORLD, &st));
        break;
    case X_BARRIER:
    case X_COMM_DUP:
    case X_COMM_SPLIT:
        a_block(x, a); /* the collective itself is the release */
        break;
    default:
        CHECK_RC(MPI_Send(&v, 1, MPI_INT, a, T_REL, MPI_COMM_WORLD));
    }
}

static void a_side(int x, int b, uint64_t salt)
{
    MPI_Request rq[2];
    tc_fill(sbig, BIGLEN, rank, salt);
    memset(rbig, 0, BIGLEN);
    CHECK_RC(MPI_Irecv(rbig, (int)BIGLEN, MPI_BYTE, b, T_BA, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Isend(sbig, (int)BIGLEN, MPI_BYTE, b, T_AB, MPI_COMM_WORLD, &rq[1]));
    a_block(x, b);
    /* B got past its blocking Send and Recv while A sat in the call above */
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK_PAT(rbig, BIGLEN, b, salt + 1, "A side: data from B while A sat in %s", xname[x]);
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    sbig = tc_malloc(BIGLEN);
    rbig = tc_malloc(BIGLEN);
    int partner = rank ^ 1;
    int lonely = partner >= size;
    const int hows = size > 4 ? 1 : 3;
    for (int how = 0; how < hows; how++)
        for (int x = 0; x < NX; x++)
            for (int role = 0; role < 2; role++) {
                uint64_t salt = (uint64_t)(how * 1000 + x * 10 + role * 2) * 4;
                if (lonely) {
                    /* no partner: join the collectives so the others can finish */
                    if (collective(x))
                        a_block(x, rank);
                    continue;
                }
                int i_am_a = (rank % 2) == role;
                if (i_am_a)
                    a_side(x, partner, salt);
                else
                    b_side(x, partner, how, salt);
            }
    free(sbig);
    free(rbig);
    return tc_finish("p2p_progress");
}
