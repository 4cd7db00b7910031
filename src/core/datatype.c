/* Predefined datatypes and the pack/unpack engine (see datatype.h). */
#include "core/datatype.h"
#include "core/util.h"
#include <string.h>

/* Predefined datatype handles are MPICH's: builtin ones carry their size in
 * bits 8-15 and a unique index in bits 0-7; the five pair types with padding
 * (MPI_FLOAT_INT ...) are "direct" handles 0x8c000000..4. */
#define BUILTIN_SLOTS 256
#define PAIR_SLOTS 8
static struct ferry_datatype builtin[BUILTIN_SLOTS];
static struct ferry_datatype pairs[PAIR_SLOTS];
static struct ferry_dt_block builtin_block[BUILTIN_SLOTS];
static struct ferry_dt_block pair_blocks[PAIR_SLOTS][2];

struct predefined {
    MPI_Datatype h;
    const char *name;
    size_t elem;     /* size of one basic element; 0 for MPI_LB / MPI_UB markers */
    int nelem;       /* basic elements per type (2 for MPI_2INT ...) */
};

#define T(h, e, n) {h, #h, e, n}
static const struct predefined table[] = {
    T(MPI_CHAR, 1, 1), T(MPI_SIGNED_CHAR, 1, 1), T(MPI_UNSIGNED_CHAR, 1, 1), T(MPI_BYTE, 1, 1),
    T(MPI_WCHAR, sizeof(wchar_t), 1), T(MPI_SHORT, sizeof(short), 1), T(MPI_UNSIGNED_SHORT, sizeof(short), 1),
    T(MPI_INT, sizeof(int), 1), T(MPI_UNSIGNED, sizeof(int), 1), T(MPI_LONG, sizeof(long), 1),
    T(MPI_UNSIGNED_LONG, sizeof(long), 1), T(MPI_FLOAT, sizeof(float), 1), T(MPI_DOUBLE, sizeof(double), 1),
    T(MPI_LONG_DOUBLE, sizeof(long double), 1), T(MPI_LONG_LONG_INT, sizeof(long long), 1),
    T(MPI_UNSIGNED_LONG_LONG, sizeof(long long), 1), T(MPI_PACKED, 1, 1),
    T(MPI_2INT, sizeof(int), 2),
    T(MPI_INT8_T, 1, 1), T(MPI_INT16_T, 2, 1), T(MPI_INT32_T, 4, 1), T(MPI_INT64_T, 8, 1),
    T(MPI_UINT8_T, 1, 1), T(MPI_UINT16_T, 2, 1), T(MPI_UINT32_T, 4, 1), T(MPI_UINT64_T, 8, 1),
    T(MPI_C_BOOL, sizeof(_Bool), 1), T(MPI_C_FLOAT_COMPLEX, sizeof(float _Complex), 1),
    T(MPI_C_DOUBLE_COMPLEX, sizeof(double _Complex), 1), T(MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex), 1),
    T(MPI_AINT, sizeof(MPI_Aint), 1), T(MPI_OFFSET, sizeof(MPI_Offset), 1), T(MPI_COUNT, sizeof(MPI_Count), 1),
    T(MPI_CHARACTER, 1, 1), T(MPI_INTEGER, 4, 1), T(MPI_REAL, 4, 1), T(MPI_LOGICAL, 4, 1),
    T(MPI_DOUBLE_PRECISION, 8, 1), T(MPI_COMPLEX, 8, 1), T(MPI_DOUBLE_COMPLEX, 16, 1),
    T(MPI_2INTEGER, 4, 2), T(MPI_2REAL, 4, 2), T(MPI_2DOUBLE_PRECISION, 8, 2),
    T(MPI_INTEGER1, 1, 1), T(MPI_INTEGER2, 2, 1), T(MPI_INTEGER4, 4, 1), T(MPI_INTEGER8, 8, 1),
    T(MPI_REAL4, 4, 1), T(MPI_REAL8, 8, 1), T(MPI_REAL16, 16, 1),
    T(MPI_COMPLEX8, 8, 1), T(MPI_COMPLEX16, 16, 1), T(MPI_COMPLEX32, 32, 1),
    T(MPI_CXX_BOOL, 1, 1), T(MPI_CXX_FLOAT_COMPLEX, 8, 1), T(MPI_CXX_DOUBLE_COMPLEX, 16, 1),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, 32, 1),
};
#undef T

struct pair_def {
    MPI_Datatype h;
    const char *name;
    size_t first, second_off, extent;
};
/* struct { T a; int b; } laid out by this compiler. */
#define P(h, T) {h, #h, sizeof(T), offsetof(struct { T a; int b; }, b), sizeof(struct { T a; int b; })}
static const struct pair_def pair_table[] = {
    P(MPI_FLOAT_INT, float), P(MPI_DOUBLE_INT, double), P(MPI_LONG_INT, long),
    P(MPI_SHORT_INT, short), P(MPI_LONG_DOUBLE_INT, long double),
};
#undef P

