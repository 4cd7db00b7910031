#!/bin/bash
# launcher_pmi_spawn: mpiexec's PMI spawn service (MPI_Comm_spawn[_multiple]),
# driven by pmi_spawn_client over the wire, without the MPI library.
#   pmi_spawn.sh <mpiexec> <pmi_spawn_client>
# 1. -l -usize 9 -n 2 ... parent: spawn, refused spawns, spawn_multiple; each
#    spawned world runs its own barrier; labels [s<k>:<rank>]; the universe
#    size is 9 everywhere; exit status 0
# 2. -n 1 ... exit3: a spawned process exiting 3 before finalize fails the
#    job with status 3, and the report names it by world, rank and uid
# 3. -genv of a PMI_FERRY_* variable is ignored with a warning
# and mpiexec removes every world's /dev/shm/ferry-<kvsname>-* files.
set -u
mpiexec=$1 client=$2
fail() { echo "pmi_spawn: FAIL: $*"; exit 1; }
shm_files() { ls /dev/shm 2>/dev/null | grep -- '-spawntest-' | sort; }
before=$(shm_files)

out=$("$mpiexec" --timeout 40 -l -usize 9 -n 2 "$client" parent 2>&1)
st=$?
echo "$out"
[ $st -eq 0 ] || fail "parent run: exit status $st"
grep -q '^\[0\] pmi_spawn_client: OK$' <<<"$out" || fail "parent run: no OK"
for l in s1:0 s1:1 s2:0 s2:1 s2:2; do
  grep -q "^\[$l\] child of world .* ok$" <<<"$out" || fail "parent run: no line labelled [$l]"
done
[ "$(grep -c 'refused as expected' <<<"$out")" -eq 9 ] || fail "parent run: not every bad spawn was refused"

out=$("$mpiexec" --timeout 40 -n 1 "$client" exit3 2>&1)
st=$?
echo "$out"
[ $st -eq 3 ] || fail "exit3 run: exit status $st, expected 3"
grep -q '^mpiexec: spawned rank 1 of world 1 (uid 2, pid [0-9]*) exited with status 3 without calling MPI_Finalize; terminating the job$' \
  <<<"$out" || fail "exit3 run: the failure report does not name the spawned rank"

out=$("$mpiexec" -genv PMI_FERRY_SECRET x -n 1 sh -c 'echo "secret=$PMI_FERRY_SECRET"' 2>&1)
echo "$out"
grep -q 'warning: -genv PMI_FERRY_SECRET ignored' <<<"$out" || fail "-genv PMI_FERRY_SECRET not refused"
grep -q '^secret=[0-9a-f]\{32\}$' <<<"$out" || fail "PMI_FERRY_SECRET is not 32 hex digits"

after=$(shm_files)
[ "$after" = "$before" ] || fail "left in /dev/shm: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')"
echo "pmi_spawn: OK"
