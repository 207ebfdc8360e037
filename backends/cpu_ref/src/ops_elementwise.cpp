// Elementwise ops: Relu, Sigmoid, Tanh, Gelu, Clip (unary) and Add, Sub, Mul,
// Div (binary, NumPy broadcasting). Computed in the storage float type: f32
// (16-bit arrives here widened to f32) or f64.
#include <cmath>
#include <numbers>

#include "common.hpp"
#include "parallel.hpp"

namespace ampx::cpu_ref::detail {
namespace {

// ------------------------------------------------------------------ unary

struct ReluF {
  template <class T>
  T operator()(T x) const {
    return x < T(0) ? T(0) : x;  // NaN stays NaN
  }
  static constexpr double kCost = 1;
};
struct SigmoidF {
  template <class T>
  T operator()(T x) const {
    return T(1) / (T(1) + std::exp(-x));  // exp overflow gives 1/inf = 0
  }
  static constexpr double kCost = 20;
};
struct TanhF {
  template <class T>
  T operator()(T x) const {
    return std::tanh(x);
  }
  static constexpr double kCost = 20;
};
struct GeluErfF {  // x * Phi(x)
  template <class T>
  T operator()(T x) const {
    return T(0.5) * x * (T(1) + std::erf(x * T(std::numbers::sqrt2 / 2)));
  }
  static constexpr double kCost = 20;
};
struct GeluTanhF {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  template <class T>
  T operator()(T x) const {
    const T k = T(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);  // sqrt(2/pi)
    return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
  }
  static constexpr double kCost = 20;
};
struct ClipF {  // min(max(x, lo), hi), as NumPy: lo > hi gives hi; NaN stays NaN
  double lo, hi;
  template <class T>
  T operator()(T x) const {
    const T t = x < T(lo) ? T(lo) : x;
    return t > T(hi) ? T(hi) : t;
  }
  static constexpr double kCost = 1;
};

template <class T, class F>
class UnaryKernel final : public CpuKernel {
 public:
  UnaryKernel(int64_t n, F f) : n_(n), f_(f) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const T* x = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    parallel_for(n_, threads_for(static_cast<double>(n_) * F::kCost), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = f_(x[i]);
    });
  }

 private:
  int64_t n_;
  F f_;
};

template <class F>
std::unique_ptr<CpuKernel> make_unary(Ctx& c, F f) {
  c.arity(1, 1, 1);
  c.dims(c.out[0], "output", c.in[0].dims);
  if (c.dtype == AMPX_DTYPE_F64) return std::make_unique<UnaryKernel<double, F>>(c.in[0].numel, f);
  return std::make_unique<UnaryKernel<float, F>>(c.in[0].numel, f);
}

// ----------------------------------------------------------------- binary

struct AddF {
  template <class T>
  T operator()(T a, T b) const {
    return a + b;
  }
};
struct SubF {
  template <class T>
  T operator()(T a, T b) const {
    return a - b;
  }
};
struct MulF {
  template <class T>
  T operator()(T a, T b) const {
    return a * b;
  }
};
struct DivF {
  template <class T>
  T operator()(T a, T b) const {
    return a / b;
  }
};

// Output dims iterated as [outer..., inner] with per-input element strides
// (0 where broadcast). Size-1 dims are dropped and adjacent dims merged when
// both inputs are contiguous across them, so same-shape, scalar and
// trailing-bias patterns collapse to one or two dims.
struct BroadcastPlan {
  std::vector<int64_t> dims, sa, sb;
};

BroadcastPlan plan_broadcast(const std::vector<int64_t>& out, const std::vector<int64_t>& a,
                             const std::vector<int64_t>& b) {
  const size_t r = out.size();
  auto aligned = [&](const std::vector<int64_t>& d) {
    std::vector<int64_t> full(r, 1);
    std::copy(d.begin(), d.end(), full.begin() + static_cast<ptrdiff_t>(r - d.size()));
    std::vector<int64_t> s = dense_strides(full);
    for (size_t i = 0; i < r; ++i)
      if (full[i] == 1) s[i] = 0;
    return s;
  };
  const std::vector<int64_t> sa = aligned(a), sb = aligned(b);
  BroadcastPlan p;
  for (size_t i = 0; i < r; ++i) {
    if (out[i] == 1) continue;
    if (!p.dims.empty() && p.sa.back() == sa[i] * out[i] && p.sb.back() == sb[i] * out[i]) {
      p.dims.back() *= out[i];
      p.sa.back() = sa[i];
      p.sb.back() = sb[i];
    } else {
      p.dims.push_back(out[i]);
      p.sa.push_back(sa[i]);
      p.sb.push_back(sb[i]);
    }
  }
  return p;
}

template <class T, class F>
inline void binary_run(const T* __restrict a, int64_t sa, const T* __restrict b, int64_t sb,
                       T* __restrict y, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const T bv = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
  } else if (sa == 0 && sb == 1) {
    const T av = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i * sa], b[i * sb]);
  }
}

