// Normalisation in training: LayerNormGrad, BatchNormTraining (batch
// statistics, ONNX running statistics) and BatchNormGrad. The formulas and
// the precision of the sums are cpu_ref's (sdk/reference/src/ops_grad.cpp):
// per-row LayerNorm statistics in f32, per-channel BatchNorm sums in double
// (a channel can hold millions of values). cuDNN's batch-norm calls are not
// used: their running variance is the unbiased one and their factor is
// 1 - momentum, and ampx's are the population variance and ONNX's momentum.
#include "common.cuh"
#include "kernels_grad.hpp"

namespace ampx::cuda::kern {
namespace {

// Block sum in double (blockDim.x a multiple of 32, at most 1024);
// `scratch`: 32 doubles of shared memory. Every thread gets the result.
// The tree is fixed by blockDim alone: deterministic.
__device__ __forceinline__ double block_sum_double(double v, double* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();  // scratch may still be read from a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    double w = lane < warps ? scratch[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) w += __shfl_xor_sync(0xffffffffu, w, o);
    if (lane == 0) scratch[0] = w;
  }
  __syncthreads();
  return scratch[0];
}

// ---------------------------------------------------------- LayerNormGrad

// Row pass, one block per row: mean and 1/std (two passes as the forward
// kernel), then g = dY * scale, dX = inv * (g - mean(g) - xhat * mean(g * xhat)).
template <class T>
__global__ void __launch_bounds__(1024)
    layernorm_grad_rows(LayerNormParams p, const T* dy, const T* x, const T* scale, T* dx,
                        float* stats) {
  __shared__ float scratch[32];
  const float inv_cols = 1.0f / static_cast<float>(p.cols);
  for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const T* xr = x + r * p.cols;
    const T* dyr = dy + r * p.cols;
    float mean, inv;
    row_mean_invstd(xr, p.cols, p.eps, scratch, mean, inv);
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t j = threadIdx.x; j < p.cols; j += blockDim.x) {
      const float g = to_f32(dyr[j]) * to_f32(scale[j]);
      sg += g;
      sgx += g * (to_f32(xr[j]) - mean) * inv;
    }
    const float mg = block_reduce<false>(sg, scratch) * inv_cols;
    const float mgx = block_reduce<false>(sgx, scratch) * inv_cols;
    for (int64_t j = threadIdx.x; j < p.cols; j += blockDim.x) {
      const float xhat = (to_f32(xr[j]) - mean) * inv;
      dx[r * p.cols + j] = from_f32<T>(inv * (to_f32(dyr[j]) * to_f32(scale[j]) - mg - xhat * mgx));
    }
    if (threadIdx.x == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = inv;
    }
  }
}

// Column pass, one thread per column summing over the rows in row order
// (the reference's order; adjacent threads read adjacent columns).
template <class T>
__global__ void layernorm_grad_cols(LayerNormParams p, const T* dy, const T* x, const float* stats,
                                    T* dscale, T* dbias) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < p.cols;
       j += stride) {
    float ds = 0.0f, db = 0.0f;
    for (int64_t r = 0; r < p.rows; ++r) {
      const float g = to_f32(dy[r * p.cols + j]);
      ds += g * (to_f32(x[r * p.cols + j]) - stats[2 * r]) * stats[2 * r + 1];
      db += g;
    }
    dscale[j] = from_f32<T>(ds);
    dbias[j] = from_f32<T>(db);
  }
}

// ------------------------------------------------------------- BatchNorm

// Element k of channel ch (k over batch * inner) in [batch, channels, inner].
__device__ __forceinline__ int64_t channel_offset(const BatchNormTrainParams& p, int64_t ch,
                                                  int64_t k) {
  return ((k / p.inner) * p.channels + ch) * p.inner + k % p.inner;
}

// One block per channel: mean and population variance in double (two
// passes), Y, the running statistics and the saved statistics.
template <class T>
__global__ void __launch_bounds__(1024)
    batchnorm_training_kernel(BatchNormTrainParams p, const T* x, const T* scale, const T* bias,
                              const T* rmean, const T* rvar, T* y, T* rmean_out, T* rvar_out,
                              T* saved_mean, T* saved_invstd) {
  __shared__ double scratch[32];
  const int64_t count = p.batch * p.inner;
  const double cnt = static_cast<double>(count);
  for (int64_t ch = blockIdx.x; ch < p.channels; ch += gridDim.x) {
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x)
      s += to_f32(x[channel_offset(p, ch, k)]);
    const double mean = count > 0 ? block_sum_double(s, scratch) / cnt : 0.0;
    double q = 0.0;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const double d = to_f32(x[channel_offset(p, ch, k)]) - mean;
      q += d * d;
    }
    const double var = count > 0 ? block_sum_double(q, scratch) / cnt : 0.0;
    const float invstd = static_cast<float>(1.0 / sqrt(var + static_cast<double>(p.eps)));
    const float m = static_cast<float>(mean);
    const float sc = to_f32(scale[ch]) * invstd, b0 = to_f32(bias[ch]);
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const int64_t i = channel_offset(p, ch, k);
      y[i] = from_f32<T>((to_f32(x[i]) - m) * sc + b0);
    }
    if (threadIdx.x == 0) {
      // The inputs are read before the outputs are written: in place is safe.
      const float mu = p.momentum;
      const float rm = to_f32(rmean[ch]), rv = to_f32(rvar[ch]);
      rmean_out[ch] = from_f32<T>(mu * rm + (1.0f - mu) * m);
      rvar_out[ch] = from_f32<T>(mu * rv + (1.0f - mu) * static_cast<float>(var));
      saved_mean[ch] = from_f32<T>(m);
      saved_invstd[ch] = from_f32<T>(invstd);
    }
  }
}

