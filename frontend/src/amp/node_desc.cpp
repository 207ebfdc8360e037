#include <ampx/amp/load_time.hpp>
#include <ampx/amp/node_desc.hpp>

#include <type_traits>

namespace ampx {

namespace {
ampx_tensor_desc tensor_desc(const Value& v, DType dtype, bool attach) {
  ampx_tensor_desc d{};
  d.struct_size = sizeof(ampx_tensor_desc);
  d.dtype = to_c(dtype);
  d.rank = static_cast<int32_t>(v.type.shape.size());
  d.dims = v.type.shape.data();
  d.const_data = attach && v.is_constant() ? v.constant->data() : nullptr;
  return d;
}
}  // namespace

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
    if (inputs_[i].const_data == nullptr && v < known.size() && !known[v].empty() &&
        known[v].size() == graph.value(node.inputs[i]).byte_size())
      inputs_[i].const_data = known[v].data();
  }
}

void LoweredNode::assign(const Graph& graph, const Node& node, std::span<const DType> input_dtypes,
                         std::span<const DType> output_dtypes, bool attach_constants) {
  inputs_.clear();
  outputs_.clear();
  attrs_.clear();
  for (size_t i = 0; i < node.inputs.size(); ++i)
    inputs_.push_back(tensor_desc(graph.value(node.inputs[i]), input_dtypes[i], attach_constants));
  for (size_t i = 0; i < node.outputs.size(); ++i)
    outputs_.push_back(tensor_desc(graph.value(node.outputs[i]), output_dtypes[i], false));

  attrs_ = to_c_attrs(node.attrs);
  desc_ = {};
  desc_.struct_size = sizeof(ampx_node_desc);
  desc_.op_type = op_name(node.op).data();  // schema names are NUL-terminated literals
  desc_.name = node.name.c_str();
  desc_.num_inputs = inputs_.size();
  desc_.inputs = inputs_.data();
  desc_.num_outputs = outputs_.size();
  desc_.outputs = outputs_.data();
  desc_.num_attrs = attrs_.size();
  desc_.attrs = attrs_.data();
}

capability::NodeSpec run_description(const Graph& graph) {
  capability::NodeSpec run("Run");
  // The steps a run launches (before fusion): the per-run cost grows with
  // the launches, so plans of one model with more or fewer nodes differ.
  int64_t steps = 0;
  for (bool at_load : load_time_nodes(graph)) steps += at_load ? 0 : 1;
  run.attr_int("steps", steps);
  for (ValueId v : graph.inputs())
    run.input(to_c(graph.value(v).type.dtype), graph.value(v).type.shape);
  for (ValueId v : graph.outputs())
    run.output(to_c(graph.value(v).type.dtype), graph.value(v).type.shape);
  return run;
}

}  // namespace ampx
