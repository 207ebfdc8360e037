// Buffers and their memory. Device buffers live in device-local memory; when
// that memory is also host-visible and coherent (lavapipe, integrated GPUs,
// resizable BAR) they are mapped and host copies are plain memcpy, otherwise
// copies go through host-visible staging buffers. Freed allocations go back
// to a small pool and are reused for requests of up to their size, so
// repeated runs (and repeated executors) do not allocate.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace ampx::vulkan {

struct PhysicalDevice;

// One VkBuffer bound to its own VkDeviceMemory. Move-only RAII.
class Allocation {
 public:
  Allocation() = default;
  Allocation(VkDevice dev, VkBuffer buf, VkDeviceMemory mem, void* mapped, uint64_t capacity,
             bool staging) noexcept
      : dev_(dev), buf_(buf), mem_(mem), mapped_(mapped), capacity_(capacity), staging_(staging) {}
  Allocation(Allocation&& o) noexcept { *this = std::move(o); }
  Allocation& operator=(Allocation&& o) noexcept;
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  ~Allocation() { reset(); }
  void reset() noexcept;

  VkBuffer buffer() const noexcept { return buf_; }
  // Host address of byte 0, or nullptr when not host-visible.
  unsigned char* mapped() const noexcept { return static_cast<unsigned char*>(mapped_); }
  uint64_t capacity() const noexcept { return capacity_; }
  bool staging() const noexcept { return staging_; }
  explicit operator bool() const noexcept { return buf_ != VK_NULL_HANDLE; }
  void set_mapped(void* p) noexcept { mapped_ = p; }

 private:
  VkDevice dev_ = VK_NULL_HANDLE;
  VkBuffer buf_ = VK_NULL_HANDLE;
  VkDeviceMemory mem_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  uint64_t capacity_ = 0;
  bool staging_ = false;
};

class MemoryPool {
 public:
  MemoryPool(VkDevice dev, const PhysicalDevice& pd);
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // A device buffer (storage + transfer) of at least `bytes`. Throws
  // StatusError OUT_OF_MEMORY with the size and heap in the message.
  Allocation device(uint64_t bytes);
  // A host-visible, coherent staging buffer of at least `bytes`.
  Allocation staging(uint64_t bytes);
  // Returns an allocation for reuse (dropped when the pool is full).
  void release(Allocation a) noexcept;
  // True when device buffers are host-mapped (no staging needed).
  bool device_mapped() const noexcept { return device_mapped_; }

 private:
  Allocation create(uint64_t bytes, bool staging);
  Allocation take(uint64_t bytes, bool staging);

  VkDevice dev_;
  VkPhysicalDeviceMemoryProperties props_{};
  uint32_t device_type_ = 0, staging_type_ = 0;
  bool device_mapped_ = false;
  std::vector<Allocation> free_;
  uint64_t free_bytes_ = 0;
  static constexpr uint64_t kMaxPooledBytes = 256ull << 20;
};

}  // namespace ampx::vulkan
