/* Attribute caching: keyvals and the attributes attached to communicators,
 * datatypes and windows.
 *
 * Keyval handles follow MPICH's encoding: kind "direct" (0xa4000000 |
 * index) with the object type the keyval is for in bits 25-22
 * (communicator 1, datatype 3, window 8), one index space for all three.
 * Predefined keyvals (MPI_TAG_UB = 0x64400001 ...) are "builtin" handles and
 * are answered by the API layer, never stored.
 *
 * Attribute lists keep the most recently set attribute first (MPICH's
 * order): copy callbacks (Comm_dup, Type_dup) and delete callbacks (free,
 * Finalize) run from the front. Overwriting an attribute runs the delete
 * callback of the old value and keeps its place.
 *
 * Communicator attributes live in struct ferry_comm; datatype and window
 * attributes in tables here, keyed by handle, since those objects belong to
 * other layers: they call ferry_attr_type_copy/_free and ferry_attr_win_free
 * from Type_dup/Type_free and Win_free. */
#ifndef FERRY_ATTR_H
#define FERRY_ATTR_H
#include <mpi.h>

enum ferry_attr_kind { FERRY_ATTR_COMM = 1, FERRY_ATTR_TYPE = 3, FERRY_ATTR_WIN = 8 };

/* All of MPI's copy/delete callback types have this shape in the MPICH ABI
 * (every handle is an int). */
typedef MPI_Comm_copy_attr_function ferry_attr_copy_fn;
typedef MPI_Comm_delete_attr_function ferry_attr_delete_fn;

/* How an attribute value was given, MPICH's MPIR_Attr_type (ABI fact: its
 * Fortran bindings pass these numbers): bit 0 set means an integer stored
 * in the pointer-sized slot (Fortran's MPI_COMM_SET_ATTR / MPI_ATTR_PUT),
 * clear means a C pointer. */
enum ferry_attr_type { FERRY_ATTR_PTR = 0, FERRY_ATTR_AINT = 1, FERRY_ATTR_INT = 3 };
#define FERRY_ATTR_IS_INT(t) ((t) & 1)

/* A language binding's trampolines (MPICH's MPII_Attr_copy_proxy /
 * MPII_Attr_delete_proxy): when a keyval has them, its callbacks are
 * called through them, with the value's type, in that language's calling
 * convention. */
typedef int ferry_attr_copy_proxy(ferry_attr_copy_fn *user_fn, int handle, int keyval, void *extra,
                                  enum ferry_attr_type type, void *val, void **copy, int *flag);
typedef int ferry_attr_delete_proxy(ferry_attr_delete_fn *user_fn, int handle, int keyval, enum ferry_attr_type type,
                                    void *val, void *extra);

struct ferry_keyval {
    int handle;
    int refs;                    /* the user's handle (until freed) + one per attribute using it */
    int freed;                   /* MPI_*_free_keyval called: the handle no longer names it, but stays
                                    reserved while attributes use it (their callbacks get it) */
    enum ferry_attr_kind kind;
    ferry_attr_copy_fn *copy;    /* NULL: not copied */
    ferry_attr_delete_fn *del;   /* NULL: nothing to call */
    void *extra;
    ferry_attr_copy_proxy *copy_proxy;  /* NULL: C callbacks, called directly */
    ferry_attr_delete_proxy *del_proxy;
};

struct ferry_attr {
    struct ferry_keyval *kv;
    void *val;
    enum ferry_attr_type type;
    struct ferry_attr *next;
};

/* New keyval; returns its handle. */
int ferry_keyval_create(enum ferry_attr_kind kind, ferry_attr_copy_fn *copy, ferry_attr_delete_fn *del,
                        void *extra);
/* The user keyval h of the given kind, or NULL (invalid, freed, other kind, builtin). */
struct ferry_keyval *ferry_keyval_get(int h, enum ferry_attr_kind kind);
/* The same, but also a keyval freed by the user that attributes still use:
 * MPI-3.1 6.7.2 has the program remove those attributes with delete_attr
 * (and reading them is harmless), so those calls must still accept it. */
struct ferry_keyval *ferry_keyval_get_live(int h, enum ferry_attr_kind kind);
/* Is h a predefined (builtin) keyval of this kind? */
int ferry_keyval_is_builtin(int h, enum ferry_attr_kind kind);
/* The user's MPI_*_free_keyval: the keyval stays alive for attributes still using it.
 * Freeing it again while it is alive does nothing (MPICH accepts that too, and
 * a delete callback that frees its own keyval runs once per attribute). */
void ferry_keyval_free(struct ferry_keyval *kv);

/* Operations on an attribute list belonging to object `obj` (its handle,
 * passed to the callbacks). They return MPI_SUCCESS or the (nonzero) value a
 * user callback returned. */
int ferry_attr_set(struct ferry_attr **list, int obj, struct ferry_keyval *kv, void *val, enum ferry_attr_type type);
/* The attribute of kv in list, or NULL when not set. */
struct ferry_attr *ferry_attr_find(struct ferry_attr *const *list, const struct ferry_keyval *kv);
/* Run the delete callback and remove; not set is not an error. */
int ferry_attr_delete(struct ferry_attr **list, int obj, struct ferry_keyval *kv);
/* Run the delete callbacks of all attributes, front to back, removing each;
 * stops at the first failing callback (that attribute and the rest stay). */
int ferry_attr_delete_all(struct ferry_attr **list, int obj);
/* Run the copy callbacks of src's attributes (object old) into *dst (object
 * new), keeping the order. */
int ferry_attr_copy_all(struct ferry_attr *const *src, int old, struct ferry_attr **dst, int new_obj);
/* Drop a list without callbacks (objects going away for good). */
void ferry_attr_list_drop(struct ferry_attr **list);

/* Datatype and window attribute tables (see above). */
struct ferry_attr **ferry_attr_type_list(MPI_Datatype t, int create);
struct ferry_attr **ferry_attr_win_list(MPI_Win w, int create);
/* For the datatype layer: call from Type_dup (after the new type exists) and
 * Type_free (before the handle is reused). Return MPI_SUCCESS or a callback's
 * error (callers may ignore it). */
int ferry_attr_type_copy(MPI_Datatype old, MPI_Datatype new_type);
int ferry_attr_type_free(MPI_Datatype t);
/* For the window layer: call from Win_free. */
int ferry_attr_win_free(MPI_Win w);

/* Called at the start of MPI_Finalize: delete the attributes of
 * MPI_COMM_SELF (as the standard requires), then of MPI_COMM_WORLD. */
void ferry_attr_finalize(void);

#endif
