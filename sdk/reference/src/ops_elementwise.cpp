// Elementwise ops: Relu, Sigmoid, Tanh, Gelu, Clip, LeakyRelu, HardSigmoid,
// HardSwish, Erf, Sqrt, Reciprocal, Exp, Log, Neg, Abs, Floor, Ceil, Round,
// Softplus, Mish, Sin ... Atanh, Not (unary); Add, Sub, Mul, Div, Pow, PRelu, the comparisons
// (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), And, Or and Where, and
// the variadic Min, Max, Sum, Mean (NumPy broadcasting). Computed in the
// storage float type: f32 (16-bit arrives here widened to f32) or f64; Add,
// Sub, Mul, Div, Neg, Abs, the comparisons, Min, Max and Where also in i64 /
// i32 (wrapping two's complement); Not, And, Or on bool.
#include <array>
#include <cmath>
#include <functional>
#include <numbers>
#include <type_traits>

#include "common.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
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

struct LeakyReluF {
  double alpha;
  template <class T>
  T operator()(T x) const {
    return x < T(0) ? T(alpha) * x : x;
  }
  static constexpr double kCost = 1;
};
struct HardSigmoidF {  // max(0, min(1, alpha x + beta))
  double alpha, beta;
  template <class T>
  T operator()(T x) const {
    const T t = T(alpha) * x + T(beta);
    return t < T(0) ? T(0) : t > T(1) ? T(1) : t;
  }
  static constexpr double kCost = 2;
};
struct HardSwishF {  // x max(0, min(1, x/6 + 1/2))
  template <class T>
  T operator()(T x) const {
    const T t = x / T(6) + T(0.5);
    return x * (t < T(0) ? T(0) : t > T(1) ? T(1) : t);
  }
  static constexpr double kCost = 3;
};
struct SwishF {  // x sigmoid(x): Sigmoid then Mul, the SiLU exporters write
  template <class T>
  T operator()(T x) const {
    return x / (T(1) + std::exp(-x));
  }
  static constexpr double kCost = 21;
};
struct ErfF {
  template <class T>
  T operator()(T x) const {
    return std::erf(x);
  }
  static constexpr double kCost = 20;
};
struct SqrtF {
  template <class T>
  T operator()(T x) const {
    return std::sqrt(x);
  }
  static constexpr double kCost = 5;
};
struct ReciprocalF {
  template <class T>
  T operator()(T x) const {
    return T(1) / x;
  }
  static constexpr double kCost = 2;
};
struct ExpF {
  template <class T>
  T operator()(T x) const {
    return std::exp(x);
  }
  static constexpr double kCost = 20;
};
struct LogF {
  template <class T>
  T operator()(T x) const {
    return std::log(x);
  }
  static constexpr double kCost = 20;
};
// Integers wrap (two's complement) instead of overflowing.
template <class T>
T wrap(std::make_unsigned_t<T> v) {
  return static_cast<T>(v);
}
struct NegF {
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return wrap<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(x));
    else
      return -x;
  }
  static constexpr double kCost = 1;
};
struct BitNotF {  // integers only (the op set refuses the rest)
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(~x);
    return x;
  }
  static constexpr double kCost = 1;
  static constexpr bool kIntegersOnly = true;
};
struct AbsF {  // integers wrap: |MIN| = MIN
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else if constexpr (std::is_integral_v<T>)
      return x < 0 ? NegF{}(x) : x;
    else
      return std::fabs(x);
  }
  static constexpr double kCost = 1;
};
struct FloorF {
  template <class T>
  T operator()(T x) const {
    return std::floor(x);
  }
  static constexpr double kCost = 1;
};
struct CeilF {
  template <class T>
  T operator()(T x) const {
    return std::ceil(x);
  }
  static constexpr double kCost = 1;
};
struct RoundF {  // halves to even, as ONNX (the default rounding mode)
  template <class T>
  T operator()(T x) const {
    return std::nearbyint(x);
  }
  static constexpr double kCost = 1;
};
// log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0.
template <class T>
T softplus(T x) {
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
struct SoftplusF {
  template <class T>
  T operator()(T x) const {
    return softplus(x);
  }
  static constexpr double kCost = 40;
};
// Sin ... Atanh: the C library's, in the kernel's compute type.
struct SinF {
  template <class T>
  T operator()(T x) const {
    return std::sin(x);
  }
  static constexpr double kCost = 20;
};
struct CosF {
  template <class T>
  T operator()(T x) const {
    return std::cos(x);
  }
  static constexpr double kCost = 20;
};
struct TanF {
  template <class T>
  T operator()(T x) const {
    return std::tan(x);
  }
  static constexpr double kCost = 20;
};
struct AsinF {
  template <class T>
  T operator()(T x) const {
    return std::asin(x);
  }
  static constexpr double kCost = 20;
};
struct AcosF {
  template <class T>
  T operator()(T x) const {
    return std::acos(x);
  }
  static constexpr double kCost = 20;
};
struct AtanF {
  template <class T>
  T operator()(T x) const {
    return std::atan(x);
  }
  static constexpr double kCost = 20;
};
struct SinhF {
  template <class T>
  T operator()(T x) const {
    return std::sinh(x);
  }
  static constexpr double kCost = 20;
};
struct CoshF {
  template <class T>
  T operator()(T x) const {
    return std::cosh(x);
  }
  static constexpr double kCost = 20;
};
struct AsinhF {
  template <class T>
  T operator()(T x) const {
    return std::asinh(x);
  }
  static constexpr double kCost = 20;
};
struct AcoshF {
  template <class T>
  T operator()(T x) const {
    return std::acosh(x);
  }
  static constexpr double kCost = 20;
};
struct AtanhF {
  template <class T>
  T operator()(T x) const {
    return std::atanh(x);
  }
  static constexpr double kCost = 20;
};
struct MishF {  // x tanh(softplus(x))
  template <class T>
  T operator()(T x) const {
    return x * std::tanh(softplus(x));
  }
  static constexpr double kCost = 60;
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
  if constexpr (std::is_same_v<F, NegF> || std::is_same_v<F, AbsF> || std::is_same_v<F, BitNotF>) {
    std::unique_ptr<CpuKernel> k;
    if (visit_int(c.dtype, [&](auto t) {
          k = std::make_unique<UnaryKernel<decltype(t), F>>(c.in[0].numel, f);
        }))
      return k;
  }
  if constexpr (requires { F::kIntegersOnly; })
    throw UnsupportedNode(c.v.where() + ": no kernel for dtype " +
                          plugin_support::dtype_name(c.dtype));
  return std::make_unique<UnaryKernel<float, F>>(c.in[0].numel, f);
}

// ----------------------------------------------------------------- binary

// kInts: also instantiated for i64 / i32, where the arithmetic wraps and
// Div truncates toward zero (x / 0 gives 0: ONNX leaves it undefined).
struct AddF {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return wrap<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  }
  static constexpr bool kInts = true;
};
struct SubF {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return wrap<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
    } else {
      return a - b;
    }
  }
  static constexpr bool kInts = true;
};
struct MulF {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // uint64_t keeps i32 products out of signed int promotion.
      return static_cast<T>(wrap<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)));
    } else {
      return a * b;
    }
  }
  static constexpr bool kInts = true;
};
struct DivF {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return NegF{}(a);  // MIN / -1 wraps to MIN
      return static_cast<T>(a / b);
    } else {
      return a / b;
    }
  }
  static constexpr bool kInts = true;
};
// Mod: FModF is C's remainder (the dividend's sign; ONNX fmod=1); ModF is
// Python's (the divisor's sign; fmod=0). An integer remainder by 0 gives 0,
// as Div's quotient.
struct FModF {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return 0;  // MIN % -1 overflows in C
      return static_cast<T>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
  static constexpr bool kInts = true;
};
struct ModF {
  template <class T>
  T operator()(T a, T b) const {
    const T r = FModF{}(a, b);
    if constexpr (std::is_unsigned_v<T>) {
      return r;  // both signs positive: Python's % is C's
    } else if constexpr (std::is_integral_v<T>) {
      return r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
    } else {
      // ONNX Mod 28: a zero takes the divisor's sign; a remainder of the
      // other sign moves by one divisor (x finite, y infinite: y). NaN and
      // infinite x or zero y stay fmod's NaN.
      if (r == T(0)) return std::copysign(T(0), b);
      return (r < T(0)) != (b < T(0)) ? r + b : r;
    }
  }
  static constexpr bool kInts = true;
};
struct PowF {
  template <class T>
  T operator()(T a, T b) const {
    return std::pow(a, b);
  }
  static constexpr bool kInts = false;
};
// The bit ops: integers only (the op set refuses every other dtype, and
// kIntegersOnly keeps the float instantiation from being used).
struct BitAndF {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(a & b);
    return a;
  }
  static constexpr bool kInts = true;
  static constexpr bool kIntegersOnly = true;
};
struct BitOrF {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(a | b);
    return a;
  }
  static constexpr bool kInts = true;
  static constexpr bool kIntegersOnly = true;
};
struct BitXorF {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(a ^ b);
    return a;
  }
  static constexpr bool kInts = true;
  static constexpr bool kIntegersOnly = true;
};
// BitShift as ONNX opset 28 defines it for every shift amount: a right
// shift of a signed x is arithmetic; bits shifted out (past the sign bit
// too) are lost; an amount that is negative or at least the width gives
// what the sign extension alone gives (-1 for a right shift of a negative
// x, else 0). C++ leaves those amounts undefined, hence the test first.
template <bool kLeft>
struct ShiftF {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      constexpr auto kBits = static_cast<int>(sizeof(T) * 8);
      bool outside = false;
      if constexpr (std::is_signed_v<T>)
        outside = y < 0 || static_cast<int64_t>(y) >= kBits;
      else
        outside = static_cast<uint64_t>(y) >= static_cast<uint64_t>(kBits);
      if (outside) {
        if constexpr (std::is_signed_v<T>)
          if (!kLeft && x < 0) return static_cast<T>(-1);
        return 0;
      }
      using U = std::make_unsigned_t<T>;
      if constexpr (kLeft)
        return static_cast<T>(static_cast<U>(static_cast<U>(x) << static_cast<int>(y)));
      else
        return static_cast<T>(x >> static_cast<int>(y));  // arithmetic for signed (C++20)
    }
    return x;
  }
  static constexpr bool kInts = true;
  static constexpr bool kIntegersOnly = true;
};
struct PReluF {  // A = X, B = slope
  template <class T>
  T operator()(T x, T slope) const {
    return x < T(0) ? slope * x : x;
  }
  static constexpr bool kInts = false;
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
  if constexpr (F::kInts) {
    std::unique_ptr<CpuKernel> k;
    if (visit_int(c.dtype, [&](auto t) {
          k = std::make_unique<BinaryKernel<decltype(t), F>>(std::move(p), n);
        }))
      return k;
  }
  if constexpr (requires { F::kIntegersOnly; })
    throw UnsupportedNode(c.v.where() + ": no kernel for dtype " +
                          plugin_support::dtype_name(c.dtype));
  return std::make_unique<BinaryKernel<float, F>>(std::move(p), n);
}

