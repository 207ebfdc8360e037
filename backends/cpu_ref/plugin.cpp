// The reference CPU backend plugin: every op of docs/OPS.md on the host CPU.
// f32 and integer nodes are `native`; any node touching f16/bf16 is
// `emulated` (16-bit storage, f32 compute, one rounding on store).
#include "ampx/backend_api.h"
#include "ampx/cpu_ref/host_plugin.hpp"
#include "ampx/cpu_ref/kernels.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

using ampx::cpu_ref::CapabilityAnswer;
using ampx::cpu_ref::CapabilityPolicy;

// Cost hint: a deliberately crude 2 GFLOP/s (plus memory traffic and 16-bit
// conversions); the capability database measures the real thing.
constexpr double kFlopsPerSecond = 2e9;

class CpuRefPolicy final : public CapabilityPolicy {
 public:
  CapabilityAnswer answer(const ampx_node_desc& node) const override {
    CapabilityAnswer a;
    if (ampx::cpu_ref::node_uses_16bit(node)) {
      a.support = AMPX_SUPPORT_EMULATED;
      a.note = "16-bit storage, f32 compute";
      a.cost_us = ampx::cpu_ref::cost_hint_us(node, kFlopsPerSecond, true);
    } else {
      a.support = AMPX_SUPPORT_NATIVE;
      a.cost_us = ampx::cpu_ref::cost_hint_us(node, kFlopsPerSecond, false);
    }
    return a;
  }
};

// Options: "threads=N" (`ampx --threads N`) caps the kernel threads; the
// default is all cores (or AMPX_CPU_REF_THREADS). Unknown keys are errors.
void apply_options(std::string_view options) {
  while (!options.empty()) {
    const size_t end = std::min(options.find(';'), options.size());
    const std::string_view item = options.substr(0, end);
    options.remove_prefix(std::min(end + 1, options.size()));
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    if (key != "threads")
      throw std::invalid_argument("cpu_ref: unknown option '" + std::string(key) +
                                  "' (known: threads)");
    int n = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || ptr != value.data() + value.size() || n < 1)
      throw std::invalid_argument("cpu_ref option threads='" + std::string(value) +
                                  "': expected a positive integer");
    ampx::cpu_ref::set_max_threads(n);
  }
}

std::unique_ptr<CapabilityPolicy> make_policy(const ampx_plugin_create_args& args) {
  if (args.options) apply_options(args.options);
  return std::make_unique<CpuRefPolicy>();
}

constexpr ampx::cpu_ref::HostPluginSpec kSpec{"cpu_ref", "1.0.0", "ampx reference kernels",
                                              "Reference CPU", &make_policy};

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return ampx::cpu_ref::host_plugin_entry<kSpec>();
}
