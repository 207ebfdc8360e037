// A complete ampx plugin (C ABI v1) running the reference kernels on host
// memory, parameterised by a capability policy. cpu_ref and the test plugin
// test_native are both this, with different policies:
//
//   namespace {
//   std::unique_ptr<ampx::cpu_ref::CapabilityPolicy> make_policy(const ampx_plugin_create_args&);
//   constexpr ampx::cpu_ref::HostPluginSpec kSpec{"my_cpu", "1.0.0", "ampx reference kernels",
//                                                 "My CPU", &make_policy};
//   }
//   extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
//     return ampx::cpu_ref::host_plugin_entry<kSpec>();
//   }
//
// A policy may also bring its own kernels and device description
// (CapabilityPolicy::make_kernel / describe_device): backends/onednn does.
//
// One device, index 0: the host CPU. Buffers are 64-byte aligned host memory
// (buffer_host_ptr is implemented), copies are bounds-checked memmoves, and
// no C++ exception ever leaves an entry point.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "ampx/backend_api.h"
#include "ampx/cpu_ref/kernels.hpp"

namespace ampx::cpu_ref {

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
    return ampx::cpu_ref::can_run(node, why);
  }
  virtual std::unique_ptr<CpuKernel> make_kernel(const ampx_node_desc& node) const {
    return ampx::cpu_ref::make_kernel(node);
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
  // Called by plugin_create (args already defaulted for a NULL pointer or a
  // short struct_size); may read the environment. May throw.
  std::unique_ptr<CapabilityPolicy> (*make_policy)(const ampx_plugin_create_args& args);
};

// Cost hint in microseconds from estimate_work(): flops at `flops_per_s`,
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

// plugin_create for `spec`.
ampx_status* create_host_plugin(const HostPluginSpec& spec, const ampx_plugin_create_args* args,
                                ampx_plugin** out) noexcept;

using PluginCreateFn = ampx_status* (*)(const ampx_plugin_create_args*, ampx_plugin**);

// The full v1 function table for `spec`, with `create` as plugin_create.
ampx_plugin_api host_plugin_api(const HostPluginSpec& spec, PluginCreateFn create) noexcept;

// What a plugin's ampx_plugin_entry() returns: a static table for Spec.
template <const HostPluginSpec& Spec>
const ampx_plugin_api* host_plugin_entry() noexcept {
  static const ampx_plugin_api api =
      host_plugin_api(Spec, [](const ampx_plugin_create_args* args, ampx_plugin** out) {
        return create_host_plugin(Spec, args, out);
      });
  return &api;
}

}  // namespace ampx::cpu_ref
