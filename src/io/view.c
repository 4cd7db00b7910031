/* Views (MPI-3.1 13.3) and the data path.
 *
 * A view is a stream: the packed bytes of the filetype tiled from the
 * displacement (instance k at disp + k * extent), read in typemap order.
 * An etype offset o is stream byte o * etype size. ferry_dt_segments hands
 * out the file extents of any stream range, merged where they touch, so a
 * contiguous view costs one pread/pwrite per staging buffer and a strided
 * one one per block.
 *
 * Memory side: a contiguous buffer is read or written in place; otherwise
 * the bytes go through a staging buffer of at most IO_STAGE bytes, packed
 * before a write and unpacked after a read, so no temporary of the whole
 * request is made. */
#include "io/file.h"
#include "core/datatype.h"
#include "core/util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IO_STAGE ((size_t)4 << 20)

void ferry_view_set(struct ferry_file *f, MPI_Offset disp, struct ferry_datatype *etype,
                    struct ferry_datatype *filetype, const char *datarep)
{
    ferry_dt_retain(etype);
    ferry_dt_retain(filetype);
    ferry_view_release(f);
    f->disp = disp;
    f->etype = etype;
    f->filetype = filetype;
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->fp_ind = 0;
}

void ferry_view_release(struct ferry_file *f)
{
    if (f->etype)
        ferry_dt_release(f->etype);
    if (f->filetype)
        ferry_dt_release(f->filetype);
    f->etype = f->filetype = NULL;
}

/* One pass over the file extents of a stream range, moving them between the
 * file and a contiguous buffer. */
struct seg_io {
    struct ferry_file *f;
    int write;
    char *mem;          /* next byte of the contiguous side */
    size_t moved;
    int err;            /* errno */
    MPI_Offset err_at;
};

static int seg_cb(void *ctx, MPI_Aint disp, size_t n)
{
    struct seg_io *s = ctx;
    off_t pos = (off_t)(s->f->disp + disp);
    if (s->write) {
        s->err = ferry_io_pwrite(s->f->fd, s->mem, n, pos);
        if (s->err) {
            s->err_at = pos;
            return 1;
        }
        s->mem += n;
        s->moved += n;
        return 0;
    }
    size_t got = 0;
    s->err = ferry_io_pread(s->f->fd, s->mem, n, pos, &got);
    s->mem += got;
    s->moved += got;
    if (s->err)
        s->err_at = pos;
    return s->err || got < n;   /* an error, or end of file: the rest is not there */
}

/* count elements of dt at buf <-> the view's data stream from byte pos on */
static int view_rw_native(struct ferry_file *f, int write, size_t pos, void *buf, size_t count,
                          struct ferry_datatype *dt, size_t *moved, char *why, size_t whylen)
{
    size_t total = dt->size * count;
    *moved = 0;
    if (total == 0)
        return MPI_SUCCESS;
    int contig = ferry_dt_is_contig(dt, count);
    char *direct = contig ? (char *)ferry_dt_contig_ptr(dt, buf) : NULL;
    char *stage = NULL;
    size_t cap = total;
    if (!contig) {
        cap = FERRY_MIN(total, IO_STAGE);
        stage = malloc(cap);
        if (!stage) {
            snprintf(why, whylen, "no memory for a %zu-byte staging buffer", cap);
            return MPI_ERR_NO_MEM;
        }
    }
    /* atomic mode: the whole access is one locked critical section, so
     * nobody sees half of a concurrent overlapping write (MPI-3.1 13.6.1) */
    int locked = 0;
    if (f->atomic && ferry_io_lock(f->fd, write ? F_WRLCK : F_RDLCK, 0, 0) == 0)
        locked = 1;
    int rc = MPI_SUCCESS;
    size_t done = 0;
    while (done < total) {
        size_t n = FERRY_MIN(total - done, cap);
        struct seg_io s = {.f = f, .write = write, .mem = contig ? direct + done : stage};
        if (write && !contig)
            ferry_dt_pack(dt, buf, done, stage, n);
        ferry_dt_segments(f->filetype, pos + done, n, seg_cb, &s);
        if (!write && !contig)
            ferry_dt_unpack(dt, buf, done, stage, s.moved);
        done += s.moved;
        if (s.err) {
            snprintf(why, whylen, "%s at byte %lld failed: %s", write ? "pwrite" : "pread", (long long)s.err_at,
                     strerror(s.err));
            rc = ferry_io_errno_class(s.err);
            break;
        }
        if (s.moved < n)
            break;   /* end of file (or a filetype without data) */
    }
    if (locked)
        ferry_io_lock(f->fd, F_UNLCK, 0, 0);
    free(stage);
    *moved = done;
    return rc;
}

int ferry_view_ext32_ok(const struct ferry_datatype *dt)
{
    return dt->ext32_size == dt->size;
}

/* "external32" (MPI-3.1 13.5.2): the file holds big-endian IEEE data. Ferry
 * takes views and memory types whose elements are as large in external32 as
 * in memory (every predefined C type on the LP64 ABIs Ferry runs on), so the
 * file layout is the native one and only the bytes of each element change:
 * they go through a staging buffer, converted by the external32 pack/unpack,
 * a bounded number of memory elements at a time. */
