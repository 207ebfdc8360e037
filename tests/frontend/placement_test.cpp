// Placement across devices: the order rule, fallback and its reasons, the
// --no-fallback error, pins, the joint precision/placement decision by cost,
// minimal copies (one per value and destination device), and real runs on a
// plugin that lacks ops (test_native with AMPX_TEST_MISSING_OPS), which must
// equal the single-device run.
#include <ampx/amp/planner.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/ir/verifier.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/session/session.hpp>
#include <test_native_host.hpp>

#include <tolerances.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

using namespace ampx;
using ::testing::HasSubstr;

namespace {

bool uses_16bit(const ampx_node_desc& node) {
  auto is16 = [](ampx_dtype d) { return d == AMPX_DTYPE_F16 || d == AMPX_DTYPE_BF16; };
  for (size_t i = 0; i < node.num_inputs; ++i)
    if (is16(node.inputs[i].dtype)) return true;
  for (size_t i = 0; i < node.num_outputs; ++i)
    if (is16(node.outputs[i].dtype)) return true;
  return false;
}

// A device described by tables: ops it lacks entirely, its 16-bit answers,
// and a cost per node (f32 and 16-bit) for the joint decision.
class FakeDevice final : public CapabilitySource {
 public:
  explicit FakeDevice(std::string id) : id_(std::move(id)) {}
  std::set<std::string> missing;
  std::map<std::string, ampx_support> answer_16;  // default: emulated
  double us_f32 = -1, us_16 = -1;

  std::string device_id() const override { return id_; }
  Answer query(const ampx_node_desc& node) override {
    if (missing.contains(node.op_type)) return {AMPX_SUPPORT_UNSUPPORTED, -1, "no kernel"};
    if (!uses_16bit(node)) return {AMPX_SUPPORT_NATIVE, us_f32, ""};
    auto it = answer_16.find(node.op_type);
    return {it == answer_16.end() ? AMPX_SUPPORT_EMULATED : it->second, us_16, ""};
  }

 private:
  std::string id_;
};

const NodePlan& node(const AmpPlan& p, const std::string& name) {
  for (const auto& n : p.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

AmpPolicy level(AmpLevel l) {
  AmpPolicy p;
  p.level = l;
  return p;
}

// x -> relu -> [tanh, sigmoid] -> add -> y: relu's output has two readers.
Graph diamond() {
  GraphBuilder b("diamond");
  auto x = b.input("x", DType::kF32, {4, 8});
  auto r = b.unary(OpType::kRelu, "relu", x);
  auto t = b.unary(OpType::kTanh, "tanh", r);
  auto s = b.unary(OpType::kSigmoid, "sigmoid", r);
  b.output(b.add(OpType::kAdd, "add", {t, s}));
  return std::move(b).build();
}

// The copies a placed graph needs, counted independently of plan_copies():
// distinct (value, reader device) pairs whose value lives elsewhere.
size_t cross_device_pairs(const Graph& g) {
  std::set<std::pair<ValueId, int>> pairs;
  std::map<ValueId, int> home;
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    for (ValueId v : n.inputs) {
      if (g.value(v).is_constant()) continue;
      const NodeId p = g.value(v).producer;
      if (p != kNone && g.node(p).op == OpType::kCast) {
        // A weight Cast folded at load is not copied per run.
        const Value& src = g.value(g.node(p).inputs[0]);
        if (src.is_constant()) continue;
      }
      int h = p != kNone ? g.node(p).device : (home.contains(v) ? home[v] : (home[v] = n.device));
      if (h != n.device) pairs.insert({v, n.device});
    }
  }
  return pairs.size();
}

}  // namespace

TEST(Placement, FallsBackWithTheReasonAndCopiesEachValueOncePerDevice) {
  FakeDevice gpu("gpu:0"), ref("cpu_ref:0");
  gpu.missing = {"Tanh", "Sigmoid"};
  const PlanDevice devices[] = {{&gpu, nullptr, false}, {&ref, nullptr, true}};
  const Graph g = diamond();
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO0), devices);
  EXPECT_EQ(plan.devices, (std::vector<std::string>{"gpu:0", "cpu_ref:0"}));
  EXPECT_EQ(node(plan, "relu").device, 0);
  EXPECT_EQ(node(plan, "relu").placement_text(), "first-choice");
  EXPECT_EQ(node(plan, "tanh").device, 1);
  EXPECT_EQ(node(plan, "tanh").placement_text(), "fallback: unsupported on gpu:0");
  EXPECT_EQ(node(plan, "sigmoid").device, 1);
  EXPECT_EQ(plan.summary.fallbacks, 2);
  EXPECT_EQ(plan.summary.nodes_per_device, (std::vector<int>{2, 2}));
  // relu's output goes to cpu_ref once for both readers; tanh and sigmoid
  // come back to gpu:0 for add.
  ASSERT_EQ(plan.copies.size(), 3u);
  EXPECT_EQ(plan.copies[0].value, "relu");
  EXPECT_EQ(plan.copies[0].from, 0);
  EXPECT_EQ(plan.copies[0].to, 1);
  EXPECT_EQ(plan.copies[0].bytes, 4u * 8 * 4);
  EXPECT_EQ(plan.summary.copy_bytes, 3u * 4 * 8 * 4);
  EXPECT_EQ(plan.copies.size(), cross_device_pairs(plan.graph));
  EXPECT_NO_THROW(verify_graph_or_throw(plan.graph));
}

