// The C++ entry point that mirrors the CLI: load plugins (minus excluded
// ones) -> load a model -> choose devices -> plan (precision and placement)
// -> compile (fusion, executor) -> run. docs/SESSION.md has an example.
//
//   ampx::Session session({.devices = "vulkan:0,onednn:0"});
//   ampx::Graph graph = session.load("model.onnx");
//   ampx::AmpPlan plan = session.plan(graph, {.level = ampx::AmpLevel::kO2});
//   ampx::CompiledModel model = session.compile(plan);
//   auto outputs = model.run(inputs);
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_selection.hpp>
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

struct SessionOptions {
  // Device list in preference order, or "auto"; empty: AMPX_DEVICES, else
  // cpu_ref:0 (see DeviceSelectionOptions).
  std::string devices{};
  // Plugins not to load at all (AMPX_DISABLE_PLUGINS is always added).
  std::vector<std::string> excluded_plugins{};
  // Searched before AMPX_PLUGIN_PATH and the default directories.
  std::vector<std::filesystem::path> plugin_dirs{};
  // false: a node no listed device can run is an error (`--no-fallback`).
  bool fallback = true;
  bool use_costs = true;
  // plan() applies a plan `tune` stored for the same model, devices and
  // options (docs/TUNING.md); false: always plan afresh.
  bool use_tuned = true;
  std::optional<std::string> db_path{};
  int threads = 0;  // per CPU plugin; 0: the plugin's default
  // Per plugin name: "key=value;..." for plugin_create, ahead of `threads`
  // (PluginHostOptions::plugin_options), e.g. {"onednn", "debug_counters=1"}.
  std::map<std::string, std::string, std::less<>> plugin_options{};
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

// A plan made ready to run: fused per device, kernels prepared, weights
// uploaded. Keeps its graph; the Session (its plugins) must outlive it.
class CompiledModel {
 public:
  std::vector<HostTensor> run(std::span<const HostTensor> inputs) { return executor_->run(inputs); }
  // A profiled run (`ampx run --per-node/--trace`): every kernel and copy
  // timed, see exec/run_profile.hpp for the summary and the trace file.
  std::vector<HostTensor> run(std::span<const HostTensor> inputs, RunProfile& profile) {
    return executor_->run(inputs, profile);
  }
  const ExecutorStats& stats() const { return executor_->stats(); }
  const FusedGraph& fused() const { return *fused_; }
  // The executor itself: its device-resident state (training), profiles.
  Executor& executor() { return *executor_; }
  const Executor& executor() const { return *executor_; }

 private:
  friend class Session;
  CompiledModel(std::unique_ptr<FusedGraph> fused, std::unique_ptr<Executor> executor)
      : fused_(std::move(fused)), executor_(std::move(executor)) {}
  std::unique_ptr<FusedGraph> fused_;  // heap: the executor refers to its graph
  std::unique_ptr<Executor> executor_;
};

class Session {
 public:
  explicit Session(SessionOptions options = {});

  const plugins::PluginHost& host() const { return host_; }
  // `builtin:NAME` or an .onnx file.
  Graph load(std::string_view model, const ModelOptions& options = {}) const;
  // Resolves the device list for `graph` (`auto` ranks by it). plan() calls
  // it when no selection was made; call it first to inspect the choice.
  const DeviceSelection& select_devices(const Graph& graph);
  const DeviceSelection& selection() const;

  // Precision and placement for every node (docs/PLACEMENT.md). `pins`:
  // pattern (name or prefix*) -> device id of the selection.
  AmpPlan plan(const Graph& graph, const AmpPolicy& policy, const PlanOptions& options = {},
               std::span<const std::pair<std::string, std::string>> pins = {});
  // `ampx tune`: measure, re-plan, verify against O0, keep and store the
  // plan that is not slower (TuneResult::plan; options.db_path defaults to
  // the session's database).
  TuneResult tune(const Graph& graph, const AmpPolicy& policy, TuneOptions options = {},
                  std::span<const std::pair<std::string, std::string>> pins = {});
  // Fusion (never across devices) and an executor over the plan's devices;
  // `state`: the graph inputs and outputs that stay on the device between
  // runs (a training step's weights, see exec/executor.hpp).
  CompiledModel compile(const AmpPlan& plan, const FusionOptions& fusion = {},
                        std::span<const StateBinding> state = {}) const;
  // An ONNX model planned for the shapes it is run with, its compiled
  // plans cached by input shapes (shape_cached_model.hpp). The session
  // must outlive it; its device selection is made at the first run.
  ShapeCachedModel load_shape_cached(std::string model, AmpPolicy policy, ModelOptions options = {},
                                     ShapeCacheOptions cache = {});

 private:
  SessionOptions options_;
  plugins::PluginHost host_;
  std::optional<DeviceSelection> selection_;
};

}  // namespace ampx
