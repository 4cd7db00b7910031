#!/usr/bin/env bash
# Install what building, testing and benchmarking Ferry needs (Debian 12).
# Installs only missing packages; uses sudo when not root.
set -euo pipefail
pkgs=(build-essential cmake pkg-config python3 libhwloc-dev hwloc
      mpich libmpich-dev          # binary-compatibility tests and side-by-side benchmarks
      openmpi-bin libopenmpi-dev  # side-by-side benchmarks
      python3-matplotlib)         # benchmark plots
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
