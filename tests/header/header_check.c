/* Compile-only test of include/mpi.h, built as C11 (header_c) and as C++11
 * (header_cxx) with -pedantic -Wall -Wextra -Werror. Besides including the
 * header it uses it the way applications do: constants in constant
 * expressions and case labels, predefined callbacks assigned to their
 * types, function names taken as pointers of the standard's types. */
#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
#define STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* The MPICH ABI on LP64. */
STATIC_ASSERT(sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8,
              "64-bit MPI_Aint, MPI_Offset and MPI_Count");
STATIC_ASSERT(sizeof(MPI_Fint) == 4, "32-bit MPI_Fint");
STATIC_ASSERT(sizeof(MPI_Comm) == sizeof(int) && sizeof(MPI_Datatype) == sizeof(int),
              "integer handles");
STATIC_ASSERT(sizeof(MPI_File) == sizeof(void *), "MPI_File is a pointer");
STATIC_ASSERT(sizeof(MPI_Status) == 5 * sizeof(int), "MPI_Status is five ints");
STATIC_ASSERT(offsetof(MPI_Status, count_lo) == 0 &&
              offsetof(MPI_Status, count_hi_and_cancelled) == 4 &&
              offsetof(MPI_Status, MPI_SOURCE) == 8 && offsetof(MPI_Status, MPI_TAG) == 12 &&
              offsetof(MPI_Status, MPI_ERROR) == 16, "MPI_Status field order");
STATIC_ASSERT(MPI_VERSION == 4 && MPI_SUBVERSION == 0, "Ferry reports MPI-4.0, as MPICH 4.0's header");
STATIC_ASSERT(MPI_ERR_LASTCODE >= MPI_T_ERR_NOT_SUPPORTED, "error class range");

/* Predefined handles are integer constant expressions: usable as case
 * labels, and pairwise distinct (a duplicate would not compile). */
int datatype_index(MPI_Datatype dt);
int datatype_index(MPI_Datatype dt)
{
    switch (dt) {
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_UNSIGNED_CHAR: case MPI_WCHAR:
    case MPI_SHORT: case MPI_UNSIGNED_SHORT: case MPI_INT: case MPI_UNSIGNED:
    case MPI_LONG: case MPI_UNSIGNED_LONG: case MPI_LONG_LONG_INT:
    case MPI_UNSIGNED_LONG_LONG: case MPI_FLOAT: case MPI_DOUBLE: case MPI_LONG_DOUBLE:
    case MPI_BYTE: case MPI_PACKED:
    case MPI_INT8_T: case MPI_INT16_T: case MPI_INT32_T: case MPI_INT64_T:
    case MPI_UINT8_T: case MPI_UINT16_T: case MPI_UINT32_T: case MPI_UINT64_T:
    case MPI_C_BOOL: case MPI_C_FLOAT_COMPLEX: case MPI_C_DOUBLE_COMPLEX:
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_AINT: case MPI_OFFSET: case MPI_COUNT:
    case MPI_CXX_BOOL: case MPI_CXX_FLOAT_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
    case MPI_FLOAT_INT: case MPI_DOUBLE_INT: case MPI_LONG_INT: case MPI_SHORT_INT:
    case MPI_LONG_DOUBLE_INT: case MPI_2INT:
    case MPI_INTEGER: case MPI_REAL: case MPI_DOUBLE_PRECISION: case MPI_COMPLEX:
    case MPI_DOUBLE_COMPLEX: case MPI_LOGICAL: case MPI_CHARACTER: case MPI_2INTEGER:
    case MPI_2REAL: case MPI_2DOUBLE_PRECISION:
    case MPI_INTEGER1: case MPI_INTEGER2: case MPI_INTEGER4: case MPI_INTEGER8:
    case MPI_REAL4: case MPI_REAL8: case MPI_REAL16:
    case MPI_COMPLEX8: case MPI_COMPLEX16: case MPI_COMPLEX32:
    case MPI_LB: case MPI_UB:
        return 1;
    case MPI_DATATYPE_NULL: /* also MPI_INTEGER16 */
        return 0;
    default:
        return -1;
    }
}

