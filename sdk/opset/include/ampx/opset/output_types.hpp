// The op set's structural rules (docs/OPS.md): from a node's inputs and
// attributes, the dtypes and shapes of its outputs, with every check the
// op's semantics imply. The frontend types its graphs with this; backends
// validate the nodes they are asked about with validate.hpp, which adds the
// dtype rule and the declared outputs.
#pragma once

#include <stdexcept>
#include <vector>

#include "ampx/backend_api.h"
#include "ampx/opset/shape_rules.hpp"

namespace ampx::opset {

struct TensorSpec {
  ampx_dtype dtype = AMPX_DTYPE_INVALID;
  Dims dims;
  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
};

// Thrown when a node is well formed but outside what the op set's kernels
// handle: an unknown op type, a dtype the op's rule excludes. Every other
// failure is a plain std::invalid_argument. Messages always start with
// "node '<name>' (<op>): ".
class UnsupportedNode : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Arity, attribute names, kinds and values, input ranks and dims, then the
// outputs' dtypes and shapes. Reads the node's op type, name, inputs and
// attributes; node.outputs is not read. Throws as above.
std::vector<TensorSpec> infer_outputs(const ampx_node_desc& node);

}  // namespace ampx::opset
