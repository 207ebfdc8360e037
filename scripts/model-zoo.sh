#!/usr/bin/env bash
# The real-model zoo (docs/ONNX.md, "The real-model zoo"): third-party ONNX
# models as their authors ship them inside PyPI wheels, pinned by version and
# sha256 (wheel and model), and torchvision models exported here with
# Debian's torch (bench/export_torchvision_zoo.py: random weights, fixed
# seed; some at older opsets), pinned by the packages' versions and each
# export's sha256; all in a cache outside the repository:
#   $AMPX_ZOO_DIR, else $XDG_CACHE_HOME/ampx/zoo, else $HOME/.cache/ampx/zoo.
# Models are never committed; tests read them from the cache and never
# download (CI calls this from scripts/test.sh, ctest from the OnnxZoo.Setup
# fixture). Needs the pip of scripts/python-env.sh (.venv) and Debian's
# python3-torch and python3-torchvision (scripts/install-deps.sh).
# Prints the zoo's directory on stdout. Returns at once when the stamped cache
# is complete; a half-made one (no stamp) is made again, in a temporary
# directory renamed into place.
# Usage: scripts/model-zoo.sh [--dir]
#   --dir: only print the directory, fetching nothing; exit 1 (and say so)
#          when the zoo there is not complete.
set -euo pipefail
cd "$(dirname "$0")/.."

# wheel file name, requirement, wheel sha256
wheels=(
  "rapidocr_onnxruntime-1.4.4-py3-none-any.whl rapidocr-onnxruntime==1.4.4
   971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"
  "silero_vad-6.2.3-py3-none-any.whl silero-vad==6.2.3
   7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8"
)
# path inside the wheel (the wheel is the one whose name starts with the
# path's first component), sha256; the zoo keeps the file name
models=(
  "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx
   d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9"
  "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx
   48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b"
  "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx
   e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"
  "silero_vad/data/silero_vad.onnx
   1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3"
  "silero_vad/data/silero_vad_16k_op15.onnx
   7ed98ddbad84ccac4cd0aeb3099049280713df825c610a8ed34543318f1b2c49"
  "silero_vad/data/silero_vad_16k_sequence.onnx
   9ccdacc4719d8aa7e45a77536bfabec45a03ba1f2fad5e241ab4060b24238a85"
  "silero_vad/data/silero_vad_half.onnx
   1e0b195ad4806595ef4466f419d16fca7e4afcfc6669b8c0b5f76ea87547c769"
  "silero_vad/data/silero_vad_op18_ifless.onnx
   7671cd04b004e9076da0d4a7b1a5aec36adf161c39230c1cb94a4fd5db6bbd28"
  "silero_vad/data/silero_vad_openvino_16k.onnx
   7776b81ad1b0350c15d7f1555943b9232eb53e9ca5d989c6d0cea9ebc8664d87"
)
# The torchvision exports: name, opset, sha256 of the export (the zoo keeps
# NAME.onnx at opset 13, NAME_opsetN.onnx otherwise, each with its .shapes).
# Made by the torch and torchvision of Debian 12 below (/usr/bin/python3, not
# the venv: torch is not pinned on PyPI here), BatchNorm statistics
# calibrated so that 16-bit checks mean something (the script's docstring).
# The exports are byte-for-byte reproducible: two runs give the same files
# (checked, also with 2 threads), and the export script pins what would
# differ between CPUs (torch's AVX2 normal fill rounds the random weights
# differently from its default one: ATEN_CPU_CAPABILITY=default; the
# calibration's convolutions run in float64, far below float32's rounding).
# Another torch package may export other bytes (other weights from the same
# seed, another graph): the sha256 then fails, naming both versions; re-pin
# only after checking the new exports against ORT (run_zoo_models.py). With
# the pinned packages, other bytes are a warning (below).
torch_packages="python3-torch=1.13.1+dfsg-4 python3-torchvision=0.14.1-2"
exports=(
  "mobilenet_v3_small 13 fce0f330a22c5d80da4a6f45be43546342d641fd238b93d9a467a15ff1bb1942"
  "squeezenet1_1 13 2ae96aa01bbbf720d8be7ff54d854fee9e12eba27ba21c2e0a8657b47a0fcc7f"
  "shufflenet_v2_x1_0 13 09bc544ee5f8ca3cf0fe57f330a0f5f9cb93d754276a2e11d481efa1957cad27"
  "resnet18 13 5e0e1b199e5ac0cd0c15f83ea1e1fa48ee672e2f827df426692955a46e2da796"
  "squeezenet1_1 9 f3a2d04eca7834d35d25c74334afa4fb641efba339df6679633a626acb1f6b86"
  "shufflenet_v2_x1_0 9 ee44f356d2649b8770894b769868995014b4febd0073420206f0ef4b72bb6e62"
  "resnet18 10 456904be7dcaea76afa95b2722e578737507250f0d593fd1e74ab2369914224d"
  "mobilenet_v2 11 480b86df5151789e3296460025ddfad57fbe08e7b3c709f2bd12e1942400ffa8"
)

die() { echo "model-zoo: $*" >&2; exit 1; }
only_dir=0
case "${1:-}" in
  "") ;;
  --dir) only_dir=1 ;;
  *) die "unknown argument '$1' (usage: scripts/model-zoo.sh [--dir])" ;;
esac

if [ -n "${AMPX_ZOO_DIR:-}" ]; then
  zoo="$AMPX_ZOO_DIR"
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
  zoo="$XDG_CACHE_HOME/ampx/zoo"
elif [ -n "${HOME:-}" ]; then
  zoo="$HOME/.cache/ampx/zoo"
