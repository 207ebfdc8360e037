#!/usr/bin/env bash
# CUDA device check: the CUDA conformance tests (every claimed op x dtype
# against cpu_ref, the built-in models at O0/O2) and the CUDA benchmark, on a
# machine with a GPU, in well under 5 minutes.
#
# The GPU machine has the CUDA toolkit, CMake and Python (PyTorch) but none
# of the Debian -dev packages ampx builds with, and no network. So the
# binaries are built on a machine like CI's and carried over:
#
#   scripts/device-check.sh pack [DIR]   # here: build, assemble DIR
#                                        #   (default build/device-check, <= 64 MiB)
#   scripts/device-check.sh run [DIR]    # there: run from DIR, results to
#                                        #   $OUT (if set) or DIR/results
#
# DIR holds bin/ (ampx, ampx_cuda_tests, ampx_cuda_bench, and where NCCL was
# found ampx_nccl_tests), plugins/ (cpu_ref, cuda), lib/libampx_nccl.so (the
# NCCL module, frontend/nccl) and lib/ (the shared libraries ldd shows outside glibc and CUDA:
# spdlog, fmt; libstdc++ and libgcc_s in lib/fallback, used only when the
# machine's own are too old). cuBLAS(Lt) and cuDNN are NOT carried: the GPU
# machine's own libraries are found through LD_LIBRARY_PATH (CUDA_HOME,
# /usr/local/cuda, and PyTorch's nvidia-* wheels when present), nor is
# libnccl.so.2 (218 MB; PyTorch's nvidia-nccl wheel or the toolkit's there).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode="${1:-run}"
dir="${2:-}"
if [ -z "$dir" ]; then
  # Run from a carried copy of this script: its own directory.
  if [ -x "$here/bin/ampx_cuda_tests" ]; then dir="$here"; else dir="$here/../build/device-check"; fi
fi

die() { echo "device-check: $*" >&2; exit 1; }

# Libraries the target machine provides itself: glibc, the GPU stack.
system_lib() {
  case "$(basename "$1")" in
    libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux* | libresolv.so*) return 0 ;;
    libcuda.so* | libcudart.so* | libcublas* | libcudnn* | libnvrtc* | libnvJitLink*) return 0 ;;
    libnccl.so*) return 0 ;;
    *) return 1 ;;
  esac
}

