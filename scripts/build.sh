#!/usr/bin/env bash
# Configures and builds one CMake preset (default: release).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
bash scripts/install-deps.sh
jobs="${AMPX_JOBS:-$(nproc)}"
[ -f "build/$preset/build.ninja" ] || cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
