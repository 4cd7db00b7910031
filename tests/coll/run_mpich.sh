#!/usr/bin/env bash
# Validate the collective tests against MPICH: build each program with
# mpicc.mpich and run it with mpirun.mpich on 1..8 ranks. On MPICH the
# programs run the library's own algorithm choice only (MPIX_Ferry_coll_set is
# absent) and skip the documented MPICH 4.0 deviations (see the sources).
#   usage: tests/coll/run_mpich.sh [build dir] [rank counts]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-/tmp/ferry-coll-mpich}
NPS=${2:-"1 2 3 4 5 6 7 8"}
mkdir -p "$BUILD"
fail=0
for p in coll_ops coll_reduce coll_move coll_nbc coll_inter coll_neighbor coll_repro; do
    mpicc.mpich -O2 -g -std=gnu11 -Wall -Wno-stringop-overflow -I"$HERE/.." "$HERE/$p.c" -o "$BUILD/$p" -lm || { fail=1; continue; }
    for np in $NPS; do
        if out=$(timeout 300 mpirun.mpich -n "$np" "$BUILD/$p" 2>&1) && ! grep -q "FAIL \[rank" <<<"$out"; then
            echo "PASS $p np=$np"
        else
            echo "FAIL $p np=$np"; echo "$out" | grep -m5 -i "fail\|abort\|error"; fail=1
        fi
    done
done
exit $fail
