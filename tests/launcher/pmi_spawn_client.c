/* pmi_spawn_client: a stand-alone PMI-1 client (no MPI library) that tests
 * mpiexec's spawn service over the wire on the descriptor in PMI_FD.
 *
 *   mpiexec -n 2 pmi_spawn_client parent
 *       world 0: rank 1 waits in world 0's barrier; rank 0 spawns itself as
 *       a world of 2 ("child"), checks refused requests (a program that does
 *       not exist, a name not on PATH, an argcnt that does not match,
 *       napps=0, a wdir that is no directory) and that they start nothing,
 *       then a spawn_multiple (napps=2: 1 + 2 processes, the second app with
 *       wdir=/). The children check their environment (PMI_FERRY_*, per
 *       world PMI_RANK/PMI_SIZE/PMI_JOBID), arguments (percent-decoded),
 *       appnum, cwd, stdin, and run put/barrier/get in their own world while
 *       world 0's barrier is still incomplete (each leaves a file in a
 *       directory of rank 0's when done; rank 0 waits for all of them before
 *       it enters world 0's barrier). Prints "pmi_spawn_client: OK".
 *   mpiexec -n 1 pmi_spawn_client exit3
 *       rank 0 spawns 2 processes ("dies"): world rank 1 exits 3 without
 *       finalize, world rank 0 waits in its world's barrier; mpiexec must
 *       fail the job with status 3 and name the spawned rank.
 *
 *
 * Singleton adoption (mpiexec --adopt-singleton): started WITHOUT mpiexec,
 * the program plays the singleton MPI process P that spawns: it makes a
 * socketpair, forks and execs the given mpiexec with PMI_FERRY_ADOPT_FD /
 * _PID (and MPIEXEC_UNIVERSE_SIZE=9), and speaks PMI on its end: init,
 * get_maxes, get_appnum, get_my_kvsname, get_universe (universe = its
 * kvsname, a 32-hex secret, uid_base=0, size=9).
 *   pmi_spawn_client singleton <mpiexec>
 *       spawns 2 "child" processes (the checks above; uids 1-2), publishes
 *       and looks up a name, finalizes and closes; mpiexec must wait for the
 *       children and exit 0 (P waits for it); both children's lines and
 *       files must be there. Prints "pmi_spawn_client: singleton OK".
 *   pmi_spawn_client singleton-nofin <mpiexec>
 *       spawns 2 "blocks" processes (they wait on their PMI descriptor and
 *       tell their pids through a FIFO), then closes its end WITHOUT
 *       finalize: mpiexec must exit non-zero within 5 s (printing the
 *       failure line, pmi_spawn.sh checks) and the children be gone.
 *   pmi_spawn_client singleton-killed <mpiexec>
 *       a forked P does the same (without closing) and is SIGKILLed:
 *       mpiexec and the children must be gone within 3 s.
 *
 * Every process leaves /dev/shm/ferry-<PMI_JOBID>-spawntest-<rank>: mpiexec
 * must remove every world's files (pmi_spawn.sh checks). */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot/pmi_wire.h"

static int fd = -1;
static char me[64] = "pmi_spawn_client";
static struct pmi_wire_rbuf rb;

static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: FAIL: ", me);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void send_line(const char *fmt, ...)
{
    char buf[PMI_WIRE_LINE_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= PMI_WIRE_LINE_MAX)       /* with its '\n': at most PMI_WIRE_LINE_MAX */
        fail("line too long");
    buf[n++] = '\n';
    for (int off = 0; off < n; ) {
        ssize_t w = write(fd, buf + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            fail("write to PMI_FD: %s", strerror(errno));
        off += (int)w;
    }
}

/* Next reply; it must have cmd=<cmd>. */
static void recv_msg(struct pmi_wire_msg *m, const char *cmd)
{
    for (;;) {
        const char *line;
        size_t len;
        int got = pmi_wire_rbuf_next(&rb, &line, &len);
        if (got < 0)
            fail("over-long reply");
        if (got == 1) {
            int st = pmi_wire_parse(m, line, len);
            if (st != PMI_WIRE_OK)
                fail("malformed reply (%s): %.*s", pmi_wire_strerror(st), (int)len, line);
            const char *c = pmi_wire_cmd(m);
            if (!c || strcmp(c, cmd) != 0)
                fail("expected cmd=%s, got: %.*s", cmd, (int)len, line);
            return;
        }
        size_t avail;
        char *p = pmi_wire_rbuf_space(&rb, &avail);
        ssize_t r = read(fd, p, avail);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            fail("PMI_FD closed while waiting for cmd=%s", cmd);
        pmi_wire_rbuf_commit(&rb, (size_t)r);
    }
}

static const char *need(const struct pmi_wire_msg *m, const char *key)
{
    const char *v = pmi_wire_get(m, key);
    if (!v)
        fail("reply %s without %s=", pmi_wire_cmd(m), key);
    return v;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    if (!v)
        fail("%s is not set", name);
    return v;
}

static long env_long(const char *name)
{
    const char *v = env(name);
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end)
        fail("%s=%s is not a number", name, v);
    return x;
}

