// The own kernels of the later ONNX ops (issue 40): the trigonometric and
// hyperbolic unaries, the bit ops, CumProd, RMSNorm, RotaryEmbedding,
// Col2Im and MaxPoolIndices. Same contract as kernels.hpp: plain C++ launch
// functions, each enqueues on `stream` and returns the launch result;
// shapes arrive validated; f16/bf16 are widened to f32, computed there and
// rounded once on store, as cpu_ref does.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ampx/backend_api.h"
#include "kernels.hpp"

namespace ampx::cuda::kern {

// ------------------------------------------------------ math unaries

// Sin ... Atanh and the importer's float-only unaries (LeakyRelu to Mish):
// the CUDA math library's accurate f32 functions (sinf, asinhf, erff, ...;
// never the __sinf intrinsics), dt in {f32, f16, bf16}. Formulas are
// cpu_ref's (sdk/reference/src/ops_elementwise.cpp).
enum class MathOp : int32_t {
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kLeakyRelu,    // x < 0 ? alpha x : x
  kHardSigmoid,  // clamp(alpha x + beta, 0, 1)
  kHardSwish,    // x clamp(x / 6 + 1/2, 0, 1)
  kErf,
  kSqrt,
  kReciprocal,
  kExp,
  kLog,
  kFloor,
  kCeil,
  kRound,  // halves to even
  kSoftplus,
  kMish
};
struct MathParams {
  MathOp op = MathOp::kSin;
  float alpha = 0, beta = 0;  // LeakyRelu, HardSigmoid
};
cudaError_t math_unary(ampx_dtype dt, const MathParams& p, const void* x, void* y, int64_t n,
                       cudaStream_t stream);

// ---------------------------------------------------------- bit ops

// Every integer dtype (i8 ... i64, u8 ... u64). BitShift follows ONNX opset
// 28 for every amount (docs/OPS.md): negative or >= the width gives -1 for
// a right shift of a negative x, else 0; a signed x shifts right
// arithmetically.
enum class BitOp : int32_t { kAnd, kOr, kXor, kShiftLeft, kShiftRight };
// y = a op b over n output elements; `bc` NULL: same shapes, else NumPy
// broadcasting through its strides (as binary()).
cudaError_t bitwise(ampx_dtype dt, BitOp op, const void* a, const void* b, void* y, int64_t n,
                    const Broadcast* bc, cudaStream_t stream);
// y = ~x.
cudaError_t bitwise_not(ampx_dtype dt, const void* x, void* y, int64_t n, cudaStream_t stream);

// ---------------------------------------------------------- CumProd

// x is [outer, len, inner]; the running product along len (1 before the
// first element when exclusive; from the end when reverse). Floats (f32,
// f16, bf16) multiply in double and store float(product) rounded to the
// dtype, as cpu_ref; integers (every width) wrap.
struct CumParams {
  int64_t outer = 0, len = 0, inner = 0;
  bool exclusive = false, reverse = false;
};
cudaError_t cum_prod(ampx_dtype dt, const CumParams& p, const void* x, void* y,
                     cudaStream_t stream);

// ---------------------------------------------------------- RMSNorm

// y = x / sqrt(mean(x^2) + eps) * scale over rows of `cols`; one block per
// row, f32 sums (as LayerNorm).
struct RmsNormParams {
  int64_t rows = 0, cols = 0;
  float eps = 1e-5f;
};
cudaError_t rmsnorm(ampx_dtype dt, const RmsNormParams& p, const void* x, const void* scale,
                    void* y, cudaStream_t stream);

// --------------------------------------------------- RotaryEmbedding

// X [B, H, S, D] (rank4) or [B, S, H*D]; caches [B*S or positions, R/2];
// position_ids [B, S] (i64 or i32, negative counts from the end) when
// `has_pos`. One thread per element of Y. A position outside
// [-positions, positions) writes 0 there and sets *bad (device int) to 1.
struct RotaryParams {
  int64_t B = 0, S = 0, H = 0, D = 0, R = 0;
  bool rank4 = true, interleaved = false, has_pos = false, pos64 = true;
  int64_t positions = 0;
};
cudaError_t rotary_embedding(ampx_dtype dt, const RotaryParams& p, const void* x,
                             const void* cos_cache, const void* sin_cache, const void* position_ids,
                             void* y, int* bad, cudaStream_t stream);

// ------------------------------------------------------------ Col2Im

// k spatial axes (k <= kMaxRank - 2). Y [planes, image...] gathers, for each
// of its cells, the column elements (c * block_cells + kc, l) that land on
// it, kc ascending (cpu_ref's order of adds), f32 sum.
struct Col2ImParams {
  int32_t k = 0;
  int64_t planes = 0;  // N * C
  int64_t image[kMaxRank] = {}, block[kMaxRank] = {}, strides[kMaxRank] = {},
          dilations[kMaxRank] = {}, pads_begin[kMaxRank] = {}, blocks[kMaxRank] = {};
  int64_t image_cells = 0, block_cells = 0, positions = 0;
};
cudaError_t col2im(ampx_dtype dt, const Col2ImParams& p, const void* x, void* y,
                   cudaStream_t stream);

// --------------------------------------------------- MaxPoolIndices

// MaxPool's window (with dilations) over X [planes, H, W]; I (i64) is the
// flat index of the window's first maximum (its first NaN if any):
// plane * H * W + h * W + w, or + w * H + h when column_major.
struct PoolIndicesParams {
  PoolParams pool;  // `max`, `include_pad` unused
  int64_t dh = 1, dw = 1;
  bool column_major = false;
};
cudaError_t maxpool_indices(ampx_dtype dt, const PoolIndicesParams& p, const void* x, int64_t* y,
                            cudaStream_t stream);

}  // namespace ampx::cuda::kern
