#include "kernel.hpp"

#include <algorithm>
#include <cstdio>

namespace ampx::vulkan {

Kernel::Kernel(Device& dev, const NodeView& v, OpPlan plan) : dev_(dev), where_(v.where()) {
  for (size_t i = 0; i < v.num_inputs(); ++i)
    in_bytes_.push_back(plugin_support::byte_size(v.input(i)));
  for (size_t i = 0; i < v.num_outputs(); ++i)
    out_bytes_.push_back(plugin_support::byte_size(v.output(i)));
  if (plan.scratch_bytes > 0) {
    scratch_ = dev_.pool().device(plan.scratch_bytes);
    scratch_id_ = dev_.next_buffer_id();
  }
  uint32_t descriptors = 0;
  for (Dispatch& d : plan.dispatches) {
    if (d.tensors.size() > kMaxTensorBindings)
      throw StatusError(AMPX_STATUS_INTERNAL, where_ + ": too many tensor bindings");
    Prepared p;
    const auto n = static_cast<uint32_t>(d.tensors.size());
    p.pipeline = dev_.pipelines().get(d.shader, d.spec, n);
    p.layout = dev_.pipelines().layout(n);
    p.set_layout = dev_.pipelines().set_layout(n);
    if (d.params.empty()) d.params.push_back(0);
    p.params_bytes = d.params.size() * sizeof(int32_t);
    p.params = dev_.upload(d.params.data(), p.params_bytes, where_ + " parameters");
    descriptors += (n + 1) * kSetsPerDispatch;
    p.d = std::move(d);
    prepared_.push_back(std::move(p));
  }
  if (!prepared_.empty()) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
    VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    sets_left_ = kSetsPerDispatch * static_cast<uint32_t>(prepared_.size());
    ci.maxSets = sets_left_;
    ci.poolSizeCount = 1;
    ci.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorPool(dev_.get(), &ci, nullptr, &pool),
             where_ + ": vkCreateDescriptorPool");
    VkDevice d = dev_.get();
    pool_ = Handle<VkDescriptorPool>(
        pool, [d](VkDescriptorPool x) { vkDestroyDescriptorPool(d, x, nullptr); });
  }
}

Kernel::~Kernel() {
  // Recorded launches may still use this kernel's sets and parameters.
  try {
    if (dev_.stream().pending()) dev_.stream().flush();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ampx vulkan: %s: flush before destroy failed: %s\n", where_.c_str(),
                 e.what());
  }
  for (Prepared& p : prepared_) dev_.pool().release(std::move(p.params));
  if (scratch_) dev_.pool().release(std::move(scratch_));
}