else
  zoo="$PWD/build/zoo"  # no home: keep it in the (ignored) build directory
fi
# The stamp names every pin; it is written last, so a zoo made by another
# version of this list, or left half-made, has none that matches.
want=$(printf '%s\n' "${wheels[@]}" "${models[@]}" "$torch_packages" "${exports[@]}" \
  | sha256sum | cut -d' ' -f1)
if [ "$(cat "$zoo/.zoo.sha256" 2>/dev/null)" = "$want" ]; then
  echo "$zoo"
  exit 0
fi
if [ "$only_dir" = 1 ]; then
  die "no complete zoo in $zoo: run scripts/model-zoo.sh"
fi

pip=.venv/bin/pip
python=.venv/bin/python
[ -x "$pip" ] || die "no $pip: run scripts/python-env.sh first"
torch_python=/usr/bin/python3
"$torch_python" -c 'import torch, torchvision' 2> /dev/null \
  || die "Debian's python3-torch and python3-torchvision are needed for the torchvision exports: run scripts/install-deps.sh"
parent=$(dirname "$zoo")
mkdir -p "$parent" || die "cannot create $parent"
# One maker at a time; whoever waited finds the zoo made.
exec 9> "$parent/.zoo.lock" || die "cannot open $parent/.zoo.lock"
flock 9 || die "cannot lock $parent/.zoo.lock"
if [ "$(cat "$zoo/.zoo.sha256" 2>/dev/null)" = "$want" ]; then
  echo "$zoo"
  exit 0
fi
echo "model-zoo: fetching ${#models[@]} models and exporting ${#exports[@]} into $zoo" >&2
tmp=$(mktemp -d "$parent/.zoo.tmp.XXXXXX") || die "cannot create a temporary directory in $parent"
trap 'rm -rf "$tmp"' EXIT

for w in "${wheels[@]}"; do
  read -r -d '' file req sha <<< "$w" || true
  if ! "$pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      "$req" -d "$tmp/wheels" > "$tmp/pip.log" 2>&1; then
    die "pip download $req failed: $(grep '^ERROR' "$tmp/pip.log" | tail -n1 || true)"
  fi
  [ -f "$tmp/wheels/$file" ] || die "pip download $req did not give $file"
  got=$(sha256sum "$tmp/wheels/$file" | cut -d' ' -f1)
  [ "$got" = "$sha" ] || die "$file: sha256 $got, expected $sha"
done

mkdir "$tmp/models"
for m in "${models[@]}"; do
  read -r -d '' member sha <<< "$m" || true
  name=$(basename "$member")
  file=""
  for w in "${wheels[@]}"; do
    case "$w" in "${member%%/*}-"*) file=${w%% *} ;; esac
  done
  [ -n "$file" ] || die "no wheel listed for $member"
  "$python" -c 'import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$tmp/wheels/$file" "$member" "$tmp/models/$name" 2> /dev/null \
    || die "$member not found in $file"
  got=$(sha256sum "$tmp/models/$name" | cut -d' ' -f1)
  [ "$got" = "$sha" ] || die "$name (from $file): sha256 $got, expected $sha"
done
installed=$(dpkg-query -W -f='${Package}=${Version} ' python3-torch python3-torchvision 2> /dev/null \
  | sed 's/ $//' || true)
opsets=$(printf '%s\n' "${exports[@]}" | cut -d' ' -f2 | sort -un)
for opset in $opsets; do
  names=$(printf '%s\n' "${exports[@]}" | awk -v o="$opset" '$2 == o { printf "%s ", $1 }')
  # shellcheck disable=SC2086  # the names are words
  ATEN_CPU_CAPABILITY=default "$torch_python" bench/export_torchvision_zoo.py --out "$tmp/models" \
      --opset "$opset" $names > "$tmp/export.log" 2>&1 \
    || die "exporting ${names% } at opset $opset failed: $(grep -v '^ *$' "$tmp/export.log" | tail -n1)"
done
for e in "${exports[@]}"; do
  read -r name opset sha <<< "$e"
  file=$name.onnx
  [ "$opset" = 13 ] || file=${name}_opset$opset.onnx
  [ -f "$tmp/models/$file" ] || die "bench/export_torchvision_zoo.py did not write $file"
  got=$(sha256sum "$tmp/models/$file" | cut -d' ' -f1)
  [ "$got" = "$sha" ] && continue
  # Another torch package: another model, refused. The pinned packages
  # giving other bytes: seen on a fresh Debian root of the same CPU, for
  # mobilenet_v3_small and both shufflenets. The graphs were identical; 11
  # initializers differed, conv biases that the exporter folded from
  # BatchNorm and that are rounding noise around 0 (|b| <= 4e-15, differing
  # by <= 6e-16). The export is the pinned recipe, and the tests compare
  # ampx with ORT on this very file, so it is kept, with a warning naming
  # both hashes.
  [ "$installed" = "$torch_packages" ] \
    || die "$file (torchvision export): sha256 $got, expected $sha; pinned for $torch_packages, installed ${installed:-unknown}"
  echo "model-zoo: warning: $file (torchvision export) has sha256 $got, pinned $sha, with the pinned $torch_packages: kept (the tests compare it with ONNX Runtime as it is)" >&2
done
echo "$want" > "$tmp/models/.zoo.sha256"

# Into place: the old (stale or half-made) zoo is moved aside first, so the
# path never holds a mix of the two.
if [ -e "$zoo" ]; then
  mv "$zoo" "$tmp/old" || die "cannot move the old $zoo aside"
fi
mv "$tmp/models" "$zoo" || die "cannot rename $tmp/models to $zoo"
echo "$zoo"
