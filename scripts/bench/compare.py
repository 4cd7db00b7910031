#!/usr/bin/env python3
"""Compare Ferry with Open MPI and MPICH on this machine, in one command.

Builds tools/bench/ferry-bench.c with each available MPI's compiler wrapper,
runs the same tests with the same rank counts and binding on each (one run
per library and rank count, each under its own timeout), runs
ferry-machine-limits for the point-to-point tests (cache-line latency, memcpy
and process_vm_readv bandwidth), and writes into --out:

  <lib>-np<N>.csv, machine.csv   library,test,size,value,unit rows
  <lib>-np<N>.log, machine.log   the programs' human-readable output
  summary.md                     targets overview + one table per (test, np)
                                 (also printed at the end)
  <test>-np<N>.png               log-log plots, one line per library,
                                 machine limit dashed; <test>.png over np
                                 for barrier and ibarrier

  python3 scripts/bench/compare.py --quick --ferry-prefix build/install --out bench-results
  python3 scripts/bench/compare.py --coll-quick --ferry-prefix build/install --out bench-coll
  python3 scripts/bench/compare.py --libs openmpi,mpich --tests latency,bw
  python3 scripts/bench/compare.py --tests coll --np 2,4,8
  python3 scripts/bench/compare.py --merge run1,run2,run3 --out merged   # medians over runs

A peer MPI that is not installed is noted and skipped.
"""
import argparse
import csv
import datetime
import glob
import math
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BENCH_SRC = os.path.join(REPO, "tools", "bench", "ferry-bench.c")
LIMITS_SRC = os.path.join(REPO, "tools", "bench", "machine-limits.c")

P2P_TESTS = ["latency", "bw", "bibw", "mr", "multi_lat"]
BLOCKING_COLL = ["barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall"]
NBC_TESTS = ["ibarrier", "ibcast", "iallreduce", "iallgather", "ialltoall"]
COLL_TESTS = BLOCKING_COLL + NBC_TESTS
ALL_TESTS = P2P_TESTS + COLL_TESTS
SIZELESS = {"barrier", "ibarrier"}
# tests the machine bounds (machine_limit): the point-to-point ones and the barrier
LIMITED_TESTS = P2P_TESTS + ["barrier"]
SHORTHANDS = {"p2p": P2P_TESTS, "coll": COLL_TESTS, "all": ALL_TESTS}
ALL_LIBS = ["ferry", "openmpi", "mpich"]
LIB_NAMES = {"ferry": "Ferry", "openmpi": "Open MPI", "mpich": "MPICH", "machine": "machine"}
COLORS = {"ferry": "tab:red", "openmpi": "tab:blue", "mpich": "tab:green"}

# per test: title, unit, lower_is_better
TEST_INFO = {
    "latency": ("ping-pong one-way latency (RTT/2), ranks 0<->1", "us", True),
    "bw": ("unidirectional bandwidth, window of 64 Isend + ack, rank 0 -> 1", "MB/s", False),
    "bibw": ("bidirectional bandwidth, window of 64 each way, both directions summed", "MB/s", False),
    "mr": ("message rate, n/2 sender->receiver pairs, window of 64, aggregate", "msg/s", False),
    "multi_lat": ("multi-pair latency, rank i <-> i+n/2, mean one-way", "us", True),
    "barrier": ("MPI_Barrier, time per call, max over ranks", "us", True),
    "bcast": ("MPI_Bcast from rank 0, size bytes", "us", True),
    "reduce": ("MPI_Reduce to rank 0, MPI_FLOAT MPI_SUM, size bytes per rank", "us", True),
    "allreduce": ("MPI_Allreduce, MPI_FLOAT MPI_SUM, size bytes per rank", "us", True),
    "gather": ("MPI_Gather to rank 0, size bytes from each rank", "us", True),
    "scatter": ("MPI_Scatter from rank 0, size bytes to each rank", "us", True),
    "allgather": ("MPI_Allgather, size bytes from each rank", "us", True),
    "alltoall": ("MPI_Alltoall, size bytes to each rank", "us", True),
    "ibarrier": ("MPI_Ibarrier + compute + MPI_Wait", "us", True),
    "ibcast": ("MPI_Ibcast from rank 0 + compute + MPI_Wait", "us", True),
    "iallreduce": ("MPI_Iallreduce (FLOAT SUM) + compute + MPI_Wait", "us", True),
    "iallgather": ("MPI_Iallgather + compute + MPI_Wait", "us", True),
    "ialltoall": ("MPI_Ialltoall + compute + MPI_Wait", "us", True),
}


def note(msg):
    print("compare.py: " + msg, flush=True)


# --------------------------------------------------------------------------
# matplotlib: use it if importable; else re-run under a system python that has
# it; else try to install it (apt-get, then pip); else no plots.

def _has_mpl(python):
    try:
        return subprocess.run([python, "-c", "import matplotlib"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def ensure_matplotlib(args):
    if args.no_plots:
        return False
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        pass
    others = [p for p in ("/usr/bin/python3", shutil.which("python3") or "") if p and
              os.path.realpath(p) != os.path.realpath(sys.executable)]
    if os.environ.get("FERRY_COMPARE_REEXEC") != "1":
        for py in others:
            if _has_mpl(py):
                note("matplotlib found under %s; re-running with it" % py)
                os.environ["FERRY_COMPARE_REEXEC"] = "1"
                os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])
        # not found anywhere: install it
        if os.geteuid() == 0 and shutil.which("apt-get"):
            note("matplotlib missing: apt-get install -y python3-matplotlib")
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            rc = subprocess.run(["apt-get", "install", "-y", "-q", "python3-matplotlib"], env=env,
                                stdout=subprocess.DEVNULL).returncode
            if rc != 0:
                subprocess.run(["apt-get", "update", "-q"], env=env, stdout=subprocess.DEVNULL)
                subprocess.run(["apt-get", "install", "-y", "-q", "python3-matplotlib"], env=env,
                               stdout=subprocess.DEVNULL)
            for py in [sys.executable] + others:
                if _has_mpl(py):
                    if os.path.realpath(py) != os.path.realpath(sys.executable):
                        os.environ["FERRY_COMPARE_REEXEC"] = "1"
                        os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])
                    break
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        pass
    note("matplotlib missing: trying pip install --user matplotlib")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--user", "matplotlib"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import site
        import importlib
        sys.path.append(site.getusersitepackages())
        importlib.invalidate_caches()
        import matplotlib  # noqa: F401,F811
        return True
    except ImportError:
        note("matplotlib unavailable: no plots (tables and CSVs are still written)")
        return False


