// Every gradient rule against central finite differences on cpu_ref in
// float64, with random inputs and odd shapes (tolerance:
// opset::kGradientCheckTolerance); and that the check fails a wrong rule.
#include <ampx/exec/fusion.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/train/sync_batch_norm.hpp>

#include <tolerances.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "grad_check.hpp"

using namespace ampx;
using namespace ampx::test;

namespace {

using Build = std::function<ValueId(GraphBuilder&, std::vector<CheckedInput>&)>;

struct RuleCase {
  std::string name;
  Build build;
};

std::ostream& operator<<(std::ostream& os, const RuleCase& c) {
  return os << c.name;
}

ValueId in(GraphBuilder& b, std::vector<CheckedInput>& checked, const std::string& name,
           Shape shape, Draw draw = Draw::kUniform, double kink = 0.0) {
  const ValueId v = b.input(name, kGradCheckDtype, std::move(shape));
  checked.push_back({v, draw, kink});
  return v;
}

using Ints = std::vector<int64_t>;

// The synchronized BatchNorm's composition (train/sync_batch_norm.hpp) built
// through the test's GraphBuilder: autodiff differentiates through it.
class BuilderSink final : public train::SyncBatchNormSink {
 public:
  explicit BuilderSink(GraphBuilder& b) : b_(b) {}
  TensorType type(ValueId v) const override { return b_.type(v); }
  std::vector<ValueId> add(OpType op, const std::string& name, std::vector<ValueId> inputs,
                           AttrMap attrs, train::SyncBatchNormPart) override {
    return b_.add_multi(op, name, std::move(inputs), std::move(attrs));
  }
  ValueId constant(const std::string& name, DType dtype, double value) override {
    const float v = static_cast<float>(value);
    return b_.constant(name, dtype, {1}, std::span<const float>(&v, 1));
  }

