/* Attribute caching on communicators, datatypes and windows: keyvals, the
 * set/get/delete calls, their deprecated MPI-1 forms, and the predefined
 * attributes (MPI_TAG_UB ... on communicators, MPI_WIN_BASE ... on windows). */
#include "api/check.h"
#include "api/comm_internal.h"
#include "core/attr.h"
#include "core/handle.h"
#include <stddef.h>

/* Provided by other layers when they exist (weak: absent is fine). */
/* The error layer: the largest error code handed out (MPI_LASTUSEDCODE). */
int ferry_error_last_used_code(void) __attribute__((weak));
/* The window layer: is w a live window; the value of a predefined window
 * attribute (MPI_WIN_BASE ...), returning 1 and *val when known. */
int ferry_win_valid(MPI_Win w) __attribute__((weak));
int ferry_win_predefined_attr(MPI_Win w, int keyval, void **val) __attribute__((weak));

/* ---- keyvals ---------------------------------------------------------------- */

static int create_keyval(enum ferry_attr_kind kind, ferry_attr_copy_fn *copy, ferry_attr_delete_fn *del, int *keyval,
                         void *extra, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!keyval)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "keyval pointer is NULL");
    *keyval = ferry_keyval_create(kind, copy, del, extra);
    return MPI_SUCCESS;
}

static int free_keyval(enum ferry_attr_kind kind, int *keyval, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!keyval)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "keyval pointer is NULL");
    if (ferry_keyval_is_builtin(*keyval, kind))
        return ferry_error(NULL, MPI_ERR_KEYVAL, fn, "keyval 0x%x is predefined and cannot be freed",
                           (unsigned)*keyval);
    struct ferry_keyval *kv = ferry_keyval_get_live(*keyval, kind);
    if (!kv)
        return ferry_error(NULL, MPI_ERR_KEYVAL, fn, "invalid keyval 0x%x", (unsigned)*keyval);
    ferry_keyval_free(kv);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn,
                            int *keyval, void *extra_state)
{
    FERRY_API_ENTER();
    return create_keyval(FERRY_ATTR_COMM, copy_fn, delete_fn, keyval, extra_state, "MPI_Comm_create_keyval");
}

#pragma weak MPI_Keyval_create = PMPI_Keyval_create
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state)
{
    FERRY_API_ENTER();
    return create_keyval(FERRY_ATTR_COMM, copy_fn, delete_fn, keyval, extra_state, "MPI_Keyval_create");
}

#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn, MPI_Type_delete_attr_function *delete_fn,
                            int *keyval, void *extra_state)
{
    FERRY_API_ENTER();
    return create_keyval(FERRY_ATTR_TYPE, (ferry_attr_copy_fn *)copy_fn, (ferry_attr_delete_fn *)delete_fn, keyval,
                         extra_state, "MPI_Type_create_keyval");
}

#pragma weak MPI_Win_create_keyval = PMPI_Win_create_keyval
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn, MPI_Win_delete_attr_function *delete_fn,
                           int *keyval, void *extra_state)
{
    FERRY_API_ENTER();
    return create_keyval(FERRY_ATTR_WIN, (ferry_attr_copy_fn *)copy_fn, (ferry_attr_delete_fn *)delete_fn, keyval,
                         extra_state, "MPI_Win_create_keyval");
}

#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
int PMPI_Comm_free_keyval(int *keyval)
{
    FERRY_API_ENTER();
    return free_keyval(FERRY_ATTR_COMM, keyval, "MPI_Comm_free_keyval");
}

#pragma weak MPI_Keyval_free = PMPI_Keyval_free
int PMPI_Keyval_free(int *keyval)
{
    FERRY_API_ENTER();
    return free_keyval(FERRY_ATTR_COMM, keyval, "MPI_Keyval_free");
}

#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
int PMPI_Type_free_keyval(int *keyval)
{
    FERRY_API_ENTER();
    return free_keyval(FERRY_ATTR_TYPE, keyval, "MPI_Type_free_keyval");
}

#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval
int PMPI_Win_free_keyval(int *keyval)
{
    FERRY_API_ENTER();
    return free_keyval(FERRY_ATTR_WIN, keyval, "MPI_Win_free_keyval");
}