// One block per channel: dBias = sum dY, dScale = sum dY * xhat (double),
// dX = scale * invstd / n * (n * dY - dBias - xhat * dScale).
template <class T>
__global__ void __launch_bounds__(1024)
    batchnorm_grad_kernel(BatchNormTrainParams p, const T* dy, const T* x, const T* scale,
                          const T* mean, const T* invstd, T* dx, T* dscale, T* dbias) {
  __shared__ double scratch[32];
  const int64_t count = p.batch * p.inner;
  const float cnt = static_cast<float>(count);
  for (int64_t ch = blockIdx.x; ch < p.channels; ch += gridDim.x) {
    const float m = to_f32(mean[ch]), is = to_f32(invstd[ch]);
    double sb = 0.0, ss = 0.0;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const int64_t i = channel_offset(p, ch, k);
      const float g = to_f32(dy[i]);
      sb += g;
      ss += static_cast<double>(g) * ((to_f32(x[i]) - m) * is);
    }
    const float db = static_cast<float>(block_sum_double(sb, scratch));
    const float ds = static_cast<float>(block_sum_double(ss, scratch));
    const float k = count > 0 ? to_f32(scale[ch]) * is / cnt : 0.0f;
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const int64_t i = channel_offset(p, ch, e);
      const float xhat = (to_f32(x[i]) - m) * is;
      dx[i] = from_f32<T>(k * (cnt * to_f32(dy[i]) - db - xhat * ds));
    }
    if (threadIdx.x == 0) {
      dscale[ch] = from_f32<T>(ds);
      dbias[ch] = from_f32<T>(db);
    }
  }
}

int row_threads(int64_t len) {
  int t = 32;
  while (t < 1024 && t < len) t *= 2;
  return t;
}

}  // namespace

cudaError_t layernorm_grad(ampx_dtype dt, const LayerNormParams& p, const void* dy, const void* x,
                           const void* scale, void* dx, void* dscale, void* dbias, float* row_stats,
                           cudaStream_t stream) {
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    if (p.rows > 0 && p.cols > 0) {
      layernorm_grad_rows<T><<<grid_for(p.rows, 1), row_threads(p.cols), 0, stream>>>(
          p, static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const T*>(scale),
          static_cast<T*>(dx), row_stats);
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    // With no rows the column sums are zeros: still written.
    if (p.cols > 0) {
      layernorm_grad_cols<T><<<grid_for(p.cols), kThreads, 0, stream>>>(
          p, static_cast<const T*>(dy), static_cast<const T*>(x), row_stats,
          static_cast<T*>(dscale), static_cast<T*>(dbias));
    }
    return cudaGetLastError();
  });
}

cudaError_t batchnorm_training(ampx_dtype dt, const BatchNormTrainParams& p, const void* x,
                               const void* scale, const void* bias, const void* running_mean,
                               const void* running_var, void* y, void* running_mean_out,
                               void* running_var_out, void* saved_mean, void* saved_invstd,
                               cudaStream_t stream) {
  if (p.channels == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    batchnorm_training_kernel<T>
        <<<grid_for(p.channels, 1), row_threads(p.batch * p.inner), 0, stream>>>(
            p, static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias),
            static_cast<const T*>(running_mean), static_cast<const T*>(running_var),
            static_cast<T*>(y), static_cast<T*>(running_mean_out), static_cast<T*>(running_var_out),
            static_cast<T*>(saved_mean), static_cast<T*>(saved_invstd));
    return cudaGetLastError();
  });
}

cudaError_t batchnorm_grad(ampx_dtype dt, const BatchNormTrainParams& p, const void* dy,
                           const void* x, const void* scale, const void* saved_mean,
                           const void* saved_invstd, void* dx, void* dscale, void* dbias,
                           cudaStream_t stream) {
  if (p.channels == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    batchnorm_grad_kernel<T>
        <<<grid_for(p.channels, 1), row_threads(p.batch * p.inner), 0, stream>>>(
            p, static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const T*>(scale),
            static_cast<const T*>(saved_mean), static_cast<const T*>(saved_invstd),
            static_cast<T*>(dx), static_cast<T*>(dscale), static_cast<T*>(dbias));
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
