// MultiSgdUpdate and MultiAdamUpdate (docs/OPS.md, "Training ops";
// opset/multi_update.hpp): UpdateGuard and every weight's update in one
// node, and the 16-bit working copies of the new weights written by the
// same pass (apex's fused optimizers), so a training step has no per-weight
// Cast.
//
// The work is the guard's fixed blocks of 65,536 elements (tensor, start),
// parallel over blocks, each element computed by the per-tensor kernels'
// arithmetic (update_math.hpp): the bits equal the per-tensor nodes' and
// never depend on the thread count.
//
// When the update needs the guard's verdict before its first write
// (skip_nonfinite: a non-finite gradient anywhere leaves everything as it
// was; clip_norm: the global norm scales every gradient), the gradients are
// read twice: the check, then the update. The state is updated in place,
// so there is no old value to restore once written. Otherwise (bf16's
// default, no loss scale) one pass reads each gradient once: each block's
// check and update run piece by piece over the same cache-resident
// elements.
#include <algorithm>
#include <cstring>
#include <vector>

#include <ampx/half.hpp>
#include <ampx/opset/multi_update.hpp>

#include "common.hpp"
#include "guard_math.hpp"
#include "parallel.hpp"
#include "update_math.hpp"

namespace ampx::reference::detail {
namespace {

// A piece of a block in the one-pass form: a multiple of 8 (the partial
// sums' stride), small enough that G, W and the states stay in L1.
constexpr int64_t kPiece = 2048;
// A piece of another length would regroup the partial sums: a norm that
// differs from UpdateGuard's in the last bits of its f64 sum, which the
// f32 stats and clipping factor usually round away, so no test sees it.
static_assert(kPiece % 8 == 0 && kGuardBlock % kPiece == 0);

class MultiUpdateKernel final : public CpuKernel {
 public:
  MultiUpdateKernel(const opset::MultiUpdateLayout& l, bool adam, SgdParams sgd, AdamParams adm,
                    float clip, bool skip, std::vector<int64_t> sizes, std::vector<int64_t> copies,
                    std::vector<bool> copy_bf16)
      : l_(l),
        adam_(adam),
        sgd_(sgd),
        adam_p_(adm),
        clip_(clip),
        skip_(skip),
        sizes_(std::move(sizes)),
        copy_of_(std::move(copies)),
        copy_bf16_(std::move(copy_bf16)) {
    copies_by_weight_.resize(l_.weights);
    for (size_t j = 0; j < copy_of_.size(); ++j)
      copies_by_weight_[static_cast<size_t>(copy_of_[j])].push_back(j);
    for (size_t w = 0; w < sizes_.size(); ++w)
      for (int64_t s = 0; s < sizes_[w]; s += kGuardBlock) blocks_.emplace_back(w, s);
    for (int64_t n : sizes_) elements_ += static_cast<double>(n);
  }

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* h = static_cast<const float*>(in[0]);
    auto* h_out = static_cast<float*>(out[0]);
    auto* stats = static_cast<float*>(out[1]);
    const size_t hyper_len = adam_ ? 5 : 3;
    std::vector<BlockSum> sums(blocks_.size());
    const int64_t nb = static_cast<int64_t>(blocks_.size());
    const bool one_pass = clip_ == 0.0f && !skip_ && h[2] != 0.0f;
    if (one_pass) {
      // The verdict changes nothing the update reads: hyper' = hyper.
      float hyper[5];
      std::memcpy(hyper, h, hyper_len * sizeof(float));
      parallel_for(nb, threads_for(work_per_element() * elements_), [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          const auto [w, start] = blocks_[static_cast<size_t>(b)];
          const int64_t end = std::min(start + kGuardBlock, sizes_[w]);
          const auto* g = static_cast<const float*>(in[l_.g_in(w)]);
          BlockSumAccumulator acc;
          for (int64_t p = start; p < end; p += kPiece) {
            const int64_t e = std::min(p + kPiece, end);
            acc.add(g + p, e - p);
            update(in, out, hyper, w, p, e);
          }
          sums[static_cast<size_t>(b)] = acc.result();
        }
      });
      const auto [squares, finite] = total(sums);
      guard_finish(hyper, hyper_len, clip_, skip_, squares, finite, h_out, stats);
      return;
    }
    // The check first: its verdict decides every write.
    parallel_for(nb, threads_for(2.0 * elements_), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const auto [w, start] = blocks_[static_cast<size_t>(b)];
        const int64_t end = std::min(start + kGuardBlock, sizes_[w]);
        sums[static_cast<size_t>(b)] =
            block_sum(static_cast<const float*>(in[l_.g_in(w)]) + start, end - start);
      }
    });
    const auto [squares, finite] = total(sums);
    float hyper[5];
    guard_finish(h, hyper_len, clip_, skip_, squares, finite, hyper, stats);
    std::memcpy(h_out, hyper, hyper_len * sizeof(float));
    if (hyper[2] == 0.0f) {  // a skipped step: every output equals its input
      for (size_t o = 2; o < l_.num_outputs(); ++o) {
        const void* src = in[static_cast<size_t>(l_.in_place_input(o))];
        if (src != out[o]) std::memcpy(out[o], src, bytes_[o]);
      }
      return;
    }
    parallel_for(nb, threads_for(work_per_element() * elements_), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const auto [w, start] = blocks_[static_cast<size_t>(b)];
        update(in, out, hyper, w, start, std::min(start + kGuardBlock, sizes_[w]));
      }
    });
  }

  void set_bytes(std::vector<size_t> bytes) { bytes_ = std::move(bytes); }

 private:
  double work_per_element() const { return adam_ ? 10.0 : 4.0; }

  static std::pair<double, bool> total(const std::vector<BlockSum>& sums) {
    double squares = 0;
    bool finite = true;
    for (const BlockSum& s : sums) {
      squares += s.squares;
      finite &= s.finite;
    }
    return {squares, finite};
  }

  // Elements [i0, i1) of weight w: its update, then its copies from the
  // new weight (rounded to nearest even, as Cast rounds).
  void update(std::span<const void* const> in, std::span<void* const> out, const float* hyper,
              size_t w, int64_t i0, int64_t i1) const {
    const auto* wi = static_cast<const float*>(in[l_.w_in(w)]);
    const auto* g = static_cast<const float*>(in[l_.g_in(w)]);
    auto* wo = static_cast<float*>(out[l_.w_out(w)]);
    auto state_in = [&](size_t s) { return static_cast<const float*>(in[l_.state_in(s, w)]); };
    auto state_out = [&](size_t s) { return static_cast<float*>(out[l_.state_out(s, w)]); };
    if (adam_) {
      adam_range(adam_p_, AdamStep(adam_p_, hyper), wi, g, state_in(0), state_in(1), wo,
                 state_out(0), state_out(1), i0, i1);
    } else {
      const bool m = l_.states == 1;
      sgd_range(sgd_, hyper[0], hyper[1], wi, g, m ? state_in(0) : nullptr, wo,
                m ? state_out(0) : nullptr, i0, i1);
    }
    for (size_t j : copies_by_weight_[w]) {
      auto* c = static_cast<uint16_t*>(out[l_.copy_out(j)]);
      if (copy_bf16_[j])
        for (int64_t i = i0; i < i1; ++i) c[i] = float_to_bf16_bits(wo[i]);
      else
        for (int64_t i = i0; i < i1; ++i) c[i] = float_to_f16_bits(wo[i]);
    }
  }

  opset::MultiUpdateLayout l_;
  bool adam_;
  SgdParams sgd_;
  AdamParams adam_p_;
  float clip_;
  bool skip_;
  std::vector<int64_t> sizes_;                         // per weight
  std::vector<int64_t> copy_of_;                       // per copy: its weight
  std::vector<bool> copy_bf16_;                        // per copy
  std::vector<std::vector<size_t>> copies_by_weight_;  // per weight: its copies
  std::vector<std::pair<size_t, int64_t>> blocks_;     // (weight, first element)
  std::vector<size_t> bytes_;                          // per output
  double elements_ = 0;
};

}  // namespace

