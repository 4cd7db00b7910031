#!/usr/bin/env bash
# The main job: build Ferry, then measure it side by side with Open MPI and
# MPICH on this machine (2 ranks, bound to cores) and print the table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
"$root/scripts/build.sh" "$root/build"
python3 "$root/scripts/bench/compare.py" --quick --ferry-prefix "$root/build/install" --out "$root/bench-results" "$@"
