// The fusion pass: which patterns it takes, which it must leave alone, and
// that a fused graph computes what the unfused one does (on cpu_ref).
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/ir/attr_access.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <tolerances.hpp>

#include <gtest/gtest.h>

#include <functional>

using namespace ampx;

namespace {

// Answers by a rule on the node description; `native` by default.
class RuleCaps final : public CapabilitySource {
 public:
  using Rule = std::function<ampx_support(const ampx_node_desc&)>;
  explicit RuleCaps(Rule rule = nullptr) : rule_(std::move(rule)) {}
  std::string device_id() const override { return "rule:0"; }
  Answer query(const ampx_node_desc& node) override {
    return {rule_ ? rule_(node) : AMPX_SUPPORT_NATIVE, 1.0, ""};
  }

 private:
  Rule rule_;
};

bool has_activation(const ampx_node_desc& n) {
  for (size_t i = 0; i < n.num_attrs; ++i)
    if (std::string(n.attrs[i].name) == "activation") return true;
  return false;
}

// x -> Gemm -> Relu (-> more), the Gemm's output optionally used twice.
Graph dense_relu(bool gemm_output_also_graph_output, bool second_consumer) {
  GraphBuilder b("g");
  ValueId x = b.input("x", DType::kF32, {4, 8});
  const ValueId h = b.dense("fc", x, 6);
  ValueId y = b.unary(OpType::kRelu, "relu", h);
  if (second_consumer) y = b.add(OpType::kAdd, "add", {y, h});
  b.output(y);
  if (gemm_output_also_graph_output) b.output(h);
  return std::move(b).build();
}

const Node* find_node(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes())
    if (n.name == name) return &n;
  return nullptr;
}

TEST(Fusion, GemmAbsorbsRelu) {
  const Graph g = dense_relu(false, false);
  RuleCaps caps;
  const FusedGraph f = fuse_for_device(g, caps);
  ASSERT_EQ(f.groups.size(), 1u);
  EXPECT_EQ(f.groups[0].node, "fc");
  EXPECT_EQ(f.groups[0].absorbed, std::vector<std::string>{"relu"});
  ASSERT_EQ(f.graph.num_nodes(), 1u);
  const Node& n = f.graph.node(0);
  EXPECT_EQ(n.op, OpType::kGemm);
  EXPECT_EQ(attr_string(n.attrs, "activation", "none"), "relu");
  // The graph output keeps its name.
  EXPECT_EQ(f.graph.value(f.graph.outputs()[0]).name, g.value(g.outputs()[0]).name);
}

TEST(Fusion, LeavesValuesThatAreOutputsOrShared) {
  RuleCaps caps;
  EXPECT_TRUE(fuse_for_device(dense_relu(true, false), caps).groups.empty());
  EXPECT_TRUE(fuse_for_device(dense_relu(false, true), caps).groups.empty());
}

TEST(Fusion, FollowsTheDeviceAnswer) {
  const Graph g = dense_relu(false, false);
  RuleCaps no_epilogues([](const ampx_node_desc& n) {
    return has_activation(n) ? AMPX_SUPPORT_UNSUPPORTED : AMPX_SUPPORT_NATIVE;
  });
  EXPECT_TRUE(fuse_for_device(g, no_epilogues).groups.empty());
  // Fused only through a slower (reference) path: native must stay native.
  RuleCaps worse([](const ampx_node_desc& n) {
    return has_activation(n) ? AMPX_SUPPORT_EMULATED : AMPX_SUPPORT_NATIVE;
  });
  EXPECT_TRUE(fuse_for_device(g, worse).groups.empty());
}

TEST(Fusion, OptionsTurnItOff) {
  RuleCaps caps;
  const FusedGraph f = fuse_for_device(dense_relu(false, false), caps,
                                       {.fold_batchnorm = false, .epilogues = false});
  EXPECT_TRUE(f.groups.empty());
  EXPECT_EQ(f.graph.num_nodes(), 2u);
}

