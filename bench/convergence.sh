#!/usr/bin/env bash
# Convergence with AMP and loss scaling, side by side (issue 19; results in
# docs/benchmarks.md): builtin:digits-cnn on builtin:digits, 12 epochs, SGD
# lr 0.05 momentum 0.9, on cpu_ref:0 capability-blind (its emulated 16-bit
# rounds to f16 for real on any machine), 3 seeds per configuration; the
# final test accuracy of each run, and every run's curves in one HTML file.
#
# Usage: bench/convergence.sh [AMPX] [OUT.html] [EPOCHS]
set -euo pipefail
ampx=${1:-build/release/apps/ampx}
out=${2:-build/convergence.html}
epochs=${3:-12}
rm -f "$out"
configs=(
  "O0|--amp O0"
  "O1 dynamic|--amp O1 --capability-blind --loss-scale dynamic"
  "O2 dynamic (default)|--amp O2 --capability-blind"
  "O2 fixed 128|--amp O2 --capability-blind --loss-scale fixed"
  "O3 none|--amp O3 --capability-blind --loss-scale none --diagnose-overflow"
  "O3 dynamic|--amp O3 --capability-blind --loss-scale dynamic --diagnose-overflow"
)
printf '| configuration | seed 1 | seed 2 | seed 3 | mean | skipped steps (seed 1) |\n|---|---|---|---|---|---|\n'
for c in "${configs[@]}"; do
  name=${c%%|*} args=${c#*|}
  accs=() skipped=""
  for seed in 1 2 3; do
    report=()
    [ "$seed" = 1 ] && report=(--report "$out" --report-label "$name")
    # shellcheck disable=SC2086
    json=$("$ampx" train builtin:digits-cnn --data builtin:digits --device cpu_ref:0 \
      --epochs "$epochs" --lr 0.05 --momentum 0.9 --seed "$seed" $args "${report[@]}" \
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
  printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "${accs[0]}" "${accs[1]}" "${accs[2]}" "$mean" "$skipped"
done
echo "curves: $out"
