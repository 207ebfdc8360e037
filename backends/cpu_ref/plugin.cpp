// The reference CPU backend plugin: every op of docs/OPS.md on the host CPU.
// f32 and integer nodes are `native`; any node touching f16/bf16 is
// `emulated` (16-bit storage, f32 compute, one rounding on store), except
// data movement, whose kernels copy bytes in any dtype: `native`. The one
// backend that runs the reference kernels' float64 mode: every float op in
// f64 too (`native`), not only the elementwise ones (docs/OPS.md, "Dtype
// rule"); the optimizer updates stay f32 only.
#include "ampx/backend_api.h"
#include "ampx/host_plugin.hpp"
#include "ampx/opset/catalogue.hpp"
#include "ampx/plugin_support.hpp"
#include "ampx/reference/kernels.hpp"

#include <stdexcept>
#include <string>

namespace {

using ampx::host_plugin::CapabilityAnswer;
using ampx::host_plugin::CapabilityPolicy;

// Cost hint: a deliberately crude 2 GFLOP/s (plus memory traffic and 16-bit
// conversions); the capability database measures the real thing.
constexpr double kFlopsPerSecond = 2e9;

// The reference kernels in their float64 mode (ampx/reference/kernels.hpp).
constexpr ampx::reference::KernelOptions kKernelOptions{.f64_compute = true};

class CpuRefPolicy final : public CapabilityPolicy {
 public:
  bool can_run(const ampx_node_desc& node, std::string* why) const override {
    return ampx::reference::can_run(node, why, kKernelOptions);
  }
  std::unique_ptr<ampx::host_plugin::CpuKernel> make_kernel(
      const ampx_node_desc& node) const override {
    return ampx::reference::make_kernel(node, kKernelOptions);
  }

  CapabilityAnswer answer(const ampx_node_desc& node) const override {
    CapabilityAnswer a;
    const bool moves_bytes = node.op_type && ampx::opset::is_data_movement(node.op_type);
    if (ampx::host_plugin::node_uses_16bit(node) && !moves_bytes) {
      a.support = AMPX_SUPPORT_EMULATED;
      a.note = "16-bit storage, f32 compute";
      a.cost_us = ampx::host_plugin::cost_hint_us(node, kFlopsPerSecond, true);
    } else {
      a.support = AMPX_SUPPORT_NATIVE;
      a.cost_us = ampx::host_plugin::cost_hint_us(node, kFlopsPerSecond, false);
    }
    return a;
  }
};

// Options (backend_api.h, "Options"): other keys are ignored; a malformed
// thread count is an error.
constexpr ampx::plugin_support::OptionSpec kOptions[] = {
    {"threads", "1..4096",
     "threads per kernel (ampx --threads N); default all cores, or AMPX_CPU_REF_THREADS"}};

std::unique_ptr<CapabilityPolicy> make_policy(const ampx::plugin_support::PluginOptions& options) {
  if (const long n = options.integer("threads", 0, 1, 4096); n > 0)
    ampx::reference::set_max_threads(static_cast<int>(n));
  return std::make_unique<CpuRefPolicy>();
}

constexpr ampx::host_plugin::HostPluginSpec kSpec{
    "cpu_ref", "1.0.0", "ampx reference kernels", "Reference CPU", &make_policy, kOptions};

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  return ampx::host_plugin::host_plugin_entry<kSpec>();
}
