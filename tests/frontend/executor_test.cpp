// End to end through real plugins: plan on a device, execute, compare with
// the f32 reference. cpu_ref answers `emulated` for 16-bit, so O2 there is
// the f32 plan; test_native answers `native`, so O2 there really runs 16-bit.
#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <tolerances.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <memory>

using namespace ampx;

namespace {

plugins::PluginHost make_host(const char* native_ops) {
  ::setenv("AMPX_TEST_NATIVE_OPS", native_ops, 1);
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_TEST_PLUGIN_DIR};
  opts.use_env_path = false;
  return plugins::PluginHost(opts);
}

std::vector<HostTensor> run_plan(const AmpPlan& plan, const plugins::Device& dev,
                                 const std::vector<HostTensor>& inputs) {
  Executor exec(plan.graph, dev);
  return exec.run(inputs);
}

AmpPolicy policy(AmpLevel l, DType half = DType::kF16) {
  AmpPolicy p;
  p.level = l;
  p.half = half;
  return p;
}

class BuiltinModel : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltinModel, O2OnCpuRefIsTheF32Plan) {
  const auto host = make_host("");
  const auto& dev = host.device("cpu_ref:0");
  const Graph g = make_builtin_model(GetParam());
  DeviceCapabilities caps(dev);
  const auto inputs = random_inputs(g, 3);
  const AmpPlan o0 = plan_amp(g, policy(AmpLevel::kO0), caps);
  const AmpPlan o2 = plan_amp(g, policy(AmpLevel::kO2), caps);
  EXPECT_EQ(o2.summary.effective_16bit, 0);
  EXPECT_GT(o2.summary.intended_16bit, 0);
  EXPECT_EQ(o2.summary.casts, 0);
  const auto a = run_plan(o0, dev, inputs);
  const auto b = run_plan(o2, dev, inputs);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].data, b[i].data) << "bitwise identical";
}

TEST_P(BuiltinModel, NativeO2RunsIn16BitWithinTolerance) {
  for (DType half : {DType::kF16, DType::kBF16}) {
    const auto host = make_host("*");
    const auto& ref_dev = host.device("cpu_ref:0");
    const auto& dev = host.device("test_native:0");
    const Graph g = make_builtin_model(GetParam());
    const auto inputs = random_inputs(g, 5);
    DeviceCapabilities ref_caps(ref_dev), caps(dev);
    const auto ref = run_plan(plan_amp(g, policy(AmpLevel::kO0), ref_caps), ref_dev, inputs);
    const AmpPlan plan = plan_amp(g, policy(AmpLevel::kO2, half), caps);
    EXPECT_EQ(plan.summary.effective_16bit, plan.summary.intended_16bit);
    EXPECT_GT(plan.summary.casts, 0);
    const auto out = run_plan(plan, dev, inputs);
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].type.dtype, DType::kF32) << "graph outputs keep their dtype";
      const double err = max_relative_error(out[i], ref[i]);
      EXPECT_LT(err, ampx::test::model_tolerance(to_c(half)))
          << GetParam() << " " << dtype_name(half);
      EXPECT_GT(err, 0.0) << "16-bit must differ from f32 somewhere";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, BuiltinModel, ::testing::Values("cnn", "mlp", "encoder"));

// A built-in model planned for one device and loaded there (the plan on
// the heap: the executor refers to its graph).
struct Loaded {
  Graph source;
  std::unique_ptr<AmpPlan> plan;
  std::unique_ptr<Executor> exec;
};
Loaded load_on(const plugins::Device& dev, const std::string& model, AmpLevel level) {
  Loaded l{make_builtin_model(model), nullptr, nullptr};
  DeviceCapabilities caps(dev);
  l.plan = std::make_unique<AmpPlan>(plan_amp(l.source, policy(level), caps));
  l.exec = std::make_unique<Executor>(l.plan->graph, dev);
  return l;
}

TEST(Executor, ReportsMemoryReuseAndFoldsWeightCasts) {
  const auto host = make_host("*");
  const Loaded l = load_on(host.device("test_native:0"), "mlp", AmpLevel::kO2);
  const AmpPlan& plan = *l.plan;
  Executor& exec = *l.exec;
  EXPECT_LT(exec.stats().arena_bytes, exec.stats().no_reuse_bytes);
  EXPECT_EQ(exec.stats().folded_nodes, plan.summary.casts_on_constants);
  EXPECT_EQ(exec.stats().kernels + exec.stats().folded_nodes,
            static_cast<int>(plan.graph.num_nodes()));
  // Each folded weight Cast feeds one Gemm, which gets its 16-bit bytes as
  // constant data at kernel_prepare (to pre-pack them once).
  EXPECT_GT(plan.summary.casts_on_constants, 0);
  EXPECT_EQ(exec.stats().load_time_constant_inputs, plan.summary.casts_on_constants);
}

