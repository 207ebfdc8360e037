// 16-bit float conversions shared by the host and plugin authors.
// Header-only and dependency-free so any plugin can use it. Conversions round
// to nearest even and handle subnormals, infinities and NaN, because the
// reference backend is the numerical oracle and must not add its own error.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace ampx {

inline float f16_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

inline uint16_t float_to_f16_bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {               // result is subnormal or zero
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24 bits dropped to reach 2^-24 units
    const uint32_t kept = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    uint32_t r = kept + ((rem > half || (rem == half && (kept & 1u))) ? 1u : 0u);
    return static_cast<uint16_t>(sign | r);
  }
  // normal: rebias exponent, round mantissa from 23 to 10 bits
  uint32_t r = abs - ((127 - 15) << 23);
  r = r + 0xfffu + ((r >> 13) & 1u);
  return static_cast<uint16_t>(sign | (r >> 13));
}

inline float bf16_bits_to_float(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// Round-trips a float through a 16-bit format: what a value becomes once stored.
inline float round_to_f16(float f) {
  return f16_bits_to_float(float_to_f16_bits(f));
}
inline float round_to_bf16(float f) {
  return bf16_bits_to_float(float_to_bf16_bits(f));
}

// Magnitude bit patterns (the sign bit cleared) order like the values they
// stand for, so range tests on a tensor can compare integers. For f32
// (width 32), f16 or bf16 (width 16, `bf16` choosing the layout): the
// pattern of infinity, and the smallest pattern whose value is >= v (the
// infinity pattern when no finite one is). TensorStats counts with these.
struct MagnitudeBits {
  uint32_t inf = 0;
  uint32_t at_least = 0;
};
inline float magnitude_value(uint32_t bits, int width, bool bf16) {
  if (width == 32) return std::bit_cast<float>(bits);
  return bf16 ? bf16_bits_to_float(static_cast<uint16_t>(bits))
              : f16_bits_to_float(static_cast<uint16_t>(bits));
}
inline MagnitudeBits magnitude_bits(float v, int width, bool bf16) {
  MagnitudeBits m;
  m.inf = width == 32 ? 0x7f800000u : bf16 ? 0x7f80u : 0x7c00u;
  uint32_t lo = 0, hi = m.inf;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (magnitude_value(mid, width, bf16) >= v)
      hi = mid;
    else
      lo = mid + 1;
  }
  m.at_least = lo;
  return m;
}

// To 16-bit with exactly one rounding: a double or an int64 goes first to
// f32 with round-to-odd (a sticky bit kept, so the second rounding to 11
// or 8 significant bits, float_to_f16_bits or float_to_bf16_bits, is the
// correctly rounded result), then nearest-even. Casts and fill values of
// f16/bf16 tensors use these.
inline float to_float_round_odd(double d) {
  const float f = static_cast<float>(d);
  if (!std::isfinite(d) || static_cast<double>(f) == d) return f;
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) --bits;  // truncate toward zero
  return std::bit_cast<float>(bits | 1u);                        // sticky bit
}
inline float to_float_round_odd(uint64_t mag) {  // u64: every value, 2^63 and up too
  if (mag < (uint64_t{1} << 24)) return static_cast<float>(mag);  // exact
  const int shift = std::bit_width(mag) - 24;
  uint64_t m = mag >> shift;
  if (mag & ((uint64_t{1} << shift) - 1)) m |= 1;  // sticky
  return std::ldexp(static_cast<float>(m), shift);
}
inline float to_float_round_odd(int64_t v) {
  const uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (mag < (uint64_t{1} << 24)) return static_cast<float>(v);  // exact
  const int shift = std::bit_width(mag) - 24;
  uint64_t m = mag >> shift;
  if (mag & ((uint64_t{1} << shift) - 1)) m |= 1;  // sticky
  const float f = std::ldexp(static_cast<float>(m), shift);
  return v < 0 ? -f : f;
}

}  // namespace ampx
