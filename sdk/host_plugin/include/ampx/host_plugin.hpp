// A complete ampx plugin (C ABI v1) running the reference kernels on host
// memory, parameterised by a capability policy. cpu_ref and the test plugin
// test_native are both this, with different policies:
//
//   namespace {
//   std::unique_ptr<ampx::host_plugin::CapabilityPolicy> make_policy(
//       const ampx::plugin_support::PluginOptions&);
//   constexpr ampx::plugin_support::OptionSpec kOptions[] = {{"threads", "1..4096", "..."}};
//   constexpr ampx::host_plugin::HostPluginSpec kSpec{"my_cpu", "1.0.0", "ampx reference kernels",
//                                                 "My CPU", &make_policy, kOptions};
//   }
//   extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
//     return ampx::host_plugin::host_plugin_entry<kSpec>();
//   }
//
// A policy may also bring its own kernels and device description
// (CapabilityPolicy::make_kernel / describe_device): backends/onednn does.
//
// One device, index 0: the host CPU. Buffers are 64-byte aligned host memory
// (buffer_host_ptr is implemented), copies are memmoves. The C ABI side
// (argument checks, statuses, views, options) is the SDK's glue,
// ampx/plugin_glue.hpp; this file is only what is particular to host memory.
#pragma once

#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ampx/backend_api.h"
#include "ampx/plugin_glue.hpp"
#include "ampx/reference/kernels.hpp"

namespace ampx::host_plugin {

// The kernel interface is the reference kernels' own: a policy that brings
// its own kernels implements it.
using reference::CpuKernel;
using reference::UnsupportedNode;

// The answer for one node the kernels can run (unsupported nodes never reach
// the policy: the plugin answers those itself, with the reason as note).
struct CapabilityAnswer {
  ampx_support support = AMPX_SUPPORT_NATIVE;
  double cost_us = -1;  // < 0: no estimate
  std::string note;     // truncated to ampx_capability::note
  // Plugin-internal: the node runs on the reference kernels (a plugin that
  // falls back to them for what its library lacks).
  bool reference_kernel = false;
};

// Running totals of conversions (CapabilityPolicy::conversions).
struct ConversionTotals {
  uint64_t reorders = 0;
  double reorder_us = 0;
  uint64_t casts = 0;  // of `reorders`, those that changed the dtype
  double cast_us = 0;
};

class CapabilityPolicy {
 public:
  virtual ~CapabilityPolicy() = default;
  virtual CapabilityAnswer answer(const ampx_node_desc& node) const = 0;
  // Appended to the device fingerprint when not empty: a configuration that
  // changes the answers must change the fingerprint too.
  virtual std::string fingerprint_suffix() const { return {}; }

  // The kernels themselves. By default the reference kernels; a plugin built
  // on another library (backends/onednn) overrides these three together.
  // can_run: false (and the reason) for nodes the plugin cannot run at all;
  // never throws. make_kernel: throws UnsupportedNode for those.
  virtual bool can_run(const ampx_node_desc& node, std::string* why) const {
    return ampx::reference::can_run(node, why);
  }
  virtual std::unique_ptr<CpuKernel> make_kernel(const ampx_node_desc& node) const {
    return ampx::reference::make_kernel(node);
  }
  // Called once by plugin_create after the defaults are filled in (name
  // "<label> (<cpu model>)", fingerprint, memory, cores): may override any.
  virtual void describe_device(ampx_device_props& props) const { (void)props; }
  // plugin_info.library; empty: HostPluginSpec::library.
  virtual std::string library() const { return {}; }
  // plugin_info.note (e.g. the configuration the device runs with).
  virtual std::string plugin_note() const { return {}; }

  // Other copies of buffer bytes. A plugin may keep a tensor elsewhere than
  // in its buffer's plain bytes (backends/onednn keeps activations in the
  // blocked layout its next primitive wants). So that it can keep the copies
  // coherent, the glue calls these around every access to buffer bytes it
  // makes or lets a kernel make (kernels that are HostCopyKernels handle
  // their own unstaged tensors). The defaults do nothing.
  //
  // [p, p + bytes) is about to be read as plain bytes: make it current.
  virtual void before_read(const unsigned char* p, uint64_t bytes) const {
    (void)p;
    (void)bytes;
  }
  // [p, p + bytes) is about to be overwritten whole as plain bytes.
  virtual void before_write(const unsigned char* p, uint64_t bytes) const {
    (void)p;
    (void)bytes;
  }
  // The buffer [p, p + bytes) is being freed.
  virtual void released(const unsigned char* p, uint64_t bytes) const {
    (void)p;
    (void)bytes;
  }
  // Conversions the policy's kernels and hooks ran so far on the calling
  // thread (backends/onednn: its reorders), as running totals. The glue
  // takes the difference around each launch, which becomes the kernel's
  // report of its last launch (ABI 1.4, backend_api.h "Kernel reports"), so
  // a conversion a hook runs for a launch counts for its node. Default:
  // none.
  virtual ConversionTotals conversions() const { return {}; }
  // buffer_host_ptr hands out buffer addresses: false when the plugin keeps
  // other copies, since reads and writes through such a pointer would bypass
  // the hooks above (the ABI lets buffer_host_ptr answer NULL).
  virtual bool host_pointers() const { return true; }
};

// A kernel that keeps its tensors coherent with the policy's other copies
// itself (CapabilityPolicy::before_read ...): kernel_launch then calls the
// hooks only for tensors it stages (misaligned, or an output overlapping
// another tensor) and runs run_tracked() instead of run().
class HostCopyKernel : public CpuKernel {
 public:
  // staged_output[i]: output i is a staging copy the glue copies into the
  // buffer after the run, so it must be written as plain bytes. Inputs need
  // no flag: a staged input's address is nobody's buffer.
  virtual void run_tracked(std::span<const void* const> inputs, std::span<void* const> outputs,
                           std::span<const bool> staged_output) = 0;
  // As a plain CpuKernel (no glue around it): nothing staged.
  void run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const std::unique_ptr<bool[]> unstaged(new bool[outputs.size() + 1]());
    run_tracked(inputs, outputs, std::span<const bool>(unstaged.get(), outputs.size()));
  }
};

