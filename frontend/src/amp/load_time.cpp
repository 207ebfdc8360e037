#include <ampx/amp/load_time.hpp>

namespace ampx {

std::vector<bool> load_time_nodes(const Graph& g) {
  std::vector<bool> constant(g.num_values(), false), at_load(g.num_nodes(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    constant[static_cast<size_t>(v)] = g.value(v).is_constant();
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    bool all = !n.inputs.empty();
    for (ValueId v : n.inputs) all = all && constant[static_cast<size_t>(v)];
    at_load[static_cast<size_t>(id)] = all;
    for (ValueId v : n.outputs) constant[static_cast<size_t>(v)] = all;
  }
  return at_load;
}

}  // namespace ampx
