// Shared by the tests of the training kernels: uniform random vectors and a
// node built with the kit's NodeBuilder run once on the reference kernels.
#pragma once

#include <ampx/reference/kernels.hpp>

#include <node_builder.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace ampx::test::reference_kernels {

inline std::vector<float> randoms(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

inline void run(NodeBuilder& b, std::vector<const void*> in, std::vector<void*> out) {
  reference::make_kernel(b.desc())->run(in, out);
}

}  // namespace ampx::test::reference_kernels
