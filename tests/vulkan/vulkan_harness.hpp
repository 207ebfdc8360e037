// Shared by the Vulkan plugin tests: plugins loaded through the C ABI, one
// node run through a plugin's buffers and prepared kernel, and the skip for
// machines without a Vulkan device.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"
#include "loaded_plugin.hpp"

namespace ampx::test {

inline std::string plugin_path(const char* name) {
  return std::string(AMPX_PLUGIN_BUILD_DIR) + "/libampx_backend_" + name + ".so";
}

inline int32_t device_count(const Plugin& p) {
  int32_t n = 0;
  p.ok(p.api->device_count(p.plugin, &n));
  return n;
}

inline std::string plugin_note(const Plugin& p) {
  ampx_plugin_info info{};
  info.struct_size = sizeof info;
  p.ok(p.api->plugin_info(p.plugin, &info));
  return info.note;
}

// With AMPX_VULKAN_VALIDATION set (the test suite sets it), the plugin's
// note ends in "Khronos validation on, N errors": N must be 0.
inline void expect_no_validation_errors(const Plugin& p) {
  if (!std::getenv("AMPX_VULKAN_VALIDATION")) return;
  const std::string note = plugin_note(p);
  EXPECT_NE(note.find("Khronos validation on, 0 errors"), std::string::npos) << note;
}

// Skips the test (visibly, with the plugin's reason) without a Vulkan device.
#define AMPX_SKIP_WITHOUT_VULKAN(plugin)                                         \
  do {                                                                           \
    if (::ampx::test::device_count(plugin) == 0)                                 \
      GTEST_SKIP() << "no Vulkan device: " << ::ampx::test::plugin_note(plugin); \
  } while (0)

// Runs the node on device 0 of `p`: one buffer per tensor, prepare, launch,
// copy back. Failures are test failures.
inline std::vector<Tensor> run_on(const Plugin& p, NodeBuilder& nb,
                                  const std::vector<Tensor>& inputs) {
  const ampx_plugin_api* api = p.api;
  const ampx_node_desc& d = nb.desc();
  std::vector<ampx_buffer*> bufs;
  std::vector<ampx_buffer_view> in, out;
  std::vector<Tensor> outs;
  for (const Tensor& t : inputs) {
    ampx_buffer* b = nullptr;
    p.ok(api->buffer_alloc(p.plugin, 0, t.bytes.size(), &b));
    p.ok(api->copy_to_device(b, 0, t.bytes.data(), t.bytes.size()));
    bufs.push_back(b);
    in.push_back({sizeof(ampx_buffer_view), b, 0});
  }
  for (size_t i = 0; i < d.num_outputs; ++i) {
    const ampx_tensor_desc& o = d.outputs[i];
    outs.push_back(Tensor::zeros(o.dtype, std::vector<int64_t>(o.dims, o.dims + o.rank)));
    ampx_buffer* b = nullptr;
    p.ok(api->buffer_alloc(p.plugin, 0, outs.back().bytes.size(), &b));
    bufs.push_back(b);
    out.push_back({sizeof(ampx_buffer_view), b, 0});
  }
  ampx_kernel* k = nullptr;
  p.ok(api->kernel_prepare(p.plugin, 0, &d, &k));
  if (k) {
    p.ok(api->kernel_launch(k, in.data(), in.size(), out.data(), out.size()));
    p.ok(api->synchronize(p.plugin, 0));
    for (size_t i = 0; i < outs.size(); ++i)
      p.ok(api->copy_to_host(outs[i].bytes.data(), out[i].buffer, 0, outs[i].bytes.size()));
    api->kernel_destroy(k);
  }
  for (ampx_buffer* b : bufs) api->buffer_free(b);
  return outs;
}

}  // namespace ampx::test