 private:
  GraphBuilder& b_;
};

RuleCase sync_batch_norm(const std::string& name, Shape x_shape) {
  return {name, [=](GraphBuilder& b, std::vector<CheckedInput>& c) {
            const int64_t ch = x_shape[1];
            const ValueId x = in(b, c, "x", x_shape);
            const ValueId s = in(b, c, "scale", {ch});
            const ValueId bias = in(b, c, "bias", {ch});
            const ValueId m = b.random_weight("running_mean", {ch}, 0.1f, kGradCheckDtype);
            const std::vector<float> ones(static_cast<size_t>(ch), 1.0f);
            const ValueId var = b.constant("running_var", kGradCheckDtype, {ch}, ones);
            BuilderSink sink(b);
            return train::compose_sync_batch_norm(sink, "bn", {x, s, bias, m, var, 1e-5}).y;
          }};
}

// One op applied to fresh checked inputs of the given shapes.
RuleCase unary(const std::string& name, OpType op, Shape shape, AttrMap attrs = {},
               Draw draw = Draw::kUniform, double kink = 0.0) {
  return {name, [=](GraphBuilder& b, std::vector<CheckedInput>& c) {
            return b.add(op, "op", {in(b, c, "x", shape, draw, kink)}, attrs);
          }};
}
RuleCase binary(const std::string& name, OpType op, Shape a, Shape bs,
                Draw draw_b = Draw::kUniform) {
  return {name, [=](GraphBuilder& b, std::vector<CheckedInput>& c) {
            const ValueId x = in(b, c, "a", a);
            return b.add(op, "op", {x, in(b, c, "b", bs, draw_b)});
          }};
}

std::vector<RuleCase> cases() {
  std::vector<RuleCase> v;
  // Conv2d: groups, stride, asymmetric padding, dilation, bias.
  v.push_back({"Conv2dGroupedStridedDilated", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {2, 4, 7, 6});
                 const ValueId w = in(b, c, "w", {6, 2, 3, 3});
                 const ValueId bias = in(b, c, "bias", {6});
                 return b.add(OpType::kConv2d, "conv", {x, w, bias},
                              {{"strides", Ints{2, 1}},
                               {"pads", Ints{1, 0, 1, 2}},
                               {"dilations", Ints{1, 2}},
                               {"group", int64_t{2}}});
               }});
  v.push_back({"Conv2dDepthwise", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {1, 3, 5, 5});
                 const ValueId w = in(b, c, "w", {3, 1, 3, 3});
                 return b.add(OpType::kConv2d, "conv", {x, w},
                              {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{3}}});
               }});
  v.push_back({"Conv2dStrideLeavesRemainder", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {2, 3, 8, 9});
                 const ValueId w = in(b, c, "w", {4, 3, 2, 3});
                 return b.add(OpType::kConv2d, "conv", {x, w}, {{"strides", Ints{3, 2}}});
               }});
  v.push_back(binary("MatMulBatchedBroadcast", OpType::kMatMul, {2, 1, 3, 5}, {4, 5, 2}));
  v.push_back(binary("MatMul2d", OpType::kMatMul, {3, 5}, {5, 4}));
  v.push_back(
      {"GemmTransposedWithBroadcastC", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
         const ValueId a = in(b, c, "a", {5, 3});
         const ValueId w = in(b, c, "b", {4, 5});
         const ValueId cc = in(b, c, "c", {1, 4});
         return b.add(
             OpType::kGemm, "gemm", {a, w, cc},
             {{"alpha", 0.7}, {"beta", 1.3}, {"transA", int64_t{1}}, {"transB", int64_t{1}}});
       }});
  v.push_back({"GemmPlainWithVectorC", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId a = in(b, c, "a", {3, 5});
                 const ValueId w = in(b, c, "b", {5, 4});
                 const ValueId cc = in(b, c, "c", {4});
                 return b.add(OpType::kGemm, "gemm", {a, w, cc});
               }});
  v.push_back({"GemmTransBOnly", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId a = in(b, c, "a", {3, 5});
                 const ValueId w = in(b, c, "b", {4, 5});
                 return b.add(OpType::kGemm, "gemm", {a, w}, {{"transB", int64_t{1}}});
               }});
  v.push_back({"BatchNormTraining", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {3, 4, 2, 3});
                 const ValueId s = in(b, c, "scale", {4});
                 const ValueId bias = in(b, c, "bias", {4});
                 const ValueId m = b.random_weight("running_mean", {4}, 0.1f, kGradCheckDtype);
                 const std::vector<float> ones(4, 1.0f);
                 const ValueId var = b.constant("running_var", kGradCheckDtype, {4}, ones);
                 return b.add_multi(OpType::kBatchNormTraining, "bn", {x, s, bias, m, var},
                                    {{"momentum", 0.8}})[0];
               }});
  v.push_back(sync_batch_norm("SyncBatchNormComposition", {3, 4, 2, 3}));
  v.push_back(sync_batch_norm("SyncBatchNormCompositionRank2", {5, 3}));
  v.push_back({"LayerNormTwoTrailingAxes", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {3, 2, 5});
                 const ValueId s = in(b, c, "scale", {2, 5});
                 const ValueId bias = in(b, c, "bias", {2, 5});
                 return b.add(OpType::kLayerNorm, "ln", {x, s, bias}, {{"axis", int64_t{-2}}});
               }});
  v.push_back({"LayerNormNoBias", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {4, 7});
                 return b.add(OpType::kLayerNorm, "ln", {x, in(b, c, "scale", {7})});
               }});
  v.push_back(unary("SoftmaxMiddleAxis", OpType::kSoftmax, {2, 5, 3}, {{"axis", int64_t{1}}}));
  v.push_back(unary("LogSoftmaxLastAxis", OpType::kLogSoftmax, {3, 6}));
  v.push_back(unary("Relu", OpType::kRelu, {3, 7}, {}, Draw::kAwayFromKink));
  v.push_back(unary("GeluErf", OpType::kGelu, {2, 9}));
  v.push_back(unary("GeluTanh", OpType::kGelu, {2, 9}, {{"approximate", std::string("tanh")}}));
  v.push_back(unary("Sigmoid", OpType::kSigmoid, {5, 3}));
  v.push_back(unary("Tanh", OpType::kTanh, {5, 3}));
  v.push_back({"ClipAwayFromBounds", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 // Inputs on a 0.05 grid from -0.6, the bounds halfway between
                 // grid points: both sides of each bound, no step across one.
                 const ValueId x = in(b, c, "x", {4, 6}, Draw::kDistinct);
                 return b.add(OpType::kClip, "clip", {x}, {{"min", -0.475}, {"max", 0.425}});
               }});
  v.push_back(binary("AddBroadcast", OpType::kAdd, {2, 3, 4}, {3, 1}));
  v.push_back(binary("SubBroadcastFirst", OpType::kSub, {3, 1}, {2, 3, 4}));
  v.push_back(binary("MulBroadcast", OpType::kMul, {2, 3, 4}, {4}));
  v.push_back(binary("DivBroadcast", OpType::kDiv, {2, 3, 4}, {2, 1, 4}, Draw::kPositive));
  v.push_back(
      {"MaxPoolPaddedStrided", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
         const ValueId x = in(b, c, "x", {2, 2, 7, 6}, Draw::kDistinct);
         return b.add(
             OpType::kMaxPool, "pool", {x},
             {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 1, 1}}});
       }});
  v.push_back(
      {"MaxPoolCeilMode", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
         const ValueId x = in(b, c, "x", {1, 3, 5, 5}, Draw::kDistinct);
         return b.add(
             OpType::kMaxPool, "pool", {x},
             {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}});
       }});
  v.push_back(unary("AveragePoolCountIncludePadCeil", OpType::kAveragePool, {2, 2, 6, 7},
                    {{"kernel_shape", Ints{3, 3}},
                     {"strides", Ints{2, 2}},
                     {"pads", Ints{1, 1, 1, 1}},
                     {"ceil_mode", int64_t{1}},
                     {"count_include_pad", int64_t{1}}}));
  v.push_back(unary("AveragePoolExcludePad", OpType::kAveragePool, {1, 3, 5, 4},
                    {{"kernel_shape", Ints{2, 3}}, {"pads", Ints{0, 1, 1, 1}}}));
  v.push_back(unary("GlobalAveragePool", OpType::kGlobalAveragePool, {2, 3, 4, 5}));
  v.push_back(unary("ReduceMeanAxesNoKeep", OpType::kReduceMean, {2, 3, 4},
                    {{"axes", Ints{0, -1}}, {"keepdims", int64_t{0}}}));
  v.push_back(unary("ReduceSumKeep", OpType::kReduceSum, {2, 3, 4}, {{"axes", Ints{1}}}));
  v.push_back(unary("Reshape", OpType::kReshape, {2, 3, 4}, {{"shape", Ints{4, -1}}}));
  v.push_back(unary("Flatten", OpType::kFlatten, {2, 3, 4}, {{"axis", int64_t{2}}}));
  v.push_back(unary("Transpose", OpType::kTranspose, {2, 3, 4}, {{"perm", Ints{1, 2, 0}}}));
  v.push_back({"Concat", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {2, 3, 2});
                 const ValueId y = in(b, c, "y", {2, 1, 2});
                 return b.add(OpType::kConcat, "cat", {x, y, x}, {{"axis", int64_t{1}}});
               }});
  v.push_back(unary("SliceStepped", OpType::kSlice, {5, 7, 3},
                    {{"starts", Ints{1, -1}},
                     {"ends", Ints{5, -8}},
                     {"axes", Ints{0, 1}},
                     {"steps", Ints{2, -3}}}));
  v.push_back({"SplitWithAnUnusedPart", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {3, 7});
                 const auto parts = b.add_multi(OpType::kSplit, "split", {x},
                                                {{"axis", int64_t{1}}, {"split", Ints{2, 4, 1}}});
                 return b.add(OpType::kMul, "use", {parts[1], parts[1]});
               }});
  v.push_back(
      {"GatherRepeatedAndNegativeIndices", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
         const ValueId x = in(b, c, "x", {3, 5, 2});
         const std::vector<int64_t> idx{4, -1, 0, 2, 0};
         const ValueId i = b.constant_i64("idx", {5}, idx);
         return b.add(OpType::kGather, "gather", {x, i}, {{"axis", int64_t{1}}});
       }});
  v.push_back(unary("Expand", OpType::kExpand, {3, 1}, {{"shape", Ints{2, 3, 4}}}));
  v.push_back(unary("PadConstant", OpType::kPad, {2, 3}, {{"pads", Ints{1, 0, 2, 3}}}));
  v.push_back({"DropoutTraining", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {4, 9});
                 const std::vector<int64_t> seed{12345};
                 const ValueId s = b.constant_i64("seed", {1}, seed);
                 return b.add_multi(OpType::kDropoutTraining, "drop", {x, s}, {{"ratio", 0.3}})[0];
               }});
  v.push_back({"SoftmaxCrossEntropy", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "logits", {5, 7});
                 const std::vector<int64_t> labels{3, 0, 6, 3, 1};
                 const ValueId l = b.constant_i64("labels", {5}, labels);
                 return b.add_multi(OpType::kSoftmaxCrossEntropy, "ce", {x, l})[0];
               }});
  v.push_back({"MeanSquaredError", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId p = in(b, c, "pred", {6, 2});
                 const ValueId t = b.random_weight("target", {6, 2}, 1.0f, kGradCheckDtype);
                 const ValueId d = b.add(OpType::kSub, "diff", {p, t});
                 return b.add(OpType::kReduceMean, "mse", {b.add(OpType::kMul, "sq", {d, d})},
                              {{"keepdims", int64_t{0}}});
               }});
  v.push_back({"ElementwiseChain", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {3, 4}, Draw::kPositive);
                 const ValueId e = b.add(OpType::kExp, "exp", {b.add(OpType::kNeg, "neg", {x})});
                 const ValueId l = b.add(OpType::kLog, "log", {x});
                 const ValueId s = b.add(OpType::kSqrt, "sqrt", {x});
                 const ValueId r = b.add(OpType::kReciprocal, "recip", {x});
                 return b.add(
                     OpType::kAdd, "sum",
                     {b.add(OpType::kAdd, "s1", {e, l}), b.add(OpType::kMul, "s2", {s, r})});
               }});
  v.push_back({"ValueWithThreeConsumers", [](GraphBuilder& b, std::vector<CheckedInput>& c) {
                 const ValueId x = in(b, c, "x", {2, 5});
                 const ValueId sq = b.add(OpType::kMul, "sq", {x, x});
                 return b.add(OpType::kAdd, "plus", {sq, b.add(OpType::kTanh, "t", {x})});
               }});
  return v;
}

