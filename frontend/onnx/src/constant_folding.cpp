#include "constant_folding.hpp"

#include <ampx/amp/node_desc.hpp>
#include <ampx/reference/kernels.hpp>

namespace ampx::onnx_io {

std::vector<std::vector<std::byte>> evaluate_constant_node(OpType op, const AttrMap& attrs,
                                                           std::span<const ConstantInput> inputs,
                                                           std::span<const TensorType> outputs,
                                                           std::string_view node_name) {
  // A one-node graph lowered like any other node: the kernel sees exactly
  // the description a plugin would.
  Graph scratch;
  std::vector<ValueId> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(scratch.add_constant("in" + std::to_string(i), inputs[i].type, inputs[i].data));
  const NodeId id =
      scratch.add_node(std::string(node_name), op, ins,
                       std::vector<TensorType>(outputs.begin(), outputs.end()), attrs);
  const LoweredNode lowered(scratch, id);
  const auto kernel = reference::make_kernel(lowered.desc());

  // An empty constant has no storage: the kernel still gets a valid pointer
  // (it reads nothing, but memcpy from NULL is undefined even for 0 bytes).
  static constexpr std::byte kNothing[8]{};
  std::vector<const void*> in_ptrs;
  for (const auto& in : inputs) in_ptrs.push_back(in.data->empty() ? kNothing : in.data->data());
  std::vector<std::vector<std::byte>> out(outputs.size());
  std::vector<void*> out_ptrs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    // At least one element's room: a kernel may be handed a zero-size
    // tensor, never a null pointer.
    out[i].resize(std::max<size_t>(
        static_cast<size_t>(element_count(outputs[i].shape)) * dtype_size(outputs[i].dtype), 8));
    out_ptrs.push_back(out[i].data());
  }
  kernel->run(in_ptrs, out_ptrs);
  for (size_t i = 0; i < outputs.size(); ++i)
    out[i].resize(static_cast<size_t>(element_count(outputs[i].shape)) *
                  dtype_size(outputs[i].dtype));
  return out;
}

}  // namespace ampx::onnx_io