// ------------------------------------------------- Equal, Where (n-ary)

// Element strides of `in` aligned right against `out`, 0 where broadcast.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& out,
                                       const std::vector<int64_t>& in) {
  std::vector<int64_t> full(out.size(), 1);
  std::copy(in.begin(), in.end(), full.begin() + static_cast<ptrdiff_t>(out.size() - in.size()));
  std::vector<int64_t> s = dense_strides(full);
  for (size_t i = 0; i < out.size(); ++i)
    if (full[i] == 1) s[i] = 0;
  return s;
}

// The broadcast output shape of all inputs; fails when they do not broadcast.
std::vector<int64_t> broadcast_all(const Ctx& c) {
  size_t r = 0;
  for (const auto& t : c.in) r = std::max(r, t.dims.size());
  std::vector<int64_t> want(r, 1);
  for (const auto& t : c.in) {
    for (size_t i = 0; i < t.dims.size(); ++i) {
      int64_t& w = want[r - t.dims.size() + i];
      const int64_t d = t.dims[i];
      if (d != w && d != 1 && w != 1) {
        std::string shapes;
        for (const auto& u : c.in) shapes += (shapes.empty() ? "" : " and ") + dims_str(u.dims);
        c.fail("input shapes " + shapes + " do not broadcast");
      }
      if (w == 1) w = d;
    }
  }
  return want;
}

