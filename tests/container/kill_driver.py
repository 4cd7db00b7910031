#!/usr/bin/env python3
"""kill -9 of a rank while shared memory is in use (drives shm_victim.c).

usage: kill_driver.py --launcher MPIEXEC --np N --mode MODE
                      [--genv NAME=VALUE]... [--launcher-arg ARG]...
                      [--expect-map memfd|posix|coll]... [--timeout S]
                      [--max-seconds S] PROG

MODE (see shm_victim.c)
  p2p       the victim SIGKILLs itself with 4 MiB transfers in flight
  coll      the same after 20 allreduces on a communicator with a shared-memory
            collective segment, and one allreduce per iteration
  init      the driver kills the victim while it is held in MPI_Init by
            --hold-shim (hold_fallocate.so), the others wait for it in MPI_Init
            and /dev/shm/ferry-<job>-node exists (needs FERRY_SHM_BACKEND=posix)
  collinit  the driver kills the victim while rank 0 has created
            /dev/shm/ferry-<job>-c<ctx>-<n> and waits for it
            (needs FERRY_COLL_ALLREDUCE=shm)

Checked:
  * the job ends within --max-seconds (default 3) of the kill, with exit
    status 137 (128 + SIGKILL; also in init mode, where the other ranks wait in
    a PMI barrier the victim never enters) and a stderr line naming the killed
    rank
  * init/collinit: the named /dev/shm file really existed when the victim was
    killed (otherwise the run proves nothing and fails)
  * --expect-map: every rank mapped that shared memory (/proc/self/maps)
  * afterwards: no /dev/shm/ferry-<job>-* and no other new /dev/shm/ferry-*
    entry; no rank process alive (recorded pids), and no process at all that
    carries this run's token in its environment (catches grandchildren too)
A hang is killed at --timeout and fails.
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time


def process_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return False


def token_holders(token):
    """pids of live processes whose environment carries FERRY_TEST_TOKEN=token"""
    needle = ("FERRY_TEST_TOKEN=%s" % token).encode()
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if needle in f.read().split(b"\0") and process_alive(int(d)):
                    found.append(int(d))
        except OSError:
            pass
    return found


def wait_for(cond, deadline, proc):
    """poll cond() until true, the deadline passes or proc exits"""
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        if proc.poll() is not None:
            return cond()
        time.sleep(0.01)  # polling a condition with a deadline, not synchronisation
    return cond()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--mode", required=True, choices=["p2p", "coll", "init", "collinit"])
    ap.add_argument("--genv", action="append", default=[])
    ap.add_argument("--launcher-arg", action="append", default=[])
    ap.add_argument("--expect-map", action="append", default=[], choices=["memfd", "posix", "coll"])
    ap.add_argument("--hold-shim", help="hold_fallocate.so (mode init)")
    ap.add_argument("--timeout", type=float, default=50)
    ap.add_argument("--max-seconds", type=float, default=3.0)
    ap.add_argument("prog")
    a = ap.parse_args()
    np_, victim = a.np, a.np - 1
    errors = []
    fail = errors.append

    tmp = tempfile.mkdtemp(prefix="ferry-kill-test-")
    token = os.urandom(8).hex()
    env = dict(os.environ, FERRY_TEST_TOKEN=token)
    genv = []
    for kv in a.genv:
        k, v = kv.split("=", 1)
        genv += ["-genv", k, v]
    if a.mode == "init":
        if not a.hold_shim:
            ap.error("--mode init needs --hold-shim")
        genv += ["-genv", "LD_PRELOAD", os.path.abspath(a.hold_shim), "-genv", "FERRY_TEST_HOLD_RANK",
                 str(victim), "-genv", "FERRY_TEST_HOLD_DIR", tmp]
    cmd = (shlex.split(a.launcher) + ["-n", str(np_)] + a.launcher_arg + genv +
           [a.prog, a.mode, tmp])
    shm_before = set(glob.glob("/dev/shm/ferry-*"))
    t_start = time.time()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, env=env)
    out, err = [], []

    def reader(f, sink):
        for line in iter(f.readline, b""):
            sink.append(line.decode("utf-8", "replace"))
        f.close()

    th = [threading.Thread(target=reader, args=(p.stdout, out), daemon=True),
          threading.Thread(target=reader, args=(p.stderr, err), daemon=True)]
    for t in th:
        t.start()
    deadline = t_start + a.timeout

    def jobid():
        try:
            return open(os.path.join(tmp, "jobid.0")).read().strip()
        except OSError:
            return None

    t_fail = None
    named = []
    if a.mode in ("init", "collinit"):
        def named_files():
            j = jobid()
            if not j or not os.path.exists(os.path.join(tmp, "ready")):
                return []
            pat = "-node" if a.mode == "init" else "-c*-*"
            return glob.glob("/dev/shm/ferry-%s%s" % (glob.escape(j), pat))

        named = wait_for(named_files, deadline, p)
        try:
            vpid = int(open(os.path.join(tmp, "pid.%d" % victim)).read())
        except (OSError, ValueError):
            vpid = None
        if not named:
            fail("no %s file in /dev/shm while the victim waited (ready: %s): the kill would prove nothing"
                 % ("ferry-<job>-node" if a.mode == "init" else "ferry-<job>-c<ctx>-<n>",
                    os.path.exists(os.path.join(tmp, "ready"))))
        if vpid and p.poll() is None:
            os.kill(vpid, signal.SIGKILL)
            t_fail = time.time()
            print("%s: killed rank %d (pid %d) while %s existed" % (a.mode, victim, vpid, " ".join(named)))
        else:
            fail("the job ended before the victim could be killed" if vpid else "no pid file from the victim")

    hung = False
    try:
        rc = p.wait(timeout=max(1.0, deadline - time.time()))
    except subprocess.TimeoutExpired:
        hung = True
        os.killpg(p.pid, signal.SIGKILL)
        rc = p.wait()
    t_exit = time.time()
    for t in th:
        t.join(timeout=5)
    stdout, stderr = "".join(out), "".join(err)
    if hung:
        fail("HANG: the job did not end within %.0f s (killed)" % a.timeout)
    elif any(t.is_alive() for t in th):
        fail("processes still hold the job's stdout/stderr 5 s after mpiexec exited")

    if not hung:
        if t_fail is None:
            try:
                t_fail = float(open(os.path.join(tmp, "victim")).read().split()[1])
            except (OSError, IndexError, ValueError):
                fail("the victim never reached its kill point")
        if t_fail is not None:
            dt = t_exit - t_fail
            if dt > a.max_seconds:
                fail("job ended %.2f s after the kill (limit %.1f s)" % (dt, a.max_seconds))
            else:
                print("%s: job ended %.2f s after the kill, exit status %d" % (a.mode, dt, rc))
        if rc == 0:
            fail("exit status 0 after a rank was killed")
        elif rc != 128 + signal.SIGKILL:
            fail("exit status %d, expected %d (a rank killed by SIGKILL)" % (rc, 128 + signal.SIGKILL))
        if not re.search(r"(?i)(\brank\W{0,3}%d\b|\[%d\])" % (victim, victim), stderr):
            fail("stderr does not name the killed rank %d" % victim)

    for kind in a.expect_map:
        for r in range(np_):
            try:
                maps = open(os.path.join(tmp, "maps.%d" % r)).read()
            except OSError:
                fail("rank %d wrote no maps file" % r)
                continue
            ok = {"memfd": "memfd:ferry-shm" in maps,
                  "posix": re.search(r"/dev/shm/ferry-\S*-node", maps) is not None,
                  "coll": re.search(r"/dev/shm/ferry-\S*-c\d+-\d+", maps) is not None}[kind]
            if not ok:
                fail("rank %d did not map the %s shared memory (maps: %r)" % (r, kind, maps.strip()))

    # every rank process is gone (a short grace period for reaping)
    pids = []
    for f in glob.glob(os.path.join(tmp, "pid.*")):
        try:
            pids.append(int(open(f).read()))
        except ValueError:
            pass
    if len(pids) != np_:
        fail("only %d of %d ranks recorded their pid" % (len(pids), np_))
    grace = time.time() + 3
    while True:
        alive = [q for q in pids if process_alive(q)] + token_holders(token)
        if not alive or time.time() > grace:
            break
        time.sleep(0.05)  # polling a deadline, not synchronisation
    if alive:
        fail("processes of the job still alive after it ended: %s" % sorted(set(alive)))
        for q in set(alive):
            try:
                os.kill(q, signal.SIGKILL)
            except OSError:
                pass

    j = jobid()
    mine = set(glob.glob("/dev/shm/ferry-%s-*" % glob.escape(j))) if j else set()
    other = set(glob.glob("/dev/shm/ferry-*")) - shm_before - mine
    if other:
        # another Ferry job on this machine may hold a name for a moment
        # (until all its ranks mapped it); a leftover stays
        time.sleep(1.0)  # grace period for a transient name, not synchronisation
        other = {f for f in other if os.path.exists(f)}
    leaked = sorted(mine | other)
    if leaked:
        fail("left behind in /dev/shm: %s" % " ".join(leaked))
        for f in leaked:  # keep the machine clean for the next test
            try:
                os.unlink(f)
            except OSError:
                pass
    shutil.rmtree(tmp, ignore_errors=True)

    if errors:
        print("FAIL kill %s np=%d: %s" % (a.mode, np_, "; ".join(errors)))
        print("---- command: %s (%.2f s)" % (" ".join(shlex.quote(c) for c in cmd), t_exit - t_start))
        print("---- stdout:\n" + stdout[-4000:])
        print("---- stderr:\n" + stderr[-4000:])
        return 1
    print("kill %s np=%d: OK" % (a.mode, np_))
    return 0


if __name__ == "__main__":
    sys.exit(main())
