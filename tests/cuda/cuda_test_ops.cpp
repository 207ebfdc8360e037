// Every op of docs/OPS.md x {f32, f16, bf16} on cuda:0 against cpu_ref:
// whatever the plugin claims it runs (native or emulated) must match the
// reference within tolerance(dtype), data movement bit for bit; f32 must run
// everywhere; on sm_80+ every compute op is native in f16 and bf16 except
// convolutions cuDNN cannot take (asymmetric pads, or cuDNN off), which are
// `emulated` by the direct kernel. Without a GPU every test skips with the
// plugin's reason.
#include <functional>
#include <iostream>
#include <map>

#include "cuda_harness.hpp"

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
      {"Gather",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gather", "g");
         in(c, rnd(r, dt, {5, 3}));
         in(c, Tensor::of(I64, {2, 2}, {4, 0, -1, 2}));
         c.nb.output(dt, {2, 2, 3});
       }},
      // Bigger shapes: tensor-core GEMM paths (bias epilogue, folded batch,
      // strided batch), cuDNN convolution, multi-warp block reductions.
      {"Gemm_bias_epilogue_large",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "gemm");
         in(c, rnd(r, dt, {96, 320}));
         in(c, rnd(r, dt, {200, 320}), true);
         in(c, rnd(r, dt, {200}), true);
         c.nb.output(dt, {96, 200}).attr_int("transB", 1);
       }},
      {"MatMul_folded_batch", binary("MatMul", {4, 33, 128}, {128, 72}, {4, 33, 72})},
      {"MatMul_strided_batch", binary("MatMul", {3, 32, 48}, {3, 48, 40}, {3, 32, 40})},
      {"Conv2d_cudnn_3x3_bias",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2d", "conv");
         in(c, rnd(r, dt, {2, 32, 12, 12}));
         in(c, rnd(r, dt, {48, 32, 3, 3}, 0.2), true);
         in(c, rnd(r, dt, {48}), true);
         c.nb.output(dt, {2, 48, 12, 12}).attr_ints("pads", {1, 1, 1, 1});
       }},
      {"Softmax_long_row", unary("Softmax", {6, 1000})},
      {"LayerNorm_wide",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNorm", "ln");
         in(c, rnd(r, dt, {16, 1024}));
         in(c, rnd(r, dt, {1024}));
         in(c, rnd(r, dt, {1024}));
         c.nb.output(dt, {16, 1024});
       }},
      {"ReduceSum_long",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceSum", "rs");
         in(c, rnd(r, dt, {8, 3000}));
         c.nb.output(dt, {8, 1}).attr_ints("axes", {1});
       }},
      {"Relu_vectorised_tail", unary("Relu", {1027})},
      {"Add_same_shape_vectorised", binary("Add", {4, 257}, {4, 257}, {4, 257})},
  };
  return m;
}

class CudaOps : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { AMPX_REQUIRE_CUDA_DEVICE(); }
  static void SetUpTestSuite() {
    if (!no_device_reason().empty()) return;
    cuda_ = new Plugin(plugin_path("cuda"));
    no_cudnn_ = new Plugin(plugin_path("cuda"), "cudnn=off");
    ref_ = new Plugin(plugin_path("cpu_ref"));
  }
  static void TearDownTestSuite() {
    delete cuda_;
    delete no_cudnn_;
    delete ref_;
    cuda_ = no_cudnn_ = ref_ = nullptr;
  }
  static Plugin* cuda_;
  static Plugin* no_cudnn_;
  static Plugin* ref_;
};
Plugin* CudaOps::cuda_ = nullptr;
Plugin* CudaOps::no_cudnn_ = nullptr;
Plugin* CudaOps::ref_ = nullptr;

bool is_data_movement(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Dropout" || op == "Slice" || op == "Gather" ||
         op == "Transpose" || op == "Concat";
}

bool asymmetric_pads(NodeBuilder& nb) {
  const ampx_node_desc& d = nb.desc();
  for (size_t i = 0; i < d.num_attrs; ++i) {
    const ampx_attr& a = d.attrs[i];
    if (std::string(a.name) == "pads" && a.count == 4)
      return a.ints[0] != a.ints[2] || a.ints[1] != a.ints[3];
  }
  return false;
}

