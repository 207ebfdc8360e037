// The oneDNN CPU backend plugin (device onednn:0): the shared host-memory
// plugin (sdk/host_plugin, ampx/host_plugin.hpp) with oneDNN primitives as kernels
// and capability answers measured from oneDNN's implementation choice.
// Options: "threads=N" (0 or absent: all cores), "blocked_activations=0|1"
// (default 1), "debug_counters=0|1" (default 0), "deterministic=0|1"
// (default 1), "selfcheck_perturb=0|1" (tests only); see README.md.
#include "ampx/backend_api.h"
#include "ampx/host_plugin.hpp"
#include "policy.hpp"

namespace {

std::unique_ptr<ampx::host_plugin::CapabilityPolicy> make_policy(
    const ampx::plugin_support::PluginOptions& options) {
  return std::make_unique<ampx::onednn::OnednnPolicy>(ampx::onednn::parse_options(options));
}

constexpr ampx::host_plugin::HostPluginSpec kSpec{"onednn",     ampx::onednn::kPluginVersion,
                                                  "oneDNN",     "oneDNN CPU",
                                                  &make_policy, ampx::onednn::kOptions};

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return ampx::host_plugin::host_plugin_entry<kSpec>();
}
