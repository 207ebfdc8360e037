// The IR's op types: the op set of docs/OPS.md, whose one list is the op
// set's catalogue (opset/ops.inc: stable id, name, arity, attributes, dtype
// rule and AMP category). OpType is the catalogue's stable id.
#pragma once

#include <ampx/ir/attribute.hpp>
#include <ampx/opset/catalogue.hpp>

#include <optional>
#include <string_view>

namespace ampx {

using OpType = opset::OpId;
inline constexpr int kOpTypeCount = static_cast<int>(opset::kOpCount);
// How the `auto` amp level treats an op (docs/PLANNER.md).
using opset::AmpCategory;

inline AmpCategory amp_category(OpType op) {
  return opset::op_def(op).amp;
}
// As in docs/OPS.md and on the C ABI (a NUL-terminated literal).
std::string_view op_name(OpType op);
std::optional<OpType> parse_op(std::string_view name);
// opset::is_data_movement() of the op (the one definition): the planner
// asks it for every node.
bool is_data_movement(OpType op);
// The optimizer updates: they read and write the f32 master weights and
// optimizer state, and run in f32 at every amp level.
inline bool is_optimizer_update(OpType op) {
  return op == OpType::kSgdUpdate || op == OpType::kAdamUpdate || op == OpType::kMultiSgdUpdate ||
         op == OpType::kMultiAdamUpdate;
}
// The ops that read the f32 gradients the updates read and decide the
// updates' hyper (UpdateGuard: finite check, clipping): f32 at every level
// like the updates, whose inputs they share.
inline bool is_master_weight_op(OpType op) {
  return is_optimizer_update(op) || op == OpType::kUpdateGuard;
}
// The input whose buffer an update's output may be written in (docs/OPS.md,
// "In place"): W -> W', M -> M', V -> V'. -1 for other ops and outputs.
// The fused updates' layout depends on their operand count and attributes.
int in_place_input(OpType op, size_t output, size_t num_inputs, const AttrMap& attrs);

}  // namespace ampx