TEST(Fusion, MatMulBiasOnlyForAConstantRow) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {2, 5, 8});
  const ValueId bias_in = b.input("bias_in", DType::kF32, {6});
  const ValueId w = b.random_weight("w", {8, 6}, 0.3f);
  const ValueId y1 = b.add(OpType::kMatMul, "mm1", {x, w});
  const ValueId a1 = b.add(OpType::kAdd, "add1", {y1, b.random_weight("b1", {6}, 0.1f)});
  const ValueId y2 = b.add(OpType::kMatMul, "mm2", {x, w});
  const ValueId a2 = b.add(OpType::kAdd, "add2", {y2, bias_in});  // not a weight
  const ValueId y3 = b.add(OpType::kMatMul, "mm3", {x, w});
  const ValueId a3 = b.add(OpType::kAdd, "add3", {y3, b.random_weight("b3", {5, 6}, 0.1f)});
  b.output(a1);
  b.output(a2);
  b.output(a3);
  const Graph g = std::move(b).build();
  RuleCaps caps;
  const FusedGraph f = fuse_for_device(g, caps);
  ASSERT_EQ(f.groups.size(), 1u);
  EXPECT_EQ(f.groups[0].node, "mm1");
  const Node* mm1 = find_node(f.graph, "mm1");
  ASSERT_NE(mm1, nullptr);
  EXPECT_EQ(mm1->inputs.size(), 3u);
  EXPECT_NE(find_node(f.graph, "add2"), nullptr);
  EXPECT_NE(find_node(f.graph, "add3"), nullptr);
}

TEST(Fusion, NeverAcrossACast) {
  // O1 sends the Gemm to f16; the override keeps the Relu f32, so a Cast
  // sits between them and nothing may be fused (fusion never changes
  // precision).
  const Graph g = dense_relu(false, false);
  RuleCaps caps;
  AmpPolicy p;
  p.level = AmpLevel::kO1;
  p.overrides.push_back({"relu", false});
  const AmpPlan plan = plan_amp(g, p, caps);
  ASSERT_GT(plan.summary.casts, 0);
  const FusedGraph f = fuse_for_device(plan.graph, caps);
  for (const auto& grp : f.groups)
    for (const auto& a : grp.absorbed) EXPECT_NE(a, "relu");
}

// x -> Conv2d (-> BatchNorm) -> an activation as opset-13 exporters write it.
enum class Act { kHardSwish, kSwish, kRelu6, kHardSigmoid };
Graph conv_act(Act act, bool batchnorm, bool extra_consumer = false) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {1, 4, 9, 9});
  ValueId h = b.conv2d("conv", x, 8, 3, 1, 1);
  if (batchnorm) h = b.batch_norm("bn", h);
  ValueId y;
  switch (act) {
    case Act::kHardSwish: {
      const ValueId g =
          b.add(OpType::kHardSigmoid, "gate", {h}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
      y = b.add(OpType::kMul, "mul", {h, g});
      break;
    }
    case Act::kSwish:
      y = b.add(OpType::kMul, "mul", {b.unary(OpType::kSigmoid, "gate", h), h});
      break;
    case Act::kRelu6:
      y = b.add(OpType::kClip, "clip", {h}, {{"min", 0.0}, {"max", 6.0}});
      break;
    case Act::kHardSigmoid:
      y = b.add(OpType::kHardSigmoid, "gate", {h}, {{"alpha", 0.2}, {"beta", 0.5}});
      break;
  }
  if (extra_consumer) y = b.add(OpType::kAdd, "add", {y, h});
  b.output(y);
  return std::move(b).build();
}

TEST(Fusion, GatedActivationsGoIntoTheConvolution) {
  RuleCaps caps;
  for (bool bn : {false, true}) {
    const FusedGraph hs = fuse_for_device(conv_act(Act::kHardSwish, bn), caps);
    ASSERT_EQ(hs.graph.num_nodes(), 1u) << "batchnorm " << bn;
    EXPECT_EQ(attr_string(hs.graph.node(0).attrs, "activation", ""), "hardswish");
    const FusedGraph sw = fuse_for_device(conv_act(Act::kSwish, bn), caps);
    ASSERT_EQ(sw.graph.num_nodes(), 1u);
    EXPECT_EQ(attr_string(sw.graph.node(0).attrs, "activation", ""), "swish");
    ASSERT_EQ(sw.groups.size(), 1u);
    EXPECT_EQ(sw.groups[0].absorbed.back(), "mul");
  }
  const FusedGraph r6 = fuse_for_device(conv_act(Act::kRelu6, false), caps);
  ASSERT_EQ(r6.graph.num_nodes(), 1u);
  EXPECT_EQ(attr_string(r6.graph.node(0).attrs, "activation", ""), "clip");
  EXPECT_EQ(attr_float(r6.graph.node(0).attrs, "activation_alpha", -1), 0.0);
  EXPECT_EQ(attr_float(r6.graph.node(0).attrs, "activation_beta", -1), 6.0);
  const FusedGraph hsig = fuse_for_device(conv_act(Act::kHardSigmoid, false), caps);
  ASSERT_EQ(hsig.graph.num_nodes(), 1u);
  EXPECT_EQ(attr_string(hsig.graph.node(0).attrs, "activation", ""), "hardsigmoid");
  EXPECT_DOUBLE_EQ(attr_float(hsig.graph.node(0).attrs, "activation_alpha", -1), 0.2);
}

