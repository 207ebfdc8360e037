#include <ampx/exec/node_desc.hpp>

#include <type_traits>

namespace ampx {

LoweredNode::LoweredNode(const Node& node, std::span<const TensorType> input_types,
                         std::span<const TensorType> output_types,
                         std::span<const void* const> const_data) {
  fill(node, input_types, output_types, const_data);
}

LoweredNode::LoweredNode(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  std::vector<TensorType> ins, outs;
  std::vector<const void*> consts;
  for (ValueId v : node.inputs) {
    const Value& val = graph.value(v);
    ins.push_back(val.type);
    consts.push_back(val.is_constant() ? val.constant->data() : nullptr);
  }
  for (ValueId v : node.outputs) outs.push_back(graph.value(v).type);
  fill(node, ins, outs, consts);
}

void LoweredNode::fill(const Node& node, std::span<const TensorType> ins,
                       std::span<const TensorType> outs, std::span<const void* const> const_data) {
  op_ = std::string(op_name(node.op));
  name_ = node.name;
  // Reserve first: tensor descs keep pointers into shapes_.
  shapes_.reserve(ins.size() + outs.size());
  auto tensor = [&](const TensorType& t, const void* data) {
    shapes_.push_back(t.shape);
    ampx_tensor_desc d{};
    d.struct_size = sizeof(ampx_tensor_desc);
    d.dtype = to_c(t.dtype);
    d.rank = static_cast<int32_t>(t.shape.size());
    d.dims = shapes_.back().data();
    d.const_data = data;
    return d;
  };
  for (size_t i = 0; i < ins.size(); ++i)
    inputs_.push_back(tensor(ins[i], i < const_data.size() ? const_data[i] : nullptr));
  for (const auto& t : outs) outputs_.push_back(tensor(t, nullptr));

  attr_names_.reserve(node.attrs.size());
  attr_strings_.reserve(node.attrs.size());
  attrs_.reserve(node.attrs.size());
  for (const auto& [key, value] : node.attrs) {
    ampx_attr a{};
    a.struct_size = sizeof(ampx_attr);
    a.name = attr_names_.emplace_back(key).c_str();
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            a.kind = AMPX_ATTR_INT;
            a.i = v;
          } else if constexpr (std::is_same_v<T, double>) {
            a.kind = AMPX_ATTR_FLOAT;
            a.f = v;
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            a.kind = AMPX_ATTR_INTS;
            a.ints = attr_ints_.emplace_back(v).data();
            a.count = v.size();
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            a.kind = AMPX_ATTR_FLOATS;
            a.floats = attr_floats_.emplace_back(v).data();
            a.count = v.size();
          } else {
            a.kind = AMPX_ATTR_STRING;
            a.s = attr_strings_.emplace_back(v).c_str();
          }
        },
        value);
    attrs_.push_back(a);
  }
  desc_.struct_size = sizeof(ampx_node_desc);
  desc_.op_type = op_.c_str();
  desc_.name = name_.c_str();
  desc_.num_inputs = inputs_.size();
  desc_.inputs = inputs_.data();
  desc_.num_outputs = outputs_.size();
  desc_.outputs = outputs_.data();
  desc_.num_attrs = attrs_.size();
  desc_.attrs = attrs_.data();
}

}  // namespace ampx
