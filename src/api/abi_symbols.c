/* Symbols that belong to the MPICH ABI rather than to any MPI function.
 *
 * Programs compiled against MPICH's mpi.h reference these by name: either
 * directly (the exported variables) or through macros (MPI_DUP_FN,
 * MPI_COMM_DUP_FN, MPI_TYPE_DUP_FN and MPI_WIN_DUP_FN all expand to
 * MPIR_Dup_fn). Names, types and object sizes must stay as they are: an
 * executable that refers to a variable gets a copy relocation of exactly the
 * size it was linked against.
 *
 * The sentinel values only need to be distinct, non-NULL addresses that no
 * user buffer can alias; Ferry's code compares pointers against the exported
 * variables (e.g. `weights == MPI_UNWEIGHTED`), never against the storage
 * below. */
#include <mpi.h>

/* ---- predefined attribute copy callback --------------------------------- */

/* MPI_DUP_FN and friends: copy the attribute value (a pointer-sized word)
 * into the new object. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---- topology sentinels ---------------------------------------------------- */

static int unweighted_storage;
static int weights_empty_storage;
int * const MPI_UNWEIGHTED = &unweighted_storage;
int * const MPI_WEIGHTS_EMPTY = &weights_empty_storage;

/* MPICH's mpi_f08 wrappers (in libmpichfort.so.12) cannot see the C
 * constants above: they translate the Fortran MPI_UNWEIGHTED and
 * MPI_WEIGHTS_EMPTY into the C values by reading these two pointers. The
 * binding library defines its own (zero-filled) copies, which interpose on
 * ours, and relies on the C library to fill them in -- MPICH does it during
 * initialization. Left NULL, every mpi_f08 MPI_Dist_graph_create* call with
 * MPI_UNWEIGHTED would pass weights == NULL. The stores go through the GOT,
 * so they reach whichever copy the dynamic linker bound; a constructor runs
 * after every loaded object is relocated, so the values are in place before
 * any MPI call (MPI_Init or MPI_Session_init alike). */
void *MPIR_C_MPI_UNWEIGHTED;
void *MPIR_C_MPI_WEIGHTS_EMPTY;

__attribute__((constructor)) static void ferry_init_f08_sentinels(void)
{
    MPIR_C_MPI_UNWEIGHTED = MPI_UNWEIGHTED;
    MPIR_C_MPI_WEIGHTS_EMPTY = MPI_WEIGHTS_EMPTY;
}

/* ---- Fortran status sentinels ---------------------------------------------- */

static MPI_Fint f_status_ignore_storage[MPI_F_STATUS_SIZE];
static MPI_Fint f_statuses_ignore_storage[MPI_F_STATUS_SIZE];
MPI_Fint *MPI_F_STATUS_IGNORE = f_status_ignore_storage;
MPI_Fint *MPI_F_STATUSES_IGNORE = f_statuses_ignore_storage;

/* The Fortran 2008 sentinels are objects of their own in this ABI (MPICH's
 * mpi.h declares them, and its Fortran bindings use them), plus the
 * addresses that stand for MPI_IN_PLACE and MPI_BOTTOM in those bindings. */
extern MPI_F08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ;
extern MPI_F08_status MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1];
extern int MPIR_F08_MPI_IN_PLACE;
extern int MPIR_F08_MPI_BOTTOM;
MPI_F08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ;
MPI_F08_status MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1];
int MPIR_F08_MPI_IN_PLACE;
int MPIR_F08_MPI_BOTTOM;
MPI_F08_status *MPI_F08_STATUS_IGNORE = &MPIR_F08_MPI_STATUS_IGNORE_OBJ;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = &MPIR_F08_MPI_STATUSES_IGNORE_OBJ[0];

/* ---- MPI_T ------------------------------------------------------------------ */

static char pvar_all_handles_storage;
struct ferry_t_pvar_handle * const MPI_T_PVAR_ALL_HANDLES =
    (struct ferry_t_pvar_handle *)&pvar_all_handles_storage;
