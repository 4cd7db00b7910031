/* MPICH's MPIX_ extensions that MPICH-built programs and MPICH's own Fortran
 * binding library (libmpichfort.so.12, which resolves them in libmpich.so.12
 * at load time) refer to.
 *
 * Fault tolerance (ULFM): Ferry takes the whole job down when a rank dies
 * (mpiexec), so no surviving process ever sees a failed peer. Agree is
 * therefore a plain AND over the communicator (on an intracommunicator in a
 * tag space of its own, so that, as in ULFM, it needs no particular order
 * with the communicator's collectives), Shrink a duplicate, and the
 * set of acknowledged failures is always empty. Revoke would have to
 * interrupt operations in flight on every member, which Ferry does not do.
 *
 * Accelerators: Ferry moves host memory only. */
#include "api/check.h"
#include "coll/coll.h"

#pragma weak MPIX_Comm_agree = PMPIX_Comm_agree
int PMPIX_Comm_agree(MPI_Comm comm, int *flag)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPIX_Comm_agree");
    if (rc)
        return rc;
    if ((rc = check_out(flag, "flag", "MPIX_Comm_agree")))
        return rc;
    if (c->remote)
        return PMPI_Allreduce(MPI_IN_PLACE, flag, 1, MPI_INT, MPI_BAND, comm);
    rc = ferry_coll_agree(c, flag, NULL);
    return rc ? ferry_error(c, rc, "MPIX_Comm_agree", "the agreement failed") : MPI_SUCCESS;
}

#pragma weak MPIX_Comm_iagree = PMPIX_Comm_iagree
int PMPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPIX_Comm_iagree");
    if (rc)
        return rc;
    if ((rc = check_out(flag, "flag", "MPIX_Comm_iagree")) || (rc = check_out(request, "request", "MPIX_Comm_iagree")))
        return rc;
    if (c->remote)
        return PMPI_Iallreduce(MPI_IN_PLACE, flag, 1, MPI_INT, MPI_BAND, comm, request);
    struct ferry_request *r;
    ferry_coll_agree(c, flag, &r);
    *request = r->handle;
    return MPI_SUCCESS;
}

#pragma weak MPIX_Comm_failure_ack = PMPIX_Comm_failure_ack
int PMPIX_Comm_failure_ack(MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    return check_comm(comm, &c, "MPIX_Comm_failure_ack");
}

#pragma weak MPIX_Comm_failure_get_acked = PMPIX_Comm_failure_get_acked
int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPIX_Comm_failure_get_acked");
    if (rc)
        return rc;
    if ((rc = check_out(failedgrp, "failedgrp", "MPIX_Comm_failure_get_acked")))
        return rc;
    *failedgrp = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
}

#pragma weak MPIX_Comm_revoke = PMPIX_Comm_revoke
int PMPIX_Comm_revoke(MPI_Comm comm)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPIX_Comm_revoke");
    return rc ? rc : ferry_unsupported("MPIX_Comm_revoke");
}

#pragma weak MPIX_Comm_shrink = PMPIX_Comm_shrink
int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm)
{
    FERRY_API_ENTER();
    return PMPI_Comm_dup(comm, newcomm);
}

#pragma weak MPIX_GPU_query_support = PMPIX_GPU_query_support
int PMPIX_GPU_query_support(int gpu_type, int *is_supported)
{
    FERRY_API_ENTER();
    (void)gpu_type;
    int rc = check_out(is_supported, "is_supported", "MPIX_GPU_query_support");
    if (rc)
        return rc;
    *is_supported = 0;
    return MPI_SUCCESS;
}

#pragma weak MPIX_Query_cuda_support = PMPIX_Query_cuda_support
int PMPIX_Query_cuda_support(void)
{
    return 0;
}

#pragma weak MPIX_Query_hip_support = PMPIX_Query_hip_support
int PMPIX_Query_hip_support(void)
{
    return 0;
}

#pragma weak MPIX_Query_ze_support = PMPIX_Query_ze_support
int PMPIX_Query_ze_support(void)
{
    return 0;
}
