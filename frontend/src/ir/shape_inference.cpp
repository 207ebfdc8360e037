// The IR's view of the op set's output-type rules (opset/output_types.hpp):
// the node goes across as the C ABI's node description, so the frontend and
// every backend apply one definition.
#include <ampx/ir/shape_inference.hpp>
#include <ampx/opset/output_types.hpp>

namespace ampx {

std::vector<TensorType> infer_output_types(OpType op, std::span<const TensorType> in,
                                           const AttrMap& attrs, std::string_view node_name) {
  std::vector<ampx_tensor_desc> inputs;
  inputs.reserve(in.size());
  for (const TensorType& t : in) {
    ampx_tensor_desc d{};
    d.struct_size = sizeof(ampx_tensor_desc);
    d.dtype = to_c(t.dtype);
    d.rank = static_cast<int32_t>(t.shape.size());
    d.dims = t.shape.data();
    inputs.push_back(d);
  }
  const std::vector<ampx_attr> c_attrs = to_c_attrs(attrs);
  const std::string name(node_name);
  ampx_node_desc node{};
  node.struct_size = sizeof(ampx_node_desc);
  node.op_type = op_name(op).data();  // schema names are NUL-terminated literals
  node.name = name.c_str();
  node.num_inputs = inputs.size();
  node.inputs = inputs.data();
  node.num_attrs = c_attrs.size();
  node.attrs = c_attrs.data();
  std::vector<TensorType> out;
  try {
    for (opset::TensorSpec& t : opset::infer_outputs(node))
      out.push_back({static_cast<DType>(t.dtype), std::move(t.dims)});
  } catch (const std::invalid_argument& e) {
    throw GraphError(e.what());
  }
  return out;
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  return opset::broadcast_shapes(a, b);
}

}  // namespace ampx
