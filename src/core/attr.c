/* Keyvals and attribute lists (see attr.h). */
#include "core/attr.h"
#include "core/comm.h"
#include "core/handle.h"
#include "core/util.h"
#include <stdlib.h>

#define KIND_SHIFT 22
#define KIND_MASK (0xFu << KIND_SHIFT)

static struct ferry_objtab keyvals;
static int keyvals_ready;

static void ready(void)
{
    if (!keyvals_ready) {
        ferry_objtab_init(&keyvals, FERRY_OBJ_KEYVAL, 0);
        keyvals_ready = 1;
    }
}

int ferry_keyval_create(enum ferry_attr_kind kind, ferry_attr_copy_fn *copy, ferry_attr_delete_fn *del,
                        void *extra)
{
    ready();
    struct ferry_keyval *kv = ferry_xcalloc(1, sizeof *kv);
    kv->refs = 1;
    kv->kind = kind;
    kv->copy = copy;
    kv->del = del;
    kv->extra = extra;
    int h = ferry_objtab_add(&keyvals, kv);
    if (FERRY_HANDLE_INDEX(h) >= (1u << KIND_SHIFT))
        ferry_fatal("too many keyvals");
    kv->handle = (int)((uint32_t)h | ((uint32_t)kind << KIND_SHIFT));
    return kv->handle;
}

struct ferry_keyval *ferry_keyval_get_live(int h, enum ferry_attr_kind kind)
{
    ready();
    if (FERRY_HANDLE_KIND(h) != FERRY_KIND_DIRECT || (((uint32_t)h & KIND_MASK) >> KIND_SHIFT) != (uint32_t)kind)
        return NULL;
    struct ferry_keyval *kv = ferry_objtab_get(&keyvals, (int)((uint32_t)h & ~KIND_MASK));
    return kv && kv->handle == h ? kv : NULL;
}

struct ferry_keyval *ferry_keyval_get(int h, enum ferry_attr_kind kind)
{
    struct ferry_keyval *kv = ferry_keyval_get_live(h, kind);
    return kv && !kv->freed ? kv : NULL;
}

int ferry_keyval_is_builtin(int h, enum ferry_attr_kind kind)
{
    return FERRY_HANDLE_KIND(h) == FERRY_KIND_BUILTIN && FERRY_HANDLE_TYPE(h) == FERRY_OBJ_KEYVAL &&
           (((uint32_t)h & KIND_MASK) >> KIND_SHIFT) == (uint32_t)kind;
}

static void kv_release(struct ferry_keyval *kv)
{
    if (--kv->refs > 0)
        return;
    ferry_objtab_remove(&keyvals, (int)((uint32_t)kv->handle & ~KIND_MASK));
    free(kv);
}

void ferry_keyval_free(struct ferry_keyval *kv)
{
    if (kv->freed)
        return;   /* the user's reference is gone already */
    kv->freed = 1;
    kv_release(kv);
}

/* ---- attribute lists ------------------------------------------------------- */

struct ferry_attr *ferry_attr_find(struct ferry_attr *const *list, const struct ferry_keyval *kv)
{
    for (struct ferry_attr *a = list ? *list : NULL; a; a = a->next)
        if (a->kv == kv)
            return a;
    return NULL;
}

static void unlink_attr(struct ferry_attr **list, struct ferry_attr *a)
{
    for (struct ferry_attr **p = list; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            kv_release(a->kv);
            free(a);
            return;
        }
}

static int call_delete(struct ferry_attr *a, int obj)
{
    struct ferry_keyval *kv = a->kv;
    if (!kv->del)
        return MPI_SUCCESS;
    if (kv->del_proxy)
        return kv->del_proxy(kv->del, obj, kv->handle, a->type, a->val, kv->extra);
    return kv->del(obj, kv->handle, a->val, kv->extra);
}

int ferry_attr_set(struct ferry_attr **list, int obj, struct ferry_keyval *kv, void *val, enum ferry_attr_type type)
{
    struct ferry_attr *a = ferry_attr_find(list, kv);
    if (a) {
        int rc = call_delete(a, obj);
        if (rc)
            return rc;
        a->val = val;
        a->type = type;
        return MPI_SUCCESS;
    }
    a = ferry_xmalloc(sizeof *a);
    a->kv = kv;
    kv->refs++;
    a->val = val;
    a->type = type;
    a->next = *list;
    *list = a;
    return MPI_SUCCESS;
}

