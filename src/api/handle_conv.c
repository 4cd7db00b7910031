/* Language interoperability and address arithmetic: the MPI functions that
 * do not return an error code (handle conversion between C and Fortran,
 * MPI_Aint_add/diff) plus the status converters.
 *
 * In Ferry's ABI every handle except MPI_File is already a Fortran INTEGER,
 * so f2c/c2f are the identity. MPI_File is a pointer; it is given a small
 * integer through a table that only grows (index + 1; 0 is MPI_FILE_NULL).
 * These functions hold no other state and are safe before MPI_Init and
 * after MPI_Finalize, as the standard allows. */
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>

#include "core/error.h"

/* ---- integer handles: identity ------------------------------------------ */

#pragma weak MPI_Comm_c2f = PMPI_Comm_c2f
MPI_Fint PMPI_Comm_c2f(MPI_Comm h) { return (MPI_Fint)h; }
#pragma weak MPI_Comm_f2c = PMPI_Comm_f2c
MPI_Comm PMPI_Comm_f2c(MPI_Fint h) { return (MPI_Comm)h; }

#pragma weak MPI_Errhandler_c2f = PMPI_Errhandler_c2f
MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler h) { return (MPI_Fint)h; }
#pragma weak MPI_Errhandler_f2c = PMPI_Errhandler_f2c
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint h) { return (MPI_Errhandler)h; }

#pragma weak MPI_Group_c2f = PMPI_Group_c2f
MPI_Fint PMPI_Group_c2f(MPI_Group h) { return (MPI_Fint)h; }
#pragma weak MPI_Group_f2c = PMPI_Group_f2c
MPI_Group PMPI_Group_f2c(MPI_Fint h) { return (MPI_Group)h; }

#pragma weak MPI_Info_c2f = PMPI_Info_c2f
MPI_Fint PMPI_Info_c2f(MPI_Info h) { return (MPI_Fint)h; }
#pragma weak MPI_Info_f2c = PMPI_Info_f2c
MPI_Info PMPI_Info_f2c(MPI_Fint h) { return (MPI_Info)h; }

#pragma weak MPI_Message_c2f = PMPI_Message_c2f
MPI_Fint PMPI_Message_c2f(MPI_Message h) { return (MPI_Fint)h; }
#pragma weak MPI_Message_f2c = PMPI_Message_f2c
MPI_Message PMPI_Message_f2c(MPI_Fint h) { return (MPI_Message)h; }

#pragma weak MPI_Op_c2f = PMPI_Op_c2f
MPI_Fint PMPI_Op_c2f(MPI_Op h) { return (MPI_Fint)h; }
#pragma weak MPI_Op_f2c = PMPI_Op_f2c
MPI_Op PMPI_Op_f2c(MPI_Fint h) { return (MPI_Op)h; }

#pragma weak MPI_Request_c2f = PMPI_Request_c2f
MPI_Fint PMPI_Request_c2f(MPI_Request h) { return (MPI_Fint)h; }
#pragma weak MPI_Request_f2c = PMPI_Request_f2c
MPI_Request PMPI_Request_f2c(MPI_Fint h) { return (MPI_Request)h; }

#pragma weak MPI_Type_c2f = PMPI_Type_c2f
MPI_Fint PMPI_Type_c2f(MPI_Datatype h) { return (MPI_Fint)h; }
#pragma weak MPI_Type_f2c = PMPI_Type_f2c
MPI_Datatype PMPI_Type_f2c(MPI_Fint h) { return (MPI_Datatype)h; }

#pragma weak MPI_Win_c2f = PMPI_Win_c2f
MPI_Fint PMPI_Win_c2f(MPI_Win h) { return (MPI_Fint)h; }
#pragma weak MPI_Win_f2c = PMPI_Win_f2c
MPI_Win PMPI_Win_f2c(MPI_Fint h) { return (MPI_Win)h; }

/* ---- MPI_File: pointer <-> table index ------------------------------------ */

static pthread_mutex_t file_table_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_File *file_table;
static int file_table_len, file_table_cap;

#pragma weak MPI_File_c2f = PMPI_File_c2f
MPI_Fint PMPI_File_c2f(MPI_File file)
{
    if (file == MPI_FILE_NULL)
        return 0;
    MPI_Fint idx = 0;
    pthread_mutex_lock(&file_table_lock);
    for (int i = 0; i < file_table_len; i++)
        if (file_table[i] == file) {
            idx = i + 1;
            break;
        }
    if (!idx) {
        if (file_table_len == file_table_cap) {
            int cap = file_table_cap ? 2 * file_table_cap : 16;
            MPI_File *t = realloc(file_table, (size_t)cap * sizeof *t);
            if (t) {
                file_table = t;
                file_table_cap = cap;
            }
        }
        if (file_table_len < file_table_cap) {
            file_table[file_table_len++] = file;
            idx = file_table_len;
        }
    }
    pthread_mutex_unlock(&file_table_lock);
    return idx; /* 0 (MPI_FILE_NULL) only if out of memory */
}

