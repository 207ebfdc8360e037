// Pattern bytes around a kernel's output buffer, to catch a kernel that
// writes outside it: the pre-flight's smoke launch and `ampx plugin-check`
// lay out every output at offset kGuard of a buffer of guarded_size() bytes
// filled by fill_guard(), and look for damage with find_guard_damage().
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace ampx::plugins {

// A multiple of 64 (the host's view alignment), and more than a kernel that
// miscounts a row or two overruns.
inline constexpr uint64_t kGuard = 4096;

inline unsigned char guard_byte(uint64_t i) {
  return static_cast<unsigned char>((i * 131 + 7) & 0xff);
}

// The buffer for `bytes` of payload: the guard, the payload rounded up to 64
// bytes, the guard.
inline uint64_t guarded_size(uint64_t bytes) {
  return kGuard + (bytes + 63) / 64 * 64 + kGuard;
}

inline void fill_guard(std::span<unsigned char> buffer) {
  for (uint64_t i = 0; i < buffer.size(); ++i) buffer[i] = guard_byte(i);
}

// The damaged byte nearest the payload [kGuard, kGuard + bytes): `distance`
// bytes before it, or after its end (1: the first byte after it).
struct GuardDamage {
  enum class Side { kBefore, kAfter } side;
  uint64_t distance;
};

inline std::optional<GuardDamage> find_guard_damage(std::span<const unsigned char> buffer,
                                                    uint64_t bytes) {
  for (uint64_t i = kGuard; i-- > 0;)
    if (buffer[i] != guard_byte(i)) return GuardDamage{GuardDamage::Side::kBefore, kGuard - i};
  for (uint64_t i = kGuard + bytes; i < buffer.size(); ++i)
    if (buffer[i] != guard_byte(i))
      return GuardDamage{GuardDamage::Side::kAfter, i - kGuard - bytes + 1};
  return std::nullopt;
}

}  // namespace ampx::plugins
