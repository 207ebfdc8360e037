// Backward kernels of the activations and normalisations in f32:
// ReluGrad, SigmoidGrad, TanhGrad, GeluGrad, ClipGrad, SoftmaxGrad,
// LayerNormGrad, and BatchNorm in training mode (BatchNormTraining,
// BatchNormGrad). Reductions over rows or channels run in a fixed order on
// one thread each, so results never depend on the thread count.
#include <cmath>
#include <numbers>

#include "common.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

// ------------------------------------------------ elementwise gradients

// dX = dY * f'(t), where t is X or the forward output Y (per op).
template <class F>
class ElementwiseGradKernel final : public CpuKernel {
 public:
  ElementwiseGradKernel(int64_t n, F f) : n_(n), f_(f) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const float*>(in[0]);
    const auto* t = static_cast<const float*>(in[1]);
    auto* dx = static_cast<float*>(out[0]);
    parallel_for(n_, threads_for(4.0 * static_cast<double>(n_)), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) dx[i] = f_(dy[i], t[i]);
    });
  }

 private:
  int64_t n_;
  F f_;
};

template <class F>
std::unique_ptr<CpuKernel> elementwise_grad(Ctx& c, F f) {
  return std::make_unique<ElementwiseGradKernel<F>>(c.in[0].numel, f);
}

// The derivative of x * Phi(x): Phi(x) + x * phi(x).
float gelu_erf_grad(float x) {
  constexpr float kInvSqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
  constexpr float kInvSqrt2Pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
  return 0.5f * (1.0f + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
}

// The derivative of 0.5 x (1 + tanh(k (x + 0.044715 x^3))).
float gelu_tanh_grad(float x) {
  constexpr float kK = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
  const float t = std::tanh(kK * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kK * (1.0f + 3.0f * 0.044715f * x * x);
}

// ----------------------------------------------------------- SoftmaxGrad

// dX = Y * (dY - sum_axis(dY * Y)).
class SoftmaxGradKernel final : public CpuKernel {
 public:
  SoftmaxGradKernel(int64_t outer, int64_t len, int64_t inner)
      : outer_(outer), len_(len), inner_(inner) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const float*>(in[0]);
    const auto* y = static_cast<const float*>(in[1]);
    auto* dx = static_cast<float*>(out[0]);
    const double work = 3.0 * static_cast<double>(outer_) * len_ * inner_;
    parallel_for(outer_ * inner_, threads_for(work), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t base = (r / inner_) * len_ * inner_ + r % inner_;
        float dot = 0.0f;
        for (int64_t k = 0; k < len_; ++k) dot += dy[base + k * inner_] * y[base + k * inner_];
        for (int64_t k = 0; k < len_; ++k) {
          const int64_t i = base + k * inner_;
          dx[i] = y[i] * (dy[i] - dot);
        }
      }
    });
  }

 private:
  int64_t outer_, len_, inner_;
};

// --------------------------------------------------------- LayerNormGrad

// Per row: xhat = (x - mean) * inv, g = dY * scale,
// dX = inv * (g - mean(g) - xhat * mean(g * xhat)); per column:
// dScale = sum over rows of dY * xhat, dBias = sum of dY.
class LayerNormGradKernel final : public CpuKernel {
 public:
  LayerNormGradKernel(int64_t rows, int64_t d, float eps) : rows_(rows), d_(d), eps_(eps) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const float*>(in[0]);
    const auto* x = static_cast<const float*>(in[1]);
    const auto* scale = static_cast<const float*>(in[2]);
    auto* dx = static_cast<float*>(out[0]);
    auto* dscale = static_cast<float*>(out[1]);
    auto* dbias = static_cast<float*>(out[2]);
    mean_.resize(static_cast<size_t>(rows_));
    inv_.resize(static_cast<size_t>(rows_));
    const double work = 10.0 * static_cast<double>(rows_) * d_;
    parallel_for(rows_, threads_for(work), [&](int64_t r0, int64_t r1) {
      std::vector<float> tmp(static_cast<size_t>(d_));
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = x + r * d_;
        const float* dyr = dy + r * d_;
        const float mean = sum_f32(xr, d_) / static_cast<float>(d_);
        for (int64_t i = 0; i < d_; ++i)
          tmp[static_cast<size_t>(i)] = (xr[i] - mean) * (xr[i] - mean);
        const float var = sum_f32(tmp.data(), d_) / static_cast<float>(d_);
        const float inv = 1.0f / std::sqrt(var + eps_);
        mean_[static_cast<size_t>(r)] = mean;
        inv_[static_cast<size_t>(r)] = inv;
        float sum_g = 0.0f, sum_gx = 0.0f;
        for (int64_t i = 0; i < d_; ++i) {
          const float g = dyr[i] * scale[i];
          sum_g += g;
          sum_gx += g * (xr[i] - mean) * inv;
        }
        const float mg = sum_g / static_cast<float>(d_), mgx = sum_gx / static_cast<float>(d_);
        for (int64_t i = 0; i < d_; ++i) {
          const float xhat = (xr[i] - mean) * inv;
          dx[r * d_ + i] = inv * (dyr[i] * scale[i] - mg - xhat * mgx);
        }
      }
    });
    parallel_for(d_, threads_for(work / 2), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        float ds = 0.0f, db = 0.0f;
        for (int64_t r = 0; r < rows_; ++r) {
          const float g = dy[r * d_ + i];
          ds += g * (x[r * d_ + i] - mean_[static_cast<size_t>(r)]) * inv_[static_cast<size_t>(r)];
          db += g;
        }
        dscale[i] = ds;
        dbias[i] = db;
      }
    });
  }

 private:
  int64_t rows_, d_;
  float eps_;
  std::vector<float> mean_, inv_;  // per row, reused between runs
};

