// Training-only kernels in f32: DropoutTraining (the mask of docs/OPS.md,
// the same on every backend), SoftmaxCrossEntropy and its gradient (these
// three also in f64 in the float64 mode: templates on the element type T),
// and the optimizer updates SgdUpdate and AdamUpdate (f32 only). The updates may run in place
// (an output in the buffer of its state input): each element is read
// before it is written.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <ampx/opset/dropout_draw.hpp>

#include "common.hpp"
#include "parallel.hpp"
#include "update_math.hpp"

namespace ampx::reference::detail {

bool dropout_keeps(uint64_t seed, uint64_t index, float ratio) {
  return opset::dropout_draw(seed, index) >= ratio;
}

namespace {

// The same elements are kept in f32 and f64 (the draw compares with the
// ratio as an f32); the kept elements' scale 1 / (1 - ratio) is in T.
template <class T>
class DropoutTrainingKernel final : public CpuKernel {
 public:
  DropoutTrainingKernel(int64_t n, double ratio)
      : n_(n), ratio_(static_cast<float>(ratio)), keep_(T(1) / (T(1) - static_cast<T>(ratio))) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    uint64_t seed = 0;
    std::memcpy(&seed, in[1], sizeof seed);
    auto* y = static_cast<T*>(out[0]);
    auto* mask = static_cast<T*>(out[1]);
    parallel_for(n_, threads_for(8.0 * static_cast<double>(n_)), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        mask[i] = dropout_keeps(seed, static_cast<uint64_t>(i), ratio_) ? keep_ : T(0);
        y[i] = x[i] * mask[i];
      }
    });
  }

 private:
  int64_t n_;
  float ratio_;
  T keep_;
};

void check_label(int64_t label, int64_t classes, int64_t row, const std::string& where) {
  if (label < 0 || label >= classes) {
    throw std::invalid_argument(where + ": label " + std::to_string(label) + " of row " +
                                std::to_string(row) + " is outside [0, " + std::to_string(classes) +
                                ")");
  }
}

// loss = -mean_n log_softmax(logits)[n, label_n]; log_prob is kept for the
// gradient. The loss is accumulated in double, row by row.
template <class T>
class SoftmaxCrossEntropyKernel final : public CpuKernel {
 public:
  SoftmaxCrossEntropyKernel(int64_t n, int64_t classes, std::string where)
      : n_(n), c_(classes), where_(std::move(where)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    const auto* labels = static_cast<const int64_t*>(in[1]);
    auto* loss = static_cast<T*>(out[0]);
    auto* lp = static_cast<T*>(out[1]);
    for (int64_t r = 0; r < n_; ++r) check_label(labels[r], c_, r, where_);
    parallel_for(n_, threads_for(20.0 * static_cast<double>(n_) * c_), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = x + r * c_;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t k = 0; k < c_; ++k) m = std::isnan(xr[k]) || xr[k] > m ? xr[k] : m;
        T s = T(0);
        for (int64_t k = 0; k < c_; ++k) s += std::exp(xr[k] - m);
        const T lse = m + std::log(s);
        for (int64_t k = 0; k < c_; ++k) lp[r * c_ + k] = xr[k] - lse;
      }
    });
    double total = 0;
    for (int64_t r = 0; r < n_; ++r) total -= lp[r * c_ + labels[r]];
    loss[0] = static_cast<T>(total / static_cast<double>(n_));  // N = 0: NaN, as a mean
  }

 private:
  int64_t n_, c_;
  std::string where_;
};

// dLogits = (exp(log_prob) - onehot(label)) * dLoss / N.
template <class T>
class SoftmaxCrossEntropyGradKernel final : public CpuKernel {
 public:
  SoftmaxCrossEntropyGradKernel(int64_t n, int64_t classes, std::string where)
      : n_(n), c_(classes), where_(std::move(where)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const T dloss = *static_cast<const T*>(in[0]);
    const auto* lp = static_cast<const T*>(in[1]);
    const auto* labels = static_cast<const int64_t*>(in[2]);
    auto* dx = static_cast<T*>(out[0]);
    for (int64_t r = 0; r < n_; ++r) check_label(labels[r], c_, r, where_);
    const T k = n_ > 0 ? dloss / static_cast<T>(n_) : T(0);
    parallel_for(n_, threads_for(20.0 * static_cast<double>(n_) * c_), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t j = 0; j < c_; ++j) {
          const T p = std::exp(lp[r * c_ + j]);
          dx[r * c_ + j] = (p - (j == labels[r] ? T(1) : T(0))) * k;
        }
      }
    });
  }

 private:
  int64_t n_, c_;
  std::string where_;
};