TEST(Placement, WithoutFallbackEveryNodeNoDeviceRunsIsListed) {
  FakeDevice gpu("gpu:0");
  gpu.missing = {"Tanh", "Sigmoid"};
  const PlanDevice devices[] = {{&gpu, nullptr, false}};
  try {
    (void)plan_amp(diamond(), level(AmpLevel::kO0), devices);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("2 nodes cannot run on gpu:0 (no fallback)"));
    EXPECT_THAT(e.what(), HasSubstr("'tanh' (Tanh f32)"));
    EXPECT_THAT(e.what(), HasSubstr("'sigmoid' (Sigmoid f32)"));
  }
}

TEST(Placement, SecondListedDeviceIsAFallbackAndTheUnusedLastResortIsDropped) {
  FakeDevice gpu("gpu:0"), cpu("cpu:0"), ref("cpu_ref:0");
  gpu.missing = {"Sigmoid"};
  const PlanDevice devices[] = {
      {&gpu, nullptr, false}, {&cpu, nullptr, false}, {&ref, nullptr, true}};
  const AmpPlan plan = plan_amp(diamond(), level(AmpLevel::kO0), devices);
  EXPECT_EQ(node(plan, "sigmoid").device, 1);
  EXPECT_EQ(node(plan, "sigmoid").placement_text(), "fallback: unsupported on gpu:0");
  EXPECT_EQ(plan.devices, (std::vector<std::string>{"gpu:0", "cpu:0"}));
  EXPECT_EQ(plan.device_id, "gpu:0,cpu:0");
}

TEST(Placement, PinsOverrideTheOrderAndBadPinsAreErrors) {
  FakeDevice gpu("gpu:0"), ref("cpu_ref:0");
  const PlanDevice devices[] = {{&gpu, nullptr, false}, {&ref, nullptr, true}};
  const DevicePin pins[] = {{"sig*", 1}};
  const AmpPlan plan = plan_amp(diamond(), level(AmpLevel::kO0), devices, {}, pins);
  EXPECT_EQ(node(plan, "sigmoid").device, 1);
  EXPECT_EQ(node(plan, "sigmoid").placement, PlacementReason::kOverride);
  EXPECT_EQ(plan.summary.pinned, 1);
  EXPECT_EQ(plan.summary.fallbacks, 0);

  const DevicePin nothing[] = {{"nope*", 1}};
  EXPECT_THROW((void)plan_amp(diamond(), level(AmpLevel::kO0), devices, {}, nothing),
               std::invalid_argument);
  gpu.missing = {"Sigmoid"};
  const DevicePin onto_gpu[] = {{"sigmoid", 0}};
  try {
    (void)plan_amp(diamond(), level(AmpLevel::kO0), devices, {}, onto_gpu);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'sigmoid' (Sigmoid): device gpu:0 cannot run it"));
    EXPECT_THAT(e.what(), HasSubstr("pinned"));
  }
}