# --------------------------------------------------------------------------
# libraries

class Lib:
    def __init__(self, key):
        self.key = key
        self.name = LIB_NAMES[key]
        self.cc = None          # compiler wrapper command (list)
        self.prebuilt = None    # an already built ferry-bench
        self.runner = None      # launcher program
        self.flavor = None      # how to pass options to it: ferry, hydra, orte
        self.env = {}
        self.binary = None
        self.version = ""
        self.status = "not run"
        self.runs = {}          # np -> Run
        self.round_runs = {}    # np -> [Run] (--rounds)


class Run:
    """One library at one rank count."""
    def __init__(self, lib, np_):
        self.lib, self.np = lib, np_
        self.command = None
        self.csv = None
        self.status = "not run"
        self.seconds = None
        self.load = None


def launch_cmd(lib, np_, oversub):
    """Launcher prefix for np_ ranks: one rank per core, or unbound when
    oversubscribed (Open MPI also with its yield mode on)."""
    if lib.flavor == "orte":
        cmd = [lib.runner, "--allow-run-as-root"]
        if oversub:
            cmd += ["--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
        else:
            cmd += ["--bind-to", "core"]
    elif lib.flavor == "hydra":
        cmd = [lib.runner, "-bind-to", "none" if oversub else "core"]
    else:  # Ferry's mpiexec detects oversubscription itself
        cmd = [lib.runner, "--bind-to", "none" if oversub else "core"]
    return cmd + ["-n", str(np_)]


def find_ferry(prefix):
    """Ferry from an install prefix or a CMake build directory."""
    lib = Lib("ferry")
    if not prefix:
        for guess in (os.path.join(REPO, "build", "install"), os.path.join(REPO, "build")):
            if os.path.isdir(guess):
                prefix = guess
                note("no --ferry-prefix: trying %s" % guess)
                break
    if not prefix or not os.path.isdir(prefix):
        lib.status = "skipped: no Ferry prefix (give --ferry-prefix PATH: an install prefix or a build dir)"
        return lib
    prefix = os.path.abspath(prefix)

    def first(cands):
        for c in cands:
            if os.path.isfile(c) and os.access(c, os.X_OK):
                return c
        return None

    mpiexec = first([os.path.join(prefix, "bin", "mpiexec"), os.path.join(prefix, "mpiexec"),
                     os.path.join(prefix, "tools", "mpiexec", "mpiexec")])
    if mpiexec:
        lib.runner, lib.flavor = mpiexec, "ferry"
    elif shutil.which("mpirun.mpich"):
        # Ferry speaks PMI-1 and has the MPICH ABI, so MPICH's hydra starts it too
        lib.runner, lib.flavor = shutil.which("mpirun.mpich"), "hydra"
        note("Ferry: no mpiexec under %s; launching Ferry with MPICH's hydra (mpirun.mpich, PMI-1)" % prefix)
    else:
        lib.status = "skipped: no mpiexec under %s (looked in bin/, ., tools/mpiexec/)" % prefix
        return lib
    mpicc = first([os.path.join(prefix, "bin", "mpicc"), os.path.join(prefix, "mpicc")])
    libdirs = [d for d in (os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"),
                           os.path.join(prefix, "src"), prefix) if os.path.isdir(d)]
    libmpi = None
    for d in libdirs:
        hits = sorted(glob.glob(os.path.join(d, "libmpi.so*")) + glob.glob(os.path.join(d, "libmpi.a")))
        if hits:
            libmpi = hits[0]
            break
    incs = [d for d in (os.path.join(prefix, "include"), os.path.join(REPO, "include"))
            if os.path.isfile(os.path.join(d, "mpi.h"))]
    if mpicc:
        lib.cc = [mpicc]
    elif libmpi and incs:
        # no wrapper yet: compile and link by hand against the prefix's libmpi
        libdir = os.path.dirname(libmpi)
        lib.cc = [os.environ.get("CC", "cc"), "-I" + incs[0]]
        if libmpi.endswith(".a"):
            lib.ldflags = [libmpi]
        else:
            lib.ldflags = ["-L" + libdir, "-Wl,-rpath," + libdir, "-lmpi"]
        lib.ldflags += ["-lpthread", "-lrt"]
    else:
        # last resort: the ferry-bench that Ferry's own build made
        lib.prebuilt = first([os.path.join(prefix, "bin", "ferry-bench")])
        if not lib.prebuilt:
            lib.status = "skipped: under %s found neither bin/mpicc, libmpi + mpi.h, nor bin/ferry-bench" % prefix
            return lib
    ld = [d for d in libdirs if glob.glob(os.path.join(d, "libmpi*"))]
    if ld:
        lib.env["LD_LIBRARY_PATH"] = ":".join(ld + [os.environ.get("LD_LIBRARY_PATH", "")]).rstrip(":")
    lib.status = "ok"
    return lib


def find_peer(key):
    lib = Lib(key)
    if key == "openmpi":
        cc, run = shutil.which("mpicc.openmpi"), shutil.which("mpirun.openmpi")
        if not cc or not run:
            lib.status = "skipped: Open MPI not installed (no mpicc.openmpi / mpirun.openmpi; apt-get install openmpi-bin libopenmpi-dev)"
            return lib
        lib.cc = [cc]
        lib.runner, lib.flavor = run, "orte"
    elif key == "mpich":
        cc, run = shutil.which("mpicc.mpich"), shutil.which("mpirun.mpich")
        if not cc or not run:
            lib.status = "skipped: MPICH not installed (no mpicc.mpich / mpirun.mpich; apt-get install mpich libmpich-dev)"
            return lib
        lib.cc = [cc]
        lib.runner, lib.flavor = run, "hydra"
    lib.status = "ok"
    return lib


# --------------------------------------------------------------------------
# build and run

def sh(cmd):
    return " ".join(shlex.quote(c) for c in cmd)


def build_bench(lib, builddir):
    if lib.prebuilt:
        lib.binary = lib.prebuilt
        note("%s: using prebuilt %s" % (lib.name, lib.binary))
        return True
    out = os.path.join(builddir, "ferry-bench-" + lib.key)
    cmd = lib.cc + ["-O2", "-std=c11", "-o", out, BENCH_SRC] + getattr(lib, "ldflags", [])
    note("%s: build: %s" % (lib.name, sh(cmd)))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        lib.status = "skipped: build failed (see %s.build.log)" % lib.key
        with open(os.path.join(builddir, lib.key + ".build.log"), "w") as f:
            f.write(sh(cmd) + "\n" + p.stdout)
        note("%s: build FAILED:\n%s" % (lib.name, p.stdout[-3000:]))
        return False
    lib.binary = out
    return True


def run_logged(cmd, log_path, env_extra, timeout):
    """Run cmd in its own session, tee output to log_path; kill the session on timeout."""
    env = dict(os.environ)
    env.update(env_extra)
    t0 = time.time()
    with open(log_path, "wb") as log:
        log.write(("$ " + sh(cmd) + "\n").encode())
        log.flush()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
        timed_out = False
        fd = p.stdout.fileno()
        try:
            import selectors
            sel = selectors.DefaultSelector()
            sel.register(fd, selectors.EVENT_READ)
            while True:
                left = timeout - (time.time() - t0)
                if left <= 0:
                    timed_out = True
                    break
                if sel.select(timeout=min(left, 1.0)):
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    log.write(chunk)
                    log.flush()
            if timed_out:
                note("timeout after %ds: killing %s" % (timeout, cmd[0]))
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    try:
                        os.killpg(p.pid, sig)
                    except ProcessLookupError:
                        break
                    time.sleep(2)
            rc = p.wait()
            p.stdout.close()
        except KeyboardInterrupt:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            raise
    return (124 if timed_out else rc), time.time() - t0


def bench_args(args):
    a = ["--reps", str(args.reps), "--factor", str(args.factor)]
    if any(t in P2P_TESTS for t in args.tests):
        a += ["--min-size", args.min_size, "--max-size", args.max_size]
    if any(t in COLL_TESTS for t in args.tests):
        a += ["--coll-min-size", args.coll_min_size, "--coll-max-size", args.coll_max_size,
              "--time-limit", "%g" % args.time_limit, "--min-iters", str(args.min_iters)]
    if args.scale != 1.0:
        a += ["--scale", str(args.scale)]
    return a


def last_row(path):
    """(test, size) of the last row of a CSV, or None."""
    last = None
    try:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                t = row["test"]
                for suffix in ("_pure", "_overlap"):
                    if t.endswith(suffix) and t[:-len(suffix)] in NBC_TESTS:
                        t = t[:-len(suffix)]
                last = (t, row["size"])
    except OSError:
        pass
    return last


def run_lib(lib, np_, args, outdir, rnd=None):
    """One run of lib at np_ ranks; with --rounds, round `rnd` of several
    (written as <lib>-np<N>-r<rnd>.csv, merged later by merge_rounds)."""
    run = Run(lib, np_)
    if rnd is None:
        lib.runs[np_] = run
    else:
        lib.round_runs.setdefault(np_, []).append(run)
    oversub = np_ > (os.cpu_count() or 1)
    base = "%s-np%d" % (lib.key, np_) + ("" if rnd is None else "-r%d" % rnd)
    csv_path = os.path.join(outdir, base + ".csv")
    log_path = os.path.join(outdir, base + ".log")
    if os.path.exists(csv_path):
        os.remove(csv_path)
    cmd = launch_cmd(lib, np_, oversub) + [lib.binary, ",".join(args.tests), "--csv", csv_path,
                                            "--label", lib.key] + bench_args(args)
    run.command = sh(cmd)
    note("%s np %d: run: %s" % (lib.name, np_, run.command))
    run.load = busy_cpus()
    rc, secs = run_logged(cmd, log_path, lib.env, args.timeout)
    run.seconds = secs
    with open(log_path) as f:
        for line in f:
            if line.startswith("# library:"):
                lib.version = line[len("# library:"):].strip()
                break
    if os.path.exists(csv_path):
        run.csv = csv_path
    if rc != 0:
        last = last_row(csv_path)
        got = (" finished through %s%s" % (last[0], "" if last[0] in SIZELESS else " size " +
                                           fmt_size(int(last[1]))) if last else " nothing finished")
        run.status = "%s after %.0fs (exit %d):%s; see %s.log" % (
            "timed out" if rc == 124 else "failed", secs, rc, got, base)
        note("%s np %d: %s" % (lib.name, np_, run.status))
        with open(log_path) as f:
            tail = f.readlines()[-15:]
        print("".join(tail), end="", flush=True)
    else:
        run.status = "ok (%.0fs)" % secs
        note("%s np %d: done in %.1fs" % (lib.name, np_, secs))


def run_machine(args, outdir, builddir):
    exe = os.path.join(builddir, "ferry-machine-limits")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        note("no C compiler for machine-limits: skipped")
        return None, None
    cmd = [cc, "-O2", "-std=c11", "-o", exe, LIMITS_SRC]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        note("machine-limits build failed: skipped\n" + p.stdout[-2000:])
        return None, None
    csv_path = os.path.join(outdir, "machine.csv")
    mmin = args.min_size if parse_size(args.min_size) > 0 else "1"
    # collectives alone need only the barrier's floor (cache line, CPU hand-over)
    which = "all" if any(t in P2P_TESTS for t in args.tests) else "cacheline_lat,yield_switch"
    cmd = [exe, which, "--csv", csv_path, "--reps", str(args.reps), "--min-size", mmin,
           "--max-size", args.max_size, "--factor", str(args.factor)]
    if args.scale != 1.0:
        cmd += ["--scale", str(args.scale)]
    note("machine: run: " + sh(cmd))
    run_machine.busy = busy_cpus()
    rc, secs = run_logged(cmd, os.path.join(outdir, "machine.log"), {}, args.timeout)
    if rc != 0:
        note("machine-limits failed (exit %d); see machine.log" % rc)
    return (csv_path if os.path.exists(csv_path) else None), sh(cmd)


# --------------------------------------------------------------------------
# results

def parse_size(s):
    s = s.strip().upper().replace("IB", "").replace("B", "")
    mult = 1
    if s and s[-1] in "KMG":
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[s[-1]]
        s = s[:-1]
    return int(s) * mult


def fmt_size(n):
    for unit, v in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= v and n % v == 0:
            return "%d%s" % (n // v, unit)
    return str(n)


def read_csv(path):
    """{(test, size): value}; non-numeric values (n/a) are left out."""
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                v = float(row["value"])
            except (TypeError, ValueError):
                continue
            if math.isnan(v):
                continue
            out[(row["test"], int(row["size"]))] = v
    return out


def fmt_val(v, unit):
    if v is None:
        return "-"
    if unit == "us":
        return "%.3f" % v if v < 100 else "%.1f" % v
    if unit == "msg/s":
        return "%.3gM" % (v / 1e6) if v >= 1e6 else "%.0fK" % (v / 1e3) if v >= 1e4 else "%.0f" % v
    return "%.0f" % v if v >= 100 else "%.2f" % v


def machine_limit(test, size, m, np_=2, ncpu=2):
    """The machine's best for `test` at `size` with np_ ranks on ncpu CPUs (bound), or None.

    latency, multi_lat: cache-line one-way latency + size / best single-copy
        bandwidth at that size (max of memcpy and process_vm_readv): a floor.
    bw: memcpy bandwidth at that size (one copy by the receiver): a ceiling.
    bibw: 2 x memcpy bandwidth (each core copies one direction): a ceiling.
    barrier: a cache-line one-way latency (every rank's arrival must reach
        the others), plus, when ranks outnumber CPUs, one CPU hand-over per
        extra rank on the busiest CPU (each must run between two barriers,
        and the CPUs hand over in parallel): a floor.
    """
    if not m:
        return None
    cl = m.get(("cacheline_lat", 64))
    if test == "barrier":
        per_cpu = -(-np_ // max(ncpu, 1))
        ys = m.get(("yield_switch", 0))
        if cl is None or (per_cpu > 1 and ys is None):
            return None
        return cl + (per_cpu - 1) * (ys or 0)
    mc = m.get(("memcpy_bw", size))
    cma = m.get(("cma_bw", size))
    if test in ("latency", "multi_lat"):
        if cl is None:
            return None
        if size == 0:
            return cl
        best = max([b for b in (mc, cma) if b] or [0])
        return cl + size / best if best else None  # MB/s == bytes/us
    if test == "bw":
        return mc
    if test == "bibw":
        return 2 * mc if mc else None
    return None


def ferry_ratio(vals, peer_keys, lower):
    """Ferry vs the best peer, oriented so that > 1 means Ferry is better; None if missing."""
    f = vals.get("ferry")
    pv = [vals[k] for k in peer_keys if vals.get(k)]
    if not f or not pv:
        return None
    best = min(pv) if lower else max(pv)
    return best / f if lower else f / best


def target_for(np_):
    """Issue 4: ranks <= cores: no slower than the best peer; oversubscribed: 2x faster."""
    return 1.0 if np_ <= (os.cpu_count() or 1) else 2.0


def np_label(np_):
    return "np %d%s" % (np_, " (oversubscribed)" if np_ > (os.cpu_count() or 1) else "")


def sizes_of(res, keys, test):
    return sorted({s for k in keys for (t, s) in res.get(k, {}) if t == test})


def overview(libs, tests, nps, res):
    """Worst-size Ferry vs best peer per (collective, np), against issue 4's targets."""
    peers = [l.key for l in libs if l.key != "ferry"]
    rows = []
    for test in tests:
        if test not in COLL_TESTS:
            continue
        for metric, label in ((test, test), (test + "_pure", test + " (pure)")):
            if metric != test and test not in NBC_TESTS:
                continue
            cells = []
            for np_ in nps:
                r = {l.key: res.get((l.key, np_), {}) for l in libs}
                sizes = sorted({s for d in r.values() for (t, s) in d if t == metric})
                ratios = []
                for sz in sizes:
                    q = ferry_ratio({k: d.get((metric, sz)) for k, d in r.items()}, peers, True)
                    if q is not None:
                        ratios.append((q, sz))
                cells.append((np_, ratios, len(sizes)))
            rows.append((label, test, cells))
    return rows


def make_summary(libs, tests, nps, res, mach, args, meta):
    present = [l for l in libs if any(res.get((l.key, n)) for n in nps)]
    peers = [l for l in present if l.key != "ferry"]
    peer_keys = [l.key for l in peers]
    has_ferry = any(l.key == "ferry" for l in present)
    ncpu = os.cpu_count() or 1
    L = []
    L.append("# Ferry MPI benchmark summary")
    L.append("")
    L.append("- date: %s" % meta["date"])
    L.append("- machine: %s, %d CPUs, %s" % (meta["cpu"], ncpu, platform.release()))
    if meta.get("merged"):
        L.append("- ranks: %s (np <= %d: one rank per core; above: oversubscribed, unbound); "
                 "merged (--merge): each cell is the median over the runs of the directories "
                 "below of their medians; their settings are in their own summary.md" % (
                     ", ".join(str(n) for n in nps), ncpu))
    else:
        L.append("- ranks: %s (np <= %d: one rank per core; above: oversubscribed, unbound); "
                 "repetitions: %d, median reported%s" % (
                     ", ".join(str(n) for n in nps), ncpu, args.reps,
                     " (quick mode: fewer sizes, reps and iterations)" if args.quick or args.coll_quick else ""))
    if any(t in COLL_TESTS for t in tests) and not meta.get("merged"):
        L.append("- collectives: sizes %s..%s bytes per rank, x%d; --time-limit %g ms per repetition "
                 "and size (at least %d iterations); per-library timeout %ds" % (
                     args.coll_min_size, args.coll_max_size, args.factor, args.time_limit,
                     args.min_iters, args.timeout))
    for l in libs:
        parts = [l.status] if l.status != "ok" or not l.runs else []
        if l.version:
            parts.append("`%s`" % l.version)
        L.append("- %s: %s" % (l.name, " ".join(parts)))
        for np_ in nps:
            run = l.runs.get(np_)
            if not run:
                continue
            L.append("  - np %d: %s" % (np_, run.status) +
                     ("\n    - `%s`" % run.command if run.command else ""))
            if run.load is not None and run.load > 0.3:
                L.append("    - note: other processes kept %.1f of %d CPUs busy just before this run;"
                         " numbers may be noisy" % (run.load, ncpu))
    if meta.get("machine_cmd"):
        L.append("- machine limits (best of the repetitions): `%s`" % meta["machine_cmd"])
        busy = getattr(run_machine, "busy", None)
        if busy is not None and busy > 0.3:
            L.append("  - note: other processes kept %.1f of %d CPUs busy just before this run;"
                     " limits may be low" % (busy, ncpu))
    L.append("")
    L.append("How to read: each cell is the median over repetitions. "
             "**vs best peer** compares Ferry with the best of the other libraries at that size "
             "(and rank count), oriented so that **>1 means Ferry is better** (latency: "
             "best_peer_latency / ferry_latency; bandwidth and rate: ferry / best_peer). **of machine** "
             "is Ferry as a fraction of this machine's own limit (latency: floor / ferry; bandwidth: "
             "ferry / ceiling); 1.00 means at the limit. Machine limits: latency floor = cache-line "
             "one-way latency + size / best single-copy bandwidth; bw ceiling = memcpy bandwidth at that "
             "size (hot buffers); bibw ceiling = 2 x memcpy; barrier floor = cache-line latency + one CPU "
             "hand-over (two processes on one CPU, sched_yield) per extra rank on the busiest CPU. Collectives: time per call, max over ranks; "
             "sizes are bytes per rank. Nonblocking collectives: **overall** = start + compute for "
             "t_pure (MPI_Test every few us) + wait; **pure** = start + wait; **overlap** = "
             "max(0, 1 - (overall - compute) / pure).")
    if m_cl := mach.get(("cacheline_lat", 64)):
        L.append("")
        facts = ["cache-line one-way latency %.3f us" % m_cl]
        if ys := mach.get(("yield_switch", 0)):
            facts.append("CPU hand-over between two processes on one CPU %.3f us" % ys)
        if any(t == "memcpy_bw" for (t, s) in mach):
            facts.append("memcpy peak %s MB/s" % fmt_val(max(v for (t, s), v in mach.items() if t == "memcpy_bw"),
                                                        "MB/s"))
            facts.append("process_vm_readv peak %s" % (
                (fmt_val(max(v for (t, s), v in mach.items() if t == "cma_bw"), "MB/s") + " MB/s")
                if any(t == "cma_bw" for (t, s) in mach) else "n/a"))
        L.append("Machine: %s." % "; ".join(facts))

    # ---- targets overview (collectives) ----
    ov = overview(present, tests, nps, res) if has_ferry and peers else []
    if ov:
        L.append("")
        L.append("## Targets: Ferry vs best peer at its worst size")
        L.append("")
        L.append("Issue 4: with np <= %d (one rank per core) every collective at every size no slower "
                 "than the best peer (>= 1.00); oversubscribed (np > %d) at least 2x faster (>= 2.00). "
                 "Cell: the lowest ratio over the sizes, the size where it occurs, and how many sizes "
                 "miss the target; \"-\": no Ferry or peer result (timeout)." % (ncpu, ncpu))
        L.append("")
        hdr = ["test"] + ["np %d (>= %.2f)" % (n, target_for(n)) for n in nps]
        L.append("| " + " | ".join(hdr) + " |")
        L.append("|" + "|".join([":--"] + ["---:"] * len(nps)) + "|")
        met = total = 0
        for label, test, cells in ov:
            row = [label]
            for np_, ratios, nsizes in cells:
                if not ratios:
                    row.append("-")
                    continue
                tgt = target_for(np_)
                q, sz = min(ratios)
                miss = sum(1 for r, _ in ratios if r < tgt)
                total += 1
                met += miss == 0
                where = "" if test in SIZELESS else " @%s" % fmt_size(sz)
                partial = "" if len(ratios) == nsizes else ", %d/%d sizes compared" % (len(ratios), nsizes)
                if miss:
                    row.append("**%.2f**%s, %d/%d miss%s" % (q, where, miss, len(ratios), partial))
                else:
                    row.append("%.2f%s ok%s" % (q, where, partial))
            L.append("| " + " | ".join(row) + " |")
        L.append("")
        L.append("Ferry meets the target in %d of %d (test, np) cells." % (met, total))

    # ---- one table per (test, np) ----
    for test in tests:
        title, unit, lower = TEST_INFO[test]
        nbc = test in NBC_TESTS
        for np_ in nps:
            r = {l.key: res.get((l.key, np_), {}) for l in present}
            sizes = sorted({s for d in r.values() for (t, s) in d if t == test})
            if not sizes:
                continue
            L.append("")
            L.append("## %s, %s -- %s [%s, %s is better]" % (
                test, np_label(np_), title, unit, "lower" if lower else "higher"))
            L.append("")
            mtest = mach if test in LIMITED_TESTS else {}
            has_lim = any(machine_limit(test, sz, mtest, np_, ncpu) is not None for sz in sizes)
            hdr = ["size"] + [l.name for l in present]
            if has_lim:
                hdr.append("machine %s" % ("floor" if lower else "ceiling"))
            if has_ferry and peers:
                hdr.append("Ferry vs best peer (>1: Ferry better)")
            if has_ferry and has_lim:
                hdr.append("Ferry of machine")
            if nbc:
                hdr += ["%s pure" % l.name for l in present]
                if has_ferry and peers:
                    hdr.append("pure: Ferry vs best peer")
                hdr += ["%s overlap %%" % l.name for l in present]
            L.append("| " + " | ".join(hdr) + " |")
            L.append("|" + "|".join(["---:"] * len(hdr)) + "|")
            for sz in sizes:
                row = ["-" if test in SIZELESS else fmt_size(sz)]
                vals = {k: d.get((test, sz)) for k, d in r.items()}
                row += [fmt_val(vals[l.key], unit) for l in present]
                lim = machine_limit(test, sz, mtest, np_, ncpu)
                if has_lim:
                    row.append(fmt_val(lim, unit))
                f = vals.get("ferry")
                if has_ferry and peers:
                    q = ferry_ratio(vals, peer_keys, lower)
                    row.append("-" if q is None else "%.2f" % q)
                if has_ferry and has_lim:
                    row.append("%.2f" % ((lim / f) if lower else (f / lim)) if f and lim else "-")
                if nbc:
                    pv = {k: d.get((test + "_pure", sz)) for k, d in r.items()}
                    row += [fmt_val(pv[l.key], "us") for l in present]
                    if has_ferry and peers:
                        q = ferry_ratio(pv, peer_keys, True)
                        row.append("-" if q is None else "%.2f" % q)
                    for l in present:
                        o = r[l.key].get((test + "_overlap", sz))
                        row.append("-" if o is None else "%.0f" % o)
                L.append("| " + " | ".join(row) + " |")
    if not has_ferry and peers:
        L.append("")
        L.append("(Ferry not in this run: ratio columns are left out.)")
    return "\n".join(L) + "\n"


def make_plots(libs, tests, nps, res, mach, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ncpu = os.cpu_count() or 1
    paths = []
    present = [l for l in libs if any(res.get((l.key, n)) for n in nps)]

    def lines(ax, test, np_, style="-", suffix="", label=True):
        drawn = False
        for l in present:
            d = res.get((l.key, np_), {})
            pts = sorted((s, v) for (t, s), v in d.items() if t == test and s > 0 and v > 0)
            if not pts:
                continue
            drawn = True
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3.5, linestyle=style,
                    linewidth=2.2 if l.key == "ferry" else 1.5, color=COLORS.get(l.key),
                    label=(l.name + suffix) if label else None)
        return drawn

    def size_axis(ax, sizes):
        ax.set_xscale("log", base=2)
        ticks = [s for s in sizes if s in (1, 4, 16, 256, 4096, 65536, 1 << 20, 16 << 20) or len(sizes) <= 12]
        ax.set_xticks(ticks)
        ax.set_xticklabels([fmt_size(s) for s in ticks])
        ax.set_xlabel("message size (bytes)")
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)

    for test in tests:
        title, unit, lower = TEST_INFO[test]
        if test in SIZELESS:
            # one plot over the rank counts
            fig, ax = plt.subplots(figsize=(7, 4.6), dpi=110)
            any_bar = False
            w = 0.8 / max(1, len(present))
            for i, l in enumerate(present):
                ys = [res.get((l.key, n), {}).get((test, 0)) for n in nps]
                xs = [j + i * w for j, y in enumerate(ys) if y]
                ys = [y for y in ys if y]
                if ys:
                    any_bar = True
                    ax.bar(xs, ys, width=w, color=COLORS.get(l.key), label=l.name)
            if not any_bar:
                plt.close(fig)
                continue
            labelled = False
            for j, n in enumerate(nps):   # the machine's floor over each group of bars
                f = machine_limit(test, 0, mach, n, ncpu)
                if f:
                    ax.hlines(f, j - w / 2, j + 0.8 - w / 2, colors="k", linestyles="--", linewidth=1.3,
                              label=None if labelled else "machine floor (cache line + CPU hand-overs)")
                    labelled = True
            ax.set_xticks([j + 0.4 - w / 2 for j in range(len(nps))])
            ax.set_xticklabels([np_label(n) for n in nps])
            ax.set_yscale("log")
            ax.set_ylabel("time per call (us)")
            ax.set_title("%s: %s (lower is better)" % (test, title), fontsize=10)
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=9)
            fig.tight_layout()
            p = os.path.join(outdir, test + ".png")
            fig.savefig(p)
            plt.close(fig)
            paths.append(p)
            continue
        for np_ in nps:
            sizes = sorted({s for l in present for (t, s) in res.get((l.key, np_), {})
                            if t == test and s > 0})
            if not sizes:
                continue
            if test in NBC_TESTS:
                fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 5.2), dpi=110)
            else:
                fig, ax = plt.subplots(figsize=(8, 5.2), dpi=110)
                ax2 = None
            lines(ax, test, np_, suffix=" overall" if ax2 else "")
            mtest = mach if test in P2P_TESTS else {}
            if ax2 is not None:
                lines(ax, test + "_pure", np_, style=":", suffix=" pure")
                ax2.set_title("overlap of computation and communication", fontsize=10)
                for l in present:
                    d = res.get((l.key, np_), {})
                    pts = sorted((s, v) for (t, s), v in d.items() if t == test + "_overlap" and s > 0)
                    if pts:
                        ax2.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3.5,
                                 linewidth=2.2 if l.key == "ferry" else 1.5, color=COLORS.get(l.key),
                                 label=l.name)
                ax2.set_ylim(-3, 103)
                ax2.set_ylabel("overlap (%)")
                size_axis(ax2, sizes)
                ax2.legend(fontsize=9)
            lim = [(s, machine_limit(test, s, mtest, np_, ncpu)) for s in sizes]
            lim = [(s, v) for s, v in lim if v]
            if lim:
                ax.plot([p[0] for p in lim], [p[1] for p in lim], "k--", linewidth=1.3,
                        label="machine %s" % ("floor (cache line + copy)" if lower else
                                              ("ceiling (2 x memcpy)" if test == "bibw" else "ceiling (memcpy)")))
            if test in ("bw", "bibw"):
                cma = sorted((s, v) for (t, s), v in mtest.items() if t == "cma_bw" and s in sizes)
                if cma:
                    ax.plot([p[0] for p in cma], [p[1] * (2 if test == "bibw" else 1) for p in cma],
                            color="0.45", linestyle=":", linewidth=1.3,
                            label="process_vm_readv%s" % (" x 2" if test == "bibw" else ""))
            ax.set_yscale("log")
            size_axis(ax, sizes)
            if test in COLL_TESTS:
                for a_ in (ax, ax2):
                    if a_ is not None:
                        a_.set_xlabel("message size (bytes per rank)")
            ax.set_ylabel("%s (%s)" % ("latency" if unit == "us" else "rate" if unit == "msg/s" else "bandwidth", unit))
            ax.set_title("%s, %s: %s\n(%s is better%s)" % (
                test, np_label(np_), title, "lower" if lower else "higher",
                "; size 0 only in the table" if test in P2P_TESTS else ""), fontsize=10)
            ax.legend(fontsize=8 if ax2 is not None else 9,
                      loc={"us": "upper left", "msg/s": "lower left"}.get(unit, "lower right"))
            fig.tight_layout()
            p = os.path.join(outdir, "%s-np%d.png" % (test, np_))
            fig.savefig(p)
            plt.close(fig)
            paths.append(p)
    return paths