// Visits every output element in order with the matching offset of each of
// the K inputs (odometer over the output dims).
template <size_t K, class Fn>
void broadcast_loop(const std::vector<int64_t>& dims,
                    const std::array<std::vector<int64_t>, K>& strides, int64_t n, Fn&& fn) {
  std::vector<int64_t> idx(dims.size(), 0);
  std::array<int64_t, K> off{};
  for (int64_t i = 0; i < n; ++i) {
    fn(i, off);
    for (size_t d = dims.size(); d-- > 0;) {
      for (size_t k = 0; k < K; ++k) off[k] += strides[k][d];
      if (++idx[d] < dims[d]) break;
      for (size_t k = 0; k < K; ++k) off[k] -= strides[k][d] * dims[d];
      idx[d] = 0;
    }
  }
}

// Equal, Less, Greater, LessOrEqual, GreaterOrEqual (false for NaN), and
// And, Or on bool (T = uint8_t: any nonzero byte is true); the result is bool.
template <class T, class Cmp>
class CompareKernel final : public CpuKernel {
 public:
  CompareKernel(std::vector<int64_t> dims, std::array<std::vector<int64_t>, 2> s, int64_t n)
      : dims_(std::move(dims)), s_(std::move(s)), n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const T* a = static_cast<const T*>(in[0]);
    const T* b = static_cast<const T*>(in[1]);
    auto* y = static_cast<uint8_t*>(out[0]);
    const Cmp cmp{};
    broadcast_loop<2>(dims_, s_, n_, [&](int64_t i, const std::array<int64_t, 2>& o) {
      y[i] = cmp(a[o[0]], b[o[1]]) ? 1 : 0;
    });
  }

 private:
  std::vector<int64_t> dims_;
  std::array<std::vector<int64_t>, 2> s_;
  int64_t n_;
};

