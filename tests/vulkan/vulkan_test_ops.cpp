// Every op of docs/OPS.md x {f32, f16, bf16} on vulkan:0 against cpu_ref:
// f32 runs everywhere (`native`); f16 is `native` exactly when the device
// has shaderFloat16 and 16-bit storage, `emulated` with storage alone; bf16
// is `unsupported` (no BF16 extension is used). Whatever runs matches cpu_ref
// within tolerance(dtype); data movement is bit-exact. Shapes are odd and
// include several GEMM tiles and long softmax/LayerNorm rows. Integer and
// bool cases (typed_cases: i64/i32 copies, Gather, Expand, Pad, Equal and the
// orderings, Where, And/Or/Not; bool needs 8-bit storage) must match cpu_ref
// bit for bit. Importer ops without a Vulkan kernel must answer `unsupported`.
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <map>

#include "op_cases.hpp"
#include "scoped_env.hpp"
#include "vulkan_harness.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;

class VulkanOps : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    vulkan_ = new Plugin(plugin_path("vulkan"));
    ref_ = new Plugin(plugin_path("cpu_ref"));
  }
  static void TearDownTestSuite() {
    expect_no_validation_errors(*vulkan_);
    delete vulkan_;
    delete ref_;
    vulkan_ = ref_ = nullptr;
  }
  void SetUp() override { AMPX_SKIP_WITHOUT_VULKAN(*vulkan_); }
  static Plugin* vulkan_;
  static Plugin* ref_;
};
Plugin* VulkanOps::vulkan_ = nullptr;
Plugin* VulkanOps::ref_ = nullptr;

bool is_data_movement(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Dropout" || op == "Slice" || op == "Gather" ||
         op == "Transpose" || op == "Concat" || op == "Split" || op == "Where" || op == "Pad" ||
         op == "Expand" || op == "GatherElements" || op == "GatherND";
}

// The importer's ops (op_cases::is_importer_op, the reference-only ones
// included) that have Vulkan kernels: those the ONNX test models
// (mobilenet, encoder) and the real-model zoo's detectors and VADs need, and
// the elementwise ops, comparisons, reductions and data ops around them.
// Every other importer op must stay `unsupported`.
bool vulkan_runs_importer_op(const std::string& op) {
  for (const char* o :
       {"HardSigmoid", "HardSwish", "LogSoftmax", "ArgMax", "Split", "Where", "Equal",
        "ConvTranspose",
        // unary.comp
        "LeakyRelu", "Erf", "Sqrt", "Reciprocal", "Exp", "Log", "Neg", "Abs", "Floor", "Ceil",
        "Round", "Softplus", "Mish",
        // unary.comp's trig.glsl
        "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
        // bitwise.comp (i64/i32, i8/u8), copy.comp (BitCast)
        "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "BitCast",
        // binary.comp, variadic.comp
        "Pow", "PRelu", "Min", "Max", "Sum", "Mean",
        // equal.comp
        "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or",
        // data movement and Resize
        "Pad", "Expand", "Resize",
        // layernorm.comp
        "RMSNorm",
        // reduce.comp, argmax.comp
        "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp",
        "ArgMin",
        // gather_elements.comp, cumsum.comp
        "GatherElements", "CumSum", "CumProd",
        // gather_nd.comp, topk.comp
        "GatherND", "TopK",
        // scatter_nd.comp; Mod (binary.comp's exact fmod, iarith.comp)
        "ScatterND", "Mod",
        // rotary.comp, attention.comp, linear_attention.comp
        "RotaryEmbedding", "Attention", "LinearAttention",
        // ops_vision.cpp: pool_indices.comp, col2im.comp
        "MaxPoolIndices", "Col2Im",
        // grid_sample.comp; det.comp (shaderFloat64)
        "GridSample", "Det"})
    if (op == o) return true;
  return false;
}

// The optimizer updates and UpdateGuard: f32 only, in every case of the
// catalogue; and TensorStats, whose case mixes dtypes and computes in f32:
// native whatever the case's dtype.
bool is_update(const std::string& op) {
  return op == "SgdUpdate" || op == "AdamUpdate" || op == "UpdateGuard" || op == "TensorStats";
}

// Where's condition and Equal's result are bool: 8-bit storage.
bool has_bool_tensor(const ampx_node_desc& d) {
  for (size_t i = 0; i < d.num_inputs; ++i)
    if (d.inputs[i].dtype == AMPX_DTYPE_BOOL) return true;
  for (size_t i = 0; i < d.num_outputs; ++i)
    if (d.outputs[i].dtype == AMPX_DTYPE_BOOL) return true;
  return false;
}

// The integer types of ABI 1.5 (i16, u16, u32, u64): the Vulkan kernels
// store none of them (elem_storage), so such nodes are declined.
bool has_unstored_integer(const ampx_node_desc& d) {
  const auto unstored = [](ampx_dtype dt) {
    return dt == AMPX_DTYPE_I16 || dt == AMPX_DTYPE_U16 || dt == AMPX_DTYPE_U32 ||
           dt == AMPX_DTYPE_U64;
  };
  for (size_t i = 0; i < d.num_inputs; ++i)
    if (unstored(d.inputs[i].dtype)) return true;
  for (size_t i = 0; i < d.num_outputs; ++i)
    if (unstored(d.outputs[i].dtype)) return true;
  return false;
}

// A node without float tensors (Not, And, Or on bool; ScatterND_add_repeated
// on i32: their cases ignore the float dtype): native wherever its integer or
// bool tensors are.
bool no_float_tensor(const ampx_node_desc& d) {
  const auto is_float = [](ampx_dtype dt) {
    return dt == AMPX_DTYPE_F32 || dt == AMPX_DTYPE_F16 || dt == AMPX_DTYPE_BF16 ||
           dt == AMPX_DTYPE_F64;
  };
  for (size_t i = 0; i < d.num_inputs; ++i)
    if (is_float(d.inputs[i].dtype)) return false;
  for (size_t i = 0; i < d.num_outputs; ++i)
    if (is_float(d.outputs[i].dtype)) return false;
  return true;
}

bool has_storage8(const Plugin& vk) {
  return plugin_note(vk).find("storageBuffer8BitAccess yes") != std::string::npos;
}

// Det's LU runs in f64, as cpu_ref's: only with shaderFloat64.
bool has_float64(const Plugin& vk) {
  return plugin_note(vk).find("shaderFloat64 yes") != std::string::npos;
}

// A comparison of inputs of shapes `a` and `b` (some elements equal).
Maker compare_shapes(std::string op, std::vector<int64_t> a, std::vector<int64_t> b) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    Tensor ta = rnd(r, dt, a), tb = rnd(r, dt, b);
    for (size_t i = 0; i < static_cast<size_t>(tb.numel()); i += 3) ta.set(i, tb.get(i));
    in(c, std::move(ta));
    in(c, std::move(tb));
    std::vector<int64_t> y = a;  // b broadcasts into a here
    c.nb.output(AMPX_DTYPE_BOOL, y);
  };
}

// A Reduce op on `x` over `axes` (keepdims as `y` says).
Maker reduce_shape(std::string op, std::vector<int64_t> x, std::vector<int64_t> axes,
                   std::vector<int64_t> y) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    in(c, rnd(r, dt, x));
    c.nb.output(dt, y).attr_int("keepdims", y.size() == x.size() ? 1 : 0);
    if (!axes.empty()) c.nb.attr_ints("axes", axes);
  };
}

