#!/usr/bin/env bash
# Oversubscription is decided from the union of the local ranks' affinity
# masks (transport/shm/shm.c: local_cpus).
#   oversub_detect.sh MPIEXEC PROGRAM one-cpu   2 ranks that inherit one CPU
#       from taskset on the launcher share it: oversubscribed (a count per
#       rank took them for ranks bound one per core, and a waiting rank spun
#       ~100 us before yielding the CPU its peer needed), and their
#       rendezvous messages do not go through the rings
#   oversub_detect.sh MPIEXEC PROGRAM bound     2 ranks bound one per core do
#       not share: not oversubscribed (exit 77, skipped, with fewer than 2 CPUs)
set -u
mpiexec=$1 prog=$2 mode=$3
cpus=$(taskset -pc $$ | sed 's/.*: *//')
first=${cpus%%[-,]*}
case "$mode" in
one-cpu) out=$(FERRY_VERBOSE=1 taskset -c "$first" "$mpiexec" -n 2 "$prog" 2>&1) ;;
bound)
    [ "$(nproc)" -ge 2 ] || exit 77
    out=$(FERRY_VERBOSE=1 "$mpiexec" -n 2 --bind-to core "$prog" 2>&1) ;;
*) echo "usage: $0 MPIEXEC PROGRAM one-cpu|bound" >&2; exit 2 ;;
esac
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "oversub_detect: the run failed (exit $rc)"; exit 1; }
n=$(echo "$out" | grep -c 'shm: 2 local ranks')
[ "$n" -eq 2 ] || { echo "oversub_detect: expected both ranks' shm line, got $n"; exit 1; }
over=$(echo "$out" | grep 'shm: 2 local ranks' | grep -c 'oversubscribed')
want=$([ "$mode" = one-cpu ] && echo 2 || echo 0)
[ "$over" -eq "$want" ] || { echo "oversub_detect ($mode): $over of 2 ranks took themselves for oversubscribed, expected $want"; exit 1; }
# on one CPU, rendezvous messages take single copy, never the rings (their
# copy-in and copy-out cannot overlap there)
if [ "$mode" = one-cpu ] && echo "$out" | grep -q 'through the rings'; then
    echo "oversub_detect (one-cpu): rendezvous through the rings on one CPU"; exit 1
fi
echo "oversub_detect ($mode): OK"