/* ---- communicator attributes ------------------------------------------------ */

/* Predefined communicator attributes: the values live here, Comm_get_attr
 * hands out pointers to them (as MPI requires for these keys). */
static int attr_tag_ub = FERRY_TAG_UB, attr_host = MPI_PROC_NULL, attr_io = MPI_ANY_SOURCE, attr_wtime_global = 0;
static int attr_universe, attr_appnum, attr_lastused;

static int *predefined_comm_attr(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB: return &attr_tag_ub;
    case MPI_HOST: return &attr_host;
    case MPI_IO: return &attr_io;
    case MPI_WTIME_IS_GLOBAL: return &attr_wtime_global;
    case MPI_UNIVERSE_SIZE:   /* no value unless the launcher gave one (-usize) */
        if (ferry_rt.universe_size <= 0)
            return NULL;
        attr_universe = ferry_rt.universe_size;
        return &attr_universe;
    case MPI_APPNUM:
        if (ferry_rt.appnum < 0)
            return NULL;
        attr_appnum = ferry_rt.appnum;
        return &attr_appnum;
    case MPI_LASTUSEDCODE:
        attr_lastused = ferry_error_last_used_code ? ferry_error_last_used_code() : MPI_ERR_LASTCODE;
        return &attr_lastused;
    default: return NULL;
    }
}

/* The user keyval for a set/delete on comm c, raising MPI_ERR_KEYVAL; live:
 * also one the user freed that attributes still use (ferry_keyval_get_live). */
static int comm_keyval(struct ferry_comm *c, int keyval, int live, struct ferry_keyval **kv, const char *fn)
{
    *kv = live ? ferry_keyval_get_live(keyval, FERRY_ATTR_COMM) : ferry_keyval_get(keyval, FERRY_ATTR_COMM);
    if (*kv)
        return MPI_SUCCESS;
    if (ferry_keyval_is_builtin(keyval, FERRY_ATTR_COMM))
        return ferry_error(c, MPI_ERR_KEYVAL, fn, "keyval 0x%x is predefined (read-only)", (unsigned)keyval);
    return ferry_error(c, MPI_ERR_KEYVAL, fn, "invalid communicator keyval 0x%x", (unsigned)keyval);
}

/* An attribute value handed out as the caller's language wants it (want:
 * how it reads *out). C (FERRY_ATTR_PTR) gets the stored pointer, or, for a
 * value a Fortran binding stored as an integer, a pointer to that integer;
 * Fortran (an integer type) gets the integer, or the pointer's bits. */
static void put_user_value(void *out, enum ferry_attr_type want, struct ferry_attr *a)
{
    if (want == FERRY_ATTR_PTR)
        *(void **)out = FERRY_ATTR_IS_INT(a->type) ? (void *)&a->val : a->val;
    else if (want == FERRY_ATTR_AINT)
        *(MPI_Aint *)out = (MPI_Aint)(intptr_t)a->val;
    else
        *(int *)out = (int)(intptr_t)a->val;
}

/* The same for a predefined attribute: C gets a pointer to the value. */
static void put_predefined_value(void *out, enum ferry_attr_type want, int *v)
{
    if (want == FERRY_ATTR_PTR)
        *(int **)out = v;
    else if (want == FERRY_ATTR_AINT)
        *(MPI_Aint *)out = *v;
    else
        *(int *)out = *v;
}

static int comm_set(MPI_Comm comm, int keyval, void *val, enum ferry_attr_type type, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_keyval *kv;
    int rc = check_comm(comm, &c, fn);
    if (rc || (rc = comm_keyval(c, keyval, 0, &kv, fn)))
        return rc;
    rc = ferry_attr_set(&c->attrs, c->handle, kv, val, type);
    return rc ? ferry_api_callback_error(c, rc, fn, "attribute delete") : MPI_SUCCESS;
}

