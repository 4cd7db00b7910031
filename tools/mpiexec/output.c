/* output: --tag-output. Each rank's stdout and stderr come through pipes;
 * complete lines go out as "[rank] line\n" to mpiexec's own stdout/stderr
 * (a spawned process's as "[s<k>:<rank>] line\n": rank <rank> of world k),
 * one write per line so lines of different ranks never interleave. A line
 * longer than the buffer is cut into several prefixed lines; a partial last
 * line is flushed (with a '\n' added) when the stream ends or the job does. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUTBUF_CAP 16384
#define PREFIX_MAX 32      /* >= sizeof struct rank's label */

int output_open(struct rank *rk, int pipes[2][2])
{
    for (int s = 0; s < 2; s++) {
        if (pipe2(pipes[s], O_CLOEXEC) != 0)
            return -1;
        fcntl(pipes[s][0], F_SETFL, fcntl(pipes[s][0], F_GETFL) | O_NONBLOCK);
        rk->out[s].fd = pipes[s][0];
        rk->out[s].dest = s + 1;
        rk->out[s].len = 0;
        if (!rk->out[s].buf && !(rk->out[s].buf = malloc(PREFIX_MAX + OUTBUF_CAP + 1)))
            return -1;
    }
    return 0;
}

/* Write all of buf to fd; gives up silently when the reader is gone. */
static void write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {           /* our stdout may be non-blocking */
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                poll(&p, 1, 1000);
                continue;
            }
            return;                          /* EPIPE etc.: drop the output */
        }
        buf += w;
        len -= (size_t)w;
    }
}

/* Buffer layout: PREFIX_MAX bytes of headroom, then the line data, so a
 * line is emitted with its prefix in place in a single write: the prefix
 * overwrites the end of the previous (already written) line or the
 * headroom, never data still to be written. */
static void emit(const char *label, struct outbuf *ob, const char *line, size_t len)
{
    size_t pl = strnlen(label, PREFIX_MAX - 1);
    char *start = (char *)line - pl;
    memcpy(start, label, pl);
    write_all(ob->dest, start, pl + len);
}

/* Emit every complete line in the buffer (and the whole buffer when
 * `all`), keeping an unfinished tail. */
static void flush_lines(const char *label, struct outbuf *ob, int all)
{
    char *data = ob->buf + PREFIX_MAX;
    size_t pos = 0;
    while (pos < ob->len) {
        char *nl = memchr(data + pos, '\n', ob->len - pos);
        size_t end;
        if (nl)
            end = (size_t)(nl - data) + 1;
        else if (all || (pos == 0 && ob->len == OUTBUF_CAP))   /* a line fills the buffer */
            end = ob->len;
        else
            break;
        if (!nl) {
            /* Emit an unterminated chunk as a line of its own. The byte
             * after it is headroom or unread space, so '\n' fits. */
            char saved = data[end];
            data[end] = '\n';
            emit(label, ob, data + pos, end - pos + 1);
            data[end] = saved;
        } else {
            emit(label, ob, data + pos, end - pos);
        }
        pos = end;
    }
    /* keep the tail, shifted to the front */
    if (pos > 0) {
        memmove(data, data + pos, ob->len - pos);
        ob->len -= pos;
    }
}

static void close_stream(const char *label, struct outbuf *ob)
{
    flush_lines(label, ob, 1);
    close(ob->fd);
    ob->fd = -1;
}

/* Read once (up to the free space) and forward complete lines; returns 1
 * if bytes were read, 0 at EAGAIN, -1 at EOF/error (stream closed). */
static int read_once(const char *label, struct outbuf *ob)
{
    char *data = ob->buf + PREFIX_MAX;
    ssize_t got = read(ob->fd, data + ob->len, OUTBUF_CAP - ob->len);
    if (got < 0 && errno == EINTR)
        return 1;
    if (got < 0 && errno == EAGAIN)
        return 0;
    if (got <= 0) {
        close_stream(label, ob);
        return -1;
    }
    ob->len += (size_t)got;
    flush_lines(label, ob, 0);
    return 1;
}

void output_readable(struct job *j, int r, int s)
{
    const char *label = j->ranks[r]->label;
    struct outbuf *ob = &j->ranks[r]->out[s];
    if (ob->fd < 0)
        return;
    /* A few reads per wakeup so a chatty rank cannot starve the PMI server. */
    for (int i = 0; i < 4 && ob->fd >= 0; i++)
        if (read_once(label, ob) <= 0)
            break;
}

void output_drain_all(struct job *j)
{
    if (!j->opt->tag_output)
        return;
    for (int r = 0; r < j->n; r++)
        for (int s = 0; s < 2; s++) {
            const char *label = j->ranks[r]->label;
            struct outbuf *ob = &j->ranks[r]->out[s];
            if (ob->fd < 0 || !ob->buf)
                continue;
            /* Bounded: whatever exited ranks left in the pipe, not what a
             * surviving grandchild keeps writing. */
            for (int i = 0; i < 1024 && ob->fd >= 0; i++)
                if (read_once(label, ob) <= 0)
                    break;
            if (ob->fd >= 0)
                close_stream(label, ob);
        }
}