std::unique_ptr<CpuKernel> make_multi_update(Ctx& c) {
  const bool adam = c.v.op_type() == "MultiAdamUpdate";
  const SgdParams sgd = adam ? SgdParams{} : sgd_params(c);
  std::vector<int64_t> copies = c.v.get_ints("copies");
  const auto l =
      opset::multi_update_layout(c.v.op_type(), c.in.size(), sgd.momentum > 0.0f, copies.size());
  if (!l) c.fail("operand count does not fit the layout");  // validated before
  std::vector<int64_t> sizes;
  for (size_t w = 0; w < l->weights; ++w) sizes.push_back(c.in[l->w_in(w)].numel);
  std::vector<bool> bf16;
  for (size_t j = 0; j < l->copies; ++j)
    bf16.push_back(c.in[l->copy_in(j)].dtype == AMPX_DTYPE_BF16);
  auto k = std::make_unique<MultiUpdateKernel>(
      *l, adam, sgd, adam ? adam_params(c) : AdamParams{},
      static_cast<float>(c.v.get_float("clip_norm", 0.0)), c.v.get_int("skip_nonfinite", 1) != 0,
      std::move(sizes), std::move(copies), std::move(bf16));
  std::vector<size_t> bytes;
  for (const TensorInfo& t : c.out)
    bytes.push_back(static_cast<size_t>(t.numel) * plugin_support::dtype_size(t.dtype));
  k->set_bytes(std::move(bytes));
  return k;
}

}  // namespace ampx::reference::detail
