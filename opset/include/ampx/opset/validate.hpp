// Whether a node description is one of the op set's nodes, as a plugin is
// asked it (docs/OPS.md): infer_outputs()'s structural checks, the dtype
// rule, and the declared outputs equal to the inferred ones. Every in-tree
// backend validates with this before it looks at its own kernels, so a node
// means the same thing on every device.
#pragma once

#include <functional>
#include <string>

#include "ampx/opset/output_types.hpp"

namespace ampx::opset {

// Throws UnsupportedNode or std::invalid_argument (output_types.hpp). Returns
// the node's compute dtype: the common dtype of its float (or, for integer
// ops, integer) tensors; for data movement, the data dtype; for Cast, the
// input's.
ampx_dtype validate(const ampx_node_desc& node);

// True when validate(node) would succeed; otherwise false and, if `why` is
// not NULL, the reason. Never throws.
bool is_valid(const ampx_node_desc& node, std::string* why) noexcept;

// Runs fn: true when it returns; false when it throws, with the message in
// `why` (if not NULL). The never-throwing form of a validating call.
bool succeeds(const std::function<void()>& fn, std::string* why) noexcept;

}  // namespace ampx::opset
