// The one pipeline, which the CLI is a shell around: load plugins (minus
// excluded ones) -> load a model -> choose devices -> plan (precision and
// placement) -> compile (fusion, executor) -> run; and tune, report and
// train on the same plugins. docs/SESSION.md has an example.
//
//   ampx::Session session({.devices = "vulkan:0,onednn:0"});
//   ampx::Graph graph = session.load("model.onnx");
//   ampx::PlannedModel planned = session.plan(graph, {.policy = {.level = ampx::AmpLevel::kO2}});
//   ampx::CompiledModel model = session.compile(planned);
//   auto outputs = model.run(inputs);
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/capability/report.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/compiled_model.hpp>
#include <ampx/session/device_selection.hpp>
#include <ampx/session/plan_request.hpp>
#include <ampx/session/planned_model.hpp>
#include <ampx/session/report_request.hpp>
#include <ampx/session/shape_cached_model.hpp>
#include <ampx/tune/tuner.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ampx {

namespace train {
class Trainer;
struct TrainerOptions;
}  // namespace train

// `--determinism`: kThreadCountFree (the default, docs/OPS.md's promise:
// every node's bits are the same at any thread count) or kFastest (passed
// to every plugin as deterministic=0).
enum class Determinism { kThreadCountFree, kFastest };

struct SessionOptions {
  // Device list in preference order, or "auto"; empty: AMPX_DEVICES, else
  // cpu_ref:0 (see DeviceSelectionOptions).
  std::string devices{};
  // Plugins not to load at all (AMPX_DISABLE_PLUGINS is always added).
  std::vector<std::string> excluded_plugins{};
  // Searched before AMPX_PLUGIN_PATH and the default directories.
  std::vector<std::filesystem::path> plugin_dirs{};
  // ampx's own plugin directories in place of the build tree's and the
  // install's (PluginHostOptions::own_dirs): the Python package's
  // `ampx/plugins`, beside its module.
  std::vector<std::filesystem::path> own_plugin_dirs{};
  // The defaults of a PlanRequest that leaves them unset. false: a node no
  // listed device can run is an error (`--no-fallback`).
  bool fallback = true;
  bool use_costs = true;  // false: CostUse::kNone (`--no-cost`)
  // plan() applies a plan `tune` stored for the same model, devices and
  // options (docs/TUNING.md); false: always plan afresh (`--no-tuned`).
  bool use_tuned = true;
  std::optional<std::string> db_path{};
  int threads = 0;  // per CPU plugin; 0: the plugin's default
  // Per plugin name: "key=value;..." for plugin_create, ahead of `threads`
  // (PluginHostOptions::plugin_options), e.g. {"onednn", "debug_counters=1"}.
  std::map<std::string, std::string, std::less<>> plugin_options{};
  Determinism determinism = Determinism::kThreadCountFree;
  // The host log level plugins get (0 = trace .. 6 = off); nullopt: the
  // process's spdlog level when the Session is made.
  std::optional<int> log_level{};
  // true: plugins load in-process at once, without the pre-flight child
  // (PluginHostOptions::preflight).
  bool trust_plugins = false;
  // compile() refuses a plan needing more than this in all (every device's
  // arena, weights and state, and the copies' staging; MemoryError with the
  // figures), as `--max-memory` does; 0: no limit but each device's own
  // memory, which is always checked (exec/memory_budget.hpp).
  uint64_t max_memory_bytes = 0;
  // Names that limit in the refusal (the CLI: "--max-memory").
  std::string max_memory_origin = "SessionOptions::max_memory_bytes";
};

class Session {
 public:
  explicit Session(SessionOptions options = {});

  const plugins::PluginHost& host() const { return host_; }
  // `builtin:NAME` or an .onnx file.
  Graph load(std::string_view model, const ModelOptions& options = {}) const;
  // Resolves the session's device list for `graph` (`auto` ranks by it),
  // with its fallback and cost step. plan() selects as it does when no
  // selection was made; call it first to inspect the choice.
  const DeviceSelection& select_devices(const Graph& graph);
  const DeviceSelection& selection() const;

