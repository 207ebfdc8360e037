// The IR's view of the op set's output-type rules (opset/output_types.hpp):
// the node goes across as the C ABI's node description, so the frontend and
// every backend apply one definition.
#include <ampx/ir/shape_inference.hpp>
#include <ampx/opset/output_types.hpp>

namespace ampx {

std::vector<TensorType> infer_output_types(OpType op, std::span<const TensorType> in,
                                           const AttrMap& attrs, std::string_view node_name) {
  const std::string name(node_name);
  plugin_support::NodeDescBuilder node;
  node.reset(op_name(op).data(), name.c_str());  // op names are NUL-terminated literals
  for (const TensorType& t : in) node.borrow_input(to_c(t.dtype), t.shape, nullptr);
  borrow_attrs(attrs, node);
  std::vector<TensorType> out;
  try {
    for (opset::TensorSpec& t : opset::infer_outputs(node.desc()))
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
