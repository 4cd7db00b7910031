#!/usr/bin/env python3
"""Run a command; pass only when it exits 0 AND its output (stdout + stderr)
matches every --want regex and no --not regex.

usage: expect_run.py [--want RE]... [--not RE]... -- COMMAND [ARG]...

Used where a plain exit status would let a run pass without the path under
test ever being taken (e.g. FERRY_SHM_FAULT_PULL must really make a pull
fail; FERRY_OVERSUBSCRIBE=1 must really select the futex sleep). ctest's
PASS_REGULAR_EXPRESSION cannot do this: it ignores the exit status.
"""
import re
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print("usage: expect_run.py [--want RE]... [--not RE]... -- COMMAND...", file=sys.stderr)
        return 2
    i = argv.index("--")
    opts, cmd = argv[:i], argv[i + 1:]
    want, never = [], []
    while opts:
        o = opts.pop(0)
        if o in ("--want", "--not") and opts:
            (want if o == "--want" else never).append(opts.pop(0))
        else:
            print("expect_run.py: bad option %r" % o, file=sys.stderr)
            return 2
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    out = p.stdout.decode("utf-8", "replace")
    sys.stdout.write(out)
    errs = []
    if p.returncode != 0:
        errs.append("exit status %d" % p.returncode)
    errs += ["output lacks /%s/" % w for w in want if not re.search(w, out, re.M)]
    errs += ["output matches /%s/" % n for n in never if re.search(n, out, re.M)]
    if errs:
        print("FAIL expect_run: %s\n---- command: %s" % ("; ".join(errs), " ".join(cmd)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
