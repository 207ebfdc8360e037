// The later ONNX ops of issue 40 that the cuda plugin has kernels for
// (src/ops_onnx.cpp, src/kernels_onnx.hpp): the op tests demand a match
// with cpu_ref for every catalogue case of them, the answer tests `native`.
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "op_cases.hpp"

namespace ampx::test {

// f32, f16 and bf16 (sm_80+), computed in f32 (CumProd: f64).
inline bool cuda_runs_onnx_float_op(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
      // the importer's float-only unaries, on the same kernel
      "LeakyRelu", "HardSigmoid", "HardSwish", "Erf", "Sqrt", "Reciprocal", "Exp", "Log", "Floor",
      "Ceil", "Round", "Softplus", "Mish",
      // the rest of issue 40's ops
      "CumProd", "RMSNorm", "RotaryEmbedding", "Col2Im", "MaxPoolIndices"};
  return kOps.count(op) > 0;
}

// Every integer dtype (i8 ... u64); BitCast moves the bytes of any dtype,
// CumProd also runs the integers.
inline bool cuda_runs_onnx_integer_op(const std::string& op) {
  static const std::set<std::string> kOps = {"BitShift",   "BitwiseAnd", "BitwiseOr", "BitwiseXor",
                                             "BitwiseNot", "BitCast",    "CumProd"};
  return kOps.count(op) > 0;
}

inline bool cuda_runs_onnx_op(const std::string& op) {
  return cuda_runs_onnx_float_op(op) || cuda_runs_onnx_integer_op(op);
}

// The paths of these kernels the catalogue misses: integer CumProd
// (wrapping, three widths), BitShift edges on narrow and unsigned types,
// BitwiseNot of u64, BitCast of integers into floats, RotaryEmbedding 4-D
// halves with i32 positions and 3-D interleaved with neither, RMSNorm rows
// past 1024 threads, Col2Im on a 3-D image, MaxPoolIndices with NaN and
// ties. Run against cpu_ref by CudaOnnxOps.MorePathsMatchCpuRef (GPU);
// CudaAnswers.LaterOnnxOps checks here that cpu_ref runs them and that the
// answers are native.
struct OnnxExtraCase {
  std::string name;
  bool float_case;  // built per float dtype, else once
  std::function<void(Rng&, ampx_dtype, op_cases::Case&)> make;
};