struct HostPluginSpec {
  const char* name;          // plugin_name ([a-z0-9_]+), device "<name>:0"
  const char* version;       // plugin_version, also the device driver_version
  const char* library;       // plugin_info.library
  const char* device_label;  // device name "<label> (<cpu model>)"
  // Called by plugin_create with the options (documented keys only); may
  // read the environment. May throw.
  std::unique_ptr<CapabilityPolicy> (*make_policy)(const plugin_support::PluginOptions& options);
  // The option keys the policy reads (backend_api.h, "Options").
  std::span<const plugin_support::OptionSpec> options = {};
};

// Cost hint in microseconds from opset::estimate_work(): flops at `flops_per_s`,
// bytes moved at 10 GB/s and, when `convert16`, 1 ns per 16-bit element
// widened or rounded. A hint for the planner only; the capability database
// measures.
double cost_hint_us(const ampx_node_desc& node, double flops_per_s, bool convert16) noexcept;
// cost_hint_us() of the same node with every f16/bf16 tensor made f32: what
// the node would cost in f32, for policies that price 16-bit relative to it.
double cost_hint_us_as_f32(const ampx_node_desc& node, double flops_per_s) noexcept;

// True when any tensor of the node is f16 / bf16 (sets the flags given).
bool node_uses_16bit(const ampx_node_desc& node, bool* f16 = nullptr,
                     bool* bf16 = nullptr) noexcept;

// Host CPU facts for device properties: a /proc/cpuinfo field ("" when
// absent), the CPU model name (falls back to the machine architecture), and a
// string made safe for a fingerprint ([A-Za-z0-9._-] kept, runs of anything
// else become one '_').
std::string cpuinfo_field(const char* key);
std::string cpu_model_name();
std::string fingerprint_token(const std::string& s);

// The host-memory plugin as the glue's Impl (see plugin_glue.hpp), minus
// its name and options, which HostPluginImpl<Spec> adds.
class HostPlugin {
 public:
  // 64-byte aligned host memory.
  struct Buffer {
    struct Free {
      void operator()(unsigned char* p) const noexcept { std::free(p); }
    };
    std::unique_ptr<unsigned char, Free> data;
    uint64_t size = 0;
  };
  using BufferView = plugin_support::View<Buffer>;

  class Kernel {
   public:
    Kernel(std::unique_ptr<CpuKernel> kernel, const CapabilityPolicy& policy);
    void launch(std::span<const BufferView> ins, std::span<const BufferView> outs);
    // The kernel's implementation (CpuKernel::implementation) and the
    // conversions of its last launch.
    plugin_support::KernelReport report() const;

   private:
    std::unique_ptr<CpuKernel> kernel_;
    const CapabilityPolicy& policy_;
    HostCopyKernel* tracked_;  // kernel_, when it keeps other copies coherent itself
    ConversionTotals last_;    // the last launch's share of policy_.conversions()
    // Per-launch scratch, kept between launches.
    std::vector<const void*> in_ptrs_;
    std::vector<void*> out_ptrs_;
    std::vector<std::vector<double>> staging_;  // 8-byte aligned copies
  };

  HostPlugin(const HostPluginSpec& spec, const plugin_support::PluginOptions& options);

  std::string note() const;
  std::string library() const;
  int32_t device_count() const noexcept { return 1; }
  ampx_device_props device_props(int32_t) const { return props_; }
  plugin_support::Capability capability(int32_t device, const plugin_support::NodeView& v) const;
  Buffer alloc(int32_t device, uint64_t bytes);
  void release(Buffer& b) noexcept;
  void* host_ptr(Buffer& b) noexcept;
  void write(Buffer& dst, uint64_t offset, const void* src, uint64_t bytes);
  void read(void* dst, const Buffer& src, uint64_t offset, uint64_t bytes);
  void copy(plugin_support::BufferRef<Buffer> dst, plugin_support::BufferRef<Buffer> src,
            uint64_t bytes);
  std::unique_ptr<Kernel> prepare(int32_t device, const plugin_support::NodeView& v);
  void synchronize(int32_t) noexcept {}  // kernels run synchronously: nothing to wait for

 private:
  const HostPluginSpec& spec_;
  std::unique_ptr<CapabilityPolicy> policy_;
  ampx_device_props props_{};
};

template <const HostPluginSpec& Spec>
class HostPluginImpl final : public HostPlugin {
 public:
  static constexpr const char* kName = Spec.name;
  static constexpr const char* kVersion = Spec.version;
  static constexpr std::span<const plugin_support::OptionSpec> kOptions = Spec.options;
  explicit HostPluginImpl(const plugin_support::PluginOptions& options)
      : HostPlugin(Spec, options) {}
};

// What a plugin's ampx_plugin_entry() returns: a static table for Spec.
template <const HostPluginSpec& Spec>
const ampx_plugin_api* host_plugin_entry() noexcept {
  return plugin_support::plugin_entry<HostPluginImpl<Spec>>();
}

}  // namespace ampx::host_plugin
