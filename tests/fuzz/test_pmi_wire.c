/* Unit test for the PMI-1 wire parser/formatter (src/boot/pmi_wire.c):
 * valid and invalid lines with their expected results. */
#include "boot/pmi_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond)                                                             \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);  \
            failures++;                                                          \
        }                                                                        \
    } while (0)

struct pcase {
    const char *line;
    size_t len;            /* 0: strlen(line) */
    int status;
    const char *pairs;     /* expected "k=v|k=v" when status == OK */
};

#define L(s) s, sizeof(s) - 1

static const struct pcase cases[] = {
    { L("cmd=init pmi_version=1 pmi_subversion=1\n"), PMI_WIRE_OK,
      "cmd=init|pmi_version=1|pmi_subversion=1" },
    { L("cmd=barrier_out\n"), PMI_WIRE_OK, "cmd=barrier_out" },
    { L("cmd=barrier_out"), PMI_WIRE_OK, "cmd=barrier_out" },          /* no '\n' */
    { L("cmd=get_result rc=0 msg=success value=0a1b\n"), PMI_WIRE_OK,
      "cmd=get_result|rc=0|msg=success|value=0a1b" },
    { L("  cmd=put   key=a  value= \n"), PMI_WIRE_OK, "cmd=put|key=a|value=" },
    { L("cmd=put key=x value=a=b==\n"), PMI_WIRE_OK, "cmd=put|key=x|value=a=b==" },
    { L("cmd=get_result value=(vector,(0,1,3))\n"), PMI_WIRE_OK,
      "cmd=get_result|value=(vector,(0,1,3))" },
    { L("a=\n"), PMI_WIRE_OK, "a=" },
    { L("\n"), PMI_WIRE_EEMPTY, NULL },
    { L(""), PMI_WIRE_EEMPTY, NULL },
    { L("    \n"), PMI_WIRE_EEMPTY, NULL },
    { L("cmd=put key\n"), PMI_WIRE_ENOEQ, NULL },
    { L("cmd\n"), PMI_WIRE_ENOEQ, NULL },
    { L("=value\n"), PMI_WIRE_ENOKEY, NULL },
    { L("cmd=put =x\n"), PMI_WIRE_ENOKEY, NULL },
    { L("cmd=put key=a key=b\n"), PMI_WIRE_EDUPKEY, NULL },
    { L("cmd=put\tkey=a\n"), PMI_WIRE_EBADCHAR, NULL },
    { L("cmd=put key=a\r\n"), PMI_WIRE_EBADCHAR, NULL },
    { L("cmd=put\nkey=a\n"), PMI_WIRE_EBADCHAR, NULL },
    { L("cmd=put key=a\n\n"), PMI_WIRE_EBADCHAR, NULL },
    { L("cmd=a\0b=c\n"), PMI_WIRE_EBADCHAR, NULL },
    { L("cmd=\xc3\xa9\n"), PMI_WIRE_EBADCHAR, NULL },
    { L("cmd=\x7f\n"), PMI_WIRE_EBADCHAR, NULL },
};

static void check_case(const struct pcase *c)
{
    struct pmi_wire_msg m;
    size_t len = c->len;
    int st = pmi_wire_parse(&m, c->line, len);
    if (st != c->status) {
        fprintf(stderr, "parse(\"%.*s\"): got %d (%s), want %d (%s)\n", (int)len, c->line,
                st, pmi_wire_strerror(st), c->status, pmi_wire_strerror(c->status));
        failures++;
        return;
    }
    if (st != PMI_WIRE_OK) {
        EXPECT(m.npairs == 0);
        return;
    }
    char want[512];
    snprintf(want, sizeof want, "%s", c->pairs);
    int i = 0;
    for (char *save, *tok = strtok_r(want, "|", &save); tok; tok = strtok_r(NULL, "|", &save), i++) {
        char *eq = strchr(tok, '=');
        *eq = '\0';
        if (i >= m.npairs || strcmp(pmi_wire_key(&m, i), tok) || strcmp(pmi_wire_val(&m, i), eq + 1)) {
            fprintf(stderr, "parse(\"%.*s\"): pair %d is not %s=%s\n", (int)len, c->line, i,
                    tok, eq + 1);
            failures++;
            return;
        }
    }
    EXPECT(i == m.npairs);
}

