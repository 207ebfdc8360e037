// Lowers one IR node to the C ABI's ampx_node_desc, through the SDK's one
// writer of it (NodeDescBuilder). The description borrows the node's name,
// attributes and the graph's shapes (the graph must outlive every use of
// desc()) and owns only the small tensor and attribute arrays. assign()
// reuses their capacity, so the planner lowers a whole graph without
// allocating per node.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/capability/node_spec.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/node_desc_builder.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace ampx {

class LoweredNode {
 public:
  LoweredNode() = default;
  // The node as it stands in `graph`, constants attached.
  LoweredNode(const Graph& graph, NodeId id);
  // The same, and also the bytes of inputs that are not graph constants but
  // whose values are known before any run (the executor's weights computed
  // at load, such as 16-bit weight Casts): `known[v]`, when not empty, holds
  // value v's bytes, so a backend can pre-pack those weights as it does f32
  // ones. The bytes must outlive every use of desc().
  LoweredNode(const Graph& graph, NodeId id, std::span<const std::vector<std::byte>> known);

  LoweredNode(const LoweredNode&) = delete;
  LoweredNode& operator=(const LoweredNode&) = delete;

  // Node `node` of `graph` with the given dtype per input and output (the
  // planner asks about dtypes the node does not have yet). Constant inputs
  // carry their bytes when `attach_constants`.
  void assign(const Graph& graph, const Node& node, std::span<const DType> input_dtypes,
              std::span<const DType> output_dtypes, bool attach_constants);

  const ampx_node_desc& desc() const { return builder_.desc(); }

 private:
  plugin_support::NodeDescBuilder builder_;
};

// A whole run of `graph` as one description (op "Run", the graph's inputs
// and outputs as its tensors, attribute `steps`: the nodes it runs, those
// evaluated at load not counted): the key of the per-run cost no node
// carries.
capability::NodeSpec run_description(const Graph& graph);
// The same with the steps counted by the caller (it has load_time_nodes()).
capability::NodeSpec run_description(const Graph& graph, int64_t steps);

}  // namespace ampx
