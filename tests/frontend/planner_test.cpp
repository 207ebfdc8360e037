// AMP planner: level semantics, custom lists, overrides, the effective step
// driven by a table of capability answers, and Cast minimality.
#include <ampx/amp/planner.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/ir/verifier.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/opset/catalogue.hpp>
#include <ampx/plugin_support.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace ampx;
using ::testing::HasSubstr;

namespace {

// Capability answers from a table: op type -> answer for 16-bit nodes;
// f32 is always native. Counts queries so tests can see what was asked.
class TableCaps final : public CapabilitySource {
 public:
  ampx_support default_16 = AMPX_SUPPORT_EMULATED;
  std::map<std::string, ampx_support> per_op_16;
  std::set<std::string> unsupported_f32;
  // When set, 16-bit answers in the other 16-bit dtype are `emulated`.
  ampx_dtype only_16bit_dtype = AMPX_DTYPE_INVALID;
  int queries = 0;

  std::string device_id() const override { return "table:0"; }
  Answer query(const ampx_node_desc& node) override {
    ++queries;
    bool is16 = false;
    for (size_t i = 0; i < node.num_outputs; ++i)
      is16 = is16 || node.outputs[i].dtype == AMPX_DTYPE_F16 ||
             node.outputs[i].dtype == AMPX_DTYPE_BF16;
    for (size_t i = 0; i < node.num_inputs; ++i)
      is16 =
          is16 || node.inputs[i].dtype == AMPX_DTYPE_F16 || node.inputs[i].dtype == AMPX_DTYPE_BF16;
    if (!is16)
      return {
          unsupported_f32.contains(node.op_type) ? AMPX_SUPPORT_UNSUPPORTED : AMPX_SUPPORT_NATIVE,
          -1, ""};
    if (only_16bit_dtype != AMPX_DTYPE_INVALID)
      for (size_t i = 0; i < node.num_outputs; ++i)
        if (node.outputs[i].dtype != only_16bit_dtype &&
            (node.outputs[i].dtype == AMPX_DTYPE_F16 || node.outputs[i].dtype == AMPX_DTYPE_BF16))
          return {AMPX_SUPPORT_EMULATED, -1, "other 16-bit type"};
    auto it = per_op_16.find(node.op_type);
    return {it == per_op_16.end() ? default_16 : it->second, -1, "table"};
  }
};

const NodePlan& node(const AmpPlan& p, const std::string& name) {
  for (const auto& n : p.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

AmpPolicy level(AmpLevel l, DType half = DType::kF16) {
  AmpPolicy p;
  p.level = l;
  p.half = half;
  return p;
}

// Every Cast reads a non-Cast value; at most one Cast per (source, dtype).
void expect_minimal_casts(const AmpPlan& plan) {
  const Graph& g = plan.graph;
  std::set<std::pair<ValueId, DType>> seen;
  for (const Node& n : g.nodes()) {
    if (n.op != OpType::kCast) continue;
    const ValueId src = n.inputs[0];
    const NodeId producer = g.value(src).producer;
    if (producer != kNone) {
      EXPECT_NE(g.node(producer).op, OpType::kCast) << "chain at " << n.name;
    }
    EXPECT_TRUE(seen.insert({src, g.value(n.outputs[0]).type.dtype}).second)
        << "second Cast of the same value to the same dtype: " << n.name;
    EXPECT_NE(g.value(src).type.dtype, g.value(n.outputs[0]).type.dtype) << "no-op Cast " << n.name;
  }
  EXPECT_TRUE(verify_graph(g).empty());
}

struct LevelCase {
  AmpLevel level;
  friend void PrintTo(const LevelCase& c, std::ostream* os) { *os << amp_level_name(c.level); }
  std::map<std::string, DType> intended;  // node -> intended dtype (cnn)
};

class CnnLevels : public ::testing::TestWithParam<LevelCase> {};

TEST_P(CnnLevels, IntendedPrecisionFollowsMindSporeSemantics) {
  const Graph g = make_builtin_model("cnn");
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  const AmpPlan plan = plan_amp(g, level(GetParam().level), caps);
  for (const auto& [name, dtype] : GetParam().intended) {
    EXPECT_EQ(node(plan, name).intended, dtype) << name;
    EXPECT_EQ(node(plan, name).effective, dtype) << name << " (device answers native)";
  }
  expect_minimal_casts(plan);
}

constexpr DType H = DType::kF16, F = DType::kF32;
INSTANTIATE_TEST_SUITE_P(
    Levels, CnnLevels,
    ::testing::Values(
        LevelCase{AmpLevel::kO0,
                  {{"conv1", F}, {"bn1", F}, {"relu1", F}, {"pool1", F}, {"fc1", F}}},
        // O1: white list only (Conv, MatMul, Dense, and MindSpore's ReLU).
        LevelCase{
            AmpLevel::kO1,
            {{"conv1", H}, {"bn1", F}, {"relu1", H}, {"pool1", F}, {"fc1", H}, {"flatten", F}}},
        // O2: all but the black list (BatchNorm, LayerNorm).
        LevelCase{
            AmpLevel::kO2,
            {{"conv1", H}, {"bn1", F}, {"relu1", H}, {"pool1", H}, {"fc1", H}, {"flatten", H}}},
        // O3: everything.
        LevelCase{AmpLevel::kO3,
                  {{"conv1", H}, {"bn1", H}, {"relu1", H}, {"pool1", H}, {"fc2", H}}},
        // auto: white -> 16, black -> f32, others follow their input.
        LevelCase{
            AmpLevel::kAuto,
            {{"conv1", H}, {"bn1", F}, {"relu1", F}, {"pool1", F}, {"fc1", H}, {"relu3", H}}}),
    [](const ::testing::TestParamInfo<LevelCase>& info) {
      return std::string(amp_level_name(info.param.level));
    });

TEST(Planner, O2OnEmulatingDeviceKeepsEverythingF32ForNoNativeKernel) {
  const Graph g = make_builtin_model("cnn");
  TableCaps caps;  // 16-bit answered `emulated`, like cpu_ref
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO2), caps);
  for (const auto& n : plan.nodes) {
    EXPECT_EQ(n.effective, DType::kF32) << n.name;
    if (n.op == OpType::kBatchNorm) {
      EXPECT_EQ(n.intended, DType::kF32);
      EXPECT_EQ(n.reason(), "black-list");
    } else if (n.op == OpType::kFlatten) {  // data movement: follows its f32 input
      EXPECT_EQ(n.intended, DType::kF32);
      EXPECT_EQ(n.reason(), "follows-input");
    } else {
      EXPECT_EQ(n.intended, DType::kF16) << n.name;
      EXPECT_EQ(n.reason(), "no-native-kernel") << n.name;
    }
  }
  EXPECT_EQ(plan.summary.effective_16bit, 0);
  EXPECT_EQ(plan.summary.kept_fp32_no_native, plan.summary.intended_16bit);
  EXPECT_EQ(plan.summary.casts, 0) << "an all-f32 plan needs no Casts";
}

TEST(Planner, CapabilityBlindRunsEmulatedNodesIn16BitButNotUnsupportedOnes) {
  const Graph g = make_builtin_model("mlp");
  TableCaps caps;  // 16-bit `emulated`
  caps.per_op_16["Relu"] = AMPX_SUPPORT_UNSUPPORTED;
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO2), caps, {.capability_blind = true});
  EXPECT_EQ(node(plan, "fc1").effective, DType::kF16);
  EXPECT_EQ(node(plan, "fc1").reason(), "forced-emulated");
  EXPECT_EQ(node(plan, "relu1").effective, DType::kF32);
  EXPECT_EQ(node(plan, "relu1").reason(), "unsupported-16bit");
  EXPECT_GT(plan.summary.casts, 0);
  expect_minimal_casts(plan);
  // The default, honest plan keeps them all f32.
  EXPECT_EQ(plan_amp(g, level(AmpLevel::kO2), caps).summary.effective_16bit, 0);
}

