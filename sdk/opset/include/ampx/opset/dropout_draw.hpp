// The dropout draw of docs/OPS.md ("The dropout draw"), the same on every
// backend: u in [0, 1) with 24 bits for element `index` (row-major) under a
// 64-bit seed. splitmix64 of (seed + (index + 1) * golden ratio): a
// counter-based generator, so any element can be drawn on its own, on any
// device. The reference's DropoutTraining keeps an element where u >= ratio;
// the oneDNN plugin's thread-count check draws its inputs from it too.
#pragma once

#include <cstdint>

namespace ampx::opset {

inline float dropout_draw(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * 0x1p-24f;
}

}  // namespace ampx::opset
