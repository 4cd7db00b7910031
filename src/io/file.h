/* MPI-IO (MPI-3.1 chapter 13): the file object and everything the entry
 * points (api/file*.c) do to a file.
 *
 * A file is one POSIX file descriptor per process. Each open file gets a
 * private communicator over the opener's group (its own context ids), so
 * the collectives the file runs never meet the application's messages.
 * Data moves with pread/pwrite from the process that asked, collective calls
 * included: they synchronise as the standard requires but do no
 * aggregation. A view (disp, etype, filetype) turns a position in the view
 * into file extents by walking the filetype's flattened program
 * (ferry_dt_segments), tiled from the displacement; memory types are packed
 * and unpacked through a bounded staging buffer.
 *
 * Layering: io calls core and coll (collectives on the private
 * communicator), never the API. Files:
 *   file.c   open/close/delete, the list of open files, errors, sizes
 *   posix.c  whole-transfer pread/pwrite, errno -> error class, locks
 *   view.c   views and the data path
 *   shfp.c   the shared file pointer */
#ifndef FERRY_IO_FILE_H
#define FERRY_IO_FILE_H
#include <mpi.h>
#include <stddef.h>
#include <sys/types.h>

struct ferry_comm;
struct ferry_datatype;
struct ferry_info;

/* The shared file pointer (shfp.c): a value in etypes of the view, kept in
 * memory when one process has the file open, else in an 8-byte lock file
 * that every process updates under an fcntl lock. */
struct ferry_shfp {
    int fd;               /* -1: the value lives in `local` */
    MPI_Offset local;
};

struct ferry_file {
    struct ferry_file *next;      /* list of open files (handle validation) */
    struct ferry_comm *comm;      /* private duplicate of the opener's communicator */
    char *filename;               /* as given to MPI_File_open */
    char *path;                   /* the POSIX path (prefixes like "ufs:" removed) */
    int amode;
    int fd;
    MPI_Errhandler errhandler;
    struct ferry_info *info;      /* hints as set (open, set_info, set_view); NULL when none */
    int atomic;

    /* the view */
    MPI_Offset disp;
    struct ferry_datatype *etype, *filetype;   /* references held */
    char datarep[MPI_MAX_DATAREP_STRING];

    MPI_Offset fp_ind;            /* individual file pointer, in etypes */
    struct ferry_shfp shfp;

    /* a split collective between its _begin and _end */
    int split_active;
    int split_err;
    MPI_Status split_status;
};

/* ---- file.c ---------------------------------------------------------------- */
/* The live file behind a handle, NULL when h is not one. */
struct ferry_file *ferry_file_lookup(MPI_File h);
/* MPI_FILE_NULL's error handler: the one File_open and File_delete use. */
MPI_Errhandler ferry_file_default_errhandler(void);
void ferry_file_set_default_errhandler(MPI_Errhandler eh);
/* Raise cls in fn on f's error handler (f NULL: MPI_FILE_NULL's). Returns cls
 * under MPI_ERRORS_RETURN, and the code a user handler left (which may be
 * MPI_SUCCESS) when it returns. */
int ferry_file_error(struct ferry_file *f, int cls, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Collective over comm (an intracommunicator). On success *out is the open
 * file; on failure every process gets the same class and a reason in why. */
int ferry_file_open(struct ferry_comm *comm, const char *filename, int amode, struct ferry_info *info,
                    struct ferry_file **out, char *why, size_t whylen);
/* Collective; frees f whatever happens. */
int ferry_file_close(struct ferry_file *f, char *why, size_t whylen);
int ferry_file_delete(const char *filename, char *why, size_t whylen);
/* The POSIX path of an MPI file name (a "ufs:"/"nfs:" prefix dropped). */
const char *ferry_file_path(const char *filename);

/* Collective helpers over f's private communicator (long long values). */
int ferry_file_allreduce(struct ferry_file *f, long long *v, int n, MPI_Op op);
int ferry_file_bcast(struct ferry_file *f, void *buf, size_t bytes, int root);
int ferry_file_exscan_sum(struct ferry_file *f, long long mine, long long *prefix);
int ferry_file_barrier(struct ferry_file *f);
/* Collective check that v is the same everywhere: MPI_ERR_NOT_SAME if not. */
int ferry_file_same(struct ferry_file *f, long long v);

int ferry_file_size(struct ferry_file *f, MPI_Offset *size);
int ferry_file_set_size(struct ferry_file *f, MPI_Offset size);     /* collective */
int ferry_file_preallocate(struct ferry_file *f, MPI_Offset size);  /* collective */
int ferry_file_sync(struct ferry_file *f);                          /* collective */

/* ---- posix.c --------------------------------------------------------------- */
/* The MPI error class for an errno value. */
int ferry_io_errno_class(int e);
/* Read up to n bytes at off, retrying short reads and EINTR; *got < n only
 * at end of file. 0 or an errno value. */
int ferry_io_pread(int fd, void *buf, size_t n, off_t off, size_t *got);
/* Write all n bytes at off. 0 or an errno value. */
int ferry_io_pwrite(int fd, const void *buf, size_t n, off_t off);
/* fcntl record lock of [off, off+len) (len 0: to the end and beyond);
 * type F_RDLCK, F_WRLCK or F_UNLCK; waits. 0 or an errno value. */
int ferry_io_lock(int fd, int type, off_t off, off_t len);

/* ---- view.c ---------------------------------------------------------------- */
/* Install a view (references taken on etype and filetype); resets the
 * individual pointer. The caller has checked the arguments. */
void ferry_view_set(struct ferry_file *f, MPI_Offset disp, struct ferry_datatype *etype,
                    struct ferry_datatype *filetype, const char *datarep);
void ferry_view_release(struct ferry_file *f);
/* Are the displacements of dt's typemap non-negative and non-decreasing (and
 * the pieces disjoint, when writable), as an etype's and a filetype's must be? */
int ferry_view_type_ok(const struct ferry_datatype *dt, int writable);
/* Move count elements of dt at buf to the file (write) or from it, starting
 * at etype offset `off` of the view. *moved: bytes moved (fewer only when a
 * read meets the end of file). 0 or an error class. */
/* A datatype an "external32" view or access can take: its elements are as
 * large in external32 as in memory. */
int ferry_view_ext32_ok(const struct ferry_datatype *dt);
int ferry_view_rw(struct ferry_file *f, int write, MPI_Offset off, void *buf, size_t count,
                  struct ferry_datatype *dt, size_t *moved, char *why, size_t whylen);
/* The absolute byte position of etype offset off of the view. */
MPI_Offset ferry_view_byte_offset(struct ferry_file *f, MPI_Offset off);
/* The etype offset of the view at the end of the file (rounded up). */
int ferry_view_eof_offset(struct ferry_file *f, MPI_Offset *off);

/* ---- shfp.c ---------------------------------------------------------------- */
/* Collective at open: the pointer starts at `initial` etypes. */
int ferry_shfp_open(struct ferry_file *f, MPI_Offset initial, char *why, size_t whylen);
void ferry_shfp_close(struct ferry_file *f);
/* *old = pointer; pointer += delta, atomically across the processes. */
int ferry_shfp_fetch_add(struct ferry_file *f, MPI_Offset delta, MPI_Offset *old);
int ferry_shfp_set(struct ferry_file *f, MPI_Offset v);

#endif
