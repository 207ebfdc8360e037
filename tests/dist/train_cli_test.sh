#!/usr/bin/env bash
# `mpirun ampx train --data-parallel` as a user runs it (ctest
# TrainDist.Cli; docs/DISTRIBUTED.md):
#   1. digits-cnn at O2 on 2 ranks x batch 32 reaches the accuracy of one
#      process at batch 64 (issue 41's "done when"), rank 0 alone printing;
#   2. a rank killed with kill -9 mid-run: the other stops at once with one
#      line naming it (mpirun --enable-recovery), nothing hangs; a resume from
#      the last checkpoint then ends with the weights of an uninterrupted run;
#   3. ranks started with different options are refused before any step,
#      each in one line;
#   4. a rank that stalls (SIGSTOP): the other stops after --comm-timeout
#      with one line, and mpirun ends the job.
#
#   train_cli_test.sh AMPX MPIEXEC
#
# Every mpirun runs under `timeout`: a hang is a failure, not a stuck test.
set -u
ampx=$1
mpiexec=$2
dir=$(mktemp -d)
failures=0
trap 'pkill -KILL -f "$dir" 2>/dev/null; rm -rf "$dir"' EXIT

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# The last epoch record's eval_accuracy in a --format json output.
accuracy() {
  grep '"event":"epoch"' "$1" | tail -1 | sed 's/.*"eval_accuracy":\([0-9.e-]*\).*/\1/'
}

base=(train builtin:digits-cnn --data builtin:digits --optimizer sgd --momentum 0.9 --amp O2
  --format json)
common=("${base[@]}" --lr 0.05)

