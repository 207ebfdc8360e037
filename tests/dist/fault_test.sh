#!/usr/bin/env bash
# Issue 41's faults, end to end under mpirun (ctest Dist.RankKilled,
# Dist.RankStalled; docs/DISTRIBUTED.md, Faults).
#
#   fault_test.sh Killed|Stalled AMPX_DIST_FAULT MPIEXEC named|timeout
#
# Killed: 3 ranks under `mpirun --enable-recovery`, rank 1 SIGKILLs itself in
#   step 20; ranks 0 and 2 must each print exactly one line naming rank 1 as
#   lost and exit non-zero, long before their 30 s timeout ("named": the
#   library was built with PMIx), or the timeout line after 3 s ("timeout":
#   built without, the timeout alone tells). Then the same
#   without --enable-recovery: mpirun kills the survivors itself and exits
#   non-zero, naming the signalled rank; nothing hangs.
# Stalled: 2 ranks, rank 1 SIGSTOPs itself; rank 0 must print exactly one
#   timeout line after its 3 s and exit non-zero.
#
# The ranks' exit codes come from the files they write (mpirun
# --enable-recovery exits 0 whatever they return). Every mpirun runs under
# `timeout`, and a stopped victim is killed at the end: nothing outlives the
# test.
set -u
mode=$1
fault=$2
mpiexec=$3
lost_ranks=${4:-named}
dir=$(mktemp -d)
failures=0

cleanup() {
  if [[ -f $dir/victim.pid ]]; then kill -KILL "$(cat "$dir/victim.pid")" 2>/dev/null; fi
  rm -rf "$dir"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run NAME SECONDS MPIEXEC_ARGS... : runs the fault program, keeps stderr in
# $dir/NAME.err, mpirun's status in $status and the wall time in $wall (ms).
run() {
  local name=$1 limit=$2
  shift 2
  rm -f "$dir"/rank*.exit "$dir"/rank*.ms "$dir"/victim.*
  local start end
  start=$(date +%s%N)
  timeout --kill-after=5 "$limit" "$mpiexec" "$@" 2>"$dir/$name.err" >"$dir/$name.out"
  status=$?
  end=$(date +%s%N)
  wall=$(((end - start) / 1000000))
  if [[ -f $dir/victim.pid ]]; then kill -KILL "$(cat "$dir/victim.pid")" 2>/dev/null; fi
  echo "--- $name: mpirun status $status, ${wall} ms; stderr:"
  cat "$dir/$name.err"
  [[ $status -ne 124 && $status -ne 137 ]] || [[ $wall -lt $((limit * 1000)) ]] || fail "$name: mpirun still running after ${limit} s (killed)"
}

# expect_survivor NAME RANK PATTERN: RANK exited non-zero and printed exactly
# one line, matching PATTERN.
expect_survivor() {
  local name=$1 rank=$2 pattern=$3
  if [[ ! -f $dir/rank$rank.exit ]]; then
    fail "$name: rank $rank wrote no exit code"
  elif [[ $(cat "$dir/rank$rank.exit") -eq 0 ]]; then
    fail "$name: rank $rank exited 0"
  fi
  if [[ -f $dir/rank$rank.ms && -f $dir/victim.ms ]]; then
    echo "rank $rank stopped $(($(cat "$dir/rank$rank.ms") - $(cat "$dir/victim.ms"))) ms after rank 1's signal"
  fi
  local lines
  lines=$(grep -c "on rank $rank\b" "$dir/$name.err")
  [[ $lines -eq 1 ]] || fail "$name: rank $rank printed $lines lines, not 1"
  grep -Eq "$pattern" "$dir/$name.err" || fail "$name: no line matching '$pattern'"
}

common=(--oversubscribe --mca btl self,vader)
case $mode in
  Killed)
    if [[ $lost_ranks == named ]]; then
      run recovery 60 --enable-recovery "${common[@]}" -np 3 "$fault" \
        --victim 1 --signal kill --timeout-ms 30000 --dir "$dir"
      for r in 0 2; do
        expect_survivor recovery $r \
          "^rank 1 of 3 was lost during MPI_[A-Za-z_]+ on rank $r \(.*\)$"
      done
      grep -q "no answer" "$dir/recovery.err" && fail "recovery: a timeout, not the lost rank"
      [[ $wall -lt 15000 ]] || fail "recovery: took $wall ms (bound 15000)"
    else
      run recovery 60 --enable-recovery "${common[@]}" -np 3 "$fault" \
        --victim 1 --signal kill --timeout-ms 3000 --dir "$dir"
      for r in 0 2; do
        expect_survivor recovery $r \
          "^MPI_[A-Za-z_]+: no answer from the other ranks within 3 s on rank $r of 3 "
      done
      [[ $wall -lt 20000 ]] || fail "recovery: took $wall ms (bound 20000)"
    fi

    run default 60 "${common[@]}" -np 3 "$fault" \
      --victim 1 --signal kill --timeout-ms 30000 --dir "$dir"
    [[ $status -ne 0 ]] || fail "default: mpirun exited 0"
    grep -q "rank 1 .*signal 9" "$dir/default.err" || fail "default: mpirun did not name rank 1"
    [[ $wall -lt 15000 ]] || fail "default: took $wall ms (bound 15000)"
    ;;
  Stalled)
    run stalled 60 "${common[@]}" -np 2 "$fault" \
      --victim 1 --signal stop --timeout-ms 3000 --dir "$dir"
    expect_survivor stalled 0 \
      "^MPI_[A-Za-z_]+: no answer from the other ranks within 3 s on rank 0 of 2 \(a rank lost or stalled\)$"
    [[ $wall -ge 3000 ]] || fail "stalled: ended after $wall ms, before the 3 s timeout"
    [[ $wall -lt 20000 ]] || fail "stalled: took $wall ms (bound 20000)"
    ;;
  *)
    echo "fault_test.sh: mode must be Killed or Stalled, not $mode" >&2
    exit 2
    ;;
esac

if [[ $failures -ne 0 ]]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "passed"
