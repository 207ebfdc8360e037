#!/usr/bin/env bash
# The whole test suite: release build, then the same suite under ASan+UBSan.
# Usage: scripts/test.sh [release|asan|all]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-all}"
presets=()
case "$which" in
  release) presets=(release) ;;
  asan) presets=(asan) ;;
  all) presets=(release asan) ;;
  *) echo "test.sh: unknown suite '$which' (expected release, asan or all)" >&2; exit 2 ;;
esac
bash scripts/install-deps.sh
bash scripts/python-env.sh  # the ONNX tests compare with ONNX Runtime
for preset in "${presets[@]}"; do
  echo "== $preset: build ($(date +%T))" >&2
  bash scripts/build.sh "$preset"
  echo "== $preset: test ($(date +%T))" >&2
  ctest --preset "$preset" -j "${AMPX_JOBS:-$(nproc)}" --timeout 600
done
echo "== done ($(date +%T))" >&2
