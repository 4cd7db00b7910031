/* The MPI tool information interface (MPI_T, MPI-3.1 chapter 14).
 *
 * Control variables are Ferry's FERRY_* configuration table (core/config.c),
 * in one category "FERRY": integers as MPI_INT (MPI_COUNT when their range
 * does not fit an int), strings as MPI_CHAR. They are read-only
 * (MPI_T_SCOPE_READONLY): Ferry reads them from the environment at MPI_Init
 * and its layers size themselves from them then, so a later write could not
 * take effect; before MPI_Init they show what MPI_Init would read. Ferry
 * exports no performance variables, events or event sources yet. MPI_T calls
 * return their error codes and never invoke an error handler (MPI-3.1
 * 14.3.8). */
#include "api/check.h"
#include "core/config.h"
#include <stdlib.h>
#include <string.h>

#define CVAR_STRING_MAX 1024   /* count of a string control variable */

struct ferry_t_cvar_handle {
    int index;
};
struct ferry_t_pvar_session {
    int unused;
};

static int t_initialized;   /* MPI_T_init_thread calls not yet matched by MPI_T_finalize */

/* MPI_T's string convention (14.3.3): len 0 or no buffer: only the length
 * needed (with the NUL); else as much as fits, NUL-terminated, and the
 * length returned. */
static void t_string(const char *src, char *dst, int *len)
{
    if (!len)
        return;
    int need = (int)strlen(src) + 1;
    if (!dst || *len <= 0) {
        *len = need;
        return;
    }
    int n = *len < need ? *len : need;
    memcpy(dst, src, (size_t)n - 1);
    dst[n - 1] = 0;
    *len = n;
}

#pragma weak MPI_T_init_thread = PMPI_T_init_thread
int PMPI_T_init_thread(int required, int *provided)
{
    FERRY_API_ENTER();
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return MPI_ERR_ARG;
    if (t_initialized++ == 0 && ferry_rt.state != FERRY_INITIALIZED)
        ferry_config_load();   /* the values MPI_Init reads */
    int level = ferry_thread_level(required);   /* MPI_T calls hold the lock like any MPI call */
    if (provided)
        *provided = level;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_finalize = PMPI_T_finalize
int PMPI_T_finalize(void)
{
    FERRY_API_ENTER();
    if (!t_initialized)
        return MPI_T_ERR_NOT_INITIALIZED;
    t_initialized--;
    return MPI_SUCCESS;
}

#define T_CHECK()                             \
    do {                                      \
        if (!t_initialized)                   \
            return MPI_T_ERR_NOT_INITIALIZED; \
    } while (0)

/* ---- control variables ------------------------------------------------------------ */

static int cvar_datatype(const struct ferry_config_desc *d, MPI_Datatype *dt, int *count)
{
    *dt = d->is_string ? MPI_CHAR : d->fits_int ? MPI_INT : MPI_COUNT;
    *count = d->is_string ? CVAR_STRING_MAX : 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_cvar_get_num = PMPI_T_cvar_get_num
int PMPI_T_cvar_get_num(int *num_cvar)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!num_cvar)
        return MPI_ERR_ARG;
    *num_cvar = ferry_config_count();
    return MPI_SUCCESS;
}

