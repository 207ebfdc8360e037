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

// What a validating caller accepts beyond the op set's own dtype rule. The
// defaults are the op set (docs/OPS.md): every backend plugin validates with
// them.
struct ValidateOptions {
  // The reference kernels' float64 mode (docs/OPS.md, "Dtype rule"): every
  // op of rule DtypeRule::kCompute also takes f64 (one common float dtype,
  // computed in f64 throughout), except the f32-only optimizer updates and
  // UpdateGuard. Only the reference kernels pass it, and only where asked
  // (reference::make_kernel's options; the cpu_ref plugin does): it is the
  // float64 oracle of the gradient check (tests/train). Every other backend,
  // including those that fall back to the reference kernels (onednn) or
  // run them under another policy (test_native), validates with the
  // defaults and keeps answering such f64 nodes `unsupported`.
  bool f64_compute = false;
};

// Throws UnsupportedNode or std::invalid_argument (output_types.hpp). Returns
// the node's compute dtype: the common dtype of its float (or, for integer
// ops, integer) tensors; for data movement, the data dtype; for Cast, the
// input's.
ampx_dtype validate(const ampx_node_desc& node, const ValidateOptions& options = {});

// True when validate(node, options) would succeed; otherwise false and, if
// `why` is not NULL, the reason. Never throws.
bool is_valid(const ampx_node_desc& node, std::string* why,
              const ValidateOptions& options = {}) noexcept;

// Runs fn: true when it returns; false when it throws, with the message in
// `why` (if not NULL). The never-throwing form of a validating call.
bool succeeds(const std::function<void()>& fn, std::string* why) noexcept;

}  // namespace ampx::opset
