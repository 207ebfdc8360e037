// LinearAttention (docs/OPS.md), a port of cpu_ref's recurrence
// (sdk/reference/src/ops_linear_attention.cpp). Every step of the update
// touches state column m only through column m (S^T k, k ⊗ v and q^T S
// all split by value column), so one thread owns the column m of one
// (batch, KV head) state and walks the tokens in order; the sums over the
// key rows run in the reference's order. The state is f32 scratch laid out
// as [B, Hkv, dk, dv], so neighbouring threads touch neighbouring columns.
#include "common.cuh"

namespace ampx::cuda::kern {
namespace {

template <class T>
__global__ void linear_attention_columns(LinearAttentionParams p, const T* q, const T* k,
                                         const T* v, const T* past, const T* decay, const T* beta,
                                         T* y, T* present, float* state) {
  const int64_t threads = p.B * p.Hkv * p.dv;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t group = p.Hq / p.Hkv;
  for (int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; tid < threads;
       tid += stride) {
    const int64_t m = tid % p.dv, h = (tid / p.dv) % p.Hkv, n = tid / (p.dv * p.Hkv);
    const int64_t base = (n * p.Hkv + h) * p.dk * p.dv + m;  // S[0, m]; S[i, m] at base + i*dv
    float* s = state + base;
    for (int64_t i = 0; i < p.dk; ++i) s[i * p.dv] = to_f32(past[base + i * p.dv]);
    for (int64_t t = 0; t < p.T; ++t) {
      const int64_t row = n * p.T + t;  // the token's row of the packed inputs
      const T* kt = k + (row * p.Hkv + h) * p.dk;
      if (decay) {
        const int64_t width = p.decay_per_key ? p.Hkv * p.dk : p.Hkv;
        const T* gt = decay + row * width + (p.decay_per_key ? h * p.dk : h);
        for (int64_t i = 0; i < p.dk; ++i) s[i * p.dv] *= expf(to_f32(gt[p.decay_per_key ? i : 0]));
      }
      float vt = to_f32(v[(row * p.Hkv + h) * p.dv + m]);
      if (beta) {
        const float bt =
            to_f32(beta[row * (p.beta_per_head ? p.Hkv : 1) + (p.beta_per_head ? h : 0)]);
        float got = 0.0f;  // (S^T k)[m], with the decayed S
        for (int64_t i = 0; i < p.dk; ++i) got += s[i * p.dv] * to_f32(kt[i]);
        vt = bt * (vt - got);
      }
      for (int64_t i = 0; i < p.dk; ++i) s[i * p.dv] += to_f32(kt[i]) * vt;
      for (int64_t j = h * group; j < (h + 1) * group; ++j) {
        const T* qt = q + (row * p.Hq + j) * p.dk;
        float acc = 0.0f;
        for (int64_t i = 0; i < p.dk; ++i) acc += to_f32(qt[i]) * s[i * p.dv];
        y[(row * p.Hq + j) * p.dv + m] = from_f32<T>(p.scale * acc);
      }
    }
    for (int64_t i = 0; i < p.dk; ++i) present[base + i * p.dv] = from_f32<T>(s[i * p.dv]);
  }
}

}  // namespace

cudaError_t linear_attention(ampx_dtype dt, const LinearAttentionParams& p, const void* q,
                             const void* k, const void* v, const void* past, const void* decay,
                             const void* beta, void* y, void* present, float* state,
                             cudaStream_t stream) {
  const int64_t threads = p.B * p.Hkv * p.dv;
  if (threads == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    // Few threads, long serial walks: small blocks spread them over the SMs.
    constexpr int kBlock = 64;
    linear_attention_columns<T><<<grid_for(threads, kBlock), kBlock, 0, stream>>>(
        p, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
        static_cast<const T*>(past), static_cast<const T*>(decay), static_cast<const T*>(beta),
        static_cast<T*>(y), static_cast<T*>(present), state);
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
