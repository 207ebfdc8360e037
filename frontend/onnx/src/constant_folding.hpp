// Import-time evaluation of a node whose inputs are all constants, by the
// reference kernels (reference/, the numerical oracle): a folded
// shape subgraph gives exactly what the runtime would have computed.
#pragma once

#include <ampx/ir/graph.hpp>

#include <span>
#include <string_view>
#include <vector>

namespace ampx::onnx_io {

struct ConstantInput {
  TensorType type;
  ConstantData data;
};

// Output bytes of `op` on `inputs`; `outputs` are the inferred output
// types. Throws (GraphError, std::invalid_argument) naming the node when the
// reference kernels cannot run it.
std::vector<std::vector<std::byte>> evaluate_constant_node(OpType op, const AttrMap& attrs,
                                                           std::span<const ConstantInput> inputs,
                                                           std::span<const TensorType> outputs,
                                                           std::string_view node_name);

}  // namespace ampx::onnx_io
