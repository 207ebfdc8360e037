#!/usr/bin/env bash
# Installs the Debian 12 packages ampx builds and tests with. Idempotent:
# packages already present are not touched, and apt is not called at all
# when nothing is missing. `--bench` is accepted for the benchmarks' sake
# and adds nothing now: what they needed beyond the tests (Debian's torch and
# torchvision) the tests need too.
set -euo pipefail

case "${1:-}" in
  ""|--bench) ;;
  *) echo "install-deps: unknown argument '$1' (usage: scripts/install-deps.sh [--bench])" >&2; exit 2 ;;
esac
packages=(
  build-essential cmake ninja-build pkg-config
  ccache  # CI's fresh clones share the compiler cache (CMakeLists.txt)
  libboost-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev
  # ampx train's builtin:digits: scikit-learn ships the 8x8 digits as
  # digits.csv.gz, read with zlib
  python3-sklearn zlib1g-dev
  # backends/onednn; Debian's oneDNN is built with its OpenCL runtime, so
  # dnnl-config.cmake calls find_package(OpenCL): the headers and the ICD
  # loader are only a Recommends of libdnnl-dev, and we install without them
  libdnnl-dev ocl-icd-opencl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler  # ONNX import and export (frontend/onnx)
  chromium python3-jsonschema  # tests: the HTML report is rendered, the JSON one validated
  # the asan preset: symbols of glibc's loader, so that LeakSanitizer's own
  # suppression of dynamic TLS blocks (__tls_get_addr, freed by glibc only at
  # thread exit) matches; without them the tests that run `ampx` on onednn:0
  # with use_tls=0 report a 36-byte "leak" from ld-linux-x86-64.so.2
  libc6-dbg
  # the fuzz preset (tests/fuzz): clang and its libFuzzer runtime
  clang libclang-rt-14-dev
  # scripts/python-env.sh: onnx, onnxruntime, numpy from PyPI for the ONNX
  # tests, over HTTPS (the system's CA bundle, for networks that add a CA)
  python3-venv ca-certificates
  # the Python package (python/, docs/PYTHON.md): Python 3.11's headers for
  # the nanobind module, built in the release tree and by `pip install .`
  python3-dev
  # scripts/model-zoo.sh: the zoo's torchvision models are exported with
  # Debian's torch (bench/export_torchvision_zoo.py, /usr/bin/python3; the
  # exports' sha256 are pinned to these packages' versions). About 135 MB to
  # download, 570 MB installed, 170 packages with their dependencies.
  python3-torch python3-torchvision
  # optional: backends/vulkan is built when the loader and glslc are present;
  # lavapipe (mesa-vulkan-drivers) is the CPU Vulkan device its tests run on,
  # under the Khronos validation layer
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers
  # optional: data-parallel training (issue 41, docs/DISTRIBUTED.md):
  # frontend/dist (ampx_dist) is built when CMake finds MPI, and its tests
  # run under Open MPI's mpirun
  libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