static int view_rw_ext32(struct ferry_file *f, int write, size_t pos, void *buf, size_t count,
                         struct ferry_datatype *dt, size_t *moved, char *why, size_t whylen)
{
    size_t per = dt->size;
    *moved = 0;
    if (per == 0 || count == 0)
        return MPI_SUCCESS;
    size_t k = FERRY_MAX((size_t)1, IO_STAGE / per);
    k = FERRY_MIN(k, count);
    char *conv = malloc(k * per);
    if (!conv) {
        snprintf(why, whylen, "no memory for a %zu-byte conversion buffer", k * per);
        return MPI_ERR_NO_MEM;
    }
    struct ferry_datatype *byte = ferry_datatype_get(MPI_BYTE);
    int rc = MPI_SUCCESS;
    for (size_t i = 0; i < count; i += k) {
        size_t n = FERRY_MIN(k, count - i), got = 0;
        void *at = (char *)buf + (MPI_Aint)i * dt->extent;
        if (write)
            ferry_dt_ext32_pack(dt, at, n, conv);
        rc = view_rw_native(f, write, pos + *moved, conv, n * per, byte, &got, why, whylen);
        if (!write)   /* whole elements only: a partial one at the end of the file is not delivered */
            ferry_dt_ext32_unpack(dt, at, got / per, conv);
        *moved += write ? got : got / per * per;
        if (rc || got < n * per)
            break;
    }
    free(conv);
    return rc;
}

int ferry_view_rw(struct ferry_file *f, int write, MPI_Offset off, void *buf, size_t count,
                  struct ferry_datatype *dt, size_t *moved, char *why, size_t whylen)
{
    size_t pos = (size_t)off * f->etype->size;
    if (!strcmp(f->datarep, "external32")) {
        if (!ferry_view_ext32_ok(dt)) {
            *moved = 0;
            snprintf(why, whylen, "external32: the memory datatype's elements differ in size from external32's");
            return MPI_ERR_UNSUPPORTED_DATAREP;
        }
        return view_rw_ext32(f, write, pos, buf, count, dt, moved, why, whylen);
    }
    return view_rw_native(f, write, pos, buf, count, dt, moved, why, whylen);
}

/* MPI-3.1 13.3: the displacements of an etype's and a filetype's typemap
 * are non-negative and monotonically non-decreasing, and on a file open for
 * writing the pieces may not overlap. */
struct mono {
    MPI_Aint last;
    int bad, no_overlap;
};

static int mono_cb(void *ctx, MPI_Aint disp, size_t n)
{
    struct mono *m = ctx;
    if (disp < 0 || disp < m->last) {
        m->bad = 1;
        return 1;
    }
    m->last = m->no_overlap ? disp + (MPI_Aint)n : disp;
    return 0;
}

int ferry_view_type_ok(const struct ferry_datatype *dt, int writable)
{
    struct mono m = {0, 0, writable};
    ferry_dt_segments(dt, 0, dt->size, mono_cb, &m);
    return !m.bad;
}

static int first_cb(void *ctx, MPI_Aint disp, size_t n)
{
    (void)n;
    *(MPI_Aint *)ctx = disp;
    return 1;
}

MPI_Offset ferry_view_byte_offset(struct ferry_file *f, MPI_Offset off)
{
    MPI_Aint d = 0;
    if (f->filetype->size == 0)
        return f->disp;
    ferry_dt_segments(f->filetype, (size_t)off * f->etype->size, 1, first_cb, &d);
    return f->disp + d;
}

/* Stream bytes of one filetype instance that lie below `limit` (relative). */
struct below {
    MPI_Aint limit;
    size_t bytes;
};

static int below_cb(void *ctx, MPI_Aint disp, size_t n)
{
    struct below *b = ctx;
    if (disp < b->limit)
        b->bytes += (size_t)FERRY_MIN((MPI_Aint)n, b->limit - disp);
    return 0;
}

int ferry_view_eof_offset(struct ferry_file *f, MPI_Offset *off)
{
    MPI_Offset size;
    int rc = ferry_file_size(f, &size);
    if (rc)
        return rc;
    struct ferry_datatype *ft = f->filetype;
    size_t esize = f->etype->size;
    MPI_Offset rel = size - f->disp;
    if (rel <= 0 || ft->size == 0 || esize == 0) {
        *off = 0;
        return MPI_SUCCESS;
    }
    MPI_Offset ext = ft->extent > 0 ? ft->extent : (MPI_Offset)ft->size;
    MPI_Offset tiles = rel / ext;
    struct below b = {.limit = (MPI_Aint)(rel - tiles * ext)};
    ferry_dt_segments(ft, 0, ft->size, below_cb, &b);
    MPI_Offset bytes = tiles * (MPI_Offset)ft->size + (MPI_Offset)b.bytes;
    *off = (bytes + (MPI_Offset)esize - 1) / (MPI_Offset)esize;
    return MPI_SUCCESS;
}
