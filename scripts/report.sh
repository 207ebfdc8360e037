#!/usr/bin/env bash
# The main job: builds if needed, then prints the coverage report of every
# built-in model on every device found: per amp level O0-O3, what runs in
# 16-bit, what stays f32 and why, Casts, predicted and measured time, and the
# op x device x dtype coverage matrix. Extra arguments go to `ampx report`
# (e.g. --format md, --format html -o report.html, --no-run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh release >&2
exec build/release/apps/ampx report builtin:cnn builtin:mlp builtin:encoder "$@"
