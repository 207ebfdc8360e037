// The training step's own ops: SoftmaxCrossEntropy and its gradient (the
// loss), SgdUpdate and AdamUpdate (the optimizer, f32 only). Formulas and
// summation precision are cpu_ref's (sdk/reference/src/ops_train.cpp).
#include "common.cuh"
#include "kernels_grad.hpp"

namespace ampx::cuda::kern {
namespace {

int row_threads(int64_t len) {
  int t = 32;
  while (t < 1024 && t < len) t *= 2;
  return t;
}

// One block per row: the max (NaN wins, as the reference's scan: fmaxf
// would drop it, but a NaN logit makes the sum NaN either way), the
// log-sum-exp, log_prob, and the row's loss term -log_prob[label].
template <class T>
__global__ void __launch_bounds__(1024)
    cross_entropy_rows(CrossEntropyParams p, const T* x, const int64_t* labels, T* log_prob,
                       float* row_loss, int* bad) {
  __shared__ float scratch[32];
  for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const T* xr = x + r * p.classes;
    float m = -INFINITY;
    for (int64_t k = threadIdx.x; k < p.classes; k += blockDim.x) m = fmaxf(m, to_f32(xr[k]));
    m = block_reduce<true>(m, scratch);
    float s = 0.0f;
    for (int64_t k = threadIdx.x; k < p.classes; k += blockDim.x) s += expf(to_f32(xr[k]) - m);
    const float lse = m + logf(block_reduce<false>(s, scratch));
    for (int64_t k = threadIdx.x; k < p.classes; k += blockDim.x)
      log_prob[r * p.classes + k] = from_f32<T>(to_f32(xr[k]) - lse);
    if (threadIdx.x == 0) {
      const int64_t label = labels[r];
      if (label < 0 || label >= p.classes) {
        *bad = 1;
        row_loss[r] = NAN;
      } else {
        // From the f32 value, not the rounded 16-bit log_prob (the reference
        // computes in f32 and rounds the outputs only).
        row_loss[r] = -(to_f32(xr[label]) - lse);
      }
    }
  }
}

// One block of kMeanThreads: the mean of the row losses, summed in double in
// a fixed tree. No rows: 0 / 0 = NaN, the reference's mean of nothing.
constexpr int kMeanThreads = 256;
template <class T>
__global__ void cross_entropy_mean(int64_t rows, const float* row_loss, T* loss) {
  __shared__ double scratch[kMeanThreads];
  double s = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) s += row_loss[r];
  scratch[threadIdx.x] = s;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) scratch[threadIdx.x] += scratch[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    loss[0] = from_f32<T>(static_cast<float>(scratch[0] / static_cast<double>(rows)));
}

template <class T>
__global__ void cross_entropy_grad_kernel(CrossEntropyParams p, const T* dloss, const T* log_prob,
                                          const int64_t* labels, T* dx, int* bad) {
  const float k = p.rows > 0 ? to_f32(dloss[0]) / static_cast<float>(p.rows) : 0.0f;
  const int64_t n = p.rows * p.classes;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t r = i / p.classes, j = i % p.classes;
    const int64_t label = labels[r];
    if (j == 0 && (label < 0 || label >= p.classes)) *bad = 1;
    const float prob = expf(to_f32(log_prob[i]));
    dx[i] = from_f32<T>((prob - (j == label ? 1.0f : 0.0f)) * k);
  }
}

// ------------------------------------------------------ optimizer updates

// hyper = lr, grad_scale, apply. Every element is read into registers
// before its outputs are written: in place (w_out == w, m_out == m) works.
__global__ void sgd_kernel(SgdParams p, const float* w, const float* g, const float* hyper,
                           const float* m, float* w_out, float* m_out) {
  const float lr = hyper[0], scale = hyper[1];
  const bool apply = hyper[2] != 0.0f;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n;
       i += stride) {
    const float wi = w[i];
    if (!apply) {  // a skipped step: outputs equal the inputs, bit for bit
      w_out[i] = wi;
      if (m) m_out[i] = m[i];
      continue;
    }
    const float gi = g[i] * scale + p.weight_decay * wi;
    float d = gi;
    if (m) {
      const float mi = p.momentum * m[i] + gi;
      m_out[i] = mi;
      d = p.nesterov ? gi + p.momentum * mi : mi;
    }
    w_out[i] = wi - lr * d;
  }
}