// Float cases only the Vulkan tests ask for: grids of more than 9
// workgroups, so that VulkanDispatch's cap of 3 per dimension splits them
// in both x and y.
const std::map<std::string, Maker>& vulkan_float_cases() {
  static const std::map<std::string, Maker> m = {
      {"HardSwish_many_groups", unary("HardSwish", {3, 333, 7})},
      {"HardSigmoid_many_groups", unary("HardSigmoid", {3, 333, 7})},
      {"LogSoftmax_many_rows", unary("LogSoftmax", {20, 37})},
      {"ArgMax_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ArgMax", "n");
         in(c, rnd(r, dt, {5, 9, 600}));
         c.nb.output(I64, {5, 1, 600}).attr_int("axis", 1);
       }},
      {"Where_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Where", "n");
         std::vector<double> cond(701);
         for (auto& b : cond) b = r.coin() ? 1 : 0;
         in(c, Tensor::of(AMPX_DTYPE_BOOL, {701}, cond));
         in(c, rnd(r, dt, {5, 701}));
         in(c, rnd(r, dt, {1}));
         c.nb.output(dt, {5, 701});
       }},
      // Training ops: grids split in x and y, reductions over more rows,
      // columns or channels than a 64-wide workgroup, the update paths the
      // catalogue lacks (no momentum; coupled weight decay), i32 indices,
      // overlapping pool windows, and a dropout seed with both words set
      // (carries through the 64-bit emulation).
      {"ReluGrad_many_groups", grad_unary("ReluGrad", {3, 333, 7})},
      {"GeluGrad_tanh_many_groups",
       grad_unary("GeluGrad", {3, 333, 7},
                  [](NodeBuilder& b) { b.attr_str("approximate", "tanh"); })},
      {"DropoutTraining_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("DropoutTraining", "d");
         in(c, rnd(r, dt, {5, 701}));
         Tensor seed = Tensor::zeros(I64, {1});
         const int64_t v = -0x1234567890ABCDEF;
         std::memcpy(seed.bytes.data(), &v, 8);
         in(c, std::move(seed));
         c.nb.output(dt, {5, 701}).output(dt, {5, 701}).attr_float("ratio", 0.4);
       }},
      {"SoftmaxCrossEntropy_many_rows",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("SoftmaxCrossEntropy", "loss");
         in(c, rnd(r, dt, {150, 37}, 4.0));
         std::vector<double> labels(150);
         for (auto& l : labels) l = static_cast<double>(r.integer(0, 36));
         in(c, Tensor::of(I64, {150}, labels));
         c.nb.output(dt, {}).output(dt, {150, 37});
       }},
      {"SoftmaxGrad_long_rows", grad_unary("SoftmaxGrad", {7, 300})},
      {"LayerNormGrad_wide_rows",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNormGrad", "ln");
         in(c, rnd(r, dt, {5, 150}));
         in(c, rnd(r, dt, {5, 150}));
         in(c, rnd(r, dt, {150}));
         c.nb.output(dt, {5, 150}).output(dt, {150}).output(dt, {150});
       }},
      {"BatchNormTraining_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BatchNormTraining", "bn");
         in(c, rnd(r, dt, {4, 11, 9, 7}));
         for (int i = 0; i < 3; ++i) in(c, rnd(r, dt, {11}));
         in(c, Tensor::of(dt, {11}, std::vector<double>(11, 1.25)));
         c.nb.output(dt, {4, 11, 9, 7});
         for (int i = 0; i < 4; ++i) c.nb.output(dt, {11});
       }},
      {"Conv2dGradWeight_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2dGradWeight", "dw");
         in(c, rnd(r, dt, {2, 16, 6, 6}));
         in(c, rnd(r, dt, {2, 8, 8, 8}));
         c.nb.output(dt, {16, 8, 3, 3}).attr_ints("kernel_shape", {3, 3});
       }},
      {"Conv2dGradWeight_5x5_taps",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2dGradWeight", "dw");
         in(c, rnd(r, dt, {2, 5, 4, 6}));
         in(c, rnd(r, dt, {2, 3, 8, 10}));
         c.nb.output(dt, {5, 3, 5, 5}).attr_ints("kernel_shape", {5, 5});
       }},
      {"MaxPoolGrad_overlapping",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("MaxPoolGrad", "pool");
         in(c, rnd(r, dt, {2, 3, 9, 11}));
         in(c, rnd(r, dt, {2, 3, 9, 11}));
         c.nb.output(dt, {2, 3, 9, 11})
             .attr_ints("kernel_shape", {3, 3})
             .attr_ints("pads", {1, 1, 1, 1});
       }},
      {"GatherGrad_i32_axis0",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GatherGrad", "g");
         in(c, rnd(r, dt, {4, 6}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {4}, {1, -2, 1, 0}));
         c.nb.output(dt, {5, 6}).attr_ints("data_shape", {5, 6});
       }},
      {"SgdUpdate_plain",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("SgdUpdate", "sgd");
         in(c, rnd(r, F32, {3, 1000}));
         in(c, rnd(r, F32, {3, 1000}));
         in(c, Tensor::of(F32, {3}, {0.05, 0.25, 1.0}));
         c.nb.output(F32, {3, 1000});
       }},
      {"AdamUpdate_coupled",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("AdamUpdate", "adam");
         for (int i = 0; i < 3; ++i) in(c, rnd(r, F32, {3, 1000}));
         in(c, Tensor::of(F32, {3, 1000}, std::vector<double>(3000, 0.5)));
         in(c, Tensor::of(F32, {5}, {0.001, 0.5, 1.0, 0.271, 0.00399}));
         c.nb.output(F32, {3, 1000}).output(F32, {3, 1000}).output(F32, {3, 1000});
         c.nb.attr_float("weight_decay", 0.01).attr_float("beta1", 0.8);
       }},
      // ConvTranspose as a stride-2 convolution's input gradient: more than
      // 9 workgroups, every tap parity.
      {"ConvTranspose_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ConvTranspose", "ct");
         in(c, rnd(r, dt, {2, 8, 9, 11}));
         in(c, rnd(r, dt, {8, 4, 3, 3}));
         // OH: 2*8 + 1 + 2 + 1 - 2 = 18; OW: 2*10 + 1 + 2 + 1 - 2 = 22
         c.nb.output(dt, {2, 4, 18, 22})
             .attr_ints("strides", {2, 2})
             .attr_ints("pads", {1, 1, 1, 1})
             .attr_ints("output_padding", {1, 1});
       }},
      // UpdateGuard: 20 gradients (3 pass-1 dispatches of up to 7 on Vulkan), one empty;
      // Adam's 5-element hyper, no clipping, skip_nonfinite = 0.
      {"UpdateGuard_many_inputs",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("UpdateGuard", "guard");
         in(c, Tensor::of(F32, {5}, {0.001, 0.5, 1.0, 0.271, 0.00399}));
         for (int i = 0; i < 20; ++i) in(c, rnd(r, F32, {i == 7 ? 0 : 3 + 17 * i, 4}));
         c.nb.output(F32, {5}).output(F32, {2}).attr_int("skip_nonfinite", 0);
       }},
      // Several of cpu_ref's 65,536-element blocks in one gradient, a clip
      // bound that does not bite.
      {"UpdateGuard_large",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("UpdateGuard", "guard");
         in(c, Tensor::of(F32, {3}, {0.05, 0.25, 1.0}));
         in(c, rnd(r, F32, {3, 100000}));
         in(c, rnd(r, F32, {1000}));
         c.nb.output(F32, {3}).output(F32, {2}).attr_float("clip_norm", 1000.0);
       }},
      // The importer's ops: grids split in x and y, and the paths the
      // catalogue's cases miss (halves for Round, negative bases for Pow,
      // 7 inputs of a variadic op, the other Resize modes, Pad cropping).
      {"Round_halves",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Round", "n");
         in(c, Tensor::of(dt, {10}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.25, -3.75, 4.5}));
         c.nb.output(dt, {10});
       }},
      {"Pow_negative_bases_integer_exponents",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Pow", "n");
         in(c, rnd(r, dt, {4, 5}, 2.0));
         in(c, Tensor::of(dt, {5}, {3, -1, 0, 4, -2}));
         c.nb.output(dt, {4, 5});
       }},
      {"Sqrt_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Sqrt", "n");
         std::vector<double> v = r.nonzero_vec(3 * 333 * 7);
         for (auto& x : v) x = std::fabs(x);
         in(c, Tensor::of(dt, {3, 333, 7}, v));
         c.nb.output(dt, {3, 333, 7});
       }},
      {"Mish_wide_range",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Mish", "n");
         in(c, rnd(r, dt, {3, 333, 7}, 30.0));
         c.nb.output(dt, {3, 333, 7});
       }},
      {"Max_seven_broadcast",
       variadic("Max", {{2, 3, 4}, {3, 1}, {4}, {1}, {2, 1, 4}, {1, 3, 4}, {2, 3, 4}}, {2, 3, 4})},
      {"Mean_three", variadic("Mean", {{5, 7}, {5, 7}, {7}}, {5, 7})},
      {"Sum_many_groups", variadic("Sum", {{3, 333, 7}, {7}}, {3, 333, 7})},
      {"Less_many_groups", compare_shapes("Less", {3, 333, 7}, {333, 1})},
      {"Pad_reflect_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, rnd(r, dt, {2, 3, 40, 50}));
         c.nb.output(dt, {2, 3, 46, 53})
             .attr_ints("pads", {0, 0, 3, 2, 0, 0, 3, 1})
             .attr_str("mode", "reflect");
       }},
      {"Pad_constant_crop_and_pad",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, rnd(r, dt, {3, 4, 5}));
         c.nb.output(dt, {5, 2, 6})
             .attr_ints("pads", {1, -1, 0, 1, -1, 1})
             .attr_float("value", -1.25);
       }},
      {"Expand_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Expand", "n");
         in(c, rnd(r, dt, {1, 333, 1}));
         c.nb.output(dt, {3, 333, 7}).attr_ints("shape", {3, 1, 7});
       }},
      // PaddleOCR's detector: 2x nearest upsampling, asymmetric/floor.
      {"Resize_nearest_upsample_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {1, 4, 20, 24}));
         c.nb.output(dt, {1, 4, 40, 48})
             .attr_ints("sizes", {1, 4, 40, 48})
             .attr_str("coordinate_transformation_mode", "asymmetric")
             .attr_str("nearest_mode", "floor");
       }},
      {"Resize_nearest_round_prefer_ceil_pytorch",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {2, 3, 5, 6}));
         c.nb.output(dt, {2, 3, 10, 9})
             .attr_ints("sizes", {2, 3, 10, 9})
             .attr_str("coordinate_transformation_mode", "pytorch_half_pixel")
             .attr_str("nearest_mode", "round_prefer_ceil");
       }},
      {"Resize_nearest_rank3",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {3, 4, 6}));
         c.nb.output(dt, {3, 7, 3}).attr_ints("sizes", {3, 7, 3});
       }},
      {"Resize_linear_asymmetric_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Resize", "n");
         in(c, rnd(r, dt, {1, 3, 17, 19}));
         c.nb.output(dt, {1, 3, 40, 37})
             .attr_ints("sizes", {1, 3, 40, 37})
             .attr_str("mode", "linear")
             .attr_str("coordinate_transformation_mode", "asymmetric");
       }},
      {"ReduceLogSumExp_many_groups", reduce_shape("ReduceLogSumExp", {5, 333, 9}, {2}, {5, 333})},
      {"ReduceMax_all_many_values", reduce_shape("ReduceMax", {3, 333, 7}, {}, {1, 1, 1})},
      {"CumSum_many_groups_long_rows",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("CumSum", "n");
         in(c, rnd(r, dt, {3, 200, 7}));
         c.nb.output(dt, {3, 200, 7}).attr_int("axis", 1);
       }},
      {"CumSum_last_axis_exclusive",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("CumSum", "n");
         in(c, rnd(r, dt, {4, 9}));
         c.nb.output(dt, {4, 9}).attr_int("axis", -1).attr_int("exclusive", 1);
       }},
      {"GatherElements_i32_axis0_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GatherElements", "n");
         in(c, rnd(r, dt, {7, 300}));
         Tensor idx = Tensor::zeros(AMPX_DTYPE_I32, {11, 300});
         for (size_t i = 0; i < 3300; ++i) idx.set(i, static_cast<double>(r.integer(-7, 6)));
         in(c, std::move(idx));
         c.nb.output(dt, {11, 300});
       }},
      // TopK: ties keep the lower index first; rows strided by `inner`.
      {"TopK_ties_inner",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("TopK", "n");
         in(c, Tensor::of(dt, {2, 6, 2}, {1, 5, 3, 5, 3, 2, 1, 5, 2, 0, 3, -1,
                                          0, 0, 0, 0, -1, 1, 2, 1, 2, 1, -1, 0}));
         c.nb.output(dt, {2, 4, 2}).output(I64, {2, 4, 2}).attr_int("k", 4).attr_int("axis", 1);
       }},
      {"TopK_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("TopK", "n");
         in(c, rnd(r, dt, {3, 300, 7}));
         c.nb.output(dt, {3, 5, 7}).output(I64, {3, 5, 7}).attr_int("k", 5).attr_int("axis", 1);
       }},
      {"GatherND_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GatherND", "n");
         in(c, rnd(r, dt, {5, 6, 40}));
         Tensor idx = Tensor::zeros(I64, {70, 2});
         for (size_t i = 0; i < 70; ++i) {
           idx.set(2 * i, static_cast<double>(r.integer(-5, 4)));
           idx.set(2 * i + 1, static_cast<double>(r.integer(-6, 5)));
         }
         in(c, std::move(idx));
         c.nb.output(dt, {70, 40});
       }},
      // ScatterND: repeated tuples (the last update wins), split grids.
      {"ScatterND_none_repeated_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ScatterND", "n");
         in(c, rnd(r, dt, {6, 400}));
         in(c, Tensor::of(I64, {5, 1}, {2, -1, 2, 0, 5}));
         in(c, rnd(r, dt, {5, 400}));
         c.nb.output(dt, {6, 400});
       }},
      // fmod exactly: quotients up to 2^30, divisors of every sign.
      {"Mod_fmod_wide_range",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Mod", "n");
         in(c, rnd(r, dt, {3, 50, 6}, dt == F16 ? 6e4 : 1e6));
         in(c, Tensor::of(dt, {6}, {0.1, -0.0078125, 3.0, -7.5, 1e-3, 250.0}));
         c.nb.output(dt, {3, 50, 6}).attr_int("fmod", 1);
       }},
      // Empty inputs with non-empty outputs: a reduction over an empty axis
      // (its identity) and a constant Pad of an empty tensor.
      {"ReduceProd_empty_axis",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceProd", "n");
         in(c, Tensor::zeros(dt, {2, 0, 3}));
         c.nb.output(dt, {2, 1, 3}).attr_ints("axes", {1});
       }},
      {"Pad_constant_empty_input",
       [](Rng&, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, Tensor::zeros(dt, {0, 3}));
         c.nb.output(dt, {2, 3}).attr_ints("pads", {1, 0, 1, 0}).attr_float("value", 2.0);
       }},
      {"ArgMin_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ArgMin", "n");
         in(c, rnd(r, dt, {5, 9, 600}));
         c.nb.output(I64, {5, 600}).attr_int("axis", 1).attr_int("keepdims", 0);
       }},
      {"Split_many_groups",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Split", "n");
         in(c, rnd(r, dt, {2, 3000}));
         c.nb.output(dt, {2, 1000})
             .output(dt, {2, 2000})
             .attr_int("axis", 1)
             .attr_ints("split", {1000, 2000});
       }},
  };
  return m;
}

