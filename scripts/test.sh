#!/usr/bin/env bash
# The whole test suite: release build, then the same suite under ASan+UBSan,
# then the libFuzzer targets (tests/fuzz: every seed and kept finding, and a
# 60-second campaign each) under ASan+UBSan.
# Usage: scripts/test.sh [release|asan|fuzz|all]   (default: all)
# Every preset asked for is built and tested, even after an earlier one
# failed; the end lists the failed ones and the exit status is non-zero if
# any did.
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-all}"
presets=()
case "$which" in
  release) presets=(release) ;;
  asan) presets=(asan) ;;
  fuzz) presets=(fuzz) ;;
  all) presets=(release asan fuzz) ;;
  *) echo "test.sh: unknown suite '$which' (expected release, asan, fuzz or all)" >&2; exit 2 ;;
esac
bash scripts/install-deps.sh
bash scripts/python-env.sh  # the ONNX tests compare with ONNX Runtime
bash scripts/model-zoo.sh > /dev/null  # the real-model zoo (pinned wheels, user's cache)
# The suite's own capability database, empty at the start: the developer's
# probe data, calibration and tuned plans (~/.cache/ampx) must not change
# what the tests plan.
scratch_db="$(mktemp -d)"
trap 'rm -rf "$scratch_db"' EXIT
export AMPX_CAPABILITY_DB="$scratch_db/capabilities.db"
failed=()
for preset in "${presets[@]}"; do
  echo "== $preset: build ($(date +%T))" >&2
  if ! bash scripts/build.sh "$preset"; then
    echo "== $preset: build FAILED ($(date +%T))" >&2
    failed+=("$preset (build)")
    continue
  fi
  echo "== $preset: test ($(date +%T))" >&2
  if ! ctest --preset "$preset" -j "${AMPX_JOBS:-$(nproc)}" --timeout 600; then
    echo "== $preset: tests FAILED ($(date +%T))" >&2
    failed+=("$preset (tests)")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "== failed: ${failed[*]} ($(date +%T))" >&2
  exit 1
fi
echo "== done: ${presets[*]} passed ($(date +%T))" >&2
