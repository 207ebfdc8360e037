// Every op of docs/OPS.md x {f32, f16, bf16} on cuda:0 against cpu_ref:
// whatever the plugin claims it runs (native or emulated) must match the
// reference within tolerance(dtype), data movement bit for bit; f32 must run
// everywhere; on sm_80+ every compute op is native in f16 and bf16 except
// convolutions cuDNN cannot take (asymmetric pads, or cuDNN off), which are
// `emulated` by the direct kernel. The training ops of the catalogue
// (add_training_cases) are held to the same rules where the plugin has a
// kernel, and must be declined where it has none. Without a GPU every test
// skips with the plugin's reason.
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "cuda_harness.hpp"
#include "cuda_onnx_ops.hpp"
#include "op_cases.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;

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

// Integer tensors other than i64/i32 (i8, i16, u8 to u64): the CUDA kernels
// compute and cast none of them; only the bit copies move them.
bool has_narrow_integer(const ampx_node_desc& d) {
  const auto narrow = [](ampx_dtype dt) {
    return plugin_support::is_integer_dtype(dt) && dt != AMPX_DTYPE_I64 && dt != AMPX_DTYPE_I32;
  };
  for (size_t i = 0; i < d.num_inputs; ++i)
    if (narrow(d.inputs[i].dtype)) return true;
  for (size_t i = 0; i < d.num_outputs; ++i)
    if (narrow(d.outputs[i].dtype)) return true;
  return false;
}

// The training ops the plugin has kernels for (src/ops_registry.cpp), in
// f32/f16/bf16 (the updates f32 only). Every other training op is declined
// and runs on the fallback device.
bool cuda_runs_training_op(const std::string& op) {
  static const std::set<std::string> kOps = {"ReluGrad",
                                             "SigmoidGrad",
                                             "TanhGrad",
                                             "GeluGrad",
                                             "ClipGrad",
                                             "SoftmaxGrad",
                                             "LayerNormGrad",
                                             "BatchNormTraining",
                                             "BatchNormGrad",
                                             "Conv2dGradWeight",
                                             "MaxPoolGrad",
                                             "AveragePoolGrad",
                                             "SoftmaxCrossEntropy",
                                             "SoftmaxCrossEntropyGrad",
                                             "SgdUpdate",
                                             "AdamUpdate",
                                             "UpdateGuard"};
  return kOps.count(op) > 0;
}

// The importer's ops (op_cases::is_importer_op) the plugin has kernels for
// (src/ops_registry.cpp), in f32/f16/bf16; every other one is declined.
bool cuda_runs_importer_op(const std::string& op) {
  static const std::set<std::string> kOps = {"Attention", "LinearAttention", "GridSample", "Det"};
  return kOps.count(op) > 0;
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
    // No fused epilogues in the CUDA kernels yet, no kernels for the
    // importer's ops nor for some training ops: declined in every dtype.
    const std::string& op = c.nb.op_type();
    // The later ONNX ops with a kernel here (cuda_onnx_ops.hpp) run, the
    // bit ops, BitCast and CumProd in every integer dtype too.
    const bool declined =
        is_epilogue_case(name) ||
        (is_importer_op(op) && !cuda_runs_onnx_op(op) && !cuda_runs_importer_op(op)) ||
        is_dilated_pool_case(name) || (is_training_op(op) && !cuda_runs_training_op(op)) ||
        (!is_data_movement(op) && !cuda_runs_onnx_integer_op(op) &&
         has_narrow_integer(c.nb.desc()));
    if (declined) {
      EXPECT_EQ(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
    } else if (dt == F32) {
      EXPECT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << "f32 must run: " << cap.note;
    }
    if (dt != F32 && cc >= 80 && !declined) {
      // The weight gradient takes the same path as the forward convolution.
      const bool direct_conv =
          (op == "Conv2d" || op == "Conv2dGradWeight") && (!cudnn || asymmetric_pads(c.nb));
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
      // Integer results (the bit ops, BitCast, MaxPoolIndices' indices,
      // integer CumProd) are exact.
      if (is_data_movement(op) || plugin_support::is_integer_dtype(got[i].dtype)) {
        expect_bits_equal(got[i], want[i]);
      } else {
        expect_close(got[i], want[i].values(), name + " (" + cap.note + ")");
      }
    }
  }
}

TEST_P(CudaOps, MatchesCpuRefWhereverItRuns) {
  check_case(*cuda_, *ref_, GetParam(), true);
  // Convolutions (Conv2dGradWeight included) once more on the direct
  // kernel (cuDNN not loaded).
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
