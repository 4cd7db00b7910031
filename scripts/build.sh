#!/usr/bin/env bash
# Configure, build and install Ferry.  usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Installs into BUILD_DIR/install (bin/mpicc, bin/mpiexec, lib/libmpi.so.12, include/mpi.h ...).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
cmake -S "$root" -B "$build" -DCMAKE_INSTALL_PREFIX="$build/install" "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
cmake --install "$build" >/dev/null
