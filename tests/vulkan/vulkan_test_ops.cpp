// Every op of docs/OPS.md x {f32, f16, bf16} on vulkan:0 against cpu_ref:
// f32 runs everywhere (`native`); f16 is `native` exactly when the device
// has shaderFloat16 and 16-bit storage, `emulated` with storage alone; bf16
// is `unsupported` (no BF16 extension is used). Whatever runs matches cpu_ref
// within tolerance(dtype); data movement is bit-exact. Shapes are odd and
// include several GEMM tiles and long softmax/LayerNorm rows.
#include <functional>
#include <iostream>
#include <map>

#include "vulkan_harness.hpp"

namespace ampx::test {
namespace {

constexpr ampx_dtype F32 = AMPX_DTYPE_F32;
constexpr ampx_dtype F16 = AMPX_DTYPE_F16;
constexpr ampx_dtype BF16 = AMPX_DTYPE_BF16;
constexpr ampx_dtype I64 = AMPX_DTYPE_I64;

// One node instance with its (random) inputs. Builders keep pointers to
// constant data, so Case objects are not copied after make().
struct Case {
  NodeBuilder nb{"", ""};
  std::vector<Tensor> inputs;
};
using Maker = std::function<void(Rng&, ampx_dtype, Case&)>;

// Adds an input; `constant`: its bytes are given at prepare (a weight).
void in(Case& c, Tensor t, bool constant = false) {
  c.inputs.push_back(std::move(t));
  const Tensor& s = c.inputs.back();
  c.nb.input(s.dtype, s.dims, constant ? s.bytes.data() : nullptr);
}

Tensor rnd(Rng& r, ampx_dtype dt, std::vector<int64_t> dims, double scale = 1.0) {
  return random_tensor(r, dt, std::move(dims), scale);
}

Maker unary(std::string op, std::vector<int64_t> dims,
            std::function<void(NodeBuilder&)> attrs = nullptr) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    in(c, rnd(r, dt, dims, 3.0));
    c.nb.output(dt, dims);
    if (attrs) attrs(c.nb);
  };
}

Maker binary(std::string op, std::vector<int64_t> a, std::vector<int64_t> b,
             std::vector<int64_t> y) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "n");
    in(c, rnd(r, dt, a));
    in(c, rnd(r, dt, b));
    c.nb.output(dt, y);
  };
}

// 3x3 window, stride 2, pads 1 on 8x8: ceil_mode gives 5x5 (floor 4x4).
Maker pool(std::string op, int ceil, int include_pad) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "pool");
    in(c, rnd(r, dt, {1, 2, 8, 8}));
    c.nb.output(dt, {1, 2, ceil ? 5 : 4, ceil ? 5 : 4})
        .attr_ints("kernel_shape", {3, 3})
        .attr_ints("strides", {2, 2})
        .attr_ints("pads", {1, 1, 1, 1})
        .attr_int("ceil_mode", ceil);
    if (op == "AveragePool") c.nb.attr_int("count_include_pad", include_pad);
  };
}