// ------------------------------------------------------------- BatchNorm

// X viewed as [N, C, inner]; statistics per channel over N * inner values.
struct ChannelLayout {
  int64_t n, c, inner;
  int64_t count() const { return n * inner; }
};

// Batch statistics, normalisation and the running-statistics update
// (ONNX's training mode: population variance, running = momentum * running
// + (1 - momentum) * batch).
class BatchNormTrainingKernel final : public CpuKernel {
 public:
  BatchNormTrainingKernel(ChannelLayout l, float eps, float momentum)
      : l_(l), eps_(eps), momentum_(momentum) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const float*>(in[0]);
    const auto* scale = static_cast<const float*>(in[1]);
    const auto* bias = static_cast<const float*>(in[2]);
    const auto* rmean = static_cast<const float*>(in[3]);
    const auto* rvar = static_cast<const float*>(in[4]);
    auto* y = static_cast<float*>(out[0]);
    auto* rmean_out = static_cast<float*>(out[1]);
    auto* rvar_out = static_cast<float*>(out[2]);
    auto* saved_mean = static_cast<float*>(out[3]);
    auto* saved_invstd = static_cast<float*>(out[4]);
    const double work = 6.0 * static_cast<double>(l_.n) * l_.c * l_.inner;
    const auto cnt = static_cast<double>(l_.count());
    parallel_for(l_.c, threads_for(work), [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        // Two passes in double: the per-channel count can be large.
        double sum = 0;
        for (int64_t b = 0; b < l_.n; ++b) {
          const float* xp = x + (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) sum += xp[i];
        }
        const double mean = cnt > 0 ? sum / cnt : 0.0;
        double sq = 0;
        for (int64_t b = 0; b < l_.n; ++b) {
          const float* xp = x + (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
        }
        const double var = cnt > 0 ? sq / cnt : 0.0;
        const auto invstd = static_cast<float>(1.0 / std::sqrt(var + eps_));
        const auto m = static_cast<float>(mean);
        const float s = scale[ch] * invstd, b0 = bias[ch];
        for (int64_t b = 0; b < l_.n; ++b) {
          const float* xp = x + (b * l_.c + ch) * l_.inner;
          float* yp = y + (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) yp[i] = (xp[i] - m) * s + b0;
        }
        rmean_out[ch] = momentum_ * rmean[ch] + (1.0f - momentum_) * m;
        rvar_out[ch] = momentum_ * rvar[ch] + (1.0f - momentum_) * static_cast<float>(var);
        saved_mean[ch] = m;
        saved_invstd[ch] = invstd;
      }
    });
  }

 private:
  ChannelLayout l_;
  float eps_, momentum_;
};

