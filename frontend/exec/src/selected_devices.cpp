#include <ampx/exec/selected_devices.hpp>

#include <stdexcept>

namespace ampx {

std::vector<PlanDevice> DeviceSelection::plan_devices() const {
  std::vector<PlanDevice> out;
  for (const SelectedDevice& d : devices)
    out.push_back({d.caps.get(), d.cost.get(), d.fallback_only});
  return out;
}

std::vector<const plugins::Device*> DeviceSelection::runtime_devices() const {
  std::vector<const plugins::Device*> out;
  for (const SelectedDevice& d : devices) out.push_back(d.device);
  return out;
}

int DeviceSelection::index_of(std::string_view id) const {
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].device->id() == id) return static_cast<int>(i);
  return -1;
}

std::vector<DevicePin> DeviceSelection::pins(
    std::span<const std::pair<std::string, std::string>> specs) const {
  std::vector<DevicePin> out;
  for (const auto& [pattern, id] : specs) {
    const int k = index_of(id);
    if (k < 0) {
      std::string have;
      for (const auto& d : devices) have += (have.empty() ? "" : ", ") + d.device->id();
      throw std::invalid_argument("--place '" + pattern + "=" + id + "': '" + id +
                                  "' is not one of the devices (" + have + ")");
    }
    out.push_back({pattern, k});
  }
  return out;
}

}  // namespace ampx