const Maker& find_case(const std::string& name) {
  const auto& local = vulkan_float_cases();
  const auto it = local.find(name);
  return it != local.end() ? it->second : cases().at(name);
}

const char* support_str(ampx_support s) {
  return s == AMPX_SUPPORT_NATIVE     ? "native"
         : s == AMPX_SUPPORT_EMULATED ? "emulated"
                                      : "unsupported";
}

// Runs every case on `vk` and checks answers and results. `f16` is what the
// f16 answers must be on this (possibly masked) device.
void check_case(const Plugin& vk, const Plugin& ref, const std::string& name, ampx_support f16) {
  const Maker& make = find_case(name);
  const bool storage8 = has_storage8(vk), float64 = has_float64(vk);
  for (ampx_dtype dt : {F32, F16, BF16}) {
    SCOPED_TRACE(name + " " + dtype_str(dt));
    Rng rng(17);
    Case c;
    make(rng, dt, c);
    const ampx_capability cap = vk.capability(c.nb);
    const ampx_capability ref_cap = ref.capability(c.nb);
    std::cout << "[ answer   ] " << name << " " << dtype_str(dt) << ": " << support_str(cap.support)
              << " (" << cap.note << ")\n";
    ASSERT_NE(ref_cap.support, AMPX_SUPPORT_UNSUPPORTED) << "bad test case: " << ref_cap.note;
    // No epilogue shaders yet: fused nodes are declined in every dtype; so
    // are the importer's ops without shaders, and bool tensors without
    // 8-bit storage. The training ops run as the forward ops do; the
    // optimizer updates are f32 in every case (op_cases), so `native`.
    const std::string op = c.nb.op_type();
    const bool declined =
        is_epilogue_case(name) || (is_importer_op(op) && !vulkan_runs_importer_op(op)) ||
        is_dilated_pool_case(name) || name.rfind("Resize_general_", 0) == 0 ||  // two taps only
        (has_bool_tensor(c.nb.desc()) && !storage8) || has_unstored_integer(c.nb.desc()) ||
        (op == "Det" && !float64);
    const ampx_support want = declined ? AMPX_SUPPORT_UNSUPPORTED
                              : dt == F32 || is_update(op) || no_float_tensor(c.nb.desc())
                                  ? AMPX_SUPPORT_NATIVE
                              : dt == F16 ? f16
                                          : AMPX_SUPPORT_UNSUPPORTED;
    EXPECT_EQ(cap.support, want) << cap.note;
    if (cap.support == AMPX_SUPPORT_UNSUPPORTED) {
      EXPECT_STRNE(cap.note, "") << "unsupported needs a reason";
      ampx_kernel* k = nullptr;
      vk.fails(vk.api->kernel_prepare(vk.plugin, 0, &c.nb.desc(), &k), AMPX_STATUS_UNSUPPORTED,
               "node '");
      continue;
    }
    const auto got = run_on(vk, c.nb, c.inputs);
    const auto want_out = run_on(ref, c.nb, c.inputs);
    ASSERT_EQ(got.size(), want_out.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].dtype, want_out[i].dtype);
      // Data movement, and the dropout draw (the same on every backend),
      // are bit-exact.
      if (is_data_movement(c.nb.op_type()) || op == "DropoutTraining") {
        expect_bits_equal(got[i], want_out[i]);
      } else {
        expect_close(got[i], want_out[i].values(), name + " (" + cap.note + ")");
      }
    }
  }
}

// Integer and bool cases: the encoder's attention-mask path (Reshape of
// i64, Equal i64 -> bool, Where on a bool condition) and the copies every
// dtype shares. Values use both 32-bit words of an i64 (an Equal that only
// compared low words would be caught). Fixed dtypes; results are exact.
Tensor i64_tensor(Rng& r, std::vector<int64_t> dims) {
  Tensor t = Tensor::zeros(I64, std::move(dims));
  for (size_t i = 0; i < static_cast<size_t>(t.numel()); ++i) {
    const int64_t v = r.integer(-5, 5) * (int64_t{1} << 33) + r.integer(-1000, 1000);
    std::memcpy(t.bytes.data() + i * 8, &v, 8);
  }
  return t;
}
Tensor i32_tensor(Rng& r, std::vector<int64_t> dims) {
  Tensor t = Tensor::zeros(AMPX_DTYPE_I32, std::move(dims));
  for (size_t i = 0; i < static_cast<size_t>(t.numel()); ++i)
    t.set(i, static_cast<double>(r.integer(-2000000000, 2000000000)));
  return t;
}
Tensor bool_tensor(Rng& r, std::vector<int64_t> dims) {
  Tensor t = Tensor::zeros(AMPX_DTYPE_BOOL, std::move(dims));
  for (size_t i = 0; i < static_cast<size_t>(t.numel()); ++i) t.set(i, r.coin() ? 1 : 0);
  return t;
}
int64_t i64_at(const Tensor& t, size_t i) {
  int64_t v;
  std::memcpy(&v, t.bytes.data() + i * 8, 8);
  return v;
}
void set_i64(Tensor& t, size_t i, int64_t v) {
  std::memcpy(t.bytes.data() + i * 8, &v, 8);
}