const std::map<std::string, Maker>& cases() {
  static const std::map<std::string, Maker> m = {
      {"Conv2d_bias_stride_pad_dilation",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {2, 3, 7, 9}));
         in(c, rnd(r, dt, {5, 3, 3, 3}));
         in(c, rnd(r, dt, {5}));
         c.nb.output(dt, {2, 5, 4, 7})
             .attr_ints("strides", {2, 1})
             .attr_ints("pads", {1, 0, 1, 2})
             .attr_ints("dilations", {1, 2});
       }},
      {"Conv2d_grouped_constant_weights",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {1, 4, 6, 5}));
         in(c, rnd(r, dt, {6, 2, 3, 3}), true);
         c.nb.output(dt, {1, 6, 6, 5}).attr_ints("pads", {1, 1, 1, 1}).attr_int("group", 2);
       }},
      {"MatMul_2d", binary("MatMul", {13, 17}, {17, 11}, {13, 11})},
      {"MatMul_batch_broadcast", binary("MatMul", {2, 1, 5, 7}, {3, 7, 4}, {2, 3, 5, 4})},
      {"Gemm_trans_alpha_beta_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {5, 7}));
         in(c, rnd(r, dt, {6, 5}), true);
         in(c, rnd(r, dt, {6}));
         c.nb.output(dt, {7, 6})
             .attr_int("transA", 1)
             .attr_int("transB", 1)
             .attr_float("alpha", 0.5)
             .attr_float("beta", 2.0);
       }},
      {"Gemm_trans_only",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {5, 7}));
         in(c, rnd(r, dt, {6, 5}));
         c.nb.output(dt, {7, 6}).attr_int("transA", 1).attr_int("transB", 1);
       }},
      {"Gemm_alpha_beta_C_rows",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {7, 5}));
         in(c, rnd(r, dt, {5, 6}));
         in(c, rnd(r, dt, {7, 1}));
         c.nb.output(dt, {7, 6}).attr_float("alpha", 0.5).attr_float("beta", 2.0);
       }},
      {"Gemm_full_C",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {7, 5}));
         in(c, rnd(r, dt, {5, 6}));
         in(c, rnd(r, dt, {7, 6}));
         c.nb.output(dt, {7, 6});
       }},
      {"Gemm_no_C_alpha",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {3, 9}));
         in(c, rnd(r, dt, {9, 4}));
         c.nb.output(dt, {3, 4}).attr_float("alpha", -1.5);
       }},
      {"Relu", unary("Relu", {3, 5, 7})},
      {"Sigmoid", unary("Sigmoid", {3, 5, 7})},
      {"Tanh", unary("Tanh", {3, 5, 7})},
      {"Gelu_erf", unary("Gelu", {3, 5, 7})},
      {"Gelu_tanh", unary("Gelu", {3, 5, 7}, [](NodeBuilder& b) {
         b.attr_str("approximate", "tanh");
       })},
      {"Clip", unary("Clip", {3, 5, 7}, [](NodeBuilder& b) {
         b.attr_float("min", -0.3).attr_float("max", 0.5);
       })},
      {"Add_broadcast", binary("Add", {2, 3, 4}, {3, 1}, {2, 3, 4})},
      {"Add_first_broadcasts", binary("Add", {3, 1}, {2, 3, 4}, {2, 3, 4})},
      {"Sub_broadcast", binary("Sub", {2, 3, 4}, {4}, {2, 3, 4})},
      {"Sub_first_broadcasts", binary("Sub", {3, 1}, {2, 3, 4}, {2, 3, 4})},
      {"Mul_first_broadcasts", binary("Mul", {1, 4}, {3, 4}, {3, 4})},
      {"Div", binary("Div", {2, 3, 5}, {2, 3, 5}, {2, 3, 5})},
      {"Softmax_axis1", unary("Softmax", {3, 4, 5}, [](NodeBuilder& b) { b.attr_int("axis", 1); })},
      {"Softmax_last", unary("Softmax", {3, 4, 5})},
      {"BatchNorm",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BatchNorm", "bn");
         in(c, rnd(r, dt, {2, 3, 5, 4}));
         in(c, rnd(r, dt, {3}), true);
         in(c, rnd(r, dt, {3}), true);
         in(c, rnd(r, dt, {3}));
         std::vector<double> var{0.5, 1.25, 2.0};
         in(c, Tensor::of(dt, {3}, var));
         c.nb.output(dt, {2, 3, 5, 4}).attr_float("epsilon", 1e-3);
       }},
      {"BatchNorm_2d",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("BatchNorm", "bn");
         in(c, rnd(r, dt, {5, 3}));
         for (int i = 0; i < 3; ++i) in(c, rnd(r, dt, {3}));
         in(c, Tensor::of(dt, {3}, {0.25, 1.0, 3.0}));
         c.nb.output(dt, {5, 3});
       }},
      {"LayerNorm_last_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNorm", "ln");
         in(c, rnd(r, dt, {2, 3, 8}));
         in(c, rnd(r, dt, {8}));
         in(c, rnd(r, dt, {8}));
         c.nb.output(dt, {2, 3, 8});
       }},
      {"LayerNorm_axis1_no_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNorm", "ln");
         in(c, rnd(r, dt, {2, 3, 8}));
         in(c, rnd(r, dt, {3, 8}));
         c.nb.output(dt, {2, 3, 8}).attr_int("axis", 1).attr_float("epsilon", 1e-4);
       }},
      {"MaxPool_ceil", pool("MaxPool", 1, 0)},
      {"AveragePool_ceil_exclude", pool("AveragePool", 1, 0)},
      {"AveragePool_include_pad",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("AveragePool", "ap");
         in(c, rnd(r, dt, {1, 3, 6, 7}));
         c.nb.output(dt, {1, 3, 4, 4})
             .attr_ints("kernel_shape", {2, 3})
             .attr_ints("strides", {2, 2})
             .attr_ints("pads", {1, 1, 1, 1})
             .attr_int("count_include_pad", 1);
       }},
      {"GlobalAveragePool",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("GlobalAveragePool", "gap");
         in(c, rnd(r, dt, {2, 3, 5, 6}));
         c.nb.output(dt, {2, 3, 1, 1});
       }},
      {"ReduceMean_axis1_keep",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceMean", "rm");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {2, 1, 4}).attr_ints("axes", {1});
       }},
      {"ReduceSum_axes_drop",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceSum", "rs");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {3}).attr_ints("axes", {0, -1}).attr_int("keepdims", 0);
       }},
      {"ReduceMean_all",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceMean", "rm");
         in(c, rnd(r, dt, {3, 5}));
         c.nb.output(dt, {1, 1});
       }},
      {"Transpose_perm",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Transpose", "t");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {4, 2, 3}).attr_ints("perm", {2, 0, 1});
       }},
      {"Transpose_default",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Transpose", "t");
         in(c, rnd(r, dt, {2, 3, 5}));
         c.nb.output(dt, {5, 3, 2});
       }},
      {"Concat",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Concat", "cat");
         in(c, rnd(r, dt, {2, 3, 4}));
         in(c, rnd(r, dt, {2, 1, 4}));
         in(c, rnd(r, dt, {2, 2, 4}));
         c.nb.output(dt, {2, 6, 4}).attr_int("axis", 1);
       }},
      {"Reshape",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Reshape", "r");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {4, 6}).attr_ints("shape", {4, -1});
       }},
      {"Flatten",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Flatten", "f");
         in(c, rnd(r, dt, {2, 3, 4}));
         c.nb.output(dt, {2, 12});
       }},
      {"Dropout", unary("Dropout", {3, 7})},
      {"Slice",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Slice", "s");
         in(c, rnd(r, dt, {4, 6}));
         c.nb.output(dt, {2, 2})
             .attr_ints("starts", {1, -1})
             .attr_ints("ends", {3, 0})
             .attr_ints("axes", {0, 1})
             .attr_ints("steps", {1, -3});
       }},
      {"Gemm_multi_tile_bias_row",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {70, 45}));
         in(c, rnd(r, dt, {33, 45}), true);
         in(c, rnd(r, dt, {33}), true);
         c.nb.output(dt, {70, 33}).attr_int("transB", 1);
       }},
      {"MatMul_multi_tile", binary("MatMul", {3, 67, 40}, {40, 81}, {3, 67, 81})},
      // K and N multiples of 4: the register-blocked kernel's 4-wide loads
      // (gemm_cpu.comp modes 1 and 2), with ragged M and N edges.
      {"MatMul_vec4_rows", binary("MatMul", {2, 37, 44}, {44, 52}, {2, 37, 52})},
      // More than 3 workgroups in x and y for either kernel family.
      {"MatMul_wide_grid", binary("MatMul", {2, 200, 8}, {8, 300}, {2, 200, 300})},
      {"Gemm_vec4_transB_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {29, 36}));
         in(c, rnd(r, dt, {21, 36}), true);
         in(c, rnd(r, dt, {21}), true);
         c.nb.output(dt, {29, 21}).attr_int("transB", 1);
       }},
      {"Conv2d_depthwise_multiplier",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "dw");
         in(c, rnd(r, dt, {2, 3, 9, 7}));
         in(c, rnd(r, dt, {6, 1, 3, 3}), true);
         in(c, rnd(r, dt, {6}), true);
         c.nb.output(dt, {2, 6, 5, 4})
             .attr_ints("strides", {2, 2})
             .attr_ints("pads", {1, 1, 1, 1})
             .attr_int("group", 3);
       }},
      {"Conv2d_multi_tile",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {1, 5, 11, 13}));
         in(c, rnd(r, dt, {70, 5, 3, 3}), true);
         c.nb.output(dt, {1, 70, 11, 13}).attr_ints("pads", {1, 1, 1, 1});
       }},
      {"Softmax_long_rows", unary("Softmax", {3, 301})},
      {"LayerNorm_long_rows",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNorm", "ln");
         in(c, rnd(r, dt, {3, 203}));
         in(c, rnd(r, dt, {203}));
         in(c, rnd(r, dt, {203}));
         c.nb.output(dt, {3, 203});
       }},
      {"Relu_many_groups", unary("Relu", {3, 333, 7})},
      {"Gather_i32_axis1",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gather", "g");
         in(c, rnd(r, dt, {2, 5, 3}));
         in(c, Tensor::of(AMPX_DTYPE_I32, {3}, {4, -5, 2}));
         c.nb.output(dt, {2, 3, 3}).attr_int("axis", 1);
       }},
      {"Gather",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gather", "g");
         in(c, rnd(r, dt, {5, 3}));
         in(c, Tensor::of(I64, {2, 2}, {4, 0, -1, 2}));
         c.nb.output(dt, {2, 2, 3});
       }},
  };
  return m;
}

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
         op == "Transpose" || op == "Concat";
}