template <class T>
using EqualKernel = CompareKernel<T, std::equal_to<>>;
template <class T>
using LessKernel = CompareKernel<T, std::less<>>;
template <class T>
using GreaterKernel = CompareKernel<T, std::greater<>>;
template <class T>
using LessOrEqualKernel = CompareKernel<T, std::less_equal<>>;
template <class T>
using GreaterOrEqualKernel = CompareKernel<T, std::greater_equal<>>;
struct AndF {
  bool operator()(uint8_t a, uint8_t b) const { return a != 0 && b != 0; }
};
struct OrF {
  bool operator()(uint8_t a, uint8_t b) const { return a != 0 || b != 0; }
};

template <class T>
class WhereKernel final : public CpuKernel {
 public:
  WhereKernel(std::vector<int64_t> dims, std::array<std::vector<int64_t>, 3> s, int64_t n)
      : dims_(std::move(dims)), s_(std::move(s)), n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* cond = static_cast<const uint8_t*>(in[0]);
    const T* x = static_cast<const T*>(in[1]);
    const T* y = static_cast<const T*>(in[2]);
    T* z = static_cast<T*>(out[0]);
    broadcast_loop<3>(dims_, s_, n_, [&](int64_t i, const std::array<int64_t, 3>& o) {
      z[i] = cond[o[0]] ? x[o[1]] : y[o[2]];
    });
  }

 private:
  std::vector<int64_t> dims_;
  std::array<std::vector<int64_t>, 3> s_;
  int64_t n_;
};

template <template <class> class K, size_t N>
std::unique_ptr<CpuKernel> make_nary(Ctx& c) {
  c.arity(N, N, 1);
  const std::vector<int64_t> want = broadcast_all(c);
  c.dims(c.out[0], "output", want);
  std::array<std::vector<int64_t>, N> s;
  for (size_t k = 0; k < N; ++k) s[k] = broadcast_strides(want, c.in[k].dims);
  const int64_t n = c.out[0].numel;
  return numeric<K>(c, want, std::move(s), n);
}

// And, Or: bool in, bool out.
template <class F>
std::unique_ptr<CpuKernel> make_logical(Ctx& c) {
  c.arity(2, 2, 1);
  const std::vector<int64_t> want = broadcast_all(c);
  c.dims(c.out[0], "output", want);
  std::array<std::vector<int64_t>, 2> s{broadcast_strides(want, c.in[0].dims),
                                        broadcast_strides(want, c.in[1].dims)};
  return std::make_unique<CompareKernel<uint8_t, F>>(want, std::move(s), c.out[0].numel);
}

