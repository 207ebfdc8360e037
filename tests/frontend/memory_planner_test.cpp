// Lifetime-based arena placement: live values never overlap, dead ones share.
#include <ampx/exec/memory_planner.hpp>

#include <gtest/gtest.h>

#include <random>

using namespace ampx;

namespace {

TEST(MemoryPlanner, ChainReusesMemory) {
  // a -> b -> c -> d: each value lives from its producer to its consumer.
  const std::vector<BufferRequest> reqs{{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  const auto plan = plan_memory(reqs, 64);
  EXPECT_EQ(plan.no_reuse_bytes, 4 * 1024u);
  EXPECT_EQ(plan.peak_bytes, 2 * 1024u) << "two values live at a time";
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
}

TEST(MemoryPlanner, RandomLifetimesNeverOverlapWhileLive) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferRequest> reqs;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const int a = static_cast<int>(rng() % 40);
      const int len = static_cast<int>(rng() % 10);
      reqs.push_back({1 + rng() % 5000, a, a + len});
    }
    const auto plan = plan_memory(reqs, 64);
    ASSERT_LE(plan.peak_bytes, plan.no_reuse_bytes);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(plan.offsets[static_cast<size_t>(i)] % 64, 0u);
      EXPECT_LE(plan.offsets[static_cast<size_t>(i)] + reqs[static_cast<size_t>(i)].bytes,
                plan.peak_bytes);
      for (int j = i + 1; j < n; ++j) {
        const auto& p = reqs[static_cast<size_t>(i)];
        const auto& q = reqs[static_cast<size_t>(j)];
        const bool live_together = p.first_step <= q.last_step && q.first_step <= p.last_step;
        if (!live_together) continue;
        const uint64_t pa = plan.offsets[static_cast<size_t>(i)],
                       qa = plan.offsets[static_cast<size_t>(j)];
        const bool disjoint = pa + p.bytes <= qa || qa + q.bytes <= pa;
        EXPECT_TRUE(disjoint) << "trial " << trial << ": " << i << " and " << j;
      }
    }
  }
}

}  // namespace