const char* support_str(ampx_support s) {
  return s == AMPX_SUPPORT_NATIVE     ? "native"
         : s == AMPX_SUPPORT_EMULATED ? "emulated"
                                      : "unsupported";
}

// Runs every case on `vk` and checks answers and results. `f16` is what the
// f16 answers must be on this (possibly masked) device.
void check_case(const Plugin& vk, const Plugin& ref, const std::string& name, ampx_support f16) {
  const Maker& make = cases().at(name);
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
    const ampx_support want = dt == F32   ? AMPX_SUPPORT_NATIVE
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
      if (is_data_movement(c.nb.op_type())) {
        expect_bits_equal(got[i], want_out[i]);
      } else {
        expect_close(got[i], want_out[i].values(), name + " (" + cap.note + ")");
      }
    }
  }
}

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
  return n;
}

INSTANTIATE_TEST_SUITE_P(All, VulkanOps, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

// Sets an environment variable for one scope (the plugin reads it at create).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

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
  for (const char* name : {"Conv2d_bias_stride_pad_dilation", "Conv2d_depthwise_multiplier",
                           "MatMul_batch_broadcast", "Gemm_trans_alpha_beta_bias", "Relu",
                           "Gelu_erf", "Add_broadcast", "Softmax_axis1", "LayerNorm_last_bias",
                           "BatchNorm", "MaxPool_ceil", "ReduceMean_axis1_keep", "Transpose_perm"})
    check_case(vk, ref, name, AMPX_SUPPORT_EMULATED);
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
}