class NotKernel final : public CpuKernel {
 public:
  explicit NotKernel(int64_t n) : n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    for (int64_t i = 0; i < n_; ++i) y[i] = x[i] == 0 ? 1 : 0;
  }

 private:
  int64_t n_;
};

// ---------------------------------------------- Min, Max, Sum, Mean (variadic)

// Min and Max propagate NaN (as NumPy's minimum/maximum); Sum and Mean add
// the inputs in input order, Mean then divides by their count.
enum class Variadic { kMin, kMax, kSum, kMean };

template <class T>
class VariadicKernel final : public CpuKernel {
 public:
  VariadicKernel(Variadic kind, std::vector<int64_t> dims, std::vector<std::vector<int64_t>> s,
                 int64_t n)
      : kind_(kind), dims_(std::move(dims)), s_(std::move(s)), n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    T* y = static_cast<T*>(out[0]);
    const size_t k = s_.size();
    std::vector<int64_t> idx(dims_.size(), 0), off(k, 0);
    for (int64_t i = 0; i < n_; ++i) {
      T acc = static_cast<const T*>(in[0])[off[0]];
      for (size_t j = 1; j < k; ++j) acc = combine(acc, static_cast<const T*>(in[j])[off[j]]);
      y[i] = kind_ == Variadic::kMean ? static_cast<T>(acc / static_cast<T>(k)) : acc;
      for (size_t d = dims_.size(); d-- > 0;) {
        for (size_t j = 0; j < k; ++j) off[j] += s_[j][d];
        if (++idx[d] < dims_[d]) break;
        for (size_t j = 0; j < k; ++j) off[j] -= s_[j][d] * dims_[d];
        idx[d] = 0;
      }
    }
  }

 private:
  T combine(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if ((kind_ == Variadic::kMin || kind_ == Variadic::kMax) && (std::isnan(a) || std::isnan(b)))
        return std::isnan(a) ? a : b;
    }
    switch (kind_) {
      case Variadic::kMin:
        return b < a ? b : a;
      case Variadic::kMax:
        return b > a ? b : a;
      case Variadic::kSum:
      case Variadic::kMean:
        return a + b;
    }
    return a;
  }

  Variadic kind_;
  std::vector<int64_t> dims_;
  std::vector<std::vector<int64_t>> s_;
  int64_t n_;
};

std::unique_ptr<CpuKernel> make_variadic(Ctx& c, Variadic kind) {
  c.arity(1, SIZE_MAX, 1);
  const std::vector<int64_t> want = broadcast_all(c);
  c.dims(c.out[0], "output", want);
  std::vector<std::vector<int64_t>> s;
  for (const auto& t : c.in) s.push_back(broadcast_strides(want, t.dims));
  const int64_t n = c.out[0].numel;
  return numeric<VariadicKernel>(c, kind, want, std::move(s), n);
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

// A contraction followed by its activation, applied in f32 (f64 in the
// float64 mode) to the output before the 16-bit wrapper rounds it: one
// rounding, as a fused kernel does.
template <class T, class F>
class ActivationEpilogue final : public CpuKernel {
 public:
  ActivationEpilogue(std::unique_ptr<CpuKernel> inner, int64_t n, F f)
      : inner_(std::move(inner)), n_(n), f_(f) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    inner_->run(in, out);
    T* y = static_cast<T*>(out[0]);
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
  if (c.dtype == AMPX_DTYPE_F64)
    return std::make_unique<ActivationEpilogue<double, F>>(std::move(inner), c.out[0].numel, f);
  return std::make_unique<ActivationEpilogue<float, F>>(std::move(inner), c.out[0].numel, f);
}

}  // namespace

