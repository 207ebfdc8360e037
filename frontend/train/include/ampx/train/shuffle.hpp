// Internal to training: the seeded orders and seeds every machine computes
// the same (the standard library's shuffle and distributions are not
// specified exactly): splitmix64, and a Fisher-Yates shuffle over it.
#pragma once

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace ampx::train::detail {

inline uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// 0 .. n-1 in the order of a Fisher-Yates shuffle drawn from splitmix64
// states starting at `seed`.
inline std::vector<int64_t> shuffled(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  uint64_t state = seed;
  for (int64_t i = n - 1; i > 0; --i) {
    state = splitmix64(state);
    const auto j = static_cast<int64_t>(state % static_cast<uint64_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace ampx::train::detail
