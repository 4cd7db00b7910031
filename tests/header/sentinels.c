/* Compile test of include/mpi.h (header_sentinels): the sentinel constants
 * (MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE, MPI_ARGV(S)_NULL,
 * MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY) passed where they belong, built with
 * -O2 -Wall -Wextra -Werror. GCC 11+ reads a parameter declared as an array
 * (MPI_Status array_of_statuses[]) as one that accesses its elements, and
 * warns that MPI_STATUSES_IGNORE, ((MPI_Status *)1), points to an object of
 * size 0 ("accessing 20 bytes in a region of size 0", -Wstringop-overflow):
 * MPICH's header draws that warning into every program that calls
 * MPI_Waitall with it; Ferry's declares those parameters as pointers (the
 * same type, so the same ABI) and must stay quiet. */
#include <mpi.h>

void sentinels(MPI_Comm c, MPI_Request *q, int *idx, int *out, MPI_Comm *nc, MPI_Info info);
void sentinels(MPI_Comm c, MPI_Request *q, int *idx, int *out, MPI_Comm *nc, MPI_Info info)
{
    int flag, s[2] = {0, 1}, np[2] = {1, 1};
    char a[] = "a", b[] = "b", *cmds[2] = {a, b};
    MPI_Info infos[2] = {info, info};
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    MPI_Testall(4, q, &flag, MPI_STATUSES_IGNORE);
    MPI_Waitsome(4, q, out, idx, MPI_STATUSES_IGNORE);
    MPI_Testsome(4, q, out, idx, MPI_STATUSES_IGNORE);
    PMPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    PMPI_Testall(4, q, &flag, MPI_STATUSES_IGNORE);
    PMPI_Waitsome(4, q, out, idx, MPI_STATUSES_IGNORE);
    PMPI_Testsome(4, q, out, idx, MPI_STATUSES_IGNORE);
    MPI_Wait(q, MPI_STATUS_IGNORE);
    MPI_Comm_spawn("x", MPI_ARGV_NULL, 2, info, 0, c, nc, MPI_ERRCODES_IGNORE);
    MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, np, infos, 0, c, nc, MPI_ERRCODES_IGNORE);
    MPI_Dist_graph_create_adjacent(c, 2, s, MPI_UNWEIGHTED, 2, s, MPI_UNWEIGHTED, info, 0, nc);
    MPI_Dist_graph_create_adjacent(c, 0, s, MPI_WEIGHTS_EMPTY, 0, s, MPI_WEIGHTS_EMPTY, info, 0, nc);
    MPI_Dist_graph_create(c, 1, s, s, s, MPI_UNWEIGHTED, info, 0, nc);
}
