// Seeded, reproducible random test data. Values are never zero (a zero hides
// sign, scaling and indexing bugs in products).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ampx::check {

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}

  // Uniform in [-1, -min_abs] U [min_abs, 1].
  double nonzero(double min_abs = 1.0 / 64) {
    const double m = std::uniform_real_distribution<double>(min_abs, 1.0)(gen_);
    return coin() ? m : -m;
  }
  std::vector<double> nonzero_vec(size_t n, double min_abs = 1.0 / 64) {
    std::vector<double> v(n);
    for (auto& x : v) x = nonzero(min_abs);
    return v;
  }
  // Uniform in [lo, hi].
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(gen_);
  }
  // Uniform integer in [lo, hi].
  int64_t integer(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
  }
  bool coin() { return std::uniform_int_distribution<int>(0, 1)(gen_) == 1; }

 private:
  std::mt19937_64 gen_;
};

}  // namespace ampx::check
