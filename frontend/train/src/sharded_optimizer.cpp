#include <ampx/train/sharded_optimizer.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace ampx::train {

std::vector<int> plan_weight_owners(std::span<const int64_t> elements, int ranks) {
  if (ranks < 1) throw std::invalid_argument("a sharded optimizer needs at least one rank");
  const auto n = static_cast<int64_t>(elements.size());
  if (n < ranks)
    throw std::invalid_argument("--shard-optimizer: " + std::to_string(n) +
                                " trained weights for " + std::to_string(ranks) +
                                " ranks (each rank must own at least one weight)");
  double total = 0;
  for (int64_t e : elements) total += static_cast<double>(e);
  std::vector<int> owner(elements.size(), 0);
  int rank = 0;
  double sum = 0;
  // Reverse weight order, as the buckets; rank r's run ends once the running
  // sum reaches (r+1)/N of the total, unless the later ranks would then be
  // left with fewer weights than ranks.
  for (int64_t k = n - 1; k >= 0; --k) {
    const int64_t left_after = k;  // weights after this one in the walk
    owner[static_cast<size_t>(k)] = rank;
    sum += static_cast<double>(elements[static_cast<size_t>(k)]);
    const bool reached = sum >= total * (rank + 1) / ranks;
    const bool must_move = left_after == ranks - 1 - rank;
    if (rank + 1 < ranks && (reached || must_move)) ++rank;
  }
  return owner;
}

void apply_guard_verdict(std::span<float> hyper, std::span<float> stats, double nonfinite_ranks,
                         double norm_squared, const GuardRule& rule) {
  if (hyper.size() < 3 || stats.size() != 2)
    throw std::invalid_argument("apply_guard_verdict: hyper needs 3 or 5 values, stats 2");
  const bool finite = nonfinite_ranks == 0 && std::isfinite(norm_squared);
  const double norm = finite ? std::sqrt(norm_squared) : INFINITY;
  stats[0] = finite ? 1.0f : 0.0f;
  stats[1] = static_cast<float>(norm);
  if (rule.clip_norm > 0 && finite) {
    // In f32 as the attribute is, then in f64 as the guard kernels do.
    const auto clip = static_cast<double>(static_cast<float>(rule.clip_norm));
    const double factor = clip / (norm + 1e-6);
    if (factor < 1) hyper[1] = static_cast<float>(static_cast<double>(hyper[1]) * factor);
  }
  if (rule.skip_nonfinite && !finite) hyper[2] = 0.0f;
}

namespace {

// The 16-bit type every reader of `w` other than an optimizer update casts
// it to; kF32 when a reader uses it otherwise (or there is none).
DType working_dtype(const Graph& g, ValueId w) {
  DType found = DType::kInvalid;
  for (const Node& n : g.nodes()) {
    if (std::find(n.inputs.begin(), n.inputs.end(), w) == n.inputs.end()) continue;
    if (n.op == OpType::kSgdUpdate || n.op == OpType::kAdamUpdate) continue;
    if (n.op != OpType::kCast) return DType::kF32;
    const DType to = g.value(n.outputs[0]).type.dtype;
    if ((to != DType::kF16 && to != DType::kBF16) || (found != DType::kInvalid && to != found))
      return DType::kF32;
    found = to;
  }
  return found == DType::kInvalid ? DType::kF32 : found;
}

}  // namespace

WorkingWeights hold_working_copies(const Graph& g, std::span<const size_t> weight_inputs,
                                   const std::set<size_t>& owned) {
  WorkingWeights r;
  std::map<ValueId, DType> held;  // another rank's weight input -> its copy's dtype
  for (size_t k = 0; k < weight_inputs.size(); ++k) {
    const ValueId w = g.inputs()[weight_inputs[k]];
    r.dtypes.push_back(working_dtype(g, w));
    if (r.dtypes.back() != DType::kF32 && !owned.contains(k)) held.emplace(w, r.dtypes.back());
  }
  r.held_16bit = static_cast<int>(held.size());
  if (held.empty()) return r;
  // The same graph, the held weights' inputs 16-bit and their Casts gone
  // (their readers read the input); inputs and outputs keep their order.
  Graph& out = r.graph;
  out.name = g.name;
  std::vector<ValueId> map(g.num_values(), kNone);
  for (ValueId v : g.inputs()) {
    TensorType t = g.value(v).type;
    if (const auto it = held.find(v); it != held.end()) t.dtype = it->second;
    map[static_cast<size_t>(v)] = out.add_input(g.value(v).name, t);
  }
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    if (g.value(v).is_constant())
      map[static_cast<size_t>(v)] =
          out.add_constant(g.value(v).name, g.value(v).type, g.value(v).constant);
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (n.op == OpType::kCast && held.contains(n.inputs[0])) {
      map[static_cast<size_t>(n.outputs[0])] = map[static_cast<size_t>(n.inputs[0])];
      continue;
    }
    copy_node(out, g, n, map);
  }
  for (ValueId v : g.outputs()) out.add_output(map[static_cast<size_t>(v)]);
  return r;
}

}  // namespace ampx::train