pack() {
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # Only ever replace an empty directory or an earlier pack.
  if [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/GLIBC_REQUIRED" ]; then
    die "$dir is not empty and not an earlier pack; not touching it"
  fi
  cd "$here/.."
  local preset=release build=build/release
  [ -f "$build/build.ninja" ] || cmake --preset "$preset" >/dev/null
  # NCCL (frontend/nccl) where this build found it.
  local nccl=""
  ninja -C "$build" -t targets 2>/dev/null | grep -q '^ampx_nccl_tests: phony' && nccl=1
  cmake --build "$build" -j "${AMPX_JOBS:-2}" --target ampx ampx_cuda_tests ampx_cuda_bench \
    ampx_backend_cpu_ref ampx_backend_cuda ${nccl:+ampx_nccl_tests ampx_nccl_module}
  rm -rf "${dir:?}"/*
  mkdir -p "$dir/bin" "$dir/plugins" "$dir/lib"
  cp "$build/apps/ampx" "$build/tests/cuda/ampx_cuda_tests" "$build/bench/ampx_cuda_bench" \
    "$dir/bin/"
  cp "$build/lib/ampx/plugins/libampx_backend_cpu_ref.so" \
    "$build/lib/ampx/plugins/libampx_backend_cuda.so" "$dir/plugins/"
  if [ -n "$nccl" ]; then
    cp "$build/tests/nccl/ampx_nccl_tests" "$dir/bin/"
    cp "$build/lib/ampx/libampx_nccl.so" "$dir/lib/"
    strip --strip-unneeded "$dir/lib/libampx_nccl.so"
    # Open MPI's components (the GPU machine has no Open MPI): enough for
    # the one-rank run's MPI singleton, started isolated (no orted).
    local mca
    mca=$(dirname "$(ldd "$build/apps/ampx" | awk '/libmpi\.so/ { print $3 }')")/openmpi/lib/openmpi3
    if [ -d "$mca" ]; then mkdir -p "$dir/openmpi" && cp "$mca"/mca_*.so "$dir/openmpi/"; fi
  fi
  strip --strip-unneeded "$dir"/bin/* "$dir"/plugins/*
  # Every non-system library any carried binary needs (resolved here). The
  # C++ runtime goes to lib/fallback: Debian 12's needs glibc 2.36, so it is
  # used there only when the machine's own libstdc++ is too old.
  mkdir -p "$dir/lib/fallback"
  local f lib
  for f in "$dir"/bin/* "$dir"/plugins/* "$dir"/lib/libampx_nccl.so; do
    [ -f "$f" ] || continue
    ldd "$f" | awk '/=> \// { print $3 }' | while read -r lib; do
      case "$(basename "$lib")" in
        libstdc++.so* | libgcc_s.so*) cp -L -n "$lib" "$dir/lib/fallback/" ;;
        *) system_lib "$lib" || cp -L -n "$lib" "$dir/lib/" ;;
      esac
    done
  done
  cp scripts/device-check.sh "$dir/"
  # The newest glibc / libstdc++ symbol versions the binaries need.
  local glibc glibcxx
  glibc=$(objdump -T "$dir"/bin/* "$dir"/plugins/* "$dir"/lib/*.so* 2>/dev/null |
    grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
  glibcxx=$(objdump -T "$dir"/bin/* "$dir"/plugins/* "$dir"/lib/*.so* 2>/dev/null |
    grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1)
  echo "$glibc" >"$dir/GLIBC_REQUIRED"
  echo "$glibcxx" >"$dir/GLIBCXX_REQUIRED"
  local mib
  mib=$(du -sm "$dir" | cut -f1)
  [ "$mib" -le 64 ] || die "$dir is $mib MiB, over the 64 MiB limit"
  echo "device-check: packed $dir ($mib MiB; needs $glibc or newer):" >&2
  ls -l "$dir"/bin "$dir"/plugins "$dir"/lib >&2
}

# Directories with the GPU machine's CUDA libraries.
cuda_lib_dirs() {
  local d
  for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    [ -n "$d" ] || continue
    [ -d "$d/lib64" ] && echo "$d/lib64"
    [ -d "$d/lib" ] && echo "$d/lib"
  done
  # PyTorch's pip wheels bring cuBLAS and cuDNN as nvidia-* packages.
  if command -v python3 >/dev/null; then
    timeout 30 python3 - <<'PY' 2>/dev/null || true
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib"))):
        print(d)
PY
  fi
}

run() {
  [ -x "$dir/bin/ampx_cuda_tests" ] || die "$dir has no carried binaries (run '$0 pack' first)"
  dir=$(cd "$dir" && pwd)
  local results="${OUT:-$dir/results}"
  mkdir -p "$results"
  local ld="$dir/lib"
  # The machine's own C++ runtime unless it lacks a version the binaries need.
  local need sys
  need=$(cat "$dir/GLIBCXX_REQUIRED" 2>/dev/null || true)
  sys=$({ ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null |
    awk '/libstdc\+\+\.so\.6 .*x86-64/ { print $NF; exit }' || true)
  if [ -z "$sys" ] || [ -z "$need" ] || ! grep -qa "$need" "$sys"; then ld="$ld:$dir/lib/fallback"; fi
  while read -r d; do ld="$ld:$d"; done < <(cuda_lib_dirs)
  export LD_LIBRARY_PATH="$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local plugins="$dir/plugins"
  # The carried plugin has the CUDA 13 runtime linked in and needs a driver
  # for it. With an older driver, and the sources and a toolkit here (the
  # device tool runs in a copy of the repository), rebuild just the plugin
  # against this machine's toolkit (backends/cuda/standalone).
  if ! "$dir/bin/ampx" --plugin-dir "$plugins" devices --format json 2>/dev/null |
    grep -q '"id": "cuda:0"'; then
    local src="$here/.."
    if [ -f "$src/backends/cuda/standalone/CMakeLists.txt" ] && command -v nvcc >/dev/null &&
      command -v cmake >/dev/null; then
      echo "device-check: carried plugin has no device here; rebuilding it with $(command -v nvcc)" >&2
      local sb="$results/cuda-standalone"
      if cmake -S "$src/backends/cuda/standalone" -B "$sb" -DCMAKE_BUILD_TYPE=Release \
        >"$results/rebuild.log" 2>&1 &&
        cmake --build "$sb" -j "$(nproc)" >>"$results/rebuild.log" 2>&1; then
        plugins="$results/plugins"
        mkdir -p "$plugins"
        cp "$dir/plugins/libampx_backend_cpu_ref.so" "$sb/plugins/libampx_backend_cuda.so" "$plugins/"
        rm -rf "$sb"
        # The NCCL module has the same CUDA runtime linked in: rebuilt too,
        # against this machine's NCCL (the toolkit's or PyTorch's wheel).
        if [ -f "$dir/lib/libampx_nccl.so" ]; then
          local nb="$results/nccl-standalone" nccl_home
          nccl_home=$(cuda_lib_dirs | grep '/nvidia/nccl/lib$' | head -1)
          if NCCL_HOME="${nccl_home%/lib}" cmake -S "$src/frontend/nccl/standalone" -B "$nb" \
            -DCMAKE_BUILD_TYPE=Release >>"$results/rebuild.log" 2>&1 &&
            cmake --build "$nb" -j "$(nproc)" >>"$results/rebuild.log" 2>&1; then
            cp "$nb/libampx_nccl.so" "$results/libampx_nccl.so"
            rm -rf "$nb"
          else
            echo "device-check: NCCL module rebuild failed, see $results/rebuild.log" >&2
          fi
        fi
      else
        echo "device-check: rebuild failed, see $results/rebuild.log" >&2
      fi
    fi
  fi
  export AMPX_TEST_PLUGIN_DIR="$plugins" AMPX_PLUGIN_PATH="$plugins"
  export AMPX_NCCL_MODULE="$dir/lib/libampx_nccl.so"
  [ -f "$results/libampx_nccl.so" ] && AMPX_NCCL_MODULE="$results/libampx_nccl.so"
  local summary="$results/summary.md" rc=0
  {
    echo "# ampx CUDA device check, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo '```'
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 || true
    echo "glibc here: $(ldd --version 2>&1 | head -1); binaries need $(cat "$dir/GLIBC_REQUIRED" 2>/dev/null)"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    echo '```'
    echo
    echo '## ampx devices'
    echo '```'
    "$dir/bin/ampx" --plugin-dir "$plugins" devices 2>&1 || true
    echo '```'
  } >"$summary"
  # Tests: a missing device is a failure here (AMPX_EXPECT_CUDA_DEVICE=1).
  echo "device-check: conformance tests" >&2
  set +e
  AMPX_EXPECT_CUDA_DEVICE=1 timeout 200 "$dir/bin/ampx_cuda_tests" \
    --gtest_output="xml:$results/cuda_tests.xml" >"$results/cuda_tests.log" 2>&1
  local test_rc=$?
  echo "device-check: benchmark" >&2
  timeout 90 "$dir/bin/ampx_cuda_bench" --plugin-dir "$plugins" --out "$results/bench.md" \
    >"$results/bench.log" 2>&1
  local bench_rc=$?
  # NCCL (where packed): the module, the native handles and ncclAllReduce
  # on the plugin's stream against the host path (1 rank; 2 GPUs where
  # there are two), two ranks on one GPU ending in one line; then a
  # data-parallel run on cuda:0, one rank (an MPI singleton).
  local nccl_rc=0 train_rc=0
  if [ -x "$dir/bin/ampx_nccl_tests" ]; then
    echo "device-check: NCCL tests" >&2
    AMPX_EXPECT_CUDA_DEVICE=1 timeout 120 "$dir/bin/ampx_nccl_tests" \
      --gtest_output="xml:$results/nccl_tests.xml" >"$results/nccl_tests.log" 2>&1
    nccl_rc=$?
    echo "device-check: data-parallel training on cuda:0 (NCCL)" >&2
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      OMPI_MCA_mca_base_component_path="$dir/openmpi" OMPI_MCA_ess_singleton_isolated=1 \
      OMPI_MCA_pmix=isolated OMPI_MCA_pml=ob1 OMPI_MCA_btl=self timeout 120 \
      "$dir/bin/ampx" --plugin-dir "$plugins" --log-level info train builtin:digits-cnn \
      --data builtin:digits --device cuda:0 --data-parallel --epochs 2 --amp O2 \
      >"$results/nccl_train.log" 2>&1
    train_rc=$?
  fi
  set -e
  {
    echo
    echo "## Conformance tests (exit $test_rc)"
    echo '```'
    grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|tests? ran' "$results/cuda_tests.log" | head -60
    echo '```'
    echo
    echo "## Benchmark (exit $bench_rc)"
    echo
    if [ -s "$results/bench.md" ]; then cat "$results/bench.md"; else tail -20 "$results/bench.log"; fi
    if [ -x "$dir/bin/ampx_nccl_tests" ]; then
      echo
      echo "## NCCL tests (exit $nccl_rc)"
      echo '```'
      grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|^\[  FAILED  \]|^module:|^refused:|NCCL accepted|tests? ran' \
        "$results/nccl_tests.log" | head -30
      echo '```'
      echo
      echo "## Data-parallel training on cuda:0, NCCL (exit $train_rc)"
      echo '```'
      tail -15 "$results/nccl_train.log"
      echo '```'
    fi
  } >>"$summary"
  [ "$test_rc" -eq 0 ] || rc=1
  [ "$bench_rc" -eq 0 ] || rc=1
  [ "$nccl_rc" -eq 0 ] || rc=1
  [ "$train_rc" -eq 0 ] || rc=1
  cat "$summary"
  return "$rc"
}

case "$mode" in
  pack) pack ;;
  run) run ;;
  *) die "usage: $0 pack|run [DIR]" ;;
esac
