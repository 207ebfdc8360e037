// The devices a plan is made for and runs on, as device selection
// (session/device_selection.hpp) resolved them: each with its capability
// answers and cost model. Planning, tuning and running take this value;
// how it is chosen (`--device`, `auto`, AMPX_DEVICES) is the session's.
#pragma once

#include <ampx/amp/placement.hpp>
#include <ampx/capability/capability_source.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/plugins/device.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ampx {

struct SelectedDevice {
  const plugins::Device* device = nullptr;
  bool fallback_only = false;
  std::shared_ptr<CapabilitySource> caps;
  std::shared_ptr<capability::CostModel> cost;  // null without costs
};

struct DeviceSelection {
  std::string spec;  // what was resolved ("auto", the list, or where it came from)
  std::vector<SelectedDevice> devices;
  // One line per device for `auto` (its predicted time and where the numbers
  // come from), else empty.
  std::vector<std::string> ranking;

  std::vector<PlanDevice> plan_devices() const;
  std::vector<const plugins::Device*> runtime_devices() const;
  // Index of a device id in `devices`; -1 when absent.
  int index_of(std::string_view id) const;
  // `--place` pins: (pattern, device id) -> DevicePin; throws
  // std::invalid_argument for a device that is not selected.
  std::vector<DevicePin> pins(std::span<const std::pair<std::string, std::string>> specs) const;
};

}  // namespace ampx
