// Gradient rules of the data-movement ops: the gradient moves back the way
// the data came (reshaped, transposed back, split, concatenated, scattered).
#include <ampx/ir/dtype.hpp>

#include "grad_rules.hpp"

namespace ampx::train::detail {
namespace {

void reshape(RuleContext& c) {  // Reshape, Flatten
  c.give(0, c.op(OpType::kReshape, "dx", {c.dy()}, {{"shape", c.shape(c.x(0))}}));
}

void transpose(RuleContext& c) {
  const size_t rank = c.shape(c.x(0)).size();
  std::vector<int64_t> perm = c.attr_is("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  std::vector<int64_t> inverse(rank);
  for (size_t i = 0; i < rank; ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  c.give(0, c.op(OpType::kTranspose, "dx", {c.dy()}, {{"perm", inverse}}));
}

int64_t axis_of(const RuleContext& c, int64_t def) {
  const int64_t axis = c.attr_i("axis", def);
  return axis < 0 ? axis + static_cast<int64_t>(c.shape(c.x(0)).size()) : axis;
}

void concat(RuleContext& c) {
  const int64_t axis = axis_of(c, 0);
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    sizes.push_back(c.shape(c.x(i))[static_cast<size_t>(axis)]);
  const auto parts = c.op_multi(OpType::kSplit, "dx", {c.dy()}, {{"axis", axis}, {"split", sizes}});
  for (size_t i = 0; i < c.num_inputs(); ++i) c.give(i, parts[i]);
}

void split(RuleContext& c) {
  std::vector<ValueId> parts;
  for (size_t i = 0; i < c.node().outputs.size(); ++i)
    parts.push_back(c.dy(i) != kNone ? c.dy(i) : c.zeros_like(c.y(i), "zero" + std::to_string(i)));
  c.give(0, c.op(OpType::kConcat, "dx", std::move(parts), {{"axis", axis_of(c, 0)}}));
}

void slice(RuleContext& c) {
  AttrMap a{{"starts", c.attr_is("starts")},
            {"ends", c.attr_is("ends")},
            {"input_shape", c.shape(c.x(0))}};
  for (const char* opt : {"axes", "steps"})
    if (c.node().attrs.contains(opt)) a[opt] = c.node().attrs.at(opt);
  c.give(0, c.op(OpType::kSliceGrad, "dx", {c.dy()}, std::move(a)));
}

void gather(RuleContext& c) {
  c.give(0, c.op(OpType::kGatherGrad, "dx", {c.dy(), c.x(1)},
                 {{"axis", c.attr_i("axis", 0)}, {"data_shape", c.shape(c.x(0))}}));
}

void expand(RuleContext& c) {
  c.give(0, c.sum_to(c.dy(), c.shape(c.x(0)), "dx"));
}

void cast(RuleContext& c) {
  const DType from = c.dtype(c.x(0));
  if (!is_float(from)) return;
  c.give(0, c.op(OpType::kCast, "dx", {c.dy()}, {{"to", static_cast<int64_t>(from)}}));
}

void identity(RuleContext& c) {  // Dropout outside training mode
  c.give(0, c.dy());
}

// Constant padding: the gradient is the slice the input occupies.
void pad(RuleContext& c) {
  if (c.attr_s("mode", "constant") != "constant")
    c.fail("only constant padding has a gradient rule");
  const Shape x = c.shape(c.x(0));
  const auto pads = c.attr_is("pads");
  std::vector<int64_t> starts, ends;
  for (size_t i = 0; i < x.size(); ++i) {
    if (pads[i] < 0 || pads[i + x.size()] < 0) c.fail("cropping pads have no gradient rule");
    starts.push_back(pads[i]);
    ends.push_back(pads[i] + x[i]);
  }
  c.give(0, c.op(OpType::kSlice, "dx", {c.dy()}, {{"starts", starts}, {"ends", ends}}));
}

}  // namespace

GradRule data_grad_rule(OpType op) {
  switch (op) {
    case OpType::kReshape:
    case OpType::kFlatten:
      return reshape;
    case OpType::kTranspose:
      return transpose;
    case OpType::kConcat:
      return concat;
    case OpType::kSplit:
      return split;
    case OpType::kSlice:
      return slice;
    case OpType::kGather:
      return gather;
    case OpType::kExpand:
      return expand;
    case OpType::kCast:
      return cast;
    case OpType::kDropout:
      return identity;
    case OpType::kPad:
      return pad;
    default:
      return nullptr;
  }
}

}  // namespace ampx::train::detail
