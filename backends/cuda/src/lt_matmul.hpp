// One prepared cuBLASLt matmul in ampx's row-major terms:
//   Y[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b] (+ bias[n] per column)
// for b < batch, with f32/f16/bf16 inputs and outputs, f32 accumulation
// (CUBLAS_COMPUTE_32F: never TF32, so f32 stays f32) and tensor cores for
// 16-bit. cuBLASLt is column-major, so the row-major product is computed as
// its transpose: Y^T = op(B)^T op(A)^T, i.e. Lt's A is our B and vice versa.
//
// Algorithms come from cuBLASLt's heuristic, which needs the operands'
// alignment; buffer views can sit at any offset, so the heuristic runs once
// per alignment combination seen at launch and is cached.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "device.hpp"
#include "handles.hpp"

namespace ampx::cuda {

class LtMatmul {
 public:
  struct Shape {
    int64_t M = 0, N = 0, K = 0;
    bool trans_a = false, trans_b = false;
    int64_t batch = 1;
    // Element strides between batches (0: the same matrix for every batch).
    int64_t stride_a = 0, stride_b = 0, stride_y = 0;
    bool bias = false;  // cuBLASLt bias epilogue: bias[N] added to every row
  };
  LtMatmul(DeviceContext& dev, ampx_dtype dt, const Shape& s);

  // C may be NULL (then beta must be 0); otherwise it has Y's shape, batch
  // stride and dtype and does not overlap Y. bias: N elements, 16-byte
  // aligned, when Shape::bias.
  void run(const void* a, const void* b, const void* c, void* y, const void* bias, float alpha,
           float beta);

 private:
  const cublasLtMatmulAlgo_t& algo_for(uint32_t al_a, uint32_t al_b, uint32_t al_c, uint32_t al_y);

  DeviceContext& dev_;
  Shape s_;
  UniqueLtMatmulDesc desc_;
  UniqueLtLayout lt_a_, lt_b_, lt_cd_;  // Lt's A (our B), Lt's B (our A), C and D
  size_t elem_ = 4;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, cublasLtMatmulAlgo_t> algos_;
};

}  // namespace ampx::cuda
