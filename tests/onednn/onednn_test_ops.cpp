// Every op of docs/OPS.md x {f32, f16, bf16} on onednn:0 against cpu_ref:
// whatever the plugin claims it runs (native or emulated) must match the
// reference within tolerance(dtype); f32 must run everywhere (the training
// ops with a backward primitive on it, the others on plain loops), the
// later ONNX ops (opset::is_reference_only) in every dtype; 16-bit compute
// is never `native` on a CPU without 16-bit hardware.
#include <functional>
#include <iostream>
#include <map>

#include "ampx/opset/catalogue.hpp"
#include "onednn_harness.hpp"
#include "op_cases.hpp"
#include "ops.hpp"
#include "rnn_kernel.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;

class OnednnOps : public OnednnVsRef<OnednnOps, ::testing::TestWithParam<std::string>> {
 public:
  static constexpr const char* kOptions = nullptr;
};

using opset::is_data_movement;

TEST_P(OnednnOps, MatchesCpuRefWhereverItRuns) {
  const Maker& make = cases().at(GetParam());
  for (ampx_dtype dt : {F32, F16, BF16}) {
    SCOPED_TRACE(std::string(dtype_str(dt)));
    Rng rng(17);
    Case c;
    make(rng, dt, c);
    const ampx_capability cap = onednn_->capability(c.nb);
    const ampx_capability ref_cap = ref_->capability(c.nb);
    std::cout << "[ answer   ] " << GetParam() << " " << dtype_str(dt) << ": "
              << (cap.support == AMPX_SUPPORT_NATIVE     ? "native"
                  : cap.support == AMPX_SUPPORT_EMULATED ? "emulated"
                                                         : "unsupported")
              << " (" << cap.note << ")\n";
    ASSERT_NE(ref_cap.support, AMPX_SUPPORT_UNSUPPORTED) << "bad test case: " << ref_cap.note;
    if (is_reference_only_op(c.nb.op_type())) {
      // The later ONNX ops run here in every dtype cpu_ref runs them in: a
      // oneDNN primitive or the reference loop (onednn_test_later_ops.cpp;
      // LSTM, GRU and RNN: onednn_test_recurrent.cpp).
      EXPECT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << "must run: " << cap.note;
    } else if (dt == F32) {
      EXPECT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << "f32 must run: " << cap.note;
    }
    if (is_data_movement(c.nb.op_type())) {
      // Bytes moved, exact in every dtype: native in each (on every ISA),
      // and the reference backend agrees (GatherElements, GatherND and
      // ScatterND included: the loop).
      EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
      EXPECT_EQ(ref_cap.support, AMPX_SUPPORT_NATIVE) << ref_cap.note;
    }
    if (c.nb.op_type() == "LayerNorm" && dt == F32) {
      // oneDNN's one CPU layer norm (simple_layer_normalization, jit inside)
      // is its fast path, not a reference kernel.
      EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
    }
    if (opset::is_training_op(c.nb.op_type()) && dt == F32) {
      // The backward primitives (ops_backward.cpp, train_kernels.hpp) where
      // oneDNN 2.6 has one; the loss, SliceGrad, GatherGrad, DropoutTraining
      // and the optimizer updates stay plain loops.
      // (A loop too where oneDNN has only its reference kernel, saying so.)
      const std::string note = cap.note;
      const bool loop = note.find("plain loop") != std::string::npos;
      const bool ref_only = note.find("oneDNN has ") != std::string::npos;
      EXPECT_EQ(loop && !ref_only, !onednn::has_training_primitive(c.nb.op_type())) << note;
    }
    // The optimizer updates' cases are f32 in every dtype (f32-only ops),
    // Not/And/Or bool, Mod's integer case i64: no 16-bit tensor in them.
    bool node16 = false;
    const ampx_node_desc& nd = c.nb.desc();
    for (size_t i = 0; i < nd.num_inputs; ++i)
      node16 |= nd.inputs[i].dtype == F16 || nd.inputs[i].dtype == BF16;
    for (size_t i = 0; i < nd.num_outputs; ++i)
      node16 |= nd.outputs[i].dtype == F16 || nd.outputs[i].dtype == BF16;
    if (dt != F32 && node16 && !is_data_movement(c.nb.op_type())) {
      // oneDNN 2.6 has no f16/bf16 arithmetic below AVX-512, so 16-bit
      // compute is never native there. From AVX-512 on it may be (emulated
      // bf16 jit kernels on avx512_core, real ones with AVX512-BF16 and
      // AMX): there only the results are checked, below.
      const std::string fp = [&] {
        ampx_device_props props{};
        props.struct_size = sizeof props;
        onednn_->ok(onednn_->api->device_props(onednn_->plugin, 0, &props));
        return std::string(props.fingerprint);
      }();
      const bool below_avx512 =
          fp.find("/sse41/") != std::string::npos || fp.find("/avx/") != std::string::npos ||
          fp.find("/avx2/") != std::string::npos || fp.find("/avx2_vnni/") != std::string::npos;
      if (below_avx512) {
        EXPECT_NE(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
      }
    }
    if (cap.support == AMPX_SUPPORT_UNSUPPORTED) {
      EXPECT_STRNE(cap.note, "") << "unsupported needs a reason";
      // ... and prepare refuses it with a status saying so.
      ampx_kernel* k = nullptr;
      onednn_->fails(onednn_->api->kernel_prepare(onednn_->plugin, 0, &c.nb.desc(), &k),
                     AMPX_STATUS_UNSUPPORTED, "node '");
      continue;
    }
    const auto got = run_on(*onednn_, c.nb, c.inputs);
    const auto want = run_on(*ref_, c.nb, c.inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].dtype, want[i].dtype);
      if (is_data_movement(c.nb.op_type())) {
        expect_bits_equal(got[i], want[i]);
      } else {
        expect_close(got[i], want[i].values(), GetParam() + " (" + cap.note + ")");
      }
    }
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> n;
  for (const auto& [name, make] : cases()) n.push_back(name);
  return n;
}

