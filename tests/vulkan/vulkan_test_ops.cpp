// Every op of docs/OPS.md x {f32, f16, bf16} on vulkan:0 against cpu_ref:
// f32 runs everywhere (`native`); f16 is `native` exactly when the device
// has shaderFloat16 and 16-bit storage, `emulated` with storage alone; bf16
// is `unsupported` (no BF16 extension is used). Whatever runs matches cpu_ref
// within tolerance(dtype); data movement is bit-exact. Shapes are odd and
// include several GEMM tiles and long softmax/LayerNorm rows.
#include <functional>
#include <iostream>
#include <map>

#include "op_cases.hpp"
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
    // No epilogue shaders yet: fused nodes are declined in every dtype; so
    // are the importer's ops (no shaders for them yet).
    const ampx_support want = is_epilogue_case(name) || is_importer_op(c.nb.op_type())
                                  ? AMPX_SUPPORT_UNSUPPORTED
                              : dt == F32 ? AMPX_SUPPORT_NATIVE
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
