// Reverse-mode autodiff: the nodes between the trainable values and the
// loss, visited in reverse topological order, each through its gradient
// rule; gradients reaching a value from several consumers are summed.
#include <ampx/train/autodiff.hpp>

#include "grad_rules.hpp"

namespace ampx::train {
namespace detail {

void RuleContext::fail(const std::string& what) const {
  throw GraphError("node '" + node_.name + "' (" + std::string(op_name(node_.op)) + "): " + what);
}

GradRule find_grad_rule(OpType op) {
  for (auto* family : {elementwise_grad_rule, nn_grad_rule, data_grad_rule})
    if (GradRule rule = family(op)) return rule;
  return nullptr;
}

}  // namespace detail

namespace {

// Values through which a gradient flows: float values that depend on a
// `wrt` value and that the loss depends on.
std::vector<bool> relevant_values(const Graph& g, const std::vector<NodeId>& order, ValueId loss,
                                  std::span<const ValueId> wrt) {
  std::vector<bool> from_wrt(g.num_values(), false), to_loss(g.num_values(), false);
  for (ValueId v : wrt) from_wrt[static_cast<size_t>(v)] = true;
  for (NodeId id : order) {
    const Node& n = g.node(id);
    bool any = false;
    for (ValueId v : n.inputs) any = any || from_wrt[static_cast<size_t>(v)];
    if (any)
      for (ValueId v : n.outputs)
        from_wrt[static_cast<size_t>(v)] = is_float(g.value(v).type.dtype);
  }
  to_loss[static_cast<size_t>(loss)] = true;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& n = g.node(*it);
    bool any = false;
    for (ValueId v : n.outputs) any = any || to_loss[static_cast<size_t>(v)];
    if (any)
      for (ValueId v : n.inputs) to_loss[static_cast<size_t>(v)] = true;
  }
  std::vector<bool> relevant(g.num_values());
  for (size_t v = 0; v < relevant.size(); ++v)
    relevant[v] =
        from_wrt[v] && to_loss[v] && is_float(g.value(static_cast<ValueId>(v)).type.dtype);
  return relevant;
}

}  // namespace

std::vector<ValueId> append_gradients(Graph& graph, ValueId loss, ValueId seed,
                                      std::span<const ValueId> wrt,
                                      std::vector<GradientContribution>* contributions) {
  const TensorType& lt = graph.value(loss).type;
  if (!is_float(lt.dtype) || !lt.shape.empty())
    throw GraphError("autodiff: the loss '" + graph.value(loss).name +
                     "' must be a float scalar, got " + std::string(dtype_name(lt.dtype)) + " " +
                     shape_str(lt.shape));
  if (graph.value(seed).type != lt)
    throw GraphError("autodiff: the seed must have the loss's type");
  const std::vector<NodeId> order = graph.topological_order();
  const std::vector<bool> relevant = relevant_values(graph, order, loss, wrt);
  const size_t forward_nodes = graph.num_nodes();

  detail::GradBuilder b(graph);
  // Gradient contributions per value, summed when first read.
  std::vector<std::vector<ValueId>> parts(graph.num_values());
  parts[static_cast<size_t>(loss)].push_back(seed);
  auto total = [&](ValueId v) -> ValueId {
    auto& p = parts[static_cast<size_t>(v)];
    if (p.empty()) return kNone;
    const NodeId producer = graph.value(v).producer;
    const std::string owner = producer == kNone ? "" : graph.node(producer).name;
    while (p.size() > 1) {  // pairwise, in a fixed order
      const std::string name = graph.value(v).name + "/grad/sum";
      const ValueId s = b.add1(OpType::kAdd, name, {p[0], p[1]}, {}, owner);
      p.erase(p.begin(), p.begin() + 2);
      p.push_back(s);
    }
    return p[0];
  };

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (static_cast<size_t>(*it) >= forward_nodes) continue;
    const Node node = graph.node(*it);  // a copy: rules add nodes to the graph
    std::vector<ValueId> dys;
    bool any = false;
    for (ValueId v : node.outputs) {
      dys.push_back(relevant[static_cast<size_t>(v)] ? total(v) : kNone);
      any = any || dys.back() != kNone;
    }
    if (!any) continue;
    std::vector<bool> needs;
    bool needs_any = false;
    for (ValueId v : node.inputs) {
      needs.push_back(relevant[static_cast<size_t>(v)]);
      needs_any = needs_any || needs.back();
    }
    if (!needs_any) continue;
    const detail::GradRule rule = detail::find_grad_rule(node.op);
    if (!rule)
      throw GraphError("node '" + node.name + "' (" + std::string(op_name(node.op)) +
                       "): no gradient rule for this op (it lies between a trainable value and "
                       "the loss)");
    detail::RuleContext ctx(b, node, std::move(dys), std::move(needs), [&](size_t i, ValueId g) {
      const ValueId in = node.inputs[i];
      if (graph.value(g).type != graph.value(in).type) {  // a rule's bug, never the user's
        throw GraphError("node '" + node.name + "' (" + std::string(op_name(node.op)) +
                         "): the gradient of input " + std::to_string(i) + " has type " +
                         std::string(dtype_name(graph.value(g).type.dtype)) + " " +
                         shape_str(graph.value(g).type.shape) + ", expected " +
                         shape_str(graph.value(in).type.shape));
      }
      parts[static_cast<size_t>(in)].push_back(g);
      if (contributions) contributions->push_back({*it, i, g});
    });
    rule(ctx);
  }

  std::vector<ValueId> grads;
  for (ValueId v : wrt) {
    const ValueId g = relevant[static_cast<size_t>(v)] ? total(v) : kNone;
    grads.push_back(
        g != kNone ? g : b.zeros(graph.value(v).type, graph.value(v).name + "/grad/zero", ""));
  }
  return grads;
}

}  // namespace ampx::train
