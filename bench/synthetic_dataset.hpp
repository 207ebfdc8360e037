// The training benchmarks' data: n samples of `sample` shape, uniform in
// [-1, 1], with labels in [0, classes), from a fixed seed (the same data for
// every mode compared).
#pragma once

#include <ampx/ir/shape.hpp>
#include <ampx/train/datasets.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace ampx::bench {

inline train::Dataset synthetic(int64_t n, const Shape& sample, int64_t classes) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Shape shape{n};
  shape.insert(shape.end(), sample.begin(), sample.end());
  train::Dataset d;
  d.inputs = {"input",
              {DType::kF32, shape},
              std::vector<std::byte>(static_cast<size_t>(element_count(shape)) * 4)};
  d.labels = {"labels", {DType::kI64, {n}}, std::vector<std::byte>(static_cast<size_t>(n) * 8)};
  auto* x = reinterpret_cast<float*>(d.inputs.data.data());
  for (int64_t i = 0; i < element_count(shape); ++i) x[i] = u(rng);
  auto* y = reinterpret_cast<int64_t*>(d.labels.data.data());
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(classes));
  return d;
}

}  // namespace ampx::bench
