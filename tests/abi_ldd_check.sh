#!/bin/sh
# abi_ldd_check.sh BINARY LIBDIR
# An MPICH-built binary run with LD_LIBRARY_PATH=LIBDIR must resolve
# libmpich.so.12 to Ferry's library in LIBDIR -- otherwise the abi.* tests
# would silently test the system MPICH instead of Ferry.
set -u
bin=$1 libdir=$2
[ -x "$bin" ] || { echo "FAIL: $bin not built"; exit 1; }
[ -d "$libdir" ] || { echo "FAIL: $libdir does not exist"; exit 1; }
out=$(LD_LIBRARY_PATH=$libdir ldd "$bin") || { echo "FAIL: ldd $bin"; exit 1; }
echo "$out"
line=$(printf '%s\n' "$out" | grep 'libmpich\.so\.12 ')
[ -n "$line" ] || { echo "FAIL: $bin does not need libmpich.so.12"; exit 1; }
path=$(printf '%s\n' "$line" | sed -n 's/.*=> \([^ ]*\) .*/\1/p')
[ -n "$path" ] && [ -e "$path" ] || { echo "FAIL: libmpich.so.12 not resolved: $line"; exit 1; }
want=$(cd "$libdir" && pwd -P)
got=$(cd "$(dirname "$path")" && pwd -P)
[ "$got" = "$want" ] || { echo "FAIL: libmpich.so.12 resolves to $path, not into $libdir"; exit 1; }
real=$(readlink -f "$path")
ferry=$(readlink -f "$libdir/libmpi.so.12")
[ "$real" = "$ferry" ] || { echo "FAIL: $path is $real, not Ferry's $ferry"; exit 1; }
# no second MPI library sneaks in
if printf '%s\n' "$out" | grep -v "^[[:space:]]*libmpich\.so\.12 " | grep -Eq 'lib(mpi|mpich|mpi_mpifh)\.so'; then
    echo "FAIL: another MPI library is loaded as well"; exit 1
fi
echo "OK: libmpich.so.12 -> $real"