/* Percent-encode s as the library's client does: bytes outside
 * [A-Za-z0-9._/-+,:@] as %XX. */
static const char *enc(const char *s, char *out, size_t cap)
{
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-+,:@";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (n + 4 > cap)
            fail("encoded string too long");
        if (strchr(ok, *p))
            out[n++] = (char)*p;
        else
            n += (size_t)snprintf(out + n, 4, "%%%02X", *p);
    }
    out[n] = '\0';
    return out;
}

static char kvsname[256];

static void pmi_init(void)
{
    struct pmi_wire_msg m;
    fd = (int)env_long("PMI_FD");
    pmi_wire_rbuf_init(&rb);
    send_line("cmd=init pmi_version=1 pmi_subversion=1");
    recv_msg(&m, "response_to_init");
    if (strcmp(need(&m, "rc"), "0") != 0)
        fail("init refused");
    send_line("cmd=get_my_kvsname");
    recv_msg(&m, "my_kvsname");
    snprintf(kvsname, sizeof kvsname, "%s", need(&m, "kvsname"));
    if (strcmp(kvsname, env("PMI_JOBID")) != 0)
        fail("kvsname %s, PMI_JOBID %s", kvsname, env("PMI_JOBID"));
    const char *sec = env("PMI_FERRY_SECRET");
    if (strlen(sec) != 32 || strspn(sec, "0123456789abcdef") != 32)
        fail("PMI_FERRY_SECRET=%s is not 32 lowercase hex digits", sec);
    env("PMI_FERRY_UNIVERSE");
    env_long("PMI_FERRY_UID_BASE");
    /* leave a file mpiexec must clean up */
    char path[512];
    snprintf(path, sizeof path, "/dev/shm/ferry-%s-spawntest-%ld", kvsname, env_long("PMI_RANK"));
    int f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (f >= 0)
        close(f);
}

static long universe_size(void)
{
    struct pmi_wire_msg m;
    send_line("cmd=get_universe_size");
    recv_msg(&m, "universe_size");
    return atol(need(&m, "size"));
}

static void barrier(void)
{
    struct pmi_wire_msg m;
    send_line("cmd=barrier_in");
    recv_msg(&m, "barrier_out");
}

static void finalize(void)
{
    struct pmi_wire_msg m;
    send_line("cmd=finalize");
    recv_msg(&m, "finalize_ack");
}

/* ------------------------------------------------------------- children */

