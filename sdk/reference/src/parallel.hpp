// Deterministic fork-join helper: splits [0, n) into contiguous chunks, one per
// thread, so which thread computes an element never changes the result.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "ampx/reference/kernels.hpp"

namespace ampx::reference::detail {

// Calls fn(begin, end) on up to `threads` threads over contiguous chunks of
// [0, n), through the plugin's ParallelRunner when it set one. Runs inline when threads <= 1 or n
// <= 1. Rethrows the first exception after all threads joined.
template <class Fn>
void parallel_for(int64_t n, int threads, Fn&& fn) {
  const int64_t t = std::min<int64_t>(std::max(threads, 1), n);
  if (t <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<size_t>(t));
  auto chunk = [&](int64_t i) {
    const int64_t b = n * i / t, e = n * (i + 1) / t;
    try {
      fn(b, e);
    } catch (...) {
      errors[static_cast<size_t>(i)] = std::current_exception();
    }
  };
  if (const ParallelRunner runner = parallel_runner()) {
    runner(t, &chunk, [](void* c, int64_t i) { (*static_cast<decltype(chunk)*>(c))(i); });
  } else {
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(t - 1));
    for (int64_t i = 1; i < t; ++i) pool.emplace_back(chunk, i);
    chunk(0);
    for (auto& th : pool) th.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Threads worth using for `work` multiply-adds (or comparable units): forking
// costs tens of microseconds, so small work stays on the calling thread.
inline int threads_for(double work) {
  constexpr double kPerThread = 1 << 19;  // ~0.1-0.3 ms of work per thread
  const int t = max_threads();
  if (work < 2 * kPerThread || t <= 1) return 1;
  return static_cast<int>(std::min<double>(t, work / kPerThread));
}

}  // namespace ampx::reference::detail
