/* Info objects (see info.h). */
#include "core/info.h"
#include "core/handle.h"
#include "core/runtime.h"
#include "core/util.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static struct ferry_objtab infos;
static int infos_ready;
static struct ferry_info *info_env;
static int info_env_state; /* 0 unbuilt, 1 built before MPI_Init, 2 after */

static void ready(void)
{
    if (!infos_ready) {
        ferry_objtab_init(&infos, FERRY_OBJ_INFO, 0);
        infos_ready = 1;
    }
}

static struct ferry_info *alloc_info(void)
{
    return ferry_xcalloc(1, sizeof(struct ferry_info));
}

struct ferry_info *ferry_info_new(void)
{
    ready();
    struct ferry_info *info = alloc_info();
    info->handle = ferry_objtab_add(&infos, info);
    return info;
}

/* The command and its arguments: argv when the caller has it (Info_create_env
 * before MPI_Init), else /proc/self/cmdline. */
static void fill_command(struct ferry_info *info, int argc, char **argv)
{
    char buf[4096];
    size_t n = 0;
    if (argc > 0 && argv && argv[0]) {
        for (int i = 0; i < argc && argv[i]; i++) {
            size_t len = strlen(argv[i]);
            if (n + len + 1 > sizeof buf - 1)
                break;
            memcpy(buf + n, argv[i], len + 1);
            n += len + 1;
        }
    } else {
        FILE *f = fopen("/proc/self/cmdline", "r");
        if (!f)
            return;
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[n] = 0;
    if (n == 0)
        return;
    ferry_info_set(info, "command", buf);
    /* the remaining NUL-separated words, joined by spaces */
    size_t first = strlen(buf) + 1;
    if (first < n) {
        char args[MPI_MAX_INFO_VAL + 1];
        size_t m = 0;
        for (size_t i = first; i < n && m < MPI_MAX_INFO_VAL; i++)
            args[m++] = buf[i] ? buf[i] : ' ';
        while (m > 0 && args[m - 1] == ' ')
            m--;
        args[m] = 0;
        ferry_info_set(info, "argv", args);
    }
}

/* The job's size: the world's once MPI_Init has run, before it what the
 * launcher said (PMI_SIZE), else 1 (a singleton), so that an
 * Info_create_env before MPI_Init agrees with one after it. */
static int maxprocs(void)
{
    if (ferry_rt.state != FERRY_PRE_INIT && ferry_rt.world_size > 0)
        return ferry_rt.world_size;
    const char *s = getenv("PMI_SIZE");
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    return s && *s && !*end && v > 0 && v <= INT_MAX ? (int)v : 1;
}

/* What the standard suggests for MPI_INFO_ENV, where this process knows it.
 * thread_level only with_runtime (MPI_INFO_ENV after MPI_Init): an
 * Info_create_env gives the same keys whenever it is called. */
void ferry_info_fill_env(struct ferry_info *info, int argc, char **argv, int with_runtime)
{
    char buf[4096];
    fill_command(info, argc, argv);
    snprintf(buf, sizeof buf, "%d", maxprocs());
    ferry_info_set(info, "maxprocs", buf);
    if (!gethostname(buf, sizeof buf)) {
        buf[sizeof buf - 1] = 0;
        ferry_info_set(info, "host", buf);
    }
    struct utsname u;
    if (!uname(&u))
        ferry_info_set(info, "arch", u.machine);
    if (getcwd(buf, sizeof buf))
        ferry_info_set(info, "wdir", buf);
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                         "MPI_THREAD_MULTIPLE"};
    if (with_runtime && ferry_rt.thread_level >= 0 && ferry_rt.thread_level <= 3)
        ferry_info_set(info, "thread_level", levels[ferry_rt.thread_level]);
}

static void clear(struct ferry_info *info)
{
    for (int i = 0; i < info->n; i++) {
        free(info->keys[i]);
        free(info->vals[i]);
    }
    info->n = 0;
}

struct ferry_info *ferry_info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        if (!info_env) {
            info_env = alloc_info();
            info_env->handle = MPI_INFO_ENV;
        }
        /* built before MPI_Init (MPI-4 allows Info calls then): rebuilt once
         * the job's size and thread level are known */
        int state = ferry_rt.state == FERRY_INITIALIZED ? 2 : 1;
        if (info_env_state != state && info_env_state != 2) {
            clear(info_env);
            ferry_info_fill_env(info_env, 0, NULL, state == 2);
            info_env_state = state;
        }
        return info_env;
    }
    ready();
    return ferry_objtab_get(&infos, h);
}

struct ferry_info *ferry_info_dup(const struct ferry_info *src)
{
    struct ferry_info *info = ferry_info_new();
    for (int i = 0; i < src->n; i++)
        ferry_info_set(info, src->keys[i], src->vals[i]);
    return info;
}

void ferry_info_free(struct ferry_info *info)
{
    if (info == info_env)
        return;
    ferry_objtab_remove(&infos, info->handle);
    clear(info);
    free(info->keys);
    free(info->vals);
    free(info);
}

static int find(const struct ferry_info *info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (!strcmp(info->keys[i], key))
            return i;
    return -1;
}

const char *ferry_info_lookup(const struct ferry_info *info, const char *key)
{
    int i = info ? find(info, key) : -1;
    return i < 0 ? NULL : info->vals[i];
}

void ferry_info_set(struct ferry_info *info, const char *key, const char *val)
{
    int i = find(info, key);
    if (i >= 0) {
        free(info->vals[i]);
        info->vals[i] = ferry_xstrdup(val);
        return;
    }
    if (info->n == info->cap) {
        info->cap = info->cap ? 2 * info->cap : 8;
        info->keys = ferry_xrealloc(info->keys, (size_t)info->cap * sizeof(char *));
        info->vals = ferry_xrealloc(info->vals, (size_t)info->cap * sizeof(char *));
    }
    info->keys[info->n] = ferry_xstrdup(key);
    info->vals[info->n] = ferry_xstrdup(val);
    info->n++;
}

int ferry_info_delete(struct ferry_info *info, const char *key)
{
    int i = find(info, key);
    if (i < 0)
        return 0;
    free(info->keys[i]);
    free(info->vals[i]);
    memmove(info->keys + i, info->keys + i + 1, (size_t)(info->n - i - 1) * sizeof(char *));
    memmove(info->vals + i, info->vals + i + 1, (size_t)(info->n - i - 1) * sizeof(char *));
    info->n--;
    return 1;
}