static int comm_get(MPI_Comm comm, int keyval, void *val, int *flag, enum ferry_attr_type want, const char *fn)
{
    struct ferry_comm *c;
    int rc = check_comm(comm, &c, fn);
    if (rc)
        return rc;
    if (!val || !flag)
        return ferry_error(c, MPI_ERR_ARG, fn, "NULL attribute_val or flag pointer");
    if (ferry_keyval_is_builtin(keyval, FERRY_ATTR_COMM)) {
        /* MPICH's Fortran names each predefined keyval by its C value + 1 */
        int key = (keyval - 1) | 1;
        int *v = c->sessions_model && key != MPI_TAG_UB ? NULL : predefined_comm_attr(key);
        *flag = v != NULL;
        if (v)
            put_predefined_value(val, want, v);
        return MPI_SUCCESS;
    }
    struct ferry_keyval *kv = ferry_keyval_get_live(keyval, FERRY_ATTR_COMM);
    if (!kv)
        return ferry_error(c, MPI_ERR_KEYVAL, fn, "invalid communicator keyval 0x%x", (unsigned)keyval);
    struct ferry_attr *a = ferry_attr_find(&c->attrs, kv);
    *flag = a != NULL;
    if (a)
        put_user_value(val, want, a);
    return MPI_SUCCESS;
}

static int comm_delete(MPI_Comm comm, int keyval, const char *fn)
{
    struct ferry_comm *c;
    struct ferry_keyval *kv;
    int rc = check_comm(comm, &c, fn);
    if (rc || (rc = comm_keyval(c, keyval, 1, &kv, fn)))
        return rc;
    rc = ferry_attr_delete(&c->attrs, c->handle, kv);
    return rc ? ferry_api_callback_error(c, rc, fn, "attribute delete") : MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    FERRY_API_ENTER();
    return comm_set(comm, keyval, attribute_val, FERRY_ATTR_PTR, "MPI_Comm_set_attr");
}

#pragma weak MPI_Attr_put = PMPI_Attr_put
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    FERRY_API_ENTER();
    return comm_set(comm, keyval, attribute_val, FERRY_ATTR_PTR, "MPI_Attr_put");
}

#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    FERRY_API_ENTER();
    return comm_get(comm, keyval, attribute_val, flag, FERRY_ATTR_PTR, "MPI_Comm_get_attr");
}

#pragma weak MPI_Attr_get = PMPI_Attr_get
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    FERRY_API_ENTER();
    return comm_get(comm, keyval, attribute_val, flag, FERRY_ATTR_PTR, "MPI_Attr_get");
}

#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    FERRY_API_ENTER();
    return comm_delete(comm, keyval, "MPI_Comm_delete_attr");
}

#pragma weak MPI_Attr_delete = PMPI_Attr_delete
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    FERRY_API_ENTER();
    return comm_delete(comm, keyval, "MPI_Attr_delete");
}

/* ---- datatype and window attributes ------------------------------------------ */

static int check_type_handle(MPI_Datatype t, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    if (!ferry_datatype_get_any(t))
        return ferry_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype handle 0x%x", (unsigned)t);
    return MPI_SUCCESS;
}

static int check_win_handle(MPI_Win w, const char *fn)
{
    int rc = check_init(fn);
    if (rc)
        return rc;
    int ok = ferry_win_valid ? ferry_win_valid(w)
                             : w != MPI_WIN_NULL && FERRY_HANDLE_TYPE(w) == 0x8 && FERRY_HANDLE_KIND(w) != 0;
    if (!ok)
        return ferry_error(NULL, MPI_ERR_WIN, fn, "invalid window handle 0x%x", (unsigned)w);
    return MPI_SUCCESS;
}

static int obj_keyval(enum ferry_attr_kind kind, int keyval, int live, struct ferry_keyval **kv, const char *fn)
{
    *kv = live ? ferry_keyval_get_live(keyval, kind) : ferry_keyval_get(keyval, kind);
    if (*kv)
        return MPI_SUCCESS;
    return ferry_error(NULL, MPI_ERR_KEYVAL, fn, ferry_keyval_is_builtin(keyval, kind)
                                                    ? "keyval 0x%x is predefined (read-only)"
                                                    : "invalid keyval 0x%x", (unsigned)keyval);
}

