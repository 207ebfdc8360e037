// UpdateGuard (docs/OPS.md, "Training ops"): between the backward pass and
// the optimizer updates, one pass over every gradient decides the updates'
// hyper on the device. The loss-scale schedule on the host needs one flag
// per step back, not a scan of the gradients.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common.hpp"
#include "cpu_dispatch.hpp"
#include "guard_math.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

// The block's partial sums: 8 interleaved f64 sums (a fixed order, so the
// same bits on every run; it vectorises, where one running sum cannot).
AMPX_LOOP_BODY void accumulate_body(const float* x, int64_t n, double* acc, double& tail,
                                    uint32_t& bad_bits) {
  uint32_t bad = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) {
      uint32_t bits;
      std::memcpy(&bits, x + i + k, 4);
      bad |= (bits & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
      const double v = x[i + k];
      acc[k] += v * v;
    }
  for (; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, 4);
    bad |= (bits & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
    tail += static_cast<double>(x[i]) * x[i];
  }
  bad_bits |= bad;
}

AMPX_LOOP_BODY BlockSum block_sum_body(const float* x, int64_t n) {
  double acc[8] = {};
  double tail = 0;
  uint32_t bad = 0;
  accumulate_body(x, n, acc, tail, bad);
  return {
      (((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))) + tail,
      bad == 0};
}

AMPX_TARGET_AVX2 BlockSum block_sum_avx2(const float* x, int64_t n) {
  return block_sum_body(x, n);
}

AMPX_TARGET_AVX2 void accumulate_avx2(const float* x, int64_t n, double* acc, double& tail,
                                      uint32_t& bad) {
  accumulate_body(x, n, acc, tail, bad);
}

}  // namespace

BlockSum block_sum(const float* x, int64_t n) {
  return use_avx2() ? block_sum_avx2(x, n) : block_sum_body(x, n);
}

void BlockSumAccumulator::add(const float* x, int64_t n) {
  if (use_avx2())
    accumulate_avx2(x, n, acc_, tail_, bad_);
  else
    accumulate_body(x, n, acc_, tail_, bad_);
}

BlockSum BlockSumAccumulator::result() const {
  const double* a = acc_;
  return {(((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]))) + tail_, bad_ == 0};
}

void guard_finish(const float* h, size_t hyper_len, float clip_norm, bool skip, double squares,
                  bool finite, float* h_out, float* stats) {
  const float grad_scale = h[1];
  // The norm of the unscaled gradients: grad_scale undoes the loss scale.
  const double norm = finite ? std::sqrt(squares) * static_cast<double>(grad_scale)
                             : std::numeric_limits<double>::infinity();
  if (h_out != h) std::memcpy(h_out, h, hyper_len * sizeof(float));
  if (clip_norm > 0.0f && finite) {
    // PyTorch's clip_grad_norm_: scale by max_norm / (norm + 1e-6) when
    // that is below 1.
    const double coef = static_cast<double>(clip_norm) / (norm + 1e-6);
    if (coef < 1.0) h_out[1] = static_cast<float>(static_cast<double>(grad_scale) * coef);
  }
  if (skip && !finite) h_out[2] = 0.0f;
  stats[0] = finite ? 1.0f : 0.0f;
  stats[1] = static_cast<float>(norm);
}

namespace {

class UpdateGuardKernel final : public CpuKernel {
 public:
  UpdateGuardKernel(std::vector<int64_t> sizes, int64_t hyper, float clip_norm, bool skip)
      : sizes_(std::move(sizes)), hyper_(hyper), clip_(clip_norm), skip_(skip) {
    // Block b of the concatenated gradients: (input, first element), laid
    // out once here rather than at every step.
    for (size_t g = 0; g < sizes_.size(); ++g)
      for (int64_t s = 0; s < sizes_[g]; s += kGuardBlock) where_.emplace_back(g + 1, s);
    for (int64_t n : sizes_) elements_ += n;
  }

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* h = static_cast<const float*>(in[0]);
    std::vector<BlockSum> sums(where_.size());
    // The real element count: most gradients are far smaller than a block,
    // and a thread started for a few thousand elements costs more than it
    // saves.
    const double elements = static_cast<double>(elements_);
    parallel_for(static_cast<int64_t>(where_.size()), threads_for(2.0 * elements),
                 [&](int64_t b0, int64_t b1) {
                   for (int64_t b = b0; b < b1; ++b) {
                     const auto [g, start] = where_[static_cast<size_t>(b)];
                     const auto* x = static_cast<const float*>(in[g]);
                     const int64_t end = std::min(start + kGuardBlock, sizes_[g - 1]);
                     sums[static_cast<size_t>(b)] = block_sum(x + start, end - start);
                   }
                 });
    double squares = 0;
    bool finite = true;
    for (const BlockSum& s : sums) {
      squares += s.squares;
      finite &= s.finite;
    }
    guard_finish(h, static_cast<size_t>(hyper_), clip_, skip_, squares, finite,
                 static_cast<float*>(out[0]), static_cast<float*>(out[1]));
  }

 private:
  std::vector<int64_t> sizes_;
  int64_t hyper_;
  float clip_;
  bool skip_;
  std::vector<std::pair<size_t, int64_t>> where_;
  int64_t elements_ = 0;
};

}  // namespace

std::unique_ptr<CpuKernel> make_update_guard(Ctx& c) {
  std::vector<int64_t> sizes;
  for (size_t i = 1; i < c.in.size(); ++i) sizes.push_back(c.in[i].numel);
  return std::make_unique<UpdateGuardKernel>(std::move(sizes), c.in[0].numel,
                                             static_cast<float>(c.v.get_float("clip_norm", 0.0)),
                                             c.v.get_int("skip_nonfinite", 1) != 0);
}

}  // namespace ampx::reference::detail
