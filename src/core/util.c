#include "core/util.h"
#include "core/runtime.h"
#include "boot/boot.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ferry_verbose;

void *ferry_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        ferry_fatal("out of memory allocating %zu bytes", n);
    return p;
}

void *ferry_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p)
        ferry_fatal("out of memory allocating %zu x %zu bytes", n, sz);
    return p;
}

void *ferry_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        ferry_fatal("out of memory allocating %zu bytes", n);
    return q;
}

char *ferry_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(ferry_xmalloc(n), s, n);
}

void ferry_fatal(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ferry: rank %d: %s\n", ferry_rt.world_rank, msg);
    ferry_boot_abort(1, msg);
}

void ferry_log(int level, const char *fmt, ...)
{
    if (ferry_verbose < level)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ferry: rank %d: %s\n", ferry_rt.world_rank, msg);
}
