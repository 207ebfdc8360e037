// One logical Vulkan device (vulkan:N): VkDevice with the 16-bit features
// the plugin answers with enabled (and nothing masked), a compute queue, the
// memory pool, the recording stream and the pipeline cache. Members are
// declared so that destruction runs pipelines, stream, pool, then the
// VkDevice.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>

#include "handle.hpp"
#include "memory.hpp"
#include "physical_device.hpp"
#include "pipelines.hpp"
#include "stream.hpp"

namespace ampx::vulkan {

class Device {
 public:
  Device(PhysicalDevice info, int32_t index);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const PhysicalDevice& info() const noexcept { return info_; }
  int32_t index() const noexcept { return index_; }
  VkDevice get() const noexcept { return device_.get(); }
  MemoryPool& pool() { return *pool_; }
  Stream& stream() { return *stream_; }
  Pipelines& pipelines() { return *pipelines_; }
  uint64_t next_buffer_id() noexcept { return ++buffer_ids_; }
  std::string label() const { return "vulkan:" + std::to_string(index_); }

  // Copies bytes into a small device buffer (parameters at prepare time):
  // mapped memcpy or staging + a recorded copy.
  Allocation upload(const void* data, uint64_t bytes, const std::string& what);

 private:
  PhysicalDevice info_;
  int32_t index_;
  Handle<VkDevice> device_;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::unique_ptr<MemoryPool> pool_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Pipelines> pipelines_;
  uint64_t buffer_ids_ = 0;
};

}  // namespace ampx::vulkan