class GradientRule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(GradientRule, MatchesCentralDifferences) {
  const auto host = make_cpu_ref_host();
  const auto results = gradient_check(host.device("cpu_ref:0"), GetParam().build);
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) {
    std::ostringstream error;
    error << std::scientific << std::setprecision(2) << r.error;
    RecordProperty("error_" + r.input, error.str());
    EXPECT_LE(r.error, opset::kGradientCheckTolerance)
        << "d(loss)/d(" << r.input << "): relative error " << r.error << " over "
        << r.checked_elements << " elements";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryRule, GradientRule, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// The check fails a wrong rule, and by far: the tolerance sits ~10 orders
// of magnitude below an O(1) mistake and still 1000x below a gradient off by
// a factor 1 + 1e-4 (which the f32 check's 5e-3 let pass).

TEST(GradientCheck, FailsAGradientOffByOnePartIn10000) {
  const auto host = make_cpu_ref_host();
  const RuleCase mm = binary("MatMul2d", OpType::kMatMul, {3, 5}, {5, 4});
  // dA scaled by 1 + 1e-4 after autodiff; dB left alone.
  const GradTamper off = [](Graph& g, std::vector<ValueId>& grads) {
    const double factor = 1.0 + 1e-4;
    std::vector<std::byte> bytes(sizeof factor);
    std::memcpy(bytes.data(), &factor, sizeof factor);
    const ValueId k = g.add_constant("wrong_factor", {kGradCheckDtype, {}}, std::move(bytes));
    const TensorType t = g.value(grads[0]).type;
    grads[0] = g.node(g.add_node("wrong_scale", OpType::kMul, {grads[0], k}, {t})).outputs[0];
  };
  const auto results = gradient_check(host.device("cpu_ref:0"), mm.build, 7, off);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].input, "a");
  EXPECT_NEAR(results[0].error, 1e-4, 2e-5);
  EXPECT_GT(results[0].error, 100 * opset::kGradientCheckTolerance);
  EXPECT_LE(results[1].error, opset::kGradientCheckTolerance);
}

