/* external32 (MPI_Pack_external): big-endian, with the standard's sizes
 * (MPI_LONG 4 bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE 16 as IEEE quad, ...).
 * Not a hot path: the description is walked one basic element at a time. */
#include "core/datatype.h"
#include "core/dt_internal.h"
#include <float.h>
#include <string.h>

static void reverse(unsigned char *dst, const unsigned char *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
}

static uint64_t load_native(const unsigned char *p, size_t n, int sign)
{
    switch (n) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return sign ? (uint64_t)(int64_t)(int8_t)v : v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return sign ? (uint64_t)(int64_t)(int16_t)v : v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return sign ? (uint64_t)(int64_t)(int32_t)v : v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void store_native(unsigned char *p, size_t n, uint64_t v)
{
    switch (n) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8);
    }
}

/* long double <-> IEEE quad, big-endian */
static void ldbl_out(unsigned char *ext, const unsigned char *native)
{
#if LDBL_MANT_DIG == 113
    reverse(ext, native, 16);
#elif defined(__SIZEOF_FLOAT128__)
    long double x;
    memcpy(&x, native, sizeof x);
    __float128 q = (__float128)x;
    unsigned char b[16];
    memcpy(b, &q, 16);
    reverse(ext, b, 16);
#else
    double d;
    long double x;
    memcpy(&x, native, sizeof x);
    d = (double)x;
    /* widen the binary64 bits to binary128 */
    uint64_t u;
    memcpy(&u, &d, 8);
    uint64_t sign = u >> 63, e = (u >> 52) & 0x7ff, m = u & ((1ull << 52) - 1);
    uint64_t qe = e == 0 ? 0 : e == 0x7ff ? 0x7fff : e - 1023 + 16383;
    uint64_t hi = sign << 63 | qe << 48 | m >> 4, lo = m << 60;
    for (int i = 0; i < 8; i++) {
        ext[i] = (unsigned char)(hi >> (56 - 8 * i));
        ext[8 + i] = (unsigned char)(lo >> (56 - 8 * i));
    }
#endif
}

static void ldbl_in(unsigned char *native, const unsigned char *ext)
{
#if LDBL_MANT_DIG == 113
    reverse(native, ext, 16);
#elif defined(__SIZEOF_FLOAT128__)
    unsigned char b[16];
    reverse(b, ext, 16);
    __float128 q;
    memcpy(&q, b, 16);
    long double x = (long double)q;
    memset(native, 0, sizeof(long double));
    memcpy(native, &x, sizeof x);
#else
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) {
        hi = hi << 8 | ext[i];
        lo = lo << 8 | ext[8 + i];
    }
    uint64_t sign = hi >> 63, qe = (hi >> 48) & 0x7fff, m = (hi & ((1ull << 48) - 1)) << 4 | lo >> 60;
    uint64_t e = qe == 0 ? 0 : qe == 0x7fff ? 0x7ff : qe - 16383 + 1023;
    uint64_t u = sign << 63 | e << 52 | m;
    double d;
    memcpy(&d, &u, 8);
    long double x = d;
    memcpy(native, &x, sizeof x);
#endif
}

/* One basic element. */
static void conv(const struct ferry_dt_run *r, unsigned char *native, unsigned char *ext, int unpack)
{
    switch (r->conv) {
    case FERRY_X_RAW:
        if (unpack)
            memcpy(native, ext, r->size);
        else
            memcpy(ext, native, r->size);
        return;
    case FERRY_X_SINT:
    case FERRY_X_UINT: {
        int sign = r->conv == FERRY_X_SINT;
        if (unpack) {
            uint64_t v = 0;
            for (int i = 0; i < r->ext; i++)
                v = v << 8 | ext[i];
            if (sign && r->ext < 8 && (ext[0] & 0x80))
                v |= ~(uint64_t)0 << (8 * r->ext);
            store_native(native, r->size, v);
        } else {
            uint64_t v = load_native(native, r->size, sign);
            for (int i = 0; i < r->ext; i++)
                ext[i] = (unsigned char)(v >> (8 * (r->ext - 1 - i)));
        }
        return;
    }
    case FERRY_X_FLT:
        if (unpack)
            reverse(native, ext, r->size);
        else
            reverse(ext, native, r->size);
        return;
    case FERRY_X_CFLT: {
        size_t h = r->size / 2;
        for (int k = 0; k < 2; k++)
            if (unpack)
                reverse(native + k * h, ext + k * h, h);
            else
                reverse(ext + k * h, native + k * h, h);
        return;
    }
    case FERRY_X_LDBL:
        if (unpack)
            ldbl_in(native, ext);
        else
            ldbl_out(ext, native);
        return;
    case FERRY_X_CLDBL:
        for (int k = 0; k < 2; k++)
            if (unpack)
                ldbl_in(native + k * 16, ext + k * 16);
            else
                ldbl_out(ext + k * 16, native + k * 16);
        return;
    }
}

static unsigned char *walk(const struct ferry_datatype *t, char *base, unsigned char *ext, int unpack)
{
    switch (t->desc) {
    case FERRY_DTD_PREDEF:
        for (int i = 0; i < t->nruns; i++) {
            const struct ferry_dt_run *r = &t->runs[i];
            for (int k = 0; k < r->count; k++) {
                conv(r, (unsigned char *)FERRY_DT_ADDR(base, r->off + k * r->size), ext, unpack);
                ext += r->ext;
            }
        }
        return ext;
    case FERRY_DTD_HVECTOR:
        for (MPI_Aint i = 0; i < t->count; i++)
            for (MPI_Aint j = 0; j < t->blocklen; j++)
                ext = walk(t->child, FERRY_DT_ADDR(base, i * t->stride + j * t->child->extent), ext, unpack);
        return ext;
    case FERRY_DTD_STRUCT:
        for (int i = 0; i < t->n; i++) {
            const struct ferry_datatype *c = ferry_dt_block_type(t, i);
            for (MPI_Count j = 0; j < t->blocklens[i]; j++)
                ext = walk(c, FERRY_DT_ADDR(base, t->disps[i] + j * c->extent), ext, unpack);
        }
        return ext;
    default:
        return walk(t->child, base, ext, unpack);
    }
}

void ferry_dt_ext32_pack(const struct ferry_datatype *dt, const void *buf, size_t count, void *ext)
{
    unsigned char *e = ext;
    for (size_t i = 0; i < count; i++)
        e = walk(dt, FERRY_DT_ADDR(buf, (MPI_Aint)i * dt->extent), e, 0);
}

void ferry_dt_ext32_unpack(const struct ferry_datatype *dt, void *buf, size_t count, const void *ext)
{
    unsigned char *e = (unsigned char *)ext;
    for (size_t i = 0; i < count; i++)
        e = walk(dt, FERRY_DT_ADDR(buf, (MPI_Aint)i * dt->extent), e, 1);
}
