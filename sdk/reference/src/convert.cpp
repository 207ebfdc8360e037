#include "convert.hpp"

#include <vector>

#include "ampx/half.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

// f16 -> f32 through a 256 KiB table built once from ampx::f16_bits_to_float:
// exact, and much faster than the branchy per-element conversion.
const float* f16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) t[i] = f16_bits_to_float(static_cast<uint16_t>(i));
    return t;
  }();
  return table.data();
}

template <class Fn>
void chunked(int64_t n, Fn&& fn) {
  parallel_for(n, threads_for(static_cast<double>(n) * 2), fn);
}

}  // namespace

void widen_to_f32(ampx_dtype dt, const uint16_t* src, float* dst, int64_t n) {
  if (dt == AMPX_DTYPE_F16) {
    const float* t = f16_table();
    chunked(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = t[src[i]];
    });
  } else {
    chunked(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = bf16_bits_to_float(src[i]);
    });
  }
}

void round_from_f32(ampx_dtype dt, const float* src, uint16_t* dst, int64_t n) {
  if (dt == AMPX_DTYPE_F16) {
    chunked(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = float_to_f16_bits(src[i]);
    });
  } else {
    chunked(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = float_to_bf16_bits(src[i]);
    });
  }
}

}  // namespace ampx::reference::detail
