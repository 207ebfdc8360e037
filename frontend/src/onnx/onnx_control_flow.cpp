// ONNX's If whose condition is a constant after folding (exporters emit
// shape checks that static shapes settle at import): the branch taken is
// converted in place of the node, the other is dropped. An If whose
// condition is only known at run time is refused in one line.
#include <fmt/format.h>

#include <cstring>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

const onnx::GraphProto* branch(Importer& im, const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) {
      if (a.type() != onnx::AttributeProto::GRAPH || !a.has_g())
        im.fail(fmt::format("attribute '{}' is not a graph", name));
      return &a.g();
    }
  im.fail(fmt::format("attribute '{}' is required", name));
}

}  // namespace

void if_op(Importer& im, const onnx::NodeProto& n) {
  const ValueId cond = im.input(n, 0);
  const Value& v = im.value(cond);
  if (!v.is_constant())
    im.fail(fmt::format(
        "the condition '{}' is computed at run time; ampx imports an If only when its condition "
        "folds to a constant (pin the input shapes it depends on with --input-shape or --input)",
        n.input(0)));
  if (element_count(v.type.shape) != 1)
    im.fail(fmt::format("the condition '{}' has {} elements, expected 1", n.input(0),
                        element_count(v.type.shape)));
  bool taken = false;
  const std::byte* p = v.constant->data();
  switch (v.type.dtype) {
    case DType::kBool:
    case DType::kI8:
    case DType::kU8:
      taken = std::to_integer<int>(p[0]) != 0;
      break;
    default:
      im.fail(fmt::format("the condition '{}' is {}, expected bool", n.input(0),
                          dtype_name(v.type.dtype)));
  }
  const char* name = taken ? "then_branch" : "else_branch";
  const onnx::GraphProto* g = branch(im, n, name);
  (void)branch(im, n, taken ? "else_branch" : "then_branch");  // both must be there
  const std::vector<ValueId> outs = im.inline_subgraph(*g, name);
  if (static_cast<int>(outs.size()) != n.output_size())
    im.fail(fmt::format("{} has {} outputs, the node has {}", name, outs.size(), n.output_size()));
  for (int i = 0; i < n.output_size(); ++i) im.bind(n, i, outs[static_cast<size_t>(i)]);
}

}  // namespace ampx::onnx_io
