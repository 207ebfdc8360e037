// Lowers one IR node to the C ABI's ampx_node_desc. The object owns every
// array and string the description points into, so the description stays
// valid exactly as long as this object does.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/ir/graph.hpp>

#include <span>
#include <string>
#include <vector>

namespace ampx {

class LoweredNode {
 public:
  // Types are given explicitly (the planner asks about a node in a dtype it
  // does not have yet). `const_data[i]` may be null; when set, input i is a
  // constant with those bytes.
  LoweredNode(const Node& node, std::span<const TensorType> input_types,
              std::span<const TensorType> output_types,
              std::span<const void* const> const_data = {});
  // The node as it stands in `graph`, constants attached.
  LoweredNode(const Graph& graph, NodeId id);

  LoweredNode(const LoweredNode&) = delete;
  LoweredNode& operator=(const LoweredNode&) = delete;

  const ampx_node_desc& desc() const { return desc_; }

 private:
  void fill(const Node& node, std::span<const TensorType> ins, std::span<const TensorType> outs,
            std::span<const void* const> const_data);

  std::string op_;
  std::string name_;
  std::vector<Shape> shapes_;
  std::vector<ampx_tensor_desc> inputs_;
  std::vector<ampx_tensor_desc> outputs_;
  // Reserved to the attribute count before filling: c_str() pointers stay valid.
  std::vector<std::string> attr_names_;
  std::vector<std::string> attr_strings_;
  // Moving a std::vector keeps its buffer, so pointers into these survive growth.
  std::vector<std::vector<int64_t>> attr_ints_;
  std::vector<std::vector<double>> attr_floats_;
  std::vector<ampx_attr> attrs_;
  ampx_node_desc desc_{};
};

}  // namespace ampx