int error_class_known(int cls);
int error_class_known(int cls)
{
    switch (cls) {
    case MPI_SUCCESS: case MPI_ERR_BUFFER: case MPI_ERR_COUNT: case MPI_ERR_TYPE:
    case MPI_ERR_TAG: case MPI_ERR_COMM: case MPI_ERR_RANK: case MPI_ERR_ROOT:
    case MPI_ERR_GROUP: case MPI_ERR_OP: case MPI_ERR_TOPOLOGY: case MPI_ERR_DIMS:
    case MPI_ERR_ARG: case MPI_ERR_UNKNOWN: case MPI_ERR_TRUNCATE: case MPI_ERR_OTHER:
    case MPI_ERR_INTERN: case MPI_ERR_IN_STATUS: case MPI_ERR_PENDING:
    case MPI_ERR_REQUEST: case MPI_ERR_ACCESS: case MPI_ERR_AMODE:
    case MPI_ERR_BAD_FILE: case MPI_ERR_CONVERSION: case MPI_ERR_DUP_DATAREP:
    case MPI_ERR_FILE_EXISTS: case MPI_ERR_FILE_IN_USE: case MPI_ERR_FILE:
    case MPI_ERR_INFO: case MPI_ERR_INFO_KEY: case MPI_ERR_INFO_VALUE:
    case MPI_ERR_INFO_NOKEY: case MPI_ERR_IO: case MPI_ERR_NAME: case MPI_ERR_NO_MEM:
    case MPI_ERR_NOT_SAME: case MPI_ERR_NO_SPACE: case MPI_ERR_NO_SUCH_FILE:
    case MPI_ERR_PORT: case MPI_ERR_QUOTA: case MPI_ERR_READ_ONLY: case MPI_ERR_SERVICE:
    case MPI_ERR_SPAWN: case MPI_ERR_UNSUPPORTED_DATAREP:
    case MPI_ERR_UNSUPPORTED_OPERATION: case MPI_ERR_WIN: case MPI_ERR_BASE:
    case MPI_ERR_LOCKTYPE: case MPI_ERR_KEYVAL: case MPI_ERR_RMA_CONFLICT:
    case MPI_ERR_RMA_SYNC: case MPI_ERR_SIZE: case MPI_ERR_DISP: case MPI_ERR_ASSERT:
    case MPI_ERR_RMA_RANGE: case MPI_ERR_RMA_ATTACH: case MPI_ERR_RMA_SHARED:
    case MPI_ERR_RMA_FLAVOR:
    case MPI_T_ERR_MEMORY: case MPI_T_ERR_NOT_INITIALIZED: case MPI_T_ERR_CANNOT_INIT:
    case MPI_T_ERR_INVALID_INDEX: case MPI_T_ERR_INVALID_ITEM:
    case MPI_T_ERR_INVALID_HANDLE: case MPI_T_ERR_OUT_OF_HANDLES:
    case MPI_T_ERR_OUT_OF_SESSIONS: case MPI_T_ERR_INVALID_SESSION:
    case MPI_T_ERR_CVAR_SET_NOT_NOW: case MPI_T_ERR_CVAR_SET_NEVER:
    case MPI_T_ERR_PVAR_NO_STARTSTOP: case MPI_T_ERR_PVAR_NO_WRITE:
    case MPI_T_ERR_PVAR_NO_ATOMIC: case MPI_T_ERR_INVALID_NAME: case MPI_T_ERR_INVALID:
    case MPI_ERR_SESSION: case MPI_ERR_PROC_ABORTED: case MPI_ERR_VALUE_TOO_LARGE:
    case MPI_T_ERR_NOT_SUPPORTED:
        return 1;
    default:
        return 0;
    }
}

/* Predefined callbacks have the callback types. */
MPI_Copy_function *const null_copy = MPI_NULL_COPY_FN;
MPI_Delete_function *const null_delete = MPI_NULL_DELETE_FN;
MPI_Copy_function *const dup_fn = MPI_DUP_FN;
MPI_Comm_copy_attr_function *const comm_copy[2] = {MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN};
MPI_Comm_delete_attr_function *const comm_delete = MPI_COMM_NULL_DELETE_FN;
MPI_Type_copy_attr_function *const type_copy[2] = {MPI_TYPE_NULL_COPY_FN, MPI_TYPE_DUP_FN};
MPI_Type_delete_attr_function *const type_delete = MPI_TYPE_NULL_DELETE_FN;
MPI_Win_copy_attr_function *const win_copy[2] = {MPI_WIN_NULL_COPY_FN, MPI_WIN_DUP_FN};
MPI_Win_delete_attr_function *const win_delete = MPI_WIN_NULL_DELETE_FN;
MPI_Datarep_conversion_function *const no_conversion = MPI_CONVERSION_FN_NULL;

/* A few functions as pointers with the standard's (const-correct) types. */
int (*const send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = MPI_Send;
int (*const psend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = PMPI_Send;
int (*const alltoallw_fn)(const void *, const int[], const int[], const MPI_Datatype[], void *,
                          const int[], const int[], const MPI_Datatype[], MPI_Comm) = MPI_Alltoallw;
int (*const range_incl_fn)(MPI_Group, int, int[][3], MPI_Group *) = MPI_Group_range_incl;
int (*const pcontrol_fn)(const int, ...) = MPI_Pcontrol;
double (*const wtime_fn)(void) = MPI_Wtime;
MPI_Aint (*const aint_add_fn)(MPI_Aint, MPI_Aint) = MPI_Aint_add;
MPI_Fint (*const comm_c2f_fn)(MPI_Comm) = MPI_Comm_c2f;
MPI_File (*const file_f2c_fn)(MPI_Fint) = PMPI_File_f2c;
int (*const status_f2c_fn)(const MPI_Fint *, MPI_Status *) = MPI_Status_f2c;

/* Special values in ordinary use. */
int example(int argc, char **argv);
int example(int argc, char **argv)
{
    int rank, provided, flag;
    MPI_Status st;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    int buf[4] = {0, 0, 0, 0};

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Irecv(buf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &req);
    MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
    MPI_Recv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &buf, &flag);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, buf, MPI_UNWEIGHTED, 0, buf,
                                   MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c);
    MPI_Comm_spawn("x", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c,
                   MPI_ERRCODES_IGNORE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Send(MPI_BOTTOM, 0, MPI_BYTE, rank, 0, MPI_COMM_WORLD);
    MPI_Status_f2c(MPI_F_STATUS_IGNORE, MPI_STATUS_IGNORE);
    MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES);
    {
        MPI_File fh = MPI_FILE_NULL;
        char rep[MPI_MAX_DATAREP_STRING];
        MPI_Offset disp;
        MPI_Datatype et, ft;
        MPI_File_open(MPI_COMM_WORLD, "f", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        MPI_File_get_view(fh, &disp, &et, &ft, rep);
        MPI_File_close(&fh);
    }
    return st.MPI_SOURCE + st.MPI_TAG + st.MPI_ERROR + MPI_Finalize();
}
