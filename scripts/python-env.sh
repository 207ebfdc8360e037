#!/usr/bin/env bash
# The Python tooling of the ONNX tests and benchmark (onnx, onnxruntime,
# numpy, onnxconverter-common; pinned in tests/onnx/requirements.txt) in a
# virtual environment that .venv points to. The environment lives in the
# user's cache, named by the requirements' hash, so every checkout on the
# machine (CI clones each submission afresh) shares one install; nothing is
# fetched when it already holds exactly these requirements.
set -euo pipefail
cd "$(dirname "$0")/.."
req=tests/onnx/requirements.txt
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -n "${AMPX_VENV_CACHE:-}" ]; then
  cache="$AMPX_VENV_CACHE"
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
  cache="$XDG_CACHE_HOME/ampx"
elif [ -n "${HOME:-}" ]; then
  cache="$HOME/.cache/ampx"
else
  cache="$PWD/build"  # no home: keep it in the checkout
fi
venv="$cache/venv-${want:0:16}"
# The stamp is written last: a half-made environment has none and is redone.
if [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  echo "python-env: installing $req into $venv" >&2
  rm -rf "$venv"
  mkdir -p "$cache"
  # Debian's interpreter: python3-venv is installed by scripts/install-deps.sh.
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  echo "$want" > "$venv/.requirements.sha256"
fi
if [ "$(readlink .venv 2>/dev/null)" != "$venv" ]; then
  rm -rf .venv
  ln -s "$venv" .venv
fi
