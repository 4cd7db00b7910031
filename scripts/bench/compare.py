#!/usr/bin/env python3
"""Compare Ferry with Open MPI and MPICH on this machine, in one command.

Builds tools/bench/ferry-bench.c with each available MPI's compiler wrapper,
runs the same tests with the same rank count and core binding on each, runs
ferry-machine-limits (cache-line latency, memcpy and process_vm_readv
bandwidth), and writes into --out:

  <lib>.csv, machine.csv     library,test,size,value,unit rows
  <lib>.log, machine.log     the programs' human-readable output
  summary.md                 one table per test (also printed at the end)
  <test>.png                 log-log plots, one line per library, machine
                             limit dashed

  python3 scripts/bench/compare.py --quick --ferry-prefix build --out bench-results
  python3 scripts/bench/compare.py --libs openmpi,mpich --tests latency,bw

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

ALL_TESTS = ["latency", "bw", "bibw", "mr", "multi_lat"]
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
        self.launch = None      # launcher command prefix (list), without the program
        self.env = {}
        self.binary = None
        self.version = ""
        self.csv = None
        self.status = "not run"


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
        lib.launch = [mpiexec, "--bind-to", "core"]
    elif shutil.which("mpirun.mpich"):
        # Ferry speaks PMI-1 and has the MPICH ABI, so MPICH's hydra starts it too
        lib.launch = [shutil.which("mpirun.mpich"), "-bind-to", "core"]
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


def find_peer(key, np_, oversub):
    lib = Lib(key)
    if key == "openmpi":
        cc, run = shutil.which("mpicc.openmpi"), shutil.which("mpirun.openmpi")
        if not cc or not run:
            lib.status = "skipped: Open MPI not installed (no mpicc.openmpi / mpirun.openmpi; apt-get install openmpi-bin libopenmpi-dev)"
            return lib
        lib.cc = [cc]
        lib.launch = [run, "--allow-run-as-root"]
        if oversub:
            lib.launch += ["--oversubscribe", "--bind-to", "core:overload-allowed",
                           "--mca", "mpi_yield_when_idle", "1"]
        else:
            lib.launch += ["--bind-to", "core"]
    elif key == "mpich":
        cc, run = shutil.which("mpicc.mpich"), shutil.which("mpirun.mpich")
        if not cc or not run:
            lib.status = "skipped: MPICH not installed (no mpicc.mpich / mpirun.mpich; apt-get install mpich libmpich-dev)"
            return lib
        lib.cc = [cc]
        lib.launch = [run, "-bind-to", "core"]
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
    a = ["--reps", str(args.reps), "--min-size", args.min_size, "--max-size", args.max_size,
         "--factor", str(args.factor)]
    if args.scale != 1.0:
        a += ["--scale", str(args.scale)]
    return a


def run_lib(lib, args, outdir):
    csv_path = os.path.join(outdir, lib.key + ".csv")
    if os.path.exists(csv_path):
        os.remove(csv_path)
    cmd = lib.launch + ["-n", str(args.np), lib.binary, ",".join(args.tests), "--csv", csv_path,
                        "--label", lib.key] + bench_args(args)
    lib.command = sh(cmd)
    note("%s: run: %s" % (lib.name, lib.command))
    load = busy_cpus()
    rc, secs = run_logged(cmd, os.path.join(outdir, lib.key + ".log"), lib.env, args.timeout)
    lib.load = load
    lib.seconds = secs
    with open(os.path.join(outdir, lib.key + ".log")) as f:
        for line in f:
            if line.startswith("# library:"):
                lib.version = line[len("# library:"):].strip()
                break
    if os.path.exists(csv_path):
        lib.csv = csv_path
    if rc != 0:
        lib.status = "run failed (exit %d%s), partial results kept; see %s.log" % (
            rc, ", timed out" if rc == 124 else "", lib.key)
        note("%s: %s" % (lib.name, lib.status))
        with open(os.path.join(outdir, lib.key + ".log")) as f:
            tail = f.readlines()[-15:]
        print("".join(tail), end="", flush=True)
    else:
        lib.status = "ok"
        note("%s: done in %.1fs" % (lib.name, secs))


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
    cmd = [exe, "all", "--csv", csv_path, "--reps", str(args.reps), "--min-size", mmin,
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


def machine_limit(test, size, m):
    """The machine's best for `test` at `size` (bound), or None.

    latency, multi_lat: cache-line one-way latency + size / best single-copy
        bandwidth at that size (max of memcpy and process_vm_readv): a floor.
    bw: memcpy bandwidth at that size (one copy by the receiver): a ceiling.
    bibw: 2 x memcpy bandwidth (each core copies one direction): a ceiling.
    """
    if not m:
        return None
    cl = m.get(("cacheline_lat", 64))
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


def make_summary(libs, tests, res, mach, args, meta):
    present = [l for l in libs if l.key in res and res[l.key]]
    peers = [l for l in present if l.key != "ferry"]
    has_ferry = any(l.key == "ferry" for l in present)
    L = []
    L.append("# Ferry MPI benchmark summary")
    L.append("")
    L.append("- date: %s" % meta["date"])
    L.append("- machine: %s, %d CPUs, %s" % (meta["cpu"], os.cpu_count() or 0, platform.release()))
    L.append("- ranks: %d, bound to cores; repetitions: %d, median reported%s" % (
        args.np, args.reps, " (quick mode: fewer sizes, reps and iterations)" if args.quick else ""))
    for l in libs:
        line = "- %s: %s" % (l.name, l.status)
        if l.version:
            line += " -- `%s`" % l.version
        if getattr(l, "command", None):
            line += "\n  - `%s`" % l.command
        if getattr(l, "load", None) is not None and l.load > 0.3:
            line += ("\n  - note: other processes kept %.1f of %d CPUs busy just before this run;"
                     " numbers may be noisy" % (l.load, os.cpu_count() or 1))
        L.append(line)
    if meta.get("machine_cmd"):
        L.append("- machine limits (best of the repetitions): `%s`" % meta["machine_cmd"])
        busy = getattr(run_machine, "busy", None)
        if busy is not None and busy > 0.3:
            L.append("  - note: other processes kept %.1f of %d CPUs busy just before this run;"
                     " limits may be low" % (busy, os.cpu_count() or 1))
    L.append("")
    L.append("How to read: each cell is the median over repetitions. "
             "**vs best peer** compares Ferry with the best of the other libraries at that size, "
             "oriented so that **>1 means Ferry is better** (latency: best_peer_latency / ferry_latency; "
             "bandwidth and rate: ferry / best_peer). **of machine** is Ferry as a fraction of this "
             "machine's own limit (latency: floor / ferry; bandwidth: ferry / ceiling); 1.00 means "
             "at the limit. Machine limits: latency floor = cache-line one-way latency + size / best "
             "single-copy bandwidth; bw ceiling = memcpy bandwidth at that size (hot buffers); bibw "
             "ceiling = 2 x memcpy.")
    if m_cl := mach.get(("cacheline_lat", 64)):
        L.append("")
        L.append("Machine: cache-line one-way latency %.3f us; memcpy peak %s MB/s; process_vm_readv peak %s." % (
            m_cl,
            fmt_val(max([v for (t, s), v in mach.items() if t == "memcpy_bw"] or [0]), "MB/s"),
            (fmt_val(max(v for (t, s), v in mach.items() if t == "cma_bw"), "MB/s") + " MB/s")
            if any(t == "cma_bw" for (t, s) in mach) else "n/a"))
    for test in tests:
        title, unit, lower = TEST_INFO[test]
        sizes = sorted({s for l in present for (t, s) in res[l.key] if t == test})
        if not sizes:
            continue
        L.append("")
        L.append("## %s -- %s [%s, %s is better]" % (test, title, unit, "lower" if lower else "higher"))
        L.append("")
        hdr = ["size"] + [l.name for l in present]
        has_lim = any(machine_limit(test, s, mach) is not None for s in sizes)
        if has_lim:
            hdr.append("machine %s" % ("floor" if lower else "ceiling"))
        if has_ferry and peers:
            hdr.append("Ferry vs best peer (>1: Ferry better)")
        if has_ferry and has_lim:
            hdr.append("Ferry of machine")
        L.append("| " + " | ".join(hdr) + " |")
        L.append("|" + "|".join(["---:"] * len(hdr)) + "|")
        for s in sizes:
            row = [fmt_size(s)]
            vals = {l.key: res[l.key].get((test, s)) for l in present}
            row += [fmt_val(vals[l.key], unit) for l in present]
            lim = machine_limit(test, s, mach)
            if has_lim:
                row.append(fmt_val(lim, unit))
            f = vals.get("ferry")
            if has_ferry and peers:
                pv = [vals[l.key] for l in peers if vals.get(l.key)]
                if f and pv:
                    best = min(pv) if lower else max(pv)
                    row.append("%.2f" % (best / f if lower else f / best))
                else:
                    row.append("-")
            if has_ferry and has_lim:
                row.append("%.2f" % ((lim / f) if lower else (f / lim)) if f and lim else "-")
            L.append("| " + " | ".join(row) + " |")
    if not has_ferry and peers:
        L.append("")
        L.append("(Ferry not in this run: ratio columns are left out.)")
    return "\n".join(L) + "\n"


def make_plots(libs, tests, res, mach, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    paths = []
    present = [l for l in libs if res.get(l.key)]
    for test in tests:
        title, unit, lower = TEST_INFO[test]
        fig, ax = plt.subplots(figsize=(8, 5.2), dpi=110)
        any_line = False
        for l in present:
            pts = sorted((s, v) for (t, s), v in res[l.key].items() if t == test and s > 0 and v > 0)
            if not pts:
                continue
            any_line = True
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3.5,
                    linewidth=2.2 if l.key == "ferry" else 1.5, color=COLORS.get(l.key), label=l.name)
        if not any_line:
            plt.close(fig)
            continue
        sizes = sorted({s for l in present for (t, s) in res[l.key] if t == test and s > 0})
        lim = [(s, machine_limit(test, s, mach)) for s in sizes]
        lim = [(s, v) for s, v in lim if v]
        if lim:
            ax.plot([p[0] for p in lim], [p[1] for p in lim], "k--", linewidth=1.3,
                    label="machine %s" % ("floor (cache line + copy)" if lower else
                                          ("ceiling (2 x memcpy)" if test == "bibw" else "ceiling (memcpy)")))
        if test in ("bw", "bibw"):
            cma = sorted((s, v) for (t, s), v in mach.items() if t == "cma_bw" and s in sizes)
            if cma:
                ax.plot([p[0] for p in cma], [p[1] * (2 if test == "bibw" else 1) for p in cma],
                        color="0.45", linestyle=":", linewidth=1.3,
                        label="process_vm_readv%s" % (" x 2" if test == "bibw" else ""))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("%s (%s)" % ("latency" if unit == "us" else "rate" if unit == "msg/s" else "bandwidth", unit))
        ax.set_title("%s: %s\n(%s is better; size 0 only in the table)" % (
            test, title, "lower" if lower else "higher"), fontsize=10)
        ticks = [s for s in sizes if s in (1, 16, 256, 4096, 65536, 1 << 20, 16 << 20) or len(sizes) <= 12]
        ax.set_xticks(ticks)
        ax.set_xticklabels([fmt_size(s) for s in ticks])
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
        ax.legend(fontsize=9, loc={"us": "upper left", "msg/s": "lower left"}.get(unit, "lower right"))
        fig.tight_layout()
        p = os.path.join(outdir, test + ".png")
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)
    return paths


def busy_cpus(interval=1.0):
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

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="fewer sizes (0,1,4,...,4M), 3 reps, 1/4 of the iterations: a couple of minutes")
    ap.add_argument("--libs", default=",".join(ALL_LIBS), help="comma list of ferry,openmpi,mpich")
    ap.add_argument("--ferry-prefix", default=None,
                    help="Ferry install prefix or build dir (with bin/mpiexec and bin/mpicc or bin/ferry-bench)")
    ap.add_argument("--tests", default=None, help="comma list of %s (default: all)" % ",".join(ALL_TESTS))
    ap.add_argument("--np", type=int, default=2, help="ranks (default 2)")
    ap.add_argument("--out", default="bench-results", help="output directory (default bench-results)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions per size (default 5, quick 3)")
    ap.add_argument("--min-size", default="0")
    ap.add_argument("--max-size", default=None, help="default 16M, quick 4M")
    ap.add_argument("--factor", type=int, default=None, help="size step (default 2, quick 4)")
    ap.add_argument("--scale", type=float, default=None, help="iteration-count multiplier (default 1, quick 0.25)")
    ap.add_argument("--timeout", type=int, default=None, help="seconds per library run (default 900, quick 150)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--no-machine", action="store_true", help="skip machine-limits")
    args = ap.parse_args()

    q = args.quick
    args.reps = args.reps or (3 if q else 5)
    args.max_size = args.max_size or ("4M" if q else "16M")
    args.factor = args.factor or (4 if q else 2)
    args.scale = args.scale if args.scale is not None else (0.25 if q else 1.0)
    args.timeout = args.timeout or (150 if q else 900)
    args.tests = [t for t in (args.tests or ",".join(ALL_TESTS)).split(",") if t]
    for t in args.tests:
        if t not in TEST_INFO:
            ap.error("unknown test %r (known: %s)" % (t, ",".join(ALL_TESTS)))
    want = [x for x in args.libs.split(",") if x]
    for x in want:
        if x not in ALL_LIBS:
            ap.error("unknown library %r (known: %s)" % (x, ",".join(ALL_LIBS)))
    if args.np < 2:
        ap.error("--np must be >= 2")

    t_start = time.time()
    plots_ok = ensure_matplotlib(args)
    outdir = os.path.abspath(args.out)
    builddir = os.path.join(outdir, "build")
    os.makedirs(builddir, exist_ok=True)
    oversub = args.np > (os.cpu_count() or 1)
    if oversub:
        note("np=%d > %d CPUs: oversubscribed (Open MPI gets --oversubscribe, mpi_yield_when_idle 1)"
             % (args.np, os.cpu_count()))

    libs = []
    for key in want:
        lib = find_ferry(args.ferry_prefix) if key == "ferry" else find_peer(key, args.np, oversub)
        if lib.status != "ok":
            note("%s: %s" % (lib.name, lib.status))
        libs.append(lib)
    runnable = [l for l in libs if l.status == "ok" and build_bench(l, builddir)]
    if not runnable:
        note("no MPI library could be built: nothing to compare")

    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpu": cpu_model()}
    mach_csv = None
    if not args.no_machine:
        mach_csv, meta["machine_cmd"] = run_machine(args, outdir, builddir)
    for lib in runnable:
        run_lib(lib, args, outdir)

    res = {l.key: read_csv(l.csv) for l in libs if l.csv}
    mach = read_csv(mach_csv)
    summary = make_summary(libs, args.tests, res, mach, args, meta)
    spath = os.path.join(outdir, "summary.md")
    with open(spath, "w") as f:
        f.write(summary)
    plots = []
    if plots_ok and res:
        try:
            plots = make_plots(libs, args.tests, res, mach, outdir)
        except Exception as e:  # plots are a convenience; never lose the tables
            note("plotting failed: %s" % e)
    print()
    print(summary)
    print("summary: %s" % spath)
    for p in plots:
        print("plot:    %s" % p)
    csvs = [l.csv for l in libs if l.csv] + ([mach_csv] if mach_csv else [])
    print("csv:     %s" % " ".join(csvs))
    print("total time: %.0fs" % (time.time() - t_start))
    return 0 if res else 1


if __name__ == "__main__":
    sys.exit(main())
