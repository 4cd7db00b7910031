#!/bin/sh
# Build the comm tests with MPICH's mpicc and run them:
#   mpich_validate.sh mpich MPICC MPIRUN  SRCDIR OUTDIR NAME:NPS...  under MPICH (are the tests right?)
#   mpich_validate.sh ferry MPICC MPIEXEC SRCDIR OUTDIR NAME:NPS...  MPICH-built binaries under Ferry
#                                                     (LD_LIBRARY_PATH must point at Ferry's libmpi)
# NAME:NPS is e.g. "inter:2,3,4,8" (program comm_inter.c, those rank counts).
# Exit status: the number of failed builds and runs.
set -u
mode=$1 cc=$2 run=$3 src=$4 out=$5
shift 5
mkdir -p "$out"
fail=0
for entry in "$@"; do
    t=comm_${entry%%:*}
    nps=$(echo "${entry#*:}" | tr , ' ')
    env -u LD_LIBRARY_PATH "$cc" -O1 -g -Wno-stringop-overflow -I"$src/.." -o "$out/$t" "$src/$t.c" ||
        { fail=$((fail + 1)); continue; }
    for n in $nps; do
        if [ "$mode" = mpich ]; then
            env -u LD_LIBRARY_PATH timeout 300 "$run" -n "$n" "$out/$t" ||
                { echo "FAILED: $t -n $n under MPICH"; fail=$((fail + 1)); }
        else
            timeout 300 "$run" -n "$n" "$out/$t" ||
                { echo "FAILED: $t -n $n (MPICH-built) under Ferry"; fail=$((fail + 1)); }
        fi
    done
done
exit $fail