const std::map<std::string, Maker>& typed_cases() {
  static const std::map<std::string, Maker> m = {
      {"Reshape_i64_unsqueeze",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Reshape", "n");
         in(c, i64_tensor(r, {1, 16}));
         c.nb.output(I64, {1, 1, 1, 16}).attr_ints("shape", {1, 1, 1, 16});
       }},
      {"Flatten_bool",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Flatten", "n");
         in(c, bool_tensor(r, {2, 3, 5}));
         c.nb.output(AMPX_DTYPE_BOOL, {2, 15});
       }},
      {"Transpose_i32",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Transpose", "n");
         in(c, i32_tensor(r, {2, 3, 4}));
         c.nb.output(AMPX_DTYPE_I32, {4, 2, 3}).attr_ints("perm", {2, 0, 1});
       }},
      {"Transpose_i64",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Transpose", "n");
         in(c, i64_tensor(r, {2, 3, 5}));
         c.nb.output(I64, {5, 3, 2});
       }},
      {"Slice_i64_negative_step",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Slice", "n");
         in(c, i64_tensor(r, {4, 6}));
         c.nb.output(I64, {2, 2})
             .attr_ints("starts", {1, -1})
             .attr_ints("ends", {3, 0})
             .attr_ints("axes", {0, 1})
             .attr_ints("steps", {1, -3});
       }},
      {"Concat_bool_axis1",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Concat", "n");
         in(c, bool_tensor(r, {2, 3, 3}));
         in(c, bool_tensor(r, {2, 1, 3}));
         c.nb.output(AMPX_DTYPE_BOOL, {2, 4, 3}).attr_int("axis", 1);
       }},
      {"Split_i64",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Split", "n");
         in(c, i64_tensor(r, {2, 7, 3}));
         c.nb.output(I64, {2, 2, 3})
             .output(I64, {2, 1, 3})
             .output(I64, {2, 4, 3})
             .attr_int("axis", 1)
             .attr_ints("split", {2, 1, 4});
       }},
      {"Split_bool_empty_part",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Split", "n");
         in(c, bool_tensor(r, {5, 3}));
         c.nb.output(AMPX_DTYPE_BOOL, {2, 3})
             .output(AMPX_DTYPE_BOOL, {0, 3})
             .output(AMPX_DTYPE_BOOL, {3, 3})
             .attr_ints("split", {2, 0, 3});
       }},
      {"Cast_i64_to_i64",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Cast", "n");
         in(c, i64_tensor(r, {3, 5}));
         c.nb.output(I64, {3, 5}).attr_int("to", I64);
       }},
      {"Equal_i64_broadcast",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Equal", "n");
         Tensor a = i64_tensor(r, {4, 5}), b = i64_tensor(r, {5});
         set_i64(b, 0, i64_at(a, 5));                               // equal
         set_i64(b, 2, i64_at(a, 7) + (int64_t{1} << 32));          // high words differ
         set_i64(b, 3, (i64_at(a, 8) & ~int64_t{0xffffffff}) | 7);  // low words may differ
         set_i64(b, 4, i64_at(a, 14));                              // equal
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(AMPX_DTYPE_BOOL, {4, 5});
       }},
      {"Equal_i64_mask_zero",  // the encoder's Equal(mask, 0)
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Equal", "n");
         Tensor mask = Tensor::zeros(I64, {1, 1, 1, 16});
         for (size_t i = 0; i < 16; ++i) mask.set(i, r.coin() ? 1 : 0);
         in(c, std::move(mask));
         in(c, Tensor::of(I64, {}, {0}), true);
         c.nb.output(AMPX_DTYPE_BOOL, {1, 1, 1, 16});
       }},
      {"Equal_i32",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Equal", "n");
         Tensor a = i32_tensor(r, {3, 7}), b = i32_tensor(r, {3, 7});
         for (size_t i = 0; i < 21; i += 3) b.set(i, a.get(i));
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(AMPX_DTYPE_BOOL, {3, 7});
       }},
      // Orderings of integers: signed, an i64's high word first.
      {"Less_i64_broadcast",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Less", "n");
         Tensor a = i64_tensor(r, {4, 5}), b = i64_tensor(r, {5});
         set_i64(b, 0, i64_at(a, 5));                       // equal
         set_i64(b, 2, i64_at(a, 7) + (int64_t{1} << 32));  // high words differ
         set_i64(b, 3, i64_at(a, 8) + 1);                   // low words differ
         set_i64(b, 4, -i64_at(a, 14));
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(AMPX_DTYPE_BOOL, {4, 5});
       }},
      {"GreaterOrEqual_i32",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("GreaterOrEqual", "n");
         Tensor a = i32_tensor(r, {3, 7}), b = i32_tensor(r, {3, 7});
         for (size_t i = 0; i < 21; i += 3) b.set(i, a.get(i));
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(AMPX_DTYPE_BOOL, {3, 7});
       }},
      {"Not_bool_many_groups",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Not", "n");
         in(c, bool_tensor(r, {5, 701}));
         c.nb.output(AMPX_DTYPE_BOOL, {5, 701});
       }},
      {"And_bool_many_groups",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("And", "n");
         in(c, bool_tensor(r, {5, 701}));
         in(c, bool_tensor(r, {5, 1}));
         c.nb.output(AMPX_DTYPE_BOOL, {5, 701});
       }},
      {"Pad_i64_edge",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, i64_tensor(r, {3, 4}));
         c.nb.output(I64, {6, 5}).attr_ints("pads", {1, 0, 2, 1}).attr_str("mode", "edge");
       }},
      {"Pad_i64_constant",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, i64_tensor(r, {2, 3}));
         c.nb.output(I64, {4, 4}).attr_ints("pads", {1, 0, 1, 1}).attr_float("value", -7.0);
       }},
      {"Pad_bool_constant",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, bool_tensor(r, {3, 5}));
         c.nb.output(AMPX_DTYPE_BOOL, {4, 8})
             .attr_ints("pads", {0, 2, 1, 1})
             .attr_float("value", 1.0);
       }},
      {"Pad_i32_crop_to_empty",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Pad", "n");
         in(c, i32_tensor(r, {2, 3}));
         c.nb.output(AMPX_DTYPE_I32, {0, 4}).attr_ints("pads", {-1, 0, -1, 1});
       }},
      // Integer arithmetic: wrapping, an i64's carries and products across
      // its words, cpu_ref's division rules.
      {"Add_i64_carries",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Add", "n");
         Tensor a = i64_tensor(r, {4, 5}), b = i64_tensor(r, {5});
         set_i64(a, 0, std::numeric_limits<int64_t>::max());
         set_i64(b, 0, 1);  // wraps to MIN
         set_i64(a, 1, 0xffffffff);
         set_i64(b, 1, 1);  // carries into the high word
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(I64, {4, 5});
       }},
      {"Sub_i64_borrows",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Sub", "n");
         Tensor a = i64_tensor(r, {3, 1}), b = i64_tensor(r, {4});
         set_i64(a, 0, int64_t{1} << 32);
         set_i64(b, 0, 1);  // borrows from the high word
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(I64, {3, 4});
       }},
      {"Mul_i64_wraps",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Mul", "n");
         Tensor a = i64_tensor(r, {3, 4}), b = i64_tensor(r, {3, 4});
         set_i64(a, 0, std::numeric_limits<int64_t>::min());
         set_i64(b, 0, -1);
         set_i64(a, 1, 0x123456789abcdefLL);
         set_i64(b, 1, -0x7edcba987654321LL);
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(I64, {3, 4});
       }},
      {"Div_i32_signs_zero_minus_one",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Div", "n");
         Tensor a = i32_tensor(r, {2, 6}), b = Tensor::zeros(AMPX_DTYPE_I32, {6});
         const double bs[] = {7, -7, 0, -1, 3, -2000000};
         for (size_t i = 0; i < 6; ++i) b.set(i, bs[i]);
         a.set(3, std::numeric_limits<int32_t>::min());  // MIN / -1 wraps to MIN
         a.set(7, -20);                                  // -20 / -7 = 2
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(AMPX_DTYPE_I32, {2, 6});
       }},
      {"Mul_i32_wraps",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Mul", "n");
         in(c, i32_tensor(r, {3, 5}));
         in(c, i32_tensor(r, {1, 5}));
         c.nb.output(AMPX_DTYPE_I32, {3, 5});
       }},
      {"Neg_i64_min",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Neg", "n");
         Tensor a = i64_tensor(r, {7});
         set_i64(a, 0, std::numeric_limits<int64_t>::min());
         set_i64(a, 1, 0);
         in(c, std::move(a));
         c.nb.output(I64, {7});
       }},
      {"Abs_i64",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Abs", "n");
         Tensor a = i64_tensor(r, {9});
         set_i64(a, 0, std::numeric_limits<int64_t>::min());
         in(c, std::move(a));
         c.nb.output(I64, {9});
       }},
      {"Abs_i32",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Abs", "n");
         Tensor a = i32_tensor(r, {9});
         a.set(0, std::numeric_limits<int32_t>::min());
         in(c, std::move(a));
         c.nb.output(AMPX_DTYPE_I32, {9});
       }},
      {"Min_i64_broadcast",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Min", "n");
         Tensor a = i64_tensor(r, {4, 5}), b = i64_tensor(r, {5});
         set_i64(b, 0, i64_at(a, 5) + 1);                   // low words differ
         set_i64(b, 1, i64_at(a, 6) - (int64_t{1} << 32));  // high words differ
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(I64, {4, 5});
       }},
      {"Max_i32_one",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Max", "n");
         in(c, i32_tensor(r, {3, 4}));
         c.nb.output(AMPX_DTYPE_I32, {3, 4});
       }},
      {"Max_i32_two",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Max", "n");
         in(c, i32_tensor(r, {3, 4}));
         in(c, i32_tensor(r, {3, 1}));
         c.nb.output(AMPX_DTYPE_I32, {3, 4});
       }},
      // Gather of integer and bool data (silero VAD gathers an i64 shape).
      {"Gather_i64_data_axis1",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Gather", "n");
         in(c, i64_tensor(r, {3, 5, 2}));
         in(c, Tensor::of(I64, {4}, {4, -1, 0, 2}));
         c.nb.output(I64, {3, 4, 2}).attr_int("axis", 1);
       }},
      {"Gather_i32_data_scalar_index",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Gather", "n");
         in(c, i32_tensor(r, {6}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {}, {3}));
         c.nb.output(AMPX_DTYPE_I32, {});
       }},
      {"Gather_bool_data",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Gather", "n");
         in(c, bool_tensor(r, {4, 3}));
         in(c, Tensor::of(I64, {2, 2}, {3, 0, 1, 3}));
         c.nb.output(AMPX_DTYPE_BOOL, {2, 2, 3});
       }},
      {"GatherElements_i64_data",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("GatherElements", "n");
         in(c, i64_tensor(r, {3, 4}));
         in(c, Tensor::of(I64, {3, 2}, {3, -1, 0, 2, -4, 1}));
         c.nb.output(I64, {3, 2}).attr_int("axis", 1);
       }},
      {"GatherElements_bool_data",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("GatherElements", "n");
         in(c, bool_tensor(r, {4, 3}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {2, 3}, {3, 0, 1, -1, 2, 0}));
         c.nb.output(AMPX_DTYPE_BOOL, {2, 3});
       }},
      {"GatherND_i64_data_batch_dims1",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("GatherND", "n");
         in(c, i64_tensor(r, {2, 3, 4}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {2, 2, 1}, {2, -1, 0, 1}));
         c.nb.output(I64, {2, 2, 4}).attr_int("batch_dims", 1);
       }},
      {"ScatterND_i64_add_repeated",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("ScatterND", "n");
         in(c, i64_tensor(r, {4, 3}));
         in(c, Tensor::of(I64, {3, 1}, {2, 0, 2}));
         in(c, i64_tensor(r, {3, 3}));
         c.nb.output(I64, {4, 3}).attr_str("reduction", "add");
       }},
      {"ScatterND_i64_min_mul",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("ScatterND", "n");
         in(c, i64_tensor(r, {5}));
         in(c, Tensor::of(I64, {4, 1}, {4, 1, 4, -1}));
         in(c, i64_tensor(r, {4}));
         c.nb.output(I64, {5}).attr_str("reduction", "min");
       }},
      {"ScatterND_i32_max",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("ScatterND", "n");
         in(c, i32_tensor(r, {3, 4}));
         in(c, Tensor::of(I64, {3, 2}, {0, 1, 2, 3, 0, 1}));
         in(c, i32_tensor(r, {3}));
         c.nb.output(AMPX_DTYPE_I32, {3, 4}).attr_str("reduction", "max");
       }},
      {"ScatterND_bool_none",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("ScatterND", "n");
         in(c, bool_tensor(r, {4, 3}));
         in(c, Tensor::of(I64, {2, 1}, {3, 1}));
         in(c, bool_tensor(r, {2, 3}));
         c.nb.output(AMPX_DTYPE_BOOL, {4, 3});
       }},
      {"Div_i64_signs_zero_minus_one",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Div", "n");
         Tensor a = i64_tensor(r, {3, 6}), b = i64_tensor(r, {6});
         set_i64(b, 0, 0);
         set_i64(b, 1, -1);
         set_i64(a, 1, std::numeric_limits<int64_t>::min());  // MIN / -1 wraps to MIN
         set_i64(b, 2, 7);
         set_i64(a, 2, -20);
         set_i64(b, 3, -(int64_t{1} << 40) - 3);
         set_i64(a, 9, std::numeric_limits<int64_t>::min());
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(I64, {3, 6});
       }},
      {"Mod_i64_both_signs",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Mod", "n");
         Tensor a = i64_tensor(r, {4, 5}), b = i64_tensor(r, {5});
         set_i64(b, 0, 0);
         set_i64(b, 1, -1);
         set_i64(b, 2, 3);
         set_i64(b, 3, -(int64_t{1} << 35) + 1);
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(I64, {4, 5});
       }},
      {"Mod_i64_fmod",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Mod", "n");
         Tensor a = i64_tensor(r, {4, 5}), b = i64_tensor(r, {5});
         set_i64(b, 0, 0);
         set_i64(b, 2, -3);
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(I64, {4, 5}).attr_int("fmod", 1);
       }},
      {"Mod_i32_both_forms",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Mod", "n");
         Tensor a = i32_tensor(r, {3, 6}), b = Tensor::zeros(AMPX_DTYPE_I32, {6});
         const double bs[] = {7, -7, 0, -1, 1000, -123456};
         for (size_t i = 0; i < 6; ++i) b.set(i, bs[i]);
         a.set(0, -20);
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(AMPX_DTYPE_I32, {3, 6});
       }},
      {"Expand_i64",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Expand", "n");
         in(c, i64_tensor(r, {3, 1}));
         c.nb.output(I64, {2, 3, 4}).attr_ints("shape", {2, 1, 4});
       }},
      {"Expand_bool",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Expand", "n");
         in(c, bool_tensor(r, {1, 5}));
         c.nb.output(AMPX_DTYPE_BOOL, {3, 5}).attr_ints("shape", {3, 1});
       }},
      {"Where_i64_broadcast",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Where", "n");
         in(c, bool_tensor(r, {3, 1}));
         in(c, i64_tensor(r, {2, 1, 5}));
         in(c, i64_tensor(r, {5}));
         c.nb.output(I64, {2, 3, 5});
       }},
      {"Where_i32_cond_broadcasts",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Where", "n");
         in(c, bool_tensor(r, {4}));
         in(c, i32_tensor(r, {3, 4}));
         in(c, i32_tensor(r, {3, 1}));
         c.nb.output(AMPX_DTYPE_I32, {3, 4});
       }},
      // More than 9 workgroups: split by VulkanDispatch's cap of 3.
      {"Equal_i64_many_groups",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Equal", "n");
         Tensor a = i64_tensor(r, {5, 701}), b = i64_tensor(r, {1});
         set_i64(b, 0, i64_at(a, 0));
         for (size_t i = 0; i < 3505; i += 7) set_i64(a, i, i64_at(b, 0));
         in(c, std::move(a));
         in(c, std::move(b));
         c.nb.output(AMPX_DTYPE_BOOL, {5, 701});
       }},
      {"Where_i64_many_groups",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Where", "n");
         in(c, bool_tensor(r, {701}));
         in(c, i64_tensor(r, {5, 701}));
         in(c, i64_tensor(r, {1}));
         c.nb.output(I64, {5, 701});
       }},
      {"Split_i64_many_groups",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Split", "n");
         in(c, i64_tensor(r, {2, 3000}));
         c.nb.output(I64, {2, 1000})
             .output(I64, {2, 2000})
             .attr_int("axis", 1)
             .attr_ints("split", {1000, 2000});
       }},
      {"Reshape_bool_many_groups",
       [](Rng& r, ampx_dtype, Case& c) {
         c.nb = NodeBuilder("Reshape", "n");
         in(c, bool_tensor(r, {3000}));
         c.nb.output(AMPX_DTYPE_BOOL, {30, 100}).attr_ints("shape", {30, -1});
       }},
  };
  return m;
}