// No 16-bit storage at all: f16 is unsupported, f32 unaffected.
TEST(VulkanMasked, No16BitStorageMeansUnsupported) {
  ScopedEnv mask("AMPX_VULKAN_MASK_FEATURES", "shaderFloat16,storageBuffer16BitAccess");
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  for (const char* name : {"Gemm_no_C_alpha", "Sigmoid", "Concat"})
    check_case(vk, ref, name, AMPX_SUPPORT_UNSUPPORTED);
  expect_no_validation_errors(vk);
}

// Grids beyond maxComputeWorkGroupCount (capped to 3 here) are split into
// several vkCmdDispatchBase calls; results are unchanged.
TEST(VulkanDispatch, SplitsBeyondMaxWorkGroupCount) {
  ScopedEnv cap("AMPX_VULKAN_MAX_WORKGROUPS", "3");
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  for (const char* name : {"Relu_many_groups", "MatMul_multi_tile", "MatMul_wide_grid",
                           "Conv2d_multi_tile", "Softmax_long_rows", "Transpose_perm"})
    check_case(vk, ref, name, real_f16_answer(vk));
  expect_no_validation_errors(vk);
}

// Both GEMM/conv kernel families on one device: the tiled shared-memory
// kernels GPUs get and the register-blocked ones CPU drivers get.
TEST(VulkanKernels, TiledAndBlockedGemmBothMatchCpuRef) {
  for (const char* kind : {"tiled", "blocked"}) {
    SCOPED_TRACE(kind);
    ScopedEnv k("AMPX_VULKAN_GEMM_KERNEL", kind);
    Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
    AMPX_SKIP_WITHOUT_VULKAN(vk);
    for (const char* name :
         {"MatMul_2d", "MatMul_batch_broadcast", "MatMul_multi_tile", "MatMul_vec4_rows",
          "Gemm_trans_alpha_beta_bias", "Gemm_multi_tile_bias_row", "Gemm_vec4_transB_bias",
          "Conv2d_bias_stride_pad_dilation", "Conv2d_grouped_constant_weights",
          "Conv2d_multi_tile"})
      check_case(vk, ref, name, real_f16_answer(vk));
    expect_no_validation_errors(vk);
  }
}

// Cast f32 <-> f16 rounds like cpu_ref (bitwise); other casts are answered
// unsupported, never faked.
TEST(VulkanCast, F32F16MatchesCpuRefBitwise) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  const std::vector<std::pair<ampx_dtype, ampx_dtype>> pairs = {
      {F32, F16}, {F16, F32}, {F32, F32}, {F32, BF16}, {F32, I64}, {I64, F32}};
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

}  // namespace
}  // namespace ampx::test