// One plugin instance, one case, all three dtypes.
void check_case(const Plugin& dev, const Plugin& ref, const std::string& name, bool cudnn) {
  const Maker& make = cases().at(name);
  const int cc = compute_capability(dev);
  for (ampx_dtype dt : {F32, F16, BF16}) {
    SCOPED_TRACE(std::string(dtype_str(dt)) + (cudnn ? "" : " cudnn=off"));
    Rng rng(17);
    Case c;
    make(rng, dt, c);
    const ampx_capability cap = dev.capability(c.nb);
    const ampx_capability ref_cap = ref.capability(c.nb);
    std::cout << "[ answer   ] " << name << " " << dtype_str(dt) << (cudnn ? "" : " cudnn=off")
              << ": " << support_name(cap.support) << " (" << cap.note << ")\n";
    ASSERT_NE(ref_cap.support, AMPX_SUPPORT_UNSUPPORTED) << "bad test case: " << ref_cap.note;
    if (dt == F32) {
      EXPECT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << "f32 must run: " << cap.note;
    }
    const std::string& op = c.nb.op_type();
    if (dt != F32 && cc >= 80) {
      const bool direct_conv = op == "Conv2d" && (!cudnn || asymmetric_pads(c.nb));
      EXPECT_EQ(cap.support, direct_conv ? AMPX_SUPPORT_EMULATED : AMPX_SUPPORT_NATIVE) << cap.note;
    }
    if (cap.support == AMPX_SUPPORT_UNSUPPORTED) {
      EXPECT_STRNE(cap.note, "") << "unsupported needs a reason";
      ampx_kernel* k = nullptr;
      dev.fails(dev.api->kernel_prepare(dev.plugin, 0, &c.nb.desc(), &k), AMPX_STATUS_UNSUPPORTED,
                "node '");
      continue;
    }
    const auto got = run_on(dev, c.nb, c.inputs);
    const auto want = run_on(ref, c.nb, c.inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].dtype, want[i].dtype);
      if (is_data_movement(op)) {
        expect_bits_equal(got[i], want[i]);
      } else {
        expect_close(got[i], want[i].values(), name + " (" + cap.note + ")");
      }
    }
  }
}

TEST_P(CudaOps, MatchesCpuRefWhereverItRuns) {
  check_case(*cuda_, *ref_, GetParam(), true);
  // Convolutions once more on the direct kernel (cuDNN not loaded).
  if (GetParam().rfind("Conv2d", 0) == 0) check_case(*no_cudnn_, *ref_, GetParam(), false);
}

std::vector<std::string> case_names() {
  std::vector<std::string> n;
  for (const auto& [name, make] : cases()) n.push_back(name);
  return n;
}

INSTANTIATE_TEST_SUITE_P(All, CudaOps, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

// Cast between the float types and to/from integers: bitwise equal to
// cpu_ref (round to nearest even, truncation toward zero).
TEST(CudaCast, MatchesCpuRefBitwise) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin cuda(plugin_path("cuda")), ref(plugin_path("cpu_ref"));
  const std::vector<std::pair<ampx_dtype, ampx_dtype>> pairs = {
      {F32, F16},  {F16, F32}, {F32, BF16}, {BF16, F32},           {F16, BF16},
      {BF16, F16}, {F32, I64}, {I64, F32},  {F16, AMPX_DTYPE_I32}, {F32, F32}};
  for (const auto& [from, to] : pairs) {
    SCOPED_TRACE(std::string(dtype_str(from)) + "->" + dtype_str(to));
    Rng rng(5);
    Case c;
    c.nb = NodeBuilder("Cast", "cast");
    in(c, random_tensor(rng, from, {3, 7, 5}, 100.0));
    c.nb.output(to, {3, 7, 5}).attr_int("to", to);
    const ampx_capability cap = cuda.capability(c.nb);
    ASSERT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
    expect_bits_equal(run_on(cuda, c.nb, c.inputs)[0], run_on(ref, c.nb, c.inputs)[0]);
  }
  // Integer -> 16-bit needs a rounding guard the kernel does not have: said so.
  NodeBuilder nb("Cast", "cast");
  nb.input(I64, {4}).output(F16, {4}).attr_int("to", F16);
  const ampx_capability cap = cuda.capability(nb);
  EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(std::string(cap.note).find("i64 -> f16"), std::string::npos) << cap.note;
}

}  // namespace
}  // namespace ampx::test