TEST(Planner, UnsupportedIn16BitIsItsOwnReason) {
  const Graph g = make_builtin_model("mlp");
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  caps.per_op_16["Relu"] = AMPX_SUPPORT_UNSUPPORTED;
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO3), caps);
  EXPECT_EQ(node(plan, "relu1").reason(), "unsupported-16bit");
  EXPECT_EQ(node(plan, "fc1").effective, DType::kF16);
  expect_minimal_casts(plan);
}

TEST(Planner, NativeO2CastsOncePerValueAndKeepsGraphEdges) {
  const Graph g = make_builtin_model("cnn");
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO2), caps);
  // Input cast to f16 once; BN sandwiched: relu1 output... conv1 -> bn1 needs
  // f32, bn1 -> relu1 needs f16; the f32 output is cast back at the end.
  const Graph& pg = plan.graph;
  EXPECT_EQ(pg.value(pg.inputs()[0]).type.dtype, DType::kF32);
  EXPECT_EQ(pg.value(pg.outputs()[0]).type.dtype, DType::kF32);
  int activation_casts = 0;
  for (const auto& c : plan.casts) activation_casts += c.on_constant ? 0 : 1;
  // input->f16, conv1->f32 (bn1), bn1->f16, conv2->f32, bn2->f16, fc2->f32.
  EXPECT_EQ(activation_casts, 6);
  expect_minimal_casts(plan);
  EXPECT_EQ(plan.summary.effective_16bit, plan.summary.intended_16bit);
}

