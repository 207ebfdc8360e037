// Compute pipelines, created at kernel_prepare and cached per device by
// (shader variant, specialisation constants): twenty Relu nodes share one
// pipeline. Also the descriptor-set layouts (binding 0 = parameters, 1..n =
// tensors, all storage buffers) and pipeline layouts (one push-constant block
// of per-launch offsets), one per binding count.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "handle.hpp"

namespace ampx::vulkan {

// Layout of the push constants of common.glsl: uint off[8]; uint gx.
struct PushConstants {
  uint32_t off[8];
  uint32_t gx;
};
constexpr uint32_t kMaxTensorBindings = 8;

class Pipelines {
 public:
  explicit Pipelines(VkDevice dev);
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  // Layouts for `tensors` tensor bindings (plus the parameter binding).
  VkDescriptorSetLayout set_layout(uint32_t tensors);
  VkPipelineLayout layout(uint32_t tensors);
  // The pipeline of embedded shader `name` with constant_id i = spec[i].
  VkPipeline get(const std::string& name, const std::vector<uint32_t>& spec, uint32_t tensors);
  size_t size() const noexcept { return pipelines_.size(); }

 private:
  VkShaderModule module(const std::string& name);

  VkDevice dev_;
  Handle<VkPipelineCache> cache_;
  std::map<uint32_t, Handle<VkDescriptorSetLayout>> set_layouts_;
  std::map<uint32_t, Handle<VkPipelineLayout>> layouts_;
  std::map<std::string, Handle<VkShaderModule>> modules_;
  std::map<std::pair<std::string, std::vector<uint32_t>>, Handle<VkPipeline>> pipelines_;
};

}  // namespace ampx::vulkan
