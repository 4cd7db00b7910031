/* Error handlers and error strings. */
#include "api/check.h"
#include <stdio.h>
#include <string.h>

#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_set_errhandler");
    if (rc)
        return rc;
    if (!ferry_errhandler_valid(errhandler))
        return ferry_error(c, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "invalid error handler 0x%x",
                           (unsigned)errhandler);
    ferry_errhandler_retain(errhandler);
    ferry_errhandler_release(c->errhandler);
    c->errhandler = errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_get_errhandler");
    if (rc)
        return rc;
    if ((rc = check_out(errhandler, "errhandler", "MPI_Comm_get_errhandler")))
        return rc;
    ferry_errhandler_retain(c->errhandler);   /* the caller frees it with Errhandler_free */
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_Errhandler_set = PMPI_Errhandler_set
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    FERRY_API_ENTER();
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

/* MPI-1's name for Comm_create_errhandler (removed in MPI-3.0, still in
 * MPICH's library and header). */
#pragma weak MPI_Errhandler_create = PMPI_Errhandler_create
int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    FERRY_API_ENTER();
    return PMPI_Comm_create_errhandler(function, errhandler);
}

#pragma weak MPI_Errhandler_get = PMPI_Errhandler_get
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    FERRY_API_ENTER();
    return PMPI_Comm_get_errhandler(comm, errhandler);
}

#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Comm_create_errhandler");
    if (rc)
        return rc;
    if ((rc = check_out(errhandler, "errhandler", "MPI_Comm_create_errhandler")))
        return rc;
    if (!fn)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Comm_create_errhandler", "NULL function");
    *errhandler = ferry_errhandler_new(fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    FERRY_API_ENTER();
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, "MPI_Comm_call_errhandler");
    if (rc)
        return rc;
    ferry_error(c, errorcode, "MPI_Comm_call_errhandler", "error raised by the application");
    return MPI_SUCCESS;
}

#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Errhandler_free");
    if (rc)
        return rc;
    if (!errhandler || !ferry_errhandler_valid(*errhandler))
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Errhandler_free", "invalid error handler");
    ferry_errhandler_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Error_string = PMPI_Error_string
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    FERRY_API_ENTER();
    const char *s = ferry_error_class_string(errorcode);
    if (!s)
        s = ferry_user_error_string(errorcode);
    if (!s)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Error_string", "unknown error code %d", errorcode);
    if (!string || !resultlen)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Error_string", "NULL string or resultlen");
    snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}

#pragma weak MPI_Error_class = PMPI_Error_class
int PMPI_Error_class(int errorcode, int *errorclass)
{
    FERRY_API_ENTER();
    int cls = ferry_error_class_of(errorcode);
    if (cls < 0)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "unknown error code %d", errorcode);
    if (!errorclass)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "NULL errorclass");
    *errorclass = cls;
    return MPI_SUCCESS;
}

/* ---- classes, codes and strings the application adds ---------------------- */

#pragma weak MPI_Add_error_class = PMPI_Add_error_class
int PMPI_Add_error_class(int *errorclass)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Add_error_class");
    if (rc)
        return rc;
    if (!errorclass)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Add_error_class", "NULL errorclass");
    *errorclass = ferry_user_error_class_add();
    return MPI_SUCCESS;
}

#pragma weak MPI_Add_error_code = PMPI_Add_error_code
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Add_error_code");
    if (rc)
        return rc;
    /* a predefined class (MPI_SUCCESS is none) or one the application added */
    if (errorclass == MPI_SUCCESS ||
        (!ferry_error_class_string(errorclass) && !ferry_user_error_is_class(errorclass)))
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Add_error_code", "invalid error class %d", errorclass);
    if (!errorcode)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Add_error_code", "NULL errorcode");
    *errorcode = ferry_user_error_code_add(errorclass);
    return MPI_SUCCESS;
}

#pragma weak MPI_Add_error_string = PMPI_Add_error_string
int PMPI_Add_error_string(int errorcode, const char *string)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Add_error_string");
    if (rc)
        return rc;
    if (!string)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Add_error_string", "NULL string");
    /* the strings of predefined codes are fixed (MPI-3.1 8.5) */
    if (ferry_user_error_set_string(errorcode, string))
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Add_error_string", "%d is not an added error code or class",
                           errorcode);
    return MPI_SUCCESS;
}

/* MPI-4.1 removes what Add_error_* added; MPICH 4.0 names them MPIX_Delete_*
 * (its header's programs call those). */
static int remove_error(int code, int what, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    int r = what == 2 ? ferry_user_error_remove_string(code) : ferry_user_error_remove(code, what);
    if (r == -2)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "error class %d still has error codes", code);
    if (r)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "%d is not an added error %s", code,
                           what == 1 ? "class" : what == 0 ? "code" : "code or class");
    return MPI_SUCCESS;
}

#pragma weak MPI_Remove_error_class = PMPI_Remove_error_class
int PMPI_Remove_error_class(int errorclass)
{
    FERRY_API_ENTER();
    return remove_error(errorclass, 1, "MPI_Remove_error_class");
}

#pragma weak MPI_Remove_error_code = PMPI_Remove_error_code
int PMPI_Remove_error_code(int errorcode)
{
    FERRY_API_ENTER();
    return remove_error(errorcode, 0, "MPI_Remove_error_code");
}

#pragma weak MPI_Remove_error_string = PMPI_Remove_error_string
int PMPI_Remove_error_string(int errorcode)
{
    FERRY_API_ENTER();
    return remove_error(errorcode, 2, "MPI_Remove_error_string");
}

#pragma weak MPIX_Delete_error_class = PMPIX_Delete_error_class
int PMPIX_Delete_error_class(int errorclass)
{
    FERRY_API_ENTER();
    return remove_error(errorclass, 1, "MPIX_Delete_error_class");
}

#pragma weak MPIX_Delete_error_code = PMPIX_Delete_error_code
int PMPIX_Delete_error_code(int errorcode)
{
    FERRY_API_ENTER();
    return remove_error(errorcode, 0, "MPIX_Delete_error_code");
}

#pragma weak MPIX_Delete_error_string = PMPIX_Delete_error_string
int PMPIX_Delete_error_string(int errorcode)
{
    FERRY_API_ENTER();
    return remove_error(errorcode, 2, "MPIX_Delete_error_string");
}
