/* Reduction operations: the 14 predefined MPI_Op handles (MPICH's values,
 * 0x58000001..0x5800000e) and user operations from MPI_Op_create, which get
 * direct handles (FERRY_OBJ_OP).
 *
 * A reduction works on "units": for a predefined op the unit is the basic
 * predefined type the datatype is built from (MPI_INT, MPI_DOUBLE_INT, ...;
 * ferry_dt_basic_type in core/datatype.h),
 * so a contiguous or vector type of doubles is reduced as an array of
 * doubles; for a user op the unit is the user's datatype itself, because the
 * user function expects data laid out in that type. The collectives keep
 * their temporary buffers as arrays of units in the unit's natural layout
 * (element i at i * extent) and move them with (buf, n, unit) point-to-point. */
#ifndef FERRY_OP_H
#define FERRY_OP_H
#include <mpi.h>
#include <stddef.h>

struct ferry_datatype;

enum ferry_op_kind {
    FERRY_OP_NONE = 0,
    FERRY_OP_MAX, FERRY_OP_MIN, FERRY_OP_SUM, FERRY_OP_PROD, FERRY_OP_LAND, FERRY_OP_BAND, FERRY_OP_LOR,
    FERRY_OP_BOR, FERRY_OP_LXOR, FERRY_OP_BXOR, FERRY_OP_MINLOC, FERRY_OP_MAXLOC, FERRY_OP_REPLACE,
    FERRY_OP_NO_OP,   /* = 14 = the low bits of MPI_NO_OP */
    FERRY_OP_USER,
    FERRY_OP_KINDS
};

struct ferry_op {
    MPI_Op handle;
    enum ferry_op_kind kind;
    int commute;
    MPI_User_function *fn;     /* FERRY_OP_USER: MPI_Op_create's function (int length) */
    MPI_User_function_c *fn_c; /* ... or MPI_Op_create_c's (MPI_Count length); one is NULL */
    int refs;                  /* user ops: the handle's reference plus one per operation in flight */
};

/* NULL when h is not a predefined op or a live user op. */
struct ferry_op *ferry_op_get(MPI_Op h);
/* A user op calling fn (int length) or fn_c (MPI_Count length, MPI_Op_create_c). */
struct ferry_op *ferry_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute);
void ferry_op_retain(struct ferry_op *op);
void ferry_op_release(struct ferry_op *op);
/* Op_free: the handle dies now, the object when the last operation using it ends. */
void ferry_op_free_handle(struct ferry_op *op);

/* How (count, dt) is reduced with op: the unit type and units per element of
 * dt. Returns MPI_SUCCESS, or MPI_ERR_OP when op is not defined on dt (a
 * predefined op on a type outside its class, or on a derived type that is not
 * built from a single predefined type). rma: also accept MPI_REPLACE and
 * MPI_NO_OP (accumulate functions only). */
int ferry_op_unit(const struct ferry_op *op, const struct ferry_datatype *dt, int rma,
                  struct ferry_datatype **unit, size_t *per);
/* inout[i] = in[i] op inout[i] for n units of type unit (from ferry_op_unit). */
void ferry_op_apply(const struct ferry_op *op, const void *in, void *inout, size_t n,
                    const struct ferry_datatype *unit);
/* out[i] = in[i] op in2[i]: the same as copying in2 to out, then
 * ferry_op_apply(op, in, out), in one pass where op is a predefined
 * arithmetic or bitwise op. out may be in2; otherwise it overlaps neither. */
void ferry_op_apply3(const struct ferry_op *op, const void *in, const void *in2, void *out, size_t n,
                     const struct ferry_datatype *unit);

#endif
