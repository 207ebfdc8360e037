#include "stream.hpp"

#include "vk_error.hpp"

namespace ampx::vulkan {

Stream::Stream(VkDevice dev, VkQueue queue, uint32_t family, MemoryPool& pool)
    : dev_(dev), queue_(queue), pool_(pool) {
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = family;
  VkCommandPool cp = VK_NULL_HANDLE;
  vk_check(vkCreateCommandPool(dev_, &pi, nullptr, &cp), "vkCreateCommandPool");
  cmd_pool_ =
      Handle<VkCommandPool>(cp, [dev](VkCommandPool p) { vkDestroyCommandPool(dev, p, nullptr); });
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = cp;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  vk_check(vkAllocateCommandBuffers(dev_, &ai, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence f = VK_NULL_HANDLE;
  vk_check(vkCreateFence(dev_, &fi, nullptr, &f), "vkCreateFence");
  fence_ = Handle<VkFence>(f, [dev](VkFence h) { vkDestroyFence(dev, h, nullptr); });
}

Stream::~Stream() {
  if (recording_) {
    vkEndCommandBuffer(cmd_);  // discarded: the host is tearing down
    recording_ = false;
  }
  // The command buffer is freed with its pool.
}

VkCommandBuffer Stream::record(const std::string& what) {
  if (lost_) throw StatusError(AMPX_STATUS_UNAVAILABLE, what + ": Vulkan device lost earlier");
  if (!recording_) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    recording_ = true;
  } else {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages =
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cmd_, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
  }
  recorded_.push_back(what);
  return cmd_;
}

void Stream::begin_timing(const std::string& what) {
  if (!timestamps_) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 2;
    VkQueryPool qp = VK_NULL_HANDLE;
    vk_check(vkCreateQueryPool(dev_, &qi, nullptr, &qp), "vkCreateQueryPool");
    VkDevice dev = dev_;
    timestamps_ =
        Handle<VkQueryPool>(qp, [dev](VkQueryPool p) { vkDestroyQueryPool(dev, p, nullptr); });
  }
  VkCommandBuffer cmd = record(what + " (timestamp)");
  vkCmdResetQueryPool(cmd, timestamps_.get(), 0, 2);
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_.get(), 0);
}

double Stream::end_timing(const std::string& what, uint32_t timestamp_bits, float period_ns) {
  // record() puts a full barrier first: the timestamp follows the work.
  VkCommandBuffer cmd = record(what + " (timestamp)");
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_.get(), 1);
  flush();
  uint64_t ticks[2] = {0, 0};
  vk_check(
      vkGetQueryPoolResults(dev_, timestamps_.get(), 0, 2, sizeof ticks, ticks, sizeof(uint64_t),
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
      "vkGetQueryPoolResults");
  const uint64_t mask = timestamp_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << timestamp_bits) - 1;
  const uint64_t delta = (ticks[1] - ticks[0]) & mask;
  return static_cast<double>(delta) * static_cast<double>(period_ns) / 1000.0;
}

void Stream::keep(Allocation a) {
  keep_.push_back(std::move(a));
}

void Stream::flush() {
  if (!recording_) return;
  // Make device writes visible to host reads of mapped memory.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  recording_ = false;
  std::string nodes;
  if (!recorded_.empty()) {
    nodes = " (" + std::to_string(recorded_.size()) + " recorded commands, first " +
            recorded_.front() + ", last " + recorded_.back() + ")";
  }
  recorded_.clear();
  auto fail = [&](VkResult r, const char* call) {
    if (r == VK_ERROR_DEVICE_LOST) lost_ = true;
    vkResetCommandBuffer(cmd_, 0);
    for (auto& a : keep_) pool_.release(std::move(a));
    keep_.clear();
    vk_check(r, std::string(call) + nodes);
  };
  VkResult r = vkEndCommandBuffer(cmd_);
  if (r != VK_SUCCESS) fail(r, "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  VkFence f = fence_.get();
  r = vkQueueSubmit(queue_, 1, &si, f);
  if (r != VK_SUCCESS) fail(r, "vkQueueSubmit");
  r = vkWaitForFences(dev_, 1, &f, VK_TRUE, UINT64_MAX);
  if (r != VK_SUCCESS) fail(r, "vkWaitForFences");
  vk_check(vkResetFences(dev_, 1, &f), "vkResetFences");
  vk_check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
  for (auto& a : keep_) pool_.release(std::move(a));
  keep_.clear();
}

}  // namespace ampx::vulkan
