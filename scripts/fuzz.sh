#!/usr/bin/env bash
# Fuzzing campaigns outside the test suite (docs/DEVELOPING.md, "Fuzzing"):
# builds the `fuzz` preset and runs its libFuzzer targets, J at a time.
# Usage: scripts/fuzz.sh [--seconds S | --runs N | --replay] [--preset P]
#                        [--parallel J] [TARGET ...]
#   TARGET: onnx_import npy profile_json store checkpoint (default: all)
#   --seconds S   each target runs S seconds (default 600)
#   --runs N      each target runs N executions instead
#   --replay      no fuzzing: every input of each target's grown corpus and
#                 findings runs once under ASan+UBSan (the fuzz preset)
#   --preset P    fuzz (ASan+UBSan, default) or fuzz-ubsan (UBSan only,
#                 -O3: 2-3x the executions; replay its corpus afterwards)
#   --parallel J  targets at a time (default: the number of cores)
# Each target's corpus grows in build/fuzz/campaign/TARGET/corpus (kept
# between campaigns); a finding stops that target and is left in
# build/fuzz/campaign/TARGET/findings/. The summary gives executions,
# coverage and findings per target; the exit status is non-zero on any
# finding.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(--seconds 600)
preset=fuzz
parallel=$(nproc)
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) limit=(--seconds "${2:?--seconds needs a number}"); shift 2 ;;
    --runs) limit=(--runs "${2:?--runs needs a number}"); shift 2 ;;
    --replay) limit=(--replay); shift ;;
    --preset) preset="${2:?--preset needs fuzz or fuzz-ubsan}"; shift 2 ;;
    --parallel) parallel="${2:?--parallel needs a number}"; shift 2 ;;
    onnx_import|npy|profile_json|store|checkpoint) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (see the usage at the top of scripts/fuzz.sh)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(onnx_import npy profile_json store checkpoint)
case "$preset" in
  fuzz|fuzz-ubsan) ;;
  *) echo "fuzz.sh: unknown preset '$preset' (expected fuzz or fuzz-ubsan)" >&2; exit 2 ;;
esac
[ "${limit[0]}" = --replay ] && preset=fuzz
bash scripts/build.sh "$preset" >&2
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan_suppressions.txt"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
campaign=build/fuzz/campaign
run_one() {
  local t=$1 work="$campaign/$1" fuzzer="build/$preset/tests/fuzz/ampx_fuzz_$1"
  mkdir -p "$work/corpus" "$work/findings"
  if [ "${limit[0]}" = --replay ]; then
    TMPDIR=${TMPDIR:-/dev/shm} "$fuzzer" -runs=0 -timeout=20 -rss_limit_mb=2560 \
      -print_final_stats=1 "$work/corpus" "$work/findings" >"$work/replay.log" 2>&1
    return
  fi
  tests/fuzz/run_fuzzer.sh "$fuzzer" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" "$work" \
    "${limit[@]}" >"$work/log" 2>&1
}
pids=() status=0
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  log=log
  [ "${limit[0]}" = --replay ] && log=replay.log
  echo "fuzz: $t (${limit[*]}), log in $campaign/$t/$log" >&2
  run_one "$t" &
  pids+=($!)
done
for i in "${!targets[@]}"; do wait "${pids[$i]}" || status=1; done
if [ "${limit[0]}" = --replay ]; then
  for t in "${targets[@]}"; do
    echo "$t: $(sed -n 's/^stat::number_of_executed_units: *//p' "$campaign/$t/replay.log") inputs replayed under ASan+UBSan, log in $campaign/$t/replay.log"
  done
  exit $status
fi
printf '%-13s %12s %8s %8s %8s %s\n' target executions exec/s cov ft findings
for t in "${targets[@]}"; do
  log="$campaign/$t/log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  findings=$(find "$campaign/$t/findings" -type f 2>/dev/null | wc -l)
  printf '%-13s %12s %8s %8s %8s %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$findings"
done
exit $status