// A typed case: `native` where its storage exists (bool needs 8-bit
// storage, else `unsupported` and prepare refuses), and then bit-exact.
void check_exact_case(const Plugin& vk, const Plugin& ref, const std::string& name) {
  SCOPED_TRACE(name);
  Rng rng(23);
  Case c;
  typed_cases().at(name)(rng, F32, c);
  const ampx_capability cap = vk.capability(c.nb);
  std::cout << "[ answer   ] " << name << ": " << support_str(cap.support) << " (" << cap.note
            << ")\n";
  ASSERT_NE(ref.capability(c.nb).support, AMPX_SUPPORT_UNSUPPORTED) << "bad test case";
  if (has_bool_tensor(c.nb.desc()) && !has_storage8(vk)) {
    EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
    EXPECT_NE(std::string(cap.note).find("storageBuffer8BitAccess"), std::string::npos) << cap.note;
    ampx_kernel* k = nullptr;
    vk.fails(vk.api->kernel_prepare(vk.plugin, 0, &c.nb.desc(), &k), AMPX_STATUS_UNSUPPORTED,
             "node '");
    return;
  }
  ASSERT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
  const auto got = run_on(vk, c.nb, c.inputs);
  const auto want = run_on(ref, c.nb, c.inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].dtype, want[i].dtype);
    expect_bits_equal(got[i], want[i]);
  }
}

class VulkanTypedOps : public VulkanOps {};

TEST_P(VulkanTypedOps, BitExactWithCpuRef) {
  check_exact_case(*vulkan_, *ref_, GetParam());
}

std::vector<std::string> typed_case_names() {
  std::vector<std::string> n;
  for (const auto& [name, make] : typed_cases()) n.push_back(name);
  return n;
}

INSTANTIATE_TEST_SUITE_P(All, VulkanTypedOps, ::testing::ValuesIn(typed_case_names()),
                         [](const auto& info) { return info.param; });

ampx_support real_f16_answer(const Plugin& vk) {
  const std::string note = plugin_note(vk);
  const bool arith = note.find("shaderFloat16 yes") != std::string::npos;
  const bool storage = note.find("storageBuffer16BitAccess yes") != std::string::npos;
  return !storage ? AMPX_SUPPORT_UNSUPPORTED : arith ? AMPX_SUPPORT_NATIVE : AMPX_SUPPORT_EMULATED;
}

TEST_P(VulkanOps, MatchesCpuRefWhereverItRuns) {
  check_case(*vulkan_, *ref_, GetParam(), real_f16_answer(*vulkan_));
}

std::vector<std::string> case_names() {
  std::vector<std::string> n;
  for (const auto& [name, make] : cases()) n.push_back(name);
  for (const auto& [name, make] : vulkan_float_cases()) n.push_back(name);
  return n;
}

