#!/usr/bin/env bash
# The main job: builds if needed, then prints the coverage report of every
# built-in model on every device found: per amp level O0-O3, what runs in
# 16-bit, what stays f32 and why (no native kernel, or not worth it by
# cost), Casts, predicted and measured time, and the op x device x dtype
# coverage matrix. The first run probes the devices quickly (`ampx probe
# --quick`, stored in the capability database) so predictions come from
# measurements. Levels O1-O3 are reported as tuned plans (`ampx report
# --tune`, docs/TUNING.md): tuned on the spot the first time, verified
# against O0 in alternation, stored and reused after. Extra arguments go to
# `ampx report` (e.g. --format md, --format html -o report.html, --no-run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh release >&2
ampx=build/release/apps/ampx
if ! "$ampx" db list --format json 2>/dev/null | grep -q '"fingerprint"'; then
  echo "report: no probe data yet; probing every device (--quick)" >&2
  "$ampx" probe --quick >&2 || echo "report: probing failed for some device; using plugin hints there" >&2
fi
tune=--tune
for a in "$@"; do [ "$a" = --no-tuned ] && tune=; done
exec "$ampx" report builtin:cnn builtin:mlp builtin:encoder $tune "$@"
