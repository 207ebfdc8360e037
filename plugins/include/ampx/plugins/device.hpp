// One device of one plugin, as the frontend sees it.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/plugins/buffer.hpp>
#include <ampx/plugins/kernel.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace ampx::plugins {

class LoadedPlugin;
class PluginHost;

// A plugin's answer for one node instance on one device.
struct Capability {
  ampx_support support = AMPX_SUPPORT_UNSUPPORTED;
  double cost_us = -1.0;  // predicted kernel time; < 0: no estimate
  std::string note;       // optional short reason
};

// A device's native handles (ABI 1.6, backend_api.h "Native handles"): its
// ordinal in the vendor API and the one stream the plugin issues all of the
// device's work on. Work enqueued there is in the device's order.
struct NativeDevice {
  ampx_native_api api = AMPX_NATIVE_API_NONE;
  int32_t ordinal = -1;
  void* stream = nullptr;
};

// A cheap, copyable handle; every copy keeps the plugin loaded. Created by
// PluginHost only. Calls go straight to the plugin: like the plugin
// instance, a Device (and its buffers and kernels) is used from one thread at
// a time.
//
// Argument errors the host can see are thrown before the plugin is called:
// std::invalid_argument (an empty buffer, a buffer of another plugin or
// device), std::out_of_range (a copy outside a buffer). A failing plugin call
// throws PluginError.
class Device {
 public:
  const std::string& id() const noexcept { return id_; }  // "<plugin_name>:<index>"
  const std::string& plugin_name() const noexcept;
  int32_t index() const noexcept { return index_; }
  // Copied at registration; struct_size == sizeof(ampx_device_props), members
  // the plugin did not report are zero, strings are NUL-terminated.
  const ampx_device_props& props() const noexcept { return props_; }

  // Asks the plugin whether it can run `node` (struct_size must be set) and at
  // what cost. A support value outside ampx_support is a plugin error.
  Capability query(const ampx_node_desc& node) const;

  Buffer allocate(uint64_t bytes) const;
  // Copies src into dst at dst_offset; dst must be a buffer of this device.
  // Zero bytes copy nothing and call nothing.
  void copy_to_device(const Buffer& dst, uint64_t dst_offset, std::span<const std::byte> src) const;
  // Fills dst from src at src_offset; src must be a buffer of this device.
  void copy_to_host(std::span<std::byte> dst, const Buffer& src, uint64_t src_offset) const;
  // Both buffers must belong to this device's plugin (any of its devices).
  void copy_device_to_device(const Buffer& dst, uint64_t dst_offset, const Buffer& src,
                             uint64_t src_offset, uint64_t bytes) const;

  // Prepares a kernel for `node`; a plugin that cannot run it answers with an
  // error status (typically UNSUPPORTED), thrown as PluginError.
  Kernel prepare(const ampx_node_desc& node) const;

  // Waits for all work launched on this device.
  void synchronize() const;
  // The device's native handles, or nullopt when its plugin publishes none
  // or answers UNSUPPORTED for this device (the caller then copies through
  // the host). An answer that breaks the ABI's rules (an unknown API, a
  // negative ordinal, a NULL stream) throws PluginLoadError naming the plugin.
  std::optional<NativeDevice> native() const;
  // The device address of `buffer`'s byte 0 (a buffer of this device), for
  // work on native()'s stream only. Throws std::logic_error where native()
  // is nullopt, PluginError when the plugin fails.
  void* native_ptr(const Buffer& buffer) const;

  // plugin_info's note as the plugin answers it now (PluginRecord::note is
  // the one at load): a plugin may report counters there (the oneDNN
  // plugin's debug_counters=1), which tests read after a run.
  std::string plugin_note() const;

 private:
  friend class PluginHost;
  Device(std::shared_ptr<const LoadedPlugin> plugin, int32_t index, const ampx_device_props& props);

  void check_own(const Buffer& buffer, const char* what) const;

  std::shared_ptr<const LoadedPlugin> plugin_;
  std::string id_;
  int32_t index_ = 0;
  ampx_device_props props_{};
};

}  // namespace ampx::plugins