INSTANTIATE_TEST_SUITE_P(All, VulkanOps, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

// shaderFloat16 masked: every f16 node runs the f16-storage/f32-arithmetic
// kernels, answered `emulated`, still correct; the fingerprint says so.
TEST(VulkanMasked, NoFloat16ArithmeticMeansEmulated) {
  ScopedEnv mask("AMPX_VULKAN_MASK_FEATURES", "shaderFloat16");
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  if (real_f16_answer(vk) == AMPX_SUPPORT_UNSUPPORTED) GTEST_SKIP() << "no 16-bit storage";
  EXPECT_NE(plugin_note(vk).find("masked: shaderFloat16"), std::string::npos) << plugin_note(vk);
  ampx_device_props props{};
  props.struct_size = sizeof props;
  vk.ok(vk.api->device_props(vk.plugin, 0, &props));
  EXPECT_NE(std::string(props.fingerprint).find("/mask-shaderFloat16"), std::string::npos);
  for (const char* name : {"Conv2d_bias_stride_pad_dilation",
                           "Conv2d_depthwise_multiplier",
                           "MatMul_batch_broadcast",
                           "Gemm_trans_alpha_beta_bias",
                           "Relu",
                           "Gelu_erf",
                           "Add_broadcast",
                           "Softmax_axis1",
                           "LayerNorm_last_bias",
                           "BatchNorm",
                           "MaxPool_ceil",
                           "ReduceMean_axis1_keep",
                           "HardSwish",
                           "HardSigmoid",
                           "LogSoftmax_last",
                           "ArgMax_axis1",
                           "Where_broadcast",
                           "Equal_broadcast",
                           "ConvTranspose_stride_pad_outpad_group_bias",
                           "ConvTranspose_many_groups",
                           "Sqrt",
                           "Mish",
                           "Round_halves",
                           "Pow_broadcast",
                           "PRelu_channel_slope",
                           "Min_three_broadcast",
                           "Less_broadcast",
                           "Resize_linear_half_pixel",
                           "ReduceLogSumExp_axes_keep",
                           "ArgMin_axis1"})
    check_case(vk, ref, name, AMPX_SUPPORT_EMULATED);
  // The training ops likewise (the f32 updates stay native).
  for (const char* name :
       {"ReluGrad", "GeluGrad_erf", "SoftmaxGrad_axis1", "SoftmaxCrossEntropy",
        "SoftmaxCrossEntropyGrad", "BatchNormTraining", "BatchNormGrad", "LayerNormGrad",
        "Conv2dGradWeight_grouped_strided_dilated", "MaxPoolGrad_ceil",
        "AveragePoolGrad_include_pad", "SliceGrad_stepped", "GatherGrad_repeated_indices",
        "DropoutTraining", "SgdUpdate_nesterov", "AdamUpdate_decoupled"})
    check_case(vk, ref, name, AMPX_SUPPORT_EMULATED);
  // Data movement widened to f32 and back is exact: native without
  // shaderFloat16 too (opset::is_data_movement).
  for (const char* name : {"Transpose_perm", "Split_three", "Pad_reflect", "Expand_bidirectional"})
    check_case(vk, ref, name, AMPX_SUPPORT_NATIVE);
  // Bool in and out: no 16-bit tensor at all.
  check_case(vk, ref, "And_broadcast", AMPX_SUPPORT_NATIVE);
  expect_no_validation_errors(vk);
}

// Fused epilogues (docs/OPS.md) have no Vulkan kernel yet: such nodes are
// unsupported, so the host's fusion pass leaves them unfused here.
TEST(VulkanEpilogue, ActivationAndMatMulBiasAreUnsupported) {
  Plugin vk(plugin_path("vulkan"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  NodeBuilder conv("Conv2d", "conv");
  conv.input(AMPX_DTYPE_F32, {1, 2, 5, 5}).input(AMPX_DTYPE_F32, {3, 2, 3, 3});
  conv.output(AMPX_DTYPE_F32, {1, 3, 3, 3}).attr_str("activation", "relu");
  const auto a = vk.capability(conv);
  EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(std::string(a.note).find("epilogue"), std::string::npos) << a.note;
  NodeBuilder mm("MatMul", "mm");
  mm.input(AMPX_DTYPE_F32, {4, 5}).input(AMPX_DTYPE_F32, {5, 6}).input(AMPX_DTYPE_F32, {6});
  mm.output(AMPX_DTYPE_F32, {4, 6});
  EXPECT_EQ(vk.capability(mm).support, AMPX_SUPPORT_UNSUPPORTED);
  // The weight gradient with its bias gradient (bias_gradient): the shader
  // writes dW only, so the host keeps the ReduceSum.
  NodeBuilder dw("Conv2dGradWeight", "dw");
  dw.input(AMPX_DTYPE_F32, {2, 6, 8, 8}).input(AMPX_DTYPE_F32, {2, 4, 8, 8});
  dw.output(AMPX_DTYPE_F32, {6, 4, 3, 3}).output(AMPX_DTYPE_F32, {6});
  dw.attr_ints("kernel_shape", {3, 3}).attr_ints("pads", {1, 1, 1, 1}).attr_int("bias_gradient", 1);
  const auto b = vk.capability(dw);
  EXPECT_EQ(b.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(std::string(b.note).find("bias_gradient"), std::string::npos) << b.note;
}

// ScatterND's reductions on f32 (cpu_ref has them on f32, i64 and i32, not
// on 16-bit): repeated tuples fold in tuple order, one element of a slice
// or whole rows; f16 reductions are declined.
TEST(VulkanScatterND, FloatReductionsMatchCpuRef) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  Rng r(31);
  for (const char* red : {"add", "mul", "max", "min"}) {
    SCOPED_TRACE(red);
    {
      Case c;
      c.nb = NodeBuilder("ScatterND", "n");
      in(c, rnd(r, F32, {3, 4}));
      in(c, Tensor::of(AMPX_DTYPE_I32, {4, 2}, {1, 2, 0, 0, 1, 2, 2, -1}));
      in(c, rnd(r, F32, {4}));
      c.nb.output(F32, {3, 4}).attr_str("reduction", red);
      ASSERT_EQ(vk.capability(c.nb).support, AMPX_SUPPORT_NATIVE);
      expect_close(run_on(vk, c.nb, c.inputs)[0], run_on(ref, c.nb, c.inputs)[0].values(), red);
    }
    {
      Case c;
      c.nb = NodeBuilder("ScatterND", "n");
      in(c, rnd(r, F32, {6, 300}));
      in(c, Tensor::of(I64, {5, 1}, {1, 3, 1, -5, 4}));
      in(c, rnd(r, F32, {5, 300}, 2.0));
      c.nb.output(F32, {6, 300}).attr_str("reduction", red);
      ASSERT_EQ(vk.capability(c.nb).support, AMPX_SUPPORT_NATIVE);
      expect_close(run_on(vk, c.nb, c.inputs)[0], run_on(ref, c.nb, c.inputs)[0].values(), red);
    }
    NodeBuilder f16("ScatterND", "n");
    f16.input(F16, {3, 4}).input(I64, {2, 2}).input(F16, {2}).output(F16, {3, 4});
    f16.attr_str("reduction", red);
    EXPECT_EQ(vk.capability(f16).support, AMPX_SUPPORT_UNSUPPORTED);
  }
  expect_no_validation_errors(vk);
}

// Mod's float form is C's fmod, which is exact: bit for bit as cpu_ref, in
// f32 and f16, over quotients up to 2^30.
TEST(VulkanMod, FmodIsExact) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  for (ampx_dtype dt : {F32, F16}) {
    SCOPED_TRACE(dtype_str(dt));
    Rng r(3);
    Case c;
    find_case("Mod_fmod_wide_range")(r, dt, c);
    ASSERT_NE(vk.capability(c.nb).support, AMPX_SUPPORT_UNSUPPORTED);
    expect_bits_equal(run_on(vk, c.nb, c.inputs)[0], run_on(ref, c.nb, c.inputs)[0]);
  }
  expect_no_validation_errors(vk);
}

// Sin ... Atanh (and Tanh, Log, Softplus, Mish) element by element over
// their whole f32 range (the
// catalogue's cases are normwise, so one large element hides the error of
// the small ones): every result within 1e-6 of cpu_ref's relative to
// itself (~17 ulps; lavapipe measured within 4e-7; the GLSL builtins, or
// trig.glsl without its `precise` steps, miss this by orders of
// magnitude), NaN and infinity where cpu_ref has them.
TEST(VulkanTranscendentals, EveryElementWithinUlpsOfCpuRef) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  struct Range {
    const char* op;
    double lo, hi;  // magnitudes 10^u, u uniform in [lo, hi]
    double shift;   // added after the sign (Acosh: x = 1 + 10^u)
    bool sign;      // random sign
    double tol = 1e-6;
  };
  const Range ranges[] = {
      {"Sin", -6, 38.5, 0, true},
      {"Cos", -6, 38.5, 0, true},
      {"Tan", -6, 38.5, 0, true},
      {"Asin", -8, 0, 0, true},
      {"Acos", -8, 0, 0, true},
      {"Atan", -10, 38.5, 0, true},
      {"Sinh", -8, 1.95, 0, true},
      {"Cosh", -8, 1.95, 0, true},
      {"Asinh", -10, 38.5, 0, true},
      {"Acosh", -7, 38.5, 1, false},
      {"Atanh", -8, 0, 0, true},
      // The ops on the same log and tanh: the builtins' absolute error near
      // 0 (Tanh) and 1 (Log, Softplus's log1p) was 7 % at Mish(-13.7) and
      // 3e5 times the value at Mish(-30). Softplus and Mish also take the
      // builtin exp (3 + 2|x| ulps: |x| <= 30 keeps that under 5e-6).
      {"Tanh", -10, 1.3, 0, true},
      {"Log", -37, 38.5, 0, false},
      {"Softplus", -6, 1.47, 0, true, 5e-6},
      {"Mish", -6, 1.47, 0, true, 5e-6},
  };
  for (const Range& rg : ranges) {
    SCOPED_TRACE(rg.op);
    Rng r(5);
    std::vector<double> x(8192);
    for (double& v : x) {
      v = std::min(std::pow(10.0, r.uniform(rg.lo, rg.hi)), 3.4e38);
      if (rg.sign && r.coin()) v = -v;
      v += rg.shift;
    }
    if (std::string(rg.op) == "Atanh")  // also close to +-1
      for (size_t i = 0; i < x.size(); i += 2) x[i] = (x[i] < 0 ? -1 : 1) * (1 - std::fabs(x[i]));
    NodeBuilder nb(rg.op, "n");
    nb.input(F32, {8192}).output(F32, {8192});
    const std::vector<Tensor> in = {Tensor::of(F32, {8192}, x)};
    ASSERT_EQ(vk.capability(nb).support, AMPX_SUPPORT_NATIVE);
    const std::vector<double> got = run_on(vk, nb, in)[0].values();
    const std::vector<double> want = run_on(ref, nb, in)[0].values();
    int bad = 0;
    for (size_t i = 0; i < got.size() && bad < 5; ++i) {
      const double g = got[i], w = want[i];
      const bool ok = std::isnan(w)   ? std::isnan(g)
                      : std::isinf(w) ? g == w
                                      : std::fabs(g - w) <= rg.tol * std::fabs(w) + 1e-37;
      if (!ok) {
        ++bad;
        ADD_FAILURE() << rg.op << "(" << static_cast<float>(x[i]) << ") = " << g << ", cpu_ref "
                      << w;
      }
    }
  }
  expect_no_validation_errors(vk);
}

// What the importer's kernels decline, with a reason: a variadic op of more
// inputs than a dispatch binds (floats) or than the integer kernel takes
// (2), TopK over long rows, integer CumSum, Attention heads past 512.
// cpu_ref runs them.
TEST(VulkanImporterOps, DeclinedWithReasons) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  std::vector<NodeBuilder> nodes;
  NodeBuilder max8("Max", "max8");
  for (int i = 0; i < 8; ++i) max8.input(F32, {3, 4});
  max8.output(F32, {3, 4});
  nodes.push_back(max8);
  NodeBuilder min3("Min", "n");
  min3.input(I64, {5}).input(I64, {5}).input(I64, {5}).output(I64, {5});
  nodes.push_back(min3);
  NodeBuilder topk_long("TopK", "n");  // rows beyond the rank kernel's 4096
  topk_long.input(F32, {2, 5000}).output(F32, {2, 3}).output(I64, {2, 3}).attr_int("k", 3);
  nodes.push_back(topk_long);
  NodeBuilder cumsum_i64("CumSum", "n");
  cumsum_i64.input(I64, {4, 3}).output(I64, {4, 3}).attr_int("axis", 0);
  nodes.push_back(cumsum_i64);
  NodeBuilder wide_head("Attention", "n");  // a head lives in shared memory
  wide_head.input(F32, {1, 1, 2, 520}).input(F32, {1, 1, 3, 520}).input(F32, {1, 1, 3, 4});
  wide_head.output(F32, {1, 1, 2, 4});
  nodes.push_back(wide_head);
  NodeBuilder det65("Det", "n");  // beyond the serial LU's M <= 64
  det65.input(F32, {65, 65}).output(F32, {});
  nodes.push_back(det65);
  NodeBuilder grid7("GridSample", "n");  // 7 spatial axes: grid_sample.comp takes 6
  grid7.input(F32, {1, 1, 1, 1, 1, 1, 1, 1, 2})
      .input(F32, {1, 1, 1, 1, 1, 1, 1, 2, 7})
      .output(F32, {1, 1, 1, 1, 1, 1, 1, 1, 2});
  nodes.push_back(grid7);
  // One invocation would loop past the driver's loop budget (lavapipe's;
  // other drivers have none: vulkan_test_loops.cpp forces one).
  if (plugin_note(vk).find("loops unbounded") == std::string::npos) {
    NodeBuilder window300("MaxPoolIndices", "n");
    window300.input(F32, {1, 1, 300, 300})
        .output(I64, {1, 1, 1, 1})
        .attr_ints("kernel_shape", {300, 300});
    nodes.push_back(window300);
    NodeBuilder block256("Col2Im", "n");
    block256.input(F32, {1, 65536, 1})
        .output(F32, {1, 1, 256, 256})
        .attr_ints("image_shape", {256, 256})
        .attr_ints("block_shape", {256, 256});
    nodes.push_back(block256);
  }
  NodeBuilder cumprod_i32("CumProd", "n");  // cumsum.comp's product is f32
  cumprod_i32.input(AMPX_DTYPE_I32, {4, 3}).output(AMPX_DTYPE_I32, {4, 3}).attr_int("axis", 1);
  nodes.push_back(cumprod_i32);
  NodeBuilder and_u16("BitwiseAnd", "n");  // no storage for u16 (elem_storage)
  and_u16.input(AMPX_DTYPE_U16, {4}).input(AMPX_DTYPE_U16, {4}).output(AMPX_DTYPE_U16, {4});
  nodes.push_back(and_u16);
  NodeBuilder bitcast_u32("BitCast", "n");  // nor for u32
  bitcast_u32.input(F32, {4}).output(AMPX_DTYPE_U32, {4}).attr_int("to", AMPX_DTYPE_U32);
  nodes.push_back(bitcast_u32);
  for (NodeBuilder& b : nodes) {
    SCOPED_TRACE(b.op_type());
    ASSERT_NE(ref.capability(b).support, AMPX_SUPPORT_UNSUPPORTED) << ref.capability(b).note;
    const auto a = vk.capability(b);
    EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED) << a.note;
    EXPECT_STRNE(a.note, "");
  }
  // Seven inputs run.
  NodeBuilder max7("Max", "max7");
  for (int i = 0; i < 7; ++i) max7.input(F32, {3, 4});
  max7.output(F32, {3, 4});
  EXPECT_EQ(vk.capability(max7).support, AMPX_SUPPORT_NATIVE);
}

