// The planner's view of a plugin device: capability answers over the C ABI.
#pragma once

#include <ampx/capability/capability_source.hpp>
#include <ampx/plugins/device.hpp>

namespace ampx {

class DeviceCapabilities final : public CapabilitySource {
 public:
  explicit DeviceCapabilities(const plugins::Device& device) : device_(device) {}
  std::string device_id() const override { return device_.id(); }
  Answer query(const ampx_node_desc& node) override {
    auto c = device_.query(node);
    return {c.support, c.cost_us, std::move(c.note)};
  }

 private:
  const plugins::Device& device_;
};

}  // namespace ampx
