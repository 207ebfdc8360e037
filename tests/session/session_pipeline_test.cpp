// Session::plan(graph, PlanRequest) -> PlannedModel -> Session::compile ->
// CompiledModel::run and verify_against_reference: the path every CLI
// command takes (apps/ampx is a shell around it).
#include <ampx/session/session.hpp>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ampx {
namespace {

// test_native:0 answers native for every op in f16 and bf16 unless told
// otherwise (AMPX_TEST_NATIVE_*), so 16-bit plans are real plans here.
SessionOptions native_options() {
  return {.devices = "test_native:0", .plugin_dirs = {AMPX_TEST_PLUGIN_DIR}, .use_costs = false};
}

class SessionPipeline : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("AMPX_TEST_NATIVE_OPS", "*", 1); }
  void TearDown() override { ::unsetenv("AMPX_TEST_NATIVE_OPS"); }
};

PlanRequest o2(PlanPurpose purpose) {
  PlanRequest r;
  r.policy.level = AmpLevel::kO2;
  r.costs = CostUse::kNone;
  r.purpose = purpose;
  return r;
}

TEST_F(SessionPipeline, PlanCarriesWhatItWasPlannedWith) {
  Session session(native_options());
  const Graph g = session.load("builtin:mlp");
  PlanRequest r = o2(PlanPurpose::kRun);
  r.policy.half = DType::kBF16;
  const PlannedModel pm = session.plan(g, r);
  EXPECT_EQ(pm.policy.half, DType::kBF16);
  EXPECT_FALSE(pm.dtype_choice);  // HalfDType::kPolicy: nothing chosen
  EXPECT_EQ(pm.source, &g);
  EXPECT_EQ(pm.model_key, g.name);
  ASSERT_FALSE(pm.selection.devices.empty());
  EXPECT_EQ(pm.selection.devices.front().device->id(), "test_native:0");
  EXPECT_GT(pm.plan.summary.effective_16bit, 0);
  EXPECT_GT(pm.plan.graph.num_nodes(), 0u);  // kRun keeps the rewritten graph
}

TEST_F(SessionPipeline, DtypeAutoIsResolvedByTheSession) {
  // The device runs bf16 only: `auto` must pick it over the default f16.
  ::setenv("AMPX_TEST_NATIVE_DTYPES", "bf16", 1);
  Session session(native_options());
  ::unsetenv("AMPX_TEST_NATIVE_DTYPES");
  const Graph g = session.load("builtin:mlp");
  PlanRequest r = o2(PlanPurpose::kInspect);
  r.half = HalfDType::kAuto;
  const PlannedModel pm = session.plan(g, r);
  ASSERT_TRUE(pm.dtype_choice);
  EXPECT_EQ(pm.dtype_choice->half, DType::kBF16);
  EXPECT_EQ(pm.policy.half, DType::kBF16);
  EXPECT_GT(pm.dtype_choice->bf16_effective, pm.dtype_choice->f16_effective);
}

TEST_F(SessionPipeline, RequestNamesItsDevicesAndFallback) {
  Session session(native_options());
  const Graph g = session.load("builtin:mlp");
  // The session's list, with the reference as the last resort.
  const PlannedModel first = session.plan(g, o2(PlanPurpose::kInspect));
  ASSERT_EQ(first.selection.devices.size(), 2u);
  EXPECT_EQ(first.selection.devices.front().device->id(), "test_native:0");
  // Another list in the request: selected anew, not the session's reused.
  PlanRequest r = o2(PlanPurpose::kInspect);
  r.devices = "cpu_ref:0";
  const PlannedModel listed = session.plan(g, r);
  ASSERT_EQ(listed.selection.devices.size(), 1u);
  EXPECT_EQ(listed.plan.device_id, "cpu_ref:0");
  // No fallback: only the listed device, even where it is not the reference.
  PlanRequest alone = o2(PlanPurpose::kInspect);
  alone.fallback = Fallback::kRefuse;
  const PlannedModel refused = session.plan(g, alone);
  ASSERT_EQ(refused.selection.devices.size(), 1u);
  EXPECT_EQ(refused.plan.device_id, "test_native:0");
}