TEST(GradientCheck, FailsARuleMissingATerm) {
  const auto host = make_cpu_ref_host();
  const RuleCase sigmoid = unary("Sigmoid", OpType::kSigmoid, {5, 3});
  // SigmoidGrad as dY * Y, without its (1 - Y).
  const GradTamper drop = [](Graph& g, std::vector<ValueId>&) {
    int changed = 0;
    for (size_t i = 0; i < g.num_nodes(); ++i) {
      Node& n = g.node(static_cast<NodeId>(i));
      if (n.op == OpType::kSigmoidGrad) {
        n.op = OpType::kMul;
        ++changed;
      }
    }
    ASSERT_EQ(changed, 1);
  };
  const auto results = gradient_check(host.device("cpu_ref:0"), sigmoid.build, 7, drop);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_GT(results[0].error, 0.1);
}

TEST(GradientCheck, RunsInFloat64Only) {
  const auto host = make_cpu_ref_host();
  // An f32 input, or a Cast anywhere, is refused: the check would not be
  // the float64 one.
  const auto f32_input = [](GraphBuilder& b, std::vector<CheckedInput>& c) {
    const ValueId x = b.input("x", DType::kF32, {3});
    c.push_back({x});
    return b.add(OpType::kTanh, "t", {x});
  };
  EXPECT_THROW(gradient_check(host.device("cpu_ref:0"), f32_input), GraphError);
  const auto cast = [](GraphBuilder& b, std::vector<CheckedInput>& c) {
    const ValueId x = in(b, c, "x", {3});
    return b.add(OpType::kCast, "f64_to_f64", {x}, {{"to", static_cast<int64_t>(kGradCheckDtype)}});
  };
  EXPECT_THROW(gradient_check(host.device("cpu_ref:0"), cast), GraphError);
}