#pragma weak MPI_T_cvar_get_info = PMPI_T_cvar_get_info
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (cvar_index < 0 || cvar_index >= ferry_config_count())
        return MPI_T_ERR_INVALID_INDEX;
    struct ferry_config_desc d;
    ferry_config_describe(cvar_index, &d);
    t_string(d.name, name, name_len);
    t_string(d.help, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    int count;
    if (datatype)
        cvar_datatype(&d, datatype, &count);
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_cvar_get_index = PMPI_T_cvar_get_index
int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!name || !cvar_index)
        return MPI_ERR_ARG;
    int i = ferry_config_index(name);
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *cvar_index = i;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_cvar_handle_alloc = PMPI_T_cvar_handle_alloc
int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    FERRY_API_ENTER();
    (void)obj_handle;   /* every variable binds to no object */
    T_CHECK();
    if (cvar_index < 0 || cvar_index >= ferry_config_count())
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_ERR_ARG;
    struct ferry_t_cvar_handle *h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_OUT_OF_HANDLES;
    h->index = cvar_index;
    struct ferry_config_desc d;
    MPI_Datatype dt;
    ferry_config_describe(cvar_index, &d);
    cvar_datatype(&d, &dt, count);
    *handle = h;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_cvar_handle_free = PMPI_T_cvar_handle_free
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!handle || *handle == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_cvar_read = PMPI_T_cvar_read
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (handle == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_ERR_ARG;
    struct ferry_config_desc d;
    ferry_config_describe(handle->index, &d);
    if (d.is_string) {
        int len = CVAR_STRING_MAX;
        t_string(ferry_config_string(handle->index), buf, &len);
    } else if (d.fits_int) {
        *(int *)buf = (int)ferry_config_value(handle->index);
    } else {
        *(MPI_Count *)buf = ferry_config_value(handle->index);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_T_cvar_write = PMPI_T_cvar_write
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    FERRY_API_ENTER();
    (void)buf;
    T_CHECK();
    if (handle == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_T_ERR_CVAR_SET_NEVER;   /* read at MPI_Init: set FERRY_* in the environment instead */
}

/* ---- enumerations: none (enumerated variables read as their index) ------------- */

#pragma weak MPI_T_enum_get_info = PMPI_T_enum_get_info
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    FERRY_API_ENTER();
    (void)enumtype, (void)num, (void)name, (void)name_len;
    T_CHECK();
    return MPI_T_ERR_INVALID_HANDLE;
}

#pragma weak MPI_T_enum_get_item = PMPI_T_enum_get_item
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    FERRY_API_ENTER();
    (void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
    T_CHECK();
    return MPI_T_ERR_INVALID_HANDLE;
}

/* ---- performance variables: none yet ----------------------------------------------- */

#pragma weak MPI_T_pvar_get_num = PMPI_T_pvar_get_num
int PMPI_T_pvar_get_num(int *num_pvar)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!num_pvar)
        return MPI_ERR_ARG;
    *num_pvar = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_pvar_get_info = PMPI_T_pvar_get_info
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                         int *readonly, int *continuous, int *atomic)
{
    FERRY_API_ENTER();
    (void)pvar_index, (void)name, (void)name_len, (void)verbosity, (void)var_class, (void)datatype;
    (void)enumtype, (void)desc, (void)desc_len, (void)bind, (void)readonly, (void)continuous, (void)atomic;
    T_CHECK();
    return MPI_T_ERR_INVALID_INDEX;
}

#pragma weak MPI_T_pvar_get_index = PMPI_T_pvar_get_index
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    FERRY_API_ENTER();
    (void)var_class, (void)pvar_index;
    T_CHECK();
    return name ? MPI_T_ERR_INVALID_NAME : MPI_ERR_ARG;
}

#pragma weak MPI_T_pvar_session_create = PMPI_T_pvar_session_create
int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!session)
        return MPI_ERR_ARG;
    *session = calloc(1, sizeof **session);
    return *session ? MPI_SUCCESS : MPI_T_ERR_OUT_OF_SESSIONS;
}

#pragma weak MPI_T_pvar_session_free = PMPI_T_pvar_session_free
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!session || *session == MPI_T_PVAR_SESSION_NULL)
        return MPI_T_ERR_INVALID_SESSION;
    free(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_pvar_handle_alloc = PMPI_T_pvar_handle_alloc
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle,
                             int *count)
{
    FERRY_API_ENTER();
    (void)obj_handle, (void)handle, (void)count;
    T_CHECK();
    if (session == MPI_T_PVAR_SESSION_NULL)
        return MPI_T_ERR_INVALID_SESSION;
    (void)pvar_index;
    return MPI_T_ERR_INVALID_INDEX;
}

/* No handle can exist: every use of one is invalid. */
static int no_pvar_handle(MPI_T_pvar_session session)
{
    T_CHECK();
    return session == MPI_T_PVAR_SESSION_NULL ? MPI_T_ERR_INVALID_SESSION : MPI_T_ERR_INVALID_HANDLE;
}

#pragma weak MPI_T_pvar_handle_free = PMPI_T_pvar_handle_free
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    FERRY_API_ENTER();
    (void)handle;
    return no_pvar_handle(session);
}

#pragma weak MPI_T_pvar_start = PMPI_T_pvar_start
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    FERRY_API_ENTER();
    (void)handle;
    return no_pvar_handle(session);
}