// Data movement computes nothing, so it follows its activation inputs at
// every level but O0 and no Cast pair ever brackets it, also on a device
// that only emulates it in 16-bit; an override still wins.
TEST(Planner, DataMovementFollowsItsInputsAndIsNeverBracketedByCasts) {
  const Graph g = make_builtin_model("encoder");
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  for (const char* op : {"Reshape", "Transpose", "Slice", "Concat", "Flatten", "Gather"})
    caps.per_op_16[op] = AMPX_SUPPORT_EMULATED;
  int moved16 = 0;
  for (AmpLevel l : {AmpLevel::kO1, AmpLevel::kO2, AmpLevel::kO3, AmpLevel::kAuto}) {
    const AmpPlan plan = plan_amp(g, level(l), caps);
    const Graph& pg = plan.graph;
    for (const Node& n : pg.nodes()) {
      if (!opset::is_data_movement(op_name(n.op))) continue;
      for (ValueId v : n.inputs) {
        const NodeId producer = pg.value(v).producer;
        if (producer == kNone || pg.value(v).is_constant()) continue;
        EXPECT_NE(pg.node(producer).op, OpType::kCast)
            << amp_level_name(l) << ": " << n.name << " reads " << pg.node(producer).name;
      }
    }
    for (const NodePlan& np : plan.nodes) {
      if (!opset::is_data_movement(op_name(np.op))) continue;
      if (is_16bit_float(np.effective)) {
        ++moved16;
        EXPECT_EQ(np.reason(), "data-movement") << np.name;
      }
    }
    expect_minimal_casts(plan);
  }
  EXPECT_GT(moved16, 0) << "the attention's reshapes run 16-bit between 16-bit MatMuls";

  AmpPolicy keep = level(AmpLevel::kO2);
  keep.overrides.push_back({"q.reshape", false});
  const AmpPlan kept = plan_amp(g, keep, caps);
  EXPECT_EQ(node(kept, "q.reshape").effective, DType::kF32);
  EXPECT_EQ(node(kept, "q.reshape").reason(), "override");
  for (const NodePlan& np : plan_amp(g, level(AmpLevel::kO0), caps).nodes)
    EXPECT_EQ(np.effective, DType::kF32) << np.name;
}

