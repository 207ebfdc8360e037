// Internal to the op set: the view of a node that every output-type rule
// works from, the checks they share, and the rule families.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ampx/opset/output_types.hpp"
#include "ampx/plugin_support.hpp"

namespace ampx::opset::detail {

using plugin_support::dtype_name;
using plugin_support::is_float_dtype;
using plugin_support::NodeView;

// The node's inputs as TensorSpecs; attributes are read through v.
struct Node {
  explicit Node(const NodeView& view);
  const NodeView& v;
  std::vector<TensorSpec> in;
  int n = 0;  // number of inputs
  [[noreturn]] void fail(const std::string& what) const { v.fail(what); }
};

// Builds the message only when the check fails: inference runs for every
// node the planner rewrites, and most checks pass.
#define AMPX_CHECK(cond, msg) \
  do {                        \
    if (!(cond)) c.fail(msg); \
  } while (0)

int64_t normalize_axis(const Node& c, int64_t axis, int64_t rank, const char* what);
// An INTS attribute of exactly n values, each > 0 (positive) or >= 0.
Dims pair_attr(const Node& c, const char* name, Dims def, size_t n, bool positive);
// An INT attribute that is a flag: 0 or 1 (default 0).
bool flag_attr(const Node& c, const char* name);
// Norms' `epsilon` (FLOAT, default 1e-5): must be >= 0.
void check_epsilon(const Node& c);
void require_float(const Node& c, const TensorSpec& t, const char* what);
void require_same_dtype(const Node& c, std::span<const TensorSpec> ins);
// The fused epilogue of Conv2d, MatMul, Gemm and BatchNorm (docs/OPS.md).
void check_activation(const Node& c);
// Product of dims, std::invalid_argument naming the node on overflow.
int64_t checked_count(const Node& c, const Dims& dims);

// Output shapes shared by an op and its gradient: Slice's (attributes
// starts, ends, axes, steps), Gather's (attribute axis) and the pools'
// (kernel_shape, strides, pads, ceil_mode; count_include_pad checked).
Dims slice_output(const Node& c, const Dims& x);
Dims gather_output(const Node& c, const Dims& data, const TensorSpec& indices);
Dims pool_output(const Node& c, const Dims& x);

// Each family returns nullopt for an op it does not define.
using Outputs = std::optional<std::vector<TensorSpec>>;
Outputs infer_contraction(const Node& c, std::string_view op);
Outputs infer_nn(const Node& c, std::string_view op);
Outputs infer_elementwise(const Node& c, std::string_view op);
Outputs infer_data(const Node& c, std::string_view op);
Outputs infer_recurrent(const Node& c, std::string_view op);
Outputs infer_index(const Node& c, std::string_view op);
Outputs infer_training(const Node& c, std::string_view op);
Outputs infer_attention(const Node& c, std::string_view op);  // infer_attention.cpp
Outputs infer_vision(const Node& c, std::string_view op);     // infer_vision.cpp

}  // namespace ampx::opset::detail
