// Output dtypes and shapes of one node from its inputs and attributes, with
// every check the op's semantics imply (docs/OPS.md). Used by the builder to
// type new nodes and by the verifier to check whole graphs.
#pragma once

#include <ampx/ir/graph.hpp>

#include <span>
#include <string_view>
#include <vector>

namespace ampx {

// Throws GraphError "node 'NAME' (OP): problem" when the node is ill-formed.
std::vector<TensorType> infer_output_types(OpType op, std::span<const TensorType> inputs,
                                           const AttrMap& attrs, std::string_view node_name);

// NumPy broadcasting of two shapes; nullopt when incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace ampx