TEST(Planner, CastOfASharedValueIsReusedByEveryConsumer) {
  GraphBuilder b("fanout");
  auto x = b.input("x", DType::kF32, {4, 8});
  auto r1 = b.unary(OpType::kRelu, "r1", x);
  auto r2 = b.unary(OpType::kSigmoid, "r2", x);
  auto r3 = b.unary(OpType::kTanh, "r3", x);
  auto s = b.add(OpType::kAdd, "s", {r1, r2});
  auto t = b.add(OpType::kAdd, "t", {s, r3});
  b.output(t);
  b.output(x);  // the input itself is also an output: stays f32
  const Graph g = std::move(b).build();
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO3), caps);
  ASSERT_EQ(plan.casts.size(), 2u);  // x -> f16 once, t -> f32 once
  EXPECT_EQ(plan.casts[0].value, "x");
  EXPECT_EQ(plan.graph.value(plan.graph.outputs()[1]).type.dtype, DType::kF32);
  expect_minimal_casts(plan);
}

TEST(Planner, CustomListsReplaceTheDefaults) {
  const Graph g = make_builtin_model("cnn");
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  AmpPolicy p = level(AmpLevel::kO1);
  p.white_list = std::vector<OpType>{OpType::kMaxPool};
  AmpPlan plan = plan_amp(g, p, caps);
  EXPECT_EQ(node(plan, "conv1").intended, DType::kF32);
  EXPECT_EQ(node(plan, "relu1").intended, DType::kF32);
  EXPECT_EQ(node(plan, "pool1").intended, DType::kF16);

  p = level(AmpLevel::kO2);
  p.black_list = std::vector<OpType>{OpType::kGemm};
  plan = plan_amp(g, p, caps);
  EXPECT_EQ(node(plan, "bn1").intended, DType::kF16);
  EXPECT_EQ(node(plan, "fc1").intended, DType::kF32);
  EXPECT_EQ(node(plan, "fc1").reason(), "black-list");
}

TEST(Planner, OverridesByNameAndPrefixWinOverTheLevel) {
  const Graph g = make_builtin_model("encoder");
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  AmpPolicy p = level(AmpLevel::kO2);
  p.overrides = {{"attn.*", false}, {"ln1", true}, {"attn.context", true}};
  const AmpPlan plan = plan_amp(g, p, caps);
  EXPECT_EQ(node(plan, "attn.scores").intended, DType::kF32);
  EXPECT_EQ(node(plan, "attn.scores").reason(), "override");
  EXPECT_EQ(node(plan, "attn.softmax").intended, DType::kF32);
  EXPECT_EQ(node(plan, "attn.context").intended, DType::kF16) << "later override wins";
  EXPECT_EQ(node(plan, "ln1").intended, DType::kF16) << "forced despite the black list";
  EXPECT_EQ(node(plan, "ln2").intended, DType::kF32);
  expect_minimal_casts(plan);
}

// An imported quantization op's integer arithmetic (Node::keep_f32) stays
// f32 at O3 on a device with native 16-bit kernels, overrides included;
// the other nodes still go 16-bit.
TEST(Planner, KeepF32NodesStayF32AtEveryLevelEvenWhenForced) {
  Graph g = make_builtin_model("cnn");
  NodeId fc1 = kNone;
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id)
    if (g.node(id).name == "fc1") fc1 = id;
  ASSERT_NE(fc1, kNone);
  g.node(fc1).keep_f32 = true;
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  for (AmpLevel l : {AmpLevel::kO1, AmpLevel::kO2, AmpLevel::kO3, AmpLevel::kAuto}) {
    AmpPolicy p = level(l);
    p.overrides = {{"fc1", true}};
    const AmpPlan plan = plan_amp(g, p, caps);
    const NodePlan& n = node(plan, "fc1");
    EXPECT_EQ(n.intended, DType::kF32) << amp_level_name(l);
    EXPECT_EQ(n.effective, DType::kF32) << amp_level_name(l);
    EXPECT_EQ(n.reason(), "integer-exact") << amp_level_name(l);
    EXPECT_GT(plan.summary.effective_16bit, 0) << amp_level_name(l);
    for (const Node& pn : plan.graph.nodes())
      if (pn.name == "fc1") {
        EXPECT_TRUE(pn.keep_f32) << "the planned graph keeps the mark";
      }
    expect_minimal_casts(plan);
  }
}

