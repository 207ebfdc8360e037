#include <ampx/exec/executor.hpp>
#include <ampx/exec/lower.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/session/session.hpp>
#include <ampx/session/trainer.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

namespace ampx {

namespace {
plugins::PluginHostOptions host_options(const SessionOptions& o) {
  plugins::PluginHostOptions ho;
  ho.extra_dirs = o.plugin_dirs;
  ho.own_dirs = o.own_plugin_dirs;
  ho.excluded_plugins = o.excluded_plugins;
  ho.log_level = o.log_level ? *o.log_level : static_cast<int>(spdlog::get_level());
  // Options every plugin gets (each ignores the keys it does not document).
  std::vector<std::string> defaults;
  if (o.threads > 0) defaults.push_back("threads=" + std::to_string(o.threads));
  if (o.determinism == Determinism::kFastest) defaults.emplace_back("deterministic=0");
  for (const std::string& d : defaults)
    ho.default_plugin_options += (ho.default_plugin_options.empty() ? "" : ";") + d;
  // A plugin's own entry replaces the default options: those first, then
  // its keys.
  for (const auto& [name, value] : o.plugin_options)
    ho.plugin_options[name] =
        ho.default_plugin_options + (ho.default_plugin_options.empty() ? "" : ";") + value;
  ho.preflight = !o.trust_plugins;
  return ho;
}
}  // namespace

Session::Session(SessionOptions options)
    : options_(std::move(options)), host_(host_options(options_)) {}

Graph Session::load(std::string_view model, const ModelOptions& options) const {
  return load_model(model, options);
}

const DeviceSelection& Session::select_devices(const Graph& graph) {
  return select_devices(graph, options_.devices,
                        options_.fallback ? Fallback::kToReference : Fallback::kRefuse,
                        options_.use_costs ? CostUse::kModel : CostUse::kNone);
}

const DeviceSelection& Session::select_devices(const Graph& graph, const std::string& spec,
                                               Fallback fallback, CostUse costs) {
  selection_ = ampx::select_devices(host_, graph,
                                    {.spec = spec,
                                     .fallback = fallback == Fallback::kToReference,
                                     .use_costs = costs == CostUse::kModel,
                                     .db_path = options_.db_path});
  selection_spec_ = spec;
  selection_fallback_ = fallback;
  selection_costs_ = costs;
  return *selection_;
}

const DeviceSelection& Session::selection() const {
  if (!selection_) throw std::logic_error("Session: no devices selected yet (call select_devices)");
  return *selection_;
}

PlanRequest Session::with_session_defaults(const PlanRequest& request) const {
  PlanRequest r = request;
  if (!r.tuned) r.tuned = options_.use_tuned ? TunedPlans::kUse : TunedPlans::kIgnore;
  if (!r.costs) r.costs = options_.use_costs ? CostUse::kModel : CostUse::kNone;
  if (!r.fallback) r.fallback = options_.fallback ? Fallback::kToReference : Fallback::kRefuse;
  return r;
}

TuneResult Session::tune(const Graph& graph, const PlannedModel& untuned, TuneOptions options) {
  if (untuned.profiled)
    throw std::invalid_argument("Session::tune: a plan from a stored profile cannot be measured");
  if (!options.db_path) options.db_path = options_.db_path;
  return tune_plan(graph, untuned.model_key, untuned.policy, untuned.selection, untuned.pins,
                   options);
}

std::optional<HalfChoice> Session::resolve_half(const Graph& graph, AmpPolicy& policy,
                                                HalfDType half) {
  if (half != HalfDType::kAuto) return std::nullopt;
  if (!selection_) select_devices(graph);
  return resolve_half(graph, policy, half, selection_->plan_devices());
}

train::Trainer Session::train(Graph forward, train::TrainerOptions options, HalfDType half) {
  (void)resolve_half(forward, options.policy, half);
  return train::Trainer(*this, std::move(forward), std::move(options));
}

ShapeCachedModel Session::load_shape_cached(std::string model, PlanRequest request,
                                            ModelOptions options, ShapeCacheOptions cache) {
  return ShapeCachedModel(*this, std::move(model), std::move(options), std::move(request),
                          std::move(cache));
}

LoweredModel Session::lower_graph(const Graph& graph, std::span<const CapabilitySource* const> caps,
                                  std::span<const plugins::Device* const> devices,
                                  const CompileOptions& options) const {
  std::vector<CapabilitySource*> sources;
  for (const CapabilitySource* c : caps) sources.push_back(const_cast<CapabilitySource*>(c));
  // Eager runs the planned nodes one by one, as a framework's eager mode
  // would: nothing is fused or rewritten.
  auto fused = options.mode == ExecutionMode::kEager
                   ? std::make_unique<FusedGraph>(FusedGraph{graph, {}})
                   : std::make_unique<FusedGraph>(fuse_placed(graph, sources, options.fusion));
  ExecutionPlan plan =
      ampx::lower(fused->graph, lowering_devices(devices), {.state = options.state});
  return LoweredModel{std::move(fused), std::move(plan)};
}

CompiledModel Session::compile_graph(const Graph& graph,
                                     std::span<const CapabilitySource* const> caps,
                                     std::span<const plugins::Device* const> devices,
                                     const CompileOptions& options) const {
  LoweredModel lowered = lower_graph(graph, caps, devices, options);
  const MemoryLimit memory = options.memory ? *options.memory
                                            : MemoryLimit{.max_bytes = options_.max_memory_bytes,
                                                          .origin = options_.max_memory_origin};
  std::unique_ptr<PlanExecutor> executor =
      make_executor(lowered.plan, options.mode, devices, ExecutorOptions{.memory = memory});
  return CompiledModel(std::move(lowered), options.mode, std::move(executor));
}

LoweredModel Session::lower(const PlannedModel& planned, const CompileOptions& options) const {
  if (planned.purpose != PlanPurpose::kRun)
    throw std::invalid_argument(
        "Session::lower: the plan was not made to run (PlanRequest::purpose kRun)");
  const std::vector<CapabilitySource*> caps = planned.caps();
  const std::vector<const CapabilitySource*> const_caps(caps.begin(), caps.end());
  return lower_graph(planned.plan.graph, const_caps, planned.runtime_devices(), options);
}

CompiledModel Session::compile(const PlannedModel& planned, const CompileOptions& options) const {
  if (planned.purpose != PlanPurpose::kRun)
    throw std::invalid_argument(
        "Session::compile: the plan was not made to run (PlanRequest::purpose kRun)");
  const std::vector<CapabilitySource*> caps = planned.caps();
  const std::vector<const CapabilitySource*> const_caps(caps.begin(), caps.end());
  CompiledModel model =
      compile_graph(planned.plan.graph, const_caps, planned.runtime_devices(), options);
  if (options.reference == ReferenceCheck::kNone) return model;
  // The reference: the source graph planned O0 f32 on cpu_ref, run after
  // the plan (release()) beside the inputs and both runs' outputs; its
  // memory checked now, before any input is made.
  const plugins::Device* ref = host_.find_device(kFallbackDevice);
  if (!ref)
    throw std::runtime_error(std::string("the reference device ") + std::string(kFallbackDevice) +
                             " is not available (see `ampx devices`)");
  if (!planned.source)
    throw std::invalid_argument("Session::compile: the planned model has no source graph");
  const Graph& graph = *planned.source;
  MemoryLimit memory = options.memory ? *options.memory
                                      : MemoryLimit{.max_bytes = options_.max_memory_bytes,
                                                    .origin = options_.max_memory_origin};
  for (ValueId v : graph.outputs()) memory.host_bytes += graph.value(v).byte_size();
  DeviceCapabilities ref_caps(*ref);
  CompiledModel::Reference reference{ref, plan_amp(graph, AmpPolicy{}, ref_caps), memory};
  const plugins::Device* ref_devices[] = {ref};
  try {
    check_memory(Executor::memory_needs(reference.plan.graph, ref_devices), ref_devices, memory);
  } catch (const MemoryError& e) {
    throw MemoryError(fmt::format("the reference run on {}: {}", kFallbackDevice, e.what()));
  }
  model.reference_ = std::move(reference);
  for (ValueId v : graph.outputs()) model.output_names_.push_back(graph.value(v).name);
  model.lowest_precision_ = lowest_precision(planned.plan.graph);
  return model;
}

PlanExecutor& CompiledModel::executor() {
  if (!executor_) throw std::logic_error("CompiledModel: released (release() was called)");
  return *executor_;
}

const PlanExecutor& CompiledModel::executor() const {
  if (!executor_) throw std::logic_error("CompiledModel: released (release() was called)");
  return *executor_;
}

RunCheck CompiledModel::verify_against_reference(std::span<const HostTensor> inputs,
                                                 const std::vector<HostTensor>& outputs) const {
  if (!reference_)
    throw std::logic_error(
        "CompiledModel::verify_against_reference: no reference was prepared "
        "(CompileOptions::reference)");
  Executor ref(reference_->plan.graph, *reference_->device, {}, {.memory = reference_->memory});
  return check_run(output_names_, lowest_precision_, outputs, ref.run(inputs));
}

}  // namespace ampx