TEST(Placement, A16BitNodeTheFirstDeviceOnlyEmulatesGoesWhereItIsFasterCopiesIncluded) {
  // gpu:0 emulates Relu in 16-bit; npu:0 (listed second) has it native.
  FakeDevice gpu("gpu:0"), npu("npu:0");
  gpu.us_f32 = 100;
  npu.answer_16["Relu"] = AMPX_SUPPORT_NATIVE;
  npu.us_16 = 10;  // much faster than gpu's f32, even with copies
  npu.us_f32 = 1000;
  GraphBuilder b("one");
  auto x = b.input("x", DType::kF32, {4, 8});
  b.output(b.unary(OpType::kRelu, "relu", x));
  const Graph g = std::move(b).build();
  const PlanDevice devices[] = {{&gpu, nullptr, false}, {&npu, nullptr, false}};
  AmpPlan plan = plan_amp(g, level(AmpLevel::kO3), devices);
  EXPECT_EQ(node(plan, "relu").device, 1);
  EXPECT_EQ(node(plan, "relu").placement, PlacementReason::kCost);
  EXPECT_EQ(node(plan, "relu").effective, DType::kF16);
  EXPECT_THAT(node(plan, "relu").placement_note, HasSubstr("16-bit on npu:0"));

  npu.us_16 = 500;  // now slower than f32 on gpu:0
  plan = plan_amp(g, level(AmpLevel::kO3), devices);
  EXPECT_EQ(node(plan, "relu").device, 0);
  EXPECT_EQ(node(plan, "relu").placement, PlacementReason::kFirstChoice);
  EXPECT_EQ(node(plan, "relu").effective, DType::kF32);
  EXPECT_EQ(node(plan, "relu").effective_reason, EffectiveReason::kNoNativeKernel);
}

TEST(Placement, NativeFirstChoiceStays16BitAndCastsGoWhereTheValueIsComputed) {
  FakeDevice gpu("gpu:0"), ref("cpu_ref:0");
  gpu.answer_16 = {{"Relu", AMPX_SUPPORT_NATIVE}, {"Add", AMPX_SUPPORT_NATIVE}};
  gpu.missing = {"Tanh"};
  const PlanDevice devices[] = {{&gpu, nullptr, false}, {&ref, nullptr, true}};
  const AmpPlan plan = plan_amp(diamond(), level(AmpLevel::kO3), devices);
  EXPECT_EQ(node(plan, "relu").effective, DType::kF16);
  EXPECT_EQ(node(plan, "tanh").device, 1);
  EXPECT_EQ(node(plan, "tanh").effective, DType::kF32);  // cpu_ref emulates 16-bit
  // relu's f16 output is widened on gpu:0 (before the copy), not on cpu_ref.
  bool found = false;
  for (const CastRecord& c : plan.casts)
    if (c.value == "relu" && c.to == DType::kF32) {
      found = true;
      EXPECT_EQ(c.device, 0);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(plan.copies.size(), cross_device_pairs(plan.graph));
  EXPECT_NO_THROW(verify_graph_or_throw(plan.graph));
}

TEST(Placement, FusionNeverCrossesDevices) {
  FakeDevice gpu("gpu:0"), ref("cpu_ref:0");
  gpu.missing = {"Relu"};
  const PlanDevice devices[] = {{&gpu, nullptr, false}, {&ref, nullptr, true}};
  const Graph g = make_builtin_model("mlp");
  const AmpPlan plan = plan_amp(g, level(AmpLevel::kO0), devices);
  CapabilitySource* caps[] = {&gpu, &ref};
  const FusedGraph fused = fuse_placed(plan.graph, caps);
  for (const FusedGroup& group : fused.groups)
    for (const std::string& absorbed : group.absorbed)
      EXPECT_NE(absorbed.rfind("relu", 0), 0u) << group.node << " absorbed " << absorbed;
  EXPECT_EQ(plan_copies(fused.graph).size(), plan.copies.size());
}

// Real plugins: test_native lacks the ops in AMPX_TEST_MISSING_OPS.
class PlacedRun : public ::testing::TestWithParam<std::string> {
 protected:
  static plugins::PluginHost host(const char* missing) {
    return test::test_native_host({.missing_ops = missing});
  }
};

TEST_P(PlacedRun, OutputsEqualTheSingleDeviceRunAndCopiesAreMinimal) {
  const auto h = host("Relu,Softmax,LayerNorm,BatchNorm");
  const auto& native = h.device("test_native:0");
  const auto& ref = h.device("cpu_ref:0");
  DeviceCapabilities native_caps(native), ref_caps(ref);
  const Graph g = make_builtin_model(GetParam());
  const auto inputs = random_inputs(g, 11);
  const PlanDevice devices[] = {{&native_caps, nullptr, false}, {&ref_caps, nullptr, true}};
  const plugins::Device* runtime[] = {&native, &ref};

  // O0: the same reference kernels on both devices, so bit for bit.
  const AmpPlan single = plan_amp(g, level(AmpLevel::kO0), ref_caps);
  const AmpPlan placed = plan_amp(g, level(AmpLevel::kO0), devices);
  EXPECT_GT(placed.summary.fallbacks, 0);
  EXPECT_GT(placed.summary.nodes_per_device[0], 0);
  Executor single_exec(single.graph, ref);
  Executor placed_exec(placed.graph, runtime);
  const auto want = single_exec.run(inputs);
  const auto got = placed_exec.run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].data, want[i].data) << GetParam();
  EXPECT_EQ(placed_exec.stats().copies, static_cast<int>(placed.copies.size()));
  EXPECT_EQ(placed_exec.stats().copy_bytes, placed.summary.copy_bytes);
  EXPECT_EQ(placed.copies.size(), cross_device_pairs(placed.graph));
  EXPECT_EQ(placed_exec.stats().kernels_per_device[0] + placed_exec.stats().kernels_per_device[1],
            placed_exec.stats().kernels);

  // O2 on the native device: 16-bit where it runs, f32 fallbacks, fused
  // per device; within the 16-bit model tolerance of the f32 run.
  const AmpPlan o2 = plan_amp(g, level(AmpLevel::kO2), devices);
  EXPECT_GT(o2.summary.effective_16bit, 0);
  CapabilitySource* caps[] = {&native_caps, &ref_caps};
  const FusedGraph fused = fuse_placed(o2.graph, caps);
  Executor o2_exec(fused.graph, runtime);
  const auto out = o2_exec.run(inputs);
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_LT(max_relative_error(out[i], want[i]), ampx::test::model_tolerance(AMPX_DTYPE_F16))
        << GetParam();
  EXPECT_EQ(o2_exec.stats().copies, static_cast<int>(plan_copies(fused.graph).size()));
}