static int obj_set(enum ferry_attr_kind kind, int h, int keyval, void *val, enum ferry_attr_type type, const char *fn)
{
    struct ferry_keyval *kv;
    int rc = obj_keyval(kind, keyval, 0, &kv, fn);
    if (rc)
        return rc;
    struct ferry_attr **list = kind == FERRY_ATTR_TYPE ? ferry_attr_type_list(h, 1) : ferry_attr_win_list(h, 1);
    rc = ferry_attr_set(list, h, kv, val, type);
    return rc ? ferry_api_callback_error(NULL, rc, fn, "attribute delete") : MPI_SUCCESS;
}

static int obj_get(enum ferry_attr_kind kind, int h, int keyval, void *val, int *flag, enum ferry_attr_type want,
                   const char *fn)
{
    if (!val || !flag)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "NULL attribute_val or flag pointer");
    if (kind == FERRY_ATTR_WIN && ferry_keyval_is_builtin(keyval, kind)) {
        void *v = NULL;
        *flag = ferry_win_predefined_attr ? ferry_win_predefined_attr(h, keyval, &v) : 0;
        if (*flag && want == FERRY_ATTR_PTR)
            *(void **)val = v;
        else if (*flag)
            put_user_value(val, want, &(struct ferry_attr){.val = v, .type = FERRY_ATTR_PTR});
        return MPI_SUCCESS;
    }
    struct ferry_keyval *kv = ferry_keyval_get_live(keyval, kind);
    if (!kv)
        return ferry_error(NULL, MPI_ERR_KEYVAL, fn, "invalid keyval 0x%x", (unsigned)keyval);
    struct ferry_attr **list = kind == FERRY_ATTR_TYPE ? ferry_attr_type_list(h, 0) : ferry_attr_win_list(h, 0);
    struct ferry_attr *a = ferry_attr_find(list, kv);
    *flag = a != NULL;
    if (a)
        put_user_value(val, want, a);
    return MPI_SUCCESS;
}

static int obj_delete(enum ferry_attr_kind kind, int h, int keyval, const char *fn)
{
    struct ferry_keyval *kv;
    int rc = obj_keyval(kind, keyval, 1, &kv, fn);
    if (rc)
        return rc;
    struct ferry_attr **list = kind == FERRY_ATTR_TYPE ? ferry_attr_type_list(h, 0) : ferry_attr_win_list(h, 0);
    if (!list)
        return MPI_SUCCESS;
    rc = ferry_attr_delete(list, h, kv);
    return rc ? ferry_api_callback_error(NULL, rc, fn, "attribute delete") : MPI_SUCCESS;
}

#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr
int PMPI_Type_set_attr(MPI_Datatype datatype, int keyval, void *attribute_val)
{
    FERRY_API_ENTER();
    int rc = check_type_handle(datatype, "MPI_Type_set_attr");
    return rc ? rc : obj_set(FERRY_ATTR_TYPE, datatype, keyval, attribute_val, FERRY_ATTR_PTR, "MPI_Type_set_attr");
}

#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr
int PMPI_Type_get_attr(MPI_Datatype datatype, int keyval, void *attribute_val, int *flag)
{
    FERRY_API_ENTER();
    int rc = check_type_handle(datatype, "MPI_Type_get_attr");
    return rc ? rc : obj_get(FERRY_ATTR_TYPE, datatype, keyval, attribute_val, flag, FERRY_ATTR_PTR, "MPI_Type_get_attr");
}

#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr
int PMPI_Type_delete_attr(MPI_Datatype datatype, int keyval)
{
    FERRY_API_ENTER();
    int rc = check_type_handle(datatype, "MPI_Type_delete_attr");
    return rc ? rc : obj_delete(FERRY_ATTR_TYPE, datatype, keyval, "MPI_Type_delete_attr");
}

#pragma weak MPI_Win_set_attr = PMPI_Win_set_attr
int PMPI_Win_set_attr(MPI_Win win, int keyval, void *attribute_val)
{
    FERRY_API_ENTER();
    int rc = check_win_handle(win, "MPI_Win_set_attr");
    return rc ? rc : obj_set(FERRY_ATTR_WIN, win, keyval, attribute_val, FERRY_ATTR_PTR, "MPI_Win_set_attr");
}

