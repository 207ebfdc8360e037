// The bit ops on every integer dtype: BitwiseAnd/Or/Xor, BitShift (NumPy
// broadcasting as binary()) and BitwiseNot. Exact: no rounding anywhere.
#include <type_traits>

#include "common.cuh"
#include "int_dispatch.cuh"
#include "kernels_onnx.hpp"

namespace ampx::cuda::kern {
namespace {

// cpu_ref's ShiftF: C++ leaves amounts < 0 or >= the width undefined, so
// they are tested first and give what the sign extension alone gives.
template <class T>
__device__ __forceinline__ T shift(T x, T amount, bool left) {
  constexpr int kBits = static_cast<int>(sizeof(T) * 8);
  bool outside;
  if constexpr (std::is_signed_v<T>) {
    outside = amount < 0 || static_cast<int64_t>(amount) >= kBits;
  } else {
    outside = static_cast<uint64_t>(amount) >= static_cast<uint64_t>(kBits);
  }
  if (outside) {
    if constexpr (std::is_signed_v<T>) {
      if (!left && x < 0) return static_cast<T>(-1);
    }
    return T(0);
  }
  using U = std::make_unsigned_t<T>;
  // Left: on the unsigned type (no signed overflow), bits past the width lost.
  if (left) return static_cast<T>(static_cast<U>(static_cast<U>(x) << static_cast<int>(amount)));
  return static_cast<T>(x >> static_cast<int>(amount));  // arithmetic for a signed x
}

template <class T>
__device__ __forceinline__ T apply(BitOp op, T a, T b) {
  switch (op) {
    case BitOp::kAnd:
      return static_cast<T>(a & b);
    case BitOp::kOr:
      return static_cast<T>(a | b);
    case BitOp::kXor:
      return static_cast<T>(a ^ b);
    case BitOp::kShiftLeft:
      return shift(a, b, true);
    case BitOp::kShiftRight:
      return shift(a, b, false);
  }
  return a;
}

template <class T>
__global__ void bitwise_same_kernel(BitOp op, const T* a, const T* b, T* y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = apply(op, a[i], b[i]);
}

// The output index unravelled over bc.dims (broadcast_offsets).
template <class T>
__global__ void bitwise_bcast_kernel(BitOp op, const T* a, const T* b, T* y, int64_t n,
                                     Broadcast bc) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t ao, bo;
    broadcast_offsets(i, bc, ao, bo);
    y[i] = apply(op, a[ao], b[bo]);
  }
}

template <class T>
__global__ void bitwise_not_kernel(const T* x, T* y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = static_cast<T>(~x[i]);
}

}  // namespace

cudaError_t bitwise(ampx_dtype dt, BitOp op, const void* a, const void* b, void* y, int64_t n,
                    const Broadcast* bc, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dispatch_int(dt, [&](auto tag) {
    using T = decltype(tag);
    const auto* ta = static_cast<const T*>(a);
    const auto* tb = static_cast<const T*>(b);
    auto* ty = static_cast<T*>(y);
    if (bc) {
      bitwise_bcast_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(op, ta, tb, ty, n, *bc);
    } else {
      bitwise_same_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(op, ta, tb, ty, n);
    }
    return cudaGetLastError();
  });
}

cudaError_t bitwise_not(ampx_dtype dt, const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dispatch_int(dt, [&](auto tag) {
    using T = decltype(tag);
    bitwise_not_kernel<T>
        <<<grid_for(n), kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
