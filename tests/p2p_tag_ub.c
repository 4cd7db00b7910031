/* p2p_tag_ub: the MPI_TAG_UB attribute and tags at and beyond it.
 *
 * MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB) exists and is >= 32767 (the
 * standard's minimum); messages with tag 0, 32767 and MPI_TAG_UB itself are
 * delivered (also received with MPI_ANY_TAG, reporting the right tag); with
 * MPI_ERRORS_RETURN a tag of MPI_TAG_UB+1 (when representable) is rejected
 * with MPI_ERR_TAG by Send, Isend, Recv and Irecv, and communication goes on.
 * Separate from p2p_errors because it needs MPI_Comm_get_attr.
 */
#include "common.h"
#include <limits.h>

int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    int *ub = NULL, flag = 0;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag == 1 && ub != NULL, "MPI_TAG_UB attribute missing");
    const int tag_ub = *ub;
    CHECK(tag_ub >= 32767, "MPI_TAG_UB = %d < 32767", tag_ub);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;

    const int tags[3] = {0, 32767, tag_ub};
    for (int i = 0; i < 3; i++) {
        int out = rank * 10 + i, in = -1;
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv(&out, 1, MPI_INT, to, tags[i], &in, 1, MPI_INT, from,
                              i == 2 ? MPI_ANY_TAG : tags[i], MPI_COMM_WORLD, &st));
        CHECK(in == from * 10 + i && st.MPI_TAG == tags[i], "tag %d: got %d with tag %d", tags[i],
              in, st.MPI_TAG);
    }

    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    if (tag_ub < INT_MAX) {
        int x = 0, c = -1, rc;
        MPI_Request r;
        rc = MPI_Send(&x, 1, MPI_INT, to, tag_ub + 1, MPI_COMM_WORLD);
        CHECK(rc != MPI_SUCCESS, "Send with tag MPI_TAG_UB+1 = %d succeeded", tag_ub + 1);
        MPI_Error_class(rc, &c);
        CHECK(c == MPI_ERR_TAG, "Send with tag MPI_TAG_UB+1: class %d, expected MPI_ERR_TAG", c);
        rc = MPI_Isend(&x, 1, MPI_INT, to, tag_ub + 1, MPI_COMM_WORLD, &r);
        MPI_Error_class(rc, &c);
        CHECK(rc != MPI_SUCCESS && c == MPI_ERR_TAG, "Isend with tag MPI_TAG_UB+1: rc %d class %d",
              rc, c);
        rc = MPI_Recv(&x, 1, MPI_INT, from, tag_ub + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &c);
        CHECK(rc != MPI_SUCCESS && c == MPI_ERR_TAG, "Recv with tag MPI_TAG_UB+1: rc %d class %d",
              rc, c);
        rc = MPI_Irecv(&x, 1, MPI_INT, from, tag_ub + 1, MPI_COMM_WORLD, &r);
        MPI_Error_class(rc, &c);
        CHECK(rc != MPI_SUCCESS && c == MPI_ERR_TAG, "Irecv with tag MPI_TAG_UB+1: rc %d class %d",
              rc, c);
    }
    int out = rank, in = -1;
    CHECK_RC(MPI_Sendrecv(&out, 1, MPI_INT, to, 1, &in, 1, MPI_INT, from, 1, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    CHECK(in == from, "exchange after tag errors: %d", in);
    return tc_finish("p2p_tag_ub");
}