// What a request leaves unset (fallback, cost step, tuned plans) is the
// session's: the Trainer and ShapeCachedModel plan with SessionOptions.
TEST_F(SessionPipeline, WhatARequestLeavesUnsetIsTheSessions) {
  SessionOptions o = native_options();
  o.fallback = false;  // and use_costs = false
  Session session(o);
  const Graph g = session.load("builtin:mlp");
  const PlannedModel unset = session.plan(g, {.purpose = PlanPurpose::kInspect});
  ASSERT_EQ(unset.selection.devices.size(), 1u);  // no reference as the last resort
  EXPECT_EQ(unset.selection.devices[0].cost, nullptr);
  // Named in the request, they win.
  const PlannedModel named = session.plan(g, {.costs = CostUse::kModel,
                                              .fallback = Fallback::kToReference,
                                              .purpose = PlanPurpose::kInspect});
  ASSERT_EQ(named.selection.devices.size(), 2u);
  EXPECT_NE(named.selection.devices[0].cost, nullptr);
}

// PlanRequest::selection: planned on an earlier plan's devices as they are,
// whatever the request's device list says (a training step's evaluation,
// a shape cache's next shape).
TEST_F(SessionPipeline, ASelectionIsPlannedOnAsItIs) {
  Session session(native_options());
  const Graph g = session.load("builtin:mlp");
  PlanRequest alone = o2(PlanPurpose::kRun);
  alone.fallback = Fallback::kRefuse;
  const PlannedModel first = session.plan(g, alone);
  ASSERT_EQ(first.plan.device_id, "test_native:0");
  PlanRequest again = alone;
  again.devices = "cpu_ref:0";
  again.selection = first.selection;
  const PlannedModel second = session.plan(g, again);
  EXPECT_EQ(second.plan.device_id, "test_native:0");
  EXPECT_EQ(second.selection.devices.size(), first.selection.devices.size());
  EXPECT_EQ(session.compile(second).run(random_inputs(g, 2)).size(), g.outputs().size());
  // Without it, the request's list is selected.
  again.selection.reset();
  EXPECT_EQ(session.plan(g, again).plan.device_id, "cpu_ref:0");
  // A profile plans for its own device.
  PlanRequest profiled = o2(PlanPurpose::kInspect);
  profiled.profile = capability::DeviceProfile{};
  profiled.selection = first.selection;
  EXPECT_THROW((void)session.plan(g, profiled), std::invalid_argument);
}

// PlanLogging::kQuiet: the nodes that fall back are not logged (the
// Trainer re-plans its step per batch size; the CLI's plan logs them).
TEST_F(SessionPipeline, QuietPlansDoNotLogTheirFallbacks) {
  ::setenv("AMPX_TEST_MISSING_OPS", "Relu", 1);
  Session session(native_options());
  ::unsetenv("AMPX_TEST_MISSING_OPS");
  const Graph g = session.load("builtin:cnn");
  std::ostringstream log;
  const auto saved = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "captured", std::make_shared<spdlog::sinks::ostream_sink_st>(log)));
  const PlannedModel reported = session.plan(g, o2(PlanPurpose::kInspect));
  const std::string reported_log = log.str();
  log.str("");
  PlanRequest quiet = o2(PlanPurpose::kInspect);
  quiet.logging = PlanLogging::kQuiet;
  const PlannedModel unlogged = session.plan(g, quiet);
  spdlog::set_default_logger(saved);
  ASSERT_GT(reported.plan.summary.fallbacks, 0);
  EXPECT_EQ(unlogged.plan.summary.fallbacks, reported.plan.summary.fallbacks);
  EXPECT_NE(reported_log.find("fall back from their first-choice device"), std::string::npos)
      << reported_log;
  EXPECT_EQ(log.str(), "");
}

TEST_F(SessionPipeline, BadPinsAndProfilesAreOneLineErrors) {
  Session session(native_options());
  const Graph g = session.load("builtin:mlp");
  PlanRequest pinned = o2(PlanPurpose::kInspect);
  pinned.pins = {{"fc*", "nowhere:0"}};
  EXPECT_THROW((void)session.plan(g, pinned), std::invalid_argument);
  PlanRequest profiled = o2(PlanPurpose::kInspect);
  profiled.profile = std::filesystem::path("/nonexistent/profile.json");
  profiled.pins = {{"fc*", "cpu_ref:0"}};
  try {
    (void)session.plan(g, profiled);
    ADD_FAILURE() << "a profile with pins";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--profile plans for one device"), std::string::npos)
        << e.what();
  }
}

