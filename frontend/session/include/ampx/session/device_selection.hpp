// Run-time device selection: `--device vulkan:0,onednn:0`, `--device auto`,
// AMPX_DEVICES. Resolves a device list against the loaded plugins, adds the
// reference device as the last resort (unless listed, or fallback is off),
// attaches each device's capability answers and cost model, and for `auto`
// ranks every device by the predicted time of the model at hand, saying why.
#pragma once

#include <ampx/capability/capability_source.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/exec/selected_devices.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/plugins/plugin_host.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ampx {

// The device of last resort: always present (it is the numerical oracle).
inline constexpr std::string_view kFallbackDevice = "cpu_ref:0";

struct DeviceSelectionOptions {
  // "ID[,ID...]" in preference order, or "auto". Empty: AMPX_DEVICES, else
  // kFallbackDevice.
  std::string spec{};
  // Add kFallbackDevice as the fallback-only last device when it is not
  // listed (false: `--no-fallback`).
  bool fallback = true;
  // Cost models: probe data from this capability database (nullopt: the
  // default path, docs/capability-db.md), else the plugins' hints; none
  // when false.
  bool use_costs = true;
  std::optional<std::string> db_path{};
};

// "vulkan:0, onednn:0" -> {"vulkan:0", "onednn:0"}; throws
// std::invalid_argument naming an empty or repeated entry.
std::vector<std::string> parse_device_list(std::string_view spec);

// The cost model of a live device: its probe data in the database at
// `db_path` when there is any, else its plugin's cost hints (with a warning
// when the database could not be read).
std::shared_ptr<capability::CostModel> live_cost_model(const plugins::Device& device,
                                                       CapabilitySource& caps,
                                                       const std::optional<std::string>& db_path);

// Throws std::invalid_argument "--device: unknown device 'x:0' (available:
// ...)" for a device not loaded, and for an empty list. `graph` is needed by
// `auto` only (it ranks by that model's predicted time).
DeviceSelection select_devices(const plugins::PluginHost& host, const Graph& graph,
                               const DeviceSelectionOptions& options);

}  // namespace ampx