  // Precision and placement for every node (docs/PLACEMENT.md), with what
  // it was planned with: the one planning path of the CLI's plan, run,
  // export and tune. Selects the devices (again when the request's fallback
  // or cost step differs from the selection made); logs the `auto` ranking
  // (info), the `--dtype auto` choice (info) and the nodes that fall back
  // (warning). A stored profile (PlanRequest::profile) plans for its one
  // device. std::invalid_argument for a bad pin, device or profile entry.
  PlannedModel plan(const Graph& graph, const PlanRequest& request);
  // The planned graph fused as compile() would for `options.mode` and
  // lowered to its ExecutionPlan, without a device call (`ampx plan
  // --lowered`). Needs a plan made to run (PlanPurpose::kRun).
  LoweredModel lower(const PlannedModel& planned, const CompileOptions& options = {}) const;
  // Fusion (never across devices, none for ExecutionMode::kEager) and an
  // executor over the planned devices (PlanPurpose::kRun), with
  // CompileOptions::state kept on the device between runs (a training
  // step's weights); the reference too with CompileOptions::reference.
  // It compiles `planned.plan.graph` as it is: a caller that rewrites that
  // graph after planning (the Trainer's fused optimizer pass) compiles the
  // rewritten one on the same devices.
  CompiledModel compile(const PlannedModel& planned, const CompileOptions& options = {}) const;
  // `ampx tune`, from an untuned plan of this session (PlanRequest::tuned
  // kIgnore: the untuned plan is one of those compared); live devices only:
  // measure, re-plan, verify against O0, keep and store the plan that is
  // not slower (TuneResult::plan; options.db_path defaults to the session's
  // database). A later plan() of the model applies it (TunedPlans::kUse).
  TuneResult tune(const Graph& graph, const PlannedModel& untuned, TuneOptions options = {});
  // `ampx report`: every model on every requested device at each amp
  // level (report_request.hpp); the result renders as text, Markdown,
  // JSON or HTML (capability/report.hpp).
  capability::Report report(std::span<const std::string> models, const ReportRequest& request);
  // `--dtype auto` (HalfDType::kAuto): sets policy.half to the 16-bit type
  // the selected devices run natively for `graph` (choose_half_dtype) and
  // logs the choice; nullopt and no change for kPolicy.
  std::optional<HalfChoice> resolve_half(const Graph& graph, AmpPolicy& policy, HalfDType half);
  // `ampx train`: a Trainer of `forward` on this session's devices; with
  // HalfDType::kAuto the 16-bit type is resolved first (it sets the
  // default loss scale). Include <ampx/session/trainer.hpp> to use it.
  train::Trainer train(Graph forward, train::TrainerOptions options,
                       HalfDType half = HalfDType::kPolicy);
  // The devices of a live plan's AmpPlan::devices (std::invalid_argument
  // naming an unknown one).
  const plugins::Device& device(std::string_view id) const { return host_.device(id); }
  // An ONNX model planned for the shapes it is run with, its compiled
  // plans cached by input shapes (shape_cached_model.hpp): each shape
  // planned with `request` (PlanPurpose::kRun, nothing logged but errors).
  // The session must outlive it; its device selection is made at the
  // first run and kept (PlanRequest::selection).
  ShapeCachedModel load_shape_cached(std::string model, PlanRequest request,
                                     ModelOptions options = {}, ShapeCacheOptions cache = {});

 private:
  const DeviceSelection& select_devices(const Graph& graph, const std::string& spec,
                                        Fallback fallback, CostUse costs);
  // `--dtype auto` across `devices` (logs the choice); nullopt for kPolicy.
  std::optional<HalfChoice> resolve_half(const Graph& graph, AmpPolicy& policy, HalfDType half,
                                         std::span<const PlanDevice> devices) const;
  PlanningDevice profile_device(const PlanRequest& request, const std::string& id) const;
  // `request` with what it leaves unset (tuned, costs, fallback) taken from
  // SessionOptions.
  PlanRequest with_session_defaults(const PlanRequest& request) const;
  // ReportRequest::devices (or every device), live or from the profile;
  // the placement lists checked against the plugins.
  std::vector<PlanningDevice> report_devices(const ReportRequest& request) const;
  LoweredModel lower_graph(const Graph& graph, std::span<const CapabilitySource* const> caps,
                           std::span<const plugins::Device* const> devices,
                           const CompileOptions& options) const;
  CompiledModel compile_graph(const Graph& graph, std::span<const CapabilitySource* const> caps,
                              std::span<const plugins::Device* const> devices,
                              const CompileOptions& options) const;

  SessionOptions options_;
  plugins::PluginHost host_;
  std::optional<DeviceSelection> selection_;
  // What selection_ was made with (plan(graph, request) makes it again for
  // another device list, fallback or cost step).
  std::string selection_spec_;
  Fallback selection_fallback_ = Fallback::kToReference;
  CostUse selection_costs_ = CostUse::kModel;
};

}  // namespace ampx