TEST(Planner, OverrideMatchingNothingIsAnError) {
  const Graph g = make_builtin_model("mlp");
  TableCaps caps;
  AmpPolicy p = level(AmpLevel::kO2);
  p.overrides = {{"nope*", false}};
  try {
    plan_amp(g, p, caps);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("override 'nope*' matches no node in graph 'mlp'"));
  }
}

TEST(Planner, Bf16IsTheHalfTypeWhenAsked) {
  const Graph g = make_builtin_model("mlp");
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO2, DType::kBF16), caps);
  EXPECT_EQ(node(plan, "fc1").effective, DType::kBF16);
  for (const auto& c : plan.casts) EXPECT_TRUE(c.to == DType::kBF16 || c.to == DType::kF32);
}

TEST(Planner, AutoFollowsTheEffectiveDtypeOfInputs) {
  const Graph g = make_builtin_model("mlp");
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  caps.per_op_16["Gemm"] = AMPX_SUPPORT_EMULATED;
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kAuto), caps);
  // fc1 wanted 16-bit but the device only emulates it, so relu1 follows f32.
  EXPECT_EQ(node(plan, "fc1").reason(), "no-native-kernel");
  EXPECT_EQ(node(plan, "relu1").intended, DType::kF32);
  EXPECT_EQ(node(plan, "relu1").reason(), "follows-input");
  EXPECT_EQ(plan.summary.casts, 0);
}

TEST(Planner, NodesTheDeviceCannotRunAtAllAreAnErrorNamingThemAll) {
  const Graph g = make_builtin_model("mlp");
  TableCaps caps;
  caps.unsupported_f32.insert("Relu");
  try {
    plan_amp(g, level(AmpLevel::kO0), caps);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("3 nodes cannot run on table:0 (no fallback): 'relu1' (Relu "
                                    "f32), 'relu2' (Relu f32), 'relu3' (Relu f32)"));
  }
  // One such node: its own message, with the device's note.
  GraphBuilder b("one");
  b.output(b.unary(OpType::kRelu, "r", b.input("x", DType::kF32, {2, 3})));
  try {
    plan_amp(std::move(b).build(), level(AmpLevel::kO0), caps);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("node 'r' (Relu): device table:0 cannot run it in f32"));
  }
}

TEST(Planner, ExplicitCastsAndIntegerNodesAreLeftAlone) {
  GraphBuilder b("mixed");
  auto x = b.input("x", DType::kF32, {6, 4});
  const std::vector<int64_t> idx{0, 5, -1};
  auto i = b.constant_i64("idx", {3}, idx);
  auto r = b.add(OpType::kRelu, "relu", {x});
  auto gth = b.add(OpType::kGather, "gather", {r, i});
  auto c = b.add(OpType::kCast, "to_f64", {gth}, {{"to", static_cast<int64_t>(DType::kF64)}});
  b.output(c);
  const Graph g = std::move(b).build();
  TableCaps caps;
  caps.default_16 = AMPX_SUPPORT_NATIVE;
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO3), caps);
  EXPECT_EQ(node(plan, "gather").effective, DType::kF16);
  EXPECT_EQ(node(plan, "to_f64").reason(), "explicit-cast");
  // x -> f16 only; the user's Cast reads the f16 value directly.
  EXPECT_EQ(plan.casts.size(), 1u);
  EXPECT_EQ(plan.graph.value(plan.graph.outputs()[0]).type.dtype, DType::kF64);
  expect_minimal_casts(plan);
}

// 16-bit is native only for a Softmax over the last axis and for inputs of
// 4 rows: nodes that differ from another only in an attribute or a shape
// get answers of their own.
class AttrShapeCaps final : public CapabilitySource {
 public:
  std::string device_id() const override { return "attr-shape:0"; }
  Answer query(const ampx_node_desc& node) override {
    const bool is16 = node.num_outputs > 0 && (node.outputs[0].dtype == AMPX_DTYPE_F16 ||
                                               node.outputs[0].dtype == AMPX_DTYPE_BF16);
    if (!is16) return {AMPX_SUPPORT_NATIVE, -1, ""};
    bool native = true;
    for (size_t i = 0; i < node.num_inputs; ++i)
      native = native && node.inputs[i].rank > 0 && node.inputs[i].dims[0] == 4;
    for (size_t i = 0; i < node.num_attrs; ++i)
      if (std::string_view(node.attrs[i].name) == "axis") native = native && node.attrs[i].i == -1;
    return {native ? AMPX_SUPPORT_NATIVE : AMPX_SUPPORT_EMULATED, -1, ""};
  }
};

