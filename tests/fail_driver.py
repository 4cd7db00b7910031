#!/usr/bin/env python3
"""Driver for the launcher / failure tests (fail_victim.c).

usage: fail_driver.py --launcher "mpiexec" --np N [--timeout S] [--ferry]
                      [--max-seconds S] MODE -- /path/to/fail_victim

MODE   kill | abort | exit0 | fatal | exit7 | stdin | hang | nofinalize | spawnkill   (see fail_victim.c)

Always checked (any MPI):
  * the job ends before --timeout (a hang fails, the process group is killed)
  * kill/abort/exit0/fatal/nofinalize/spawnkill: exit status non-zero (exit0,
    nofinalize: see --lenient-exit0);
    the job is over within
    --max-seconds (default 3) of the failure -- measured from the victim's own
    CLOCK_REALTIME stamp written just before it fails, to mpiexec's exit;
    every rank process (pids the ranks recorded) is gone shortly after;
    the line every other rank printed (not flushed) before the failure is in
    stdout (both peers line-buffer or unbuffer their ranks' stdout)
  * exit7: exit status exactly 7;  stdin: exit status 0, rank 0 read the line
  * hang: every rank blocks in a receive nobody matches; run with
    MPIEXEC_TIMEOUT=HANG_LIMIT (hydra's, Open MPI's and Ferry's variable), the
    job must end non-zero within --max-seconds of that limit
  * no /dev/shm/ferry-* entry that was not there before the run
With --ferry, Ferry's own wording is checked too (other MPIs word it
differently):
  * nofinalize: exit status 1, and every other rank's line (printed after
    the victim exited) is in stdout: they were let finish (hydra and Open
    MPI's mpirun kill them)
  * kill/abort/exit0/nofinalize/spawnkill: a line on stderr names the failed rank
    ("rank R" or "[R]"; spawnkill: "spawned rank 1 of world 1"); kill/spawnkill:
    exit status 137 (128 + SIGKILL); abort: exit status 3, and the line the victim printed
    to stdout just before MPI_Abort (not flushed) is in the output; fatal:
    so is the line it printed (not flushed) before the erroneous MPI_Send
  * fatal: ONE stderr line names the rank, "MPI_Send" and the reason
    (invalid / out of range / MPI_ERR_RANK)
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

STDIN_LINE = "ferry stdin test 12345 \u00e9"
HANG_LIMIT = 2  # seconds, MPIEXEC_TIMEOUT of the hang mode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--max-seconds", type=float, default=3.0)
    ap.add_argument("--ferry", action="store_true")
    ap.add_argument("--lenient-exit0", action="store_true",
                    help="peer deviation: MPICH's hydra exits 0 when a rank calls "
                         "exit(0) without MPI_Finalize (1-2 ranks)")
    ap.add_argument("mode", choices=["kill", "abort", "exit0", "fatal", "exit7", "stdin", "hang", "nofinalize",
                                     "spawnkill"])
    ap.add_argument("prog", nargs="+")
    a = ap.parse_args()
    prog = a.prog[-1]
    np_ = a.np
    # spawnkill: the job spawns 2 more processes; the victim is the last
    # (merged rank np + 1), which Ferry's mpiexec names "spawned rank 1"
    nproc = np_ + 2 if a.mode == "spawnkill" else np_
    victim = nproc - 1
    errors = []

    def fail(msg):
        errors.append(msg)

    tmp = tempfile.mkdtemp(prefix="ferry-fail-test-")
    shm_before = set(glob.glob("/dev/shm/ferry-*"))
    arg = STDIN_LINE if a.mode == "stdin" else tmp
    cmd = shlex.split(a.launcher) + ["-n", str(np_), prog, a.mode, arg]
    env = dict(os.environ)
    if a.mode == "hang":
        env["MPIEXEC_TIMEOUT"] = str(HANG_LIMIT)
    t_start = time.time()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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
    try:
        if a.mode == "stdin":
            p.stdin.write((STDIN_LINE + "\n").encode())
            p.stdin.flush()
        p.stdin.close()
    except BrokenPipeError:
        pass

    hung = False
    try:
        rc = p.wait(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        hung = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        rc = p.wait()
    t_exit = time.time()
    # the output pipes close once every process holding them is gone
    for t in th:
        t.join(timeout=5)
    pipes_open = any(t.is_alive() for t in th)
    stdout, stderr = "".join(out), "".join(err)

    if hung:
        fail("HANG: the job did not end within %.0f s (killed)" % a.timeout)
    if pipes_open and not hung:
        fail("processes still hold the job's stdout/stderr 5 s after mpiexec exited")

    failing = a.mode in ("kill", "abort", "exit0", "fatal", "hang", "nofinalize", "spawnkill")
    if failing and not hung:
        if rc == 0 and not (a.mode in ("exit0", "nofinalize") and a.lenient_exit0):
            fail("exit status 0 after a rank failed (mode %s)" % a.mode)
        vf = os.path.join(tmp, "victim")
        if not os.path.exists(vf):
            fail("the victim never reached its failure point (no %s)" % vf)
        else:
            vpid, vt = open(vf).read().split()
            dt = t_exit - float(vt) - (HANG_LIMIT if a.mode == "hang" else 0)
            if dt > a.max_seconds:
                fail("job ended %.2f s after the failure (limit %.1f s)" % (dt, a.max_seconds))
            else:
                print("%s: job ended %.2f s after the failure, exit status %d" % (a.mode, dt, rc))
        # every rank is gone (allow a short grace period for reaping)
        pids = []
        for f in glob.glob(os.path.join(tmp, "pid.*")):
            try:
                pids.append(int(open(f).read()))
            except ValueError:
                pass
        if len(pids) != nproc:
            fail("only %d of %d ranks recorded their pid" % (len(pids), nproc))
        deadline = time.time() + 3
        alive = pids
        while True:
            alive = [q for q in alive if process_alive(q)]
            if not alive or time.time() > deadline:
                break
            time.sleep(0.05)  # polling a deadline, not synchronisation
        if alive:
            fail("rank processes still alive after the job ended: %s" % alive)
            for q in alive:
                try:
                    os.kill(q, signal.SIGKILL)
                except OSError:
                    pass
        if a.ferry:
            rank_re = re.compile(r"(?i)(\brank\W{0,3}%d\b|\[%d\])" % (victim, victim))
            if a.mode == "spawnkill":
                rank_re = re.compile(r"spawned rank 1 of world 1\b")
            if a.mode == "hang":
                if "time limit" not in stderr:
                    fail("no stderr line says the job ran past its time limit")
            elif a.mode == "fatal":
                reason = re.compile(r"(?i)(invalid|out of range|MPI_ERR_RANK)")
                if not any("MPI_Send" in l and rank_re.search(l) and reason.search(l)
                           for l in stderr.splitlines()):
                    fail("no stderr line names rank %d, MPI_Send and the reason" % victim)
            elif not rank_re.search(stderr):
                fail("stderr does not name the failed rank %d" % victim)
            if a.mode == "nofinalize" and rc != 1:
                fail("a rank that skipped MPI_Finalize gave exit status %d, expected 1" % rc)
            if a.mode in ("kill", "spawnkill") and rc != 128 + signal.SIGKILL:
                # mpiexec judges the victim's own death (status 128 + signal),
                # not a later symptom of it (its PMI connection closing)
                fail("a rank killed by SIGKILL gave exit status %d, expected %d" % (rc, 128 + signal.SIGKILL))
            if a.mode == "abort" and rc != 3:
                fail("MPI_Abort(MPI_COMM_WORLD, 3) gave exit status %d, expected 3" % rc)
            if a.mode == "abort" and "calls MPI_Abort(3)" not in stdout:
                fail("the line the victim printed (unflushed) before MPI_Abort is not in stdout")
            if a.mode == "fatal" and "calls MPI_Send to rank" not in stdout:
                fail("the line the victim printed (unflushed) before its fatal MPI_Send is not in stdout")
        if a.mode != "hang":
            lost = [r for r in range(victim) if "bystander: rank %d " % r not in stdout]
            if a.mode == "nofinalize":
                # Ferry's mpiexec lets them finish (FERRY_EXIT_GRACE_MS);
                # hydra and Open MPI's mpirun kill them
                if lost and a.ferry:
                    fail("ranks %s were not let finish after rank %d exited without MPI_Finalize" % (lost, victim))
            elif lost:
                fail("the lines ranks %s printed (unflushed) before they were killed are not in stdout"
                     % lost)
    if a.mode == "exit7" and not hung and rc != 7:
        fail("rank %d exited 7 after MPI_Finalize; mpiexec exit status %d" % (victim, rc))
    if a.mode == "stdin" and not hung:
        if rc != 0:
            fail("stdin test: exit status %d" % rc)
        if "fail_victim stdin: OK" not in stdout:
            fail("stdin test: no success line from rank 0")

    leaked = sorted(set(glob.glob("/dev/shm/ferry-*")) - shm_before)
    if leaked:
        fail("left behind in /dev/shm: %s" % " ".join(leaked))
        if a.ferry:
            for f in leaked:  # keep the machine clean for the next test
                shutil.rmtree(f, ignore_errors=True) if os.path.isdir(f) else _unlink(f)
    shutil.rmtree(tmp, ignore_errors=True)

    if errors:
        print("FAIL %s np=%d: %s" % (a.mode, np_, "; ".join(errors)))
        print("---- command: %s (%.2f s)" % (" ".join(shlex.quote(c) for c in cmd),
                                              t_exit - t_start))
        print("---- stdout:\n" + stdout[-4000:])
        print("---- stderr:\n" + stderr[-4000:])
        return 1
    return 0


def _unlink(f):
    try:
        os.unlink(f)
    except OSError:
        pass


def process_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


if __name__ == "__main__":
    sys.exit(main())
