#include <ampx/exec/memory_planner.hpp>

#include <algorithm>
#include <numeric>

namespace ampx {

MemoryPlan plan_memory(std::span<const BufferRequest> requests, uint64_t alignment) {
  MemoryPlan plan;
  const size_t n = requests.size();
  plan.offsets.assign(n, 0);
  auto aligned = [&](uint64_t b) {
    return (std::max<uint64_t>(b, 1) + alignment - 1) / alignment * alignment;
  };
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });
  std::vector<size_t> placed;
  placed.reserve(n);
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of overlapping placed
  for (size_t idx : order) {
    const BufferRequest& r = requests[idx];
    const uint64_t size = aligned(r.bytes);
    plan.no_reuse_bytes += size;
    busy.clear();
    for (size_t p : placed) {
      const BufferRequest& q = requests[p];
      if (q.first_step <= r.last_step && r.first_step <= q.last_step)
        busy.emplace_back(plan.offsets[p], plan.offsets[p] + aligned(q.bytes));
    }
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (lo >= offset + size) break;  // the gap before this block fits
      offset = std::max(offset, hi);
    }
    plan.offsets[idx] = offset;
    plan.peak_bytes = std::max(plan.peak_bytes, offset + size);
    placed.push_back(idx);
  }
  return plan;
}

}  // namespace ampx