// The fused bias gradient (fusion.cpp: autodiff's ReduceSum of dY becomes
// Conv2dGradWeight's bias_gradient output) is still the gradient: the
// gradient graph fused for cpu_ref, every gradient against central
// differences; with the fusion turned off the check sees the same graph it
// always did (one absorbed node against none).
TEST(GradientCheck, TheFusedBiasGradientMatchesCentralDifferences) {
  const auto host = make_cpu_ref_host();
  const plugins::Device& dev = host.device("cpu_ref:0");
  DeviceCapabilities caps(dev);
  const RuleCase conv = cases().front();  // Conv2dGroupedStridedDilated, with a bias
  ASSERT_EQ(conv.name, "Conv2dGroupedStridedDilated");
  for (const bool on : {true, false}) {
    SCOPED_TRACE(on ? "fused" : "unfused");
    int absorbed = -1;
    const GradTamper fuse = [&](Graph& g, std::vector<ValueId>& grads) {
      std::vector<std::string> names;
      for (ValueId v : grads) names.push_back(g.value(v).name);
      FusedGraph f = fuse_for_device(
          g, caps, {.fold_batchnorm = false, .epilogues = false, .bias_gradients = on});
      absorbed = f.absorbed_nodes();
      g = std::move(f.graph);
      for (size_t k = 0; k < grads.size(); ++k) {
        const auto values = g.values();
        const auto it = std::find_if(values.begin(), values.end(),
                                     [&](const Value& v) { return v.name == names[k]; });
        ASSERT_NE(it, values.end()) << names[k];
        grads[k] = static_cast<ValueId>(it - values.begin());
      }
    };
    const auto results = gradient_check(dev, conv.build, 7, fuse);
    EXPECT_EQ(absorbed, on ? 1 : 0);
    ASSERT_EQ(results.size(), 3u);
    for (const auto& r : results)
      EXPECT_LE(r.error, opset::kGradientCheckTolerance) << "d(loss)/d(" << r.input << ")";
  }
}

}  // namespace
