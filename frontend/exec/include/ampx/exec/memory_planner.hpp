// Lifetime-based placement of intermediate values in one arena: values whose
// lifetimes do not overlap share memory. Greedy by size (largest first, each
// at the lowest offset free for its whole lifetime), the TFLite arena
// strategy: not optimal in general (the problem is NP-hard), close in practice.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ampx {

struct BufferRequest {
  uint64_t bytes = 0;
  int first_step = 0;  // step that writes it
  int last_step = 0;   // last step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // one per request
  uint64_t peak_bytes = 0;        // arena size
  uint64_t no_reuse_bytes = 0;    // sum of all (aligned) requests
};

MemoryPlan plan_memory(std::span<const BufferRequest> requests, uint64_t alignment = 64);

}  // namespace ampx
