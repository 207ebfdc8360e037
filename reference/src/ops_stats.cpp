// TensorStats (docs/OPS.md, "Training ops"): the overflow diagnostics'
// probe. One pass over each tensor, in the dtype it has (no Cast in front),
// gives its largest finite magnitude, its share of non-finite elements and
// its share of nonzero elements below the 16-bit normal range.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common.hpp"
#include "convert.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

constexpr int64_t kBlock = 1 << 16;  // elements per task
constexpr int64_t kChunk = 4096;     // 16-bit elements widened at a time

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

template <class T>
void count(const T* x, int64_t n, T tiny, Counts& c) {
  T amax = 0;
  int64_t nonfinite = 0, nonzero = 0, small = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T a = std::fabs(x[i]);
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
    for (size_t t = 0; t < in_.size(); ++t)
      for (int64_t s = 0; s < in_[t].numel; s += kBlock) where_.emplace_back(t, s);
  }

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    std::vector<Counts> blocks(where_.size());
    const double elements = static_cast<double>(where_.size()) * kBlock;
    parallel_for(static_cast<int64_t>(where_.size()), threads_for(2.0 * elements),
                 [&](int64_t b0, int64_t b1) {
                   std::vector<float> wide;
                   for (int64_t b = b0; b < b1; ++b) {
                     const auto [t, start] = where_[static_cast<size_t>(b)];
                     const int64_t end = std::min(start + kBlock, in_[t].numel);
                     count_block(in_[t].dtype, in[t], start, end, wide,
                                 blocks[static_cast<size_t>(b)]);
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
  void count_block(ampx_dtype dt, const void* data, int64_t start, int64_t end,
                   std::vector<float>& wide, Counts& c) const {
    switch (dt) {
      case AMPX_DTYPE_F32:
        count(static_cast<const float*>(data) + start, end - start, tiny_, c);
        return;
      case AMPX_DTYPE_F64:
        count(static_cast<const double*>(data) + start, end - start, static_cast<double>(tiny_), c);
        return;
      default: {  // f16, bf16: widened exactly, a chunk at a time
        wide.resize(static_cast<size_t>(kChunk));
        const auto* h = static_cast<const uint16_t*>(data);
        for (int64_t s = start; s < end; s += kChunk) {
          const int64_t n = std::min(kChunk, end - s);
          widen_to_f32(dt, h + s, wide.data(), n);
          count(wide.data(), n, tiny_, c);
        }
      }
    }
  }

  std::vector<TensorInfo> in_;
  float tiny_;
  std::vector<std::pair<size_t, int64_t>> where_;  // block: (input, first element)
};

}  // namespace

std::unique_ptr<CpuKernel> make_tensor_stats(Ctx& c) {
  return std::make_unique<TensorStatsKernel>(c.in,
                                             static_cast<float>(c.v.get_float("tiny", 0x1p-14)));
}

}  // namespace ampx::reference::detail