TEST_F(SessionPipeline, CompileRunsAndVerifiesAgainstTheReference) {
  Session session(native_options());
  const Graph g = session.load("builtin:mlp");
  const PlannedModel pm = session.plan(g, o2(PlanPurpose::kRun));
  CompiledModel model = session.compile(pm, {.reference = ReferenceCheck::kPrepare});
  const auto inputs = random_inputs(g, 7);
  const auto outputs = model.run(inputs);
  EXPECT_GT(model.stats().kernels, 0);
  model.release();
  EXPECT_THROW((void)model.run(inputs), std::logic_error);
  const RunCheck check = model.verify_against_reference(inputs, outputs);
  EXPECT_TRUE(check.passed()) << check.failure_line("cpu_ref:0 O0 f32");
  EXPECT_EQ(check.tolerance_dtype, DType::kF16);  // the plan computes in f16
  ASSERT_EQ(check.outputs.size(), g.outputs().size());
  EXPECT_EQ(check.outputs[0].name, g.value(g.outputs()[0]).name);

  // A wrong answer fails the check, naming the output.
  auto wrong = outputs;
  std::fill(wrong[0].data.begin(), wrong[0].data.end(), std::byte{0});
  const RunCheck bad = model.verify_against_reference(inputs, wrong);
  EXPECT_FALSE(bad.passed());
  EXPECT_NE(bad.failure_line("ref").find(check.outputs[0].name), std::string::npos);
}

TEST_F(SessionPipeline, CompileRefusesWhatItCannotRun) {
  Session session(native_options());
  const Graph g = session.load("builtin:mlp");
  // Decisions only: nothing to run.
  EXPECT_THROW((void)session.compile(session.plan(g, o2(PlanPurpose::kInspect))),
               std::invalid_argument);
  const PlannedModel pm = session.plan(g, o2(PlanPurpose::kRun));
  // No reference prepared: verifying is a caller's error.
  CompiledModel model = session.compile(pm);
  const auto inputs = random_inputs(g, 1);
  EXPECT_THROW((void)model.verify_against_reference(inputs, model.run(inputs)), std::logic_error);
  // A memory limit no plan fits.
  EXPECT_THROW((void)session.compile(pm, {.memory = MemoryLimit{.max_bytes = 1}}), MemoryError);
}

// ExecutionMode::kEager compiles the same plan without fusing it into the
// EagerExecutor; its run passes the same reference check as the compiled
// one's (exec/eager_executor_test.cpp counts its prepares and allocations).
TEST_F(SessionPipeline, EagerCompilesThePlanUnfusedAndPassesTheCheck) {
  Session session(native_options());
  const Graph g = session.load("builtin:cnn");
  const PlannedModel pm = session.plan(g, o2(PlanPurpose::kRun));
  CompiledModel compiled = session.compile(pm);
  CompiledModel eager =
      session.compile(pm, {.mode = ExecutionMode::kEager, .reference = ReferenceCheck::kPrepare});
  EXPECT_EQ(compiled.mode(), ExecutionMode::kCompiled);
  EXPECT_EQ(eager.mode(), ExecutionMode::kEager);
  EXPECT_GT(compiled.fused().absorbed_nodes(), 0);
  EXPECT_EQ(eager.fused().absorbed_nodes(), 0);
  EXPECT_EQ(eager.fused().graph.num_nodes(), pm.plan.graph.num_nodes());
  EXPECT_EQ(eager.execution_plan().steps.size(),
            session.lower(pm, {.mode = ExecutionMode::kEager}).plan.steps.size());
  const auto inputs = random_inputs(g, 1);
  const auto out = eager.run(inputs);
  const RunCheck check = eager.verify_against_reference(inputs, out);
  EXPECT_TRUE(check.passed()) << check.failure_line("cpu_ref:0");
  EXPECT_EQ(eager.stats().kernels, static_cast<int>(pm.plan.graph.num_nodes()));
}

TEST_F(SessionPipeline, ReportPlansEveryLevelOnTheRequestedDevices) {
  Session session(native_options());
  const std::string models[] = {"builtin:mlp"};
  int steps = 0;
  ReportRequest r;
  r.devices = {"test_native:0"};
  r.runs = ReportRuns::kPredictOnly;
  r.costs = CostUse::kNone;
  r.tuning = ReportTuning::kIgnore;
  r.progress = [&](int, int, const std::string&) { ++steps; };
  const capability::Report report = session.report(models, r);
  ASSERT_EQ(report.models.size(), 1u);
  ASSERT_EQ(report.models[0].devices.size(), 1u);
  EXPECT_EQ(report.models[0].devices[0].device_id, "test_native:0");
  ASSERT_EQ(report.models[0].devices[0].levels.size(), 4u);
  EXPECT_EQ(report.models[0].devices[0].levels[0].effective_16bit, 0);  // O0
  EXPECT_GT(report.models[0].devices[0].levels[2].effective_16bit, 0);  // O2
  EXPECT_FALSE(report.ran);
  EXPECT_EQ(steps, 5);  // 4 levels, then "done"
  r.devices = {"nowhere:0"};
  EXPECT_THROW((void)session.report(models, r), std::invalid_argument);
}

}  // namespace
}  // namespace ampx
