#include <ampx/ir/shape_inference.hpp>
#include <ampx/ir/verifier.hpp>

#include <algorithm>
#include <unordered_set>

namespace ampx {

std::vector<std::string> verify_graph(const Graph& g) {
  std::vector<std::string> problems;
  const auto nvals = static_cast<ValueId>(g.num_values());
  auto valid = [&](ValueId v) { return v >= 0 && v < nvals; };

  std::unordered_set<std::string_view> node_names;
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const Node& n = g.node(id);
    const std::string who = "node '" + n.name + "' (" + std::string(op_name(n.op)) + ")";
    if (n.name.empty()) problems.push_back("node #" + std::to_string(id) + " has no name");
    if (!node_names.insert(n.name).second) problems.push_back(who + ": duplicate node name");
    bool io_ok = true;
    for (ValueId v : n.inputs) {
      if (!valid(v)) {
        problems.push_back(who + ": input refers to unknown value #" + std::to_string(v));
        io_ok = false;
        continue;
      }
      const Value& val = g.value(v);
      const bool is_input = val.producer == kNone && !val.is_constant();
      if (is_input && std::find(g.inputs().begin(), g.inputs().end(), v) == g.inputs().end()) {
        problems.push_back(who + ": reads value '" + val.name + "' that nothing defines");
        io_ok = false;
      }
    }
    for (ValueId v : n.outputs) {
      if (!valid(v) || g.value(v).producer != id) {
        problems.push_back(who + ": output value is not produced by this node");
        io_ok = false;
      }
    }
    if (!io_ok) continue;
    std::vector<TensorType> in_types;
    for (ValueId v : n.inputs) in_types.push_back(g.value(v).type);
    try {
      auto out_types = infer_output_types(n.op, in_types, n.attrs, n.name);
      if (out_types.size() != n.outputs.size()) {
        problems.push_back(who + ": has " + std::to_string(n.outputs.size()) +
                           " outputs, expected " + std::to_string(out_types.size()));
        continue;
      }
      for (size_t i = 0; i < out_types.size(); ++i) {
        const auto& decl = g.value(n.outputs[i]).type;
        if (decl != out_types[i])
          problems.push_back(who + ": output '" + g.value(n.outputs[i]).name + "' declared " +
                             std::string(dtype_name(decl.dtype)) + shape_str(decl.shape) +
                             " but the op yields " + std::string(dtype_name(out_types[i].dtype)) +
                             shape_str(out_types[i].shape));
      }
    } catch (const GraphError& e) {
      problems.emplace_back(e.what());
    }
  }

  std::unordered_set<std::string_view> value_names;
  for (ValueId v = 0; v < nvals; ++v) {
    const Value& val = g.value(v);
    if (!value_names.insert(val.name).second)
      problems.push_back("value '" + val.name + "': duplicate value name");
    if (val.is_constant() && val.constant->size() != val.byte_size())
      problems.push_back("constant '" + val.name + "': has " +
                         std::to_string(val.constant->size()) + " bytes, its type " +
                         std::string(dtype_name(val.type.dtype)) + shape_str(val.type.shape) +
                         " needs " + std::to_string(val.byte_size()));
  }
  for (ValueId v : g.inputs()) {
    if (!valid(v)) continue;
    const Value& val = g.value(v);
    if (val.producer != kNone || val.is_constant())
      problems.push_back("graph input '" + val.name + "' is also produced by a node or constant");
  }
  if (g.outputs().empty()) problems.emplace_back("graph has no outputs");
  for (ValueId v : g.outputs())
    if (!valid(v)) problems.push_back("graph output refers to unknown value #" + std::to_string(v));

  if (problems.empty()) {
    try {
      (void)g.topological_order();
    } catch (const GraphError& e) {
      problems.emplace_back(e.what());
    }
  }
  return problems;
}

void verify_graph_or_throw(const Graph& graph) {
  const auto problems = verify_graph(graph);
  if (problems.empty()) return;
  std::string msg = "invalid graph";
  if (!graph.name.empty()) msg += " '" + graph.name + "'";
  msg += ": ";
  for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
  throw GraphError(msg);
}

}  // namespace ampx
