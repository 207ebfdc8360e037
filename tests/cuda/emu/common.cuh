// Host emulation of the few CUDA features the importer-op kernels use
// (kernels/attention.cu, linear_attention.cu, grid_sample.cu, det.cu), so
// that their code runs here, without a GPU, against cpu_ref
// (cuda_test_emulation.cpp). Each block's threads are std::threads meeting
// at a std::barrier for __syncthreads; blocks run one after another, so a
// `__shared__` variable is a function-local static. f32 only: the index
// arithmetic is the same for every dtype. CMake copies each .cu with its
// launches rewritten (`k<T><<<g, b, 0, s>>>(args)` -> `emu_launch(k<T>,
// emu::Cfg{g, b, 0, s}, args)`) and its namespace renamed to kern_emu.
#pragma once

#include <cuda_runtime_api.h>

#include <barrier>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "kernels.hpp"

#undef __global__
#undef __device__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define cudaGetLastError() cudaSuccess

inline thread_local uint3 threadIdx, blockIdx;
inline thread_local dim3 blockDim, gridDim;

namespace emu {

inline std::barrier<>* block_barrier = nullptr;
inline std::vector<float> block_values;

struct Cfg {
  unsigned grid;
  int block;
  int shmem;
  cudaStream_t stream;
};

}  // namespace emu

inline void __syncthreads() {
  emu::block_barrier->arrive_and_wait();
}

template <class K, class... Args>
void emu_launch(K kernel, emu::Cfg cfg, Args... args) {
  for (unsigned b = 0; b < cfg.grid; ++b) {
    std::barrier<> bar(cfg.block);
    emu::block_barrier = &bar;
    emu::block_values.assign(static_cast<size_t>(cfg.block), 0.0f);
    std::vector<std::thread> threads;
    for (int t = 0; t < cfg.block; ++t)
      threads.emplace_back([&, t] {
        threadIdx = {static_cast<unsigned>(t), 0, 0};
        blockIdx = {b, 0, 0};
        blockDim = dim3(static_cast<unsigned>(cfg.block));
        gridDim = dim3(cfg.grid);
        kernel(args...);
      });
    for (auto& th : threads) th.join();
  }
}

namespace ampx::cuda::kern {

using std::isnan;

inline float to_f32(float x) {
  return x;
}
template <class T>
T from_f32(float x);
template <>
inline float from_f32<float>(float x) {
  return x;
}

template <class Fn>
cudaError_t dispatch_float(ampx_dtype dt, Fn&& fn) {
  return dt == AMPX_DTYPE_F32 ? fn(float{}) : cudaErrorInvalidValue;
}

constexpr int kThreads = 256;

inline unsigned grid_for(int64_t n, int threads = kThreads) {
  const int64_t want = (n + threads - 1) / threads;
  const int64_t cap = int64_t{1} << 16;
  return static_cast<unsigned>(want < 1 ? 1 : (want > cap ? cap : want));
}

// The block's sum or maximum, every thread gets it (thread order: the
// emulation's sums are not the GPU's tree, which tolerances absorb).
template <bool kMax>
float block_reduce(float v, float*) {
  __syncthreads();
  emu::block_values[threadIdx.x] = v;
  __syncthreads();
  float r = kMax ? -INFINITY : 0.0f;
  for (unsigned i = 0; i < blockDim.x; ++i)
    r = kMax ? std::fmax(r, emu::block_values[i]) : r + emu::block_values[i];
  return r;
}

}  // namespace ampx::cuda::kern