/* argv: child <appnum> <dir> <secret> <universe> <base> <size> <text> */
static int child_main(int argc, char **argv)
{
    if (argc != 8)
        fail("child: %d arguments, expected 7 after 'child'", argc - 1);
    long rank = env_long("PMI_RANK"), size = env_long("PMI_SIZE");
    snprintf(me, sizeof me, "pmi_spawn_client[%s:%ld]", getenv("PMI_JOBID"), rank);
    long appnum = atol(argv[1]);
    const char *dir = argv[2];
    if (strcmp(argv[7], "hello world 100% =x") != 0)
        fail("argument not decoded: '%s'", argv[7]);
    if (strcmp(env("PMI_FERRY_PARENT_PORT"), "abc def") != 0)
        fail("PMI_FERRY_PARENT_PORT='%s'", getenv("PMI_FERRY_PARENT_PORT"));
    if (strcmp(env("PMI_FERRY_SECRET"), argv[3]) != 0)
        fail("PMI_FERRY_SECRET differs from world 0's");
    if (strcmp(env("PMI_FERRY_UNIVERSE"), argv[4]) != 0)
        fail("PMI_FERRY_UNIVERSE=%s, world 0's %s", getenv("PMI_FERRY_UNIVERSE"), argv[4]);
    if (env_long("PMI_FERRY_UID_BASE") != atol(argv[5]))
        fail("PMI_FERRY_UID_BASE=%s, expected %s", getenv("PMI_FERRY_UID_BASE"), argv[5]);
    if (size != atol(argv[6]) || rank < 0 || rank >= size)
        fail("PMI_RANK=%ld PMI_SIZE=%ld, expected size %s", rank, size, argv[6]);
    if (env_long("FERRY_LOCAL_RANK") != rank || env_long("FERRY_LOCAL_SIZE") != size)
        fail("FERRY_LOCAL_RANK/SIZE differ from PMI_RANK/SIZE");
    if (strcmp(env("PMI_JOBID"), argv[4]) == 0)
        fail("spawned world has world 0's kvsname");
    struct stat a, b;
    if (fstat(0, &a) != 0 || stat("/dev/null", &b) != 0 || !S_ISCHR(a.st_mode) || a.st_rdev != b.st_rdev)
        fail("stdin is not /dev/null");
    if (appnum == 1) {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || strcmp(cwd, "/") != 0)
            fail("wdir=/ not applied (cwd %s)", cwd);
    }

    pmi_init();
    struct pmi_wire_msg m;
    if (universe_size() != 9)
        fail("universe size is not -usize 9");
    send_line("cmd=get_appnum");
    recv_msg(&m, "appnum");
    if (atol(need(&m, "appnum")) != appnum)
        fail("appnum %s, expected %ld", need(&m, "appnum"), appnum);
    send_line("cmd=put kvsname=%s key=k%ld value=v%ld-%s", kvsname, rank, rank, kvsname);
    recv_msg(&m, "put_result");
    if (strcmp(need(&m, "rc"), "0") != 0)
        fail("put refused");
    /* world 0's key space is not ours */
    send_line("cmd=put kvsname=%s key=k%ld value=x", argv[4], rank);
    recv_msg(&m, "put_result");
    if (strcmp(need(&m, "rc"), "-1") != 0)
        fail("put into world 0's kvsname accepted");
    send_line("cmd=get kvsname=%s key=PMI_process_mapping", argv[4]);
    recv_msg(&m, "get_result");
    if (strcmp(need(&m, "rc"), "-1") != 0)
        fail("get from world 0's kvsname answered");
    barrier();
    for (long r = 0; r < size; r++) {
        char want[320];
        snprintf(want, sizeof want, "v%ld-%s", r, kvsname);
        send_line("cmd=get kvsname=%s key=k%ld", kvsname, r);
        recv_msg(&m, "get_result");
        if (strcmp(need(&m, "rc"), "0") != 0 || strcmp(need(&m, "value"), want) != 0)
            fail("get k%ld: rc=%s value=%s", r, need(&m, "rc"), pmi_wire_get(&m, "value"));
    }
    char map[64];
    snprintf(map, sizeof map, "(vector,(0,1,%ld))", size);
    send_line("cmd=get kvsname=%s key=PMI_process_mapping", kvsname);
    recv_msg(&m, "get_result");
    if (strcmp(need(&m, "value"), map) != 0)
        fail("PMI_process_mapping %s, expected %s", need(&m, "value"), map);
    barrier();                    /* a second barrier of the same world */

    printf("child of world %s rank %ld appnum %ld ok\n", kvsname, rank, appnum);
    fflush(stdout);
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s.%ld", dir, kvsname, rank);
    int f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (f < 0)
        fail("cannot create %s: %s", path, strerror(errno));
    close(f);
    finalize();
    return 0;
}

/* ----------------------------------------------------------------- world 0 */

static char self[PATH_MAX];

/* Send one spawn line; `rest` is nprocs=... execname=... etc. */
static void spawn_line(int napps, int appidx, const char *rest)
{
    send_line("cmd=spawn napps=%d appidx=%d %s", napps, appidx, rest);
}

