/* Window objects, passive-target locks and the data movement of one-sided
 * operations (see win.h). */
#include "core/win.h"
#include "core/biglock.h"
#include "core/datatype.h"
#include "core/handle.h"
#include "core/progress.h"
#include "core/util.h"
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

static struct ferry_objtab wins;
static int wins_ready;

void ferry_win_table_init(void)
{
    if (!wins_ready) {
        ferry_objtab_init(&wins, FERRY_OBJ_WIN, 1);
        wins_ready = 1;
    }
}

void ferry_win_register(struct ferry_win *w)
{
    ferry_win_table_init();
    w->handle = ferry_objtab_add(&wins, w);
}

void ferry_win_unregister(struct ferry_win *w)
{
    ferry_objtab_remove(&wins, w->handle);
}

struct ferry_win *ferry_win_get(MPI_Win h)
{
    if (!wins_ready || h == MPI_WIN_NULL)
        return NULL;
    return ferry_objtab_get(&wins, h);
}

/* The weak hooks of api/attr.c. */
int ferry_win_valid(MPI_Win w)
{
    return ferry_win_get(w) != NULL;
}

int ferry_win_predefined_attr(MPI_Win h, int keyval, void **val)
{
    struct ferry_win *w = ferry_win_get(h);
    if (!w)
        return 0;
    /* integer attributes are returned as pointers to ints that live as long
     * as the window (MPICH does the same) */
    static int model_val = MPI_WIN_UNIFIED;
    switch (keyval) {
    case MPI_WIN_BASE:
        *val = w->base;
        return 1;
    case MPI_WIN_SIZE:
        *val = &w->wsize;
        return 1;
    case MPI_WIN_DISP_UNIT:
        *val = &w->disp_unit;
        return 1;
    case MPI_WIN_CREATE_FLAVOR:
        *val = &w->flavor;
        return 1;
    case MPI_WIN_MODEL:
        *val = &model_val;
        return 1;
    }
    return 0;
}

/* ---- locks in the control segment ------------------------------------------ */

static void backoff(unsigned *spins)
{
    if (++*spins < 64) {
        cpu_relax();
        return;
    }
    /* the holder may need this rank's progress (a rendezvous it waits for),
     * and oversubscribed it needs the CPU; other threads of this process may
     * need the MPI_THREAD_MULTIPLE lock */
    ferry_biglock_yield();
    ferry_progress();
    sched_yield();
}

