// A kernel prepared by a plugin for one node instance.
#pragma once

#include <ampx/backend_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace ampx::plugins {

class LoadedPlugin;
class Device;

// RAII, move-only. Destroyed with the plugin's kernel_destroy; keeps its
// plugin loaded until then, even past the PluginHost. A default-constructed or
// moved-from Kernel is empty.
class Kernel {
 public:
  Kernel() noexcept = default;
  Kernel(Kernel&& other) noexcept;
  Kernel& operator=(Kernel&& other) noexcept;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  ~Kernel() { reset(); }

  explicit operator bool() const noexcept { return handle_ != nullptr; }
  ampx_kernel* handle() const noexcept { return handle_; }
  int32_t device_index() const noexcept { return device_; }
  // Taken from the node description at prepare time.
  const std::string& op_type() const noexcept { return op_type_; }
  size_t num_inputs() const noexcept { return num_inputs_; }
  size_t num_outputs() const noexcept { return num_outputs_; }

  // Runs the kernel (asynchronously if the device is; see
  // Device::synchronize). The views must refer to buffers of this kernel's
  // plugin, sized as described at prepare time; the host checks the counts
  // and that every view names a buffer (std::invalid_argument), the plugin
  // checks the rest. A plugin error throws PluginError.
  void launch(std::span<const ampx_buffer_view> inputs, std::span<const ampx_buffer_view> outputs);

  // How a timed launch was measured.
  enum class TimingMethod {
    kDevice,  // the plugin's kernel_launch_timed (device timestamps)
    kHost,    // the host clock around kernel_launch + synchronize
  };
  struct Timing {
    double us = 0;
    TimingMethod method = TimingMethod::kHost;
  };
  // Runs the kernel to completion and says how long it took: on the device
  // where the plugin can measure it (ABI 1.1 kernel_launch_timed), else on
  // the host clock. Work launched before on the device is waited for first
  // and not counted. Same checks and errors as launch().
  Timing launch_timed(std::span<const ampx_buffer_view> inputs,
                      std::span<const ampx_buffer_view> outputs);

  // What the kernel runs on and what its last launch did besides it (ABI
  // 1.4 kernel reports, backend_api.h): after a launch has finished (a
  // profiled run). Empty when the plugin has no kernel-info extension (a
  // 1.3 plugin); a plugin error throws PluginError.
  struct Report {
    std::string implementation;  // e.g. "convolution_forward jit:avx2"; may be empty
    uint64_t reorders = 0;       // conversions around the kernel, last launch
    double reorder_us = 0;
    uint64_t casts = 0;  // of `reorders`, those that changed the dtype
    double cast_us = 0;
  };
  std::optional<Report> report() const;

  // Destroys the kernel now; the Kernel becomes empty.
  void reset() noexcept;

 private:
  friend class Device;
  Kernel(std::shared_ptr<const LoadedPlugin> plugin, ampx_kernel* handle, int32_t device,
         std::string op_type, std::string node_name, size_t num_inputs,
         size_t num_outputs) noexcept;

  std::shared_ptr<const LoadedPlugin> plugin_;
  ampx_kernel* handle_ = nullptr;
  int32_t device_ = -1;
  std::string op_type_;
  std::string node_name_;
  size_t num_inputs_ = 0;
  size_t num_outputs_ = 0;
};

}  // namespace ampx::plugins