// ------------------------------------------------------ optimizer updates

// hyper: lr, grad_scale, apply (0: leave every output equal to its input).
class SgdUpdateKernel final : public CpuKernel {
 public:
  SgdUpdateKernel(int64_t n, SgdParams p) : n_(n), p_(p) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* w = static_cast<const float*>(in[0]);
    const auto* g = static_cast<const float*>(in[1]);
    const auto* h = static_cast<const float*>(in[2]);
    const float* m = p_.momentum > 0.0f ? static_cast<const float*>(in[3]) : nullptr;
    auto* w_out = static_cast<float*>(out[0]);
    float* m_out = m ? static_cast<float*>(out[1]) : nullptr;
    const float lr = h[0], scale = h[1];
    if (h[2] == 0.0f) {
      copy_unless_same(w, w_out);
      if (m) copy_unless_same(m, m_out);
      return;
    }
    parallel_for(n_, threads_for(4.0 * static_cast<double>(n_)), [&](int64_t i0, int64_t i1) {
      sgd_range(p_, lr, scale, w, g, m, w_out, m_out, i0, i1);
    });
  }

 private:
  void copy_unless_same(const float* src, float* dst) const {
    if (src != dst) std::memcpy(dst, src, static_cast<size_t>(n_) * sizeof(float));
  }
  int64_t n_;
  SgdParams p_;
};

// hyper: lr, grad_scale, apply, bias_correction1, bias_correction2 (1 - beta^t).
class AdamUpdateKernel final : public CpuKernel {
 public:
  AdamUpdateKernel(int64_t n, AdamParams p) : n_(n), p_(p) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* w = static_cast<const float*>(in[0]);
    const auto* g = static_cast<const float*>(in[1]);
    const auto* m = static_cast<const float*>(in[2]);
    const auto* v = static_cast<const float*>(in[3]);
    const auto* h = static_cast<const float*>(in[4]);
    auto* w_out = static_cast<float*>(out[0]);
    auto* m_out = static_cast<float*>(out[1]);
    auto* v_out = static_cast<float*>(out[2]);
    if (h[2] == 0.0f) {
      const auto bytes = static_cast<size_t>(n_) * sizeof(float);
      if (w != w_out) std::memcpy(w_out, w, bytes);
      if (m != m_out) std::memcpy(m_out, m, bytes);
      if (v != v_out) std::memcpy(v_out, v, bytes);
      return;
    }
    const AdamStep step(p_, h);
    parallel_for(n_, threads_for(10.0 * static_cast<double>(n_)), [&](int64_t i0, int64_t i1) {
      adam_range(p_, step, w, g, m, v, w_out, m_out, v_out, i0, i1);
    });
  }

 private:
  int64_t n_;
  AdamParams p_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_dropout_training(Ctx& c) {
  return typed<DropoutTrainingKernel>(c, c.in[0].numel, c.v.get_float("ratio", 0.5));
}

std::unique_ptr<CpuKernel> make_softmax_cross_entropy(Ctx& c) {
  return typed<SoftmaxCrossEntropyKernel>(c, c.in[0].dims[0], c.in[0].dims[1], c.v.where());
}

std::unique_ptr<CpuKernel> make_softmax_cross_entropy_grad(Ctx& c) {
  return typed<SoftmaxCrossEntropyGradKernel>(c, c.in[1].dims[0], c.in[1].dims[1], c.v.where());
}

SgdParams sgd_params(const Ctx& c) {
  return {static_cast<float>(c.v.get_float("momentum", 0.0)), c.v.get_int("nesterov", 0) != 0,
          static_cast<float>(c.v.get_float("weight_decay", 0.0))};
}

AdamParams adam_params(const Ctx& c) {
  return {static_cast<float>(c.v.get_float("beta1", 0.9)),
          static_cast<float>(c.v.get_float("beta2", 0.999)),
          static_cast<float>(c.v.get_float("epsilon", 1e-8)),
          static_cast<float>(c.v.get_float("weight_decay", 0.0)), c.v.get_int("decoupled", 0) != 0};
}

std::unique_ptr<CpuKernel> make_sgd_update(Ctx& c) {
  return std::make_unique<SgdUpdateKernel>(c.in[0].numel, sgd_params(c));
}

std::unique_ptr<CpuKernel> make_adam_update(Ctx& c) {
  return std::make_unique<AdamUpdateKernel>(c.in[0].numel, adam_params(c));
}

}  // namespace ampx::reference::detail