// Attention's softmax_f64 (the exp-sum and quotients in f64): `native` where
// the device has shaderFloat64 (lavapipe), as cpu_ref's in f32 and f16, with
// a float and a bool mask and past 2,048 keys; `unsupported` with the
// feature masked. (The op_cases catalogue has no softmax_f64 case: whether
// it runs depends on the device.)
TEST(VulkanAttention, SoftmaxF64NeedsShaderFloat64) {
  const auto make = [](ampx_dtype dt, bool bool_mask, int64_t T, Case& c) {
    Rng r(9);
    c.nb = NodeBuilder("Attention", "n");
    in(c, rnd(r, dt, {1, 2, 3, 8}, 2.0));
    in(c, rnd(r, dt, {1, 1, T, 8}, 2.0));
    in(c, rnd(r, dt, {1, 1, T, 5}));
    if (bool_mask) {
      Tensor m = Tensor::zeros(AMPX_DTYPE_BOOL, {3, T});
      for (int64_t i = 0; i < 3 * T; ++i)
        m.set(static_cast<size_t>(i), (i * 7) % 5 != 0 ? 1.0 : 0.0);
      in(c, m);
    } else {
      in(c, rnd(r, dt, {3, T}, 0.5));
    }
    c.nb.output(dt, {1, 2, 3, 5}).output(dt, {1, 2, 3, T}).attr_int("qk_output", 3);
    c.nb.attr_int("softmax_f64", 1).attr_int("is_causal", 1).attr_int("past_length", T - 3);
  };
  {
    Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
    AMPX_SKIP_WITHOUT_VULKAN(vk);
    const bool f64 = plugin_note(vk).find("shaderFloat64 yes") != std::string::npos;
    for (ampx_dtype dt : {F32, F16})
      for (bool bool_mask : {false, true})
        for (int64_t T : {6, 2100}) {
          SCOPED_TRACE(std::string(dtype_str(dt)) + (bool_mask ? " bool" : " float") + " T " +
                       std::to_string(T));
          Case c;
          make(dt, bool_mask, T, c);
          const auto cap = vk.capability(c.nb);
          if (!f64 || (bool_mask && !has_storage8(vk))) {
            EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
            continue;
          }
          ASSERT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
          EXPECT_NE(std::string(cap.note).find("_sm64"), std::string::npos) << cap.note;
          const auto got = run_on(vk, c.nb, c.inputs);
          const auto want = run_on(ref, c.nb, c.inputs);
          for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i].values(), "out");
        }
    expect_no_validation_errors(vk);
  }
  ScopedEnv mask("AMPX_VULKAN_MASK_FEATURES", "shaderFloat64");
  Plugin vk(plugin_path("vulkan"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  Case c;
  make(F32, false, 6, c);
  const auto cap = vk.capability(c.nb);
  EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
  EXPECT_NE(std::string(cap.note).find("shaderFloat64"), std::string::npos) << cap.note;
}

// RotaryEmbedding: a position outside the caches (cpu_ref's run-time
// error, which a shader cannot report) writes NaN over that token's head
// vector, an i64 outside int32 included; the other tokens are as cpu_ref's.
TEST(VulkanRotary, PositionOutsideTheCachesWritesNaN) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  const auto make = [&](const std::vector<double>& pos) {
    Case c;
    c.nb = NodeBuilder("RotaryEmbedding", "n");
    Rng same(5);
    in(c, rnd(same, F32, {1, 1, 4, 6}));
    in(c, rnd(same, F32, {3, 2}));
    in(c, rnd(same, F32, {3, 2}));
    in(c, Tensor::of(I64, {1, 4}, pos));
    c.nb.output(F32, {1, 1, 4, 6}).attr_int("rotary_embedding_dim", 4);
    return c;
  };
  Case bad = make({2, 3, 4294967297.0, -3});  // 3 and 2^32 + 1 are outside 3 rows
  ASSERT_EQ(vk.capability(bad.nb).support, AMPX_SUPPORT_NATIVE);
  const auto got = run_on(vk, bad.nb, bad.inputs)[0].values();
  Case good = make({2, 0, 0, -3});
  const auto want = run_on(ref, good.nb, good.inputs)[0].values();
  for (size_t i = 0; i < got.size(); ++i) {
    const size_t token = i / 6;
    if (token == 1 || token == 2)
      EXPECT_TRUE(std::isnan(got[i])) << i;
    else
      EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  }
}

// shaderFloat64 masked: Det (an f64 LU, as cpu_ref's) is unsupported in
// every dtype, with the reason; the rest is unaffected.
TEST(VulkanMasked, NoFloat64MeansNoDet) {
  ScopedEnv mask("AMPX_VULKAN_MASK_FEATURES", "shaderFloat64");
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  const std::string note = plugin_note(vk);
  EXPECT_NE(note.find("shaderFloat64 no"), std::string::npos) << note;
  EXPECT_NE(note.find("masked: shaderFloat64"), std::string::npos) << note;
  for (const char* name : {"Det_batched", "Det_large", "GridSample_linear_zeros", "Col2Im_3d"})
    check_case(vk, ref, name, real_f16_answer(vk));
  NodeBuilder det("Det", "n");
  det.input(F32, {3, 3}).output(F32, {});
  EXPECT_NE(std::string(vk.capability(det).note).find("shaderFloat64"), std::string::npos);
  expect_no_validation_errors(vk);
}

// No 16-bit storage at all: f16 is unsupported, f32 unaffected.
TEST(VulkanMasked, No16BitStorageMeansUnsupported) {
  ScopedEnv mask("AMPX_VULKAN_MASK_FEATURES", "shaderFloat16,storageBuffer16BitAccess");
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  for (const char* name :
       {"Gemm_no_C_alpha", "Sigmoid", "Concat", "Where_broadcast", "ArgMax_axis1", "Exp",
        "Max_two_broadcast", "Pad_edge", "Resize_nearest_half_pixel_down", "ReduceMin_axes_drop"})
    check_case(vk, ref, name, AMPX_SUPPORT_UNSUPPORTED);
  expect_no_validation_errors(vk);
}

// Grids beyond maxComputeWorkGroupCount (capped to 3 here) are split into
// several vkCmdDispatchBase calls; results are unchanged.
TEST(VulkanDispatch, SplitsBeyondMaxWorkGroupCount) {
  ScopedEnv cap("AMPX_VULKAN_MAX_WORKGROUPS", "3");
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  for (const char* name : {"Relu_many_groups",
                           "MatMul_multi_tile",
                           "MatMul_wide_grid",
                           "Conv2d_multi_tile",
                           "Softmax_long_rows",
                           "Transpose_perm",
                           "HardSwish_many_groups",
                           "HardSigmoid_many_groups",
                           "LogSoftmax_many_rows",
                           "ArgMax_many_groups",
                           "Where_many_groups",
                           "Split_many_groups",
                           "Sqrt_many_groups",
                           "Mish_wide_range",
                           "Sum_many_groups",
                           "Less_many_groups",
                           "Pad_reflect_many_groups",
                           "Expand_many_groups",
                           "Resize_nearest_upsample_many_groups",
                           "Resize_linear_asymmetric_many_groups",
                           "ReduceLogSumExp_many_groups",
                           "ReduceMax_all_many_values",
                           "ArgMin_many_groups",
                           "CumSum_many_groups_long_rows",
                           "GatherElements_i32_axis0_many_groups",
                           "TopK_many_groups",
                           "GatherND_many_groups",
                           "ScatterND_none_repeated_many_groups"})
    check_case(vk, ref, name, real_f16_answer(vk));
  for (const char* name :
       {"ReluGrad_many_groups", "GeluGrad_tanh_many_groups", "DropoutTraining_many_groups",
        "SoftmaxCrossEntropy_many_rows", "SoftmaxGrad_long_rows", "LayerNormGrad_wide_rows",
        "BatchNormTraining_many_groups", "Conv2dGradWeight_many_groups",
        "Conv2dGradWeight_5x5_taps", "MaxPoolGrad_overlapping", "SgdUpdate_plain",
        "AdamUpdate_coupled", "UpdateGuard_clip", "UpdateGuard_many_inputs",
        "ConvTranspose_many_groups"})
    check_case(vk, ref, name, real_f16_answer(vk));
  for (const char* name : {"Equal_i64_many_groups", "Where_i64_many_groups",
                           "Split_i64_many_groups", "Reshape_bool_many_groups"})
    check_exact_case(vk, ref, name);
  expect_no_validation_errors(vk);
}

// 8-bit storage masked: no bool tensors, so Where and Equal are unsupported
// in every dtype, as is any copy of bool; i64 copies (raw 32-bit words) and
// the float ops are unaffected.
TEST(VulkanMasked, No8BitStorageMeansNoBoolTensors) {
  ScopedEnv mask("AMPX_VULKAN_MASK_FEATURES", "storageBuffer8BitAccess");
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  ASSERT_FALSE(has_storage8(vk)) << plugin_note(vk);
  for (const char* name :
       {"Where_broadcast", "Equal_broadcast", "Split_three", "HardSwish", "ArgMax_axis1",
        "Less_broadcast", "Not", "Or_broadcast", "Pad_constant", "Expand_bidirectional"})
    check_case(vk, ref, name, real_f16_answer(vk));
  for (const char* name :
       {"Equal_i64_broadcast", "Where_i64_broadcast", "Flatten_bool", "Reshape_i64_unsqueeze",
        "Split_i64", "Less_i64_broadcast", "Pad_bool_constant", "Pad_i64_edge", "Expand_bool"})
    check_exact_case(vk, ref, name);
  expect_no_validation_errors(vk);
}

// Both GEMM/conv kernel families on one device: the tiled shared-memory
// kernels GPUs get and the register-blocked ones CPU drivers get.
// Each family is checked to be the one that runs: the answer names the
// plan's shaders (the CPU family's end in "_cpu"), the plan kernel_prepare
// builds. On lavapipe the blocked family is the default, so without that
// check a broken switch would compare one family with itself.
TEST(VulkanKernels, TiledAndBlockedGemmBothMatchCpuRef) {
  for (const char* kind : {"tiled", "blocked"}) {
    SCOPED_TRACE(kind);
    ScopedEnv k("AMPX_VULKAN_GEMM_KERNEL", kind);
    Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
    AMPX_SKIP_WITHOUT_VULKAN(vk);
    const bool blocked = std::string(kind) == "blocked";
    for (const char* name :
         {"MatMul_2d", "MatMul_batch_broadcast", "MatMul_multi_tile", "MatMul_vec4_rows",
          "Gemm_trans_alpha_beta_bias", "Gemm_multi_tile_bias_row", "Gemm_vec4_transB_bias",
          "Conv2d_bias_stride_pad_dilation", "Conv2d_grouped_constant_weights", "Conv2d_multi_tile",
          "Conv2dGradWeight_grouped_strided_dilated", "Conv2dGradWeight_many_groups",
          "Conv2dGradWeight_5x5_taps", "ConvTranspose_stride_pad_outpad_group_bias",
          "ConvTranspose_dilated_no_bias", "ConvTranspose_many_groups"}) {
      Rng rng(17);
      Case c;
      find_case(name)(rng, F32, c);
      const std::string note = vk.capability(c.nb).note;
      EXPECT_EQ(note.find("_cpu.f32") != std::string::npos, blocked) << name << ": " << note;
      EXPECT_NE(note.find(" ["), std::string::npos) << name << ": " << note;
      check_case(vk, ref, name, real_f16_answer(vk));
    }
    expect_no_validation_errors(vk);
  }
}

