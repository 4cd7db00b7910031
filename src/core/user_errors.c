/* Error classes, codes and strings the application adds (MPI-3.1 8.5).
 *
 * Ferry's predefined error codes are their classes. Added classes and codes
 * share one numbering above MPI_ERR_LASTCODE (which the standard keeps
 * constant; the MPI_LASTUSEDCODE attribute reports the largest class), the
 * way MPICH places its dynamic codes: value FERRY_USER_ERR_BASE + i
 * is entry i of the table below, recording its class (itself for a class)
 * and its string (empty until Add_error_string sets one). Removed entries
 * (MPI-4.1 Remove_error_*, MPICH's MPIX_Delete_error_*) have class 0 and
 * are reused by the next Add, so add/remove cycles do not grow the table. */
#include "core/error.h"
#include "core/util.h"
#include <stdlib.h>
#include <string.h>

#define FERRY_USER_ERR_BASE (MPI_ERR_LASTCODE + 1)

struct user_err {
    int cls;
    char *text;
};
static struct user_err *tab;
static int ntab, captab;
static int last_class = MPI_ERR_LASTCODE;   /* the largest class: MPI_LASTUSEDCODE (8.5) */

static int add(int cls)
{
    int i = 0;
    while (i < ntab && tab[i].cls != 0)
        i++;
    if (i == ntab) {
        if (ntab == captab) {
            captab = captab ? 2 * captab : 16;
            tab = ferry_xrealloc(tab, (size_t)captab * sizeof *tab);
        }
        ntab++;
    }
    int v = FERRY_USER_ERR_BASE + i;
    tab[i] = (struct user_err){.cls = cls < 0 ? v : cls, .text = NULL};
    return v;
}

static struct user_err *entry(int code)
{
    if (code < FERRY_USER_ERR_BASE || code - FERRY_USER_ERR_BASE >= ntab || tab[code - FERRY_USER_ERR_BASE].cls == 0)
        return NULL;
    return &tab[code - FERRY_USER_ERR_BASE];
}

int ferry_user_error_class_add(void)
{
    int v = add(-1);
    if (v > last_class)
        last_class = v;
    return v;
}

/* MPI_LASTUSEDCODE after a removal: the largest live class. */
static void recompute_last_class(void)
{
    last_class = MPI_ERR_LASTCODE;
    for (int i = 0; i < ntab; i++)
        if (tab[i].cls == FERRY_USER_ERR_BASE + i)
            last_class = FERRY_USER_ERR_BASE + i;
}

int ferry_user_error_remove(int code, int want_class)
{
    struct user_err *e = entry(code);
    if (!e || (e->cls == code) != want_class)
        return -1;
    if (want_class)
        for (int i = 0; i < ntab; i++)
            if (tab[i].cls == code && FERRY_USER_ERR_BASE + i != code)
                return -2;                    /* codes of the class remain */
    free(e->text);
    *e = (struct user_err){0};
    while (ntab > 0 && tab[ntab - 1].cls == 0)
        ntab--;
    if (want_class)
        recompute_last_class();
    return 0;
}

int ferry_user_error_remove_string(int code)
{
    struct user_err *e = entry(code);
    if (!e)
        return -1;
    free(e->text);
    e->text = NULL;
    return 0;
}

int ferry_user_error_code_add(int cls)
{
    return add(cls);
}

int ferry_error_class_of(int code)
{
    if (ferry_error_class_string(code))
        return code;
    struct user_err *e = entry(code);
    return e ? e->cls : -1;
}

int ferry_user_error_is_class(int cls)
{
    struct user_err *e = entry(cls);
    return e && e->cls == cls;
}

int ferry_user_error_set_string(int code, const char *s)
{
    struct user_err *e = entry(code);
    if (!e)
        return -1;
    free(e->text);
    size_t n = strnlen(s, MPI_MAX_ERROR_STRING - 1);
    e->text = ferry_xmalloc(n + 1);
    memcpy(e->text, s, n);
    e->text[n] = 0;
    return 0;
}

const char *ferry_user_error_string(int code)
{
    struct user_err *e = entry(code);
    return e ? (e->text ? e->text : "") : NULL;
}

int ferry_error_last_used_code(void)
{
    return last_class;
}

void ferry_user_errors_finalize(void)
{
    for (int i = 0; i < ntab; i++)
        free(tab[i].text);
    free(tab);
    tab = NULL;
    ntab = captab = 0;
    last_class = MPI_ERR_LASTCODE;
}