inline std::vector<OnnxExtraCase> onnx_extra_cases() {
  constexpr ampx_dtype I8 = AMPX_DTYPE_I8, U8 = AMPX_DTYPE_U8, I16 = AMPX_DTYPE_I16,
                       U64 = AMPX_DTYPE_U64, I32 = AMPX_DTYPE_I32;
  using op_cases::Case, op_cases::in, op_cases::rnd, op_cases::F32, op_cases::I64;
  return {
      {"CumProd_i32_wraps", false,
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("CumProd", "n");
         in(c, Tensor::of(I32, {2, 4}, {100000, 100000, 3, -2, 7, -1, 0, 5}));
         c.nb.output(I32, {2, 4}).attr_int("axis", 1);
       }},
      {"CumProd_u8_exclusive_reverse", false,
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("CumProd", "n");
         in(c, Tensor::of(U8, {3, 2}, {200, 3, 7, 255, 2, 1}));
         c.nb.output(U8, {3, 2})
             .attr_int("axis", 0)
             .attr_int("exclusive", 1)
             .attr_int("reverse", 1);
       }},
      {"CumProd_i64_axis0", false,
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("CumProd", "n");
         in(c, Tensor::of(I64, {3, 2}, {-3, 1 << 30, 5, 1 << 30, -7, 4}));
         c.nb.output(I64, {3, 2}).attr_int("axis", -2);
       }},
      {"BitShift_right_i8_edges", false,
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(I8, {6}, {-128, -128, 127, -1, 64, -5}));
         in(c, Tensor::of(I8, {6}, {7, 8, -3, 100, 6, 1}));
         c.nb.output(I8, {6}).attr_str("direction", "RIGHT");
       }},
      {"BitShift_left_u8_broadcast", false,
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(U8, {2, 1}, {255, 3}));
         in(c, Tensor::of(U8, {4}, {1, 7, 8, 200}));
         c.nb.output(U8, {2, 4}).attr_str("direction", "LEFT");
       }},
      {"BitShift_left_i16_overflow", false,
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitShift", "n");
         in(c, Tensor::of(I16, {4}, {1, -1, 16384, 3}));
         in(c, Tensor::of(I16, {4}, {15, 15, 1, 16}));
         c.nb.output(I16, {4}).attr_str("direction", "LEFT");
       }},
      {"BitwiseNot_u64", false,
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseNot", "n");
         in(c, Tensor::of(U64, {3}, {0, 1, 4e18}));
         c.nb.output(U64, {3});
       }},
      {"BitwiseAnd_i64_scalar_broadcast", false,
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitwiseAnd", "n");
         in(c, Tensor::of(I64, {}, {0x0F0F}));
         in(c, Tensor::of(I64, {2, 3}, {-1, 0, 255, 4096, -4096, 7}));
         c.nb.output(I64, {2, 3});
       }},
      {"BitCast_i32_to_f32", false,
       [](Rng&, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("BitCast", "n");
         in(c, Tensor::of(I32, {4}, {0, 1065353216, -1082130432, 1}));
         c.nb.output(F32, {4}).attr_int("to", F32);
       }},
      {"RotaryEmbedding_4d_halves_i32_positions", true,
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RotaryEmbedding", "n");
         in(c, rnd(r, dt, {2, 2, 3, 6}));
         in(c, rnd(r, dt, {5, 3}));
         in(c, rnd(r, dt, {5, 3}));
         in(c, Tensor::of(I32, {2, 3}, {0, 4, -5, 2, 2, 1}));
         c.nb.output(dt, {2, 2, 3, 6});
       }},
      {"RotaryEmbedding_3d_interleaved_partial", true,
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RotaryEmbedding", "n");
         in(c, rnd(r, dt, {2, 3, 16}));
         in(c, rnd(r, dt, {2, 3, 2}));
         in(c, rnd(r, dt, {2, 3, 2}));
         c.nb.output(dt, {2, 3, 16})
             .attr_int("num_heads", 2)
             .attr_int("interleaved", 1)
             .attr_int("rotary_embedding_dim", 4);
       }},
      {"RMSNorm_rows_past_1024", true,
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("RMSNorm", "n");
         in(c, rnd(r, dt, {3, 2, 1500}));
         in(c, rnd(r, dt, {2, 1500}));
         c.nb.output(dt, {3, 2, 1500}).attr_int("axis", -2);
       }},
      {"Col2Im_3d_image", true,
       [](Rng& r, ampx_dtype dt, Case& c) {
         // image 4x3x5, block 2x2x3, strides 2,1,1, pads 1,0,1 / 0,1,1:
         // blocks (4+1-2)/2+1 = 2, (3+1-2)+1 = 3, (5+2-3)+1 = 5 -> L 30.
         c.nb = NodeBuilder("Col2Im", "n");
         in(c, rnd(r, dt, {1, 24, 30}));
         c.nb.output(dt, {1, 2, 4, 3, 5})
             .attr_ints("image_shape", {4, 3, 5})
             .attr_ints("block_shape", {2, 2, 3})
             .attr_ints("strides", {2, 1, 1})
             .attr_ints("pads", {1, 0, 1, 0, 1, 1});
       }},
      {"MaxPoolIndices_nan_and_ties", true,
       [](Rng&, ampx_dtype dt, Case& c) {
         const double nan = std::numeric_limits<double>::quiet_NaN();
         c.nb = NodeBuilder("MaxPoolIndices", "n");
         in(c, Tensor::of(dt, {1, 1, 3, 4}, {1, 5, 5, 0, 2, nan, 3, 9, 5, 1, nan, 9}));
         c.nb.output(I64, {1, 1, 2, 3}).attr_ints("kernel_shape", {2, 2});
       }},
  };
}

}  // namespace ampx::test
