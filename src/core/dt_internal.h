/* Internal to the datatype engine (datatype.c, dt_flatten.c, dt_pack.c,
 * dt_ext32.c). */
#ifndef FERRY_DT_INTERNAL_H
#define FERRY_DT_INTERNAL_H
#include <stdint.h>

/* external32 conversion of one basic element (ferry_dt_run.conv) */
enum {
    FERRY_X_RAW,     /* bytes as they are */
    FERRY_X_SINT,    /* signed integer, native size -> ext size, big-endian */
    FERRY_X_UINT,    /* unsigned integer */
    FERRY_X_FLT,     /* IEEE float of the same size, big-endian */
    FERRY_X_CFLT,    /* complex: two FLT halves */
    FERRY_X_LDBL,    /* x87 long double -> IEEE quad */
    FERRY_X_CLDBL,   /* complex long double */
};

/* Addresses: buffers may be MPI_BOTTOM (NULL) with absolute displacements. */
#define FERRY_DT_ADDR(base, disp) ((char *)((uintptr_t)(base) + (uintptr_t)(MPI_Aint)(disp)))

#endif