#pragma weak MPI_T_pvar_stop = PMPI_T_pvar_stop
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    FERRY_API_ENTER();
    (void)handle;
    return no_pvar_handle(session);
}

#pragma weak MPI_T_pvar_read = PMPI_T_pvar_read
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    FERRY_API_ENTER();
    (void)handle, (void)buf;
    return no_pvar_handle(session);
}

#pragma weak MPI_T_pvar_write = PMPI_T_pvar_write
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    FERRY_API_ENTER();
    (void)handle, (void)buf;
    return no_pvar_handle(session);
}

#pragma weak MPI_T_pvar_reset = PMPI_T_pvar_reset
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    FERRY_API_ENTER();
    (void)handle;
    return no_pvar_handle(session);
}

#pragma weak MPI_T_pvar_readreset = PMPI_T_pvar_readreset
int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    FERRY_API_ENTER();
    (void)handle, (void)buf;
    return no_pvar_handle(session);
}

/* ---- categories: one, "FERRY", holding every control variable -------------------- */

static const char category_name[] = "FERRY";
static const char category_desc[] = "Ferry's FERRY_* tunables (ferry_info --env prints them with their help)";

#pragma weak MPI_T_category_get_num = PMPI_T_category_get_num
int PMPI_T_category_get_num(int *num_cat)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!num_cat)
        return MPI_ERR_ARG;
    *num_cat = 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_category_get_info = PMPI_T_category_get_info
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                             int *num_pvars, int *num_categories)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (cat_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    t_string(category_name, name, name_len);
    t_string(category_desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = ferry_config_count();
    if (num_pvars)
        *num_pvars = 0;
    if (num_categories)
        *num_categories = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_category_get_index = PMPI_T_category_get_index
int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!name || !cat_index)
        return MPI_ERR_ARG;
    if (strcmp(name, category_name))
        return MPI_T_ERR_INVALID_NAME;
    *cat_index = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_category_get_cvars = PMPI_T_category_get_cvars
int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    FERRY_API_ENTER();
    T_CHECK();
    if (cat_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_ERR_ARG;
    for (int i = 0; i < len && i < ferry_config_count(); i++)
        indices[i] = i;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_category_get_pvars = PMPI_T_category_get_pvars
int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    FERRY_API_ENTER();
    (void)indices;
    T_CHECK();
    if (cat_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    return len < 0 ? MPI_ERR_ARG : MPI_SUCCESS;
}

#pragma weak MPI_T_category_get_categories = PMPI_T_category_get_categories
int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    FERRY_API_ENTER();
    (void)indices;
    T_CHECK();
    if (cat_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    return len < 0 ? MPI_ERR_ARG : MPI_SUCCESS;
}

#pragma weak MPI_T_category_changed = PMPI_T_category_changed
int PMPI_T_category_changed(int *stamp)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!stamp)
        return MPI_ERR_ARG;
    *stamp = 0;   /* the categories never change */
    return MPI_SUCCESS;
}

/* ---- MPI-4 events and event sources: none yet ------------------------------------ */

#pragma weak MPI_T_event_get_num = PMPI_T_event_get_num
int PMPI_T_event_get_num(int *num_events)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!num_events)
        return MPI_ERR_ARG;
    *num_events = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_source_get_num = PMPI_T_source_get_num
int PMPI_T_source_get_num(int *num_sources)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (!num_sources)
        return MPI_ERR_ARG;
    *num_sources = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_category_get_num_events = PMPI_T_category_get_num_events
int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    FERRY_API_ENTER();
    T_CHECK();
    if (cat_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_ERR_ARG;
    *num_events = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_category_get_events = PMPI_T_category_get_events
int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    FERRY_API_ENTER();
    return PMPI_T_category_get_pvars(cat_index, len, indices);   /* none either */
}

#pragma weak MPI_T_event_get_index = PMPI_T_event_get_index
int PMPI_T_event_get_index(const char *name, int *event_index)
{
    FERRY_API_ENTER();
    (void)event_index;
    T_CHECK();
    return name ? MPI_T_ERR_INVALID_NAME : MPI_ERR_ARG;
}

