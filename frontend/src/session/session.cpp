#include <ampx/session/device_capabilities.hpp>
#include <ampx/session/plan_on_selection.hpp>
#include <ampx/session/session.hpp>

#include <stdexcept>

namespace ampx {

namespace {
plugins::PluginHostOptions host_options(const SessionOptions& o) {
  plugins::PluginHostOptions ho;
  ho.extra_dirs = o.plugin_dirs;
  ho.excluded_plugins = o.excluded_plugins;
  if (o.threads > 0) ho.default_plugin_options = "threads=" + std::to_string(o.threads);
  // A plugin's own entry replaces the default options: threads first, then
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
  selection_ = ampx::select_devices(host_, graph,
                                    {.spec = options_.devices,
                                     .fallback = options_.fallback,
                                     .use_costs = options_.use_costs,
                                     .db_path = options_.db_path});
  return *selection_;
}

const DeviceSelection& Session::selection() const {
  if (!selection_) throw std::logic_error("Session: no devices selected yet (call select_devices)");
  return *selection_;
}

AmpPlan Session::plan(const Graph& graph, const AmpPolicy& policy, const PlanOptions& options,
                      std::span<const std::pair<std::string, std::string>> pins) {
  if (!selection_) select_devices(graph);
  return plan_on_selection(graph, graph.name, policy, *selection_, selection_->pins(pins), options,
                           options_.use_tuned, options_.db_path);
}

TuneResult Session::tune(const Graph& graph, const AmpPolicy& policy, TuneOptions options,
                         std::span<const std::pair<std::string, std::string>> pins) {
  if (!selection_) select_devices(graph);
  if (!options.db_path) options.db_path = options_.db_path;
  return tune_plan(graph, graph.name, policy, *selection_, selection_->pins(pins), options);
}

ShapeCachedModel Session::load_shape_cached(std::string model, AmpPolicy policy,
                                            ModelOptions options, ShapeCacheOptions cache) {
  return ShapeCachedModel(*this, std::move(model), std::move(options), std::move(policy),
                          std::move(cache));
}

CompiledModel Session::compile(const AmpPlan& plan, const FusionOptions& fusion,
                               std::span<const StateBinding> state) const {
  if (plan.graph.num_nodes() == 0 && plan.nodes.size() > 0)
    throw std::invalid_argument(
        "Session::compile: the plan was made without its graph "
        "(PlanOptions::build_graph)");
  std::vector<const plugins::Device*> devices;
  std::vector<std::shared_ptr<CapabilitySource>> owned;
  std::vector<CapabilitySource*> caps;
  for (const std::string& id : plan.devices) {
    const plugins::Device& d = host_.device(id);
    devices.push_back(&d);
    owned.push_back(std::make_shared<DeviceCapabilities>(d));
    caps.push_back(owned.back().get());
  }
  auto fused = std::make_unique<FusedGraph>(fuse_placed(plan.graph, caps, fusion));
  auto executor =
      std::make_unique<Executor>(fused->graph, devices, state,
                                 ExecutorOptions{.memory = {.max_bytes = options_.max_memory_bytes,
                                                            .origin = options_.max_memory_origin}});
  return CompiledModel(std::move(fused), std::move(executor));
}

}  // namespace ampx
