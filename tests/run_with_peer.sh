#!/usr/bin/env bash
# Build every test program of tests/suite.txt with some MPI's compiler wrapper
# and run the suite with that MPI's launcher -- to validate the TESTS against
# reference implementations (a test that fails on MPICH or Open MPI is a test
# bug, or a documented peer deviation).
#
# usage: tests/run_with_peer.sh mpich|openmpi|custom [options]
#   --cc CMD          compiler wrapper       (custom; default for presets)
#   --launcher CMD    launcher command line  (custom; default for presets)
#   --np "LIST"       rank counts to run     (default "1 2 3 4 8")
#   --filter REGEX    only tests whose name matches (bash regex)
#   --large           also run tests labelled 'large' (> 2 GiB message)
#   --ferry           driver tests check the Ferry-specific messages too
#   --build DIR       where binaries go      (default /tmp/ferry-peer-<preset>)
#   --repeat N        run every test N times (flakiness hunting)
#   --timeout S       use S seconds instead of suite.txt's timeouts (triage)
#   -v                print the output of passing tests too
#
# Examples:
#   tests/run_with_peer.sh mpich
#   tests/run_with_peer.sh openmpi --filter 'p2p_(sizes|order)' --np "8"
#   tests/run_with_peer.sh custom --cc /tmp/ferry/bin/mpicc \
#       --launcher /tmp/ferry/bin/mpiexec --ferry
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
preset=${1:-}
[ -n "$preset" ] && shift
CC= LAUNCHER= NPS="1 2 3 4 8" FILTER= LARGE=0 FERRY=0 BUILD= REPEAT=1 VERBOSE=0 TMO=
case "$preset" in
mpich) CC=mpicc.mpich LAUNCHER="mpirun.mpich" ;;
openmpi) CC=mpicc.openmpi LAUNCHER="mpirun.openmpi --oversubscribe --allow-run-as-root" ;;
custom) ;;
*) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
while [ $# -gt 0 ]; do
    case "$1" in
    --cc) CC=$2; shift 2 ;;
    --launcher) LAUNCHER=$2; shift 2 ;;
    --np) NPS=$2; shift 2 ;;
    --filter) FILTER=$2; shift 2 ;;
    --large) LARGE=1; shift ;;
    --ferry) FERRY=1; shift ;;
    --build) BUILD=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --timeout) TMO=$2; shift 2 ;;
    -v) VERBOSE=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$CC" ] && [ -n "$LAUNCHER" ] || { echo "need --cc and --launcher" >&2; exit 2; }
BUILD=${BUILD:-/tmp/ferry-peer-$preset}
mkdir -p "$BUILD"
PY=${PYTHON:-python3}

# ---- build
progs=$(awk '!/^[ \t]*(#|$)/ {print $3}' "$HERE/suite.txt" | sort -u)
fail_build=0
for p in $progs; do
    src=$HERE/$p.c
    [ -f "$src" ] || { echo "MISSING: $src (named in suite.txt)" >&2; fail_build=1; continue; }
    if [ ! -x "$BUILD/$p" ] || [ "$src" -nt "$BUILD/$p" ] || [ "$HERE/common.h" -nt "$BUILD/$p" ]; then
        if ! $CC -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-stringop-overflow -I"$HERE" "$src" \
            -o "$BUILD/$p" -lpthread; then
            echo "BUILD FAILED: $p" >&2
            fail_build=1
        fi
    fi
done
[ $fail_build = 0 ] || exit 1

# ---- run
pass=0 fail=0 failed=()
t_all=$(date +%s.%N)
run_one() { # name timeout cmd...
    local name=$1 to=$2; shift 2
    local out rc t0 t1
    for ((rep = 0; rep < REPEAT; rep++)); do
        t0=$(date +%s.%N)
        out=$(timeout -k 5 "$to" "$@" </dev/null 2>&1)
        rc=$?
        t1=$(date +%s.%N)
        if [ $rc = 0 ]; then
            pass=$((pass + 1))
            printf 'PASS %-40s %6.2fs\n' "$name" "$(echo "$t1 - $t0" | bc)"
            [ $VERBOSE = 1 ] && printf '%s\n' "$out" | sed 's/^/    /'
        else
            fail=$((fail + 1))
            failed+=("$name")
            printf 'FAIL %-40s %6.2fs rc=%d%s\n' "$name" "$(echo "$t1 - $t0" | bc)" $rc \
                "$([ $rc = 124 ] && echo ' (TIMEOUT)')"
            printf '%s\n' "$out" | tail -n 40 | sed 's/^/    /'
        fi
    done
}

while read -r kind name prog nps labels tmo args; do
    case "$kind" in '' | \#*) continue ;; esac
    [ -n "$FILTER" ] && ! [[ $name =~ $FILTER ]] && continue
    [[ ",$labels," == *,large,* ]] && [ $LARGE = 0 ] && continue
    exe=$BUILD/$prog
    [ -n "$TMO" ] && tmo=$TMO
    if [ "$kind" = single ]; then
        run_one "$name.singleton" "$tmo" "$exe" ${args//@NP@/1}
        continue
    fi
    for np in ${nps//,/ }; do
        [[ " $NPS " == *" $np "* ]] || continue
        a=${args//@NP@/$np}
        case "$kind" in
        mpi) run_one "$name.np$np" "$tmo" $LAUNCHER -n "$np" "$exe" $a ;;
        driver)
            fl=(--launcher "$LAUNCHER" --np "$np" --timeout $((tmo - 5)))
            [ $FERRY = 1 ] && fl+=(--ferry)
            # hydra exits 0 when a rank exit(0)s without MPI_Finalize
            [ "$preset" = mpich ] && fl+=(--lenient-exit0)
            run_one "$name.np$np" "$tmo" "$PY" "$HERE/fail_driver.py" "${fl[@]}" $a -- "$exe"
            ;;
        esac
    done
done <"$HERE/suite.txt"

printf '\n%d passed, %d failed in %.1fs (%s)\n' $pass $fail \
    "$(echo "$(date +%s.%N) - $t_all" | bc)" "$preset"
[ $fail = 0 ] || { printf 'failed: %s\n' "${failed[*]}"; exit 1; }