template <class T, class F>
class BinaryKernel final : public CpuKernel {
 public:
  BinaryKernel(BroadcastPlan p, int64_t n) : p_(std::move(p)), n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const T* a = static_cast<const T*>(in[0]);
    const T* b = static_cast<const T*>(in[1]);
    T* y = static_cast<T*>(out[0]);
    const F f{};
    if (n_ == 0) return;
    if (p_.dims.empty()) {  // every dim is 1
      y[0] = f(a[0], b[0]);
      return;
    }
    const int threads = threads_for(static_cast<double>(n_));
    const size_t r = p_.dims.size();
    const int64_t inner = p_.dims.back();
    if (r == 1) {
      parallel_for(inner, threads, [&](int64_t s, int64_t e) {
        binary_run(a + s * p_.sa[0], p_.sa[0], b + s * p_.sb[0], p_.sb[0], y + s, e - s, f);
      });
      return;
    }
    const int64_t rows = n_ / inner;
    parallel_for(rows, threads, [&](int64_t s, int64_t e) {
      // Odometer over the outer dims, starting at row s.
      std::vector<int64_t> idx(r - 1);
      int64_t rem = s, oa = 0, ob = 0;
      for (size_t d = r - 1; d-- > 0;) {
        idx[d] = rem % p_.dims[d];
        rem /= p_.dims[d];
        oa += idx[d] * p_.sa[d];
        ob += idx[d] * p_.sb[d];
      }
      for (int64_t row = s; row < e; ++row) {
        binary_run(a + oa, p_.sa[r - 1], b + ob, p_.sb[r - 1], y + row * inner, inner, f);
        for (size_t d = r - 1; d-- > 0;) {
          oa += p_.sa[d];
          ob += p_.sb[d];
          if (++idx[d] < p_.dims[d]) break;
          oa -= p_.sa[d] * p_.dims[d];
          ob -= p_.sb[d] * p_.dims[d];
          idx[d] = 0;
        }
      }
    });
  }

 private:
  BroadcastPlan p_;
  int64_t n_;
};

template <class F>
std::unique_ptr<CpuKernel> make_binary(Ctx& c) {
  c.arity(2, 2, 1);
  const auto& a = c.in[0].dims;
  const auto& b = c.in[1].dims;
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> want(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      c.fail("input shapes " + dims_str(a) + " and " + dims_str(b) + " do not broadcast");
    }
    want[i] = da == 1 ? db : da;
  }
  c.dims(c.out[0], "output", want);
  BroadcastPlan p = plan_broadcast(want, a, b);
  const int64_t n = c.out[0].numel;
  if (c.dtype == AMPX_DTYPE_F64) return std::make_unique<BinaryKernel<double, F>>(std::move(p), n);
  return std::make_unique<BinaryKernel<float, F>>(std::move(p), n);
}

}  // namespace

std::unique_ptr<CpuKernel> make_relu(Ctx& c) {
  return make_unary(c, ReluF{});
}
std::unique_ptr<CpuKernel> make_sigmoid(Ctx& c) {
  return make_unary(c, SigmoidF{});
}
std::unique_ptr<CpuKernel> make_tanh(Ctx& c) {
  return make_unary(c, TanhF{});
}

// ------------------------------------------------------ fused epilogue

namespace {

// A contraction followed by its activation, applied in f32 to the output
// before the 16-bit wrapper rounds it: one rounding, as a fused kernel does.
template <class F>
class ActivationEpilogue final : public CpuKernel {
 public:
  ActivationEpilogue(std::unique_ptr<CpuKernel> inner, int64_t n, F f)
      : inner_(std::move(inner)), n_(n), f_(f) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    inner_->run(in, out);
    float* y = static_cast<float*>(out[0]);
    parallel_for(n_, threads_for(static_cast<double>(n_) * F::kCost), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = f_(y[i]);
    });
  }

 private:
  std::unique_ptr<CpuKernel> inner_;
  int64_t n_;
  F f_;
};

template <class F>
std::unique_ptr<CpuKernel> epilogue(std::unique_ptr<CpuKernel> inner, const Ctx& c, F f) {
  return std::make_unique<ActivationEpilogue<F>>(std::move(inner), c.out[0].numel, f);
}

}  // namespace

std::unique_ptr<CpuKernel> with_activation(std::unique_ptr<CpuKernel> inner, const Ctx& c) {
  const std::string act = c.v.get_string("activation", "none");
  if (act == "none") return inner;
  if (act == "relu") return epilogue(std::move(inner), c, ReluF{});
  if (act == "gelu") return epilogue(std::move(inner), c, GeluErfF{});
  if (act == "gelu_tanh") return epilogue(std::move(inner), c, GeluTanhF{});
  throw UnsupportedNode(c.v.where() + ": activation '" + act + "' has no kernel here");
}

std::unique_ptr<CpuKernel> make_gelu(Ctx& c) {
  const std::string approx = c.v.get_string("approximate", "none");
  if (approx == "none") return make_unary(c, GeluErfF{});
  if (approx == "tanh") return make_unary(c, GeluTanhF{});
  c.fail("attribute 'approximate' must be \"none\" or \"tanh\", got \"" + approx + "\"");
}

std::unique_ptr<CpuKernel> make_clip(Ctx& c) {
  const double lo = c.v.get_float("min", -INFINITY);
  const double hi = c.v.get_float("max", INFINITY);
  if (std::isnan(lo) || std::isnan(hi)) c.fail("attributes 'min' and 'max' must not be NaN");
  return make_unary(c, ClipF{lo, hi});
}

std::unique_ptr<CpuKernel> make_add(Ctx& c) {
  return make_binary<AddF>(c);
}
std::unique_ptr<CpuKernel> make_sub(Ctx& c) {
  return make_binary<SubF>(c);
}
std::unique_ptr<CpuKernel> make_mul(Ctx& c) {
  return make_binary<MulF>(c);
}
std::unique_ptr<CpuKernel> make_div(Ctx& c) {
  return make_binary<DivF>(c);
}

}  // namespace ampx::cpu_ref::detail
