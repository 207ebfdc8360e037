#include <ampx/ir/graph.hpp>

#include <functional>
#include <queue>

namespace ampx {

size_t Value::byte_size() const {
  return static_cast<size_t>(element_count(type.shape)) * dtype_size(type.dtype);
}

ValueId Graph::add_input(std::string name, TensorType type) {
  values_.push_back(Value{std::move(name), std::move(type), kNone, nullptr});
  const auto id = static_cast<ValueId>(values_.size() - 1);
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string name, TensorType type, std::vector<std::byte> bytes) {
  return add_constant(std::move(name), std::move(type),
                      std::make_shared<const std::vector<std::byte>>(std::move(bytes)));
}

ValueId Graph::add_constant(std::string name, TensorType type, ConstantData bytes) {
  values_.push_back(Value{std::move(name), std::move(type), kNone, std::move(bytes)});
  return static_cast<ValueId>(values_.size() - 1);
}

NodeId Graph::add_node(std::string name, OpType op, std::vector<ValueId> inputs,
                       std::vector<TensorType> output_types, AttrMap attrs) {
  const auto id = static_cast<NodeId>(nodes_.size());
  Node n{std::move(name), op, std::move(inputs), {}, std::move(attrs), {}, {}};
  for (size_t i = 0; i < output_types.size(); ++i) {
    std::string vname = output_types.size() == 1 ? n.name : n.name + ":" + std::to_string(i);
    values_.push_back(Value{std::move(vname), std::move(output_types[i]), id, nullptr});
    n.outputs.push_back(static_cast<ValueId>(values_.size() - 1));
  }
  nodes_.push_back(std::move(n));
  return id;
}

void Graph::add_output(ValueId v) {
  outputs_.push_back(v);
}

std::vector<NodeId> Graph::topological_order() const {
  // Kahn's algorithm over producer edges, users in CSR arrays (two passes,
  // no per-node allocation). Ready nodes are taken smallest id first, so
  // insertion order is kept where it already is topological.
  const size_t n = nodes_.size();
  auto producer_of = [&](ValueId v) -> NodeId {
    if (v < 0 || static_cast<size_t>(v) >= values_.size()) return kNone;  // verifier reports
    return values_[static_cast<size_t>(v)].producer;
  };
  // Fast path: builders append nodes after their producers, so insertion
  // order usually is an order already.
  bool in_order = true;
  for (size_t i = 0; i < n && in_order; ++i)
    for (ValueId v : nodes_[i].inputs)
      if (const NodeId p = producer_of(v); p != kNone && static_cast<size_t>(p) >= i)
        in_order = false;
  if (in_order) {
    std::vector<NodeId> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<NodeId>(i);
    return order;
  }
  std::vector<int> pending(n, 0);
  std::vector<size_t> first_user(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    for (ValueId v : nodes_[i].inputs)
      if (const NodeId p = producer_of(v); p != kNone) {
        ++pending[i];
        ++first_user[static_cast<size_t>(p) + 1];
      }
  for (size_t i = 0; i < n; ++i) first_user[i + 1] += first_user[i];
  std::vector<NodeId> users(first_user[n]);
  std::vector<size_t> fill(first_user.begin(), first_user.end() - 1);
  for (size_t i = 0; i < n; ++i)
    for (ValueId v : nodes_[i].inputs)
      if (const NodeId p = producer_of(v); p != kNone)
        users[fill[static_cast<size_t>(p)]++] = static_cast<NodeId>(i);

  std::vector<NodeId> order;
  order.reserve(n);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<NodeId>(i));
  while (!ready.empty()) {
    const NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (size_t k = first_user[static_cast<size_t>(id)];
         k < first_user[static_cast<size_t>(id) + 1]; ++k)
      if (--pending[static_cast<size_t>(users[k])] == 0) ready.push(users[k]);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (pending[i] > 0)
        throw GraphError("node '" + nodes_[i].name + "' (" + std::string(op_name(nodes_[i].op)) +
                         "): part of a cycle");
  }
  return order;
}

NodeId copy_node(Graph& out, const Graph& from, const Node& n, std::vector<ValueId>& map) {
  std::vector<ValueId> ins;
  for (ValueId v : n.inputs) ins.push_back(map[static_cast<size_t>(v)]);
  std::vector<TensorType> types;
  for (ValueId v : n.outputs) types.push_back(from.value(v).type);
  const NodeId c = out.add_node(n.name, n.op, std::move(ins), std::move(types), n.attrs);
  Node& cn = out.node(c);
  cn.device = n.device;
  cn.origin = n.origin;
  cn.grad_of = n.grad_of;
  cn.keep_f32 = n.keep_f32;
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    map[static_cast<size_t>(n.outputs[o])] = cn.outputs[o];
    out.value(cn.outputs[o]).name = from.value(n.outputs[o]).name;
  }
  return c;
}

}  // namespace ampx
