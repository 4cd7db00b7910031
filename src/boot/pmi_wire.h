/* pmi_wire: the PMI-1 wire format, shared by the library's client
 * (pmi1_client.c) and mpiexec's server (tools/mpiexec/pmi_server.c).
 *
 * A message is one line of space-separated key=value pairs ended by '\n':
 *
 *     cmd=put kvsname=ferry_12_0a1b2c3d key=r0-addr value=0a1b\n
 *
 * Keys are non-empty runs of printable ASCII other than '='; values are runs
 * of printable ASCII (they may be empty and may contain '=': the first '='
 * of a pair splits it). Space is the only separator (runs of spaces and
 * leading/trailing spaces are accepted). Tabs, control bytes, NUL and bytes
 * >= 0x80 are rejected, as are duplicate keys.
 *
 * Everything here is bounded and allocation-free: the parser copies the line
 * into the message struct and never reads outside [data, data + len). */
#ifndef FERRY_PMI_WIRE_H
#define FERRY_PMI_WIRE_H
#include <stddef.h>

#define PMI_WIRE_LINE_MAX  4096   /* longest line, counting its '\n' */
#define PMI_WIRE_PAIRS_MAX 32     /* most key=value pairs in one line */

enum pmi_wire_status {
    PMI_WIRE_OK       =  0,
    PMI_WIRE_EEMPTY   = -1,   /* no pair at all (blank line) */
    PMI_WIRE_ETOOLONG = -2,   /* line (or formatted output) too long */
    PMI_WIRE_ENOEQ    = -3,   /* a token without '=' */
    PMI_WIRE_ENOKEY   = -4,   /* a token starting with '=' (empty key) */
    PMI_WIRE_EBADCHAR = -5,   /* control byte, NUL, tab, non-ASCII, inner '\n' */
    PMI_WIRE_ETOOMANY = -6,   /* more than PMI_WIRE_PAIRS_MAX pairs */
    PMI_WIRE_EDUPKEY  = -7,   /* the same key twice */
};
#define PMI_WIRE_STATUS_MIN (-7)

/* A parsed line. Pairs are stored as offsets into buf, so the struct may be
 * copied by value. Use the accessors below rather than the fields. */
struct pmi_wire_msg {
    int npairs;
    unsigned short koff[PMI_WIRE_PAIRS_MAX];
    unsigned short voff[PMI_WIRE_PAIRS_MAX];
    char buf[PMI_WIRE_LINE_MAX];
};

/* Parse one line data[0, len). One trailing '\n' is accepted and ignored;
 * any other '\n' is an error. data need not be NUL-terminated. On error
 * *m is left with npairs == 0. Returns PMI_WIRE_OK or a negative status. */
int pmi_wire_parse(struct pmi_wire_msg *m, const char *data, size_t len);

static inline const char *pmi_wire_key(const struct pmi_wire_msg *m, int i)
{ return m->buf + m->koff[i]; }
static inline const char *pmi_wire_val(const struct pmi_wire_msg *m, int i)
{ return m->buf + m->voff[i]; }

/* Value of `key`, or NULL when absent. */
const char *pmi_wire_get(const struct pmi_wire_msg *m, const char *key);
/* Value of "cmd" (NULL when absent). */
const char *pmi_wire_cmd(const struct pmi_wire_msg *m);
/* Strict decimal integer value of `key` (optional sign, no junk, fits in
 * long). 0 on success, -1 when absent or malformed. */
int pmi_wire_get_long(const struct pmi_wire_msg *m, const char *key, long *out);

/* 1 when s can be sent as a key / a value, else 0. */
int pmi_wire_valid_key(const char *s);
int pmi_wire_valid_value(const char *s);

/* Format npairs pairs as "k=v k=v\n" into buf (NUL-terminated). Returns the
 * length written (counting '\n', not NUL), or a negative status:
 * ETOOLONG when it does not fit in cap or exceeds PMI_WIRE_LINE_MAX,
 * ENOKEY / EBADCHAR for an invalid key or value, EDUPKEY, ETOOMANY, EEMPTY.
 * Whatever this accepts, pmi_wire_parse parses back to the same pairs. */
int pmi_wire_format(char *buf, size_t cap, int npairs,
                    const char *const *keys, const char *const *vals);
/* Same, with the pairs as a NULL-terminated list: key, value, key, value, ..., NULL. */
int pmi_wire_formatl(char *buf, size_t cap, ...);
/* Format a parsed message back (canonical form: single spaces). */
int pmi_wire_format_msg(char *buf, size_t cap, const struct pmi_wire_msg *m);

/* Percent-encoding, for values that may hold any byte but NUL (spawn
 * arguments, port and service names): a byte outside [A-Za-z0-9._/+:@-]
 * becomes %XX (two uppercase hex digits), so the result is a valid value
 * without spaces or commas (which separate the arguments of a spawn).
 * encode: the length written to out[cap] (NUL-terminated), or -1 when it
 * does not fit. decode: the decoded length, -1 for a '%' without two hex
 * digits or %00 (out holds no NUL but the last), -2 when it does not fit;
 * out may be in (decoding only shrinks). */
long pmi_wire_pct_encode(const char *in, char *out, size_t cap);
long pmi_wire_pct_decode(const char *in, char *out, size_t cap);

/* Short constant description of a status ("ok", "no '=' in a token", ...). */
const char *pmi_wire_strerror(int status);

/* Line reassembly over a byte stream (a socket): read into the free space,
 * commit what was read, then take complete lines out one by one. */
struct pmi_wire_rbuf {
    size_t start;                    /* first unconsumed byte */
    size_t len;                      /* end of buffered bytes */
    char data[PMI_WIRE_LINE_MAX];
};
void pmi_wire_rbuf_init(struct pmi_wire_rbuf *rb);
/* Free space to read into (compacts the buffer first); *avail may be 0 when
 * the buffer holds one unfinished over-long line. */
char *pmi_wire_rbuf_space(struct pmi_wire_rbuf *rb, size_t *avail);
void pmi_wire_rbuf_commit(struct pmi_wire_rbuf *rb, size_t n);
/* 1: a complete line (with its '\n') is at *line, *len bytes, valid until the
 * next call on rb; 0: no complete line yet; PMI_WIRE_ETOOLONG: the buffer is
 * full and holds no '\n' (the peer sent an over-long line). */
int pmi_wire_rbuf_next(struct pmi_wire_rbuf *rb, const char **line, size_t *len);
/* Bytes buffered and not yet returned as a line. */
size_t pmi_wire_rbuf_pending(const struct pmi_wire_rbuf *rb);

#endif
