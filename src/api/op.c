/* Reduction operation objects and MPI_Reduce_local, with their MPI-4
 * large-count forms (Op_create_c: a user function taking an MPI_Count length;
 * Reduce_local_c). */
#include "api/check.h"
#include "core/op.h"
#include <stdlib.h>

/* One of fn (int length) and fn_c (MPI_Count length) is given. */
static int op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op, const char *name)
{
    int rc = check_init(name);
    if (rc)
        return rc;
    if ((!fn && !fn_c) || !op)
        return ferry_error(NULL, MPI_ERR_ARG, name, "NULL function or op pointer");
    *op = ferry_op_create(fn, fn_c, commute)->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Op_create = PMPI_Op_create
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    FERRY_API_ENTER();
    return op_create(user_fn, NULL, commute, op, "MPI_Op_create");
}

#pragma weak MPI_Op_create_c = PMPI_Op_create_c
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    FERRY_API_ENTER();
    return op_create(NULL, user_fn, commute, op, "MPI_Op_create_c");
}

#pragma weak MPI_Op_free = PMPI_Op_free
int PMPI_Op_free(MPI_Op *op)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Op_free");
    if (rc)
        return rc;
    if (!op)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Op_free", "op pointer is NULL");
    struct ferry_op *o = ferry_op_get(*op);
    if (!o)
        return ferry_error(NULL, MPI_ERR_OP, "MPI_Op_free", "invalid op handle 0x%x", (unsigned)*op);
    if (o->kind != FERRY_OP_USER)
        return ferry_error(NULL, MPI_ERR_OP, "MPI_Op_free", "cannot free a predefined op");
    ferry_op_free_handle(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Op_commutative = PMPI_Op_commutative
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    FERRY_API_ENTER();
    int rc = check_init("MPI_Op_commutative");
    if (rc)
        return rc;
    struct ferry_op *o = ferry_op_get(op);
    if (!o)
        return ferry_error(NULL, MPI_ERR_OP, "MPI_Op_commutative", "invalid op handle 0x%x", (unsigned)op);
    if (!commute)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Op_commutative", "commute pointer is NULL");
    *commute = o->commute;
    return MPI_SUCCESS;
}

/* inoutbuf = inbuf op inoutbuf, element by element, on this process only. */
static int reduce_local(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                        const char *fn)
{
    struct ferry_datatype *dt, *unit;
    size_t per;
    int rc = check_init(fn);
    if (rc || (rc = check_count(NULL, count, fn)) || (rc = check_type(NULL, datatype, &dt, fn)) ||
        (rc = check_bytes(NULL, count, dt, fn)))
        return rc;
    struct ferry_op *o = ferry_op_get(op);
    if (!o)
        return ferry_error(NULL, MPI_ERR_OP, fn, "invalid op handle 0x%x", (unsigned)op);
    if (ferry_op_unit(o, dt, 0, &unit, &per))
        return ferry_error(NULL, MPI_ERR_OP, fn, "op 0x%x is not defined for datatype %s", (unsigned)op,
                           dt->name ? dt->name : "(derived)");
    if ((rc = check_buf(NULL, inbuf, count, dt, fn)) || (rc = check_buf(NULL, inoutbuf, count, dt, fn)))
        return rc;
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return ferry_error(NULL, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
    if (inbuf == inoutbuf && count > 0 && dt->size > 0)
        return ferry_error(NULL, MPI_ERR_BUFFER, fn, "inbuf and inoutbuf are the same buffer");
    if (count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    size_t n = (size_t)count * per;
    if (unit == dt) {
        ferry_op_apply(o, inbuf, inoutbuf, n, unit);
        return MPI_SUCCESS;
    }
    /* a derived type of one basic type: unpack both into unit arrays */
    size_t bytes = ferry_dt_bytes(dt, (size_t)count), ub = (size_t)unit->extent * n;
    char *a = ferry_xmalloc(ub), *b = ferry_xmalloc(ub), *stage = ferry_xmalloc(bytes);
    ferry_dt_pack(dt, inbuf, 0, stage, bytes);
    ferry_dt_unpack(unit, a, 0, stage, bytes);
    ferry_dt_pack(dt, inoutbuf, 0, stage, bytes);
    ferry_dt_unpack(unit, b, 0, stage, bytes);
    ferry_op_apply(o, a, b, n, unit);
    ferry_dt_pack(unit, b, 0, stage, bytes);
    ferry_dt_unpack(dt, inoutbuf, 0, stage, bytes);
    free(a);
    free(b);
    free(stage);
    return MPI_SUCCESS;
}

#pragma weak MPI_Reduce_local = PMPI_Reduce_local
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    FERRY_API_ENTER();
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local");
}

#pragma weak MPI_Reduce_local_c = PMPI_Reduce_local_c
int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op)
{
    FERRY_API_ENTER();
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local_c");
}