int ferry_attr_delete(struct ferry_attr **list, int obj, struct ferry_keyval *kv)
{
    struct ferry_attr *a = ferry_attr_find(list, kv);
    if (!a)
        return MPI_SUCCESS;
    int rc = call_delete(a, obj);
    if (rc)
        return rc;
    unlink_attr(list, a);
    return MPI_SUCCESS;
}

int ferry_attr_delete_all(struct ferry_attr **list, int obj)
{
    while (*list) {
        struct ferry_attr *a = *list;
        int rc = call_delete(a, obj);
        if (rc)
            return rc;
        unlink_attr(list, a);   /* the callback may have changed the list: unlink by identity */
    }
    return MPI_SUCCESS;
}

int ferry_attr_copy_all(struct ferry_attr *const *src, int old, struct ferry_attr **dst, int new_obj)
{
    (void)new_obj;
    struct ferry_attr **tail = dst;
    while (*tail)
        tail = &(*tail)->next;
    for (struct ferry_attr *a = *src; a; a = a->next) {
        struct ferry_keyval *kv = a->kv;
        if (!kv->copy)
            continue;
        void *out = NULL;
        int flag = 0;
        int rc = kv->copy_proxy ? kv->copy_proxy(kv->copy, old, kv->handle, kv->extra, a->type, a->val, &out, &flag)
                                : kv->copy(old, kv->handle, kv->extra, a->val, &out, &flag);
        if (rc)
            return rc;
        if (!flag)
            continue;
        struct ferry_attr *n = ferry_xmalloc(sizeof *n);
        n->kv = kv;
        kv->refs++;
        n->val = out;
        n->type = a->type;
        n->next = NULL;
        *tail = n;
        tail = &n->next;
    }
    return MPI_SUCCESS;
}

void ferry_attr_list_drop(struct ferry_attr **list)
{
    while (*list) {
        struct ferry_attr *a = *list;
        *list = a->next;
        kv_release(a->kv);
        free(a);
    }
}

/* ---- datatype and window tables ------------------------------------------- */

struct obj_entry {
    int handle;
    struct ferry_attr *attrs;
    struct obj_entry *next;
};
static struct obj_entry *type_entries, *win_entries;

static struct ferry_attr **entry_list(struct obj_entry **tab, int h, int create)
{
    for (struct obj_entry *e = *tab; e; e = e->next)
        if (e->handle == h)
            return &e->attrs;
    if (!create)
        return NULL;
    struct obj_entry *e = ferry_xcalloc(1, sizeof *e);
    e->handle = h;
    e->next = *tab;
    *tab = e;
    return &e->attrs;
}

static int entry_free(struct obj_entry **tab, int h)
{
    for (struct obj_entry **p = tab; *p; p = &(*p)->next) {
        struct obj_entry *e = *p;
        if (e->handle != h)
            continue;
        int rc = ferry_attr_delete_all(&e->attrs, h);
        if (rc)
            return rc;
        /* callbacks may have added entries in front: find e again */
        for (p = tab; *p != e; p = &(*p)->next)
            ;
        *p = e->next;
        free(e);
        return MPI_SUCCESS;
    }
    return MPI_SUCCESS;
}

struct ferry_attr **ferry_attr_type_list(MPI_Datatype t, int create)
{
    return entry_list(&type_entries, t, create);
}

struct ferry_attr **ferry_attr_win_list(MPI_Win w, int create)
{
    return entry_list(&win_entries, w, create);
}

int ferry_attr_type_copy(MPI_Datatype old, MPI_Datatype new_type)
{
    struct ferry_attr **src = entry_list(&type_entries, old, 0);
    if (!src || !*src)
        return MPI_SUCCESS;
    struct ferry_attr **dst = entry_list(&type_entries, new_type, 1);
    return ferry_attr_copy_all(src, old, dst, new_type);
}

int ferry_attr_type_free(MPI_Datatype t)
{
    return entry_free(&type_entries, t);
}

int ferry_attr_win_free(MPI_Win w)
{
    return entry_free(&win_entries, w);
}

/* Every callback runs, whatever the others return. */
static void delete_all_anyway(struct ferry_attr **list, int obj)
{
    while (*list) {
        struct ferry_attr *a = *list;
        call_delete(a, obj);
        unlink_attr(list, a);
    }
}

void ferry_attr_finalize(void)
{
    if (ferry_comm_self)
        delete_all_anyway(&ferry_comm_self->attrs, MPI_COMM_SELF);
    if (ferry_comm_world)
        delete_all_anyway(&ferry_comm_world->attrs, MPI_COMM_WORLD);
}
