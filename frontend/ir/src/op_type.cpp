#include <ampx/ir/attr_access.hpp>
#include <ampx/ir/op_type.hpp>
#include <ampx/opset/multi_update.hpp>

namespace ampx {

std::string_view op_name(OpType op) {
  return opset::op_def(op).name;
}

bool is_data_movement(OpType op) {
  return opset::op_def(op).dtype_rule == opset::DtypeRule::kData;
}

std::optional<OpType> parse_op(std::string_view name) {
  const opset::OpDef* op = opset::find_op(name);
  return op ? std::optional(op->id) : std::nullopt;
}

int in_place_input(OpType op, size_t output, size_t num_inputs, const AttrMap& attrs) {
  if (op == OpType::kSgdUpdate) return output == 0 ? 0 : output == 1 ? 3 : -1;
  if (op == OpType::kAdamUpdate)
    return output == 0 ? 0 : output <= 2 ? static_cast<int>(output) + 1 : -1;
  if (op == OpType::kMultiSgdUpdate || op == OpType::kMultiAdamUpdate) {
    const auto l = opset::multi_update_layout(op_name(op), num_inputs,
                                              attr_float(attrs, "momentum", 0.0) > 0.0,
                                              attr_ints(attrs, "copies", {}).size());
    return l ? l->in_place_input(output) : -1;
  }
  return -1;
}

}  // namespace ampx
