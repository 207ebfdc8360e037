// The one matrix multiply every contraction (Conv2d, MatMul, Gemm and their
// gradients) goes through: C += alpha * op(A) * op(B), with arbitrary element
// strides so transposes cost nothing extra. In f32, and in f64 for the
// float64 mode (the same blocked code instantiated for double).
#pragma once

#include <cstdint>

namespace ampx::reference::detail {

template <class T>
struct GemmArgs {
  int64_t M = 0, N = 0, K = 0;
  const T* A = nullptr;  // A(i, k) = A[i * rsA + k * csA]
  int64_t rsA = 0, csA = 0;
  const T* B = nullptr;  // B(k, j) = B[k * rsB + j * csB]
  int64_t rsB = 0, csB = 0;
  T* C = nullptr;  // C(i, j) = C[i * ldc + j], row-major
  int64_t ldc = 0;
  T alpha = 1;
};

// C += alpha * A * B. Cache-blocked (packing A and B), register-tiled; splits
// rows or columns over up to `threads` threads when the work is large. Each
// C element is accumulated by one thread over k in a fixed order, so the
// result is independent of `threads`.
// T is float or double (instantiated in gemm.cpp).
template <class T>
void gemm(const GemmArgs<T>& g, int threads);

}  // namespace ampx::reference::detail