// The optimizer updates run in place (the executor gives W', M', V' the
// buffers of W, M, V): the results equal those of a run into fresh buffers,
// bit for bit; and with apply = 0 every output equals its input, bit for bit,
// in place or not.
std::vector<Tensor> run_in_place(const Plugin& p, NodeBuilder& nb,
                                 const std::vector<Tensor>& inputs,
                                 const std::vector<size_t>& aliased) {
  check::Handles h(*p.api, p.plugin);
  std::vector<ampx_buffer_view> in, out;
  for (const Tensor& t : inputs) {
    ampx_buffer* b = h.alloc(0, t.bytes.size());
    h.check(p.api->copy_to_device(b, 0, t.bytes.data(), t.bytes.size()), "copy_to_device");
    in.push_back({sizeof(ampx_buffer_view), b, 0});
  }
  for (size_t i : aliased) out.push_back(in[i]);
  ampx_kernel* k = h.prepare(0, nb.desc());
  h.check(p.api->kernel_launch(k, in.data(), in.size(), out.data(), out.size()), "kernel_launch");
  h.check(p.api->synchronize(p.plugin, 0), "synchronize");
  std::vector<Tensor> r;
  for (size_t i : aliased) {
    r.push_back(inputs[i]);
    h.check(p.api->copy_to_host(r.back().bytes.data(), out[r.size() - 1].buffer, 0,
                                r.back().bytes.size()),
            "copy_to_host");
  }
  return r;
}

TEST(VulkanUpdates, InPlaceAndSkippedStepsAreExact) {
  Plugin vk(plugin_path("vulkan"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  const std::vector<std::pair<std::string, std::vector<size_t>>> updates = {
      {"SgdUpdate_nesterov", {0, 3}},
      {"SgdUpdate_plain", {0}},
      {"AdamUpdate_decoupled", {0, 2, 3}},
      {"AdamUpdate_coupled", {0, 2, 3}}};
  for (const auto& [name, aliased] : updates) {
    SCOPED_TRACE(name);
    Rng rng(5);
    Case c;
    find_case(name)(rng, F32, c);
    const size_t hyper = c.nb.op_type() == "SgdUpdate" ? 2 : 4;
    const auto fresh = run_on(vk, c.nb, c.inputs);
    const auto in_place = run_in_place(vk, c.nb, c.inputs, aliased);
    ASSERT_EQ(in_place.size(), fresh.size());
    for (size_t i = 0; i < fresh.size(); ++i) expect_bits_equal(in_place[i], fresh[i]);
    c.inputs[hyper].set(2, 0.0);  // apply = 0: a skipped step
    const auto skipped = run_on(vk, c.nb, c.inputs);
    const auto skipped_in_place = run_in_place(vk, c.nb, c.inputs, aliased);
    for (size_t i = 0; i < aliased.size(); ++i) {
      expect_bits_equal(skipped[i], c.inputs[aliased[i]]);
      expect_bits_equal(skipped_in_place[i], c.inputs[aliased[i]]);
    }
  }
  expect_no_validation_errors(vk);
}

// UpdateGuard with a NaN or an inf in one gradient (the first, a middle or
// the last of 12, so in each of the dispatches): stats = [0, inf]; apply' = 0
// with skip_nonfinite = 1 and unchanged with 0; the rest of hyper' equals
// hyper bit for bit (no clipping on a non-finite step), as on cpu_ref.
TEST(VulkanUpdates, GuardNonFiniteIsExact) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
  for (int skip : {1, 0})
    for (size_t where : {size_t{1}, size_t{7}, size_t{12}})
      for (float bad : bad_values) {
        SCOPED_TRACE("skip " + std::to_string(skip) + " input " + std::to_string(where) +
                     " value " + std::to_string(bad));
        Rng rng(3);
        Case c;
        c.nb = NodeBuilder("UpdateGuard", "guard");
        in(c, Tensor::of(F32, {3}, {0.01, 0.125, 1.0}));
        for (int i = 0; i < 12; ++i) in(c, rnd(rng, F32, {5 + 40 * i, 3}));
        c.inputs[where].set(static_cast<size_t>(where * 11), bad);
        c.nb.output(F32, {3}).output(F32, {2}).attr_float("clip_norm", 0.5);
        c.nb.attr_int("skip_nonfinite", skip);
        ASSERT_EQ(vk.capability(c.nb).support, AMPX_SUPPORT_NATIVE);
        const auto got = run_on(vk, c.nb, c.inputs);
        const auto want = run_on(ref, c.nb, c.inputs);
        ASSERT_EQ(got.size(), 2u);
        expect_bits_equal(got[0], want[0]);
        expect_bits_equal(got[1], want[1]);
        EXPECT_EQ(got[1].values()[0], 0.0);
        EXPECT_EQ(got[1].values()[1], std::numeric_limits<double>::infinity());
        const auto h = got[0].values();
        EXPECT_EQ(h[0], 0.01f);
        EXPECT_EQ(h[1], 0.125);
        EXPECT_EQ(h[2], skip ? 0.0 : 1.0);
      }
  expect_no_validation_errors(vk);
}

// The finite flag, apply' and the clip decision of a finite step are exact;
// the clipped grad_scale within f32 tolerance (check_case).
TEST(VulkanUpdates, GuardFiniteFlagIsExact) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  for (const char* name : {"UpdateGuard_clip", "UpdateGuard_many_inputs", "UpdateGuard_large"}) {
    SCOPED_TRACE(name);
    Rng rng(17);
    Case c;
    find_case(name)(rng, F32, c);
    const auto got = run_on(vk, c.nb, c.inputs);
    const auto want = run_on(ref, c.nb, c.inputs);
    EXPECT_EQ(got[1].values()[0], 1.0);
    EXPECT_EQ(got[0].values()[2], want[0].values()[2]);
    EXPECT_EQ(got[0].values()[1] == c.inputs[0].values()[1],
              want[0].values()[1] == c.inputs[0].values()[1]);
  }
}

// Cast f32 <-> f16 rounds like cpu_ref (bitwise), and so do the integer and
// bool casts; float <-> float casts other than f32 <-> f16 (bf16) are
// answered unsupported, never faked.
TEST(VulkanCast, F32F16MatchesCpuRefBitwise) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  const std::vector<std::pair<ampx_dtype, ampx_dtype>> pairs = {
      {F32, F16}, {F16, F32}, {F32, F32}, {F32, BF16}, {BF16, F32}, {F16, BF16}};
  for (const auto& [from, to] : pairs) {
    SCOPED_TRACE(std::string(dtype_str(from)) + "->" + dtype_str(to));
    Rng rng(5);
    Case c;
    c.nb = NodeBuilder("Cast", "cast");
    in(c, random_tensor(rng, from, {3, 7, 5}, 100.0));
    c.nb.output(to, {3, 7, 5}).attr_int("to", to);
    const ampx_capability cap = vk.capability(c.nb);
    const bool runs = (from == F32 || from == F16) && (to == F32 || to == F16);
    if (!runs) {
      EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
      continue;
    }
    EXPECT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
    expect_bits_equal(run_on(vk, c.nb, c.inputs)[0], run_on(ref, c.nb, c.inputs)[0]);
  }
  expect_no_validation_errors(vk);
}

// Integer and bool casts, bit for bit as cpu_ref: i64 values whose rounding
// to f32 and f16 needs every bit (ties, sticky bits below the top word),
// floats with fractions, NaN, infinities and values beyond the integer
// range (truncation, saturation), bools from any non-zero value.
TEST(VulkanCast, IntegerAndBoolCastsMatchCpuRefBitwise) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  const ampx_dtype B = AMPX_DTYPE_BOOL, I32 = AMPX_DTYPE_I32;
  Rng rng(9);
  Tensor i64 = i64_tensor(rng, {64});
  const int64_t specials[] = {0,
                              1,
                              -1,
                              (int64_t{1} << 24) + 1,  // f32 tie, rounds to even
                              (int64_t{1} << 24) + 3,
                              (int64_t{1} << 40) + (int64_t{1} << 16) + 1,  // sticky below
                              (int64_t{1} << 40) + (int64_t{1} << 16),      // exact tie
                              -((int64_t{1} << 53) + 12345),
                              2049,   // f16 tie
                              2051,   // f16 tie the other way
                              65519,  // f16: rounds to 65504
                              65520,  // f16: overflows to inf
                              std::numeric_limits<int64_t>::max(),
                              std::numeric_limits<int64_t>::min(),
                              int64_t{0xffffffff},
                              -int64_t{0x100000000}};
  for (size_t i = 0; i < std::size(specials); ++i) set_i64(i64, i, specials[i]);
  Tensor i32 = i32_tensor(rng, {64});
  for (size_t i = 0; i < 12; ++i) i32.set(i, static_cast<double>(specials[i] & 0x7fffffff));
  i32.set(12, std::numeric_limits<int32_t>::min());
  i32.set(13, (1 << 30) + 65);
  std::vector<double> fv = {0.0,  -0.0,  0.5,  -0.5,  1.99,    -1.99, 2.5e9, -2.5e9,
                            3e19, -3e19, 1e10, -1e10, 65504.0, -7.75, 123.0, 4.0e6};
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> non_finite = {inf, -inf, std::numeric_limits<double>::quiet_NaN()};
  Tensor bools = bool_tensor(rng, {64});
  struct Run {
    Tensor x;
    ampx_dtype to;
  };
  std::vector<Run> runs;
  for (ampx_dtype to : {F32, F16, I32, B}) runs.push_back({i64, to});
  for (ampx_dtype to : {F32, F16, I64, B}) runs.push_back({i32, to});
  for (ampx_dtype to : {F32, F16, I64, I32}) runs.push_back({bools, to});
  for (ampx_dtype from : {F32, F16}) {
    std::vector<double> v = fv;
    if (from == F16)
      for (auto& x : v)
        if (std::fabs(x) > 65504) x = x > 0 ? 60000 : -60000;
    v.insert(v.end(), non_finite.begin(), non_finite.end());
    for (ampx_dtype to : {I64, I32, B})
      runs.push_back({Tensor::of(from, {static_cast<int64_t>(v.size())}, v), to});
  }
  for (const Run& run : runs) {
    SCOPED_TRACE(std::string(dtype_str(run.x.dtype)) + "->" + dtype_str(run.to));
    Case c;
    c.nb = NodeBuilder("Cast", "cast");
    in(c, run.x);
    c.nb.output(run.to, run.x.dims).attr_int("to", run.to);
    const ampx_capability cap = vk.capability(c.nb);
    ASSERT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
    expect_bits_equal(run_on(vk, c.nb, c.inputs)[0], run_on(ref, c.nb, c.inputs)[0]);
  }
  // i8/u8 have no cast kernels.
  NodeBuilder to_i8("Cast", "cast");
  to_i8.input(F32, {4}).output(AMPX_DTYPE_I8, {4}).attr_int("to", AMPX_DTYPE_I8);
  EXPECT_EQ(vk.capability(to_i8).support, AMPX_SUPPORT_UNSUPPORTED);
  expect_no_validation_errors(vk);
}

}  // namespace
}  // namespace ampx::test
