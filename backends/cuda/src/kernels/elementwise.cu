// Elementwise kernels: unary activations, binary arithmetic with NumPy
// broadcasting, Cast. f32 math on every dtype.
#include "common.cuh"

namespace ampx::cuda::kern {
namespace {

__device__ __forceinline__ float apply(const UnaryParams& p, float x) {
  switch (p.op) {
    case UnaryOp::kRelu:
      return x > 0.0f ? x : 0.0f;
    case UnaryOp::kSigmoid:
      return 1.0f / (1.0f + expf(-x));  // exp overflow gives 1/inf = 0
    case UnaryOp::kTanh:
      return tanhf(x);
    case UnaryOp::kGeluErf:
      return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case UnaryOp::kGeluTanh:
      return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case UnaryOp::kClip: {  // as cpu_ref: lo > hi gives hi, NaN stays NaN
      const float t = x < p.lo ? p.lo : x;
      return t > p.hi ? p.hi : t;
    }
  }
  return x;
}

__device__ __forceinline__ float apply(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
  }
  return a;
}

// `vec`: x and y are 4-element aligned; the first n/4*4 elements go through
// Pack4 loads, the tail element by element.
template <class T>
__global__ void unary_kernel(UnaryParams p, const T* x, T* y, int64_t n, bool vec) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if (vec) {
    const int64_t packs = n / 4;
    const auto* xp = reinterpret_cast<const Pack4<T>*>(x);
    auto* yp = reinterpret_cast<Pack4<T>*>(y);
    for (int64_t i = first; i < packs; i += stride) {
      Pack4<T> v = xp[i];
#pragma unroll
      for (int k = 0; k < 4; ++k) v.v[k] = from_f32<T>(apply(p, to_f32(v.v[k])));
      yp[i] = v;
    }
    done = packs * 4;
  }
  for (int64_t i = done + first; i < n; i += stride) y[i] = from_f32<T>(apply(p, to_f32(x[i])));
}

template <class T>
__global__ void binary_same_kernel(BinaryOp op, const T* a, const T* b, T* y, int64_t n, bool vec) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if (vec) {
    const int64_t packs = n / 4;
    const auto* ap = reinterpret_cast<const Pack4<T>*>(a);
    const auto* bp = reinterpret_cast<const Pack4<T>*>(b);
    auto* yp = reinterpret_cast<Pack4<T>*>(y);
    for (int64_t i = first; i < packs; i += stride) {
      const Pack4<T> va = ap[i], vb = bp[i];
      Pack4<T> r;
#pragma unroll
      for (int k = 0; k < 4; ++k) r.v[k] = from_f32<T>(apply(op, to_f32(va.v[k]), to_f32(vb.v[k])));
      yp[i] = r;
    }
    done = packs * 4;
  }
  for (int64_t i = done + first; i < n; i += stride)
    y[i] = from_f32<T>(apply(op, to_f32(a[i]), to_f32(b[i])));
}

template <class T>
__global__ void binary_bcast_kernel(BinaryOp op, const T* a, const T* b, T* y, int64_t n,
                                    Broadcast bc) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t ao, bo;
    broadcast_offsets(i, bc, ao, bo);
    y[i] = from_f32<T>(apply(op, to_f32(a[ao]), to_f32(b[bo])));
  }
}

bool aligned4(const void* p, size_t elem) {
  return reinterpret_cast<uintptr_t>(p) % (4 * elem) == 0;
}

// ------------------------------------------------------------------ Cast

// The casts the planner inserts (f32 <-> f16/bf16), vectorised.
template <class From, class To>
__global__ void cast_float_kernel(const From* x, To* y, int64_t n, bool vec) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if (vec) {
    const int64_t packs = n / 4;
    const auto* xp = reinterpret_cast<const Pack4<From>*>(x);
    auto* yp = reinterpret_cast<Pack4<To>*>(y);
    for (int64_t i = first; i < packs; i += stride) {
      const Pack4<From> v = xp[i];
      Pack4<To> r;
#pragma unroll
      for (int k = 0; k < 4; ++k) r.v[k] = from_f32<To>(to_f32(v.v[k]));
      yp[i] = r;
    }
    done = packs * 4;
  }
  for (int64_t i = done + first; i < n; i += stride) y[i] = from_f32<To>(to_f32(x[i]));
}

