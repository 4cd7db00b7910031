/* Object tables behind direct handles; see handle.h. */
#include "core/handle.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>

void ferry_objtab_init(struct ferry_objtab *t, enum ferry_obj_type type, int first_index)
{
    memset(t, 0, sizeof *t);
    t->type = type;
    t->first_index = first_index;
    t->top = first_index;
}

/* What a table holds, for the one message a full table gives. */
static const char *type_name(enum ferry_obj_type t)
{
    switch (t) {
    case FERRY_OBJ_COMM:       return "communicators";
    case FERRY_OBJ_GROUP:      return "groups";
    case FERRY_OBJ_DATATYPE:   return "datatypes";
    case FERRY_OBJ_ERRHANDLER: return "error handlers";
    case FERRY_OBJ_OP:         return "reduction operations";
    case FERRY_OBJ_INFO:       return "info objects";
    case FERRY_OBJ_WIN:        return "windows";
    case FERRY_OBJ_KEYVAL:     return "attribute keyvals";
    case FERRY_OBJ_REQUEST:    return "requests";
    case FERRY_OBJ_SESSION:    return "sessions";
    }
    return "objects";
}

void ferry_objtab_destroy(struct ferry_objtab *t)
{
    free(t->slot);
    free(t->free_idx);
    memset(t, 0, sizeof *t);
}

int ferry_objtab_add(struct ferry_objtab *t, void *obj)
{
    int idx;
    if (t->nfree > 0) {
        idx = t->free_idx[--t->nfree];
    } else {
        if (t->top >= t->cap) {
            int ncap = t->cap ? t->cap * 2 : 64;
            if (ncap > 0x03FFFFFF)
                ferry_fatal("too many live %s (%d): the handle space is full; are they "
                            "ever completed or freed?", type_name(t->type), t->live);
            t->slot = ferry_xrealloc(t->slot, (size_t)ncap * sizeof *t->slot);
            t->free_idx = ferry_xrealloc(t->free_idx, (size_t)ncap * sizeof *t->free_idx);
            memset(t->slot + t->cap, 0, (size_t)(ncap - t->cap) * sizeof *t->slot);
            t->cap = ncap;
        }
        idx = t->top++;
    }
    t->slot[idx] = obj;
    t->live++;
    return ferry_handle_make(t->type, idx);
}

void ferry_objtab_remove(struct ferry_objtab *t, int handle)
{
    int idx = (int)FERRY_HANDLE_INDEX(handle);
    if (idx < t->first_index || idx >= t->top || !t->slot[idx])
        return;
    t->slot[idx] = NULL;
    t->free_idx[t->nfree++] = idx;
    t->live--;
}
