// Backward kernels of the activations and normalisations in f32 (f64 in
// the float64 mode: every kernel is a template on its element type T):
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

// dX = dY * f'(t), where t is X or the forward output Y (per op). F is
// called with two T.
template <class T, class F>
class ElementwiseGradKernel final : public CpuKernel {
 public:
  ElementwiseGradKernel(int64_t n, F f) : n_(n), f_(f) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const T*>(in[0]);
    const auto* t = static_cast<const T*>(in[1]);
    auto* dx = static_cast<T*>(out[0]);
    parallel_for(n_, threads_for(4.0 * static_cast<double>(n_)), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) dx[i] = f_(dy[i], t[i]);
    });
  }

 private:
  int64_t n_;
  F f_;
};

// F: a generic callable (T dy, T t) -> T.
template <class F>
std::unique_ptr<CpuKernel> elementwise_grad(Ctx& c, F f) {
  if (c.dtype == AMPX_DTYPE_F64)
    return std::make_unique<ElementwiseGradKernel<double, F>>(c.in[0].numel, f);
  return std::make_unique<ElementwiseGradKernel<float, F>>(c.in[0].numel, f);
}

// The derivative of x * Phi(x): Phi(x) + x * phi(x).
template <class T>
T gelu_erf_grad(T x) {
  constexpr T kInvSqrt2 = static_cast<T>(std::numbers::sqrt2 / 2);
  constexpr T kInvSqrt2Pi = static_cast<T>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
  return T(0.5) * (T(1) + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(T(-0.5) * x * x);
}

// The derivative of 0.5 x (1 + tanh(k (x + 0.044715 x^3))).
template <class T>
T gelu_tanh_grad(T x) {
  constexpr T kK = static_cast<T>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
  constexpr T kC = static_cast<T>(0.044715);
  const T t = std::tanh(kK * (x + kC * x * x * x));
  return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * kK * (T(1) + T(3) * kC * x * x);
}

// ----------------------------------------------------------- SoftmaxGrad

// dX = Y * (dY - sum_axis(dY * Y)).
template <class T>
class SoftmaxGradKernel final : public CpuKernel {
 public:
  SoftmaxGradKernel(int64_t outer, int64_t len, int64_t inner)
      : outer_(outer), len_(len), inner_(inner) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const T*>(in[0]);
    const auto* y = static_cast<const T*>(in[1]);
    auto* dx = static_cast<T*>(out[0]);
    const double work = 3.0 * static_cast<double>(outer_) * len_ * inner_;
    parallel_for(outer_ * inner_, threads_for(work), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t base = (r / inner_) * len_ * inner_ + r % inner_;
        T dot = T(0);
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
template <class T>
class LayerNormGradKernel final : public CpuKernel {
 public:
  LayerNormGradKernel(int64_t rows, int64_t d, double eps)
      : rows_(rows), d_(d), eps_(static_cast<T>(eps)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const T*>(in[0]);
    const auto* x = static_cast<const T*>(in[1]);
    const auto* scale = static_cast<const T*>(in[2]);
    auto* dx = static_cast<T*>(out[0]);
    auto* dscale = static_cast<T*>(out[1]);
    auto* dbias = static_cast<T*>(out[2]);
    mean_.resize(static_cast<size_t>(rows_));
    inv_.resize(static_cast<size_t>(rows_));
    const double work = 10.0 * static_cast<double>(rows_) * d_;
    parallel_for(rows_, threads_for(work), [&](int64_t r0, int64_t r1) {
      std::vector<T> tmp(static_cast<size_t>(d_));
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = x + r * d_;
        const T* dyr = dy + r * d_;
        const T mean = sum_n(xr, d_) / static_cast<T>(d_);
        for (int64_t i = 0; i < d_; ++i)
          tmp[static_cast<size_t>(i)] = (xr[i] - mean) * (xr[i] - mean);
        const T var = sum_n(tmp.data(), d_) / static_cast<T>(d_);
        const T inv = T(1) / std::sqrt(var + eps_);
        mean_[static_cast<size_t>(r)] = mean;
        inv_[static_cast<size_t>(r)] = inv;
        T sum_g = T(0), sum_gx = T(0);
        for (int64_t i = 0; i < d_; ++i) {
          const T g = dyr[i] * scale[i];
          sum_g += g;
          sum_gx += g * (xr[i] - mean) * inv;
        }
        const T mg = sum_g / static_cast<T>(d_), mgx = sum_gx / static_cast<T>(d_);
        for (int64_t i = 0; i < d_; ++i) {
          const T xhat = (xr[i] - mean) * inv;
          dx[r * d_ + i] = inv * (dyr[i] * scale[i] - mg - xhat * mgx);
        }
      }
    });
    parallel_for(d_, threads_for(work / 2), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        T ds = T(0), db = T(0);
        for (int64_t r = 0; r < rows_; ++r) {
          const T g = dy[r * d_ + i];
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
  T eps_;
  std::vector<T> mean_, inv_;  // per row, reused between runs
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
template <class T>
class BatchNormTrainingKernel final : public CpuKernel {
 public:
  BatchNormTrainingKernel(ChannelLayout l, double eps, double momentum)
      : l_(l), eps_(static_cast<T>(eps)), momentum_(static_cast<T>(momentum)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    const auto* scale = static_cast<const T*>(in[1]);
    const auto* bias = static_cast<const T*>(in[2]);
    const auto* rmean = static_cast<const T*>(in[3]);
    const auto* rvar = static_cast<const T*>(in[4]);
    auto* y = static_cast<T*>(out[0]);
    auto* rmean_out = static_cast<T*>(out[1]);
    auto* rvar_out = static_cast<T*>(out[2]);
    auto* saved_mean = static_cast<T*>(out[3]);
    auto* saved_invstd = static_cast<T*>(out[4]);
    const double work = 6.0 * static_cast<double>(l_.n) * l_.c * l_.inner;
    const auto cnt = static_cast<double>(l_.count());
    parallel_for(l_.c, threads_for(work), [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        // Two passes in double: the per-channel count can be large.
        double sum = 0;
        for (int64_t b = 0; b < l_.n; ++b) {
          const T* xp = x + (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) sum += xp[i];
        }
        const double mean = cnt > 0 ? sum / cnt : 0.0;
        double sq = 0;
        for (int64_t b = 0; b < l_.n; ++b) {
          const T* xp = x + (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
        }
        const double var = cnt > 0 ? sq / cnt : 0.0;
        const auto invstd = static_cast<T>(1.0 / std::sqrt(var + eps_));
        const auto m = static_cast<T>(mean);
        const T s = scale[ch] * invstd, b0 = bias[ch];
        for (int64_t b = 0; b < l_.n; ++b) {
          const T* xp = x + (b * l_.c + ch) * l_.inner;
          T* yp = y + (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) yp[i] = (xp[i] - m) * s + b0;
        }
        rmean_out[ch] = momentum_ * rmean[ch] + (T(1) - momentum_) * m;
        rvar_out[ch] = momentum_ * rvar[ch] + (T(1) - momentum_) * static_cast<T>(var);
        saved_mean[ch] = m;
        saved_invstd[ch] = invstd;
      }
    });
  }

 private:
  ChannelLayout l_;
  T eps_, momentum_;
};

// dBias = sum dY, dScale = sum dY * xhat,
// dX = scale * invstd / count * (count * dY - dBias - xhat * dScale).
template <class T>
class BatchNormGradKernel final : public CpuKernel {
 public:
  explicit BatchNormGradKernel(ChannelLayout l) : l_(l) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* dy = static_cast<const T*>(in[0]);
    const auto* x = static_cast<const T*>(in[1]);
    const auto* scale = static_cast<const T*>(in[2]);
    const auto* mean = static_cast<const T*>(in[3]);
    const auto* invstd = static_cast<const T*>(in[4]);
    auto* dx = static_cast<T*>(out[0]);
    auto* dscale = static_cast<T*>(out[1]);
    auto* dbias = static_cast<T*>(out[2]);
    const double work = 6.0 * static_cast<double>(l_.n) * l_.c * l_.inner;
    const auto cnt = static_cast<T>(l_.count());
    parallel_for(l_.c, threads_for(work), [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        const T m = mean[ch], is = invstd[ch];
        double sb = 0, ss = 0;
        for (int64_t b = 0; b < l_.n; ++b) {
          const int64_t off = (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) {
            sb += dy[off + i];
            ss += static_cast<double>(dy[off + i]) * ((x[off + i] - m) * is);
          }
        }
        const auto db = static_cast<T>(sb), ds = static_cast<T>(ss);
        dbias[ch] = db;
        dscale[ch] = ds;
        const T k = cnt > 0 ? scale[ch] * is / cnt : T(0);
        for (int64_t b = 0; b < l_.n; ++b) {
          const int64_t off = (b * l_.c + ch) * l_.inner;
          for (int64_t i = 0; i < l_.inner; ++i) {
            const T xhat = (x[off + i] - m) * is;
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
  return elementwise_grad(c, []<class T>(T dy, T x) { return x > T(0) ? dy : T(0); });
}
std::unique_ptr<CpuKernel> make_sigmoid_grad(Ctx& c) {
  return elementwise_grad(c, []<class T>(T dy, T y) { return dy * y * (T(1) - y); });
}
std::unique_ptr<CpuKernel> make_tanh_grad(Ctx& c) {
  return elementwise_grad(c, []<class T>(T dy, T y) { return dy * (T(1) - y * y); });
}
std::unique_ptr<CpuKernel> make_gelu_grad(Ctx& c) {
  if (c.v.get_string("approximate", "none") == "tanh")
    return elementwise_grad(c, []<class T>(T dy, T x) { return dy * gelu_tanh_grad(x); });
  return elementwise_grad(c, []<class T>(T dy, T x) { return dy * gelu_erf_grad(x); });
}
std::unique_ptr<CpuKernel> make_clip_grad(Ctx& c) {
  const double lo = c.v.get_float("min", -INFINITY);
  const double hi = c.v.get_float("max", INFINITY);
  // The gradient passes where the clamp is the identity, bounds included
  // (PyTorch's clamp backward). The bounds are compared in T, as stored.
  return elementwise_grad(c, [lo, hi]<class T>(T dy, T x) {
    return x >= static_cast<T>(lo) && x <= static_cast<T>(hi) ? dy : T(0);
  });
}

std::unique_ptr<CpuKernel> make_softmax_grad(Ctx& c) {
  const auto& x = c.in[0].dims;
  const int64_t axis = c.axis(c.v.get_int("axis", -1), c.in[0].rank(), "axis");
  return typed<SoftmaxGradKernel>(c, product(x, 0, static_cast<size_t>(axis)),
                                  x[static_cast<size_t>(axis)],
                                  product(x, static_cast<size_t>(axis) + 1));
}

std::unique_ptr<CpuKernel> make_layernorm_grad(Ctx& c) {
  const auto& x = c.in[0].dims;
  const auto axis = static_cast<size_t>(c.axis(c.v.get_int("axis", -1), c.in[0].rank(), "axis"));
  return typed<LayerNormGradKernel>(c, product(x, 0, axis), product(x, axis),
                                    c.v.get_float("epsilon", 1e-5));
}

std::unique_ptr<CpuKernel> make_batchnorm_training(Ctx& c) {
  return typed<BatchNormTrainingKernel>(c, channel_layout(c), c.v.get_float("epsilon", 1e-5),
                                        c.v.get_float("momentum", 0.9));
}

std::unique_ptr<CpuKernel> make_batchnorm_grad(Ctx& c) {
  return typed<BatchNormGradKernel>(c, channel_layout(c));
}

}  // namespace ampx::reference::detail
