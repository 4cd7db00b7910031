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
# 4. singleton adoption (mpiexec --adopt-singleton), the client playing the
#    singleton: a spawn, then finalize: mpiexec waits for the children, exit 0;
#    closing without finalize: mpiexec fails (the line naming the singleton)
#    and takes the children down; the singleton killed: mpiexec and the
#    children go; bad --adopt-singleton command lines / environments: status 2
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

out=$("$client" singleton "$mpiexec" 2>&1)
st=$?
echo "$out"
[ $st -eq 0 ] || fail "singleton run: exit status $st"
grep -q '^pmi_spawn_client: singleton OK$' <<<"$out" || fail "singleton run: no OK"
[ "$(grep -c '^child of world .*s1 rank [01] appnum 0 ok$' <<<"$out")" -eq 2 ] ||
  fail "singleton run: the spawned processes' output is missing"

out=$("$client" singleton-nofin "$mpiexec" 2>&1)
st=$?
echo "$out"
[ $st -eq 0 ] || fail "singleton-nofin run: exit status $st"
grep -q '^mpiexec: singleton rank 0 (pid [0-9]*) closed its connection without MPI_Finalize; terminating the job$' \
  <<<"$out" || fail "singleton-nofin run: no failure line naming the singleton"

out=$("$client" singleton-killed "$mpiexec" 2>&1)
st=$?
echo "$out"
[ $st -eq 0 ] || fail "singleton-killed run: exit status $st"

adopt_refused() {   # <what> <expected message> env/command...
  local what=$1 msg=$2
  shift 2
  out=$("$@" 2>&1 </dev/null 9>&-)
  st=$?
  echo "$out"
  [ $st -eq 2 ] || fail "--adopt-singleton $what: exit status $st, expected 2"
  grep -q -- "$msg" <<<"$out" || fail "--adopt-singleton $what: no message '$msg'"
}
adopt_refused "without the environment" "PMI_FERRY_ADOPT_FD is not set" \
  env -u PMI_FERRY_ADOPT_FD -u PMI_FERRY_ADOPT_PID "$mpiexec" --adopt-singleton
adopt_refused "with a closed descriptor" "PMI_FERRY_ADOPT_FD=9 is not an open descriptor" \
  env PMI_FERRY_ADOPT_FD=9 PMI_FERRY_ADOPT_PID=$$ "$mpiexec" --adopt-singleton
adopt_refused "with a file" "PMI_FERRY_ADOPT_FD=0 is not a socket" \
  env PMI_FERRY_ADOPT_FD=0 PMI_FERRY_ADOPT_PID=$$ "$mpiexec" --adopt-singleton
adopt_refused "with pid 0" "PMI_FERRY_ADOPT_PID=0 is not a process id" \
  env PMI_FERRY_ADOPT_FD=0 PMI_FERRY_ADOPT_PID=0 "$mpiexec" --adopt-singleton
adopt_refused "with a program" "takes no program" "$mpiexec" --adopt-singleton true
adopt_refused "after other options" "must be mpiexec's only argument" "$mpiexec" -n 1 --adopt-singleton true

after=$(shm_files)
[ "$after" = "$before" ] || fail "left in /dev/shm: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')"
echo "pmi_spawn: OK"
