// Timing helpers shared by the benchmark mains (the programs that are not
// Google Benchmark: a few long runs each, medians side by side).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace ampx::bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The median (the mean of the middle two for an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace ampx::bench
