#include <ampx/amp/node_desc.hpp>
#include <ampx/capability/store.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/session/device_selection.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace ampx {

std::vector<std::string> parse_device_list(std::string_view spec) {
  std::vector<std::string> ids;
  std::set<std::string> seen;
  size_t pos = 0;
  while (true) {
    const size_t comma = spec.find(',', pos);
    std::string_view item =
        spec.substr(pos, comma == std::string_view::npos ? spec.npos : comma - pos);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item.empty())
      throw std::invalid_argument("--device '" + std::string(spec) +
                                  "': empty entry (expected ID[,ID...], e.g. vulkan:0,onednn:0, "
                                  "or auto)");
    if (!seen.insert(std::string(item)).second)
      throw std::invalid_argument("--device '" + std::string(spec) + "': '" + std::string(item) +
                                  "' is listed twice");
    ids.emplace_back(item);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return ids;
}

std::shared_ptr<capability::CostModel> live_cost_model(const plugins::Device& device,
                                                       CapabilitySource& caps,
                                                       const std::optional<std::string>& db_path) {
  std::optional<capability::DeviceProfile> prof;
  try {
    prof = capability::load_profile_for(device.props().fingerprint, std::nullopt,
                                        capability::resolve_db_path(db_path).string());
  } catch (const std::exception& e) {
    spdlog::warn("no probe data for {} ({}); using the plugin's cost hints", device.id(), e.what());
  }
  auto hints = capability::make_hint_cost_model(caps);
  std::shared_ptr<capability::CostModel> inner =
      prof ? capability::make_profile_cost_model(std::move(*prof), std::move(hints))
           : std::shared_ptr<capability::CostModel>(std::move(hints));
  // In-context measurements (`ampx tune`) come first where there are any.
  capability::Calibration calibration;
  try {
    const auto path = capability::resolve_db_path(db_path);
    if (const auto store = capability::Store::open_read_only(path))
      calibration =
          capability::Calibration(store->node_timings(device.props().fingerprint), device.id());
  } catch (const std::exception& e) {
    spdlog::warn("no in-context measurements for {} ({})", device.id(), e.what());
  }
  return std::make_shared<capability::CalibratedCostModel>(std::move(calibration),
                                                           std::move(inner));
}

namespace {

SelectedDevice make_selected(const plugins::Device& device, bool fallback_only,
                             const DeviceSelectionOptions& options) {
  SelectedDevice s;
  s.device = &device;
  s.fallback_only = fallback_only;
  s.caps = std::make_shared<DeviceCapabilities>(device);
  if (options.use_costs) s.cost = live_cost_model(device, *s.caps, options.db_path);
  return s;
}

// What `auto` ranks by: the model's f32 time on the device, each node the
// device cannot run priced at the reference device's estimate (it would
// fall back there).
struct Estimate {
  double us = 0;
  int unsupported = 0;
  int unknown = 0;  // nodes without any estimate
};

Estimate estimate(const Graph& graph, SelectedDevice& dev, SelectedDevice* reference) {
  Estimate e;
  LoweredNode lowered;
  std::vector<DType> ins, outs;
  for (NodeId id : graph.topological_order()) {
    const Node& n = graph.node(id);
    ins.clear();
    outs.clear();
    for (ValueId v : n.inputs) ins.push_back(graph.value(v).type.dtype);
    for (ValueId v : n.outputs) outs.push_back(graph.value(v).type.dtype);
    lowered.assign(graph, n, ins, outs, false);
    const auto answer = dev.caps->query(lowered.desc());
    SelectedDevice* runner = &dev;
    if (answer.support == AMPX_SUPPORT_UNSUPPORTED) {
      ++e.unsupported;
      runner = reference;
    }
    double t = -1;
    if (runner && runner->cost) t = runner->cost->node_us(lowered.desc());
    if (t < 0) {
      ++e.unknown;
      continue;
    }
    e.us += t;
  }
  return e;
}

// Without estimates: accelerators first, then CPU libraries, the reference
// last.
int type_rank(const plugins::Device& d) {
  if (d.id() == kFallbackDevice) return 3;
  switch (d.props().type) {
    case AMPX_DEVICE_GPU:
      return 0;
    case AMPX_DEVICE_CPU:
      return 1;
    default:
      return 2;
  }
}

DeviceSelection select_auto(const plugins::PluginHost& host, const Graph& graph,
                            const DeviceSelectionOptions& options) {
  DeviceSelection sel;
  sel.spec = "auto";
  DeviceSelectionOptions with_costs = options;
  with_costs.use_costs = true;  // ranking needs them, even if planning does not
  std::vector<SelectedDevice> all;
  for (const plugins::Device& d : host.devices())
    all.push_back(make_selected(d, false, with_costs));
  if (all.empty()) throw std::invalid_argument("--device auto: no device is available");
  SelectedDevice* reference = nullptr;
  for (auto& d : all)
    if (d.device->id() == kFallbackDevice) reference = &d;
  std::vector<Estimate> est;
  bool complete = true;
  for (auto& d : all) {
    est.push_back(estimate(graph, d, reference));
    complete = complete && est.back().unknown == 0;
  }
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (complete) return est[a].us < est[b].us;
    return type_rank(*all[a].device) < type_rank(*all[b].device);
  });
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const size_t i = order[rank];
    const Estimate& e = est[i];
    char us[32];
    std::snprintf(us, sizeof us, "%.1f us", e.us);
    std::string line = std::to_string(rank + 1) + ". " + all[i].device->id() + ": " +
                       (e.unknown ? "no estimate for " + std::to_string(e.unknown) + " nodes"
                                  : "f32 " + std::string(us)) +
                       " (" + (all[i].cost ? all[i].cost->source() : "no cost model") + ")";
    if (e.unsupported)
      line += "; " + std::to_string(e.unsupported) + " nodes unsupported, priced at " +
              std::string(kFallbackDevice);
    if (!complete) line += "; ranked by device type (GPU, CPU, reference)";
    sel.ranking.push_back(std::move(line));
    if (!options.use_costs) all[i].cost.reset();
    sel.devices.push_back(std::move(all[i]));
  }
  return sel;
}

}  // namespace

DeviceSelection select_devices(const plugins::PluginHost& host, const Graph& graph,
                               const DeviceSelectionOptions& options) {
  std::string spec = options.spec;
  std::string source = "--device";
  if (spec.empty()) {
    const char* env = std::getenv("AMPX_DEVICES");
    if (env && *env) {
      spec = env;
      source = "AMPX_DEVICES";
    } else {
      spec = std::string(kFallbackDevice);
      source = "default";
    }
  }
  if (spec == "auto") return select_auto(host, graph, options);
  std::vector<std::string> ids;
  try {
    ids = parse_device_list(spec);
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    if (source != "--device") what.replace(0, 8, source);
    throw std::invalid_argument(what);
  }
  DeviceSelection sel;
  sel.spec = spec;
  for (const std::string& id : ids) {
    const plugins::Device* d = host.find_device(id);
    if (!d) {
      try {
        (void)host.device(id);  // its message lists the available devices
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(source + " '" + spec + "': " + e.what());
      }
    }
    sel.devices.push_back(make_selected(*d, false, options));
  }
  if (options.fallback && sel.index_of(kFallbackDevice) < 0) {
    if (const plugins::Device* ref = host.find_device(kFallbackDevice))
      sel.devices.push_back(make_selected(*ref, true, options));
    else
      spdlog::warn(
          "the fallback device {} is not available: nodes the listed devices cannot run "
          "are errors",
          kFallbackDevice);
  }
  return sel;
}

}  // namespace ampx
