// Normalisations and reductions in f32 (f64 in the float64 mode: every
// kernel is a template on its element type T): BatchNorm, LayerNorm, RMSNorm,
// Softmax, LogSoftmax, ReduceMean, ReduceSum.
#include <algorithm>
#include <cmath>

#include "common.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

// ------------------------------------------------------------ BatchNorm

template <class T>
class BatchNormKernel final : public CpuKernel {
 public:
  BatchNormKernel(int64_t n, int64_t c, int64_t inner, double eps)
      : n_(n), c_(c), inner_(inner), eps_(static_cast<T>(eps)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    const auto* scale = static_cast<const T*>(in[1]);
    const auto* bias = static_cast<const T*>(in[2]);
    const auto* mean = static_cast<const T*>(in[3]);
    const auto* var = static_cast<const T*>(in[4]);
    auto* y = static_cast<T*>(out[0]);
    const double work = static_cast<double>(n_) * c_ * inner_;
    parallel_for(n_ * c_, threads_for(work), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t ch = p % c_;
        const T s = scale[ch] / std::sqrt(var[ch] + eps_);
        const T m = mean[ch], b = bias[ch];
        const T* xp = x + p * inner_;
        T* yp = y + p * inner_;
        for (int64_t i = 0; i < inner_; ++i) yp[i] = (xp[i] - m) * s + b;
      }
    });
  }

 private:
  int64_t n_, c_, inner_;
  T eps_;
};

// ------------------------------------------------------------ LayerNorm

template <class T>
class LayerNormKernel final : public CpuKernel {
 public:
  LayerNormKernel(int64_t rows, int64_t d, double eps, bool bias)
      : rows_(rows), d_(d), eps_(static_cast<T>(eps)), bias_(bias) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    const auto* scale = static_cast<const T*>(in[1]);
    const T* bias = bias_ ? static_cast<const T*>(in[2]) : nullptr;
    auto* y = static_cast<T*>(out[0]);
    const double work = 8.0 * static_cast<double>(rows_) * d_;
    parallel_for(rows_, threads_for(work), [&](int64_t r0, int64_t r1) {
      std::vector<T> centred(static_cast<size_t>(d_));
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = x + r * d_;
        T* yr = y + r * d_;
        // Two passes: mean, then the variance of the centred values.
        const T mean = sum_n(xr, d_) / static_cast<T>(d_);
        for (int64_t i = 0; i < d_; ++i) {
          const T c = xr[i] - mean;
          centred[static_cast<size_t>(i)] = c * c;
        }
        const T var = sum_n(centred.data(), d_) / static_cast<T>(d_);
        const T inv = T(1) / std::sqrt(var + eps_);
        if (bias) {
          for (int64_t i = 0; i < d_; ++i) yr[i] = (xr[i] - mean) * inv * scale[i] + bias[i];
        } else {
          for (int64_t i = 0; i < d_; ++i) yr[i] = (xr[i] - mean) * inv * scale[i];
        }
      }
    });
  }

 private:
  int64_t rows_, d_;
  T eps_;
  bool bias_;
};

// -------------------------------------------------------------- RMSNorm

// y = x / sqrt(mean(x^2) + eps) * scale per row of d elements (ONNX
// RMSNormalization). The squares are summed as LayerNorm sums its centred
// squares (sum_n), in T: f32 for f32 and 16-bit (ONNX's stash_type 1), f64
// in the float64 mode.
template <class T>
class RmsNormKernel final : public CpuKernel {
 public:
  RmsNormKernel(int64_t rows, int64_t d, double eps) : rows_(rows), d_(d), eps_(eps) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    const auto* scale = static_cast<const T*>(in[1]);
    auto* y = static_cast<T*>(out[0]);
    const double work = 5.0 * static_cast<double>(rows_) * d_;
    parallel_for(rows_, threads_for(work), [&](int64_t r0, int64_t r1) {
      std::vector<T> squares(static_cast<size_t>(d_));
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = x + r * d_;
        T* yr = y + r * d_;
        for (int64_t i = 0; i < d_; ++i) squares[static_cast<size_t>(i)] = xr[i] * xr[i];
        const T mean_sq = sum_n(squares.data(), d_) / static_cast<T>(d_);
        const T inv = T(1) / std::sqrt(mean_sq + static_cast<T>(eps_));
        for (int64_t i = 0; i < d_; ++i) yr[i] = xr[i] * inv * scale[i];
      }
    });
  }

 private:
  int64_t rows_, d_;
  double eps_;
};

