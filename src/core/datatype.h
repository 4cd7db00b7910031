/* Datatypes: a committed type is described by its type map flattened into
 * contiguous blocks {offset, length} plus its extent. Every message is moved as
 * the "packed stream" of (buf, count, type): the concatenation of the blocks
 * of each element. Protocols pack and unpack any byte range of that stream, so
 * a message can be cut into packets at arbitrary points without a full-size
 * temporary copy. */
#ifndef FERRY_DATATYPE_H
#define FERRY_DATATYPE_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

struct ferry_dt_block {
    MPI_Aint off;      /* byte offset from the start of the element */
    size_t len;        /* bytes */
    uint32_t elem;     /* size of the basic elements in this block (for Get_elements) */
};

struct ferry_datatype {
    MPI_Datatype handle;
    const char *name;
    size_t size;               /* bytes of data per element (sum of block lengths) */
    MPI_Aint lb, extent;       /* extent = ub - lb */
    MPI_Aint true_lb, true_extent;
    int contig;                /* one block covering [true_lb, true_lb+size), size == extent */
    int nblocks;
    struct ferry_dt_block *blocks;
    int predefined;
};

void ferry_datatype_init(void);
void ferry_datatype_finalize(void);
/* NULL when h is not a valid (committed) datatype. */
struct ferry_datatype *ferry_datatype_get(MPI_Datatype h);

/* Packed-stream byte count of count elements; caller checks for overflow. */
static inline size_t ferry_dt_bytes(const struct ferry_datatype *dt, size_t count)
{
    return dt->size * count;
}
/* True when (buf, count, dt) occupies one contiguous byte range. */
static inline int ferry_dt_is_contig(const struct ferry_datatype *dt, size_t count)
{
    return dt->contig || (count <= 1 && dt->nblocks <= 1);
}
/* Start of the contiguous byte range (valid only if ferry_dt_is_contig). */
static inline const char *ferry_dt_contig_ptr(const struct ferry_datatype *dt, const void *buf)
{
    return (const char *)buf + (dt->nblocks ? dt->blocks[0].off : 0);
}

/* Copy bytes [off, off+len) of the packed stream of (buf, count, dt) to out. */
void ferry_dt_pack(const struct ferry_datatype *dt, const void *buf, size_t off, void *out, size_t len);
/* Copy len bytes from in to bytes [off, off+len) of the packed stream of (buf, count, dt). */
void ferry_dt_unpack(const struct ferry_datatype *dt, void *buf, size_t off, const void *in, size_t len);
/* Number of basic elements in the first `bytes` bytes of a packed stream;
 * MPI_UNDEFINED if bytes ends inside a basic element. */
MPI_Count ferry_dt_elements(const struct ferry_datatype *dt, size_t bytes);

#endif
