/* Windows made and freed in a loop (MPI_Win_allocate and MPI_Win_create),
 * each used once with passive-target Put/Get, files opened and closed in a
 * loop (each written and read back once), then one window used for
 * fences. Checks the data; the run registered as win_setup_lazy also checks
 * Ferry's FERRY_VERBOSE=2 log: the few agreements that set a window up must
 * not give its private communicator a shared-memory collectives segment, nor
 * those that open a file (one
 * per window cost 0.4 ms of page faults: Win_allocate + Win_free took 413 us,
 * 12 in MPICH, and NWChem makes hundreds of windows), while the window used
 * for fences keeps its lazily created one. */
#include "io_common.h"

static int rank, size;

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int it = 0; it < 6; it++) {
        int *mem, got = -1, mine = 1000 * it + rank;
        MPI_Win win;
        int local[4] = {0};
        if (it % 2) {
            CHECK_RC(MPI_Win_create(local, sizeof local, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            mem = local;
        } else {
            CHECK_RC(MPI_Win_allocate(sizeof local, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        }
        /* my value into the right neighbour's slot 1, under a lock */
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        CHECK_RC(MPI_Put(&mine, 1, MPI_INT, right, 1, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_unlock(right, win));
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        got = mem[1];
        CHECK_RC(MPI_Win_unlock(rank, win));
        CHECK(got == 1000 * it + left, "window %d: slot 1 holds %d, expected %d from rank %d", it, got,
              1000 * it + left, left);
        CHECK_RC(MPI_Win_free(&win));
    }
    char name[256];
    io_name(name, sizeof name, "win-setup");
    for (int it = 0; it < 4; it++) {
        MPI_File fh;
        int v = 100 * it + rank, back = -1;
        CHECK_RC(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                               MPI_INFO_NULL, &fh));
        CHECK_RC(MPI_File_write_at(fh, (MPI_Offset)rank * (MPI_Offset)sizeof v, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)rank * (MPI_Offset)sizeof v, &back, 1, MPI_INT, MPI_STATUS_IGNORE));
        CHECK(back == v, "file %d: read back %d, wrote %d", it, back, v);
        CHECK_RC(MPI_File_close(&fh));
    }
    /* a window used for fences: its collectives keep going */
    int *mem;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    *mem = -1;
    for (int k = 0; k < 5; k++) {
        CHECK_RC(MPI_Win_fence(0, win));
        CHECK_RC(MPI_Put(&k, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_fence(0, win));
        CHECK(*mem == k, "fence round %d: got %d", k, *mem);
    }
    CHECK_RC(MPI_Win_free(&win));
    return tc_finish("win_setup");
}
