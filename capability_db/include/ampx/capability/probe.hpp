// Measures one device (in this process): for each case of the probe
// catalogue and each float dtype, the plugin's capability answer and, unless
// `unsupported`, the median kernel time; then Cast cost per element for each
// ordered dtype pair and host<->device copy cost. `ampx probe` runs this in a
// child process per device (probe_isolation.hpp) so that a crashing or
// hanging driver cannot take the other devices down with it.
#pragma once

#include <ampx/capability/profile.hpp>
#include <ampx/plugins/device.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ampx::capability {

struct ProbeOptions {
  bool quick = false;            // fewer, smaller cases; fewer repeats
  std::vector<std::string> ops;  // only these op types (empty: all)
  // Wall-clock budget in seconds (<= 0: none). When spent, the remaining
  // cases are still queried (cheap) but not timed (time_us < 0).
  double budget_s = 0;
  bool casts = true;   // measure Cast costs
  bool copies = true;  // measure host<->device copies
};

// Called after each step: done of total, and what was just measured.
using ProbeProgress = std::function<void(int done, int total, const std::string& what)>;

// Throws PluginError only when the device fails outside a single case (a
// failing prepare or launch of one case is logged and recorded untimed).
DeviceProfile probe_device(const plugins::Device& device, const std::string& plugin_version,
                           const ProbeOptions& options, const ProbeProgress& progress = {});

}  // namespace ampx::capability
