// Runs one node on a plugin loaded through the C ABI, for the backend
// conformance tests (tests/onednn, tests/vulkan, tests/cuda), with the
// conformance kit's run_node (the one `ampx plugin-check` uses).
#pragma once

#include <ampx/plugin_check/run_node.hpp>

#include <vector>

#include "harness.hpp"
#include "loaded_plugin.hpp"

namespace ampx::test {

// Runs the node on device 0 of `p`. A failing call is a test failure, and
// the outputs are then zeros.
inline std::vector<Tensor> run_on(const Plugin& p, NodeBuilder& nb,
                                  const std::vector<Tensor>& inputs) {
  const ampx_node_desc& d = nb.desc();
  try {
    return check::run_node(*p.api, p.plugin, 0, d, inputs).outputs;
  } catch (const std::exception& e) {
    ADD_FAILURE() << nb.op_type() << ": " << e.what();
  }
  std::vector<Tensor> outs;
  for (size_t i = 0; i < d.num_outputs; ++i) {
    const ampx_tensor_desc& o = d.outputs[i];
    outs.push_back(Tensor::zeros(o.dtype, std::vector<int64_t>(o.dims, o.dims + o.rank)));
  }
  return outs;
}

}  // namespace ampx::test