TEST(Fusion, GatedActivationNeedsExactlyGateAndProduct) {
  RuleCaps caps;
  // The convolution's output also feeds an Add: the gate pattern is not
  // the only use, so it stays (the HardSigmoid + Mul become one HardSwish).
  const FusedGraph f = fuse_for_device(conv_act(Act::kHardSwish, false, true), caps);
  EXPECT_EQ(attr_string(find_node(f.graph, "conv")->attrs, "activation", "none"), "none");
  const Node* gate = find_node(f.graph, "gate");
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->op, OpType::kHardSwish);
  EXPECT_EQ(find_node(f.graph, "mul"), nullptr);
  // A HardSigmoid of other parameters is not a HardSwish gate.
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {2, 8});
  const ValueId g = b.add(OpType::kHardSigmoid, "gate", {x}, {{"alpha", 0.2}, {"beta", 0.5}});
  b.output(b.add(OpType::kMul, "mul", {x, g}));
  EXPECT_TRUE(fuse_for_device(std::move(b).build(), caps).groups.empty());
}

// DeepLab's ASPP: 3x3 kernels at dilation 6 (all taps live) and 24, 36 on
// a 14 x 14 map, where only the centre tap ever touches the input.
Graph aspp() {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {1, 3, 14, 14});
  for (int64_t d : {6, 24, 36}) {
    AttrMap a{{"pads", std::vector<int64_t>{d, d, d, d}},
              {"dilations", std::vector<int64_t>{d, d}}};
    const ValueId w = b.random_weight("w" + std::to_string(d), {4, 3, 3, 3}, 0.3f);
    const ValueId bias = b.random_weight("b" + std::to_string(d), {4}, 0.1f);
    b.output(b.add(OpType::kConv2d, "conv" + std::to_string(d), {x, w, bias}, a));
  }
  return std::move(b).build();
}

TEST(Fusion, DeadTapsAreCropped) {
  RuleCaps caps;
  const Graph g = aspp();
  const FusedGraph f = fuse_for_device(g, caps);
  EXPECT_TRUE(f.groups.empty());  // cropping absorbs nothing
  auto kernel = [&](const std::string& n) {
    const Node* c = find_node(f.graph, n);
    return f.graph.value(c->inputs[1]).type.shape;
  };
  EXPECT_EQ(kernel("conv6"), (Shape{4, 3, 3, 3}));
  EXPECT_EQ(kernel("conv24"), (Shape{4, 3, 1, 1}));
  EXPECT_EQ(kernel("conv36"), (Shape{4, 3, 1, 1}));
  EXPECT_EQ(attr_ints(find_node(f.graph, "conv36")->attrs, "pads"),
            (std::vector<int64_t>{0, 0, 0, 0}));
}

plugins::PluginHost host_with_cpu_ref() {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_TEST_PLUGIN_DIR};
  opts.use_env_path = false;
  return plugins::PluginHost(opts);
}

// cnn: conv+bn+relu twice (BatchNorm folded into the weights) and fc+relu;
// mlp: fc+relu; encoder: matmul+bias(+gelu). Same outputs, fewer kernels.
class FusedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedModel, SameOutputsOnCpuRef) {
  const auto host = host_with_cpu_ref();
  const auto& dev = host.device("cpu_ref:0");
  DeviceCapabilities caps(dev);
  const Graph g = make_builtin_model(GetParam());
  const AmpPlan plan = plan_amp(g, AmpPolicy{}, caps);
  const FusedGraph f = fuse_for_device(plan.graph, caps);
  EXPECT_GT(f.absorbed_nodes(), 0);
  EXPECT_EQ(f.graph.num_nodes() + static_cast<size_t>(f.absorbed_nodes()), plan.graph.num_nodes());
  const auto inputs = random_inputs(g, 5);
  const auto a = Executor(plan.graph, dev).run(inputs);
  const auto b = Executor(f.graph, dev).run(inputs);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_LT(max_relative_error(b[i], a[i]), ampx::test::model_tolerance(AMPX_DTYPE_F32));
}