// dBias = sum dY, dScale = sum dY * xhat,
// dX = scale * invstd / count * (count * dY - dBias - xhat * dScale).
class BatchNormGradKernel final : public CpuKernel {
 public:
  explicit BatchNormGradKernel(ChannelLayout l) : l_(l) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const float*>(in[0]);
    const auto* x = static_cast<const float*>(in[1]);
    const auto* scale = static_cast<const float*>(in[2]);
    const auto* mean = static_cast<const float*>(in[3]);
    const auto* invstd = static_cast<const float*>(in[4]);
    auto* dx = static_cast<float*>(out[0]);
    auto* dscale = static_cast<float*>(out[1]);
    auto* dbias = static_cast<float*>(out[2]);
    const double work = 6.0 * static_cast<double>(l_.n) * l_.c * l_.inner;
    const auto cnt = static_cast<float>(l_.count());
    parallel_for(l_.c, threads_for(work), [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        const float m = mean[ch], is = invstd[ch];
        double sb = 0, ss = 0;
        for (int64_t b = 0; b < l_.n; ++b) {
          const int64_t off = (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) {
            sb += dy[off + i];
            ss += static_cast<double>(dy[off + i]) * ((x[off + i] - m) * is);
          }
        }
        const auto db = static_cast<float>(sb), ds = static_cast<float>(ss);
        dbias[ch] = db;
        dscale[ch] = ds;
        const float k = cnt > 0 ? scale[ch] * is / cnt : 0.0f;
        for (int64_t b = 0; b < l_.n; ++b) {
          const int64_t off = (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) {
            const float xhat = (x[off + i] - m) * is;
            dx[off + i] = k * (cnt * dy[off + i] - db - xhat * ds);
          }
        }
      }
    });
  }

 private:
  ChannelLayout l_;
};

ChannelLayout channel_layout(const Ctx& c) {
  const auto& d = c.in[0].dims;
  return {d[0], d[1], product(d, 2)};
}

}  // namespace

std::unique_ptr<CpuKernel> make_relu_grad(Ctx& c) {
  return elementwise_grad(c, [](float dy, float x) { return x > 0.0f ? dy : 0.0f; });
}
std::unique_ptr<CpuKernel> make_sigmoid_grad(Ctx& c) {
  return elementwise_grad(c, [](float dy, float y) { return dy * y * (1.0f - y); });
}
std::unique_ptr<CpuKernel> make_tanh_grad(Ctx& c) {
  return elementwise_grad(c, [](float dy, float y) { return dy * (1.0f - y * y); });
}
std::unique_ptr<CpuKernel> make_gelu_grad(Ctx& c) {
  if (c.v.get_string("approximate", "none") == "tanh")
    return elementwise_grad(c, [](float dy, float x) { return dy * gelu_tanh_grad(x); });
  return elementwise_grad(c, [](float dy, float x) { return dy * gelu_erf_grad(x); });
}
std::unique_ptr<CpuKernel> make_clip_grad(Ctx& c) {
  const auto lo = static_cast<float>(c.v.get_float("min", -INFINITY));
  const auto hi = static_cast<float>(c.v.get_float("max", INFINITY));
  // The gradient passes where the clamp is the identity, bounds included
  // (PyTorch's clamp backward).
  return elementwise_grad(c,
                          [lo, hi](float dy, float x) { return x >= lo && x <= hi ? dy : 0.0f; });
}

std::unique_ptr<CpuKernel> make_softmax_grad(Ctx& c) {
  const auto& x = c.in[0].dims;
  const int64_t axis = c.axis(c.v.get_int("axis", -1), c.in[0].rank(), "axis");
  return std::make_unique<SoftmaxGradKernel>(product(x, 0, static_cast<size_t>(axis)),
                                             x[static_cast<size_t>(axis)],
                                             product(x, static_cast<size_t>(axis) + 1));
}

std::unique_ptr<CpuKernel> make_layernorm_grad(Ctx& c) {
  const auto& x = c.in[0].dims;
  const auto axis = static_cast<size_t>(c.axis(c.v.get_int("axis", -1), c.in[0].rank(), "axis"));
  return std::make_unique<LayerNormGradKernel>(product(x, 0, axis), product(x, axis),
                                               static_cast<float>(c.v.get_float("epsilon", 1e-5)));
}

std::unique_ptr<CpuKernel> make_batchnorm_training(Ctx& c) {
  return std::make_unique<BatchNormTrainingKernel>(
      channel_layout(c), static_cast<float>(c.v.get_float("epsilon", 1e-5)),
      static_cast<float>(c.v.get_float("momentum", 0.9)));
}

std::unique_ptr<CpuKernel> make_batchnorm_grad(Ctx& c) {
  return std::make_unique<BatchNormGradKernel>(channel_layout(c));
}

}  // namespace ampx::reference::detail
