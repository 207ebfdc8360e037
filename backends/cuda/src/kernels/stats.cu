// TensorStats (docs/OPS.md, "Training ops"): the overflow diagnostics'
// probe, each input read in the dtype it has. Counting is on the magnitude
// bits (for non-negative values the patterns order like the values), and
// every reduction is an integer one (sums, and the max of the bits), so the
// atomics combine blocks in any order to the same result: the row never
// depends on scheduling. A one-thread kernel per input turns the counts
// into its row of the f32 stats.
#include "common.cuh"
#include "kernels_grad.hpp"

namespace ampx::cuda::kern {
namespace {

constexpr int kStatsThreads = 256;

template <class U>
__global__ void __launch_bounds__(kStatsThreads)
    stats_count(const U* x, int64_t n, unsigned inf, unsigned tiny, unsigned long long* acc) {
  unsigned amax = 0;
  unsigned long long bad = 0, nonzero = 0, small = 0;
  const unsigned mask = sizeof(U) == 4 ? 0x7fffffffu : 0x7fffu;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kStatsThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kStatsThreads) {
    const unsigned a = static_cast<unsigned>(x[i]) & mask;
    const bool finite = a < inf;
    bad += finite ? 0 : 1;
    amax = finite && a > amax ? a : amax;
    nonzero += finite && a != 0 ? 1 : 0;
    small += a != 0 && a < tiny ? 1 : 0;
  }
  __shared__ unsigned s_max[kStatsThreads];
  __shared__ unsigned long long s_bad[kStatsThreads], s_nz[kStatsThreads], s_small[kStatsThreads];
  s_max[threadIdx.x] = amax;
  s_bad[threadIdx.x] = bad;
  s_nz[threadIdx.x] = nonzero;
  s_small[threadIdx.x] = small;
  __syncthreads();
  for (int w = kStatsThreads / 2; w > 0; w >>= 1) {
    if (static_cast<int>(threadIdx.x) < w) {
      s_max[threadIdx.x] = max(s_max[threadIdx.x], s_max[threadIdx.x + w]);
      s_bad[threadIdx.x] += s_bad[threadIdx.x + w];
      s_nz[threadIdx.x] += s_nz[threadIdx.x + w];
      s_small[threadIdx.x] += s_small[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  atomicMax(&acc[0], static_cast<unsigned long long>(s_max[0]));
  atomicAdd(&acc[1], s_bad[0]);
  atomicAdd(&acc[2], s_nz[0]);
  atomicAdd(&acc[3], s_small[0]);
}

__global__ void stats_finish(const unsigned long long* acc, int kind, int64_t n, float* row) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const auto bits = static_cast<unsigned>(acc[0]);
  float amax = 0.0f;
  if (kind == 0)
    amax = __uint_as_float(bits);
  else if (kind == 1)
    amax = __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
  else
    amax = __uint_as_float(bits << 16);
  row[0] = amax;
  row[1] = n > 0 ? static_cast<float>(static_cast<double>(acc[1]) / static_cast<double>(n)) : 0.0f;
  row[2] = acc[2] > 0
               ? static_cast<float>(static_cast<double>(acc[3]) / static_cast<double>(acc[2]))
               : 0.0f;
}

}  // namespace

cudaError_t tensor_stats_count(const void* x, int64_t n, int kind, unsigned inf, unsigned tiny,
                               unsigned long long* acc, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  int64_t blocks = (n + kStatsThreads * 16 - 1) / (kStatsThreads * 16);  // 16 elements a thread
  if (blocks > 4096) blocks = 4096;
  const auto grid = static_cast<unsigned>(blocks);
  if (kind == 0)
    stats_count<unsigned>
        <<<grid, kStatsThreads, 0, stream>>>(static_cast<const unsigned*>(x), n, inf, tiny, acc);
  else
    stats_count<unsigned short><<<grid, kStatsThreads, 0, stream>>>(
        static_cast<const unsigned short*>(x), n, inf, tiny, acc);
  return cudaGetLastError();
}

cudaError_t tensor_stats_finish(const unsigned long long* acc, int kind, int64_t n, float* row,
                                cudaStream_t stream) {
  stats_finish<<<1, 32, 0, stream>>>(acc, kind, n, row);
  return cudaGetLastError();
}

}  // namespace ampx::cuda::kern
