#include <ampx/amp/placement.hpp>

#include <unordered_set>

namespace ampx {

bool DevicePin::matches(std::string_view node_name) const {
  if (!pattern.empty() && pattern.back() == '*')
    return node_name.starts_with(std::string_view(pattern).substr(0, pattern.size() - 1));
  return node_name == pattern;
}

std::vector<CopyRecord> plan_copies(const Graph& placed) {
  const auto order = placed.topological_order();
  // Values known at load: constants and what nodes fed only by them compute.
  std::vector<bool> static_value(placed.num_values(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(placed.num_values()); ++v)
    static_value[static_cast<size_t>(v)] = placed.value(v).is_constant();
  std::vector<int> home(placed.num_values(), -1);
  std::vector<CopyRecord> copies;
  std::unordered_set<uint64_t> made;  // (value << 32) | destination device
  for (NodeId id : order) {
    const Node& n = placed.node(id);
    bool at_load = !n.inputs.empty();
    for (ValueId v : n.inputs) at_load = at_load && static_value[static_cast<size_t>(v)];
    for (ValueId v : n.outputs) {
      static_value[static_cast<size_t>(v)] = at_load;
      home[static_cast<size_t>(v)] = n.device;
    }
    if (at_load) continue;
    for (ValueId v : n.inputs) {
      if (static_value[static_cast<size_t>(v)]) continue;
      int& h = home[static_cast<size_t>(v)];
      if (h < 0) h = n.device;  // a graph input lives where it is first read
      if (h == n.device) continue;
      const uint64_t key = (static_cast<uint64_t>(v) << 32) | static_cast<uint32_t>(n.device);
      if (!made.insert(key).second) continue;
      copies.push_back({placed.value(v).name, h, n.device, placed.value(v).byte_size()});
    }
  }
  return copies;
}

double copy_cost_us(uint64_t bytes) {
  // One hop through host memory: a synchronisation and a call (~5 us) and
  // bytes at ~5 GB/s (a staged memcpy pair on the machines measured in
  // docs/benchmarks.md). Every copy pays it, including host-to-host ones
  // between two CPU plugins, which go through their copy functions.
  constexpr double kLatencyUs = 5.0;
  constexpr double kBytesPerUs = 5000.0;
  return kLatencyUs + static_cast<double>(bytes) / kBytesPerUs;
}

double copy_cost_us(uint64_t bytes, capability::CostModel* from, capability::CostModel* to) {
  const double half = copy_cost_us(bytes) / 2;
  const double down = from ? from->copy_us(bytes, false) : -1.0;
  const double up = to ? to->copy_us(bytes, true) : -1.0;
  return (down >= 0 ? down : half) + (up >= 0 ? up : half);
}

}  // namespace ampx
