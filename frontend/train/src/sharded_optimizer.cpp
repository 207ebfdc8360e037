#include <ampx/train/sharded_optimizer.hpp>

#include <cmath>
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

}  // namespace ampx::train
