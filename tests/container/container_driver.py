#!/usr/bin/env python3
"""Container-like /dev/shm conditions for Ferry (needs root: unshare -m + mount).

usage: container_driver.py --launcher MPIEXEC --prog SHM_PATHS SCENARIO

The driver re-runs itself under `unshare -m --propagation private`, so every
mount below is private to the test and disappears with it; the host's
/dev/shm is never touched. Each job gets a token in its environment; after
each job no process may carry it, and the private /dev/shm must be empty.

SCENARIO
  tmpfs64   /dev/shm is a 64 MiB tmpfs (Docker's default --shm-size):
              8 ranks, default (memfd) backend           must pass
              8 ranks, FERRY_SHM_BACKEND=posix            must pass
              4 ranks, posix + shared-memory collectives  must pass
  readonly  /dev/shm is a read-only tmpfs (no writable /dev/shm):
              8 ranks, default backend                    must pass
              4 ranks, shared-memory collectives forced   must pass (they fall back)
              8 ranks, posix                              must fail fast, naming
                                                          FERRY_SHM_BACKEND=memfd
  missing   no /dev/shm at all (a private /dev without it):
              8 ranks, default backend                    must pass
              4 ranks, shared-memory collectives forced   must pass
  shortage  a real shortage, posix backend, 8 ranks:
              1 MiB tmpfs: nobody can reserve             must fail fast, naming --shm-size
              20 MiB tmpfs, 1 MiB rings (8 MiB per rank):
              two ranks reserve, six cannot               must fail fast, naming --shm-size
            and a 64 KiB tmpfs with shared-memory collectives forced
            (default backend): the collective segment cannot be reserved,
            the collectives fall back                     must pass
A job that must fail must exit non-zero within 10 s, say so on stderr, show
no SIGBUS, leave nothing in /dev/shm and no process behind.

Not root, or unshare/mount not permitted: the test FAILS (it never skips).
"""
import argparse
import errno
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MARK = "container_driver: inside a private mount namespace"
FAIL_FAST_S = 10.0
RUN_TIMEOUT_S = 90.0
COLL_SHM = ["--bind-to", "none", "-genv", "FERRY_OVERSUBSCRIBE", "0",
            "-genv", "FERRY_COLL_ALLREDUCE", "shm", "-genv", "FERRY_COLL_BCAST", "shm"]
POSIX = ["-genv", "FERRY_SHM_BACKEND", "posix"]
VERBOSE = ["-genv", "FERRY_VERBOSE", "1"]
COLL_FALLBACK = ("pass", [r"coll: no shared-memory segment for communicator"])


def sh(*cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                                  p.stdout.decode(errors="replace").strip()))


def process_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def token_holders(token):
    needle = ("FERRY_TEST_TOKEN=%s" % token).encode()
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/environ" % d, "rb") as f:
                    if needle in f.read().split(b"\0") and process_alive(int(d)):
                        found.append(int(d))
            except OSError:
                pass
    return found


# ---- /dev/shm set-ups (inside the namespace) ---------------------------------

