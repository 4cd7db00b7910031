/* pmi_wire: PMI-1 wire-format parser and formatter. See pmi_wire.h. */
#include "boot/pmi_wire.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int is_token_byte(unsigned char c) { return c > 0x20 && c < 0x7f; }

int pmi_wire_parse(struct pmi_wire_msg *m, const char *data, size_t len)
{
    m->npairs = 0;
    m->buf[0] = '\0';
    if (len > 0 && data[len - 1] == '\n')
        len--;
    if (len > PMI_WIRE_LINE_MAX - 1)
        return PMI_WIRE_ETOOLONG;

    /* Validate every byte first, so the tokenizer only sees ' ' and
     * printable token bytes. */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c != ' ' && !is_token_byte(c))
            return PMI_WIRE_EBADCHAR;
    }
    /* len <= LINE_MAX - 1, so the copy and its NUL fit in buf. */
    memcpy(m->buf, data, len);
    m->buf[len] = '\0';

    int n = 0;
    size_t i = 0;
    for (;;) {
        while (i < len && m->buf[i] == ' ')
            i++;
        if (i >= len)
            break;
        size_t tok = i;
        while (i < len && m->buf[i] != ' ')
            i++;
        size_t end = i;                         /* token is [tok, end) */
        char *eq = memchr(m->buf + tok, '=', end - tok);
        if (!eq) { m->npairs = 0; return PMI_WIRE_ENOEQ; }
        if (eq == m->buf + tok) { m->npairs = 0; return PMI_WIRE_ENOKEY; }
        if (n == PMI_WIRE_PAIRS_MAX) { m->npairs = 0; return PMI_WIRE_ETOOMANY; }
        *eq = '\0';
        m->buf[end] = '\0';   /* end < len: a space; end == len: already NUL */
        m->koff[n] = (unsigned short)tok;
        m->voff[n] = (unsigned short)(eq + 1 - m->buf);
        for (int j = 0; j < n; j++)
            if (strcmp(m->buf + m->koff[j], m->buf + tok) == 0) {
                m->npairs = 0;
                return PMI_WIRE_EDUPKEY;
            }
        n++;
        i = end + 1;
    }
    if (n == 0)
        return PMI_WIRE_EEMPTY;
    m->npairs = n;
    return PMI_WIRE_OK;
}

const char *pmi_wire_get(const struct pmi_wire_msg *m, const char *key)
{
    for (int i = 0; i < m->npairs; i++)
        if (strcmp(pmi_wire_key(m, i), key) == 0)
            return pmi_wire_val(m, i);
    return NULL;
}

const char *pmi_wire_cmd(const struct pmi_wire_msg *m)
{
    return pmi_wire_get(m, "cmd");
}

int pmi_wire_get_long(const struct pmi_wire_msg *m, const char *key, long *out)
{
    const char *v = pmi_wire_get(m, key);
    if (!v || !*v)
        return -1;
    const char *p = v;
    if (*p == '-' || *p == '+')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

int pmi_wire_valid_key(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!is_token_byte((unsigned char)*s) || *s == '=')
            return 0;
    return 1;
}

int pmi_wire_valid_value(const char *s)
{
    if (!s)
        return 0;
    for (; *s; s++)
        if (!is_token_byte((unsigned char)*s))
            return 0;
    return 1;
}

static int key_status(const char *k)
{
    if (!k || !*k)
        return PMI_WIRE_ENOKEY;
    return pmi_wire_valid_key(k) ? PMI_WIRE_OK : PMI_WIRE_EBADCHAR;
}

int pmi_wire_format(char *buf, size_t cap, int npairs,
                    const char *const *keys, const char *const *vals)
{
    if (cap > 0)
        buf[0] = '\0';
    if (npairs <= 0)
        return PMI_WIRE_EEMPTY;
    if (npairs > PMI_WIRE_PAIRS_MAX)
        return PMI_WIRE_ETOOMANY;
    size_t total = 0;
    for (int i = 0; i < npairs; i++) {
        int st = key_status(keys[i]);
        if (st != PMI_WIRE_OK)
            return st;
        if (!pmi_wire_valid_value(vals[i]))
            return PMI_WIRE_EBADCHAR;
        for (int j = 0; j < i; j++)
            if (strcmp(keys[j], keys[i]) == 0)
                return PMI_WIRE_EDUPKEY;
        /* [' '] key '=' value */
        total += (i ? 1 : 0) + strlen(keys[i]) + 1 + strlen(vals[i]);
        if (total > PMI_WIRE_LINE_MAX)
            return PMI_WIRE_ETOOLONG;
    }
    /* the line plus '\n' must fit in LINE_MAX, and plus NUL in cap */
    if (total + 1 > PMI_WIRE_LINE_MAX || total + 2 > cap)
        return PMI_WIRE_ETOOLONG;
    size_t pos = 0;
    for (int i = 0; i < npairs; i++) {
        size_t kl = strlen(keys[i]), vl = strlen(vals[i]);
        if (i)
            buf[pos++] = ' ';
        memcpy(buf + pos, keys[i], kl);
        pos += kl;
        buf[pos++] = '=';
        memcpy(buf + pos, vals[i], vl);
        pos += vl;
    }
    buf[pos++] = '\n';
    buf[pos] = '\0';
    return (int)pos;
}

