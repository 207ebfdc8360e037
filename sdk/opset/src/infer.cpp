// infer_outputs(): the catalogue's arity and attribute schema, then the
// op's own rule (one family per file).
#include <algorithm>

#include "ampx/opset/catalogue.hpp"
#include "infer_common.hpp"

namespace ampx::opset {
namespace {

using detail::Node;
using plugin_support::NodeView;

void check_schema(const NodeView& v, const OpDef& op) {
  const auto n = static_cast<int>(v.num_inputs());
  if (n < op.min_inputs || (op.max_inputs >= 0 && n > op.max_inputs)) {
    const std::string want = op.min_inputs == op.max_inputs ? std::to_string(op.min_inputs)
                             : op.max_inputs < 0 ? "at least " + std::to_string(op.min_inputs)
                                                 : std::to_string(op.min_inputs) + " to " +
                                                       std::to_string(op.max_inputs);
    v.fail("has " + std::to_string(n) + " inputs, expected " + want);
  }
  for (size_t i = 0; i < v.num_inputs(); ++i) {
    const ampx_tensor_desc& t = v.input(i);
    if (plugin_support::dtype_size(t.dtype) == 0)
      v.fail("input " + std::to_string(i) + " has an invalid dtype");
    for (int32_t d = 0; d < t.rank; ++d)
      if (t.dims[d] < 0) v.fail("input " + std::to_string(i) + " has a negative dimension");
  }
  for (size_t i = 0; i < v.num_attrs(); ++i) {
    const ampx_attr& a = v.attr_at(i);
    const std::string_view name = a.name;
    const auto it = std::find_if(op.attrs.begin(), op.attrs.end(),
                                 [&](const AttrDef& d) { return d.name == name; });
    if (it == op.attrs.end()) v.fail("unknown attribute '" + std::string(name) + "'");
    // A FLOAT attribute may be given as an INT (NodeView::get_float converts).
    if (a.kind != it->kind && !(it->kind == AMPX_ATTR_FLOAT && a.kind == AMPX_ATTR_INT)) {
      v.fail("attribute '" + std::string(name) + "' is " + NodeView::attr_kind_name(a.kind) +
             ", expected " + NodeView::attr_kind_name(it->kind));
    }
  }
  for (const AttrDef& d : op.attrs)
    if (d.required && !v.has_attr(d.name))
      v.fail("missing required attribute '" + std::string(d.name) + "'");
}

}  // namespace

std::vector<TensorSpec> infer_outputs(const ampx_node_desc& node) {
  const NodeView v(node);
  const OpDef* op = find_op(v.op_type());
  if (!op) throw UnsupportedNode(v.where() + ": unknown op type");
  check_schema(v, *op);
  const Node c(v);
  for (auto* family : {detail::infer_contraction, detail::infer_nn, detail::infer_elementwise,
                       detail::infer_data, detail::infer_index, detail::infer_recurrent,
                       detail::infer_training, detail::infer_attention, detail::infer_vision}) {
    if (auto out = family(c, op->name)) return std::move(*out);
  }
  v.fail("the op set defines no output rule for this op");
}

}  // namespace ampx::opset