// Capability-blind O2 on cpu_ref: every intended node 16-bit on emulated
// kernels, weight Casts feeding fused biases (their producers come after
// the MatMul in the plan's order).
TEST_P(FusedModel, SameOutputsAtForcedO2) {
  const auto host = host_with_cpu_ref();
  const auto& dev = host.device("cpu_ref:0");
  DeviceCapabilities caps(dev);
  const Graph g = make_builtin_model(GetParam());
  AmpPolicy p;
  p.level = AmpLevel::kO2;
  const AmpPlan plan = plan_amp(g, p, caps, {.capability_blind = true});
  ASSERT_EQ(plan.summary.effective_16bit, plan.summary.intended_16bit);
  const FusedGraph f = fuse_for_device(plan.graph, caps);
  const auto inputs = random_inputs(g, 6);
  const auto a = Executor(plan.graph, dev).run(inputs);
  const auto b = Executor(f.graph, dev).run(inputs);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_LT(max_relative_error(b[i], a[i]), ampx::test::model_tolerance(AMPX_DTYPE_F16));
}

// A basic residual block: conv -> Relu -> conv -> Add(x) -> Relu, and a
// downsampling one whose Add has a convolution on both sides.
Graph residual_blocks(bool bias) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {1, 8, 6, 6});
  const ValueId h = b.unary(OpType::kRelu, "relu1", b.conv2d("conv1", x, 8, 3, 1, 1));
  const ValueId y = b.conv2d("conv2", h, 8, 3, 1, 1, 1, bias);
  const ValueId r = b.unary(OpType::kRelu, "relu2", b.add(OpType::kAdd, "add", {y, x}));
  const ValueId d = b.conv2d("down", r, 4, 1, 2, 0);
  const ValueId e = b.conv2d("conv3", r, 4, 3, 2, 1);
  b.output(b.add(OpType::kAdd, "add2", {e, d}));
  return std::move(b).build();
}

// RegNet's and MobileNet's order: the shortcut convolution comes first and
// takes the Add, so its residual (conv_a -> relu -> conv_c, the Relu
// absorbed into conv_a) is emitted on demand through the fused nodes.
Graph shortcut_first() {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {1, 8, 6, 6});
  const ValueId proj = b.conv2d("proj", x, 8, 1);
  const ValueId a = b.unary(OpType::kRelu, "relu_a", b.conv2d("conv_a", x, 8, 3, 1, 1));
  const ValueId c = b.conv2d("conv_c", a, 8, 1);
  b.output(b.unary(OpType::kRelu, "relu", b.add(OpType::kAdd, "add", {c, proj})));
  return std::move(b).build();
}

TEST(Fusion, ResidualAddGoesIntoTheConvolution) {
  {
    RuleCaps caps;
    const FusedGraph f = fuse_for_device(shortcut_first(), caps);
    EXPECT_EQ(f.graph.num_nodes(), 3u);
    EXPECT_EQ(find_node(f.graph, "proj")->inputs.size(), 4u);
  }
  RuleCaps caps;
  for (bool bias : {true, false}) {
    const FusedGraph f = fuse_for_device(residual_blocks(bias), caps);
    const Node* c2 = find_node(f.graph, "conv2");
    ASSERT_NE(c2, nullptr);
    ASSERT_EQ(c2->inputs.size(), 4u);  // zeros stand in for a missing bias
    EXPECT_EQ(c2->inputs[3], f.graph.inputs()[0]);
    EXPECT_EQ(attr_string(c2->attrs, "activation", ""), "relu");
    EXPECT_EQ(find_node(f.graph, "add"), nullptr);
    EXPECT_EQ(find_node(f.graph, "add2"), nullptr);  // taken by one of its two convolutions
    EXPECT_EQ(f.graph.num_nodes(), 4u);
  }
}

