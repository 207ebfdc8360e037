// A source of capability answers for one device: what the planner asks,
// node instance by node instance. Today the plugin itself answers (through
// DeviceCapabilities); the capability database will answer from measured
// probes behind the same interface.
#pragma once

#include <ampx/backend_api.h>

#include <string>

namespace ampx {

class CapabilitySource {
 public:
  struct Answer {
    ampx_support support = AMPX_SUPPORT_UNSUPPORTED;
    double cost_us = -1;  // < 0: no estimate
    std::string note;
  };
  virtual ~CapabilitySource() = default;
  virtual std::string device_id() const = 0;
  virtual Answer query(const ampx_node_desc& node) = 0;
};

}  // namespace ampx
