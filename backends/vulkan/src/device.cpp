#include "device.hpp"

#include <cstring>
#include <vector>

#include "vk_error.hpp"

namespace ampx::vulkan {

Device::Device(PhysicalDevice info, int32_t index) : info_(std::move(info)), index_(index) {
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = info_.queue_family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;

  // Enable exactly what the answers rely on: a masked feature stays off, so
  // a kernel that used it anyway would be a validation error.
  VkPhysicalDeviceShaderFloat16Int8Features f16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  f16.shaderFloat16 = info_.float16 ? VK_TRUE : VK_FALSE;
  VkPhysicalDevice16BitStorageFeatures s16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  s16.storageBuffer16BitAccess = info_.storage16 ? VK_TRUE : VK_FALSE;
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  s8.storageBuffer8BitAccess = VK_TRUE;
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  feats.features.shaderFloat64 = info_.float64 ? VK_TRUE : VK_FALSE;
  feats.pNext = &s16;
  void** tail = &s16.pNext;
  if (info_.float16) {
    *tail = &f16;
    tail = &f16.pNext;
  }
  if (info_.storage8) *tail = &s8;
  std::vector<const char*> exts;
  if (info_.need_float16_ext) exts.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  if (info_.need_8bit_ext) exts.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);

  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = &feats;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &qi;
  ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  VkDevice d = VK_NULL_HANDLE;
  vk_check(vkCreateDevice(info_.handle, &ci, nullptr, &d), "vkCreateDevice(" + info_.name + ")");
  device_ = Handle<VkDevice>(d, [](VkDevice x) { vkDestroyDevice(x, nullptr); });
  vkGetDeviceQueue(d, info_.queue_family, 0, &queue_);
  pool_ = std::make_unique<MemoryPool>(d, info_);
  stream_ = std::make_unique<Stream>(d, queue_, info_.queue_family, *pool_);
  pipelines_ = std::make_unique<Pipelines>(d);
}

Device::~Device() {
  if (device_) vkDeviceWaitIdle(device_.get());
  pipelines_.reset();
  stream_.reset();
  pool_.reset();
}

Allocation Device::upload(const void* data, uint64_t bytes, const std::string& what) {
  Allocation a = pool_->device(bytes);
  if (bytes == 0) return a;
  if (a.mapped()) {
    // A pooled allocation may still be read by recorded work of its previous
    // owner: only write it once that work is done.
    if (stream_->pending()) stream_->flush();
    std::memcpy(a.mapped(), data, bytes);
    return a;
  }
  Allocation s = pool_->staging(bytes);
  std::memcpy(s.mapped(), data, bytes);
  VkCommandBuffer cmd = stream_->record(what);
  VkBufferCopy region{0, 0, bytes};
  vkCmdCopyBuffer(cmd, s.buffer(), a.buffer(), 1, &region);
  stream_->keep(std::move(s));
  return a;
}

}  // namespace ampx::vulkan
