/* MPICH's QMPI tool interface (QMPI_Register_tool_name and friends), which
 * MPICH's mpi.h declares and MPICH-built tools call, usually from a
 * constructor that runs before MPI_Init. Ferry attaches no QMPI tools: its
 * MPI functions do not dispatch through a chain of tools, so every call
 * answers MPI_ERR_UNSUPPORTED_OPERATION (the tool then knows it is not
 * attached and stays out of the way, as MPICH's own QMPI test expects of a
 * tool that failed to register) instead of the program failing to load on an
 * undefined symbol. No error handler runs: MPI may not be initialized yet,
 * and a tool's registration failing is not the application's error. Ferry's
 * mpi.h does not declare these; the prototypes below have MPICH's ABI
 * (QMPI_Context is a struct of one pointer, the function enum an int). */
#include <mpi.h>
#include <stddef.h>

typedef struct {
    void **storage_stack;
} QMPI_Context;

int QMPI_Register_tool_name(const char *tool_name, void (*init_function_ptr)(int tool_id));
int QMPI_Register_tool_storage(int tool_id, void *tool_storage);
int QMPI_Register_function(int calling_tool_id, int function_enum, void (*function_ptr)(void));
int QMPI_Get_function(int calling_tool_id, int function_enum, void (**function_ptr)(void), int *next_tool_id);
int QMPI_Get_tool_storage(QMPI_Context context, int tool_id, void **storage);
int QMPI_Get_calling_address(QMPI_Context context, void **address);

int QMPI_Register_tool_name(const char *tool_name, void (*init_function_ptr)(int tool_id))
{
    (void)tool_name;
    (void)init_function_ptr;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int QMPI_Register_tool_storage(int tool_id, void *tool_storage)
{
    (void)tool_id;
    (void)tool_storage;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int QMPI_Register_function(int calling_tool_id, int function_enum, void (*function_ptr)(void))
{
    (void)calling_tool_id;
    (void)function_enum;
    (void)function_ptr;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int QMPI_Get_function(int calling_tool_id, int function_enum, void (**function_ptr)(void), int *next_tool_id)
{
    (void)calling_tool_id;
    (void)function_enum;
    if (function_ptr)
        *function_ptr = NULL;
    if (next_tool_id)
        *next_tool_id = -1;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int QMPI_Get_tool_storage(QMPI_Context context, int tool_id, void **storage)
{
    (void)context;
    (void)tool_id;
    if (storage)
        *storage = NULL;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int QMPI_Get_calling_address(QMPI_Context context, void **address)
{
    (void)context;
    if (address)
        *address = NULL;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
