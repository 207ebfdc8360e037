#include "memory.hpp"

#include <algorithm>
#include <string>

#include "physical_device.hpp"
#include "vk_error.hpp"

namespace ampx::vulkan {

Allocation& Allocation::operator=(Allocation&& o) noexcept {
  if (this != &o) {
    reset();
    dev_ = o.dev_;
    buf_ = std::exchange(o.buf_, VK_NULL_HANDLE);
    mem_ = std::exchange(o.mem_, VK_NULL_HANDLE);
    mapped_ = std::exchange(o.mapped_, nullptr);
    capacity_ = std::exchange(o.capacity_, 0);
    staging_ = o.staging_;
  }
  return *this;
}

void Allocation::reset() noexcept {
  if (buf_ != VK_NULL_HANDLE) vkDestroyBuffer(dev_, buf_, nullptr);
  if (mem_ != VK_NULL_HANDLE) vkFreeMemory(dev_, mem_, nullptr);  // unmaps implicitly
  buf_ = VK_NULL_HANDLE;
  mem_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
  capacity_ = 0;
}

namespace {

constexpr VkMemoryPropertyFlags kHostCoherent =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// First memory type allowed by `bits` with all of `want`; -1 if none.
int find_type(const VkPhysicalDeviceMemoryProperties& p, uint32_t bits,
              VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < p.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (p.memoryTypes[i].propertyFlags & want) == want)
      return static_cast<int>(i);
  return -1;
}

}  // namespace

MemoryPool::MemoryPool(VkDevice dev, const PhysicalDevice& pd) : dev_(dev) {
  vkGetPhysicalDeviceMemoryProperties(pd.handle, &props_);
  // The memory type bits a storage buffer accepts, from a probe buffer.
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = 256;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer probe = VK_NULL_HANDLE;
  vk_check(vkCreateBuffer(dev_, &bi, nullptr, &probe), "vkCreateBuffer");
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(dev_, probe, &req);
  vkDestroyBuffer(dev_, probe, nullptr);

  // Device buffers: device-local and mappable if such a type exists, else
  // device-local, else anything. Staging: host-visible + coherent, cached
  // preferred (read-back).
  int t =
      find_type(props_, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | kHostCoherent);
  device_mapped_ = t >= 0;
  if (t < 0) t = find_type(props_, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (t < 0) t = find_type(props_, req.memoryTypeBits, 0);
  if (t < 0) throw StatusError(AMPX_STATUS_UNAVAILABLE, "no memory type for storage buffers");
  if (!device_mapped_ && (props_.memoryTypes[t].propertyFlags & kHostCoherent) == kHostCoherent)
    device_mapped_ = true;
  device_type_ = static_cast<uint32_t>(t);
  int s = find_type(props_, req.memoryTypeBits, kHostCoherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (s < 0) s = find_type(props_, req.memoryTypeBits, kHostCoherent);
  if (s < 0) throw StatusError(AMPX_STATUS_UNAVAILABLE, "no host-visible coherent memory type");
  staging_type_ = static_cast<uint32_t>(s);
}

Allocation MemoryPool::create(uint64_t bytes, bool staging) {
  const uint32_t type = staging ? staging_type_ : device_type_;
  const VkMemoryHeap& heap = props_.memoryHeaps[props_.memoryTypes[type].heapIndex];
  // Refuse what cannot fit before asking the driver (an allocation larger
  // than its heap is also a validation error).
  if (bytes > heap.size)
    throw StatusError(AMPX_STATUS_OUT_OF_MEMORY,
                      "cannot allocate " + std::to_string(bytes) + " bytes: larger than the " +
                          std::to_string(heap.size) + "-byte memory heap");
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = std::max<uint64_t>(bytes, 16);
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buf = VK_NULL_HANDLE;
  vk_check(vkCreateBuffer(dev_, &bi, nullptr, &buf),
           "vkCreateBuffer(" + std::to_string(bytes) + " bytes)");
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(dev_, buf, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  const VkResult r = vkAllocateMemory(dev_, &ai, nullptr, &mem);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(dev_, buf, nullptr);
    vk_check(r, "vkAllocateMemory(" + std::to_string(bytes) + " bytes)");
  }
  Allocation a(dev_, buf, mem, nullptr, bi.size, staging);  // owns both from here
  vk_check(vkBindBufferMemory(dev_, buf, mem, 0), "vkBindBufferMemory");
  const bool mappable = (props_.memoryTypes[type].propertyFlags & kHostCoherent) == kHostCoherent;
  if (mappable) {
    void* mapped = nullptr;
    vk_check(vkMapMemory(dev_, mem, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
    a.set_mapped(mapped);
  }
  return a;
}

Allocation MemoryPool::take(uint64_t bytes, bool staging) {
  // Best fit among pooled allocations of the same kind, at most twice the
  // request so a small tensor never pins a large block.
  const uint64_t want = std::max<uint64_t>(bytes, 16);
  size_t best = free_.size();
  for (size_t i = 0; i < free_.size(); ++i) {
    const Allocation& f = free_[i];
    if (f.staging() != staging || f.capacity() < want || f.capacity() / 2 > want) continue;
    if (best == free_.size() || f.capacity() < free_[best].capacity()) best = i;
  }
  if (best < free_.size()) {
    Allocation a = std::move(free_[best]);
    free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
    free_bytes_ -= a.capacity();
    return a;
  }
  try {
    return create(bytes, staging);
  } catch (const StatusError& e) {
    if (e.code() != AMPX_STATUS_OUT_OF_MEMORY || free_.empty()) throw;
    free_.clear();  // give the pooled memory back to the driver and retry once
    free_bytes_ = 0;
    return create(bytes, staging);
  }
}

Allocation MemoryPool::device(uint64_t bytes) {
  return take(bytes, false);
}
Allocation MemoryPool::staging(uint64_t bytes) {
  return take(bytes, true);
}

void MemoryPool::release(Allocation a) noexcept {
  if (!a || a.capacity() > kMaxPooledBytes) return;
  try {
    while (!free_.empty() && free_bytes_ + a.capacity() > kMaxPooledBytes) {
      free_bytes_ -= free_.front().capacity();
      free_.erase(free_.begin());  // oldest first
    }
    free_bytes_ += a.capacity();
    free_.push_back(std::move(a));
  } catch (...) {
    // vector growth failed: the allocation is simply destroyed
  }
}

}  // namespace ampx::vulkan
