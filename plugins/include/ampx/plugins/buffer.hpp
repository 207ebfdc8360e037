// A device buffer allocated by a plugin.
#pragma once

#include <ampx/backend_api.h>

#include <cstdint>
#include <memory>

namespace ampx::plugins {

class LoadedPlugin;
class Device;

// RAII, move-only. Freed with the plugin's buffer_free; keeps its plugin
// loaded (and its instance alive) until then, even past the PluginHost.
// A default-constructed or moved-from Buffer is empty.
class Buffer {
 public:
  Buffer() noexcept = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  explicit operator bool() const noexcept { return handle_ != nullptr; }
  uint64_t size() const noexcept { return size_; }
  ampx_buffer* handle() const noexcept { return handle_; }
  // Host-visible address (the plugin's optional buffer_host_ptr), or nullptr
  // when the buffer is not host-visible or the plugin does not say.
  void* host_ptr() const noexcept { return host_ptr_; }
  // Index of the device (within its plugin) the buffer was allocated on.
  int32_t device_index() const noexcept { return device_; }

  // A view for Kernel::launch, struct_size set. Throws std::logic_error when
  // empty, std::out_of_range when offset > size().
  ampx_buffer_view view(uint64_t offset = 0) const;

  // Frees the buffer now; the Buffer becomes empty.
  void reset() noexcept;

 private:
  friend class Device;
  Buffer(std::shared_ptr<const LoadedPlugin> plugin, ampx_buffer* handle, uint64_t size,
         int32_t device, void* host_ptr) noexcept;

  std::shared_ptr<const LoadedPlugin> plugin_;
  ampx_buffer* handle_ = nullptr;
  uint64_t size_ = 0;
  int32_t device_ = -1;
  void* host_ptr_ = nullptr;
};

}  // namespace ampx::plugins