INSTANTIATE_TEST_SUITE_P(Builtin, PlacedRun, ::testing::Values("cnn", "mlp", "encoder"));

// A device that runs no Cast (a plugin with only compute kernels): the
// planner's Casts go to a device of the plan that answers them, never to one
// that refused, and with no such device the plan fails naming the Cast.
TEST(Session, CastsGoWhereTheyRun) {
  ::setenv("AMPX_TEST_MISSING_OPS", "Cast", 1);
  ::setenv("AMPX_TEST_NATIVE_OPS", "*", 1);
  Session session(
      {.devices = "test_native:0", .plugin_dirs = {AMPX_TEST_PLUGIN_DIR}, .use_costs = false});
  Session alone({.devices = "test_native:0",
                 .plugin_dirs = {AMPX_TEST_PLUGIN_DIR},
                 .fallback = false,
                 .use_costs = false});
  ::unsetenv("AMPX_TEST_MISSING_OPS");
  ::unsetenv("AMPX_TEST_NATIVE_OPS");
  const Graph g = session.load("builtin:mlp");
  const PlannedModel planned = session.plan(g, {.policy = level(AmpLevel::kO2)});
  const AmpPlan& plan = planned.plan;
  ASSERT_GT(plan.summary.casts, 0);
  ASSERT_EQ(plan.devices.size(), 2u);
  for (const CastRecord& c : plan.casts) EXPECT_EQ(plan.devices[c.device], "cpu_ref:0") << c.name;
  EXPECT_GT(plan.summary.effective_16bit, 0);
  CompiledModel model = session.compile(planned);
  const auto out = model.run(random_inputs(g, 3));
  ASSERT_EQ(out.size(), 1u);

  try {
    (void)alone.plan(alone.load("builtin:mlp"), {.policy = level(AmpLevel::kO2)});
    ADD_FAILURE() << "a plan with a Cast no device runs";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("Cast f32 -> f16 of value"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("test_native:0"), std::string::npos) << e.what();
  }
}