def busy_cpus(interval=0.5):
    """CPUs' worth of time other processes used over `interval` seconds (from /proc/stat)."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + (v[4] if len(v) > 4 else 0)
        return sum(v[:8]), idle
    try:
        t0, i0 = snap()
        time.sleep(interval)
        t1, i1 = snap()
    except (OSError, ValueError, IndexError):
        return None
    if t1 <= t0:
        return None
    return (1.0 - (i1 - i0) / float(t1 - t0)) * (os.cpu_count() or 1)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


# --------------------------------------------------------------------------

def median_cells(tables):
    """{(test, size): median} over several {(test, size): value} tables."""
    import statistics
    cells = {}
    for t in tables:
        for k, v in t.items():
            cells.setdefault(k, []).append(v)
    return {k: statistics.median(v) for k, v in cells.items()}


def merge_rounds(lib, np_, outdir):
    """--rounds: the median of each (test, size) over lib's rounds at np_,
    written as <lib>-np<N>.csv (what a single run would have written)."""
    rounds = lib.round_runs.get(np_, [])
    run = Run(lib, np_)
    lib.runs[np_] = run
    bad = [r.status for r in rounds if not r.status.startswith("ok")]
    run.seconds = sum(r.seconds or 0 for r in rounds)
    run.command = rounds[0].command if rounds else None
    run.load = rounds[0].load if rounds else None
    run.status = "ok, median of %d interleaved rounds (%.0fs)" % (len(rounds), run.seconds) if not bad else \
        "%d of %d rounds: %s" % (len(bad), len(rounds), "; ".join(bad))
    tables, units = [], {}
    for r in rounds:
        if not r.csv:
            continue
        table = {}
        with open(r.csv, newline="") as f:
            for row in csv.DictReader(f):
                units[row["test"]] = row["unit"]
                try:
                    v = float(row["value"])
                except (TypeError, ValueError):
                    continue
                if not math.isnan(v):
                    table[(row["test"], int(row["size"]))] = v
        tables.append(table)
    cells = median_cells(tables)
    if not cells:
        return
    path = os.path.join(outdir, "%s-np%d.csv" % (lib.key, np_))
    order = lambda kv: (ALL_TESTS.index(kv[0][0]) if kv[0][0] in ALL_TESTS else 99, kv[0][0], kv[0][1])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["library", "test", "size", "value", "unit"])
        for (t, size), v in sorted(cells.items(), key=order):
            w.writerow([lib.key, t, size, "%.6g" % v, units.get(t, "")])
    run.csv = path


def merge_runs(dirs, libs, nps_filter):
    """--merge: the median of each (library, np, test, size) over earlier --out
    directories; fills libs[].runs and returns (res, nps, machine csv)."""
    import re
    seen = {}
    mach_csv = None
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*-np*.csv"))):
            m = re.match(r"^(\w+)-np(\d+)\.csv$", os.path.basename(path))
            if not m or m.group(1) not in ALL_LIBS:
                continue
            seen.setdefault((m.group(1), int(m.group(2))), []).append((d, read_csv(path)))
        if not mach_csv and os.path.exists(os.path.join(d, "machine.csv")):
            mach_csv = os.path.join(d, "machine.csv")
    res = {}
    nps = sorted({n for (_, n) in seen if not nps_filter or n in nps_filter})
    for l in libs:
        for np_ in nps:
            got = seen.get((l.key, np_))
            if not got:
                continue
            res[(l.key, np_)] = median_cells(d for _, d in got)
            run = Run(l, np_)
            run.status = "median over %d runs (%s)" % (len(got), ", ".join(os.path.basename(
                os.path.normpath(d)) for d, _ in got))
            l.runs[np_] = run
        if l.runs:
            l.status = "ok"
            for d in dirs:  # the version line of any of its logs
                for log in sorted(glob.glob(os.path.join(d, l.key + "-np*.log"))):
                    with open(log) as f:
                        for line in f:
                            if line.startswith("# library:"):
                                l.version = line[len("# library:"):].strip()
                                break
                    if l.version:
                        break
                if l.version:
                    break
        else:
            l.status = "no results in the merged directories"
    return res, nps, mach_csv


def parse_tests(spec, ap):
    want = set()
    for t in [x for x in spec.split(",") if x]:
        if t in SHORTHANDS:
            want.update(SHORTHANDS[t])
        elif t in TEST_INFO:
            want.add(t)
        else:
            ap.error("unknown test %r (known: %s; shorthands p2p, coll, all)" % (t, ",".join(ALL_TESTS)))
    return [t for t in ALL_TESTS if t in want]  # ferry-bench's order


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="point-to-point demo: sizes 0,1,4,...,4M, 3 reps, 1/4 of the iterations, np 2: "
                           "under a minute")
    mode.add_argument("--coll-quick", action="store_true",
                      help="collective comparison: all collectives at np 2,4,8, sizes 4,32,...,1M (x8), "
                           "5 reps, --time-limit 20 --min-iters 5, --timeout 60: about 3-4 minutes")
    ap.add_argument("--libs", default=",".join(ALL_LIBS), help="comma list of ferry,openmpi,mpich")
    ap.add_argument("--ferry-prefix", default=None,
                    help="Ferry install prefix or build dir (with bin/mpiexec and bin/mpicc or bin/ferry-bench)")
    ap.add_argument("--tests", default=None,
                    help="comma list of %s, or the shorthands p2p, coll (all collectives), all "
                         "(default p2p; --coll-quick: coll)" % ",".join(ALL_TESTS))
    ap.add_argument("--np", default=None,
                    help="comma list of rank counts, one run per library and count (default 2; "
                         "--coll-quick 2,4,8); above the CPU count the run is oversubscribed")
    ap.add_argument("--out", default="bench-results", help="output directory (default bench-results)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions per size (default 5, quick 2, coll-quick 5)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="runs per library, alternating the libraries; each cell is the median over "
                         "them (default 1, quick 3): fairer on a machine whose speed drifts")
    ap.add_argument("--min-size", default="0", help="point-to-point smallest size (default 0)")
    ap.add_argument("--max-size", default=None, help="point-to-point largest size (default 16M, quick 4M)")
    ap.add_argument("--coll-min-size", default="4", help="collectives' smallest size per rank (default 4)")
    ap.add_argument("--coll-max-size", default="1M", help="collectives' largest size per rank (default 1M)")
    ap.add_argument("--factor", type=int, default=None, help="size step (default 2, quick 4, coll-quick 8)")
    ap.add_argument("--scale", type=float, default=None,
                    help="iteration-count multiplier (default 1, quick 0.25)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="collectives: ms one repetition at one size may take; fewer iterations "
                         "beyond (default 100, coll-quick 20; 0: off)")
    ap.add_argument("--min-iters", type=int, default=None,
                    help="the fewest iterations --time-limit leaves (default 10, coll-quick 5)")
    ap.add_argument("--timeout", type=int, default=None,
                    help="seconds per library and rank count; what finished is kept "
                         "(default 900, quick 150, coll-quick 60)")
    ap.add_argument("--merge", default=None, metavar="DIR,DIR,...",
                    help="run nothing: summarize earlier --out directories, the median of each "
                         "(library, np, test, size) over them (noisy, shared machines); --tests and "
                         "--np filter, default everything found")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--no-machine", action="store_true", help="skip machine-limits")
    args = ap.parse_args()

    q, cq = args.quick, args.coll_quick
    args.reps = args.reps or (2 if q else 5)
    args.rounds = args.rounds or (3 if q else 1)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    args.max_size = args.max_size or ("4M" if q else "16M")
    args.factor = args.factor or (4 if q else 8 if cq else 2)
    args.scale = args.scale if args.scale is not None else (0.25 if q else 1.0)
    args.timeout = args.timeout or (150 if q else 60 if cq else 900)
    args.time_limit = args.time_limit if args.time_limit is not None else (20.0 if cq else 100.0)
    args.min_iters = args.min_iters or (5 if cq else 10)
    if args.merge:
        args.tests = parse_tests(args.tests or "all", ap)
    else:
        args.tests = parse_tests(args.tests or ("coll" if cq else "p2p"), ap)
    try:
        nps = [int(x) for x in (args.np or ("2,4,8" if cq else "2")).split(",") if x]
    except ValueError:
        ap.error("--np takes a comma list of rank counts, e.g. 2,4,8")
    nps = sorted(set(nps))
    if not nps or min(nps) < 1:
        ap.error("--np: rank counts must be >= 1")
    for sz in (args.min_size, args.max_size, args.coll_min_size, args.coll_max_size):
        try:
            parse_size(sz)
        except ValueError:
            ap.error("bad size %r (use e.g. 4096, 64K, 16M)" % sz)
    if any(t in P2P_TESTS for t in args.tests) and min(nps) < 2:
        ap.error("point-to-point tests need --np >= 2")
    want = [x for x in args.libs.split(",") if x]
    for x in want:
        if x not in ALL_LIBS:
            ap.error("unknown library %r (known: %s)" % (x, ",".join(ALL_LIBS)))

    t_start = time.time()
    plots_ok = ensure_matplotlib(args)
    outdir = os.path.abspath(args.out)
    if args.merge:
        dirs = [os.path.abspath(d) for d in args.merge.split(",") if d]
        for d in dirs:
            if not os.path.isdir(d):
                ap.error("--merge: no directory %s" % d)
        os.makedirs(outdir, exist_ok=True)
        libs = [Lib(k) for k in want]
        res, nps_found, mach_csv = merge_runs(dirs, libs, set(nps) if args.np else None)
        present = {t for d in res.values() for (t, _) in d}
        args.tests = [t for t in args.tests if t in present]
        meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpu": cpu_model(),
                "merged": True}
        return summarize(libs, args, nps_found, res, read_csv(mach_csv), meta, outdir, plots_ok,
                         t_start, [])
    builddir = os.path.join(outdir, "build")
    os.makedirs(builddir, exist_ok=True)
    ncpu = os.cpu_count() or 1
    if max(nps) > ncpu:
        note("np %s > %d CPUs: oversubscribed, unbound (Open MPI also --oversubscribe, mpi_yield_when_idle 1)"
             % (",".join(str(n) for n in nps if n > ncpu), ncpu))

    libs = []
    for key in want:
        lib = find_ferry(args.ferry_prefix) if key == "ferry" else find_peer(key)
        if lib.status != "ok":
            note("%s: %s" % (lib.name, lib.status))
        libs.append(lib)
    runnable = [l for l in libs if l.status == "ok" and build_bench(l, builddir)]
    if not runnable:
        note("no MPI library could be built: nothing to compare")

    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpu": cpu_model()}
    mach_csv = None
    if not args.no_machine and any(t in LIMITED_TESTS for t in args.tests):
        mach_csv, meta["machine_cmd"] = run_machine(args, outdir, builddir)
    for np_ in nps:  # every library at one rank count, then the next count
        if args.rounds == 1:
            for lib in runnable:
                run_lib(lib, np_, args, outdir)
            continue
        # Rounds alternate the libraries (F, O, M, F, O, M, ...): a virtual
        # machine's speed drifts by 2x within minutes here, and one library
        # run after another would compare them in different machine states.
        for rnd in range(1, args.rounds + 1):
            for lib in runnable:
                run_lib(lib, np_, args, outdir, rnd)
        for lib in runnable:
            merge_rounds(lib, np_, outdir)

    res = {}
    for l in libs:
        for np_, run in l.runs.items():
            if run.csv:
                res[(l.key, np_)] = read_csv(run.csv)
    csvs = [l.runs[n].csv for l in libs for n in sorted(l.runs) if l.runs[n].csv] + \
        ([mach_csv] if mach_csv else [])
    return summarize(libs, args, nps, res, read_csv(mach_csv), meta, outdir, plots_ok, t_start, csvs)


def summarize(libs, args, nps, res, mach, meta, outdir, plots_ok, t_start, csvs):
    summary = make_summary(libs, args.tests, nps, res, mach, args, meta)
    spath = os.path.join(outdir, "summary.md")
    with open(spath, "w") as f:
        f.write(summary)
    plots = []
    if plots_ok and res:
        try:
            plots = make_plots(libs, args.tests, nps, res, mach, outdir)
        except Exception as e:  # plots are a convenience; never lose the tables
            note("plotting failed: %s" % e)
    print()
    print(summary)
    print("summary: %s" % spath)
    if plots:
        print("plots:   %s" % " ".join(os.path.basename(p) for p in plots))
    if csvs:
        print("csv:     %s" % " ".join(csvs))
    print("total time: %.0fs" % (time.time() - t_start))
    return 0 if res else 1


if __name__ == "__main__":
    sys.exit(main())
