#!/usr/bin/env bash
# The installed plugin SDK as a vendor uses it: `cmake --install` this build
# into a clean prefix, build examples/plugin_template out of tree with
# find_package(ampx) against that prefix only, then load the plugin in the
# installed ampx, run a model on it and pass `ampx plugin-check`.
#
#   sdk_test.sh BUILD_DIR SOURCE_DIR WORK_DIR C_COMPILER CXX_COMPILER GENERATOR
set -euo pipefail
build=$1 src=$2 work=$3 cc=$4 cxx=$5 gen=$6
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
fail() { echo "sdk_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || fail "install failed (see $work/install.log)"
for f in lib/cmake/ampx/ampxConfig.cmake lib/cmake/ampx/ampxConfigVersion.cmake \
         lib/cmake/ampx/AmpxPlugin.cmake lib/cmake/ampx/plugin_exports.map \
         lib/pkgconfig/ampx-plugin.pc include/ampx/backend_api.h \
         include/ampx/plugin_support.hpp include/ampx/node_desc_builder.hpp \
         include/ampx/host_plugin.hpp include/ampx/opset/ops.inc \
         include/ampx/opset/validate.hpp include/ampx/opset/tolerances.hpp lib/libampx_opset.a \
         include/ampx/reference/kernels.hpp lib/libampx_reference_kernels.a lib/libampx_host_plugin.a; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done

# Out of tree, nothing of the source tree on the include path: only the prefix.
cmake -S "$src/examples/plugin_template" -B "$work/fastcpu" -G "$gen" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; fail "the template does not configure with find_package(ampx)"; }
cmake --build "$work/fastcpu" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; fail "the template does not build"; }
so=$work/fastcpu/libampx_backend_fastcpu.so
[ -f "$so" ] || fail "no $so"
exports=$(nm -D --defined-only "$so" | awk '{print $3}')
[ "$exports" = "ampx_plugin_entry" ] || fail "the plugin exports more than ampx_plugin_entry: $exports"
# Another major version is refused (the version file: same major only).
mkdir -p "$work/wrong_major"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(w LANGUAGES CXX)\nfind_package(ampx 1.0 REQUIRED)\n' \
  >"$work/wrong_major/CMakeLists.txt"
if cmake -S "$work/wrong_major" -B "$work/wrong_major/build" -G "$gen" \
     -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1; then
  fail "find_package(ampx 1.0) was satisfied by an ampx 0.x install"
fi

ampx=$prefix/bin/ampx
"$ampx" --plugin-dir "$work/fastcpu" devices --format json >"$work/devices.json"
python3 - "$work/devices.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ids = [x["id"] for x in d["devices"]]
assert "fastcpu:0" in ids, ids
PY

# O0: every node on fastcpu, the output against cpu_ref's f32.
"$ampx" --plugin-dir "$work/fastcpu" run builtin:mlp --device fastcpu:0 --iters 1 --warmup 0 \
  --format json >"$work/o0.json"
# O2: Relu f16 is native there, Gemm f16 emulated (kept f32); fastcpu has no
# Cast, so the planner's Casts go to the cpu_ref fallback.
"$ampx" --plugin-dir "$work/fastcpu" run builtin:mlp --device fastcpu:0 --amp O2 --iters 1 \
  --warmup 0 --format json >"$work/o2.json"
python3 - "$work/o0.json" "$work/o2.json" <<'PY'
import json, sys
o0, o2 = (json.load(open(p)) for p in sys.argv[1:3])
devs = o0["placement"]["devices"]
assert devs[0]["id"] == "fastcpu:0" and devs[0]["nodes"] == o0["summary"]["nodes"], devs
assert o0["outputs"][0]["max_rel_error"] < 1e-5, o0["outputs"]
s = o2["summary"]
assert s["effective_16bit"] == 3 and s["casts"] > 0, s
assert o2["outputs"][0]["max_rel_error"] < 1e-2, o2["outputs"]
PY
# The conformance kit on the template: its Relu and Gemm cases pass in f32
# and f16 (the other ops are honestly unsupported).
"$ampx" plugin-check "$so" --format json >"$work/check.json" ||
  { "$ampx" plugin-check "$so" >&2 || true; fail "plugin-check fails on the template"; }
python3 - "$work/check.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"], j["checks"]
ran = {(c["op"], c["dtype"]) for c in j["cases"] if c["result"] == "pass"}
for want in [("Relu", "f32"), ("Relu", "f16"), ("Gemm", "f32"), ("Gemm", "f16")]:
    assert want in ran, (want, sorted(ran))
PY
echo "sdk_test: install, out-of-tree build with find_package(ampx) and runs on fastcpu:0 ok"