TEST(Session, SelectsPlansCompilesAndRunsAcrossDevices) {
  ::setenv("AMPX_TEST_MISSING_OPS", "Relu", 1);
  Session session(
      {.devices = "test_native:0", .plugin_dirs = {AMPX_TEST_PLUGIN_DIR}, .use_costs = false});
  ::unsetenv("AMPX_TEST_MISSING_OPS");
  const Graph g = session.load("builtin:cnn");
  const DeviceSelection& sel = session.select_devices(g);
  ASSERT_EQ(sel.devices.size(), 2u);
  EXPECT_EQ(sel.devices[1].device->id(), "cpu_ref:0");
  EXPECT_TRUE(sel.devices[1].fallback_only);
  const PlannedModel planned = session.plan(g, {.policy = level(AmpLevel::kO0)});
  const AmpPlan& plan = planned.plan;
  EXPECT_EQ(plan.summary.fallbacks, 3);  // relu1..relu3
  CompiledModel model = session.compile(planned);
  const auto inputs = random_inputs(g, 2);
  const auto out = model.run(inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(model.stats().copies, static_cast<int>(plan.copies.size()));
  // Profiled: the same result, and every kernel and copy a step of its own.
  RunProfile profile;
  const auto profiled = model.run(inputs, profile);
  EXPECT_EQ(profiled[0].data, out[0].data);
  ASSERT_EQ(profile.steps.size(),
            static_cast<size_t>(model.stats().kernels + model.stats().copies));
  int copies = 0;
  for (const StepTiming& s : profile.steps) {
    if (s.op != "Copy") continue;
    ++copies;
    EXPECT_GE(s.copy_from, 0) << s.name;
    EXPECT_NE(s.copy_from, s.device) << s.name;
    EXPECT_GE(s.us, 0.0) << s.name;
  }
  EXPECT_EQ(copies, model.stats().copies);

  EXPECT_THROW(
      (void)session.plan(g, {.policy = level(AmpLevel::kO0), .pins = {{"conv*", "vulkan:7"}}}),
      std::invalid_argument);
}

TEST(Session, UnknownDevicesAndBadListsAreClearErrors) {
  Session session({.devices = "test_native:0,nosuch:0", .plugin_dirs = {AMPX_TEST_PLUGIN_DIR}});
  const Graph g = session.load("builtin:mlp");
  try {
    session.select_devices(g);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown device 'nosuch:0'"));
    EXPECT_THAT(e.what(), HasSubstr("available:"));
  }
  EXPECT_THROW(parse_device_list("a:0,,b:0"), std::invalid_argument);
  EXPECT_THROW(parse_device_list("a:0,a:0"), std::invalid_argument);
  EXPECT_EQ(parse_device_list(" a:0 , b:1"), (std::vector<std::string>{"a:0", "b:1"}));
}

TEST(Session, ExcludedPluginsAreNotLoaded) {
  Session session({.devices = "test_native:0",
                   .excluded_plugins = {"test_native"},
                   .plugin_dirs = {AMPX_TEST_PLUGIN_DIR}});
  EXPECT_EQ(session.host().find_device("test_native:0"), nullptr);
  const Graph g = session.load("builtin:mlp");
  EXPECT_THROW(session.select_devices(g), std::invalid_argument);
}

TEST(Session, AutoRanksEveryDeviceAndSaysWhy) {
  ::setenv("AMPX_TEST_NATIVE_OPS", "*", 1);
  Session session({.devices = "auto", .plugin_dirs = {AMPX_TEST_PLUGIN_DIR}});
  const Graph g = session.load("builtin:mlp");
  const DeviceSelection& sel = session.select_devices(g);
  EXPECT_EQ(sel.spec, "auto");
  ASSERT_EQ(sel.ranking.size(), sel.devices.size());
  EXPECT_EQ(sel.devices.size(), session.host().devices().size());
  for (const auto& line : sel.ranking) EXPECT_THAT(line, HasSubstr(":0: "));
  for (const auto& d : sel.devices) EXPECT_FALSE(d.fallback_only);
}

TEST(Placement, MeasuredCopyCostsFromTheProbeDecideTheJointChoice) {
  // tanh runs f32 on gpu:0 (nobody has it natively in 16-bit); relu could
  // go 16-bit to npu:0, which has it native and fast, if the copy of tanh's
  // output to npu:0 is cheap.
  FakeDevice gpu("gpu:0"), npu("npu:0");
  gpu.us_f32 = 100;
  npu.answer_16["Relu"] = AMPX_SUPPORT_NATIVE;
  npu.us_16 = 10;
  npu.us_f32 = 1000;  // its f32 kernels are slow: the cost step keeps relu 16-bit there
  GraphBuilder b("two");
  auto x = b.input("x", DType::kF32, {4, 8});
  b.output(b.unary(OpType::kRelu, "relu", b.unary(OpType::kTanh, "tanh", x)));
  const Graph g = std::move(b).build();
  auto plan_with_h2d_latency = [&](double latency_us) {
    capability::DeviceProfile profile;
    profile.fingerprint = "npu";
    profile.copies = {{"h2d", latency_us, 0.1}, {"d2h", 1.0, 0.1}};
    auto cost = capability::make_profile_cost_model(profile, capability::make_hint_cost_model(npu));
    const PlanDevice devices[] = {{&gpu, nullptr, false}, {&npu, cost.get(), false}};
    return plan_amp(g, level(AmpLevel::kO3), devices);
  };
  const AmpPlan cheap = plan_with_h2d_latency(2.0);
  EXPECT_EQ(node(cheap, "tanh").device, 0);
  EXPECT_EQ(node(cheap, "relu").device, 1);
  EXPECT_EQ(node(cheap, "relu").placement, PlacementReason::kCost);
  EXPECT_EQ(node(cheap, "relu").effective, DType::kF16);
  // The measured host-to-device latency of npu:0 makes the copy cost more
  // than the 16-bit kernel saves: relu stays f32 on gpu:0.
  const AmpPlan dear = plan_with_h2d_latency(500.0);
  EXPECT_EQ(node(dear, "relu").device, 0);
  EXPECT_EQ(node(dear, "relu").effective, DType::kF32);
  EXPECT_EQ(dear.copies.size(), 0u);
  // One copy per run in the cheap plan (tanh's f16 output to npu:0; the
  // graph output is read where relu runs), priced from the same fits:
  // gpu:0 has none (half the constant), npu:0's host-to-device fit.
  ASSERT_EQ(cheap.copies.size(), 1u);
  EXPECT_EQ(cheap.copies[0].to, 1);
  const uint64_t bytes = cheap.copies[0].bytes;
  EXPECT_EQ(bytes, 4u * 8 * 2);
  EXPECT_DOUBLE_EQ(copy_cost_us(bytes, nullptr, nullptr), copy_cost_us(bytes));
  EXPECT_GT(cheap.predicted_us, 2.0 + bytes * 0.1e-3 + copy_cost_us(bytes) / 2 - 1e-9);
}

// Session::tune: the plan kept is never slower than O0 beyond the noise it
// states (the rule, whatever this machine's timings), it is stored, and
// Session::plan applies it until told not to.
TEST(Session, TunesStoresAndReusesAPlan) {
  const auto db = std::filesystem::temp_directory_path() /
                  ("ampx_session_tune_" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(db);
  ::setenv("AMPX_TEST_NATIVE_OPS", "*", 1);
  Session session(
      {.devices = "test_native:0", .plugin_dirs = {AMPX_TEST_PLUGIN_DIR}, .db_path = db.string()});
  const Graph g = session.load("builtin:cnn");
  const PlanRequest request{.policy = level(AmpLevel::kO2)};
  PlanRequest untuned = request;
  untuned.tuned = TunedPlans::kIgnore;
  const TuneResult r = session.tune(
      g, session.plan(g, untuned),
      {.max_replans = 2, .profile_runs = 2, .warmup = 1, .verify_rounds = 2, .verify_runs = 1});
  ASSERT_EQ(r.verified.size(), 3u);
  for (const VerifiedPlan& v : r.verified)
    if (v.label == r.kept) EXPECT_LE(v.ratio_to_o0, 1 + r.noise);
  EXPECT_TRUE(r.stored);
  EXPECT_GT(r.measured_signatures, 0);
  // The stored plan, applied by the next plan of the model, runs.
  const PlannedModel planned = session.plan(g, request);
  const AmpPlan& reused = planned.plan;
  CompiledModel tuned = session.compile(planned);
  EXPECT_EQ(tuned.run(random_inputs(g, 3)).size(), 1u);
  EXPECT_FALSE(reused.tuned.empty());
  ASSERT_EQ(reused.nodes.size(), r.plan.nodes.size());
  for (size_t i = 0; i < reused.nodes.size(); ++i)
    EXPECT_EQ(reused.nodes[i].effective, r.plan.nodes[i].effective) << reused.nodes[i].name;
  Session fresh({.devices = "test_native:0",
                 .plugin_dirs = {AMPX_TEST_PLUGIN_DIR},
                 .use_tuned = false,
                 .db_path = db.string()});
  EXPECT_TRUE(fresh.plan(g, request).plan.tuned.empty());
  ::unsetenv("AMPX_TEST_NATIVE_OPS");
  std::filesystem::remove(db);
  std::filesystem::remove(db.string() + "-wal");
  std::filesystem::remove(db.string() + "-shm");
  std::filesystem::remove(db.string() + ".lock");
}
