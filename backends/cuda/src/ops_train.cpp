// The training step's own ops: SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad
// (a label outside [0, C) is an error at run time, as cpu_ref's) and the
// f32 optimizer updates SgdUpdate and AdamUpdate (hyper read on the device,
// apply = 0 a bitwise no-op; the executor's in-place outputs are staged by
// the plugin, and the kernels would be correct in place anyway), and
// UpdateGuard (f32, deterministic).
#include <vector>

#include "allocator.hpp"
#include "ampx/half.hpp"
#include "cuda_error.hpp"
#include "kernels_grad.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

using In = std::span<const void* const>;
using Out = std::span<void* const>;

// A flag the kernel sets on a bad label. Finding out costs one 4-byte copy
// back and a wait for the stream, as Gather's index check (ops_data.cpp).
class LabelCheck {
 public:
  explicit LabelCheck(DeviceContext& dev) : dev_(dev), flag_(dev.allocator(), sizeof(int)) {
    check_cuda(cudaMemsetAsync(flag_.get(), 0, sizeof(int), dev_.stream()), "cudaMemsetAsync");
  }
  int* get() const noexcept { return static_cast<int*>(flag_.get()); }
  // After the kernel: throws when a label was out of range.
  void verify(int64_t classes) {
    int bad = 0;
    check_cuda(
        cudaMemcpyAsync(&bad, flag_.get(), sizeof bad, cudaMemcpyDeviceToHost, dev_.stream()),
        "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(dev_.stream()), "cudaStreamSynchronize");
    if (bad) {
      throw std::invalid_argument("a label is outside [0, " + std::to_string(classes) + ")");
    }
  }

 private:
  DeviceContext& dev_;
  DeviceMemory flag_;
};

class CrossEntropyOp final : public CudaOp {
 public:
  CrossEntropyOp(DeviceContext& dev, ampx_dtype dt, kern::CrossEntropyParams p)
      : dev_(dev), dt_(dt), p_(p) {}
  void launch(In in, Out out) override {
    LabelCheck labels(dev_);
    // Each row's loss term, summed afterwards in a fixed order (not atomics).
    DeviceMemory row_loss(dev_.allocator(), static_cast<uint64_t>(p_.rows) * sizeof(float));
    check_kernel(kern::softmax_cross_entropy(dt_, p_, in[0], static_cast<const int64_t*>(in[1]),
                                             out[0], out[1], static_cast<float*>(row_loss.get()),
                                             labels.get(), dev_.stream()),
                 "softmax_cross_entropy");
    labels.verify(p_.classes);
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::CrossEntropyParams p_;
};

class CrossEntropyGradOp final : public CudaOp {
 public:
  CrossEntropyGradOp(DeviceContext& dev, ampx_dtype dt, kern::CrossEntropyParams p)
      : dev_(dev), dt_(dt), p_(p) {}
  void launch(In in, Out out) override {
    LabelCheck labels(dev_);
    check_kernel(
        kern::softmax_cross_entropy_grad(dt_, p_, in[0], in[1], static_cast<const int64_t*>(in[2]),
                                         out[0], labels.get(), dev_.stream()),
        "softmax_cross_entropy_grad");
    labels.verify(p_.classes);
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::CrossEntropyParams p_;
};

}  // namespace

std::unique_ptr<CudaOp> make_cross_entropy(OpContext& c) {
  const bool grad = c.v.op_type() == "SoftmaxCrossEntropyGrad";
  // logits / log_prob [N, C]: input 0 of the loss, input 1 of its gradient.
  const auto& x = c.in[grad ? 1 : 0].dims;
  const kern::CrossEntropyParams p{x[0], x[1]};
  const ampx_dtype dt = c.out[grad ? 0 : 1].dtype;
  if (grad) return std::make_unique<CrossEntropyGradOp>(c.dev, dt, p);
  return std::make_unique<CrossEntropyOp>(c.dev, dt, p);
}

std::unique_ptr<CudaOp> make_sgd_update(OpContext& c) {
  kern::SgdParams p;
  p.n = c.in[0].numel;
  p.momentum = static_cast<float>(c.v.get_float("momentum", 0.0));
  p.nesterov = c.v.get_int("nesterov", 0) != 0;
  p.weight_decay = static_cast<float>(c.v.get_float("weight_decay", 0.0));
  const bool has_m = c.in.size() == 4;  // exactly when momentum > 0 (validated)
  cudaStream_t s = c.dev.stream();
  class SgdOp final : public CudaOp {
   public:
    SgdOp(kern::SgdParams p, bool has_m, cudaStream_t s) : p_(p), has_m_(has_m), s_(s) {}
    void launch(In in, Out out) override {
      const auto* m = has_m_ ? static_cast<const float*>(in[3]) : nullptr;
      check_kernel(
          kern::sgd_update(p_, static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
                           static_cast<const float*>(in[2]), m, static_cast<float*>(out[0]),
                           has_m_ ? static_cast<float*>(out[1]) : nullptr, s_),
          "sgd_update");
    }

   private:
    kern::SgdParams p_;
    bool has_m_;
    cudaStream_t s_;
  };
  return std::make_unique<SgdOp>(p, has_m, s);
}

std::unique_ptr<CudaOp> make_adam_update(OpContext& c) {
  kern::AdamParams p;
  p.n = c.in[0].numel;
  p.beta1 = static_cast<float>(c.v.get_float("beta1", 0.9));
  p.beta2 = static_cast<float>(c.v.get_float("beta2", 0.999));
  p.eps = static_cast<float>(c.v.get_float("epsilon", 1e-8));
  p.weight_decay = static_cast<float>(c.v.get_float("weight_decay", 0.0));
  p.decoupled = c.v.get_int("decoupled", 0) != 0;
  cudaStream_t s = c.dev.stream();
  class AdamOp final : public CudaOp {
   public:
    AdamOp(kern::AdamParams p, cudaStream_t s) : p_(p), s_(s) {}
    void launch(In in, Out out) override {
      const auto f = [&](size_t i) { return static_cast<const float*>(in[i]); };
      check_kernel(kern::adam_update(p_, f(0), f(1), f(2), f(3), f(4), static_cast<float*>(out[0]),
                                     static_cast<float*>(out[1]), static_cast<float*>(out[2]), s_),
                   "adam_update");
    }

   private:
    kern::AdamParams p_;
    cudaStream_t s_;
  };
  return std::make_unique<AdamOp>(p, s);
}

// UpdateGuard: a launch per non-empty gradient (its 65,536-element blocks'
// f64 sums of squares and finite flags into per-launch scratch), then one
// thread adds them in order: no atomics, the same bits on every run.
std::unique_ptr<CudaOp> make_update_guard(OpContext& c) {
  kern::UpdateGuardParams p;
  p.hyper = static_cast<int>(c.in[0].numel);
  p.clip_norm = static_cast<float>(c.v.get_float("clip_norm", 0.0));
  p.skip_nonfinite = c.v.get_int("skip_nonfinite", 1) != 0;
  std::vector<int64_t> sizes;
  for (size_t i = 1; i < c.in.size(); ++i) {
    sizes.push_back(c.in[i].numel);
    p.blocks += (c.in[i].numel + kern::kGuardBlock - 1) / kern::kGuardBlock;
  }
  class GuardOp final : public CudaOp {
   public:
    GuardOp(DeviceContext& dev, kern::UpdateGuardParams p, std::vector<int64_t> sizes)
        : dev_(dev), p_(p), sizes_(std::move(sizes)) {}
    void launch(In in, Out out) override {
      const auto blocks = static_cast<uint64_t>(p_.blocks > 0 ? p_.blocks : 1);
      DeviceMemory sq(dev_.allocator(), blocks * sizeof(double));
      DeviceMemory bad(dev_.allocator(), blocks * sizeof(int));
      auto* sq_at = static_cast<double*>(sq.get());
      auto* bad_at = static_cast<int*>(bad.get());
      for (size_t i = 0; i < sizes_.size(); ++i) {
        check_kernel(kern::update_guard_blocks(static_cast<const float*>(in[i + 1]), sizes_[i],
                                               sq_at, bad_at, dev_.stream()),
                     "update_guard_blocks");
        const int64_t b = (sizes_[i] + kern::kGuardBlock - 1) / kern::kGuardBlock;
        sq_at += b;
        bad_at += b;
      }
      check_kernel(kern::update_guard_finish(
                       p_, static_cast<const double*>(sq.get()), static_cast<const int*>(bad.get()),
                       static_cast<const float*>(in[0]), static_cast<float*>(out[0]),
                       static_cast<float*>(out[1]), dev_.stream()),
                   "update_guard_finish");
    }

   private:
    DeviceContext& dev_;
    kern::UpdateGuardParams p_;
    std::vector<int64_t> sizes_;
  };
  return std::make_unique<GuardOp>(c.dev, p, std::move(sizes));
}

// TensorStats: per input a counting launch (integer atomics: any order,
// the same counts) and a one-thread finish writing its row.
std::unique_ptr<CudaOp> make_tensor_stats(OpContext& c) {
  struct Input {
    int kind;
    int64_t n;
    MagnitudeBits bits;
  };
  const auto tiny = static_cast<float>(c.v.get_float("tiny", 0x1p-14));
  std::vector<Input> inputs;
  for (const auto& t : c.in) {
    const int kind = t.dtype == AMPX_DTYPE_F32 ? 0 : t.dtype == AMPX_DTYPE_F16 ? 1 : 2;
    inputs.push_back({kind, t.numel, magnitude_bits(tiny, kind == 0 ? 32 : 16, kind == 2)});
  }
  class StatsOp final : public CudaOp {
   public:
    StatsOp(DeviceContext& dev, std::vector<Input> inputs) : dev_(dev), in_(std::move(inputs)) {}
    void launch(In in, Out out) override {
      const size_t bytes = 4 * sizeof(unsigned long long) * in_.size();
      DeviceMemory acc(dev_.allocator(), bytes);
      check_cuda(cudaMemsetAsync(acc.get(), 0, bytes, dev_.stream()), "cudaMemsetAsync");
      auto* a = static_cast<unsigned long long*>(acc.get());
      auto* stats = static_cast<float*>(out[0]);
      for (size_t i = 0; i < in_.size(); ++i) {
        check_kernel(kern::tensor_stats_count(in[i], in_[i].n, in_[i].kind, in_[i].bits.inf,
                                              in_[i].bits.at_least, a + 4 * i, dev_.stream()),
                     "tensor_stats_count");
        check_kernel(kern::tensor_stats_finish(a + 4 * i, in_[i].kind, in_[i].n, stats + 3 * i,
                                               dev_.stream()),
                     "tensor_stats_finish");
      }
    }

   private:
    DeviceContext& dev_;
    std::vector<Input> in_;
  };
  return std::make_unique<StatsOp>(c.dev, std::move(inputs));
}

}  // namespace ampx::cuda