// -------------------------------------------------------------- Softmax

// Softmax, or LogSoftmax with `log`: one pass for the max, one for the sum
// of exponentials, one to write.
template <class T>
class SoftmaxKernel final : public CpuKernel {
 public:
  SoftmaxKernel(int64_t outer, int64_t len, int64_t inner, bool log)
      : outer_(outer), len_(len), inner_(inner), log_(log) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    const double work = 20.0 * static_cast<double>(outer_) * len_ * inner_;
    // One task per (outer, inner) line of `len_` elements, `inner_` apart.
    parallel_for(outer_ * inner_, threads_for(work), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t base = (t / inner_) * len_ * inner_ + t % inner_;
        line(x + base, y + base);
      }
    });
  }

 private:
  void line(const T* x, T* y) const {
    const int64_t s = inner_;
    if (len_ == 0) return;
    T m = x[0];
    for (int64_t i = 1; i < len_; ++i) m = std::max(m, x[i * s]);
    T sum = T(0);
    for (int64_t i = 0; i < len_; ++i) {
      const T e = std::exp(x[i * s] - m);
      if (!log_) y[i * s] = e;
      sum += e;
    }
    if (log_) {
      const T lse = m + std::log(sum);
      for (int64_t i = 0; i < len_; ++i) y[i * s] = x[i * s] - lse;
    } else {
      for (int64_t i = 0; i < len_; ++i) y[i * s] /= sum;
    }
  }

  int64_t outer_, len_, inner_;
  bool log_;
};

// ---------------------------------------------------------------- Reduce

// Kept dims (the output, in order) and reduced dims of the input, each with
// input element strides, contiguous neighbours merged.
struct Dims {
  std::vector<int64_t> n, s;
  void add(int64_t dim, int64_t stride) {
    if (dim == 1) return;
    if (!n.empty() && s.back() == stride * dim) {
      n.back() *= dim;
      s.back() = stride;
    } else {
      n.push_back(dim);
      s.push_back(stride);
    }
  }
};

template <class T>
class ReduceKernel final : public CpuKernel {
 public:
  ReduceKernel(Dims kept, Dims red, bool mean)
      : k_(std::move(kept)), r_(std::move(red)), mean_(mean) {
    outs_ = product(k_.n);
    count_ = product(r_.n);
  }
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    const double work = static_cast<double>(outs_) * static_cast<double>(count_);
    parallel_for(outs_, threads_for(work), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        int64_t off = 0, rem = o;
        for (size_t d = k_.n.size(); d-- > 0;) {
          off += (rem % k_.n[d]) * k_.s[d];
          rem /= k_.n[d];
        }
        const T sum = reduce(x + off);
        y[o] = mean_ ? sum / static_cast<T>(count_) : sum;
      }
    });
  }

 private:
  T reduce(const T* x) const {
    if (count_ == 0) return T(0);
    if (r_.n.empty()) return x[0];
    const size_t r = r_.n.size();
    const int64_t inner = r_.n.back(), is = r_.s.back();
    std::vector<int64_t> idx(r - 1, 0);
    T total = T(0);
    int64_t off = 0;
    for (int64_t row = 0, rows = count_ / inner; row < rows; ++row) {
      if (is == 1) {
        total += sum_n(x + off, inner);
      } else {
        for (int64_t i = 0; i < inner; ++i) total += x[off + i * is];
      }
      for (size_t d = r - 1; d-- > 0;) {
        off += r_.s[d];
        if (++idx[d] < r_.n[d]) break;
        off -= r_.s[d] * r_.n[d];
        idx[d] = 0;
      }
    }
    return total;
  }

  Dims k_, r_;
  bool mean_;
  int64_t outs_ = 1, count_ = 1;
};

std::unique_ptr<CpuKernel> make_reduce(Ctx& c, bool mean) {
  c.arity(1, 1, 1);
  const auto& d = c.in[0].dims;
  const auto [reduced, keep] = reduced_axes(c);
  std::vector<int64_t> want;
  const std::vector<int64_t> s = dense_strides(d);
  Dims kept, red;
  for (size_t i = 0; i < d.size(); ++i) {
    if (reduced[i]) {
      red.add(d[i], s[i]);
      if (keep) want.push_back(1);
    } else {
      kept.add(d[i], s[i]);
      want.push_back(d[i]);
    }
  }
  c.dims(c.out[0], "output", want);
  return typed<ReduceKernel>(c, std::move(kept), std::move(red), mean);
}

}  // namespace

