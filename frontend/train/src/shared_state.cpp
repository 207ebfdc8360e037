#include <ampx/train/shared_state.hpp>

#include <map>
#include <set>
#include <tuple>

namespace ampx::train {

UntiedModel untie_shared_state(const Graph& forward, const TrainingGraphOptions& options) {
  UntiedModel out{forward, {}};
  Graph& g = out.graph;
  std::set<std::string, std::less<>> names;
  for (const Value& v : forward.values()) names.insert(v.name);
  // (value, node, role) -> the value that operand reads; the first key of
  // each value keeps the value itself.
  std::map<std::tuple<ValueId, NodeId, StateRole>, ValueId> reader;
  std::set<ValueId> claimed;
  for (NodeId id : forward.topological_order()) {
    const Node& n = forward.node(id);
    for (size_t slot = 0; slot < n.inputs.size(); ++slot) {
      const std::optional<StateRole> role = state_role_of_use(forward, n, slot, options);
      if (!role) continue;
      const ValueId v = n.inputs[slot];
      const auto key = std::tuple{v, id, *role};
      if (const auto it = reader.find(key); it != reader.end()) {
        g.node(id).inputs[slot] = it->second;
        continue;
      }
      if (claimed.insert(v).second) {
        reader[key] = v;
        continue;
      }
      const Value& val = forward.value(v);
      std::string base = val.name + "@" + n.name;
      if (*role != StateRole::kWeight) base += "/" + std::string(state_role_name(*role));
      std::string name = base;
      for (int k = 2; names.contains(name); ++k) name = base + "#" + std::to_string(k);
      names.insert(name);
      // The same immutable bytes: a copy costs nothing until it is trained.
      const ValueId c = g.add_constant(name, val.type, val.constant);
      g.node(id).inputs[slot] = c;
      reader[key] = c;
      out.copies.push_back({val.name, n.name, *role, name});
    }
  }
  return out;
}

std::vector<std::string> describe_shared_copies(const std::vector<SharedStateCopy>& copies) {
  std::map<std::string, std::vector<const SharedStateCopy*>> by_value;
  std::vector<std::string> order;
  for (const SharedStateCopy& c : copies) {
    auto& list = by_value[c.value];
    if (list.empty()) order.push_back(c.value);
    list.push_back(&c);
  }
  std::vector<std::string> lines;
  for (const std::string& v : order) {
    const auto& list = by_value[v];
    std::string line =
        "'" + v + "': " + std::to_string(list.size()) + " cop" + (list.size() == 1 ? "y" : "ies");
    for (size_t i = 0; i < list.size(); ++i) line += (i ? ", '" : " '") + list[i]->copy + "'";
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace ampx::train
