// Attention (docs/OPS.md), a port of cpu_ref's row loop
// (sdk/reference/src/ops_attention.cpp): one block per query row, f32 for
// both products and the softmax (the sum in double with softmax_f64), each
// output rounded once. Per row:
//   1. each thread takes keys j: s = scale * q.k_j (E summed in order, as
//      the reference), softcapped; the bias (mask, causal and window
//      frontiers, nonpad_kv_seqlen); scratch[j] = s + bias;
//   2. block reductions: the largest bias, the largest logit, any NaN;
//   3. the softmax into scratch (all zeros when every key is masked, all NaN
//      when a logit is NaN), as the reference decides it;
//   4. each thread takes value columns e: y[e] = sum_j p_j v[j, e], j in
//      order.
#include "common.cuh"

namespace ampx::cuda::kern {
namespace {

constexpr int kAttnThreads = 128;

// Sum over the block in double (a fixed shared-memory tree: blockDim.x is
// kAttnThreads, a power of two). Every thread gets the result.
__device__ double block_sum_f64(double v, double* scratch) {
  __syncthreads();  // scratch may still be read from a previous call
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) scratch[threadIdx.x] += scratch[threadIdx.x + half];
    __syncthreads();
  }
  return scratch[0];
}

template <class T>
__device__ float mask_bias(const AttentionParams& p, const void* mask, int64_t at) {
  if (p.mask_bool) return static_cast<const uint8_t*>(mask)[at] ? 0.0f : -INFINITY;
  return to_f32(static_cast<const T*>(mask)[at]);
}

// Phase 1 for key j of row (b, h, i): writes the biased logit to sc[j] and
// the qk output of modes 0-2; returns the bias.
template <class T>
__device__ float logit(const AttentionParams& p, const T* qr, const T* kb, const void* mask,
                       int64_t b, int64_t h, int64_t i, int64_t j, int64_t len, int64_t offset,
                       float* sc, T* qk_row) {
  float dot = 0.0f;
  const T* kr = kb + j * p.E;
  for (int64_t e = 0; e < p.E; ++e) dot += to_f32(qr[e]) * to_f32(kr[e]);
  float x = dot * p.scale;
  if (p.softcap > 0) x = p.softcap * tanhf(x / p.softcap);
  float add = 0.0f;
  if (p.has_mask) {
    // ONNX pads a short mask with -inf / false.
    add = j >= p.Tm ? -INFINITY : mask_bias<T>(p, mask, b * p.mb + h * p.mh + i * p.mi + j);
  }
  const int64_t diff = i + offset - j;  // > 0: key j precedes the query
  if (p.causal && diff < 0) add = -INFINITY;
  if (p.left >= 0 && diff > p.left) add = -INFINITY;
  if (p.right >= 0 && -diff > p.right) add = -INFINITY;
  if (j >= len) add = -INFINITY;
  if (qk_row && p.mode <= 1) qk_row[j] = from_f32<T>(x);
  x += add;
  if (qk_row && p.mode == 2) qk_row[j] = from_f32<T>(x);
  sc[j] = x;
  return add;
}

template <class T>
__global__ void __launch_bounds__(kAttnThreads)
    attention_rows(AttentionParams p, const T* q, const T* k, const T* v, const void* mask,
                   const void* lens, T* y, T* qk, float* scratch) {
  __shared__ float red[32];
  __shared__ double red64[kAttnThreads];
  float* sc = scratch + static_cast<int64_t>(blockIdx.x) * p.T;
  const int64_t rows = p.B * p.Hq * p.S;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r % p.S, h = (r / p.S) % p.Hq, b = r / (p.S * p.Hq);
    const int64_t kh = h / (p.Hq / p.Hkv);  // GQA: each KV head serves Hq/Hkv query heads
    const T* qr = q + r * p.E;
    const T* kb = k + (b * p.Hkv + kh) * p.T * p.E;
    const T* vb = v + (b * p.Hkv + kh) * p.T * p.Ev;
    int64_t len = p.T;
    if (p.has_len)
      len = p.len64 ? static_cast<const int64_t*>(lens)[b]
                    : static_cast<int64_t>(static_cast<const int32_t*>(lens)[b]);
    // Keys before the query block: the cache's length, or per batch the
    // valid keys less the queries (ONNX's bottom-right alignment).
    const int64_t offset = p.has_len ? len - p.S : p.past;
    T* qk_row = qk ? qk + r * p.T : nullptr;

    float bias_max = -INFINITY, m = -INFINITY, nan = 0.0f;
    for (int64_t j = threadIdx.x; j < p.T; j += blockDim.x) {
      bias_max = fmaxf(bias_max, logit<T>(p, qr, kb, mask, b, h, i, j, len, offset, sc, qk_row));
      if (isnan(sc[j])) nan = 1.0f;
      m = fmaxf(m, sc[j]);  // skips NaN, as the reference's std::max
    }
    bias_max = block_reduce<true>(bias_max, red);
    m = block_reduce<true>(m, red);
    const bool has_nan = block_reduce<true>(nan, red) > 0.0f;

    // The softmax over the row, into sc (each thread rewrites its own keys).
    if (bias_max == -INFINITY || (m == -INFINITY && !has_nan)) {
      for (int64_t j = threadIdx.x; j < p.T; j += blockDim.x) sc[j] = 0.0f;  // no attendable key
    } else if (has_nan) {
      for (int64_t j = threadIdx.x; j < p.T; j += blockDim.x) sc[j] = NAN;
    } else if (p.softmax_f64) {
      double s = 0.0;
      for (int64_t j = threadIdx.x; j < p.T; j += blockDim.x)
        s += exp(static_cast<double>(sc[j]) - static_cast<double>(m));
      s = block_sum_f64(s, red64);
      for (int64_t j = threadIdx.x; j < p.T; j += blockDim.x)
        sc[j] = static_cast<float>(exp(static_cast<double>(sc[j]) - static_cast<double>(m)) / s);
    } else {
      float s = 0.0f;
      for (int64_t j = threadIdx.x; j < p.T; j += blockDim.x) s += expf(sc[j] - m);
      s = block_reduce<false>(s, red);
      for (int64_t j = threadIdx.x; j < p.T; j += blockDim.x) sc[j] = expf(sc[j] - m) / s;
    }
    if (qk_row && p.mode == 3)
      for (int64_t j = threadIdx.x; j < p.T; j += blockDim.x) qk_row[j] = from_f32<T>(sc[j]);
    __syncthreads();  // every probability written before any thread reads them all

    T* yr = y + r * p.Ev;
    for (int64_t e = threadIdx.x; e < p.Ev; e += blockDim.x) {
      float acc = 0.0f;
      for (int64_t j = 0; j < p.T; ++j) acc += sc[j] * to_f32(vb[j * p.Ev + e]);
      yr[e] = from_f32<T>(acc);
    }
    __syncthreads();  // the next row overwrites sc
  }
}

}  // namespace

cudaError_t attention(ampx_dtype dt, const AttentionParams& p, const void* q, const void* k,
                      const void* v, const void* mask, const void* lens, void* y, void* qk,
                      float* scratch, cudaStream_t stream) {
  const int64_t rows = p.B * p.Hq * p.S;
  if (rows == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    attention_rows<T><<<static_cast<unsigned>(p.blocks), kAttnThreads, 0, stream>>>(
        p, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), mask, lens,
        static_cast<T*>(y), static_cast<T*>(qk), scratch);
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