INSTANTIATE_TEST_SUITE_P(All, OnednnOps, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

// Cast between the three float types is a oneDNN reorder; to and from
// integers a plain loop. Bitwise equal to cpu_ref (round to nearest even).
TEST(OnednnCast, MatchesCpuRefBitwise) {
  Plugin onednn(plugin_path("onednn")), ref(plugin_path("cpu_ref"));
  const std::vector<std::pair<ampx_dtype, ampx_dtype>> pairs = {
      {F32, F16}, {F16, F32}, {F32, BF16}, {BF16, F32}, {F16, BF16}, {F32, I64}, {I64, F32}};
  for (const auto& [from, to] : pairs) {
    SCOPED_TRACE(std::string(dtype_str(from)) + "->" + dtype_str(to));
    Rng rng(5);
    Case c;
    c.nb = NodeBuilder("Cast", "cast");
    in(c, random_tensor(rng, from, {3, 7, 5}, 100.0));
    c.nb.output(to, {3, 7, 5}).attr_int("to", to);
    const ampx_capability cap = onednn.capability(c.nb);
    if (cap.support == AMPX_SUPPORT_UNSUPPORTED) {
      // oneDNN 2.6 has no f16<->bf16 reorder: measured, so answered honestly.
      EXPECT_TRUE(from == F16 && to == BF16) << "Cast unsupported: " << cap.note;
      EXPECT_NE(std::string(cap.note).find("reorder"), std::string::npos) << cap.note;
      continue;
    }
    expect_bits_equal(run_on(onednn, c.nb, c.inputs)[0], run_on(ref, c.nb, c.inputs)[0]);
  }
}

// Integer shape arithmetic runs as plain loops (oneDNN's s32 binary would
// round Div, ONNX truncates): bitwise the reference's results.
TEST(OnednnIntegers, ShapeArithmeticMatchesCpuRef) {
  Plugin onednn(plugin_path("onednn")), ref(plugin_path("cpu_ref"));
  for (ampx_dtype dt : {I64, AMPX_DTYPE_I32}) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Equal", "Neg"}) {
      SCOPED_TRACE(std::string(op) + " " + dtype_str(dt));
      Case c;
      c.nb = NodeBuilder(op, "n");
      in(c, Tensor::of(dt, {2, 3}, {7, -7, 9, 0, 100, -5}));
      const bool unary = std::string(op) == "Neg";
      if (!unary) in(c, Tensor::of(dt, {3}, {2, 2, -4}));
      c.nb.output(std::string(op) == "Equal" ? AMPX_DTYPE_BOOL : dt, {2, 3});
      const ampx_capability cap = onednn.capability(c.nb);
      EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
      EXPECT_STREQ(cap.note, "plain loop");
      expect_bits_equal(run_on(onednn, c.nb, c.inputs)[0], run_on(ref, c.nb, c.inputs)[0]);
    }
  }
}

}  // namespace
}  // namespace ampx::test
