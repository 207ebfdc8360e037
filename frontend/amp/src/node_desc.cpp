#include <ampx/amp/load_time.hpp>
#include <ampx/amp/node_desc.hpp>

#include <type_traits>

namespace ampx {

LoweredNode::LoweredNode(const Graph& graph, NodeId id) : LoweredNode(graph, id, {}) {}

LoweredNode::LoweredNode(const Graph& graph, NodeId id,
                         std::span<const std::vector<std::byte>> known) {
  const Node& node = graph.node(id);
  std::vector<DType> ins, outs;
  for (ValueId v : node.inputs) ins.push_back(graph.value(v).type.dtype);
  for (ValueId v : node.outputs) outs.push_back(graph.value(v).type.dtype);
  assign(graph, node, ins, outs, true);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const auto v = static_cast<size_t>(node.inputs[i]);
    if (desc().inputs[i].const_data == nullptr && v < known.size() && !known[v].empty() &&
        known[v].size() == graph.value(node.inputs[i]).byte_size())
      builder_.borrow_constant(i, known[v].data());
  }
}

void LoweredNode::assign(const Graph& graph, const Node& node, std::span<const DType> input_dtypes,
                         std::span<const DType> output_dtypes, bool attach_constants) {
  builder_.reset(op_name(node.op).data(), node.name.c_str());  // op names are NUL-terminated
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value& v = graph.value(node.inputs[i]);
    builder_.borrow_input(to_c(input_dtypes[i]), v.type.shape,
                          attach_constants && v.is_constant() ? v.constant->data() : nullptr);
  }
  for (size_t i = 0; i < node.outputs.size(); ++i)
    builder_.borrow_output(to_c(output_dtypes[i]), graph.value(node.outputs[i]).type.shape);
  borrow_attrs(node.attrs, builder_);
}

capability::NodeSpec run_description(const Graph& graph) {
  // The steps a run launches (before fusion): the per-run cost grows with
  // the launches, so plans of one model with more or fewer nodes differ.
  int64_t steps = 0;
  for (bool at_load : load_time_nodes(graph)) steps += at_load ? 0 : 1;
  return run_description(graph, steps);
}

capability::NodeSpec run_description(const Graph& graph, int64_t steps) {
  capability::NodeSpec run("Run", "probe");
  run.attr_int("steps", steps);
  for (ValueId v : graph.inputs())
    run.input(to_c(graph.value(v).type.dtype), graph.value(v).type.shape);
  for (ValueId v : graph.outputs())
    run.output(to_c(graph.value(v).type.dtype), graph.value(v).type.shape);
  return run;
}

}  // namespace ampx