void ferry_win_lock_acquire(struct ferry_win *w, int r, int exclusive)
{
    uint32_t *p = &w->ctl[r].rw;
    unsigned spins = 0;
    for (;;) {
        uint32_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
        if (exclusive) {
            if (v == 0 && __atomic_compare_exchange_n(p, &v, FERRY_WIN_EXCL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return;
        } else if (!(v & FERRY_WIN_EXCL) &&
                   __atomic_compare_exchange_n(p, &v, v + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            return;
        }
        backoff(&spins);
    }
}

void ferry_win_lock_release(struct ferry_win *w, int r, int exclusive)
{
    uint32_t *p = &w->ctl[r].rw;
    if (exclusive)
        __atomic_store_n(p, 0, __ATOMIC_RELEASE);
    else
        __atomic_fetch_sub(p, 1, __ATOMIC_RELEASE);
}

void ferry_win_acc_acquire(struct ferry_win *w, int r)
{
    uint32_t *p = &w->ctl[r].acc;
    unsigned spins = 0;
    for (;;) {
        uint32_t v = 0;
        if (__atomic_compare_exchange_n(p, &v, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
        backoff(&spins);
    }
}

void ferry_win_acc_release(struct ferry_win *w, int r)
{
    __atomic_store_n(&w->ctl[r].acc, 0, __ATOMIC_RELEASE);
}

/* ---- data movement ------------------------------------------------------------ */

/* len bytes between local iovecs and the remote ones, batched by IOV_MAX. */
static int cma(pid_t pid, struct iovec *l, struct iovec *r, size_t n, int write)
{
    size_t i = 0;
    while (i < n) {
        size_t k = n - i < IOV_MAX ? n - i : IOV_MAX;
        size_t want = 0;
        for (size_t j = 0; j < k; j++)
            want += l[i + j].iov_len;
        ssize_t got = write ? process_vm_writev(pid, l + i, k, r + i, k, 0) : process_vm_readv(pid, l + i, k, r + i, k, 0);
        if (got < 0)
            return -errno;
        if ((size_t)got != want) {
            /* a partial transfer: finish the batch one iovec at a time */
            size_t done = (size_t)got;
            for (size_t j = 0; j < k; j++) {
                struct iovec *li = &l[i + j], *ri = &r[i + j];
                if (done >= li->iov_len) {
                    done -= li->iov_len;
                    continue;
                }
                char *lp = (char *)li->iov_base + done;
                char *rp = (char *)ri->iov_base + done;
                size_t left = li->iov_len - done;
                done = 0;
                while (left > 0) {
                    struct iovec a = {lp, left}, b = {rp, left};
                    ssize_t g = write ? process_vm_writev(pid, &a, 1, &b, 1, 0) : process_vm_readv(pid, &a, 1, &b, 1, 0);
                    if (g <= 0)
                        return g < 0 ? -errno : -EIO;
                    lp += g;
                    rp += g;
                    left -= (size_t)g;
                }
            }
        }
        i += k;
    }
    return 0;
}

int ferry_win_target_io(struct ferry_win *w, int r, MPI_Aint disp, size_t count, const struct ferry_datatype *dt,
                        void *stream, int write)
{
    size_t bytes = ferry_dt_bytes(dt, count);
    if (bytes == 0)
        return 0;
    struct ferry_win_peer *p = &w->peer[r];
    MPI_Aint off = disp * (MPI_Aint)p->disp_unit;
    if (p->local) {
        char *t = p->direct + off;
        if (write)
            ferry_dt_unpack(dt, t, 0, stream, bytes);
        else
            ferry_dt_pack(dt, t, 0, stream, bytes);
        return 0;
    }
    uint64_t taddr = p->addr + (uint64_t)off;
    if (ferry_dt_is_contig(dt, count)) {
        struct iovec l = {stream, bytes};
        struct iovec rv = {(void *)ferry_dt_contig_ptr(dt, (void *)(uintptr_t)taddr), bytes};
        return cma(p->pid, &l, &rv, 1, write);
    }
    /* a derived type: lay the data out in a local copy of the span it
     * covers and move just the runs of bytes it touches (ferry_win_layout) */
    MPI_Aint lo;
    size_t span, *runs;
    size_t nrun = ferry_win_layout(dt, count, &lo, &span, &runs);
    char *scratch = ferry_xmalloc(span);
    struct iovec *lv = ferry_xmalloc((nrun + 1) * sizeof *lv), *rv = ferry_xmalloc((nrun + 1) * sizeof *rv);
    for (size_t k = 0; k < nrun; k++) {
        lv[k] = (struct iovec){scratch + runs[2 * k], runs[2 * k + 1]};
        rv[k] = (struct iovec){(void *)(uintptr_t)(taddr + (uint64_t)lo + runs[2 * k]), runs[2 * k + 1]};
    }
    free(runs);
    int rc;
    if (write) {
        ferry_dt_unpack(dt, scratch - lo, 0, stream, bytes);
        rc = cma(p->pid, lv, rv, nrun, 1);
    } else {
        rc = cma(p->pid, lv, rv, nrun, 0);
        if (!rc)
            ferry_dt_pack(dt, scratch - lo, 0, stream, bytes);
    }
    free(lv);
    free(rv);
    free(scratch);
    return rc;
}

size_t ferry_win_layout(const struct ferry_datatype *dt, size_t count, MPI_Aint *lo_out, size_t *span_out,
                        size_t **runs)
{
    size_t bytes = ferry_dt_bytes(dt, count);
    MPI_Aint lo = dt->true_lb, hi = dt->true_lb + dt->true_extent;
    if (count > 1) {
        MPI_Aint shift = (MPI_Aint)(count - 1) * dt->extent;
        if (shift < 0)
            lo += shift;
        else
            hi += shift;
    }
    size_t span = (size_t)(hi - lo), nrun = 0, cap = 8;
    *lo_out = lo;
    *span_out = span;
    *runs = ferry_xmalloc(2 * cap * sizeof **runs);
    if (bytes == 0)
        return 0;
    if (ferry_dt_is_contig(dt, count)) {
        /* one range; lo is where it starts */
        *lo_out = (MPI_Aint)(uintptr_t)ferry_dt_contig_ptr(dt, NULL);
        *span_out = bytes;
        (*runs)[0] = 0;
        (*runs)[1] = bytes;
        return 1;
    }
    char *mask = ferry_xcalloc(1, span), *ones = ferry_xmalloc(bytes);
    memset(ones, 0xff, bytes);
    ferry_dt_unpack(dt, mask - lo, 0, ones, bytes);
    free(ones);
    for (size_t i = 0; i < span;) {
        if (!mask[i]) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < span && mask[j])
            j++;
        if (nrun == cap) {
            cap *= 2;
            *runs = realloc(*runs, 2 * cap * sizeof **runs);
            if (!*runs)
                abort();
        }
        (*runs)[2 * nrun] = i;
        (*runs)[2 * nrun + 1] = j - i;
        nrun++;
        i = j;
    }
    free(mask);
    return nrun;
}