# signal_rank_1 NAME SIGNAL CKPT MPIRUN_OPTIONS... -- AMPX_OPTIONS...: a long
# 2-rank run checkpointing into CKPT; once its first checkpoint is there,
# rank 1 gets SIGNAL. Waits for the run; sets $status (mpirun's), $ms (from
# the signal to the end) and $signalled (1 when rank 1 was found).
signal_rank_1() {
  local name=$1 signal=$2 ckpt=$3
  shift 3
  local mpirun_options=()
  while [[ $1 != -- ]]; do mpirun_options+=("$1"); shift; done
  shift
  (timeout 120 "$mpiexec" "${mpirun_options[@]}" -np 2 "$ampx" "${common[@]}" --epochs 100 \
    --batch 32 --data-parallel --checkpoint "$ckpt" "$@" >"$dir/$name.out" 2>"$dir/$name.err") &
  local launcher=$!
  for _ in $(seq 1 600); do
    compgen -G "$ckpt/*.ampxckpt" >/dev/null && break
    sleep 0.1
  done
  signalled=0
  local start p
  start=$(date +%s%N)
  for p in $(pgrep -f "$ckpt"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
      kill "-$signal" "$p" && signalled=1
    fi
  done
  wait "$launcher"
  status=$?
  ms=$((($(date +%s%N) - start) / 1000000))
}

# 1. Accuracy.
timeout 120 "$ampx" "${common[@]}" --epochs 12 --batch 64 >"$dir/one.out" 2>"$dir/one.err" ||
  fail "one process: status $? $(tail -1 "$dir/one.err")"
timeout 120 "$mpiexec" -np 2 "$ampx" "${common[@]}" --epochs 12 --batch 32 --data-parallel \
  --bucket-mb 0.01 --report "$dir/report.html" >"$dir/two.out" 2>"$dir/two.err" ||
  fail "2 ranks: status $? $(tail -1 "$dir/two.err")"
one=$(accuracy "$dir/one.out")
two=$(accuracy "$dir/two.out")
echo "digits-cnn O2, 12 epochs: one process batch 64 $one, 2 ranks x batch 32 $two"
awk -v a="$one" -v b="$two" 'BEGIN { exit !(b >= a - 0.01 && b >= 0.95) }' ||
  fail "2 ranks reached $two against one process's $one"
epochs=$(grep -c '"event":"epoch"' "$dir/two.out")
[[ $epochs -eq 12 ]] || fail "2 ranks printed $epochs epoch records (rank 0 alone prints: 12)"
grep -q '"data_parallel":{[^}]*"ranks":2' "$dir/two.out" || fail "no data_parallel record"
# --report (rank 0's file) draws the per-step all-reduce times as a fourth chart.
grep -q '"comm_ms":\[' "$dir/report.html" || fail "the report has no per-step all-reduce times"
if command -v chromium >/dev/null; then
  chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$dir/report.html" \
    >"$dir/dom.html" 2>/dev/null
  grep -q 'data-charts-drawn="4"' "$dir/dom.html" ||
    fail "the report drew $(grep -o 'data-charts-drawn="[0-9]*"' "$dir/dom.html") charts, not 4"
fi

# 2. kill -9 of rank 1 after the first checkpoint, then resume.
ckpt=$dir/ckpt
signal_rank_1 killed KILL "$ckpt" --enable-recovery -- --comm-timeout 30
[[ $signalled -eq 1 ]] || fail "no rank 1 to kill"
echo "rank 1 killed: the run ended ${ms} ms later"
[[ $ms -lt 30000 ]] || fail "the run took ${ms} ms to end after the kill"
lines=$(grep -c '^ampx: error:' "$dir/killed.err")
[[ $lines -eq 1 ]] || fail "$lines error lines after the kill: $(cat "$dir/killed.err")"
grep -q '^ampx: error: rank 1 of 2 was lost' "$dir/killed.err" ||
  fail "the error line does not name rank 1: $(grep '^ampx' "$dir/killed.err")"
grep -q '"event":"done"' "$dir/killed.out" && fail "the killed run reported done"

last=$(ls "$ckpt" | sort | tail -1)
resumed_from=$((10#$(echo "$last" | sed 's/[^0-9]//g')))
total=$((resumed_from + 2))
timeout 120 "$mpiexec" -np 2 "$ampx" "${common[@]}" --epochs $total --batch 32 --data-parallel \
  --checkpoint "$ckpt" --resume --export "$dir/resumed.onnx" >"$dir/resumed.out" \
  2>"$dir/resumed.err" || fail "resume: status $? $(grep '^ampx' "$dir/resumed.err")"
first=$(grep '"event":"epoch"' "$dir/resumed.out" | head -1 | sed 's/.*"epoch":\([0-9]*\).*/\1/')
[[ $first -eq $((resumed_from + 1)) ]] ||
  fail "the resumed run started at epoch $first, after checkpoint $last"
timeout 120 "$mpiexec" -np 2 "$ampx" "${common[@]}" --epochs $total --batch 32 --data-parallel \
  --export "$dir/whole.onnx" >"$dir/whole.out" 2>"$dir/whole.err" || fail "uninterrupted run"
cmp -s "$dir/resumed.onnx" "$dir/whole.onnx" ||
  fail "the resumed run's weights differ from the uninterrupted run's"
echo "resumed after $last: epochs $first..$total, weights identical: $(cmp -s "$dir/resumed.onnx" "$dir/whole.onnx" && echo yes || echo no)"

# 3. Different learning rates on the two ranks.
start=$(date +%s%N)
timeout 60 "$mpiexec" -np 2 bash -c \
  '"$0" "${@:1}" --lr $([[ $OMPI_COMM_WORLD_RANK == 0 ]] && echo 0.05 || echo 0.01)' \
  "$ampx" "${base[@]}" --epochs 1 --batch 32 --data-parallel >"$dir/disagree.out" \
  2>"$dir/disagree.err"
status=$?
ms=$((($(date +%s%N) - start) / 1000000))
[[ $status -ne 0 && $status -ne 124 ]] || fail "disagreeing ranks: mpirun status $status"
# Each rank's line names it (ampx writes the line in one piece; mpirun
# forwards the ranks' stderr as it comes).
for r in 0 1; do
  grep -q "^ampx: error: the 2 ranks disagree on the training options (rank $r: " \
    "$dir/disagree.err" || fail "disagreeing ranks: no line from rank $r: $(grep ampx "$dir/disagree.err")"
done
lines=$(grep -c 'ampx: error:' "$dir/disagree.err")
[[ $lines -eq 2 ]] || fail "disagreeing ranks: $lines error lines: $(grep ampx "$dir/disagree.err")"
grep -q '"event":"epoch"' "$dir/disagree.out" && fail "disagreeing ranks trained"
echo "disagreeing ranks refused in ${ms} ms"

# 4. A rank that stalls (SIGSTOP) after the first checkpoint: the other gives
#    up after --comm-timeout (2 s) with one line, and mpirun ends the job.
signal_rank_1 stalled STOP "$dir/stall" -- --comm-timeout 2
[[ $signalled -eq 1 ]] || fail "no rank 1 to stop"
echo "rank 1 stopped: the run ended ${ms} ms later, mpirun status $status"
[[ $status -ne 0 && $status -ne 124 ]] || fail "stalled rank: mpirun status $status"
[[ $ms -ge 2000 && $ms -lt 30000 ]] || fail "the run ended ${ms} ms after the stall (timeout 2 s)"
lines=$(grep -c '^ampx: error: .*no answer from the other ranks within 2 s' "$dir/stalled.err")
[[ $lines -eq 1 ]] || fail "stalled rank: $lines timeout lines: $(grep '^ampx' "$dir/stalled.err")"

# 5. ZeRO-1 (--shard-optimizer), planned capability-blind so that the O2
#    layers' weights are 16-bit copies on the ranks that do not own them:
#    the accuracy of the replicated run, each rank's share of the optimizer
#    state, checkpoints in shards, and a resume that ends bit for bit where
#    the uninterrupted run does.
zero=("${common[@]}" --batch 32 --data-parallel --shard-optimizer --capability-blind)
timeout 120 "$mpiexec" -np 2 "$ampx" "${zero[@]}" --epochs 12 --checkpoint "$dir/zero" \
  --export "$dir/zero12.onnx" >"$dir/zero.out" 2>"$dir/zero.err" ||
  fail "--shard-optimizer: status $? $(grep '^ampx' "$dir/zero.err")"
sharded=$(accuracy "$dir/zero.out")
echo "digits-cnn O2 (capability-blind), 12 epochs, 2 ranks x 32, --shard-optimizer: $sharded"
awk -v a="$one" -v b="$sharded" 'BEGIN { exit !(b >= a - 0.01 && b >= 0.95) }' ||
  fail "--shard-optimizer reached $sharded against one process's $one"
memory=$(grep '"event":"done"' "$dir/zero.out" | sed 's/.*"sharded_optimizer":{\([^}]*\)}.*/\1/')
field() { echo "$memory" | sed "s/.*\"$1\":\([0-9]*\).*/\1/"; }
[[ $(field held_16bit) -gt 0 ]] || fail "--shard-optimizer held no 16-bit copies: $memory"
[[ $(field optimizer_bytes) -lt $(field unsharded_optimizer_bytes) ]] ||
  fail "--shard-optimizer: rank 0 keeps all the optimizer state: $memory"
for f in epoch-0012.ampxckpt epoch-0012.shard-0-of-2.ampxckpt epoch-0012.shard-1-of-2.ampxckpt; do
  [[ -f $dir/zero/$f ]] || fail "--shard-optimizer wrote no $f: $(ls "$dir/zero")"
done
[[ -f $dir/zero/epoch-0009.shard-0-of-2.ampxckpt ]] && fail "epoch 9's shards outlived --keep 3"
rm "$dir"/zero/epoch-001[012]*
timeout 120 "$mpiexec" -np 2 "$ampx" "${zero[@]}" --epochs 12 --checkpoint "$dir/zero" --resume \
  --export "$dir/zero-resumed.onnx" >"$dir/zero-resumed.out" 2>"$dir/zero-resumed.err" ||
  fail "--shard-optimizer --resume: status $? $(grep '^ampx' "$dir/zero-resumed.err")"
cmp -s "$dir/zero-resumed.onnx" "$dir/zero12.onnx" ||
  fail "--shard-optimizer: resumed at epoch 9, the weights differ from the uninterrupted run's"
"$ampx" "${base[@]}" --epochs 1 --shard-optimizer >/dev/null 2>"$dir/usage.err"
[[ $? -eq 2 ]] && grep -q 'need --data-parallel' "$dir/usage.err" ||
  fail "--shard-optimizer without --data-parallel: $(cat "$dir/usage.err")"

[[ $failures -eq 0 ]] && echo "PASS" || echo "$failures failures"
exit $((failures > 0))
