// Runs one node on a plugin loaded through the C ABI, for the backend
// conformance tests (tests/onednn, tests/vulkan, tests/cuda).
#pragma once

#include <vector>

#include "harness.hpp"
#include "loaded_plugin.hpp"

namespace ampx::test {

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