#pragma weak MPI_File_f2c = PMPI_File_f2c
MPI_File PMPI_File_f2c(MPI_Fint file)
{
    MPI_File fh = MPI_FILE_NULL;
    pthread_mutex_lock(&file_table_lock);
    if (file > 0 && file <= file_table_len)
        fh = file_table[file - 1];
    pthread_mutex_unlock(&file_table_lock);
    return fh;
}

/* ---- statuses --------------------------------------------------------------
 * The C, Fortran (INTEGER array) and Fortran 2008 statuses are the same five
 * integers in the same order. */

static int bad_status(const char *fn, const char *what)
{
    return ferry_error(NULL, MPI_ERR_ARG, fn, "%s", what);
}

#define STATUS_COPY(dst, src)                                                  \
    do {                                                                       \
        (dst)->count_lo = (src)->count_lo;                                     \
        (dst)->count_hi_and_cancelled = (src)->count_hi_and_cancelled;         \
        (dst)->MPI_SOURCE = (src)->MPI_SOURCE;                                 \
        (dst)->MPI_TAG = (src)->MPI_TAG;                                       \
        (dst)->MPI_ERROR = (src)->MPI_ERROR;                                   \
    } while (0)

static void fint_to_c(const MPI_Fint *f, MPI_Status *c)
{
    c->count_lo = f[0];
    c->count_hi_and_cancelled = f[1];
    c->MPI_SOURCE = f[MPI_F_SOURCE];
    c->MPI_TAG = f[MPI_F_TAG];
    c->MPI_ERROR = f[MPI_F_ERROR];
}

static void c_to_fint(const MPI_Status *c, MPI_Fint *f)
{
    f[0] = c->count_lo;
    f[1] = c->count_hi_and_cancelled;
    f[MPI_F_SOURCE] = c->MPI_SOURCE;
    f[MPI_F_TAG] = c->MPI_TAG;
    f[MPI_F_ERROR] = c->MPI_ERROR;
}

static int c_status_ok(const MPI_Status *s)
{
    return s && s != MPI_STATUS_IGNORE;
}

static int f_status_ok(const MPI_Fint *s)
{
    return s && s != MPI_F_STATUS_IGNORE && s != MPI_F_STATUSES_IGNORE;
}

static int f08_status_ok(const MPI_F08_status *s)
{
    return s && s != MPI_F08_STATUS_IGNORE && s != MPI_F08_STATUSES_IGNORE;
}

#pragma weak MPI_Status_c2f = PMPI_Status_c2f
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (!c_status_ok(c_status) || !f_status_ok(f_status))
        return bad_status("MPI_Status_c2f", "status is NULL or an ignore value");
    c_to_fint(c_status, f_status);
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_f2c = PMPI_Status_f2c
int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (!f_status_ok(f_status) || !c_status_ok(c_status))
        return bad_status("MPI_Status_f2c", "status is NULL or an ignore value");
    fint_to_c(f_status, c_status);
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_c2f08 = PMPI_Status_c2f08
int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    if (!c_status_ok(c_status) || !f08_status_ok(f08_status))
        return bad_status("MPI_Status_c2f08", "status is NULL or an ignore value");
    STATUS_COPY(f08_status, c_status);
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_f082c = PMPI_Status_f082c
int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    if (!f08_status_ok(f08_status) || !c_status_ok(c_status))
        return bad_status("MPI_Status_f082c", "status is NULL or an ignore value");
    STATUS_COPY(c_status, f08_status);
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_f2f08 = PMPI_Status_f2f08
int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    if (!f_status_ok(f_status) || !f08_status_ok(f08_status))
        return bad_status("MPI_Status_f2f08", "status is NULL or an ignore value");
    MPI_Status c;
    fint_to_c(f_status, &c);
    STATUS_COPY(f08_status, &c);
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_f082f = PMPI_Status_f082f
int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    if (!f08_status_ok(f08_status) || !f_status_ok(f_status))
        return bad_status("MPI_Status_f082f", "status is NULL or an ignore value");
    MPI_Status c;
    STATUS_COPY(&c, f08_status);
    c_to_fint(&c, f_status);
    return MPI_SUCCESS;
}

/* ---- address arithmetic (MPI-3.1 4.1.5) -----------------------------------
 * Addresses are plain byte addresses on the supported platforms; the sum and
 * difference are computed in unsigned arithmetic so that wrap-around is
 * defined. */

#pragma weak MPI_Aint_add = PMPI_Aint_add
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((unsigned long)base + (unsigned long)disp);
}

#pragma weak MPI_Aint_diff = PMPI_Aint_diff
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((unsigned long)addr1 - (unsigned long)addr2);
}
