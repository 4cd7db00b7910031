/* Error classes, codes and strings the application adds (MPI-3.1 8.5).
 *
 * Ferry's predefined error codes are their classes. Added classes and codes
 * share one numbering above MPI_ERR_LASTCODE (which the standard keeps
 * constant; the MPI_LASTUSEDCODE attribute reports the largest class), the
 * way MPICH places its dynamic codes: value FERRY_USER_ERR_BASE + i
 * is entry i of the table below, recording its class (itself for a class)
 * and its string (empty until Add_error_string sets one). */
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
    if (ntab == captab) {
        captab = captab ? 2 * captab : 16;
        tab = ferry_xrealloc(tab, (size_t)captab * sizeof *tab);
    }
    int v = FERRY_USER_ERR_BASE + ntab;
    tab[ntab++] = (struct user_err){.cls = cls < 0 ? v : cls, .text = NULL};
    return v;
}

static struct user_err *entry(int code)
{
    if (code < FERRY_USER_ERR_BASE || code - FERRY_USER_ERR_BASE >= ntab)
        return NULL;
    return &tab[code - FERRY_USER_ERR_BASE];
}

int ferry_user_error_class_add(void)
{
    return last_class = add(-1);
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