void ferry_datatype_init(void)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct predefined *p = &table[i];
        unsigned slot = (unsigned)p->h & 0xff;
        struct ferry_datatype *dt = &builtin[slot];
        if (dt->handle)
            ferry_fatal("internal: predefined datatype slot clash %s/%s", dt->name, p->name);
        size_t size = p->elem * (size_t)p->nelem;
        builtin_block[slot] = (struct ferry_dt_block){0, size, (uint32_t)p->elem};
        *dt = (struct ferry_datatype){
            .handle = p->h, .name = p->name, .size = size, .lb = 0, .extent = (MPI_Aint)size,
            .true_lb = 0, .true_extent = (MPI_Aint)size, .contig = 1, .nblocks = 1,
            .blocks = &builtin_block[slot], .predefined = 1,
        };
    }
    for (size_t i = 0; i < sizeof pair_table / sizeof pair_table[0]; i++) {
        const struct pair_def *p = &pair_table[i];
        unsigned slot = (unsigned)p->h & 0xff;
        struct ferry_datatype *dt = &pairs[slot];
        pair_blocks[slot][0] = (struct ferry_dt_block){0, p->first, (uint32_t)p->first};
        pair_blocks[slot][1] = (struct ferry_dt_block){(MPI_Aint)p->second_off, sizeof(int), sizeof(int)};
        size_t size = p->first + sizeof(int);
        int merged = p->second_off == p->first;   /* no padding between the members */
        *dt = (struct ferry_datatype){
            .handle = p->h, .name = p->name, .size = size, .lb = 0, .extent = (MPI_Aint)p->extent,
            .true_lb = 0, .true_extent = (MPI_Aint)(p->second_off + sizeof(int)),
            .contig = merged && size == p->extent, .nblocks = 2, .blocks = pair_blocks[slot],
            .predefined = 1,
        };
    }
}

void ferry_datatype_finalize(void) {}

struct ferry_datatype *ferry_datatype_get(MPI_Datatype h)
{
    uint32_t u = (uint32_t)h;
    if ((u & 0xffff0000u) == ((uint32_t)MPI_INT & 0xffff0000u)) {   /* builtin datatype kind+type */
        struct ferry_datatype *dt = &builtin[u & 0xff];
        return dt->handle == h ? dt : NULL;
    }
    if ((u & 0xffffff00u) == ((uint32_t)MPI_FLOAT_INT & 0xffffff00u) && (u & 0xff) < PAIR_SLOTS) {
        struct ferry_datatype *dt = &pairs[u & 0xff];
        return dt->handle == h ? dt : NULL;
    }
    return NULL;   /* derived datatypes arrive with the datatype issue */
}

/* Walk the packed stream range [off, off+len) and call copy for every piece
 * that lies in one block. `dir` 0 packs (user -> stream), 1 unpacks. */
static void stream_copy(const struct ferry_datatype *dt, char *user, size_t off, char *stream, size_t len, int dir)
{
    if (dt->contig) {
        /* whole stream is one range starting at the first block */
        char *base = user + (dt->nblocks ? dt->blocks[0].off : 0) + off;
        if (dir == 0)
            memcpy(stream, base, len);
        else
            memcpy(base, stream, len);
        return;
    }
    size_t elem = off / dt->size;
    size_t in_elem = off % dt->size;
    int b = 0;
    while (in_elem >= dt->blocks[b].len) {
        in_elem -= dt->blocks[b].len;
        b++;
    }
    while (len > 0) {
        const struct ferry_dt_block *blk = &dt->blocks[b];
        size_t n = FERRY_MIN(len, blk->len - in_elem);
        char *p = user + (MPI_Aint)elem * dt->extent + blk->off + (MPI_Aint)in_elem;
        if (dir == 0)
            memcpy(stream, p, n);
        else
            memcpy(p, stream, n);
        stream += n;
        len -= n;
        in_elem = 0;
        if (++b == dt->nblocks) {
            b = 0;
            elem++;
        }
    }
}

void ferry_dt_pack(const struct ferry_datatype *dt, const void *buf, size_t off, void *out, size_t len)
{
    if (len)
        stream_copy(dt, (char *)buf, off, out, len, 0);
}

void ferry_dt_unpack(const struct ferry_datatype *dt, void *buf, size_t off, const void *in, size_t len)
{
    if (len)
        stream_copy(dt, buf, off, (char *)in, len, 1);
}

MPI_Count ferry_dt_elements(const struct ferry_datatype *dt, size_t bytes)
{
    if (dt->size == 0)
        return 0;
    MPI_Count per = 0;
    for (int b = 0; b < dt->nblocks; b++)
        per += dt->blocks[b].elem ? (MPI_Count)(dt->blocks[b].len / dt->blocks[b].elem) : 0;
    MPI_Count n = (MPI_Count)(bytes / dt->size) * per;
    size_t rest = bytes % dt->size;
    for (int b = 0; b < dt->nblocks && rest > 0; b++) {
        const struct ferry_dt_block *blk = &dt->blocks[b];
        size_t take = FERRY_MIN(rest, blk->len);
        if (take % blk->elem)
            return MPI_UNDEFINED;
        n += (MPI_Count)(take / blk->elem);
        rest -= take;
    }
    return n;
}
