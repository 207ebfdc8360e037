#include "grad_builder.hpp"

#include <ampx/ir/shape_inference.hpp>

#include <cstring>

namespace ampx::train::detail {

GradBuilder::GradBuilder(Graph& graph) : g_(graph) {
  for (const Node& n : g_.nodes()) names_.insert(n.name);
  for (const Value& v : g_.values()) names_.insert(v.name);
}

std::string GradBuilder::unique(const std::string& name) {
  std::string candidate = name;
  for (int i = 2; !names_.insert(candidate).second; ++i) candidate = name + "#" + std::to_string(i);
  return candidate;
}

std::vector<ValueId> GradBuilder::add(OpType op, const std::string& name,
                                      std::vector<ValueId> inputs, AttrMap attrs,
                                      const std::string& grad_of) {
  std::vector<TensorType> in_types;
  in_types.reserve(inputs.size());
  for (ValueId v : inputs) in_types.push_back(type(v));
  const std::string node_name = unique(name);
  auto out_types = infer_output_types(op, in_types, attrs, node_name);
  const NodeId id =
      g_.add_node(node_name, op, std::move(inputs), std::move(out_types), std::move(attrs));
  g_.node(id).grad_of = grad_of;
  return g_.node(id).outputs;
}

ValueId GradBuilder::scalar(DType dtype, double value, const std::string& name) {
  std::vector<std::byte> bytes(dtype_size(dtype));
  if (dtype == DType::kF64) {
    std::memcpy(bytes.data(), &value, sizeof value);
  } else if (dtype == DType::kF32) {
    const auto f = static_cast<float>(value);
    std::memcpy(bytes.data(), &f, sizeof f);
  } else {
    throw GraphError("autodiff: a " + std::string(dtype_name(dtype)) +
                     " constant is not supported (the forward graph is f32 or f64)");
  }
  return g_.add_constant(unique(name), {dtype, {}}, std::move(bytes));
}

ValueId GradBuilder::zeros(TensorType t, const std::string& name, const std::string& grad_of) {
  const ValueId zero = scalar(t.dtype, 0.0, name + "/zero");
  if (t.shape.empty()) return zero;
  return add1(OpType::kExpand, name, {zero}, {{"shape", t.shape}}, grad_of);
}

ValueId GradBuilder::sum_to(ValueId grad, Shape target, const std::string& name,
                            const std::string& grad_of) {
  const Shape shape = type(grad).shape;
  if (shape == target) return grad;
  const size_t lead = shape.size() - target.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < shape.size(); ++i)
    if (i < lead || (target[i - lead] == 1 && shape[i] != 1))
      axes.push_back(static_cast<int64_t>(i));
  ValueId v = grad;
  if (!axes.empty())
    v = add1(OpType::kReduceSum, name + "/sum", {v}, {{"axes", axes}, {"keepdims", int64_t{1}}},
             grad_of);
  if (type(v).shape != target)
    v = add1(OpType::kReshape, name + "/reshape", {v}, {{"shape", target}}, grad_of);
  return v;
}

}  // namespace ampx::train::detail