// Every other supported pair: read as double (floats: exact) or int64
// (integers: exact), written with one rounding.
__device__ double load_float(ampx_dtype dt, const void* p, int64_t i) {
  switch (dt) {
    case AMPX_DTYPE_F16:
      return __half2float(static_cast<const __half*>(p)[i]);
    case AMPX_DTYPE_BF16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

template <class I>
__device__ I float_to_int(double d) {  // trunc toward zero, NaN -> 0, saturating
  constexpr I lo = sizeof(I) == 8 ? static_cast<I>(INT64_MIN) : static_cast<I>(INT32_MIN);
  constexpr I hi = sizeof(I) == 8 ? static_cast<I>(INT64_MAX) : static_cast<I>(INT32_MAX);
  if (isnan(d)) return 0;
  if (d <= static_cast<double>(lo)) return lo;
  if (d >= static_cast<double>(hi)) return hi;
  return static_cast<I>(d);
}

__global__ void cast_generic_kernel(ampx_dtype from, ampx_dtype to, const void* x, void* y,
                                    int64_t n) {
  const bool from_int = from == AMPX_DTYPE_I32 || from == AMPX_DTYPE_I64;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (from_int) {
      const int64_t v = from == AMPX_DTYPE_I64 ? static_cast<const int64_t*>(x)[i]
                                               : static_cast<const int32_t*>(x)[i];
      switch (to) {
        case AMPX_DTYPE_F32:  // int64 -> float: one rounding, nearest even
          static_cast<float*>(y)[i] = static_cast<float>(v);
          break;
        case AMPX_DTYPE_I64:
          static_cast<int64_t*>(y)[i] = v;
          break;
        default:  // I32: two's complement wrap, as C++ and NumPy
          static_cast<int32_t*>(y)[i] = static_cast<int32_t>(static_cast<uint32_t>(v));
          break;
      }
    } else {
      const double v = load_float(from, x, i);
      switch (to) {
        case AMPX_DTYPE_F32:
          static_cast<float*>(y)[i] = static_cast<float>(v);
          break;
        case AMPX_DTYPE_F16:  // v is an exact f16/bf16/f32 value: one rounding
          static_cast<__half*>(y)[i] = __float2half_rn(static_cast<float>(v));
          break;
        case AMPX_DTYPE_BF16:
          static_cast<__nv_bfloat16*>(y)[i] = __float2bfloat16_rn(static_cast<float>(v));
          break;
        case AMPX_DTYPE_I64:
          static_cast<int64_t*>(y)[i] = float_to_int<int64_t>(v);
          break;
        default:
          static_cast<int32_t*>(y)[i] = float_to_int<int32_t>(v);
          break;
      }
    }
  }
}

bool is_float(ampx_dtype d) {
  return d == AMPX_DTYPE_F32 || d == AMPX_DTYPE_F16 || d == AMPX_DTYPE_BF16;
}
bool is_int(ampx_dtype d) {
  return d == AMPX_DTYPE_I32 || d == AMPX_DTYPE_I64;
}

}  // namespace

cudaError_t unary(ampx_dtype dt, const UnaryParams& p, const void* x, void* y, int64_t n,
                  cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = aligned4(x, sizeof(T)) && aligned4(y, sizeof(T));
    unary_kernel<T><<<grid_for(vec ? n / 4 + 1 : n), kThreads, 0, stream>>>(
        p, static_cast<const T*>(x), static_cast<T*>(y), n, vec);
    return cudaGetLastError();
  });
}

cudaError_t binary(ampx_dtype dt, BinaryOp op, const void* a, const void* b, void* y, int64_t n,
                   const Broadcast* bc, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    const auto* ta = static_cast<const T*>(a);
    const auto* tb = static_cast<const T*>(b);
    auto* ty = static_cast<T*>(y);
    if (bc) {
      binary_bcast_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(op, ta, tb, ty, n, *bc);
    } else {
      const bool vec = aligned4(a, sizeof(T)) && aligned4(b, sizeof(T)) && aligned4(y, sizeof(T));
      binary_same_kernel<T>
          <<<grid_for(vec ? n / 4 + 1 : n), kThreads, 0, stream>>>(op, ta, tb, ty, n, vec);
    }
    return cudaGetLastError();
  });
}

bool cast_supported(ampx_dtype from, ampx_dtype to) noexcept {
  if (is_float(from)) return is_float(to) || is_int(to);
  if (is_int(from)) return to == AMPX_DTYPE_F32 || is_int(to);
  return false;
}

cudaError_t cast(ampx_dtype from, ampx_dtype to, const void* x, void* y, int64_t n,
                 cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (!cast_supported(from, to)) return cudaErrorInvalidValue;
  auto fast = [&](auto from_tag, auto to_tag) {
    using F = decltype(from_tag);
    using T = decltype(to_tag);
    const bool vec = aligned4(x, sizeof(F)) && aligned4(y, sizeof(T));
    cast_float_kernel<F, T><<<grid_for(vec ? n / 4 + 1 : n), kThreads, 0, stream>>>(
        static_cast<const F*>(x), static_cast<T*>(y), n, vec);
    return cudaGetLastError();
  };
  if (from == AMPX_DTYPE_F32 && to == AMPX_DTYPE_F16) return fast(float{}, __half{});
  if (from == AMPX_DTYPE_F32 && to == AMPX_DTYPE_BF16) return fast(float{}, __nv_bfloat16{});
  if (from == AMPX_DTYPE_F16 && to == AMPX_DTYPE_F32) return fast(__half{}, float{});
  if (from == AMPX_DTYPE_BF16 && to == AMPX_DTYPE_F32) return fast(__nv_bfloat16{}, float{});
  cast_generic_kernel<<<grid_for(n), kThreads, 0, stream>>>(from, to, x, y, n);
  return cudaGetLastError();
}

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, cast_generic_kernel);
}

}  // namespace ampx::cuda::kern