static void expect_refused(const char *what)
{
    struct pmi_wire_msg m;
    recv_msg(&m, "spawn_result");
    if (strcmp(need(&m, "rc"), "-1") != 0)
        fail("spawn of %s was not refused", what);
    printf("refused as expected (%s): %s\n", what, need(&m, "msg"));
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        fail("opendir %s: %s", dir, strerror(errno));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[PATH_MAX + 300];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

static int parent_main(void)
{
    long rank = env_long("PMI_RANK");
    snprintf(me, sizeof me, "pmi_spawn_client[world 0:%ld]", rank);
    if (env_long("PMI_SIZE") != 2)
        fail("run me with mpiexec -n 2");
    if (env_long("PMI_FERRY_UID_BASE") != 0)
        fail("world 0 has PMI_FERRY_UID_BASE=%s", getenv("PMI_FERRY_UID_BASE"));
    if (getenv("PMI_FERRY_PARENT_PORT"))
        fail("world 0 has PMI_FERRY_PARENT_PORT");
    if (strcmp(env("PMI_FERRY_UNIVERSE"), env("PMI_JOBID")) != 0)
        fail("world 0: PMI_FERRY_UNIVERSE differs from PMI_JOBID");
    pmi_init();
    if (universe_size() != 9)
        fail("universe size is not -usize 9");
    if (rank == 1) {
        barrier();                /* waits while rank 0 spawns */
        finalize();
        return 0;
    }

    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0)
        fail("readlink /proc/self/exe");
    self[l] = '\0';
    char dir[] = "/tmp/ferry-spawn-test-XXXXXX";
    if (!mkdtemp(dir))
        fail("mkdtemp: %s", strerror(errno));
    char e_self[3 * PATH_MAX], e_dir[256], e_text[128], line[4 * PATH_MAX];
    enc(self, e_self, sizeof e_self);
    enc(dir, e_dir, sizeof e_dir);
    enc("hello world 100% =x", e_text, sizeof e_text);
    const char *secret = env("PMI_FERRY_SECRET"), *universe = env("PMI_FERRY_UNIVERSE");
    struct pmi_wire_msg m;

    /* MPI_Comm_spawn: 2 children, uids 2-3 */
    snprintf(line, sizeof line, "nprocs=2 execname=%s argcnt=8 arg1=child arg2=0 arg3=%s arg4=%s arg5=%s "
             "arg6=2 arg7=2 arg8=%s port=abc%%20def", e_self, e_dir, secret, universe, e_text);
    spawn_line(1, 0, line);
    recv_msg(&m, "spawn_result");
    if (strcmp(need(&m, "rc"), "0") != 0)
        fail("spawn refused: %s", pmi_wire_get(&m, "msg"));
    if (strcmp(need(&m, "base"), "2") != 0 || strcmp(need(&m, "size"), "2") != 0)
        fail("spawn: base=%s size=%s, expected 2 and 2", need(&m, "base"), need(&m, "size"));
    char kvs1[256];
    snprintf(kvs1, sizeof kvs1, "%s", need(&m, "kvsname"));
    if (strcmp(kvs1, kvsname) == 0)
        fail("the spawned world has world 0's kvsname");

    /* refused requests start nothing */
    static const struct {
        const char *line;   /* after "cmd=spawn napps=1 appidx=0 "; %s: this program */
        const char *what;
    } refused[] = {
        {"nprocs=1 execname=/nonexistent/ferry-program argcnt=0 port=x%.0s", "/nonexistent/ferry-program"},
        {"nprocs=1 execname=ferry-no-such-program-on-path argcnt=0 port=x%.0s", "a name not on PATH"},
        {"nprocs=1 execname=%s argcnt=2 arg1=child port=x", "argcnt=2 with one argument"},
        {"nprocs=1 execname=%s argcnt=0 arg1=child port=x", "argcnt=0 with arg1"},
        {"nprocs=0 execname=%s argcnt=0 port=x", "nprocs=0"},
        {"nprocs=1 execname=%s argcnt=0 wdir=/nonexistent-ferry-dir port=x", "wdir that does not exist"},
        {"nprocs=5000 execname=%s argcnt=0 port=x", "more than 4096 processes"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(line, sizeof line, refused[i].line, e_self);
        spawn_line(1, 0, line);
        expect_refused(refused[i].what);
    }
    send_line("cmd=spawn napps=0 appidx=0 nprocs=1 execname=%s argcnt=0", e_self);
    expect_refused("napps=0");
    /* napps=2 whose second line is bad: refused once, after the last line */
    snprintf(line, sizeof line, "nprocs=1 execname=%s argcnt=0 port=x", e_self);
    spawn_line(2, 0, line);
    spawn_line(2, 1, "nprocs=1 execname=/nonexistent/ferry-program argcnt=0");
    expect_refused("spawn_multiple with a missing second program");
    /* PMI keeps working between the lines of a request */
    send_line("cmd=get kvsname=%s key=PMI_process_mapping", kvsname);
    recv_msg(&m, "get_result");
    if (strcmp(need(&m, "value"), "(vector,(0,1,2))") != 0)
        fail("world 0's PMI_process_mapping is %s", need(&m, "value"));

    /* MPI_Comm_spawn_multiple: 1 + 2 processes, one world of 3, uids 4-6 */
    snprintf(line, sizeof line, "nprocs=1 execname=%s argcnt=8 arg1=child arg2=0 arg3=%s arg4=%s arg5=%s "
             "arg6=4 arg7=3 arg8=%s port=abc%%20def", e_self, e_dir, secret, universe, e_text);
    spawn_line(2, 0, line);
    snprintf(line, sizeof line, "nprocs=2 execname=%s argcnt=8 arg1=child arg2=1 arg3=%s arg4=%s arg5=%s "
             "arg6=4 arg7=3 arg8=%s wdir=/", e_self, e_dir, secret, universe, e_text);
    spawn_line(2, 1, line);
    recv_msg(&m, "spawn_result");
    if (strcmp(need(&m, "rc"), "0") != 0)
        fail("spawn_multiple refused: %s", pmi_wire_get(&m, "msg"));
    if (strcmp(need(&m, "base"), "4") != 0 || strcmp(need(&m, "size"), "3") != 0)
        fail("spawn_multiple: base=%s size=%s, expected 4 and 3", need(&m, "base"), need(&m, "size"));
    if (strcmp(need(&m, "kvsname"), kvs1) == 0 || strcmp(need(&m, "kvsname"), kvsname) == 0)
        fail("spawn_multiple: kvsname %s is not new", need(&m, "kvsname"));

    /* The children finish their barriers while world 0's is incomplete. */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (count_files(dir) < 5) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 30)
            fail("only %d of 5 children finished within 30 s", count_files(dir));
        usleep(10000);
    }
    remove_dir(dir);
    barrier();
    finalize();
    printf("pmi_spawn_client: OK\n");
    return 0;
}

