// TensorStats (docs/OPS.md, "Training ops"): the overflow diagnostics'
// probe. One pass over each tensor, in the dtype it has (no Cast in front),
// gives its largest finite magnitude, its share of non-finite elements and
// its share of nonzero elements below the 16-bit normal range.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ampx/half.hpp"
#include "common.hpp"
#include "cpu_dispatch.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

constexpr int64_t kBlock = 1 << 16;  // elements per task

struct Counts {
  float amax = 0;
  int64_t nonfinite = 0, nonzero = 0, tiny = 0;
  void add(const Counts& o) {
    amax = std::max(amax, o.amax);
    nonfinite += o.nonfinite;
    nonzero += o.nonzero;
    tiny += o.tiny;
  }
};

// The data's layout: its infinity pattern and the first magnitude >= tiny
// (ampx/half.hpp), and how to read a magnitude back as a value.
struct Layout {
  uint32_t inf;
  uint32_t tiny;
  int width;
  bool bf16;
  float value(uint32_t bits) const { return magnitude_value(bits, width, bf16); }
};

Layout layout_of(ampx_dtype dt, float tiny) {
  const int width = dt == AMPX_DTYPE_F32 ? 32 : 16;
  const bool bf16 = dt == AMPX_DTYPE_BF16;
  const MagnitudeBits m = magnitude_bits(tiny, width, bf16);
  return {m.inf, m.at_least, width, bf16};
}

// Written so that the compiler vectorises them (cpu_dispatch.hpp): signed
// lanes of the data's width (a magnitude never has the sign bit), 0/1
// arithmetic instead of branches, counters that fit the lanes.
AMPX_LOOP_BODY void count32_body(const int32_t* __restrict x, int64_t n, const Layout& l,
                                 Counts& c) {
  const auto inf = static_cast<int32_t>(l.inf), tiny = static_cast<int32_t>(l.tiny);
  int32_t amax = 0, nonfinite = 0, nonzero = 0, small = 0;  // n <= kBlock
  for (int64_t i = 0; i < n; ++i) {
    const int32_t a = x[i] & 0x7fffffff;
    const int32_t finite = a < inf;
    nonfinite += 1 - finite;
    const int32_t af = finite ? a : 0;
    amax = amax > af ? amax : af;
    nonzero += (a != 0) & finite;
    small += (a != 0) & (a < tiny);
  }
  c.amax = std::max(c.amax, l.value(static_cast<uint32_t>(amax)));
  c.nonfinite += nonfinite;
  c.nonzero += nonzero;
  c.tiny += small;
}

AMPX_LOOP_BODY void count16_body(const int16_t* __restrict x, int64_t n, const Layout& l,
                                 Counts& c) {
  const auto inf = static_cast<int16_t>(l.inf), tiny = static_cast<int16_t>(l.tiny);
  int16_t amax = 0;
  constexpr int64_t kChunk = 16384;  // the 16-bit counters' range
  for (int64_t s = 0; s < n; s += kChunk) {
    const int64_t e = std::min(s + kChunk, n);
    int16_t nonfinite = 0, nonzero = 0, small = 0;
    for (int64_t i = s; i < e; ++i) {
      const auto a = static_cast<int16_t>(x[i] & 0x7fff);
      const int16_t finite = a < inf;
      nonfinite = static_cast<int16_t>(nonfinite + 1 - finite);
      const int16_t af = finite ? a : int16_t{0};
      amax = amax > af ? amax : af;
      nonzero = static_cast<int16_t>(nonzero + ((a != 0) & finite));
      small = static_cast<int16_t>(small + ((a != 0) & (a < tiny)));
    }
    c.nonfinite += nonfinite;
    c.nonzero += nonzero;
    c.tiny += small;
  }
  c.amax = std::max(c.amax, l.value(static_cast<uint32_t>(amax)));
}