TEST(Fusion, BatchNormTakesAnActivation) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {1, 8, 5, 5});
  b.output(b.unary(OpType::kRelu, "relu", b.batch_norm("bn", x)));
  RuleCaps caps;
  const FusedGraph f = fuse_for_device(std::move(b).build(), caps);
  ASSERT_EQ(f.graph.num_nodes(), 1u);
  EXPECT_EQ(f.graph.node(0).op, OpType::kBatchNorm);
  EXPECT_EQ(attr_string(f.graph.node(0).attrs, "activation", ""), "relu");
}

// Pad -> Conv2d: zeros on H and W go into the convolution's pads; any other
// Pad stays.
Graph pad_conv(const std::string& mode, double value, std::vector<int64_t> pads) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {1, 3, 8, 8});
  const ValueId p = b.add(OpType::kPad, "pad", {x},
                          {{"pads", std::move(pads)}, {"mode", mode}, {"value", value}});
  AttrMap a{{"pads", std::vector<int64_t>{1, 0, 1, 0}}};
  b.output(b.add(OpType::kConv2d, "conv",
                 {p, b.random_weight("w", {4, 3, 3, 3}, 0.3f), b.random_weight("b", {4}, 0.1f)},
                 a));
  return std::move(b).build();
}

TEST(Fusion, ZeroPadGoesIntoTheConvolution) {
  RuleCaps caps;
  const FusedGraph f = fuse_for_device(pad_conv("constant", 0.0, {0, 0, 2, 1, 0, 0, 0, 3}), caps);
  ASSERT_EQ(f.graph.num_nodes(), 1u);
  EXPECT_EQ(f.groups.at(0).absorbed, std::vector<std::string>{"pad"});
  EXPECT_EQ(attr_ints(f.graph.node(0).attrs, "pads"), (std::vector<int64_t>{3, 1, 1, 3}));
  EXPECT_EQ(f.graph.node(0).inputs[0], f.graph.inputs()[0]);
  for (const Graph& g : {pad_conv("reflect", 0.0, {0, 0, 1, 1, 0, 0, 1, 1}),
                         pad_conv("constant", 0.5, {0, 0, 1, 1, 0, 0, 1, 1}),
                         pad_conv("constant", 0.0, {1, 0, 1, 1, 0, 0, 1, 1}),
                         pad_conv("constant", 0.0, {0, 0, -1, 0, 0, 0, 0, 0})})
    EXPECT_EQ(fuse_for_device(g, caps).graph.num_nodes(), 2u);
}

// The rewritten graphs compute what the exported ones do, on cpu_ref.
TEST(Fusion, RewritesKeepOutputsOnCpuRef) {
  const auto host = host_with_cpu_ref();
  const auto& dev = host.device("cpu_ref:0");
  DeviceCapabilities caps(dev);
  std::vector<Graph> graphs;
  for (Act a : {Act::kHardSwish, Act::kSwish, Act::kRelu6, Act::kHardSigmoid})
    for (bool bn : {false, true}) graphs.push_back(conv_act(a, bn));
  graphs.push_back(conv_act(Act::kHardSwish, false, true));
  graphs.push_back(aspp());
  graphs.push_back(pad_conv("constant", 0.0, {0, 0, 2, 1, 0, 0, 0, 3}));
  graphs.push_back(residual_blocks(true));
  graphs.push_back(residual_blocks(false));
  graphs.push_back(shortcut_first());
  int seed = 10;
  for (const Graph& g : graphs) {
    const AmpPlan plan = plan_amp(g, AmpPolicy{}, caps);
    const FusedGraph f = fuse_for_device(plan.graph, caps);
    EXPECT_LE(f.graph.num_nodes(), plan.graph.num_nodes());
    const auto inputs = random_inputs(g, seed++);
    const auto a = Executor(plan.graph, dev).run(inputs);
    const auto b = Executor(f.graph, dev).run(inputs);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_LT(max_relative_error(b[i], a[i]), ampx::test::model_tolerance(AMPX_DTYPE_F32));
  }
}

INSTANTIATE_TEST_SUITE_P(Builtin, FusedModel, ::testing::Values("cnn", "mlp", "encoder"));

}  // namespace

