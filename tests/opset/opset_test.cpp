// The op set as the one definition of docs/OPS.md: the catalogue, the
// output-type rules, validation of node descriptions (what every backend
// and the frontend rely on), work estimates and the tolerances.
#include <ampx/opset/catalogue.hpp>
#include <ampx/opset/tolerances.hpp>
#include <ampx/opset/validate.hpp>
#include <ampx/opset/work.hpp>
#include <ampx/plugin_check/op_cases.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>

namespace ampx::opset {
namespace {

using check::NodeBuilder;
constexpr ampx_dtype F32 = AMPX_DTYPE_F32, F16 = AMPX_DTYPE_F16, BF16 = AMPX_DTYPE_BF16;

std::string why_invalid(NodeBuilder& b) {
  std::string why;
  EXPECT_FALSE(is_valid(b.desc(), &why)) << b.op_type();
  EXPECT_EQ(why.rfind("node '" + b.name() + "' (" + b.op_type() + "): ", 0), 0u) << why;
  return why;
}

#define EXPECT_INVALID(builder, part)                                                         \
  do {                                                                                        \
    const std::string w_ = why_invalid(builder);                                              \
    EXPECT_NE(w_.find(part), std::string::npos) << w_ << "\n  expected to contain: " << part; \
  } while (0)

NodeBuilder conv(std::vector<int64_t> wdims = {4, 3, 3, 3}, std::vector<int64_t> y = {1, 4, 6, 6}) {
  NodeBuilder b("Conv2d", "conv1");
  b.input(F32, {1, 3, 8, 8}).input(F32, std::move(wdims)).output(F32, std::move(y));
  return b;
}

TEST(Catalogue, NamesAreUniqueAndFound) {
  std::set<std::string_view> names;
  for (const OpDef& op : all_ops()) {
    EXPECT_TRUE(names.insert(op.name).second) << op.name;
    EXPECT_EQ(find_op(op.name), &op);
    EXPECT_GE(op.min_inputs, 1) << op.name;
    EXPECT_TRUE(op.max_inputs < 0 || op.max_inputs >= op.min_inputs) << op.name;
  }
  EXPECT_EQ(find_op("FancyAttention"), nullptr);
  EXPECT_TRUE(is_data_movement("Transpose"));
  EXPECT_FALSE(is_data_movement("Relu"));
  EXPECT_FALSE(is_data_movement("Cast"));  // converts values
}

// The ops' names as released, in id order, separated by spaces. An id
// never changes and is never reused: the stored tuned plans' model key
// hashes it (tune/tuned_plan_key.cpp). A new op takes the next id: append
// its name.
constexpr std::string_view kReleasedIds =
    "Conv2d MatMul Gemm BatchNorm LayerNorm Softmax Relu Clip Gelu Sigmoid Tanh Add Sub Mul "
    "Div MaxPool AveragePool GlobalAveragePool ReduceMean ReduceSum Reshape Flatten "
    "Transpose Concat Slice Gather Cast Dropout ConvTranspose LeakyRelu PRelu HardSigmoid "
    "HardSwish Erf Pow Sqrt Reciprocal Exp Log Neg LogSoftmax ReduceMax ArgMax Split Expand "
    "Pad Resize Where Equal Floor Ceil Round Abs Softplus Mish Less Greater LessOrEqual "
    "GreaterOrEqual Not And Or Min Max Sum Mean ReduceMin ReduceProd ReduceL2 "
    "ReduceSumSquare ReduceLogSumExp ArgMin Mod CumSum TopK GatherElements GatherND "
    "ScatterND LSTM GRU RNN ReluGrad SigmoidGrad TanhGrad GeluGrad ClipGrad SoftmaxGrad "
    "LayerNormGrad BatchNormTraining BatchNormGrad Conv2dGradWeight MaxPoolGrad "
    "AveragePoolGrad SliceGrad GatherGrad DropoutTraining SoftmaxCrossEntropy "
    "SoftmaxCrossEntropyGrad SgdUpdate AdamUpdate UpdateGuard TensorStats MultiSgdUpdate "
    "MultiAdamUpdate RMSNorm CumProd Attention RotaryEmbedding BitShift BitwiseAnd BitwiseOr "
    "BitwiseXor BitwiseNot BitCast Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh "
    "GridSample LinearAttention MaxPoolIndices Det Col2Im";

TEST(Catalogue, IdsAreStableAndDense) {
  std::vector<std::string_view> released;
  for (size_t at = 0; at < kReleasedIds.size();) {
    const size_t end = std::min(kReleasedIds.find(' ', at), kReleasedIds.size());
    released.push_back(kReleasedIds.substr(at, end - at));
    at = end + 1;
  }
  ASSERT_EQ(kOpCount, released.size())
      << "a new op takes the next free id in ops.inc: append its name to kReleasedIds";
  for (size_t i = 0; i < kOpCount; ++i) {
    const OpDef& op = op_def(static_cast<OpId>(i));
    EXPECT_EQ(static_cast<size_t>(op.id), i);
    EXPECT_EQ(op.name, released[i]) << "id " << i << " changed its op";
    EXPECT_EQ(find_op(op.name), &op);
  }
  EXPECT_EQ(op_def(OpId::kConv2d).name, "Conv2d");
}

// Every op says how the `auto` amp level treats it (docs/PLANNER.md). An op
// added without a category shows up here (and in the planner's warning).
TEST(Catalogue, EveryOpHasAnAmpCategory) {
  EXPECT_EQ(ops_without_amp_category(), std::vector<std::string_view>{});
  EXPECT_EQ(find_op("Conv2d")->amp, AmpCategory::kWhite);
  EXPECT_EQ(find_op("Softmax")->amp, AmpCategory::kBlack);
  EXPECT_EQ(find_op("Add")->amp, AmpCategory::kPromote);
  EXPECT_EQ(find_op("Relu")->amp, AmpCategory::kFollow);
}

// Every case the conformance kit runs is a node of the op set, in every
// dtype it is made in: a malformed case would make every plugin "fail".
TEST(Catalogue, EveryConformanceCaseIsValid) {
  std::set<std::string> ops;
  for (const auto& [name, make] : check::op_cases::cases()) {
    for (const ampx_dtype dt : {F32, F16, BF16}) {
      check::Rng rng(1);
      check::op_cases::Case c;
      make(rng, dt, c);
      std::string why;
      EXPECT_TRUE(is_valid(c.nb.desc(), &why)) << name << " " << dt << ": " << why;
      ops.insert(c.nb.op_type());
    }
  }
  for (const std::string& op : ops) EXPECT_NE(find_op(op), nullptr) << op;
}

TEST(OutputTypes, Conv2dWithStridesPadsDilations) {
  NodeBuilder b("Conv2d", "c");
  b.input(F16, {2, 6, 11, 9}).input(F16, {4, 3, 3, 2}).attr_int("group", 2);
  b.attr_ints("strides", {2, 1}).attr_ints("pads", {1, 0, 1, 1}).attr_ints("dilations", {1, 2});
  const auto out = infer_outputs(b.desc());
  ASSERT_EQ(out.size(), 1u);
  // H: (11 + 2 - 3) / 2 + 1 = 6; W: (9 + 1 - 3) / 1 + 1 = 8.
  EXPECT_EQ(out[0], (TensorSpec{F16, {2, 4, 6, 8}}));
}

TEST(OutputTypes, SplitCastArgMaxEqual) {
  NodeBuilder s("Split", "s");
  s.input(BF16, {4, 6}).attr_int("axis", -1).attr_ints("split", {1, 5});
  EXPECT_EQ(infer_outputs(s.desc()), (std::vector<TensorSpec>{{BF16, {4, 1}}, {BF16, {4, 5}}}));
  NodeBuilder c("Cast", "c");
  c.input(F32, {3}).attr_int("to", AMPX_DTYPE_I64);
  EXPECT_EQ(infer_outputs(c.desc()), (std::vector<TensorSpec>{{AMPX_DTYPE_I64, {3}}}));
  NodeBuilder a("ArgMax", "a");
  a.input(F32, {2, 7, 3}).attr_int("axis", 1).attr_int("keepdims", 0);
  EXPECT_EQ(infer_outputs(a.desc()), (std::vector<TensorSpec>{{AMPX_DTYPE_I64, {2, 3}}}));
  NodeBuilder e("Equal", "e");
  e.input(F32, {2, 1}).input(F32, {3});
  EXPECT_EQ(infer_outputs(e.desc()), (std::vector<TensorSpec>{{AMPX_DTYPE_BOOL, {2, 3}}}));
}

TEST(Validate, AcceptsAndReturnsTheComputeDtype) {
  NodeBuilder b = conv();
  EXPECT_EQ(validate(b.desc()), F32);
  NodeBuilder g("Gather", "g");
  g.input(F16, {5, 2}).input(AMPX_DTYPE_I32, {3}).output(F16, {3, 2});
  EXPECT_EQ(validate(g.desc()), F16);
}

TEST(Validate, StructuralErrorsNameTheProblem) {
  {
    NodeBuilder b = conv({4, 3, 3});
    EXPECT_INVALID(b, "weight must be 4-D");
  }
  {
    NodeBuilder b = conv({4, 2, 3, 3});
    EXPECT_INVALID(b, "does not match input channels 3");
  }
  {
    NodeBuilder b = conv();
    b.attr_ints("pads", {1, 1, 1, 1});
    EXPECT_INVALID(b, "output has shape [1x4x6x6], expected [1x4x8x8]");
  }
  {
    NodeBuilder b = conv();
    b.attr_float("group", 1.0);
    EXPECT_INVALID(b, "attribute 'group' is FLOAT, expected INT");
  }
  {
    NodeBuilder b = conv();
    b.attr_int("grup", 1);
    EXPECT_INVALID(b, "unknown attribute 'grup'");
  }
  {
    NodeBuilder b("Conv2d", "conv1");
    b.input(F32, {1, 3, 8, 8}).output(F32, {1, 4, 6, 6});
    EXPECT_INVALID(b, "has 1 inputs, expected 2 to 4");
  }
  {
    NodeBuilder b("Slice", "s");
    b.input(F32, {4}).output(F32, {4}).attr_ints("ends", {4});
    EXPECT_INVALID(b, "missing required attribute 'starts'");
  }
  {
    NodeBuilder b("Split", "s");
    b.input(F32, {4}).output(F32, {4}).attr_ints("split", {1, 3});
    EXPECT_INVALID(b, "has 1 outputs, expected 2");
  }
  {
    NodeBuilder b("Cast", "c");
    b.input(F32, {3}).output(F16, {3}).attr_int("to", AMPX_DTYPE_BF16);
    EXPECT_INVALID(b, "output is f16, expected bf16");
  }
}

TEST(Validate, HostileAttributeValuesAreErrorsNotOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  {
    NodeBuilder b("Cast", "c");
    b.input(F32, {3}).output(F16, {3}).attr_int("to", kMax);
    EXPECT_INVALID(b, "'to' = 9223372036854775807 is not a dtype");
  }
  {
    NodeBuilder b("Reshape", "r");  // the target's element count overflows
    b.input(F32, {4}).output(F32, {4}).attr_ints("shape", {kMax, kMax, -1});
    EXPECT_INVALID(b, "overflows");
  }
  {
    NodeBuilder b("Conv2d", "c");
    b.input(F32, {1, 1, 4, 4}).input(F32, {1, 1, 2, 2}).output(F32, {1, 1, 1, 1});
    b.attr_ints("dilations", {kMax, 1});
    EXPECT_INVALID(b, "kernel larger than the padded input");
  }
  {
    NodeBuilder b("Slice", "s");
    b.input(F32, {5}).output(F32, {5});
    b.attr_ints("starts", {-1}).attr_ints("ends", {std::numeric_limits<int64_t>::min()});
    b.attr_ints("steps", {-1});
    EXPECT_EQ(validate(b.desc()), F32);  // reversed, all 5
  }
}

TEST(Validate, DtypeRuleIsUnsupportedNotInvalid) {
  {
    NodeBuilder b("Relu", "ints");
    b.input(AMPX_DTYPE_I32, {3}).output(AMPX_DTYPE_I32, {3});
    EXPECT_THROW(validate(b.desc()), UnsupportedNode);
  }
  {
    NodeBuilder b("Conv2d", "conv64");
    b.input(AMPX_DTYPE_F64, {1, 3, 8, 8})
        .input(AMPX_DTYPE_F64, {4, 3, 3, 3})
        .output(AMPX_DTYPE_F64, {1, 4, 6, 6});
    EXPECT_THROW(validate(b.desc()), UnsupportedNode);
  }
  {
    NodeBuilder b("Relu", "relu64");  // elementwise ops take f64
    b.input(AMPX_DTYPE_F64, {3}).output(AMPX_DTYPE_F64, {3});
    EXPECT_EQ(validate(b.desc()), AMPX_DTYPE_F64);
  }
  {
    NodeBuilder b("FancyAttention", "attn");
    b.input(F32, {3}).output(F32, {3});
    EXPECT_THROW(validate(b.desc()), UnsupportedNode);
  }
  {
    NodeBuilder b("Add", "mixed");  // mixed float dtypes are malformed
    b.input(F16, {3}).input(F32, {3}).output(F16, {3});
    try {
      validate(b.desc());
      ADD_FAILURE() << "accepted";
    } catch (const UnsupportedNode&) {
      ADD_FAILURE() << "mixed dtypes are invalid, not unsupported";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("input 1 is f32 but input 0 is f16"), std::string::npos)
          << e.what();
    }
  }
}

// The reference kernels' float64 mode: f64 for every compute op only when
// the caller asks (cpu_ref does; every other backend validates with the
// defaults), never for the f32-only updates.
TEST(Validate, F64ComputeOnlyWhenAsked) {
  const ValidateOptions f64{.f64_compute = true};
  NodeBuilder conv("Conv2d", "conv64");
  conv.input(AMPX_DTYPE_F64, {1, 3, 8, 8})
      .input(AMPX_DTYPE_F64, {4, 3, 3, 3})
      .output(AMPX_DTYPE_F64, {1, 4, 6, 6});
  EXPECT_THROW(validate(conv.desc()), UnsupportedNode);
  EXPECT_FALSE(is_valid(conv.desc(), nullptr));
  EXPECT_EQ(validate(conv.desc(), f64), AMPX_DTYPE_F64);
  EXPECT_TRUE(is_valid(conv.desc(), nullptr, f64));

  NodeBuilder grad("LayerNormGrad", "ln_grad64");
  grad.input(AMPX_DTYPE_F64, {2, 5})
      .input(AMPX_DTYPE_F64, {2, 5})
      .input(AMPX_DTYPE_F64, {5})
      .output(AMPX_DTYPE_F64, {2, 5})
      .output(AMPX_DTYPE_F64, {5})
      .output(AMPX_DTYPE_F64, {5});
  EXPECT_THROW(validate(grad.desc()), UnsupportedNode);
  EXPECT_EQ(validate(grad.desc(), f64), AMPX_DTYPE_F64);

  // Mixed f64 and f32 is still malformed, not a float64 node.
  NodeBuilder mixed("MatMul", "mixed");
  mixed.input(AMPX_DTYPE_F64, {2, 3}).input(F32, {3, 4}).output(AMPX_DTYPE_F64, {2, 4});
  EXPECT_THROW(validate(mixed.desc(), f64), std::invalid_argument);

  // The master weights' updates and their guard are f32 in every mode.
  NodeBuilder sgd("SgdUpdate", "sgd64");
  sgd.input(AMPX_DTYPE_F64, {4})
      .input(AMPX_DTYPE_F64, {4})
      .input(AMPX_DTYPE_F64, {3})
      .output(AMPX_DTYPE_F64, {4});
  std::string why;
  EXPECT_FALSE(is_valid(sgd.desc(), &why, f64));
  EXPECT_NE(why.find("master weights"), std::string::npos) << why;
  NodeBuilder guard("UpdateGuard", "guard64");
  guard.input(AMPX_DTYPE_F64, {3})
      .input(AMPX_DTYPE_F64, {4})
      .output(AMPX_DTYPE_F64, {3})
      .output(AMPX_DTYPE_F64, {2});
  EXPECT_THROW(validate(guard.desc(), f64), UnsupportedNode);
}

TEST(Work, ConvAndGemmFlops) {
  NodeBuilder c = conv();
  // 2 * outputs (1*4*6*6) * C*kH*kW (3*3*3).
  EXPECT_DOUBLE_EQ(estimate_work(c.desc()).flops, 2.0 * 144 * 27);
  NodeBuilder g("Gemm", "g");
  g.input(F16, {7, 5}).input(F16, {5, 3}).output(F16, {7, 3});
  const WorkEstimate w = estimate_work(g.desc());
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 21 * 5 + 21);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * (35 + 15 + 21));
  EXPECT_DOUBLE_EQ(w.elements_16bit, 35 + 15 + 21);
  NodeBuilder t("Transpose", "t");  // data movement: bytes only
  t.input(F16, {2, 3}).output(F16, {3, 2});
  EXPECT_EQ(estimate_work(t.desc()).flops, 0);
  EXPECT_EQ(estimate_work(t.desc()).elements_16bit, 0);
}

TEST(Tolerances, ComputeModesOrderTheBars) {
  EXPECT_LT(tolerance(F32), tolerance(F16));
  EXPECT_LT(tolerance(F16), tolerance(F16, ComputeMode::kF16Accumulate));
  EXPECT_LT(tolerance(F16), tolerance(BF16));
  // bf16 is always accumulated in f32: the mode does not loosen it.
  EXPECT_EQ(tolerance(BF16), tolerance(BF16, ComputeMode::kF16Accumulate));
  EXPECT_EQ(tolerance(AMPX_DTYPE_I64), 0.0);
  const std::vector<double> ref{1.0, -2.0, 4.0}, got{1.0, -2.0, 4.001};
  EXPECT_NEAR(relative_error(got, ref), 0.001 / 4.0, 1e-12);
}

}  // namespace
}  // namespace ampx::opset
