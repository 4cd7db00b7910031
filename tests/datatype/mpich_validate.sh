#!/bin/sh
# Validate the datatype tests against MPICH: build each with mpicc.mpich and
# run it with mpirun.mpich for 1 2 3 4 ranks (a test that fails there is a
# test bug, or a documented MPICH deviation that the test skips on non-Ferry).
#   tests/datatype/mpich_validate.sh [OUTDIR]
# Exit status: the number of failed runs.
set -u
src=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/ferry-dt-mpich}
mkdir -p "$out"
fail=0
for t in constructors p2p pack decode; do
    env -u LD_LIBRARY_PATH mpicc.mpich -O1 -g -o "$out/dt_$t" "$src/$t.c" || { fail=$((fail + 1)); continue; }
    for n in 1 2 3 4; do
        env -u LD_LIBRARY_PATH timeout 300 mpirun.mpich -n $n "$out/dt_$t" ||
            { echo "FAILED: dt_$t -n $n under MPICH"; fail=$((fail + 1)); }
    done
done
exit $fail
