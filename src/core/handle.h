/* Handles: the integer names the application holds for Ferry's objects.
 *
 * Ferry uses MPICH's handle encoding so that binaries compiled against MPICH's
 * mpi.h work unchanged:
 *   bits 31-30  kind: 00 invalid, 01 builtin (predefined), 10 direct (ours)
 *   bits 29-26  object type (communicator 1, group 2, datatype 3, ...)
 *   bits 25-0   index
 * Predefined handles (MPI_COMM_WORLD = 0x44000000 ...) are compiled into the
 * application, so their values are fixed; objects Ferry creates at run time get
 * "direct" handles whose index points into a per-type table. */
#ifndef FERRY_HANDLE_H
#define FERRY_HANDLE_H
#include <stddef.h>
#include <stdint.h>

enum ferry_obj_type {
    FERRY_OBJ_COMM = 0x1,
    FERRY_OBJ_GROUP = 0x2,
    FERRY_OBJ_DATATYPE = 0x3,
    FERRY_OBJ_ERRHANDLER = 0x5,
    FERRY_OBJ_OP = 0x6,
    FERRY_OBJ_INFO = 0x7,
    FERRY_OBJ_WIN = 0x8,       /* MPICH: MPI_WIN_NULL is 0x20000000 */
    FERRY_OBJ_KEYVAL = 0x9,
    FERRY_OBJ_REQUEST = 0xB,
    FERRY_OBJ_SESSION = 0xE,   /* MPICH: MPI_SESSION_NULL is 0x38000000 */
};

#define FERRY_HANDLE_KIND(h)   (((uint32_t)(h)) >> 30)
#define FERRY_HANDLE_TYPE(h)   ((((uint32_t)(h)) >> 26) & 0xF)
#define FERRY_HANDLE_INDEX(h)  (((uint32_t)(h)) & 0x03FFFFFF)
#define FERRY_KIND_BUILTIN 1u
#define FERRY_KIND_DIRECT  2u

/* A growable table of objects of one type, with a free list of indices.
 * Lookups are O(1) and validate the handle (kind, type, index, slot in use),
 * which is what turns a garbage handle into MPI_ERR_COMM / _REQUEST / ... */
struct ferry_objtab {
    enum ferry_obj_type type;
    int first_index;   /* indices below this are reserved (predefined direct handles) */
    void **slot;
    int cap;
    int *free_idx;     /* stack of free indices */
    int nfree;
    int top;           /* indices [first_index, top) have been handed out at least once */
    int live;          /* objects currently registered */
};

void ferry_objtab_init(struct ferry_objtab *t, enum ferry_obj_type type, int first_index);
void ferry_objtab_destroy(struct ferry_objtab *t);
/* Store obj; returns its handle. Aborts the job on out-of-memory. */
int ferry_objtab_add(struct ferry_objtab *t, void *obj);
/* Return the object for a direct handle, NULL when the handle is not a live
 * object of this table. Inline: every request handle a completion call
 * names is looked up here. */
static inline void *ferry_objtab_get(const struct ferry_objtab *t, int handle)
{
    if (FERRY_HANDLE_KIND(handle) != FERRY_KIND_DIRECT || FERRY_HANDLE_TYPE(handle) != (uint32_t)t->type)
        return NULL;
    int idx = (int)FERRY_HANDLE_INDEX(handle);
    if (idx < t->first_index || idx >= t->top)
        return NULL;
    return t->slot[idx];
}
/* Return the index slot to the free list. */
void ferry_objtab_remove(struct ferry_objtab *t, int handle);
static inline int ferry_handle_make(enum ferry_obj_type type, int index)
{
    return (int)((FERRY_KIND_DIRECT << 30) | ((uint32_t)type << 26) | (uint32_t)index);
}

#endif