// hyper = lr, grad_scale, apply, bc1, bc2 (1 - beta^t). PyTorch's formula,
// as the reference: W -= lr / bc1 * M' / (sqrt(V') / sqrt(bc2) + eps).
__global__ void adam_kernel(AdamParams p, const float* w, const float* g, const float* m,
                            const float* v, const float* hyper, float* w_out, float* m_out,
                            float* v_out) {
  const float lr = hyper[0], scale = hyper[1];
  const bool apply = hyper[2] != 0.0f;
  const float step = lr / hyper[3], inv_sqrt_bc2 = 1.0f / sqrtf(hyper[4]);
  const float decay = p.decoupled ? 1.0f - lr * p.weight_decay : 1.0f;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n;
       i += stride) {
    const float wi = w[i], mi0 = m[i], vi0 = v[i];
    if (!apply) {
      w_out[i] = wi;
      m_out[i] = mi0;
      v_out[i] = vi0;
      continue;
    }
    float gi = g[i] * scale;
    if (!p.decoupled) gi += p.weight_decay * wi;
    const float mi = p.beta1 * mi0 + (1.0f - p.beta1) * gi;
    const float vi = p.beta2 * vi0 + (1.0f - p.beta2) * gi * gi;
    m_out[i] = mi;
    v_out[i] = vi;
    w_out[i] = wi * decay - step * mi / (sqrtf(vi) * inv_sqrt_bc2 + p.eps);
  }
}

}  // namespace

cudaError_t softmax_cross_entropy(ampx_dtype dt, const CrossEntropyParams& p, const void* logits,
                                  const int64_t* labels, void* loss, void* log_prob,
                                  float* row_loss, int* bad, cudaStream_t stream) {
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    if (p.rows > 0 && p.classes > 0) {
      cross_entropy_rows<T><<<grid_for(p.rows, 1), row_threads(p.classes), 0, stream>>>(
          p, static_cast<const T*>(logits), labels, static_cast<T*>(log_prob), row_loss, bad);
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    cross_entropy_mean<T><<<1, kMeanThreads, 0, stream>>>(p.rows, row_loss, static_cast<T*>(loss));
    return cudaGetLastError();
  });
}

cudaError_t softmax_cross_entropy_grad(ampx_dtype dt, const CrossEntropyParams& p,
                                       const void* dloss, const void* log_prob,
                                       const int64_t* labels, void* dlogits, int* bad,
                                       cudaStream_t stream) {
  const int64_t n = p.rows * p.classes;
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    cross_entropy_grad_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(
        p, static_cast<const T*>(dloss), static_cast<const T*>(log_prob), labels,
        static_cast<T*>(dlogits), bad);
    return cudaGetLastError();
  });
}

cudaError_t sgd_update(const SgdParams& p, const float* w, const float* g, const float* hyper,
                       const float* m, float* w_out, float* m_out, cudaStream_t stream) {
  if (p.n == 0) return cudaSuccess;
  sgd_kernel<<<grid_for(p.n), kThreads, 0, stream>>>(p, w, g, hyper, m, w_out, m_out);
  return cudaGetLastError();
}

cudaError_t adam_update(const AdamParams& p, const float* w, const float* g, const float* m,
                        const float* v, const float* hyper, float* w_out, float* m_out,
                        float* v_out, cudaStream_t stream) {
  if (p.n == 0) return cudaSuccess;
  adam_kernel<<<grid_for(p.n), kThreads, 0, stream>>>(p, w, g, m, v, hyper, w_out, m_out, v_out);
  return cudaGetLastError();
}

}  // namespace ampx::cuda::kern
