/* err_nullargs: output arguments passed as NULL.
 *
 * Under MPI_ERRORS_RETURN on MPI_COMM_WORLD (and on the communicators the
 * calls are about), every call below gets a NULL pointer where MPI writes a
 * result; it must return an error -- MPI_ERR_ARG, or the class the call's
 * own checks give for that argument -- and never write through it or crash.
 * A good call on the same objects afterwards still works. Covers the
 * environment, communicators, groups, datatypes, requests and probes, info,
 * topologies, attributes and error handlers.
 */
#include "common.h"

static int nfail;

static void expect_error(int rc, const char *what, int line)
{
    if (rc == MPI_SUCCESS) {
        fprintf(stderr, "FAIL [rank %d] err_nullargs.c:%d: %s succeeded with a NULL output argument\n",
                tc_world_rank(), line, what);
        nfail++;
    }
}
#define NULLARG(call) expect_error((call), #call, __LINE__)

int main(int argc, char **argv)
{
    int rank, size;
    tc_init(&argc, &argv, &rank, &size);
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    MPI_Group g;
    CHECK_RC(MPI_Comm_group(dup, &g));
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_RC(MPI_Type_commit(&vec));
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info));
    CHECK_RC(MPI_Info_set(info, "k", "v"));
    int ranks[1] = {0}, one = 1, dims[1] = {size}, periods[1] = {0};
    MPI_Comm cart;
    CHECK_RC(MPI_Cart_create(dup, 1, dims, periods, 0, &cart));
    CHECK_RC(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    MPI_Aint a;
    MPI_Count cnt;
    int i;
    MPI_Status st;

    /* environment */
    NULLARG(MPI_Initialized(NULL));
    NULLARG(MPI_Finalized(NULL));
    NULLARG(MPI_Query_thread(NULL));
    NULLARG(MPI_Is_thread_main(NULL));
    NULLARG(MPI_Get_version(NULL, &i));
    NULLARG(MPI_Get_version(&i, NULL));
    NULLARG(MPI_Get_processor_name(NULL, &i));
    /* communicators */
    NULLARG(MPI_Comm_size(dup, NULL));
    NULLARG(MPI_Comm_rank(dup, NULL));
    NULLARG(MPI_Comm_group(dup, NULL));
    NULLARG(MPI_Comm_compare(dup, MPI_COMM_WORLD, NULL));
    NULLARG(MPI_Comm_test_inter(dup, NULL));
    NULLARG(MPI_Comm_dup(dup, NULL));
    NULLARG(MPI_Comm_create(dup, g, NULL));
    NULLARG(MPI_Comm_create_group(dup, g, 0, NULL));
    NULLARG(MPI_Comm_split(dup, 0, 0, NULL));
    NULLARG(MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, NULL));
    NULLARG(MPI_Comm_get_info(dup, NULL));
    NULLARG(MPI_Comm_get_errhandler(dup, NULL));
    /* groups */
    MPI_Group ng;
    NULLARG(MPI_Group_size(g, NULL));
    NULLARG(MPI_Group_rank(g, NULL));
    NULLARG(MPI_Group_compare(g, g, NULL));
    NULLARG(MPI_Group_union(g, g, NULL));
    NULLARG(MPI_Group_intersection(g, g, NULL));
    NULLARG(MPI_Group_difference(g, g, NULL));
    NULLARG(MPI_Group_incl(g, 1, ranks, NULL));
    NULLARG(MPI_Group_excl(g, 1, ranks, NULL));
    if (!tc_mpich_version())   /* MPICH 4.0.2 dereferences the NULL ranks */
        NULLARG(MPI_Group_incl(g, 1, NULL, &ng));
    NULLARG(MPI_Group_translate_ranks(g, 1, ranks, g, NULL));
    /* datatypes */
    NULLARG(MPI_Type_size(vec, NULL));
    NULLARG(MPI_Type_size_x(vec, NULL));
    NULLARG(MPI_Type_get_extent(vec, NULL, &a));
    NULLARG(MPI_Type_get_extent(vec, &a, NULL));
    NULLARG(MPI_Type_get_true_extent(vec, NULL, &a));
    NULLARG(MPI_Type_get_true_extent(vec, &a, NULL));
    NULLARG(MPI_Type_get_extent_x(vec, NULL, &cnt));
    NULLARG(MPI_Type_get_true_extent_x(vec, &cnt, NULL));
    NULLARG(MPI_Type_dup(vec, NULL));
    NULLARG(MPI_Type_contiguous(2, MPI_INT, NULL));
    NULLARG(MPI_Type_vector(2, 1, 2, MPI_INT, NULL));
    if (!tc_mpich_version()) {   /* MPICH 4.0.2 dereferences these */
        NULLARG(MPI_Type_commit(NULL));
        NULLARG(MPI_Type_free(NULL));
    }
    NULLARG(MPI_Pack_size(1, vec, dup, NULL));
    NULLARG(MPI_Get_address(&i, NULL));
    /* requests and probes */
    NULLARG(MPI_Iprobe(MPI_ANY_SOURCE, 0, dup, NULL, &st));
    NULLARG(MPI_Request_free(NULL));
    MPI_Request r = MPI_REQUEST_NULL;
    NULLARG(MPI_Test(&r, NULL, &st));
    NULLARG(MPI_Testall(1, &r, NULL, MPI_STATUSES_IGNORE));
    NULLARG(MPI_Testany(1, &r, NULL, &one, &st));
    NULLARG(MPI_Testany(1, &r, &i, NULL, &st));
    NULLARG(MPI_Waitany(1, &r, NULL, &st));
    NULLARG(MPI_Testsome(1, &r, NULL, &i, MPI_STATUSES_IGNORE));
    NULLARG(MPI_Request_get_status(r, NULL, &st));
    NULLARG(MPI_Isend(&i, 1, MPI_INT, rank, 0, dup, NULL));
    NULLARG(MPI_Irecv(&i, 1, MPI_INT, rank, 0, dup, NULL));
    NULLARG(MPI_Get_count(&st, MPI_INT, NULL));
    /* info */
    NULLARG(MPI_Info_create(NULL));
    NULLARG(MPI_Info_dup(info, NULL));
    NULLARG(MPI_Info_get_nkeys(info, NULL));
    NULLARG(MPI_Info_get(info, "k", 4, NULL, &i));
    NULLARG(MPI_Info_get_valuelen(info, "k", NULL, &i));
    /* topologies */
    NULLARG(MPI_Topo_test(cart, NULL));
    NULLARG(MPI_Cartdim_get(cart, NULL));
    NULLARG(MPI_Cart_rank(cart, ranks, NULL));
    NULLARG(MPI_Cart_shift(cart, 0, 1, NULL, &i));
    NULLARG(MPI_Cart_create(dup, 1, dims, periods, 0, NULL));
    NULLARG(MPI_Dims_create(size, 1, NULL));
    /* attributes, error handlers, operations */
    int kv;
    NULLARG(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL));
    NULLARG(MPI_Comm_get_attr(dup, MPI_TAG_UB, NULL, &i));
    NULLARG(MPI_Comm_get_attr(dup, MPI_TAG_UB, &kv, NULL));
    NULLARG(MPI_Comm_create_errhandler(NULL, NULL));
    NULLARG(MPI_Op_commutative(MPI_SUM, NULL));
    NULLARG(MPI_Op_create(NULL, 1, NULL));
    NULLARG(MPI_Error_class(MPI_ERR_ARG, NULL));

    /* the objects still work */
    int sz = -1;
    CHECK_RC(MPI_Group_size(g, &sz));
    CHECK(sz == size, "group size %d after the errors", sz);
    CHECK_RC(MPI_Type_size(vec, &sz));
    CHECK(sz == 2 * (int)sizeof(int), "vector size %d after the errors", sz);
    int sum = 0;
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == size, "allreduce %d after the errors", sum);
    CHECK(nfail == 0, "%d calls accepted a NULL output argument", nfail);

    CHECK_RC(MPI_Comm_free(&cart));
    CHECK_RC(MPI_Info_free(&info));
    CHECK_RC(MPI_Type_free(&vec));
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    return tc_finish("err_nullargs");
}
