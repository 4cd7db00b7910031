/* Process creation and management (MPI-3.1 chapter 10): the part that
 * holds in a job Ferry launched whole. Ferry does not spawn processes, so
 * no process has a parent, and MPI_Comm_disconnect only ever sees
 * communicators made by ordinary creation. Spawn, ports and name
 * publishing stay unsupported (generated stubs). */
#include "api/check.h"

#pragma weak MPI_Comm_get_parent = PMPI_Comm_get_parent
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Comm_get_parent");
    if (rc || (rc = check_out(parent, "parent", "MPI_Comm_get_parent")))
        return rc;
    *parent = MPI_COMM_NULL;   /* not started by MPI_Comm_spawn */
    return MPI_SUCCESS;
}

/* Collective (MPI-3.1 10.5.4). The barrier makes it so: no member goes on
 * before every member has come to disconnect. Operations still pending on
 * comm complete as usual afterwards: Comm_free keeps the object until the
 * last request that refers to it is done. */
#pragma weak MPI_Comm_disconnect = PMPI_Comm_disconnect
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    if (!comm)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Comm_disconnect", "comm pointer is NULL");
    int rc = check_comm(*comm, &c, "MPI_Comm_disconnect");
    if (rc)
        return rc;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return ferry_error(c, MPI_ERR_COMM, "MPI_Comm_disconnect", "cannot disconnect a predefined communicator");
    if ((rc = PMPI_Barrier(*comm)))
        return rc;
    return PMPI_Comm_free(comm);
}