VkDescriptorSet Kernel::descriptor_set(Prepared& p, const std::vector<BufferRef>& bound,
                                       const std::vector<uint64_t>& key) {
  auto it = p.sets.find(key);
  if (it != p.sets.end()) return it->second;
  if (sets_left_ == 0) {
    // Seen more buffer combinations than the pool holds: wait for recorded
    // work that may use the old sets, then start over.
    if (dev_.stream().pending()) dev_.stream().flush();
    vk_check(vkResetDescriptorPool(dev_.get(), pool_.get(), 0), where_ + ": vkResetDescriptorPool");
    for (Prepared& q : prepared_) q.sets.clear();
    sets_left_ = kSetsPerDispatch * static_cast<uint32_t>(prepared_.size());
  }
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_.get();
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &p.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  vk_check(vkAllocateDescriptorSets(dev_.get(), &ai, &set), where_ + ": vkAllocateDescriptorSets");
  --sets_left_;
  std::vector<VkDescriptorBufferInfo> infos(bound.size() + 1);
  infos[0] = {p.params.buffer(), 0, p.params_bytes};
  for (size_t i = 0; i < bound.size(); ++i)
    infos[i + 1] = {bound[i].buffer, bound[i].offset, bound[i].size};
  std::vector<VkWriteDescriptorSet> writes(infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(dev_.get(), static_cast<uint32_t>(writes.size()), writes.data(), 0,
                         nullptr);
  p.sets.emplace(key, set);
  return set;
}

void Kernel::launch(const std::vector<BufferRef>& inputs, const std::vector<BufferRef>& outputs) {
  const PhysicalDevice& info = dev_.info();
  for (Prepared& p : prepared_) {
    const Dispatch& d = p.d;
    if (d.groups[0] == 0 || d.groups[1] == 0 || d.groups[2] == 0) continue;  // empty tensor
    // Bind a window of each buffer starting at the view's offset rounded down
    // to minStorageBufferOffsetAlignment, at most maxStorageBufferRange long;
    // the shader gets the rest of the offset in elements.
    PushConstants pc{};
    std::vector<BufferRef> bound(d.tensors.size());
    std::vector<uint64_t> key;
    for (size_t b = 0; b < d.tensors.size(); ++b) {
      const TensorRef& t = d.tensors[b];
      if (t.scratch) {
        bound[b] = {scratch_.buffer(), scratch_id_, scratch_.capacity(), 0};
        key.push_back(scratch_id_);
        key.push_back(0);
        continue;
      }
      const BufferRef& v = t.output ? outputs.at(t.index) : inputs.at(t.index);
      const uint64_t bytes = t.output ? out_bytes_[t.index] : in_bytes_[t.index];
      const uint64_t start = v.offset / info.storage_align * info.storage_align;
      const uint64_t rel = v.offset - start;
      if (rel % t.elem_bytes != 0)
        throw StatusError(AMPX_STATUS_INVALID_ARGUMENT,
                          where_ + ": " + (t.output ? "output " : "input ") +
                              std::to_string(t.index) + " offset " + std::to_string(v.offset) +
                              " is not a multiple of its " + std::to_string(t.elem_bytes) +
                              "-byte element");
      const uint64_t range = std::min(v.size - start, info.max_storage_range);
      if (rel + bytes > range)
        throw StatusError(AMPX_STATUS_UNSUPPORTED,
                          where_ + ": tensor of " + std::to_string(bytes) + " bytes at offset " +
                              std::to_string(v.offset) + " is beyond maxStorageBufferRange (" +
                              std::to_string(info.max_storage_range) + ")");
      bound[b] = {v.buffer, v.id, range, start};
      key.push_back(v.id);
      key.push_back(start);
      pc.off[b] = static_cast<uint32_t>(rel / t.elem_bytes);
    }
    VkDescriptorSet set = descriptor_set(p, bound, key);

    // Grid: 1-D kernels lay their groups out as x*y; anything beyond
    // maxComputeWorkGroupCount is split into several vkCmdDispatchBase calls
    // (gl_WorkGroupID includes the base, so shaders see one grid).
    std::array<uint64_t, 3> g = d.groups;
    if (d.linear) {
      const uint64_t total = g[0];
      const uint64_t gx = std::min<uint64_t>(total, info.max_groups[0]);
      g = {gx, (total + gx - 1) / gx, 1};
    }
    pc.gx = static_cast<uint32_t>(g[0]);
    VkCommandBuffer cmd = dev_.stream().record(where_);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
    for (uint64_t z = 0; z < g[2]; z += info.max_groups[2])
      for (uint64_t y = 0; y < g[1]; y += info.max_groups[1])
        for (uint64_t x = 0; x < g[0]; x += info.max_groups[0])
          vkCmdDispatchBase(
              cmd, static_cast<uint32_t>(x), static_cast<uint32_t>(y), static_cast<uint32_t>(z),
              static_cast<uint32_t>(std::min<uint64_t>(info.max_groups[0], g[0] - x)),
              static_cast<uint32_t>(std::min<uint64_t>(info.max_groups[1], g[1] - y)),
              static_cast<uint32_t>(std::min<uint64_t>(info.max_groups[2], g[2] - z)));
  }
}

}  // namespace ampx::vulkan
