// A node prepared on a device: the plan's pipelines (from the device cache),
// each dispatch's parameter buffer (uploaded once), and descriptor sets
// cached by the buffers they bind, so repeated runs over the same arena
// record without a single vkUpdateDescriptorSets. launch() only records into
// the device stream; the work runs at the next flush.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "device.hpp"
#include "handle.hpp"
#include "op_plan.hpp"

namespace ampx::vulkan {

// A region of a device buffer as the launch sees it.
struct BufferRef {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t id = 0;    // unique per allocation: VkBuffer values are reused
  uint64_t size = 0;  // bytes usable
  uint64_t offset = 0;
};

class Kernel {
 public:
  Kernel(Device& dev, const NodeView& v, OpPlan plan);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  const std::string& where() const noexcept { return where_; }
  size_t num_inputs() const noexcept { return in_bytes_.size(); }
  size_t num_outputs() const noexcept { return out_bytes_.size(); }
  uint64_t input_bytes(size_t i) const { return in_bytes_.at(i); }
  uint64_t output_bytes(size_t i) const { return out_bytes_.at(i); }
  Device& device() noexcept { return dev_; }

  void launch(const std::vector<BufferRef>& inputs, const std::vector<BufferRef>& outputs);

 private:
  struct Prepared {
    Dispatch d;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    Allocation params;
    uint64_t params_bytes = 0;
    std::map<std::vector<uint64_t>, VkDescriptorSet> sets;
  };
  VkDescriptorSet descriptor_set(Prepared& p, const std::vector<BufferRef>& bound,
                                 const std::vector<uint64_t>& key);

  Device& dev_;
  std::string where_;
  std::vector<uint64_t> in_bytes_, out_bytes_;
  std::vector<Prepared> prepared_;
  Allocation scratch_;  // OpPlan::scratch_bytes
  uint64_t scratch_id_ = 0;
  Handle<VkDescriptorPool> pool_;
  uint32_t sets_left_ = 0;
  static constexpr uint32_t kSetsPerDispatch = 16;
};

}  // namespace ampx::vulkan
