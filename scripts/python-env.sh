#!/usr/bin/env bash
# The Python tooling of the ONNX tests and benchmark (onnx, onnxruntime,
# numpy, onnxconverter-common; pinned in tests/onnx/requirements.txt) in a
# virtual environment at .venv. Idempotent: nothing is fetched when .venv
# already holds exactly these requirements.
set -euo pipefail
cd "$(dirname "$0")/.."
req=tests/onnx/requirements.txt
venv=.venv
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
echo "python-env: installing $req into $venv" >&2
# Debian's interpreter: python3-venv is installed by scripts/install-deps.sh.
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