#pragma weak MPI_T_event_get_info = PMPI_T_event_get_info
int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[], int *num_elements,
                          MPI_T_enum *enumtype, MPI_Info *info, char *desc, int *desc_len, int *bind)
{
    FERRY_API_ENTER();
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc, (void)desc_len;
    (void)bind;
    T_CHECK();
    return MPI_T_ERR_INVALID_INDEX;
}

#pragma weak MPI_T_event_handle_alloc = PMPI_T_event_handle_alloc
int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    FERRY_API_ENTER();
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    T_CHECK();
    return MPI_T_ERR_INVALID_INDEX;
}

#pragma weak MPI_T_source_get_info = PMPI_T_source_get_info
int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                           MPI_Info *info)
{
    FERRY_API_ENTER();
    (void)source_index, (void)name, (void)name_len, (void)desc, (void)desc_len, (void)ordering;
    (void)ticks_per_second, (void)max_ticks, (void)info;
    T_CHECK();
    return MPI_T_ERR_INVALID_INDEX;
}

#pragma weak MPI_T_source_get_timestamp = PMPI_T_source_get_timestamp
int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    FERRY_API_ENTER();
    (void)source_index, (void)timestamp;
    T_CHECK();
    return MPI_T_ERR_INVALID_INDEX;
}

/* No registration or instance can exist: every use of one is an invalid handle. */
#define NO_EVENT_HANDLE() \
    do {                  \
        T_CHECK();        \
        return MPI_T_ERR_INVALID_HANDLE; \
    } while (0)

#pragma weak MPI_T_event_handle_free = PMPI_T_event_handle_free
int PMPI_T_event_handle_free(MPI_T_event_registration r, void *user_data, MPI_T_event_free_cb_function f)
{
    FERRY_API_ENTER();
    (void)r, (void)user_data, (void)f;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_handle_get_info = PMPI_T_event_handle_get_info
int PMPI_T_event_handle_get_info(MPI_T_event_registration r, MPI_Info *info_used)
{
    FERRY_API_ENTER();
    (void)r, (void)info_used;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_handle_set_info = PMPI_T_event_handle_set_info
int PMPI_T_event_handle_set_info(MPI_T_event_registration r, MPI_Info info)
{
    FERRY_API_ENTER();
    (void)r, (void)info;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_register_callback = PMPI_T_event_register_callback
int PMPI_T_event_register_callback(MPI_T_event_registration r, MPI_T_cb_safety cb_safety, MPI_Info info,
                                   void *user_data, MPI_T_event_cb_function event_cb_function)
{
    FERRY_API_ENTER();
    (void)r, (void)cb_safety, (void)info, (void)user_data, (void)event_cb_function;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_callback_get_info = PMPI_T_event_callback_get_info
int PMPI_T_event_callback_get_info(MPI_T_event_registration r, MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    FERRY_API_ENTER();
    (void)r, (void)cb_safety, (void)info_used;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_callback_set_info = PMPI_T_event_callback_set_info
int PMPI_T_event_callback_set_info(MPI_T_event_registration r, MPI_T_cb_safety cb_safety, MPI_Info info)
{
    FERRY_API_ENTER();
    (void)r, (void)cb_safety, (void)info;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_set_dropped_handler = PMPI_T_event_set_dropped_handler
int PMPI_T_event_set_dropped_handler(MPI_T_event_registration r, MPI_T_event_dropped_cb_function f)
{
    FERRY_API_ENTER();
    (void)r, (void)f;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_read = PMPI_T_event_read
int PMPI_T_event_read(MPI_T_event_instance e, int element_index, void *buffer)
{
    FERRY_API_ENTER();
    (void)e, (void)element_index, (void)buffer;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_copy = PMPI_T_event_copy
int PMPI_T_event_copy(MPI_T_event_instance e, void *buffer)
{
    FERRY_API_ENTER();
    (void)e, (void)buffer;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_get_timestamp = PMPI_T_event_get_timestamp
int PMPI_T_event_get_timestamp(MPI_T_event_instance e, MPI_Count *event_timestamp)
{
    FERRY_API_ENTER();
    (void)e, (void)event_timestamp;
    NO_EVENT_HANDLE();
}

#pragma weak MPI_T_event_get_source = PMPI_T_event_get_source
int PMPI_T_event_get_source(MPI_T_event_instance e, int *source_index)
{
    FERRY_API_ENTER();
    (void)e, (void)source_index;
    NO_EVENT_HANDLE();
}