/* ------------------------------------------------------------------- exit3 */

static int exit3_main(void)
{
    snprintf(me, sizeof me, "pmi_spawn_client[exit3]");
    pmi_init();
    char e_self[3 * PATH_MAX], line[4 * PATH_MAX];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0)
        fail("readlink /proc/self/exe");
    self[l] = '\0';
    snprintf(line, sizeof line, "nprocs=2 execname=%s argcnt=1 arg1=dies port=p", enc(self, e_self, sizeof e_self));
    spawn_line(1, 0, line);
    struct pmi_wire_msg m;
    recv_msg(&m, "spawn_result");
    if (strcmp(need(&m, "rc"), "0") != 0)
        fail("spawn refused: %s", pmi_wire_get(&m, "msg"));
    barrier();                     /* world 0 is 1 process: passes */
    sleep(60);                     /* mpiexec kills us when the child fails */
    fail("still alive after 60 s");
}

static int dies_main(void)
{
    snprintf(me, sizeof me, "pmi_spawn_client[dies:%s]", getenv("PMI_RANK"));
    pmi_init();
    if (env_long("PMI_RANK") == 1)
        exit(3);
    barrier();                     /* never released: rank 1 dies */
    fail("barrier released without rank 1");
}

/* ------------------------------------------------------ singleton adoption */

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A deadline for blocking waits (waitpid, reads): SIGALRM fails the test. */
static const char *waiting_for = "?";

static void on_alarm(int sig)
{
    (void)sig;
    char buf[256];
    int n = snprintf(buf, sizeof buf, "%s: FAIL: timed out waiting for %s\n", me, waiting_for);
    ssize_t w = write(2, buf, n > 0 && n < (int)sizeof buf ? (size_t)n : 0);
    (void)w;
    _exit(1);
}

static void watchdog(unsigned s, const char *what)
{
    waiting_for = what;
    signal(SIGALRM, on_alarm);
    alarm(s);
}

/* Fork and exec `mpiexec --adopt-singleton` as P's child, adopting P (this
 * process); fd becomes P's end of the PMI connection. */
