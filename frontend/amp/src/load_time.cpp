#include <ampx/amp/load_time.hpp>

#include <algorithm>
#include <unordered_set>

namespace ampx {

namespace {

// load_time_nodes() over an order already made.
std::vector<bool> load_time_nodes(const Graph& g, std::span<const NodeId> order) {
  std::vector<bool> constant(g.num_values(), false), at_load(g.num_nodes(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    constant[static_cast<size_t>(v)] = g.value(v).is_constant();
  for (NodeId id : order) {
    const Node& n = g.node(id);
    bool all = !n.inputs.empty();
    for (ValueId v : n.inputs) all = all && constant[static_cast<size_t>(v)];
    at_load[static_cast<size_t>(id)] = all;
    for (ValueId v : n.outputs) constant[static_cast<size_t>(v)] = all;
  }
  return at_load;
}

}  // namespace

std::vector<bool> load_time_nodes(const Graph& g) {
  return load_time_nodes(g, g.topological_order());
}

Residency residency(const Graph& g, std::span<const int> node_device) {
  Residency r;
  const std::vector<NodeId> order = g.topological_order();
  r.at_load = load_time_nodes(g, order);
  r.known_at_load.assign(g.num_values(), false);
  r.home.assign(g.num_values(), -1);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    r.known_at_load[static_cast<size_t>(v)] = g.value(v).is_constant();
  // The copies made so far: a bit per destination device for each value
  // (a set of (value, device) pairs where a plan has 64 devices or more).
  int devices = 0;
  for (int d : node_device) devices = std::max(devices, d + 1);
  std::vector<uint64_t> made_bits(devices <= 64 ? g.num_values() : 0, 0);
  std::unordered_set<uint64_t> made;  // (value << 32) | destination device
  auto first_copy = [&](ValueId v, int d) {
    if (devices > 64 || d < 0)
      return made.insert((static_cast<uint64_t>(v) << 32) | static_cast<uint32_t>(d)).second;
    uint64_t& bits = made_bits[static_cast<size_t>(v)];
    const uint64_t bit = uint64_t{1} << d;
    const bool first = (bits & bit) == 0;
    bits |= bit;
    return first;
  };
  for (NodeId id : order) {
    const Node& n = g.node(id);
    const int d = node_device[static_cast<size_t>(id)];
    if (r.at_load[static_cast<size_t>(id)]) {
      for (ValueId v : n.outputs) {
        r.known_at_load[static_cast<size_t>(v)] = true;
        r.home[static_cast<size_t>(v)] = d;
      }
      r.load_nodes.push_back(id);
      continue;
    }
    for (ValueId v : n.inputs) {
      if (r.known_at_load[static_cast<size_t>(v)]) continue;
      int& h = r.home[static_cast<size_t>(v)];
      if (h < 0) h = d;  // a graph input lives where it is first read
      if (h == d) continue;
      if (!first_copy(v, d)) continue;
      r.copies.push_back({v, h, d, r.run_nodes.size()});
    }
    for (ValueId v : n.outputs) r.home[static_cast<size_t>(v)] = d;
    r.run_nodes.push_back(id);
  }
  for (ValueId v : g.inputs())
    if (r.home[static_cast<size_t>(v)] < 0 && !r.known_at_load[static_cast<size_t>(v)])
      r.home[static_cast<size_t>(v)] = 0;
  return r;
}

}  // namespace ampx