class Shm:
    """A mount set-up for /dev/shm; undo() restores the namespace's view."""

    def __init__(self, kind, size=None):
        self.kind, self.size, self.undo_cmds = kind, size, []

    def __str__(self):
        return {"tmpfs": "a %s tmpfs on /dev/shm" % self.size,
                "ro": "a read-only tmpfs on /dev/shm",
                "missing": "no /dev/shm"}[self.kind]

    def setup(self):
        if self.kind == "tmpfs":
            sh("mount", "-t", "tmpfs", "-o", "size=%s,mode=1777" % self.size, "ferry-test-shm", "/dev/shm")
            self.undo_cmds.append(["umount", "/dev/shm"])
        elif self.kind == "ro":
            sh("mount", "-t", "tmpfs", "-o", "ro,size=1m,mode=1777", "ferry-test-shm", "/dev/shm")
            self.undo_cmds.append(["umount", "/dev/shm"])
            try:
                open("/dev/shm/ferry-probe", "w").close()
                raise RuntimeError("/dev/shm is writable after mounting it read-only")
            except OSError as e:
                if e.errno != errno.EROFS:
                    raise RuntimeError("/dev/shm probe: %s (expected EROFS)" % e)
        elif self.kind == "missing":
            # a private /dev that has the usual character devices but no shm
            self.old = tempfile.mkdtemp(prefix="ferry-olddev-")
            sh("mount", "--bind", "/dev", self.old)
            sh("mount", "-t", "tmpfs", "-o", "size=64k,mode=755", "ferry-test-dev", "/dev")
            self.undo_cmds += [["umount", "-l", "/dev"], ["umount", "-l", self.old]]
            for n in ("null", "zero", "full", "random", "urandom", "tty"):
                if os.path.exists(os.path.join(self.old, n)):
                    open("/dev/" + n, "w").close()
                    sh("mount", "--bind", os.path.join(self.old, n), "/dev/" + n)
            for n, t in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
                os.symlink(t, "/dev/" + n)
            if os.path.exists("/dev/shm"):
                raise RuntimeError("/dev/shm still exists in the private /dev")
        if self.kind == "tmpfs":
            st = os.statvfs("/dev/shm")
            print("  /dev/shm: tmpfs of %d KiB" % (st.f_blocks * st.f_frsize // 1024))

    def entries(self):
        """what the jobs left in /dev/shm (private to this namespace)"""
        if self.kind == "missing":
            return ["/dev/shm (created!)"] if os.path.exists("/dev/shm") else []
        return sorted(os.listdir("/dev/shm"))

    def undo(self):
        for c in self.undo_cmds:
            subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.kind == "missing":
            shutil.rmtree(self.old, ignore_errors=True)


# ---- one job -----------------------------------------------------------------

def job(a, what, np_, opts, args, expect):
    """expect: "pass"; ("pass", [regex...]): pass and the output matches each
    regex (proof that the path under test was taken); or [regex...]: the job
    must fail and stderr match each regex."""
    want = []
    if isinstance(expect, tuple):
        expect, want = expect
    token = os.urandom(8).hex()
    env = dict(os.environ, FERRY_TEST_TOKEN=token)
    cmd = shlex.split(a.launcher) + ["-n", str(np_)] + opts + [a.prog] + args
    t0 = time.time()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=RUN_TIMEOUT_S)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        hung = True
    dt = time.time() - t0
    out, err = out.decode(errors="replace"), err.decode(errors="replace")
    rc = p.returncode
    errors = []
    if hung:
        errors.append("HANG: killed after %.0f s" % RUN_TIMEOUT_S)
    elif expect == "pass":
        if rc != 0:
            errors.append("exit status %d" % rc)
        if "shm_paths: OK (%d ranks)" % np_ not in out:
            errors.append("no success line from rank 0")
        for rx in want:
            if not re.search(rx, out + err):
                errors.append("output does not match /%s/" % rx)
    else:
        if rc == 0:
            errors.append("exit status 0, but the job cannot have worked")
        if dt > FAIL_FAST_S:
            errors.append("took %.1f s to fail (limit %.0f s)" % (dt, FAIL_FAST_S))
        for rx in expect:
            if not re.search(rx, err):
                errors.append("stderr does not match /%s/" % rx)
        if rc == 128 + signal.SIGBUS or re.search(r"SIGBUS|Bus error|signal 7\b", err):
            errors.append("a rank died of SIGBUS")
    grace = time.time() + 3
    while True:
        alive = token_holders(token)
        if not alive or time.time() > grace:
            break
        time.sleep(0.05)  # polling a deadline, not synchronisation
    if alive:
        errors.append("processes left behind: %s" % alive)
        for q in alive:
            try:
                os.kill(q, signal.SIGKILL)
            except OSError:
                pass
    left = a.shm.entries()
    if left:
        errors.append("left in /dev/shm: %s" % " ".join(left))
        if a.shm.kind != "missing":
            for f in left:
                try:
                    os.unlink(os.path.join("/dev/shm", f))
                except OSError:
                    pass
    shown = " ".join(shlex.quote(c) for c in cmd[len(shlex.split(a.launcher)):])
    if errors:
        print("  FAIL  %-58s %5.1f s  %s" % (what, dt, "; ".join(errors)))
        print("        command: mpiexec %s\n        with %s" % (shown, a.shm))
        print("        ---- stdout:\n" + out[-3000:] + "\n        ---- stderr:\n" + err[-3000:])
        return 1
    first_err = next((l for l in err.splitlines() if l.strip()), "")
    print("  ok    %-58s %5.1f s%s" % (what, dt, ("  [" + first_err[:150] + "]") if expect != "pass" else ""))
    return 0


def scenario(a):
    q = ["--quick"]
    plan = {
        "tmpfs64": [
            (Shm("tmpfs", "64m"), [
                ("8 ranks, memfd (default)", 8, [], q + ["--expect-map", "memfd"], "pass"),
                ("8 ranks, FERRY_SHM_BACKEND=posix", 8, POSIX, q + ["--expect-map", "posix"], "pass"),
                ("4 ranks, posix + shared-memory collectives", 4, POSIX + COLL_SHM,
                 q + ["--expect-map", "posix", "--expect-map", "coll"], "pass"),
            ])],
        "readonly": [
            (Shm("ro"), [
                ("8 ranks, memfd (default)", 8, [], q + ["--expect-map", "memfd"], "pass"),
                ("4 ranks, shared-memory collectives forced", 4, COLL_SHM + VERBOSE, q, COLL_FALLBACK),
                ("8 ranks, posix: fails, names the fix", 8, POSIX, q,
                 [r"FERRY_SHM_BACKEND=memfd", r"(?i)read-only"]),
            ])],
        "missing": [
            (Shm("missing"), [
                ("8 ranks, memfd (default)", 8, [], q + ["--expect-map", "memfd"], "pass"),
                ("4 ranks, shared-memory collectives forced", 4, COLL_SHM + VERBOSE, q, COLL_FALLBACK),
            ])],
        "shortage": [
            (Shm("tmpfs", "1m"), [
                ("8 ranks, posix, 1 MiB /dev/shm: fails, names --shm-size", 8, POSIX, q,
                 [r"--shm-size", r"(?i)no space left"]),
            ]),
            (Shm("tmpfs", "20m"), [
                ("8 ranks, posix, 1 MiB rings, 20 MiB /dev/shm: 2 of 8 fit", 8,
                 POSIX + ["-genv", "FERRY_SHM_RING", "1048576"], q,
                 [r"--shm-size", r"(?i)no space left"]),
            ]),
            (Shm("tmpfs", "64k"), [
                ("4 ranks, shm collectives forced, 64 KiB /dev/shm", 4, COLL_SHM + VERBOSE, q, COLL_FALLBACK),
            ]),
        ],
    }[a.scenario]
    bad = 0
    for shm, jobs in plan:
        a.shm = shm
        try:
            shm.setup()
        except (RuntimeError, OSError) as e:
            print("FAIL: cannot set up %s: %s" % (shm, e))
            shm.undo()
            return 1
        print("with %s:" % shm)
        try:
            for j in jobs:
                bad += job(a, *j)
        finally:
            shm.undo()
    print("container %s: %s" % (a.scenario, "FAIL" if bad else "OK"))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("scenario", choices=["tmpfs64", "readonly", "missing", "shortage"])
    a = ap.parse_args()
    if a.inside:
        print(MARK, flush=True)
        return scenario(a)
    # outside: refuse to skip
    if os.geteuid() != 0:
        print("FAIL: the container tests need root (unshare -m and mount a tmpfs on /dev/shm); "
              "running as uid %d. They do not skip: run ctest -L container as root (CI does)." % os.geteuid())
        return 1
    unshare = shutil.which("unshare")
    if not unshare or not shutil.which("mount"):
        print("FAIL: unshare(1) or mount(8) not found (Debian: util-linux, mount)")
        return 1
    a.launcher = " ".join(shlex.quote(os.path.abspath(c) if os.path.exists(c) else c)
                          for c in shlex.split(a.launcher))
    inner = [unshare, "-m", "--propagation", "private", "--", sys.executable, os.path.abspath(__file__),
             "--inside", "--launcher", a.launcher, "--prog", os.path.abspath(a.prog), a.scenario]
    p = subprocess.run(inner, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode(errors="replace")
    sys.stdout.write(out)
    if MARK not in out:
        print("FAIL: could not enter a private mount namespace (unshare -m exit %d): "
              "mount namespaces are not permitted here (a container without CAP_SYS_ADMIN?). "
              "The container tests cannot run, and do not count as passed." % p.returncode)
        return 1
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