std::unique_ptr<CpuKernel> with_activation(std::unique_ptr<CpuKernel> inner, const Ctx& c) {
  const std::string act = c.v.get_string("activation", "none");
  if (act == "none") return inner;
  if (act == "relu") return epilogue(std::move(inner), c, ReluF{});
  if (act == "gelu") return epilogue(std::move(inner), c, GeluErfF{});
  if (act == "gelu_tanh") return epilogue(std::move(inner), c, GeluTanhF{});
  if (act == "clip")
    return epilogue(std::move(inner), c,
                    ClipF{c.v.get_float("activation_alpha", -INFINITY),
                          c.v.get_float("activation_beta", INFINITY)});
  if (act == "hardsigmoid")
    return epilogue(std::move(inner), c,
                    HardSigmoidF{c.v.get_float("activation_alpha", 0.2),
                                 c.v.get_float("activation_beta", 0.5)});
  if (act == "hardswish") return epilogue(std::move(inner), c, HardSwishF{});
  if (act == "sigmoid") return epilogue(std::move(inner), c, SigmoidF{});
  if (act == "swish") return epilogue(std::move(inner), c, SwishF{});
  if (act == "tanh") return epilogue(std::move(inner), c, TanhF{});
  if (act == "leaky_relu")
    return epilogue(std::move(inner), c, LeakyReluF{c.v.get_float("activation_alpha", 0.01)});
  throw UnsupportedNode(c.v.where() + ": activation '" + act + "' has no kernel here");
}

namespace {

template <class T>
class ResidualEpilogue final : public CpuKernel {
 public:
  ResidualEpilogue(std::unique_ptr<CpuKernel> inner, int64_t n) : inner_(std::move(inner)), n_(n) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    inner_->run(in, out);
    T* y = static_cast<T*>(out[0]);
    const T* z = static_cast<const T*>(in[3]);
    parallel_for(n_, threads_for(static_cast<double>(n_)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] += z[i];
    });
  }

 private:
  std::unique_ptr<CpuKernel> inner_;
  int64_t n_;
};

}  // namespace