AMPX_TARGET_AVX2 void count32_avx2(const int32_t* x, int64_t n, const Layout& l, Counts& c) {
  count32_body(x, n, l, c);
}
AMPX_TARGET_AVX2 void count16_avx2(const int16_t* x, int64_t n, const Layout& l, Counts& c) {
  count16_body(x, n, l, c);
}
void count32(const int32_t* x, int64_t n, const Layout& l, Counts& c) {
  use_avx2() ? count32_avx2(x, n, l, c) : count32_body(x, n, l, c);
}
void count16(const int16_t* x, int64_t n, const Layout& l, Counts& c) {
  use_avx2() ? count16_avx2(x, n, l, c) : count16_body(x, n, l, c);
}

void count_f64(const double* x, int64_t n, double tiny, Counts& c) {
  double amax = 0;
  int64_t nonfinite = 0, nonzero = 0, small = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = std::fabs(x[i]);
    const bool finite = std::isfinite(a);
    nonfinite += finite ? 0 : 1;
    amax = finite ? std::max(amax, a) : amax;
    nonzero += finite && a > 0 ? 1 : 0;
    small += a > 0 && a < tiny ? 1 : 0;
  }
  c.amax = std::max(c.amax, static_cast<float>(std::min<double>(amax, 3.4028234663852886e38)));
  c.nonfinite += nonfinite;
  c.nonzero += nonzero;
  c.tiny += small;
}

class TensorStatsKernel final : public CpuKernel {
 public:
  TensorStatsKernel(std::vector<TensorInfo> inputs, float tiny)
      : in_(std::move(inputs)), tiny_(tiny) {
    for (size_t t = 0; t < in_.size(); ++t) {
      layouts_.push_back(layout_of(in_[t].dtype, tiny));
      for (int64_t s = 0; s < in_[t].numel; s += kBlock) where_.emplace_back(t, s);
      elements_ += in_[t].numel;
    }
  }

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    std::vector<Counts> blocks(where_.size());
    const double elements = static_cast<double>(elements_);  // not blocks x kBlock
    parallel_for(static_cast<int64_t>(where_.size()), threads_for(elements / 4),
                 [&](int64_t b0, int64_t b1) {
                   for (int64_t b = b0; b < b1; ++b) {
                     const auto [t, start] = where_[static_cast<size_t>(b)];
                     const int64_t n = std::min(start + kBlock, in_[t].numel) - start;
                     Counts& c = blocks[static_cast<size_t>(b)];
                     switch (in_[t].dtype) {
                       case AMPX_DTYPE_F64:
                         count_f64(static_cast<const double*>(in[t]) + start, n,
                                   static_cast<double>(tiny_), c);
                         break;
                       case AMPX_DTYPE_F32:
                         count32(static_cast<const int32_t*>(in[t]) + start, n, layouts_[t], c);
                         break;
                       default:  // f16, bf16
                         count16(static_cast<const int16_t*>(in[t]) + start, n, layouts_[t], c);
                     }
                   }
                 });
    auto* stats = static_cast<float*>(out[0]);
    size_t b = 0;
    for (size_t t = 0; t < in_.size(); ++t) {
      Counts c;
      for (; b < where_.size() && where_[b].first == t; ++b) c.add(blocks[b]);
      const double n = static_cast<double>(in_[t].numel);
      stats[3 * t + 0] = c.amax;
      stats[3 * t + 1] = n > 0 ? static_cast<float>(static_cast<double>(c.nonfinite) / n) : 0.0f;
      stats[3 * t + 2] =
          c.nonzero > 0
              ? static_cast<float>(static_cast<double>(c.tiny) / static_cast<double>(c.nonzero))
              : 0.0f;
    }
  }

 private:
  std::vector<TensorInfo> in_;
  float tiny_;
  std::vector<Layout> layouts_;
  std::vector<std::pair<size_t, int64_t>> where_;  // block: (input, first element)
  int64_t elements_ = 0;
};

}  // namespace

std::unique_ptr<CpuKernel> make_tensor_stats(Ctx& c) {
  return std::make_unique<TensorStatsKernel>(c.in,
                                             static_cast<float>(c.v.get_float("tiny", 0x1p-14)));
}

}  // namespace ampx::reference::detail
