#!/usr/bin/env bash
# Runs one libFuzzer target of tests/fuzz (ctest and scripts/fuzz.sh call it).
#   run_fuzzer.sh FUZZER SEEDS REGRESSIONS WORKDIR --replay
#       every seed and every kept finding once; fails if any crashes
#   run_fuzzer.sh FUZZER SEEDS REGRESSIONS WORKDIR --seconds S | --runs N [-jobs=J ...]
#       a campaign from the seeds and the kept findings, for S seconds or N
#       executions; extra arguments go to libFuzzer. New inputs go to
#       WORKDIR/corpus (kept between campaigns), a finding to WORKDIR/findings/.
set -euo pipefail
fuzzer=$1 seeds=$2 regressions=$3 work=$4
shift 4
mode=${1:?--replay, --seconds S or --runs N}
shift
mkdir -p "$work/corpus" "$work/findings"
# Every input is written to a file (the readers take paths): on tmpfs where
# there is one, millions of writes and fsyncs stay off the disk.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
# Bounded inputs: a model that takes 20 s or 2.5 GB is itself a finding.
common=(-timeout=20 -rss_limit_mb=2560 -artifact_prefix="$work/findings/" -print_final_stats=1)
# Campaigns only: the store's inputs past 16 KiB (4 KiB-page databases)
# just slow it down, as every execution writes the file and SQLite reads it.
grow=()
case "$(basename "$fuzzer")" in
  ampx_fuzz_store) grow+=(-max_len=16384) ;;
esac
dirs=("$seeds")
[ -d "$regressions" ] && dirs+=("$regressions")
case "$mode" in
  --replay)
    exec "$fuzzer" "${common[@]}" -runs=0 "${dirs[@]}" ;;
  --seconds)
    exec "$fuzzer" "${common[@]}" -max_total_time="${1:?seconds}" "${grow[@]}" "${@:2}" "$work/corpus" "${dirs[@]}" ;;
  --runs)
    exec "$fuzzer" "${common[@]}" -runs="${1:?runs}" "${grow[@]}" "${@:2}" "$work/corpus" "${dirs[@]}" ;;
  *)
    echo "run_fuzzer.sh: unknown mode '$mode' (expected --replay, --seconds S or --runs N)" >&2
    exit 2 ;;
esac
