#include "lt_matmul.hpp"

#include <string>

#include "ampx/plugin_support.hpp"
#include "cuda_error.hpp"

namespace ampx::cuda {
namespace {

cudaDataType_t cuda_type(ampx_dtype dt) {
  switch (dt) {
    case AMPX_DTYPE_F16:
      return CUDA_R_16F;
    case AMPX_DTYPE_BF16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

template <class T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v,
              const char* what) {
  check_cublas(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof v), what);
}

UniqueLtLayout layout(cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                      int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check_cublas(cublasLtMatrixLayoutCreate(&l, t, static_cast<uint64_t>(rows),
                                          static_cast<uint64_t>(cols), ld),
               "cublasLtMatrixLayoutCreate");
  UniqueLtLayout owned(l);
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    check_cublas(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                  sizeof count),
                 "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
    check_cublas(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &stride, sizeof stride),
                 "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  }
  return owned;
}

// Largest power of two (<= 256) dividing the address and, for batches, the
// byte stride between them: what every batch's pointer is aligned to.
uint32_t alignment(const void* p, int64_t stride_bytes, int64_t batch) {
  uint64_t a = reinterpret_cast<uintptr_t>(p);
  if (batch > 1) a |= static_cast<uint64_t>(stride_bytes);
  uint32_t al = 256;
  while (al > 1 && a % al != 0) al /= 2;
  return al;
}

}  // namespace

LtMatmul::LtMatmul(DeviceContext& dev, ampx_dtype dt, const Shape& s) : dev_(dev), s_(s) {
  const cudaDataType_t t = cuda_type(dt);
  elem_ = plugin_support::dtype_size(dt);
  cublasLtMatmulDesc_t d = nullptr;
  check_cublas(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F),
               "cublasLtMatmulDescCreate");
  desc_.reset(d);
  // Lt computes D^T[N,M] = opA(our B) * opB(our A).
  const cublasOperation_t op_a = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_desc(d, CUBLASLT_MATMUL_DESC_TRANSA, op_a, "cublasLtMatmulDescSetAttribute(TRANSA)");
  set_desc(d, CUBLASLT_MATMUL_DESC_TRANSB, op_b, "cublasLtMatmulDescSetAttribute(TRANSB)");
  if (s.bias) {
    set_desc(d, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS,
             "cublasLtMatmulDescSetAttribute(EPILOGUE)");
    set_desc(d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, static_cast<int32_t>(t),
             "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)");
  }
  // Our B: [K,N] row-major is column-major N x K (ld N); transposed, [N,K]
  // row-major is column-major K x N (ld K). Likewise our A.
  lt_a_ = s.trans_b ? layout(t, s.K, s.N, s.K, s.batch, s.stride_b)
                    : layout(t, s.N, s.K, s.N, s.batch, s.stride_b);
  lt_b_ = s.trans_a ? layout(t, s.M, s.K, s.M, s.batch, s.stride_a)
                    : layout(t, s.K, s.M, s.K, s.batch, s.stride_a);
  lt_cd_ = layout(t, s.N, s.M, s.N, s.batch, s.stride_y);
}

const cublasLtMatmulAlgo_t& LtMatmul::algo_for(uint32_t al_a, uint32_t al_b, uint32_t al_c,
                                               uint32_t al_y) {
  const auto key = std::make_tuple(al_a, al_b, al_c, al_y);
  if (auto it = algos_.find(key); it != algos_.end()) return it->second;
  cublasLtMatmulPreference_t p = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&p), "cublasLtMatmulPreferenceCreate");
  UniqueLtPreference pref(p);
  const uint64_t ws = dev_.lt_workspace_bytes();
  auto set = [&](cublasLtMatmulPreferenceAttributes_t attr, const auto& v) {
    check_cublas(cublasLtMatmulPreferenceSetAttribute(p, attr, &v, sizeof v),
                 "cublasLtMatmulPreferenceSetAttribute");
  };
  set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, ws);
  // Lt's A is our B and Lt's B is our A.
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, al_b);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, al_a);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, al_c);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, al_y);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  check_cublas(
      cublasLtMatmulAlgoGetHeuristic(dev_.lt(), desc_.get(), lt_a_.get(), lt_b_.get(), lt_cd_.get(),
                                     lt_cd_.get(), pref.get(), 1, &result, &found),
      "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) {
    throw plugin_support::StatusError(
        AMPX_STATUS_UNSUPPORTED, "cuBLASLt has no algorithm for M=" + std::to_string(s_.M) +
                                     " N=" + std::to_string(s_.N) + " K=" + std::to_string(s_.K) +
                                     " at alignments " + std::to_string(al_a) + "/" +
                                     std::to_string(al_b) + "/" + std::to_string(al_y) + " bytes");
  }
  return algos_.emplace(key, result.algo).first->second;
}

void LtMatmul::run(const void* a, const void* b, const void* c, void* y, const void* bias,
                   float alpha, float beta) {
  if (s_.M == 0 || s_.N == 0 || s_.batch == 0) return;
  const auto e = static_cast<int64_t>(elem_);
  if (!c) c = y;  // beta is 0: C is not read, but Lt wants a pointer
  const cublasLtMatmulAlgo_t& algo =
      algo_for(alignment(a, s_.stride_a * e, s_.batch), alignment(b, s_.stride_b * e, s_.batch),
               alignment(c, s_.stride_y * e, s_.batch), alignment(y, s_.stride_y * e, s_.batch));
  if (s_.bias) {
    set_desc(desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias,
             "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }
  check_cublas(cublasLtMatmul(dev_.lt(), desc_.get(), &alpha, b, lt_a_.get(), a, lt_b_.get(), &beta,
                              c, lt_cd_.get(), y, lt_cd_.get(), &algo, dev_.lt_workspace(),
                              dev_.lt_workspace_bytes(), dev_.stream()),
               "cublasLtMatmul");
}

}  // namespace ampx::cuda