TEST(Planner, NodesDifferingOnlyInAnAttributeOrAShapeGetTheirOwnAnswers) {
  // The planner looks answers up by node class (op, dtypes, shapes,
  // attributes), once per class and dtype.
  GraphBuilder b("classes");
  const auto x = b.input("x", DType::kF32, {4, 4});
  const auto y = b.input("y", DType::kF32, {2, 8});
  b.output(b.add(OpType::kSoftmax, "softmax_last", {x}, {{"axis", int64_t{-1}}}));
  b.output(b.add(OpType::kSoftmax, "softmax_first", {x}, {{"axis", int64_t{0}}}));
  b.output(b.add(OpType::kRelu, "relu_4x4", {x}));
  b.output(b.add(OpType::kRelu, "relu_2x8", {y}));
  // The same output from inputs of other shapes (a row broadcast).
  const auto row = b.input("row", DType::kF32, {1, 4});
  b.output(b.add(OpType::kAdd, "add_4x4", {x, x}));
  b.output(b.add(OpType::kAdd, "add_row", {x, row}));
  const Graph g = std::move(b).build();
  AttrShapeCaps caps;
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO3), caps);
  EXPECT_EQ(node(plan, "softmax_last").effective, DType::kF16);
  EXPECT_EQ(node(plan, "softmax_first").effective, DType::kF32);
  EXPECT_EQ(node(plan, "softmax_first").reason(), "no-native-kernel");
  EXPECT_EQ(node(plan, "relu_4x4").effective, DType::kF16);
  EXPECT_EQ(node(plan, "relu_2x8").effective, DType::kF32);
  EXPECT_EQ(node(plan, "add_4x4").effective, DType::kF16);
  EXPECT_EQ(node(plan, "add_row").effective, DType::kF32);
}

TEST(Planner, AsksTheDeviceOncePerDistinctNodeSignature) {
  // mlp: fc1..fc4 share one Gemm signature, relu1..3 one Relu signature.
  const Graph g = make_builtin_model("mlp");
  TableCaps caps;
  (void)plan_amp(g, level(AmpLevel::kO0), caps);
  EXPECT_EQ(caps.queries, 2);
  // O2 on an emulating device: each asked in f16 (emulated), then in f32.
  TableCaps caps2;
  (void)plan_amp(g, level(AmpLevel::kO2), caps2);
  EXPECT_EQ(caps2.queries, 4);
}

TEST(Planner, DtypeAutoPicksWhatTheDeviceRunsNatively) {
  const Graph g = make_builtin_model("cnn");
  TableCaps bf16_only;
  bf16_only.default_16 = AMPX_SUPPORT_NATIVE;
  bf16_only.only_16bit_dtype = AMPX_DTYPE_BF16;
  HalfChoice c = choose_half_dtype(g, level(AmpLevel::kO2), bf16_only);
  EXPECT_EQ(c.half, DType::kBF16);
  EXPECT_EQ(c.f16_effective, 0);
  EXPECT_EQ(c.bf16_effective, 10);
  EXPECT_TRUE(c.any_native);

  TableCaps both;
  both.default_16 = AMPX_SUPPORT_NATIVE;
  c = choose_half_dtype(g, level(AmpLevel::kO2), both);
  EXPECT_EQ(c.half, DType::kF16) << "f16 on a tie: more mantissa";

  TableCaps none;  // emulated only, like cpu_ref
  c = choose_half_dtype(g, level(AmpLevel::kO2), none);
  EXPECT_FALSE(c.any_native);
  EXPECT_EQ(plan_amp(g, level(AmpLevel::kO2, c.half), none).summary.effective_16bit, 0);
}

}  // namespace
