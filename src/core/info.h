/* Info objects: ordered (key, value) string pairs.
 *
 * Keys keep the order they were first set in (Info_get_nthkey); setting an
 * existing key replaces its value in place. Handles: direct 0x9c000000 |
 * index; MPI_INFO_ENV (builtin 0x5c000001) is built on first use from what
 * the process knows about its start (command, argv, maxprocs, host, arch,
 * wdir, thread_level). Other layers read hints with ferry_info_lookup. */
#ifndef FERRY_INFO_H
#define FERRY_INFO_H
#include <mpi.h>

struct ferry_info {
    MPI_Info handle;
    int n, cap;
    char **keys, **vals;
};

/* NULL when h is not a live info object (MPI_INFO_NULL included);
 * MPI_INFO_ENV is valid. */
struct ferry_info *ferry_info_get(MPI_Info h);
struct ferry_info *ferry_info_new(void);
struct ferry_info *ferry_info_dup(const struct ferry_info *src);
/* The keys of MPI_INFO_ENV into info; argv (argc > 0) names the command,
 * else /proc/self/cmdline does; thread_level only with_runtime. */
void ferry_info_fill_env(struct ferry_info *info, int argc, char **argv, int with_runtime);
void ferry_info_free(struct ferry_info *info);
/* The value of key, NULL when not set. */
const char *ferry_info_lookup(const struct ferry_info *info, const char *key);
/* Set key (replacing a value); the caller has checked the lengths. */
void ferry_info_set(struct ferry_info *info, const char *key, const char *val);
/* 1 when key was there and is now removed. */
int ferry_info_delete(struct ferry_info *info, const char *key);

#endif
