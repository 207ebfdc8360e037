#!/usr/bin/env bash
# Convergence with AMP and loss scaling, side by side (issue 19; results in
# docs/benchmarks.md): builtin:digits-cnn on builtin:digits, 12 epochs, SGD
# lr 0.05 momentum 0.9, on cpu_ref:0 capability-blind (its emulated 16-bit
# rounds to f16 for real on any machine), 3 seeds per configuration; the
# final test accuracy of each run, and every run's curves in one HTML file.
#
# Then the same levels on builtin:mlp (4 x 1024, batch 64) with synthetic
# but learnable data: 2048 training and 512 test samples of 1024 normal
# features, the label the arg max of a fixed random map to 10 classes
# (written as .npy by NumPy, PYTHON; default .venv/bin/python).
#
# Usage: bench/convergence.sh [AMPX] [OUT.html] [EPOCHS] [MLP_EPOCHS]
set -euo pipefail
ampx=${1:-build/release/apps/ampx}
out=${2:-build/convergence.html}
epochs=${3:-12}
mlp_epochs=${4:-4}
python=${PYTHON:-.venv/bin/python}
rm -f "$out"
configs=(
  "O0|--amp O0"
  "O1 dynamic|--amp O1 --capability-blind --loss-scale dynamic"
  "O2 dynamic (default)|--amp O2 --capability-blind"
  "O2 fixed 128|--amp O2 --capability-blind --loss-scale fixed"
  "O3 none|--amp O3 --capability-blind --loss-scale none --diagnose-overflow"
  "O3 dynamic|--amp O3 --capability-blind --loss-scale dynamic --diagnose-overflow"
)
# run MODEL DATA EVAL EPOCHS LR NAME ARGS...: a table row over seeds 1-3
run_row() {
  local model=$1 data=$2 eval=$3 ep=$4 lr=$5 name=$6 args=$7
  local accs=() skipped=""
  for seed in 1 2 3; do
    local report=()
    [ "$seed" = 1 ] && report=(--report "$out" --report-label "$model: $name")
    local extra=()
    [ -n "$eval" ] && extra=(--eval "$eval")
    # shellcheck disable=SC2086
    json=$("$ampx" train "$model" --data "$data" "${extra[@]}" --device cpu_ref:0 \
      --epochs "$ep" --lr "$lr" --momentum 0.9 --seed "$seed" $args "${report[@]}" \
      --format json 2>/dev/null)
    accs+=("$(printf '%s\n' "$json" | python3 -c '
import json, sys
r = [json.loads(l) for l in sys.stdin]
print("%.2f" % (100 * [x for x in r if x.get("event") == "epoch"][-1]["eval_accuracy"]))')")
    if [ "$seed" = 1 ]; then
      skipped=$(printf '%s\n' "$json" | python3 -c '
import json, sys
r = [json.loads(l) for l in sys.stdin]
print(sum(x["skipped_steps"] for x in r if x.get("event") == "epoch"))')
    fi
  done
  mean=$(python3 -c "print('%.2f' % (sum(map(float, '${accs[*]}'.split())) / 3))")
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$model" "$name" "${accs[0]}" "${accs[1]}" \
    "${accs[2]}" "$mean" "$skipped"
}

printf '| model | configuration | seed 1 | seed 2 | seed 3 | mean | skipped steps (seed 1) |\n'
printf '|---|---|---|---|---|---|---|\n'
for c in "${configs[@]}"; do
  run_row builtin:digits-cnn builtin:digits "" "$epochs" 0.05 "${c%%|*}" "${c#*|}"
done

mlp_dir=$(mktemp -d)
trap 'rm -rf "$mlp_dir"' EXIT
"$python" - "$mlp_dir" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
w = rng.standard_normal((1024, 10)).astype(np.float32)
for name, n in (("train", 2048), ("test", 512)):
    x = rng.standard_normal((n, 1024)).astype(np.float32)
    np.save(f"{d}/{name}_x.npy", x)
    np.save(f"{d}/{name}_y.npy", np.argmax(x @ w, axis=1).astype(np.int64))
PY
for c in "${configs[@]}"; do
  run_row builtin:mlp "$mlp_dir/train_x.npy,$mlp_dir/train_y.npy" \
    "$mlp_dir/test_x.npy,$mlp_dir/test_y.npy" "$mlp_epochs" 0.01 "${c%%|*}" "${c#*|}"
done
echo "curves: $out"
