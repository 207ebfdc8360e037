#!/usr/bin/env bash
# The main job: builds if needed, then prints the effective-precision summary
# of every built-in model at O0-O3 on every device found.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh release >&2
exec build/release/apps/ampx summary "$@"