static void test_limits(void)
{
    static char line[PMI_WIRE_LINE_MAX + 8];
    struct pmi_wire_msg m;

    /* Exactly PMI_WIRE_LINE_MAX bytes with the '\n': accepted. */
    memset(line, 'v', sizeof line);
    memcpy(line, "cmd=x k=", 8);
    line[PMI_WIRE_LINE_MAX - 1] = '\n';
    EXPECT(pmi_wire_parse(&m, line, PMI_WIRE_LINE_MAX) == PMI_WIRE_OK);
    EXPECT(strlen(pmi_wire_get(&m, "k")) == PMI_WIRE_LINE_MAX - 1 - 8);
    /* The same content without '\n' is fine too; one byte more is not. */
    EXPECT(pmi_wire_parse(&m, line, PMI_WIRE_LINE_MAX - 1) == PMI_WIRE_OK);
    line[PMI_WIRE_LINE_MAX - 1] = 'v';
    EXPECT(pmi_wire_parse(&m, line, PMI_WIRE_LINE_MAX) == PMI_WIRE_ETOOLONG);
    line[PMI_WIRE_LINE_MAX] = '\n';
    EXPECT(pmi_wire_parse(&m, line, PMI_WIRE_LINE_MAX + 1) == PMI_WIRE_ETOOLONG);

    /* PAIRS_MAX pairs are fine, one more is not. */
    size_t n = 0;
    for (int i = 0; i < PMI_WIRE_PAIRS_MAX; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%sk%d=%d", i ? " " : "", i, i);
    EXPECT(pmi_wire_parse(&m, line, n) == PMI_WIRE_OK && m.npairs == PMI_WIRE_PAIRS_MAX);
    n += (size_t)snprintf(line + n, sizeof line - n, " extra=1");
    EXPECT(pmi_wire_parse(&m, line, n) == PMI_WIRE_ETOOMANY);
}

static void test_accessors(void)
{
    struct pmi_wire_msg m;
    const char *l = "cmd=maxes kvsname_max=256 neg=-12 junk=12x empty= big=99999999999999999999 plus=+7\n";
    EXPECT(pmi_wire_parse(&m, l, strlen(l)) == PMI_WIRE_OK);
    long v = 0;
    EXPECT(strcmp(pmi_wire_cmd(&m), "maxes") == 0);
    EXPECT(pmi_wire_get_long(&m, "kvsname_max", &v) == 0 && v == 256);
    EXPECT(pmi_wire_get_long(&m, "neg", &v) == 0 && v == -12);
    EXPECT(pmi_wire_get_long(&m, "plus", &v) == 0 && v == 7);
    EXPECT(pmi_wire_get_long(&m, "junk", &v) == -1);
    EXPECT(pmi_wire_get_long(&m, "empty", &v) == -1);
    EXPECT(pmi_wire_get_long(&m, "big", &v) == -1);
    EXPECT(pmi_wire_get_long(&m, "absent", &v) == -1);
    EXPECT(pmi_wire_get(&m, "absent") == NULL);
    EXPECT(strcmp(pmi_wire_get(&m, "empty"), "") == 0);

    struct pmi_wire_msg copy = m;          /* offsets survive a copy */
    memset(&m, 0, sizeof m);
    EXPECT(strcmp(pmi_wire_get(&copy, "neg"), "-12") == 0);

    const char *nocmd = "a=b\n";
    EXPECT(pmi_wire_parse(&m, nocmd, strlen(nocmd)) == PMI_WIRE_OK && pmi_wire_cmd(&m) == NULL);
}

static void test_format(void)
{
    char buf[PMI_WIRE_LINE_MAX + 1];
    EXPECT(pmi_wire_formatl(buf, sizeof buf, "cmd", "put", "kvsname", "k", "key", "a",
                            "value", "b", (const char *)NULL) == 32);
    EXPECT(strcmp(buf, "cmd=put kvsname=k key=a value=b\n") == 0);
    EXPECT(pmi_wire_formatl(buf, sizeof buf, "cmd", "x", "v", "", (const char *)NULL) == 9);
    EXPECT(strcmp(buf, "cmd=x v=\n") == 0);
    EXPECT(pmi_wire_formatl(buf, sizeof buf, "cmd", "a b", (const char *)NULL) == PMI_WIRE_EBADCHAR);
    EXPECT(pmi_wire_formatl(buf, sizeof buf, "cmd", "a\n", (const char *)NULL) == PMI_WIRE_EBADCHAR);
    EXPECT(pmi_wire_formatl(buf, sizeof buf, "k=y", "v", (const char *)NULL) == PMI_WIRE_EBADCHAR);
    EXPECT(pmi_wire_formatl(buf, sizeof buf, "", "v", (const char *)NULL) == PMI_WIRE_ENOKEY);
    EXPECT(pmi_wire_formatl(buf, sizeof buf, "a", "1", "a", "2", (const char *)NULL) == PMI_WIRE_EDUPKEY);
    EXPECT(pmi_wire_formatl(buf, sizeof buf, (const char *)NULL) == PMI_WIRE_EEMPTY);
    EXPECT(pmi_wire_formatl(buf, 9, "cmd", "x", "v", "", (const char *)NULL) == PMI_WIRE_ETOOLONG);
    EXPECT(pmi_wire_formatl(buf, 10, "cmd", "x", "v", "", (const char *)NULL) == 9);
    EXPECT(pmi_wire_valid_value("") && !pmi_wire_valid_key(""));
    EXPECT(pmi_wire_valid_value("a=b") && !pmi_wire_valid_key("a=b"));

    static char big[PMI_WIRE_LINE_MAX];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    EXPECT(pmi_wire_formatl(buf, sizeof buf, "v", big, (const char *)NULL) == PMI_WIRE_ETOOLONG);
    big[PMI_WIRE_LINE_MAX - 3] = '\0';              /* "v=" + z... + "\n" == LINE_MAX */
    EXPECT(pmi_wire_formatl(buf, sizeof buf, "v", big, (const char *)NULL) == PMI_WIRE_LINE_MAX);
}

static void test_reader(void)
{
    struct pmi_wire_rbuf rb;
    const char *line;
    size_t len, avail;
    pmi_wire_rbuf_init(&rb);
    const char *stream = "cmd=a\ncmd=b x=1\ncmd=";
    char *p = pmi_wire_rbuf_space(&rb, &avail);
    EXPECT(avail == PMI_WIRE_LINE_MAX);
    memcpy(p, stream, strlen(stream));
    pmi_wire_rbuf_commit(&rb, strlen(stream));
    EXPECT(pmi_wire_rbuf_next(&rb, &line, &len) == 1 && len == 6 && !memcmp(line, "cmd=a\n", 6));
    EXPECT(pmi_wire_rbuf_next(&rb, &line, &len) == 1 && len == 10);
    EXPECT(pmi_wire_rbuf_next(&rb, &line, &len) == 0);
    EXPECT(pmi_wire_rbuf_pending(&rb) == 4);
    p = pmi_wire_rbuf_space(&rb, &avail);
    memcpy(p, "c\n", 2);
    pmi_wire_rbuf_commit(&rb, 2);
    EXPECT(pmi_wire_rbuf_next(&rb, &line, &len) == 1 && len == 6 && !memcmp(line, "cmd=c\n", 6));
    EXPECT(pmi_wire_rbuf_pending(&rb) == 0);

    /* A full buffer without '\n' is an over-long line. */
    p = pmi_wire_rbuf_space(&rb, &avail);
    memset(p, 'x', avail);
    pmi_wire_rbuf_commit(&rb, avail);
    EXPECT(pmi_wire_rbuf_next(&rb, &line, &len) == PMI_WIRE_ETOOLONG);
    p = pmi_wire_rbuf_space(&rb, &avail);
    EXPECT(avail == 0);
}

/* Percent-encoding of spawn arguments, ports and service names. */
static void test_pct(void)
{
    char buf[64];
    EXPECT(pmi_wire_pct_encode("a b,c%=x/y_z.-+:@", buf, sizeof buf) == 25);
    EXPECT(strcmp(buf, "a%20b%2Cc%25%3Dx/y_z.-+:@") == 0);
    EXPECT(pmi_wire_pct_encode("abc", buf, 3) == -1);   /* no room for the NUL */
    EXPECT(pmi_wire_pct_encode("", buf, 1) == 0 && buf[0] == 0);
    EXPECT(pmi_wire_pct_decode("a%20b%2cc", buf, sizeof buf) == 5 && strcmp(buf, "a b,c") == 0);
    EXPECT(pmi_wire_pct_decode("%4", buf, sizeof buf) == -1);
    EXPECT(pmi_wire_pct_decode("%zz", buf, sizeof buf) == -1);
    EXPECT(pmi_wire_pct_decode("a%00b", buf, sizeof buf) == -1);
    EXPECT(pmi_wire_pct_decode("abcd", buf, 4) == -2);
    EXPECT(pmi_wire_pct_decode("abc", buf, 4) == 3);
}

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
    test_limits();
    test_accessors();
    test_format();
    test_reader();
    test_pct();
    if (failures) {
        fprintf(stderr, "test_pmi_wire: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_pmi_wire: all %zu parse cases and the limit/format/reader/percent-encoding checks passed\n",
           sizeof cases / sizeof cases[0]);
    return 0;
}
