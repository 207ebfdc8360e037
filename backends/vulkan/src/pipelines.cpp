#include "pipelines.hpp"

#include <cstring>

#include "shaders.hpp"
#include "vk_error.hpp"

namespace ampx::vulkan {

Pipelines::Pipelines(VkDevice dev) : dev_(dev) {
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VkPipelineCache c = VK_NULL_HANDLE;
  vk_check(vkCreatePipelineCache(dev_, &ci, nullptr, &c), "vkCreatePipelineCache");
  cache_ = Handle<VkPipelineCache>(
      c, [dev](VkPipelineCache h) { vkDestroyPipelineCache(dev, h, nullptr); });
}

VkDescriptorSetLayout Pipelines::set_layout(uint32_t tensors) {
  auto it = set_layouts_.find(tensors);
  if (it != set_layouts_.end()) return it->second.get();
  std::vector<VkDescriptorSetLayoutBinding> b(tensors + 1);
  for (uint32_t i = 0; i <= tensors; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  ci.bindingCount = static_cast<uint32_t>(b.size());
  ci.pBindings = b.data();
  VkDescriptorSetLayout l = VK_NULL_HANDLE;
  vk_check(vkCreateDescriptorSetLayout(dev_, &ci, nullptr, &l), "vkCreateDescriptorSetLayout");
  VkDevice dev = dev_;
  auto& h = set_layouts_[tensors];
  h = Handle<VkDescriptorSetLayout>(
      l, [dev](VkDescriptorSetLayout x) { vkDestroyDescriptorSetLayout(dev, x, nullptr); });
  return l;
}

VkPipelineLayout Pipelines::layout(uint32_t tensors) {
  auto it = layouts_.find(tensors);
  if (it != layouts_.end()) return it->second.get();
  VkDescriptorSetLayout sl = set_layout(tensors);
  VkPushConstantRange pr{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
  VkPipelineLayoutCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  ci.setLayoutCount = 1;
  ci.pSetLayouts = &sl;
  ci.pushConstantRangeCount = 1;
  ci.pPushConstantRanges = &pr;
  VkPipelineLayout l = VK_NULL_HANDLE;
  vk_check(vkCreatePipelineLayout(dev_, &ci, nullptr, &l), "vkCreatePipelineLayout");
  VkDevice dev = dev_;
  layouts_[tensors] = Handle<VkPipelineLayout>(
      l, [dev](VkPipelineLayout x) { vkDestroyPipelineLayout(dev, x, nullptr); });
  return l;
}

VkShaderModule Pipelines::module(const std::string& name) {
  auto it = modules_.find(name);
  if (it != modules_.end()) return it->second.get();
  for (const EmbeddedShader& s : embedded_shaders()) {
    if (name != s.name) continue;
    VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = s.count * sizeof(uint32_t);
    ci.pCode = s.words;
    VkShaderModule m = VK_NULL_HANDLE;
    vk_check(vkCreateShaderModule(dev_, &ci, nullptr, &m), "vkCreateShaderModule(" + name + ")");
    VkDevice dev = dev_;
    modules_[name] = Handle<VkShaderModule>(
        m, [dev](VkShaderModule x) { vkDestroyShaderModule(dev, x, nullptr); });
    return m;
  }
  throw StatusError(AMPX_STATUS_INTERNAL, "no embedded shader '" + name + "'");
}

VkPipeline Pipelines::get(const std::string& name, const std::vector<uint32_t>& spec,
                          uint32_t tensors) {
  auto key = std::make_pair(name, spec);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return it->second.get();
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i)
    entries[i] = {i, static_cast<uint32_t>(i * sizeof(uint32_t)), sizeof(uint32_t)};
  VkSpecializationInfo si{};
  si.mapEntryCount = static_cast<uint32_t>(entries.size());
  si.pMapEntries = entries.data();
  si.dataSize = spec.size() * sizeof(uint32_t);
  si.pData = spec.data();
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  // Dispatches beyond maxComputeWorkGroupCount are split with
  // vkCmdDispatchBase, which needs this flag.
  ci.flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT;
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module(name);
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
  ci.layout = layout(tensors);
  VkPipeline p = VK_NULL_HANDLE;
  vk_check(vkCreateComputePipelines(dev_, cache_.get(), 1, &ci, nullptr, &p),
           "vkCreateComputePipelines(" + name + ")");
  VkDevice dev = dev_;
  pipelines_[key] =
      Handle<VkPipeline>(p, [dev](VkPipeline x) { vkDestroyPipeline(dev, x, nullptr); });
  return p;
}

}  // namespace ampx::vulkan
