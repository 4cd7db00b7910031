#!/usr/bin/env bash
# Build Ferry and run the whole test suite.
#   scripts/test.sh              normal build (build/)
#   scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/)
#   scripts/test.sh --tsan       ThreadSanitizer build (build-tsan/), the tests labelled "thread" only
# Extra arguments go to ctest (e.g. -R p2p_basic, -L abi).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
build=$root/build
cmake_args=()
ctest_args=()
if [ "${1:-}" = "--tsan" ]; then
    shift
    build=$root/build-tsan
    # races between threads of one process: the MPI_THREAD_MULTIPLE tests
    # (MPICH-built binaries are not instrumented: no ABI tests)
    cmake_args+=(-DFERRY_TSAN=ON -DFERRY_ABI_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo)
    ctest_args+=(-L thread)
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
elif [ "${1:-}" = "--sanitize" ]; then
    shift
    build=$root/build-asan
    cmake_args+=(-DFERRY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
    # MPICH-built test binaries are not instrumented and cannot load an
    # ASan-instrumented library; the ABI tests run in the normal build.
    ctest_args+=(-LE abi)
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
"$root/scripts/build.sh" "$build" "${cmake_args[@]}"
cd "$build"
ctest --output-on-failure -j2 --timeout 300 "${ctest_args[@]}" "$@"
