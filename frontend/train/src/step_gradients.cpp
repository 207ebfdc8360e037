#include <ampx/ir/attr_access.hpp>
#include <ampx/opset/multi_update.hpp>
#include <ampx/train/step_gradients.hpp>

#include <stdexcept>

namespace ampx::train {

std::vector<StepGradient> step_gradients(const Graph& step,
                                         std::span<const std::string> weight_order) {
  const Node* guard = nullptr;
  for (const Node& n : step.nodes()) {
    if (n.op != OpType::kUpdateGuard && n.op != OpType::kMultiSgdUpdate &&
        n.op != OpType::kMultiAdamUpdate)
      continue;
    if (guard)
      throw std::invalid_argument("training step '" + step.name + "' has two update guards ('" +
                                  guard->name + "', '" + n.name + "')");
    guard = &n;
  }
  if (!guard) throw std::invalid_argument("training step '" + step.name + "' has no update guard");
  // (weight, gradient) operand positions.
  std::vector<std::pair<size_t, size_t>> operands;
  if (guard->op == OpType::kUpdateGuard) {
    // UpdateGuard names no weights: its gradients follow the step's weight
    // order, which the updates reading them tell.
    for (size_t i = 1; i < guard->inputs.size(); ++i) operands.emplace_back(SIZE_MAX, i);
  } else {
    const size_t copies = attr_ints(guard->attrs, "copies", {}).size();
    const bool momentum = attr_float(guard->attrs, "momentum", 0.0) > 0;
    const auto l =
        opset::multi_update_layout(op_name(guard->op), guard->inputs.size(), momentum, copies);
    if (!l) throw std::invalid_argument("node '" + guard->name + "' has a malformed operand list");
    for (size_t i = 0; i < l->weights; ++i) operands.emplace_back(l->w_in(i), l->g_in(i));
  }
  std::vector<StepGradient> out;
  for (const auto& [w, g] : operands) {
    StepGradient s;
    s.value = guard->inputs[g];
    if (w != SIZE_MAX) {
      s.weight = step.value(guard->inputs[w]).name;
    } else if (!weight_order.empty()) {
      if (weight_order.size() + 1 != guard->inputs.size())
        throw std::invalid_argument("node '" + guard->name + "' reads " +
                                    std::to_string(guard->inputs.size() - 1) + " gradients for " +
                                    std::to_string(weight_order.size()) + " weights");
      s.weight = weight_order[g - 1];
    } else {
      // The update that reads this gradient names its weight (operand 0).
      for (const Node& n : step.nodes())
        if ((n.op == OpType::kSgdUpdate || n.op == OpType::kAdamUpdate) && n.inputs.size() > 1 &&
            n.inputs[1] == s.value)
          s.weight = step.value(n.inputs[0]).name;
      if (s.weight.empty())
        throw std::invalid_argument("gradient '" + step.value(s.value).name +
                                    "' is read by no update");
    }
    const NodeId p = step.value(s.value).producer;
    if (p != kNone && step.node(p).op == OpType::kCast) {
      const DType from = step.value(step.node(p).inputs[0]).type.dtype;
      if (from == DType::kF16 || from == DType::kBF16) s.produced = from;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ampx::train
