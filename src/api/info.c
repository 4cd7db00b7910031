/* Info objects: create, set, get, delete, queries, dup, free. Errors not
 * tied to a communicator go to MPI_COMM_WORLD's error handler. MPI-4 allows
 * every Info call before MPI_Init and after MPI_Finalize, so none checks
 * the library's state. */
#include "api/check.h"
#include "core/info.h"
#include <string.h>

static int check_info(MPI_Info h, struct ferry_info **info, const char *fn)
{
    *info = ferry_info_get(h);
    if (!*info)
        return ferry_error(NULL, MPI_ERR_INFO, fn, h == MPI_INFO_NULL ? "info is MPI_INFO_NULL"
                                                                      : "invalid info handle 0x%x", (unsigned)h);
    return MPI_SUCCESS;
}

static int check_key(const char *key, const char *fn)
{
    if (!key)
        return ferry_error(NULL, MPI_ERR_INFO_KEY, fn, "key is NULL");
    size_t n = strlen(key);
    if (n == 0)
        return ferry_error(NULL, MPI_ERR_INFO_KEY, fn, "key is empty");
    /* Info_get_nthkey must be able to return the key with its NUL in a
     * buffer of MPI_MAX_INFO_KEY bytes */
    if (n >= MPI_MAX_INFO_KEY)
        return ferry_error(NULL, MPI_ERR_INFO_KEY, fn, "key of %zu characters is too long (at most %d)", n,
                           MPI_MAX_INFO_KEY - 1);
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_create = PMPI_Info_create
int PMPI_Info_create(MPI_Info *info)
{
    FERRY_API_ENTER();
    if (!info)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_create", "info pointer is NULL");
    *info = ferry_info_new()->handle;
    return MPI_SUCCESS;
}

/* MPI-4: a new info object holding what MPI_INFO_ENV would, for a program
 * that has not called MPI_Init yet (argv names the command when given). */
#pragma weak MPI_Info_create_env = PMPI_Info_create_env
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    FERRY_API_ENTER();
    if (!info)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_create_env", "info pointer is NULL");
    if (argc < 0)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_create_env", "negative argc %d", argc);
    struct ferry_info *in = ferry_info_new();
    ferry_info_fill_env(in, argc, argv, 0);
    *info = in->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_set = PMPI_Info_set
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    FERRY_API_ENTER();
    struct ferry_info *in;
    int rc = check_info(info, &in, "MPI_Info_set");
    if (rc || (rc = check_key(key, "MPI_Info_set")))
        return rc;
    if (!value)
        return ferry_error(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set", "value is NULL");
    size_t n = strlen(value);
    if (n > MPI_MAX_INFO_VAL)
        return ferry_error(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set",
                           "value of %zu characters is longer than MPI_MAX_INFO_VAL (%d)", n, MPI_MAX_INFO_VAL);
    ferry_info_set(in, key, value);
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_delete = PMPI_Info_delete
int PMPI_Info_delete(MPI_Info info, const char *key)
{
    FERRY_API_ENTER();
    struct ferry_info *in;
    int rc = check_info(info, &in, "MPI_Info_delete");
    if (rc || (rc = check_key(key, "MPI_Info_delete")))
        return rc;
    if (!ferry_info_delete(in, key))
        return ferry_error(NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "key \"%s\" is not set", key);
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get = PMPI_Info_get
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    FERRY_API_ENTER();
    struct ferry_info *in;
    int rc = check_info(info, &in, "MPI_Info_get");
    if (rc || (rc = check_key(key, "MPI_Info_get")))
        return rc;
    if (valuelen < 0)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_get", "negative valuelen %d", valuelen);
    if (!flag || (!value && valuelen > 0))
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_get", "NULL value or flag pointer");
    const char *v = ferry_info_lookup(in, key);
    *flag = v != NULL;
    if (v && value) {
        /* value holds valuelen characters and the terminating NUL */
        size_t n = strlen(v);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, v, n);
        value[n] = 0;
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    FERRY_API_ENTER();
    struct ferry_info *in;
    int rc = check_info(info, &in, "MPI_Info_get_valuelen");
    if (rc || (rc = check_key(key, "MPI_Info_get_valuelen")))
        return rc;
    if (!valuelen || !flag)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_get_valuelen", "NULL valuelen or flag pointer");
    const char *v = ferry_info_lookup(in, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

/* MPI-4.0 9.3: the value and its size in one call. On entry *buflen is the
 * size of value, NUL included; the value is copied truncated to fit (a
 * buflen of 0 writes nothing); on return *buflen is the size the whole value
 * needs, NUL included. A missing key leaves *buflen and value alone. */
#pragma weak MPI_Info_get_string = PMPI_Info_get_string
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    FERRY_API_ENTER();
    const char *fn = "MPI_Info_get_string";
    struct ferry_info *in;
    int rc = check_info(info, &in, fn);
    if (rc || (rc = check_key(key, fn)))
        return rc;
    if (!buflen || !flag)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "NULL buflen or flag pointer");
    if (*buflen < 0)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "negative buflen %d", *buflen);
    if (*buflen > 0 && !value)
        return ferry_error(NULL, MPI_ERR_ARG, fn, "value is NULL but buflen is %d", *buflen);
    const char *v = ferry_info_lookup(in, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    size_t len = strlen(v);
    if (*buflen > 0) {
        size_t n = len < (size_t)*buflen - 1 ? len : (size_t)*buflen - 1;
        memcpy(value, v, n);
        value[n] = 0;
    }
    *buflen = (int)len + 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    FERRY_API_ENTER();
    struct ferry_info *in;
    int rc = check_info(info, &in, "MPI_Info_get_nkeys");
    if (rc)
        return rc;
    if (!nkeys)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys pointer is NULL");
    *nkeys = in->n;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    FERRY_API_ENTER();
    struct ferry_info *in;
    int rc = check_info(info, &in, "MPI_Info_get_nthkey");
    if (rc)
        return rc;
    if (n < 0 || n >= in->n)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey", "key number %d out of range (%d keys)", n,
                           in->n);
    if (!key)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey", "key pointer is NULL");
    strcpy(key, in->keys[n]);
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_dup = PMPI_Info_dup
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    FERRY_API_ENTER();
    struct ferry_info *in;
    int rc = check_info(info, &in, "MPI_Info_dup");
    if (rc)
        return rc;
    if (!newinfo)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_dup", "newinfo pointer is NULL");
    *newinfo = ferry_info_dup(in)->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_free = PMPI_Info_free
int PMPI_Info_free(MPI_Info *info)
{
    FERRY_API_ENTER();
    struct ferry_info *in;
    if (!info)
        return ferry_error(NULL, MPI_ERR_ARG, "MPI_Info_free", "info pointer is NULL");
    int rc = check_info(*info, &in, "MPI_Info_free");
    if (rc)
        return rc;
    if (*info == MPI_INFO_ENV)
        return ferry_error(NULL, MPI_ERR_INFO, "MPI_Info_free", "MPI_INFO_ENV is predefined and cannot be freed");
    ferry_info_free(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