static pid_t adopt_start(const char *mpiexec)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        fail("socketpair: %s", strerror(errno));
    pid_t p = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%d", sv[1]);
        snprintf(b, sizeof b, "%ld", (long)p);
        if (fcntl(sv[1], F_SETFD, 0) != 0 || setenv("PMI_FERRY_ADOPT_FD", a, 1) ||
            setenv("PMI_FERRY_ADOPT_PID", b, 1) || setenv("MPIEXEC_UNIVERSE_SIZE", "9", 1))
            _exit(126);
        execl(mpiexec, mpiexec, "--adopt-singleton", (char *)NULL);
        fprintf(stderr, "%s: FAIL: cannot execute %s: %s\n", me, mpiexec, strerror(errno));
        _exit(127);
    }
    close(sv[1]);
    fd = sv[0];
    pmi_wire_rbuf_init(&rb);
    return pid;
}

static char u_universe[256], u_secret[64];

/* The singleton's first requests, as the library sends them. */
static void adopt_hello(void)
{
    struct pmi_wire_msg m;
    send_line("cmd=init pmi_version=1 pmi_subversion=1");
    recv_msg(&m, "response_to_init");
    if (strcmp(need(&m, "rc"), "0") != 0)
        fail("init refused");
    send_line("cmd=get_maxes");
    recv_msg(&m, "maxes");
    send_line("cmd=get_appnum");
    recv_msg(&m, "appnum");
    if (strcmp(need(&m, "appnum"), "0") != 0)
        fail("the singleton's appnum is %s", need(&m, "appnum"));
    send_line("cmd=get_my_kvsname");
    recv_msg(&m, "my_kvsname");
    snprintf(kvsname, sizeof kvsname, "%s", need(&m, "kvsname"));
    send_line("cmd=get_universe");
    recv_msg(&m, "universe");
    if (strcmp(need(&m, "rc"), "0") != 0)
        fail("get_universe: rc=%s", need(&m, "rc"));
    snprintf(u_universe, sizeof u_universe, "%s", need(&m, "universe"));
    snprintf(u_secret, sizeof u_secret, "%s", need(&m, "secret"));
    if (strcmp(u_universe, kvsname) != 0 || strncmp(u_universe, "ferry_", 6) != 0)
        fail("get_universe: universe=%s, world 0's kvsname %s", u_universe, kvsname);
    if (strlen(u_secret) != 32 || strspn(u_secret, "0123456789abcdef") != 32)
        fail("get_universe: secret=%s is not 32 lowercase hex digits", u_secret);
    if (strcmp(need(&m, "uid_base"), "0") != 0)
        fail("get_universe: uid_base=%s, expected 0", need(&m, "uid_base"));
    if (strcmp(need(&m, "size"), "9") != 0)
        fail("get_universe: size=%s, expected 9 (MPIEXEC_UNIVERSE_SIZE)", need(&m, "size"));
    if (universe_size() != 9)
        fail("get_universe_size is not 9");
    char path[512];
    snprintf(path, sizeof path, "/dev/shm/ferry-%s-spawntest-0", kvsname);
    int f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (f >= 0)
        close(f);
}

static void find_self(void)
{
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0)
        fail("readlink /proc/self/exe");
    self[l] = '\0';
}