std::unique_ptr<CpuKernel> with_residual(std::unique_ptr<CpuKernel> inner, const Ctx& c) {
  if (c.in.size() < 4) return inner;
  return typed<ResidualEpilogue>(c, std::move(inner), c.out[0].numel);
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

std::unique_ptr<CpuKernel> make_leaky_relu(Ctx& c) {
  return make_unary(c, LeakyReluF{c.v.get_float("alpha", 0.01)});
}
std::unique_ptr<CpuKernel> make_hard_sigmoid(Ctx& c) {
  return make_unary(c, HardSigmoidF{c.v.get_float("alpha", 0.2), c.v.get_float("beta", 0.5)});
}
std::unique_ptr<CpuKernel> make_hard_swish(Ctx& c) {
  return make_unary(c, HardSwishF{});
}
std::unique_ptr<CpuKernel> make_erf(Ctx& c) {
  return make_unary(c, ErfF{});
}
std::unique_ptr<CpuKernel> make_sqrt(Ctx& c) {
  return make_unary(c, SqrtF{});
}
std::unique_ptr<CpuKernel> make_reciprocal(Ctx& c) {
  return make_unary(c, ReciprocalF{});
}
std::unique_ptr<CpuKernel> make_exp(Ctx& c) {
  return make_unary(c, ExpF{});
}
std::unique_ptr<CpuKernel> make_log(Ctx& c) {
  return make_unary(c, LogF{});
}
std::unique_ptr<CpuKernel> make_neg(Ctx& c) {
  return make_unary(c, NegF{});
}
std::unique_ptr<CpuKernel> make_mod(Ctx& c) {
  if (c.v.get_int("fmod", 0) != 0) return make_binary<FModF>(c);
  return make_binary<ModF>(c);
}
std::unique_ptr<CpuKernel> make_bit_shift(Ctx& c) {
  if (c.v.get_string("direction") == "LEFT") return make_binary<ShiftF<true>>(c);
  return make_binary<ShiftF<false>>(c);  // RIGHT: the op set allows nothing else
}
std::unique_ptr<CpuKernel> make_bitwise_and(Ctx& c) {
  return make_binary<BitAndF>(c);
}
std::unique_ptr<CpuKernel> make_bitwise_or(Ctx& c) {
  return make_binary<BitOrF>(c);
}
std::unique_ptr<CpuKernel> make_bitwise_xor(Ctx& c) {
  return make_binary<BitXorF>(c);
}
std::unique_ptr<CpuKernel> make_bitwise_not(Ctx& c) {
  return make_unary(c, BitNotF{});
}
std::unique_ptr<CpuKernel> make_pow(Ctx& c) {
  return make_binary<PowF>(c);
}
std::unique_ptr<CpuKernel> make_prelu(Ctx& c) {
  c.arity(2, 2, 1);
  // The slope broadcasts to X, never the other way (unidirectional).
  c.dims(c.out[0], "output", c.in[0].dims);
  return make_binary<PReluF>(c);
}
std::unique_ptr<CpuKernel> make_equal(Ctx& c) {
  return make_nary<EqualKernel, 2>(c);
}
std::unique_ptr<CpuKernel> make_where(Ctx& c) {
  return make_nary<WhereKernel, 3>(c);
}
std::unique_ptr<CpuKernel> make_floor(Ctx& c) {
  return make_unary(c, FloorF{});
}
std::unique_ptr<CpuKernel> make_ceil(Ctx& c) {
  return make_unary(c, CeilF{});
}
std::unique_ptr<CpuKernel> make_round(Ctx& c) {
  return make_unary(c, RoundF{});
}
std::unique_ptr<CpuKernel> make_abs(Ctx& c) {
  return make_unary(c, AbsF{});
}
std::unique_ptr<CpuKernel> make_softplus(Ctx& c) {
  return make_unary(c, SoftplusF{});
}
std::unique_ptr<CpuKernel> make_mish(Ctx& c) {
  return make_unary(c, MishF{});
}
std::unique_ptr<CpuKernel> make_sin(Ctx& c) {
  return make_unary(c, SinF{});
}
std::unique_ptr<CpuKernel> make_cos(Ctx& c) {
  return make_unary(c, CosF{});
}
std::unique_ptr<CpuKernel> make_tan(Ctx& c) {
  return make_unary(c, TanF{});
}
std::unique_ptr<CpuKernel> make_asin(Ctx& c) {
  return make_unary(c, AsinF{});
}
std::unique_ptr<CpuKernel> make_acos(Ctx& c) {
  return make_unary(c, AcosF{});
}
std::unique_ptr<CpuKernel> make_atan(Ctx& c) {
  return make_unary(c, AtanF{});
}
std::unique_ptr<CpuKernel> make_sinh(Ctx& c) {
  return make_unary(c, SinhF{});
}
std::unique_ptr<CpuKernel> make_cosh(Ctx& c) {
  return make_unary(c, CoshF{});
}
std::unique_ptr<CpuKernel> make_asinh(Ctx& c) {
  return make_unary(c, AsinhF{});
}
std::unique_ptr<CpuKernel> make_acosh(Ctx& c) {
  return make_unary(c, AcoshF{});
}
std::unique_ptr<CpuKernel> make_atanh(Ctx& c) {
  return make_unary(c, AtanhF{});
}
std::unique_ptr<CpuKernel> make_less(Ctx& c) {
  return make_nary<LessKernel, 2>(c);
}
std::unique_ptr<CpuKernel> make_greater(Ctx& c) {
  return make_nary<GreaterKernel, 2>(c);
}
std::unique_ptr<CpuKernel> make_less_or_equal(Ctx& c) {
  return make_nary<LessOrEqualKernel, 2>(c);
}
std::unique_ptr<CpuKernel> make_greater_or_equal(Ctx& c) {
  return make_nary<GreaterOrEqualKernel, 2>(c);
}
std::unique_ptr<CpuKernel> make_not(Ctx& c) {
  c.arity(1, 1, 1);
  c.dims(c.out[0], "output", c.in[0].dims);
  return std::make_unique<NotKernel>(c.in[0].numel);
}
std::unique_ptr<CpuKernel> make_and(Ctx& c) {
  return make_logical<AndF>(c);
}
std::unique_ptr<CpuKernel> make_or(Ctx& c) {
  return make_logical<OrF>(c);
}
std::unique_ptr<CpuKernel> make_min(Ctx& c) {
  return make_variadic(c, Variadic::kMin);
}
std::unique_ptr<CpuKernel> make_max(Ctx& c) {
  return make_variadic(c, Variadic::kMax);
}
std::unique_ptr<CpuKernel> make_sum(Ctx& c) {
  return make_variadic(c, Variadic::kSum);
}
std::unique_ptr<CpuKernel> make_mean(Ctx& c) {
  return make_variadic(c, Variadic::kMean);
}

}  // namespace ampx::reference::detail