int pmi_wire_formatl(char *buf, size_t cap, ...)
{
    const char *keys[PMI_WIRE_PAIRS_MAX], *vals[PMI_WIRE_PAIRS_MAX];
    int n = 0;
    va_list ap;
    va_start(ap, cap);
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (!k)
            break;
        const char *v = va_arg(ap, const char *);
        if (n == PMI_WIRE_PAIRS_MAX) {
            va_end(ap);
            if (cap > 0)
                buf[0] = '\0';
            return PMI_WIRE_ETOOMANY;
        }
        keys[n] = k;
        vals[n] = v;
        n++;
    }
    va_end(ap);
    return pmi_wire_format(buf, cap, n, keys, vals);
}

int pmi_wire_format_msg(char *buf, size_t cap, const struct pmi_wire_msg *m)
{
    const char *keys[PMI_WIRE_PAIRS_MAX], *vals[PMI_WIRE_PAIRS_MAX];
    int n = m->npairs;
    if (n < 0 || n > PMI_WIRE_PAIRS_MAX)
        return PMI_WIRE_ETOOMANY;
    for (int i = 0; i < n; i++) {
        keys[i] = pmi_wire_key(m, i);
        vals[i] = pmi_wire_val(m, i);
    }
    return pmi_wire_format(buf, cap, n, keys, vals);
}

const char *pmi_wire_strerror(int status)
{
    switch (status) {
    case PMI_WIRE_OK:       return "ok";
    case PMI_WIRE_EEMPTY:   return "empty message";
    case PMI_WIRE_ETOOLONG: return "line too long";
    case PMI_WIRE_ENOEQ:    return "token without '='";
    case PMI_WIRE_ENOKEY:   return "empty key";
    case PMI_WIRE_EBADCHAR: return "invalid byte";
    case PMI_WIRE_ETOOMANY: return "too many pairs";
    case PMI_WIRE_EDUPKEY:  return "duplicate key";
    default:                return "unknown error";
    }
}

void pmi_wire_rbuf_init(struct pmi_wire_rbuf *rb)
{
    rb->start = 0;
    rb->len = 0;
}

char *pmi_wire_rbuf_space(struct pmi_wire_rbuf *rb, size_t *avail)
{
    if (rb->start > 0) {
        memmove(rb->data, rb->data + rb->start, rb->len - rb->start);
        rb->len -= rb->start;
        rb->start = 0;
    }
    *avail = sizeof rb->data - rb->len;
    return rb->data + rb->len;
}

void pmi_wire_rbuf_commit(struct pmi_wire_rbuf *rb, size_t n)
{
    size_t room = sizeof rb->data - rb->len;
    rb->len += n < room ? n : room;
}

int pmi_wire_rbuf_next(struct pmi_wire_rbuf *rb, const char **line, size_t *len)
{
    size_t have = rb->len - rb->start;
    char *p = rb->data + rb->start;
    char *nl = have ? memchr(p, '\n', have) : NULL;
    if (nl) {
        *line = p;
        *len = (size_t)(nl - p) + 1;
        rb->start += *len;
        if (rb->start == rb->len)
            rb->start = rb->len = 0;   /* keep the returned bytes in place */
        return 1;
    }
    if (have == sizeof rb->data)
        return PMI_WIRE_ETOOLONG;
    return 0;
}

size_t pmi_wire_rbuf_pending(const struct pmi_wire_rbuf *rb)
{
    return rb->len - rb->start;
}

/* ------------------------------------------------------------ percent-encoding */

static int pct_plain(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '/' || c == '+' || c == ':' || c == '@' || c == '-';
}

long pmi_wire_pct_encode(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t j = 0;
    for (; *in; in++) {
        unsigned char c = (unsigned char)*in;
        size_t need = pct_plain(c) ? 1 : 3;
        if (j + need >= cap)
            return -1;
        if (need == 1) {
            out[j++] = (char)c;
        } else {
            out[j++] = '%';
            out[j++] = hex[c >> 4];
            out[j++] = hex[c & 15];
        }
    }
    if (j >= cap)
        return -1;
    out[j] = 0;
    return (long)j;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

long pmi_wire_pct_decode(const char *in, char *out, size_t cap)
{
    size_t j = 0;
    for (const char *p = in; *p; p++) {
        int c = (unsigned char)*p;
        if (c == '%') {
            int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
            if (hi < 0 || lo < 0 || (hi | lo) == 0)
                return -1;
            c = hi << 4 | lo;
            p += 2;
        }
        if (j + 1 >= cap)
            return -2;
        out[j++] = (char)c;
    }
    if (j >= cap)
        return -2;
    out[j] = 0;
    return (long)j;
}