static int singleton_main(const char *mpiexec)
{
    snprintf(me, sizeof me, "pmi_spawn_client[singleton]");
    find_self();
    char dir[] = "/tmp/ferry-spawn-test-XXXXXX";
    if (!mkdtemp(dir))
        fail("mkdtemp: %s", strerror(errno));
    pid_t mpx = adopt_start(mpiexec);
    adopt_hello();
    char e_self[3 * PATH_MAX], e_dir[256], e_text[128], line[4 * PATH_MAX];
    enc(self, e_self, sizeof e_self);
    enc(dir, e_dir, sizeof e_dir);
    enc("hello world 100% =x", e_text, sizeof e_text);
    struct pmi_wire_msg m;
    /* 2 children, uids 1-2 */
    snprintf(line, sizeof line, "nprocs=2 execname=%s argcnt=8 arg1=child arg2=0 arg3=%s arg4=%s arg5=%s "
             "arg6=1 arg7=2 arg8=%s port=abc%%20def", e_self, e_dir, u_secret, u_universe, e_text);
    spawn_line(1, 0, line);
    recv_msg(&m, "spawn_result");
    if (strcmp(need(&m, "rc"), "0") != 0)
        fail("spawn refused: %s", pmi_wire_get(&m, "msg"));
    if (strcmp(need(&m, "base"), "1") != 0 || strcmp(need(&m, "size"), "2") != 0)
        fail("spawn: base=%s size=%s, expected 1 and 2", need(&m, "base"), need(&m, "size"));
    if (strcmp(need(&m, "kvsname"), kvsname) == 0)
        fail("the spawned world has world 0's kvsname");
    send_line("cmd=publish_name service=singleton-svc port=p%%201");
    recv_msg(&m, "publish_result");
    if (strcmp(need(&m, "rc"), "0") != 0)
        fail("publish_name refused");
    send_line("cmd=lookup_name service=singleton-svc");
    recv_msg(&m, "lookup_result");
    if (strcmp(need(&m, "rc"), "0") != 0 || strcmp(need(&m, "port"), "p%201") != 0)
        fail("lookup_name: rc=%s port=%s", need(&m, "rc"), pmi_wire_get(&m, "port"));
    finalize();
    close(fd);

    /* mpiexec goes on until the children are done */
    watchdog(30, "mpiexec to exit after the children");
    int st;
    if (waitpid(mpx, &st, 0) != mpx)
        fail("waitpid: %s", strerror(errno));
    alarm(0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail("mpiexec --adopt-singleton ended with wait status %#x, expected exit 0", st);
    if (count_files(dir) != 2)
        fail("%d of 2 children finished before mpiexec exited", count_files(dir));
    remove_dir(dir);
    printf("pmi_spawn_client: singleton OK\n");
    return 0;
}

/* A spawned process that tells its pid through the FIFO, then waits on its
 * PMI descriptor (no request: nothing ever comes) until mpiexec goes. */
static int blocks_main(int argc, char **argv)
{
    snprintf(me, sizeof me, "pmi_spawn_client[blocks:%s]", getenv("PMI_RANK"));
    if (argc != 2)
        fail("blocks: the FIFO is missing");
    pmi_init();
    int f = open(argv[1], O_WRONLY | O_CLOEXEC);
    if (f < 0)
        fail("open %s: %s", argv[1], strerror(errno));
    dprintf(f, "child %ld\n", (long)getpid());
    close(f);
    char c;
    while (read(fd, &c, 1) > 0)
        ;
    _exit(0);
}

/* Read "<what> <pid>" lines from the FIFO until n pids are in pids[]. */
static void read_pids(FILE *fifo, long *pids, int n)
{
    char line[128];
    for (int i = 0; i < n; i++) {
        if (!fgets(line, sizeof line, fifo))
            fail("the FIFO closed");
        char *sp = strchr(line, ' ');
        if (!sp || (pids[i] = atol(sp + 1)) <= 0)
            fail("bad FIFO line: %s", line);
    }
}

/* Has process pid gone (no such process, or a zombie) within ms? */
static int gone_within(long pid, long ms)
{
    long deadline = now_ms() + ms;
    for (;;) {
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int f = open(path, O_RDONLY | O_CLOEXEC);
        if (f < 0)
            return 1;
        ssize_t n = read(f, buf, sizeof buf - 1);
        close(f);
        if (n <= 0)
            return 1;
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        if (!p || (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')))
            return 1;
        if (now_ms() > deadline)
            return 0;
        struct timespec ts = { 0, 10 * 1000000 };      /* polling, with a deadline */
        nanosleep(&ts, NULL);
    }
}

/* P's part of the last two cases: adopt, then spawn 2 blockers. */
static pid_t adopt_and_block(const char *mpiexec, const char *fifo_path, FILE *fifo_w)
{
    find_self();
    pid_t mpx = adopt_start(mpiexec);
    adopt_hello();
    if (fifo_w) {
        fprintf(fifo_w, "mpiexec %ld\n", (long)mpx);
        fflush(fifo_w);
    }
    char e_self[3 * PATH_MAX], e_fifo[3 * PATH_MAX], line[8 * PATH_MAX];
    snprintf(line, sizeof line, "nprocs=2 execname=%s argcnt=2 arg1=blocks arg2=%s port=p",
             enc(self, e_self, sizeof e_self), enc(fifo_path, e_fifo, sizeof e_fifo));
    spawn_line(1, 0, line);
    struct pmi_wire_msg m;
    recv_msg(&m, "spawn_result");
    if (strcmp(need(&m, "rc"), "0") != 0 || strcmp(need(&m, "base"), "1") != 0)
        fail("spawn: rc=%s base=%s", need(&m, "rc"), pmi_wire_get(&m, "base"));
    return mpx;
}

static FILE *make_fifo(char *dir, char *path, size_t cap)
{
    if (!mkdtemp(dir))
        fail("mkdtemp: %s", strerror(errno));
    snprintf(path, cap, "%s/fifo", dir);
    if (mkfifo(path, 0600) != 0)
        fail("mkfifo %s: %s", path, strerror(errno));
    int f = open(path, O_RDWR | O_CLOEXEC);     /* never EOF, never blocks the writers' open */
    FILE *fifo = f >= 0 ? fdopen(f, "r+") : NULL;
    if (!fifo)
        fail("open %s: %s", path, strerror(errno));
    return fifo;
}

static int singleton_nofin_main(const char *mpiexec)
{
    snprintf(me, sizeof me, "pmi_spawn_client[singleton-nofin]");
    char dir[] = "/tmp/ferry-spawn-test-XXXXXX", path[PATH_MAX];
    FILE *fifo = make_fifo(dir, path, sizeof path);
    pid_t mpx = adopt_and_block(mpiexec, path, NULL);
    long pids[2];
    watchdog(30, "the spawned processes' pids");
    read_pids(fifo, pids, 2);
    alarm(0);

    close(fd);                                   /* no finalize */
    long t0 = now_ms();
    watchdog(10, "mpiexec to exit after the singleton closed without finalize");
    int st;
    if (waitpid(mpx, &st, 0) != mpx)
        fail("waitpid: %s", strerror(errno));
    alarm(0);
    long took = now_ms() - t0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 0)
        fail("mpiexec ended with wait status %#x, expected a non-zero exit", st);
    if (took > 5000)
        fail("mpiexec took %ld ms to exit", took);
    for (int i = 0; i < 2; i++)
        if (!gone_within(pids[i], 2000))
            fail("spawned process %ld still alive after mpiexec exited", pids[i]);
    fclose(fifo);
    unlink(path);
    rmdir(dir);
    printf("pmi_spawn_client: singleton-nofin OK (mpiexec exit status %d)\n", WEXITSTATUS(st));
    return 0;
}

static int singleton_killed_main(const char *mpiexec)
{
    snprintf(me, sizeof me, "pmi_spawn_client[singleton-killed]");
    char dir[] = "/tmp/ferry-spawn-test-XXXXXX", path[PATH_MAX];
    FILE *fifo = make_fifo(dir, path, sizeof path);
    fflush(NULL);
    pid_t p = fork();
    if (p < 0)
        fail("fork: %s", strerror(errno));
    if (p == 0) {                                /* P: adopted, then killed */
        snprintf(me, sizeof me, "pmi_spawn_client[singleton-killed P]");
        adopt_and_block(mpiexec, path, fifo);
        char c;
        while (read(fd, &c, 1) > 0)              /* until killed */
            ;
        _exit(1);
    }
    long pids[3];                                /* mpiexec, 2 children */
    watchdog(30, "the pids of mpiexec and the spawned processes");
    read_pids(fifo, pids, 3);
    alarm(0);
    kill(p, SIGKILL);
    int st;
    waitpid(p, &st, 0);
    for (int i = 0; i < 3; i++)
        if (!gone_within(pids[i], 3000))
            fail("%s %ld still alive 3 s after the singleton was killed", i ? "spawned process" : "mpiexec",
                 pids[i]);
    fclose(fifo);
    unlink(path);
    rmdir(dir);
    printf("pmi_spawn_client: singleton-killed OK\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && strcmp(argv[1], "child") == 0)
        return child_main(argc - 1, argv + 1);   /* argv[0]: "child" */
    if (argc >= 2 && strcmp(argv[1], "dies") == 0)
        return dies_main();
    if (argc >= 2 && strcmp(argv[1], "parent") == 0)
        return parent_main();
    if (argc >= 2 && strcmp(argv[1], "exit3") == 0)
        return exit3_main();
    if (argc >= 2 && strcmp(argv[1], "blocks") == 0)
        return blocks_main(argc - 1, argv + 1);
    if (argc == 3 && strcmp(argv[1], "singleton") == 0)
        return singleton_main(argv[2]);
    if (argc == 3 && strcmp(argv[1], "singleton-nofin") == 0)
        return singleton_nofin_main(argv[2]);
    if (argc == 3 && strcmp(argv[1], "singleton-killed") == 0)
        return singleton_killed_main(argv[2]);
    fprintf(stderr, "usage: mpiexec -n 2 %s parent | mpiexec -n 1 %s exit3 | %s singleton[-nofin|-killed] "
            "<mpiexec>\n", argv[0], argv[0], argv[0]);
    return 2;
}
