/* p2p_switch: MPIX_Ferry_p2p_set (what ferry-tune --p2p calls between its
 * measurements) takes effect on the very next message, even to a peer that
 * has already had traffic.
 *
 * Ranks 0 and 1, several rounds. Each round first sends a few small
 * messages 0 -> 1 under the cost model (eager: an Isend of 1 KiB completes
 * at once, before rank 1 has posted anything), then both switch to the
 * "pipeline" mechanism, which carries every message as a rendezvous: a
 * 1 KiB Isend from rank 0 must now stay incomplete until rank 1 matches it,
 * and rank 1 matches it only after a "go" message that rank 0 sends after
 * its checks -- so nothing here depends on timing. Then "auto" again, and
 * the 1 KiB Isend completes at once again. Every payload is checked.
 *
 * Caught: an eager limit cached per peer on the first send survived the
 * switch (ferry-tune then measured eager messages as "pipeline"). */
#include "common.h"

int MPIX_Ferry_p2p_set(const char *mechanism, int peer, size_t *limit);

#define N 1024

static void eager_round(int rank, char *buf, int round)
{
    if (rank == 0) {
        MPI_Request r;
        int flag = 0;
        tc_fill(buf, N, 0, round);
        CHECK_RC(MPI_Isend(buf, N, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "round %d: a %d-byte Isend under the cost model did not complete at once (not eager)", round,
              N);
    } else {
        CHECK_RC(MPI_Recv(buf, N, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_PAT(buf, N, 0, round, "eager round %d", round);
    }
}

static void pipeline_round(int rank, char *buf, int round)
{
    int go = round;
    if (rank == 0) {
        MPI_Request r;
        int flag = 1;
        tc_fill(buf, N, 0, 100 + round);
        CHECK_RC(MPI_Isend(buf, N, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &r));
        for (int i = 0; i < 100; i++) {
            CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "round %d: with \"pipeline\" set, a %d-byte Isend completed before the receiver matched "
                  "it (still sent eagerly)", round, N);
        }
        CHECK_RC(MPI_Send(&go, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        CHECK_RC(MPI_Recv(&go, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(go == round, "go message %d in round %d", go, round);
        CHECK_RC(MPI_Recv(buf, N, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_PAT(buf, N, 0, 100 + round, "pipeline round %d", round);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    CHECK(size == 2, "run with 2 ranks (got %d)", size);
    char *buf = malloc(N);
    int peer = 1 - rank;
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 3; k++)
            eager_round(rank, buf, round * 10 + k);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPIX_Ferry_p2p_set("pipeline", peer, NULL));
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        pipeline_round(rank, buf, round);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPIX_Ferry_p2p_set("auto", peer, NULL));
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(buf);
    return tc_finish("p2p_switch");
}