ReducedAxes reduced_axes(Ctx& c) {
  const auto& d = c.in[0].dims;
  const auto r = static_cast<int64_t>(d.size());
  const std::vector<int64_t> axes = c.v.get_ints("axes");
  const int64_t keep = c.v.get_int("keepdims", 1);
  if (keep != 0 && keep != 1) c.fail("attribute 'keepdims' must be 0 or 1");
  ReducedAxes out{std::vector<bool>(d.size(), axes.empty()), keep == 1};
  for (int64_t a : axes) {
    const auto k = static_cast<size_t>(c.axis(a, r, "axes"));
    if (out.reduced[k])
      c.fail("attribute 'axes' " + dims_str(axes) + " repeats axis " + std::to_string(k));
    out.reduced[k] = true;
  }
  return out;
}

std::unique_ptr<CpuKernel> make_batchnorm(Ctx& c) {
  c.arity(5, 5, 1);
  c.min_rank(c.in[0], "input X", 2);
  const auto& x = c.in[0].dims;
  const char* names[] = {"", "scale", "bias", "mean", "var"};
  for (size_t i = 1; i < 5; ++i) {
    c.rank(c.in[i], names[i], 1);
    c.dims(c.in[i], names[i], {x[1]});
  }
  c.dims(c.out[0], "output", x);
  const double eps = c.v.get_float("epsilon", 1e-5);
  if (!(eps >= 0)) c.fail("attribute 'epsilon' must be >= 0");
  return with_activation(typed<BatchNormKernel>(c, x[0], x[1], product(x, 2), eps), c);
}

namespace {

// LayerNorm's and RMSNorm's shared checks: X normalised over [axis, rank),
// scale (and bias) of those dims, Y like X, epsilon >= 0.
struct RowNorm {
  int64_t rows;
  int64_t cols;
  double eps;
};

RowNorm row_norm(Ctx& c, const char* op) {
  const auto& x = c.in[0].dims;
  const auto r = static_cast<int64_t>(x.size());
  if (r == 0) c.fail(std::string("input X is a scalar; ") + op + " needs rank >= 1");
  const auto axis = static_cast<size_t>(c.axis(c.v.get_int("axis", -1), r, "axis"));
  const std::vector<int64_t> norm(x.begin() + static_cast<ptrdiff_t>(axis), x.end());
  c.dims(c.in[1], "scale", norm);
  if (c.in.size() == 3) c.dims(c.in[2], "bias", norm);
  c.dims(c.out[0], "output", x);
  const double eps = c.v.get_float("epsilon", 1e-5);
  if (!(eps >= 0)) c.fail("attribute 'epsilon' must be >= 0");
  return {product(x, 0, axis), product(norm), eps};
}

}  // namespace

std::unique_ptr<CpuKernel> make_layernorm(Ctx& c) {
  c.arity(2, 3, 1);
  const RowNorm n = row_norm(c, "LayerNorm");
  return typed<LayerNormKernel>(c, n.rows, n.cols, n.eps, c.in.size() == 3);
}

std::unique_ptr<CpuKernel> make_rmsnorm(Ctx& c) {
  c.arity(2, 2, 1);
  const RowNorm n = row_norm(c, "RMSNorm");
  return typed<RmsNormKernel>(c, n.rows, n.cols, n.eps);
}

namespace {

std::unique_ptr<CpuKernel> softmax_kernel(Ctx& c, const char* op, bool log) {
  c.arity(1, 1, 1);
  const auto& x = c.in[0].dims;
  const auto r = static_cast<int64_t>(x.size());
  if (r == 0) c.fail(std::string("input X is a scalar; ") + op + " needs rank >= 1");
  const auto axis = static_cast<size_t>(c.axis(c.v.get_int("axis", -1), r, "axis"));
  c.dims(c.out[0], "output", x);
  return typed<SoftmaxKernel>(c, product(x, 0, axis), x[axis], product(x, axis + 1), log);
}

}  // namespace

std::unique_ptr<CpuKernel> make_softmax(Ctx& c) {
  return softmax_kernel(c, "Softmax", false);
}

std::unique_ptr<CpuKernel> make_log_softmax(Ctx& c) {
  return softmax_kernel(c, "LogSoftmax", true);
}

std::unique_ptr<CpuKernel> make_reduce_mean(Ctx& c) {
  return make_reduce(c, true);
}
std::unique_ptr<CpuKernel> make_reduce_sum(Ctx& c) {
  return make_reduce(c, false);
}

}  // namespace ampx::reference::detail