// Load-time values reach the node description as constant data, byte for
// byte; graph constants keep theirs, and a value of the wrong size is not
// attached.
TEST(LoweredNode, AttachesLoadTimeValuesAsConstants) {
  GraphBuilder b("cast_weight");
  const ValueId x = b.input("x", DType::kF16, {4, 8});
  const ValueId w = b.random_weight("w", {8, 3}, 0.5f);
  const ValueId w16 =
      b.add(OpType::kCast, "w_cast", {w}, {{"to", static_cast<int64_t>(DType::kF16)}});
  b.output(b.add(OpType::kMatMul, "mm", {x, w16}));
  const Graph g = std::move(b).build();
  const NodeId cast = 0, mm = 1;
  ASSERT_EQ(g.node(mm).op, OpType::kMatMul);
  std::vector<std::vector<std::byte>> known(g.num_values());
  const ValueId cast_out = g.node(cast).outputs[0];
  EXPECT_EQ(LoweredNode(g, mm, known).desc().inputs[1].const_data, nullptr) << "nothing known";
  known[static_cast<size_t>(cast_out)].assign(g.value(cast_out).byte_size(), std::byte{0x3c});
  const LoweredNode with(g, mm, known);
  ASSERT_NE(with.desc().inputs[1].const_data, nullptr);
  EXPECT_EQ(with.desc().inputs[1].const_data, known[static_cast<size_t>(cast_out)].data());
  EXPECT_EQ(with.desc().inputs[0].const_data, nullptr) << "x is a run-time input";
  EXPECT_EQ(LoweredNode(g, cast, known).desc().inputs[0].const_data, g.value(w).constant->data());
  known[static_cast<size_t>(cast_out)].resize(3);
  EXPECT_EQ(LoweredNode(g, mm, known).desc().inputs[1].const_data, nullptr) << "wrong size";
}

// A profiled run computes exactly what a plain run does, and times every
// kernel once, in order, on the host clock for a host plugin; its summary
// and trace hold every step.
TEST(Executor, ProfiledRunTimesEveryStepAndMatchesThePlainRun) {
  const auto host = make_host("");
  const Loaded l = load_on(host.device("cpu_ref:0"), "cnn", AmpLevel::kO0);
  const AmpPlan& plan = *l.plan;
  Executor& exec = *l.exec;
  const auto inputs = random_inputs(l.source, 9);
  const auto plain = exec.run(inputs);
  std::vector<RunProfile> runs(3);
  for (RunProfile& p : runs) {
    const auto out = exec.run(inputs, p);
    ASSERT_EQ(out.size(), plain.size());
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].data, plain[i].data);
    ASSERT_EQ(p.steps.size(), static_cast<size_t>(exec.stats().kernels));
    double sum = 0, last_start = -1;
    for (const StepTiming& s : p.steps) {
      EXPECT_GT(s.us, 0.0) << s.name;
      EXPECT_EQ(s.method, plugins::Kernel::TimingMethod::kHost) << "cpu_ref has no device timer";
      EXPECT_GE(s.start_us, last_start) << s.name;
      EXPECT_EQ(s.copy_from, -1);
      EXPECT_FALSE(s.shapes.empty());
      last_start = s.start_us;
      sum += s.us;
    }
    EXPECT_GE(p.total_us, sum) << "the steps are nested in the run";
  }
  // In graph order: the first kernel is the first node.
  EXPECT_EQ(runs[0].steps.front().name, plan.graph.node(plan.graph.topological_order()[0]).name);
  const std::vector<double> predicted(runs[0].steps.size(), 5.0);
  const ProfileSummary s = summarize_profiles(runs, predicted);
  ASSERT_EQ(s.steps.size(), runs[0].steps.size());
  double by_op = 0, by_step = 0;
  for (const StepSummary& st : s.steps) {
    EXPECT_LE(st.min_us, st.step.us);
    EXPECT_GE(st.max_us, st.step.us);
    EXPECT_EQ(st.predicted_us, 5.0);
    by_step += st.step.us;
  }
  for (const OpSummary& op : s.ops) by_op += op.us;
  EXPECT_NEAR(by_op, by_step, 1e-9 * by_step);
  EXPECT_EQ(s.method, "host");
  EXPECT_THROW(summarize_profiles({}, {}), std::invalid_argument);
  const auto trace = nlohmann::json::parse(chrome_trace_json(runs, {"cpu_ref:0"}, predicted));
  size_t complete = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++complete;
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    EXPECT_EQ(e["args"]["device"], "cpu_ref:0");
    EXPECT_EQ(e["args"]["predicted_us"], 5.0);
  }
  EXPECT_EQ(complete, runs.size() * runs[0].steps.size());
}