namespace {

// A biased convolution's weight and bias gradients as autodiff writes them
// (grad_rules_nn.cpp): Conv2dGradWeight(dY, X) and ReduceSum(dY) beside it.
// `axes` and `keepdims` of the sum as given; with `cast`, dY is f16 and the
// sum reads an f32 Cast of it (the planner's black-listed ReduceSum).
Graph conv_gradients(std::vector<int64_t> axes = {0, 2, 3}, int64_t keepdims = 0,
                     bool cast = false) {
  GraphBuilder b("g");
  const DType dt = cast ? DType::kF16 : DType::kF32;
  const ValueId dy = b.input("dy", dt, {2, 5, 4, 4});
  const ValueId x = b.input("x", dt, {2, 3, 4, 4});
  b.output(b.add(
      OpType::kConv2dGradWeight, "dw", {dy, x},
      {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  const ValueId in =
      cast ? b.add(OpType::kCast, "cast", {dy}, {{"to", static_cast<int64_t>(DType::kF32)}}) : dy;
  b.output(b.add(OpType::kReduceSum, "db", {in}, {{"axes", axes}, {"keepdims", keepdims}}));
  return std::move(b).build();
}

bool has_bias_gradient(const ampx_node_desc& n) {
  for (size_t i = 0; i < n.num_attrs; ++i)
    if (std::string(n.attrs[i].name) == "bias_gradient") return true;
  return false;
}

TEST(Fusion, TheConvolutionsBiasGradientComesFromItsWeightGradient) {
  RuleCaps caps;
  const FusedGraph f = fuse_for_device(conv_gradients(), caps);
  ASSERT_EQ(f.groups.size(), 1u);
  EXPECT_EQ(f.groups[0].node, "dw");
  EXPECT_EQ(f.groups[0].absorbed, std::vector<std::string>{"db"});
  ASSERT_EQ(f.graph.num_nodes(), 1u);
  const Node& n = f.graph.node(0);
  EXPECT_EQ(n.op, OpType::kConv2dGradWeight);
  EXPECT_EQ(attr_int(n.attrs, "bias_gradient", 0), 1);
  ASSERT_EQ(n.outputs.size(), 2u);
  EXPECT_EQ(f.graph.outputs()[1], n.outputs[1]);  // the sum's output, its name kept
  EXPECT_EQ(f.graph.value(n.outputs[1]).name,
            conv_gradients().value(conv_gradients().outputs()[1]).name);
  // Negative axes are the same axes.
  EXPECT_EQ(fuse_for_device(conv_gradients({-1, 0, -2}), caps).groups.size(), 1u);
}

TEST(Fusion, OnlyTheExactBiasSumIsMerged) {
  RuleCaps caps;
  EXPECT_TRUE(fuse_for_device(conv_gradients({0, 2}), caps).groups.empty());
  EXPECT_TRUE(fuse_for_device(conv_gradients({0, 2, 3}, 1), caps).groups.empty());  // [1,M,1,1]
  EXPECT_TRUE(fuse_for_device(conv_gradients({0, 2, 3}, 0, true), caps).groups.empty());  // Cast
  EXPECT_TRUE(fuse_for_device(conv_gradients(), caps, {.bias_gradients = false}).groups.empty());
  // A device that does not answer the fused node (Vulkan, CUDA) keeps both.
  RuleCaps refuses([](const ampx_node_desc& n) {
    return has_bias_gradient(n) ? AMPX_SUPPORT_UNSUPPORTED : AMPX_SUPPORT_NATIVE;
  });
  EXPECT_TRUE(fuse_for_device(conv_gradients(), refuses).groups.empty());
  // Nor across a device boundary.
  Graph placed = conv_gradients();
  placed.node(1).device = 1;
  RuleCaps a, b;
  CapabilitySource* two[] = {&a, &b};
  EXPECT_TRUE(fuse_placed(placed, two).groups.empty());
  placed.node(1).device = 0;
  EXPECT_EQ(fuse_placed(placed, two).groups.size(), 1u);
}

TEST(Fusion, TheFusedBiasGradientComputesTheReduceSumOnCpuRef) {
  const auto host = host_with_cpu_ref();
  const auto& dev = host.device("cpu_ref:0");
  DeviceCapabilities caps(dev);
  const Graph g = conv_gradients();
  const FusedGraph f = fuse_for_device(g, caps);
  ASSERT_EQ(f.groups.size(), 1u);
  const auto inputs = random_inputs(g, 9);
  const auto want = Executor(g, dev).run(inputs);
  const auto got = Executor(f.graph, dev).run(inputs);
  ASSERT_EQ(got.size(), 2u);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LT(max_relative_error(got[i], want[i]), ampx::test::model_tolerance(AMPX_DTYPE_F32));
}

}  // namespace
