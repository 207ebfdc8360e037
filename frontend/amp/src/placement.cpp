#include <ampx/amp/placement.hpp>

#include <ampx/amp/load_time.hpp>

namespace ampx {

bool DevicePin::matches(std::string_view node_name) const {
  if (!pattern.empty() && pattern.back() == '*')
    return node_name.starts_with(std::string_view(pattern).substr(0, pattern.size() - 1));
  return node_name == pattern;
}

std::vector<CopyRecord> plan_copies(const Graph& placed) {
  // The executor's rule (amp/load_time.hpp), so the plan prices the copies
  // a run makes.
  std::vector<int> node_device(placed.num_nodes());
  for (NodeId id = 0; id < static_cast<NodeId>(placed.num_nodes()); ++id)
    node_device[static_cast<size_t>(id)] = placed.node(id).device;
  std::vector<CopyRecord> copies;
  for (const Residency::Copy& c : residency(placed, node_device).copies)
    copies.push_back({placed.value(c.value).name, c.from, c.to, placed.value(c.value).byte_size()});
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