#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr
int PMPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    FERRY_API_ENTER();
    int rc = check_win_handle(win, "MPI_Win_get_attr");
    return rc ? rc : obj_get(FERRY_ATTR_WIN, win, keyval, attribute_val, flag, FERRY_ATTR_PTR, "MPI_Win_get_attr");
}

#pragma weak MPI_Win_delete_attr = PMPI_Win_delete_attr
int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
    FERRY_API_ENTER();
    int rc = check_win_handle(win, "MPI_Win_delete_attr");
    return rc ? rc : obj_delete(FERRY_ATTR_WIN, win, keyval, "MPI_Win_delete_attr");
}

/* ---- MPICH's entry points for its Fortran bindings ----------------------------
 * A program built with MPICH's mpif90 loads MPICH's Fortran binding library
 * (libmpichfort.so.12), which calls these internal functions of libmpich:
 * attribute calls that say how the value is typed (an integer for Fortran)
 * and keyvals whose callbacks must be called through the binding's
 * trampolines. Their names and shapes are MPICH's ABI. */

#pragma weak MPII_Keyval_set_proxy = ferry_mpii_keyval_set_proxy
void ferry_mpii_keyval_set_proxy(int keyval, ferry_attr_copy_proxy *copy, ferry_attr_delete_proxy *del)
{
    FERRY_API_ENTER();
    static const enum ferry_attr_kind kinds[] = {FERRY_ATTR_COMM, FERRY_ATTR_TYPE, FERRY_ATTR_WIN};
    for (int i = 0; i < 3; i++) {
        struct ferry_keyval *kv = ferry_keyval_get(keyval, kinds[i]);
        if (kv) {
            kv->copy_proxy = copy;
            kv->del_proxy = del;
        }
    }
}

#pragma weak MPII_Comm_set_attr = ferry_mpii_comm_set_attr
int ferry_mpii_comm_set_attr(MPI_Comm comm, int keyval, void *val, enum ferry_attr_type type)
{
    FERRY_API_ENTER();
    return comm_set(comm, keyval, val, type, "MPI_Comm_set_attr");
}

#pragma weak MPII_Comm_get_attr = ferry_mpii_comm_get_attr
int ferry_mpii_comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag, enum ferry_attr_type want)
{
    FERRY_API_ENTER();
    return comm_get(comm, keyval, val, flag, want, "MPI_Comm_get_attr");
}

#pragma weak MPII_Type_set_attr = ferry_mpii_type_set_attr
int ferry_mpii_type_set_attr(MPI_Datatype t, int keyval, void *val, enum ferry_attr_type type)
{
    FERRY_API_ENTER();
    int rc = check_type_handle(t, "MPI_Type_set_attr");
    return rc ? rc : obj_set(FERRY_ATTR_TYPE, t, keyval, val, type, "MPI_Type_set_attr");
}

#pragma weak MPII_Type_get_attr = ferry_mpii_type_get_attr
int ferry_mpii_type_get_attr(MPI_Datatype t, int keyval, void *val, int *flag, enum ferry_attr_type want)
{
    FERRY_API_ENTER();
    int rc = check_type_handle(t, "MPI_Type_get_attr");
    return rc ? rc : obj_get(FERRY_ATTR_TYPE, t, keyval, val, flag, want, "MPI_Type_get_attr");
}

#pragma weak MPII_Win_set_attr = ferry_mpii_win_set_attr
int ferry_mpii_win_set_attr(MPI_Win w, int keyval, void *val, enum ferry_attr_type type)
{
    FERRY_API_ENTER();
    int rc = check_win_handle(w, "MPI_Win_set_attr");
    return rc ? rc : obj_set(FERRY_ATTR_WIN, w, keyval, val, type, "MPI_Win_set_attr");
}

#pragma weak MPII_Win_get_attr = ferry_mpii_win_get_attr
int ferry_mpii_win_get_attr(MPI_Win w, int keyval, void *val, int *flag, enum ferry_attr_type want)
{
    FERRY_API_ENTER();
    int rc = check_win_handle(w, "MPI_Win_get_attr");
    return rc ? rc : obj_get(FERRY_ATTR_WIN, w, keyval, val, flag, want, "MPI_Win_get_attr");
}