TEST(Executor, RejectsInputsOfTheWrongShape) {
  const auto host = make_host("");
  const auto& dev = host.device("cpu_ref:0");
  const Graph g = make_builtin_model("mlp");
  DeviceCapabilities caps(dev);
  const AmpPlan plan = plan_amp(g, policy(AmpLevel::kO0), caps);
  Executor exec(plan.graph, dev);
  auto inputs = random_inputs(g, 1);
  inputs[0].type.shape = {32, 1024};
  inputs[0].data.resize(32 * 1024 * 4);
  try {
    exec.run(inputs);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "input 'input': expected f32[64x1024], got f32[32x1024]");
  }
}

// The importer's ops end to end: a multi-output Split, bool and i64 values
// between nodes, black/white/follow classes planned in 16-bit.
Graph importer_ops_graph() {
  GraphBuilder b("importer_ops", 11);
  using Ints = std::vector<int64_t>;
  const ValueId x = b.input("x", DType::kF32, {2, 3, 4, 6});
  const ValueId w = b.random_weight("w", {3, 2, 2, 2}, 0.5f);
  const ValueId ct = b.add(OpType::kConvTranspose, "ct", {x, w}, {{"strides", Ints{2, 2}}});
  const float slope[] = {0.1f, -0.2f};
  const ValueId pr =
      b.add(OpType::kPRelu, "pr", {ct, b.constant("slope", DType::kF32, {2, 1, 1}, slope)});
  const ValueId rs = b.add(OpType::kResize, "rs", {pr},
                           {{"sizes", Ints{2, 2, 5, 6}}, {"mode", std::string("linear")}});
  const auto sp =
      b.add_multi(OpType::kSplit, "sp", {rs}, {{"axis", int64_t{3}}, {"split", Ints{2, 4}}});
  const ValueId e = b.add(OpType::kExp, "exp", {sp[0]});
  const ValueId hs = b.add(OpType::kHardSwish, "hs", {sp[0]});
  const ValueId eq = b.add(OpType::kEqual, "eq", {hs, sp[0]});
  const ValueId wh = b.add(OpType::kWhere, "wh", {eq, e, hs});
  const ValueId pad =
      b.add(OpType::kPad, "pad", {wh},
            {{"pads", Ints{0, 0, 1, 0, 0, 0, 0, 2}}, {"mode", std::string("edge")}});
  const ValueId lsm = b.add(OpType::kLogSoftmax, "lsm", {sp[1]});
  const ValueId am = b.add(OpType::kArgMax, "am", {sp[1]}, {{"axis", int64_t{3}}});
  b.output(pad);
  b.output(lsm);
  b.output(am);
  return std::move(b).build();
}

TEST(Executor, ImporterOpsRunAndPlanIn16Bit) {
  const auto host = make_host("*");
  const auto& ref_dev = host.device("cpu_ref:0");
  const auto& dev = host.device("test_native:0");
  const Graph g = importer_ops_graph();
  const auto inputs = random_inputs(g, 9);
  DeviceCapabilities ref_caps(ref_dev), caps(dev);
  const auto ref = run_plan(plan_amp(g, policy(AmpLevel::kO0), ref_caps), ref_dev, inputs);
  ASSERT_EQ(ref.size(), 3u);
  EXPECT_EQ(ref[0].type, (TensorType{DType::kF32, {2, 2, 6, 4}}));
  EXPECT_EQ(ref[2].type, (TensorType{DType::kI64, {2, 2, 5, 1}}));
  // O2 on cpu_ref (16-bit emulated): the f32 plan, bitwise.
  const auto o2_ref = run_plan(plan_amp(g, policy(AmpLevel::kO2), ref_caps), ref_dev, inputs);
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_EQ(o2_ref[i].data, ref[i].data);
  // auto on a native device: ConvTranspose/PRelu 16-bit, Exp/LogSoftmax f32.
  const AmpPlan plan = plan_amp(g, policy(AmpLevel::kAuto), caps);
  EXPECT_GT(plan.summary.effective_16bit, 0);
  const auto out = run_plan(plan, dev, inputs);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(out[i].type, ref[i].type);
    EXPECT_LE(max_relative_error(out[i], ref[i]), test::model_tolerance(AMPX_DTYPE_F16)) << i;
  }
  EXPECT_EQ(out[2].type, ref[2].type);
}

}  // namespace
