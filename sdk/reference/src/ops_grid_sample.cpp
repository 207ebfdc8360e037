// GridSample (docs/OPS.md): X [N, C, D1..Dk] sampled at grid [N, O1..Ok, k],
// ONNX's reference (opset 20) to the letter. Each grid point's coordinate is
// denormalised per axis (grid's last component is the last axis), rounded to
// the element type as ONNX's reference stores it, moved inside by the
// padding mode, and interpolated from 1 (nearest), 2 (linear) or 4 (cubic,
// a = -0.75) taps per axis, each tap read through the padding mode (zeros:
// 0 outside; border: clamped; reflection: reflected about the borders).
// Accumulated in T.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridGeo {
  int64_t n = 0, c = 0;
  std::vector<int64_t> in;  // D1..Dk
  int64_t points = 0;       // O1 * ... * Ok
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

// Reflects x about [lo, hi] until it lies inside (ONNX's _gs_reflect).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (x < lo) {
    const double dx = lo - x;
    const auto k = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(k) * range;
    return k % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const auto k = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(k) * range;
    return k % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(double t, double* w) {
  constexpr double a = -0.75;
  const auto f = [](double x) {
    x = std::abs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  };
  w[0] = f(t + 1);
  w[1] = f(t);
  w[2] = f(1 - t);
  w[3] = f(2 - t);
}

template <class T>
class GridSampleKernel final : public CpuKernel {
 public:
  explicit GridSampleKernel(GridGeo g) : g_(std::move(g)) {}

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    const auto* grid = static_cast<const T*>(in[1]);
    auto* y = static_cast<T*>(out[0]);
    const auto k = g_.in.size();
    int64_t plane = 1;
    for (int64_t d : g_.in) plane *= d;
    const int64_t taps1 = g_.mode == Mode::kNearest ? 1 : g_.mode == Mode::kLinear ? 2 : 4;
    int64_t taps = 1;
    for (size_t a = 0; a < k; ++a) taps *= taps1;
    // One task per (batch, point): every channel of a point shares its taps.
    parallel_for(g_.n * g_.points,
                 threads_for(static_cast<double>(g_.n * g_.points * g_.c * taps) * 2),
                 [&](int64_t t0, int64_t t1) {
                   std::vector<int64_t> first(k), index(k);
                   std::vector<double> w(k * 4);
                   for (int64_t t = t0; t < t1; ++t) {
                     const int64_t nn = t / g_.points, p = t % g_.points;
                     const T* gp = grid + t * static_cast<int64_t>(k);
                     for (size_t a = 0; a < k; ++a) setup_axis(a, gp[k - 1 - a], first, w);
                     for (int64_t ch = 0; ch < g_.c; ++ch) {
                       const T* xp = x + (nn * g_.c + ch) * plane;
                       T acc = 0;
                       for (int64_t tap = 0; tap < taps; ++tap) {
                         T weight = 1;
                         int64_t offset = 0;
                         bool zero = false;
                         int64_t rest = tap;
                         for (size_t a = k; a-- > 0;) {
                           const int64_t j = rest % taps1;
                           rest /= taps1;
                           weight *= static_cast<T>(w[a * 4 + static_cast<size_t>(j)]);
                           const int64_t i = pixel_index(a, first[a] + j, zero);
                           index[a] = i;
                         }
                         if (zero) continue;
                         for (size_t a = 0; a < k; ++a) offset = offset * g_.in[a] + index[a];
                         acc += weight * xp[offset];
                       }
                       y[(nn * g_.c + ch) * g_.points + p] = acc;
                     }
                   }
                 });
  }

 private:
  double lo(size_t a) const { return g_.align_corners ? 0.0 : -0.5; }
  double hi(size_t a) const {
    const auto d = static_cast<double>(g_.in[a]);
    return g_.align_corners ? d - 1 : d - 0.5;
  }

  // Axis a's first tap and its weights for normalised coordinate v.
  void setup_axis(size_t a, T v, std::vector<int64_t>& first, std::vector<double>& w) const {
    const auto d = static_cast<double>(g_.in[a]);
    const auto nv = static_cast<double>(v);
    // ONNX's reference holds the coordinate in the element type.
    auto x = static_cast<double>(
        static_cast<T>(g_.align_corners ? (nv + 1) / 2.0 * (d - 1) : ((nv + 1) * d - 1) / 2.0));
    if (g_.mode == Mode::kNearest) x = std::nearbyint(x);  // half to even, as np.rint
    if (x < lo(a) || x > hi(a)) {
      if (g_.padding == Padding::kBorder) x = std::clamp(x, 0.0, d - 1);
      if (g_.padding == Padding::kReflection) x = reflect(x, lo(a), hi(a));
    }
    x = static_cast<double>(static_cast<T>(x));
    double* wa = w.data() + a * 4;
    if (g_.mode == Mode::kNearest) {
      first[a] = static_cast<int64_t>(x);  // truncation, as astype(int32)
      wa[0] = 1;
      return;
    }
    const double f = std::floor(x), r = x - f;
    if (g_.mode == Mode::kLinear) {
      first[a] = static_cast<int64_t>(f);
      wa[0] = 1 - r;
      wa[1] = r;
    } else {
      first[a] = static_cast<int64_t>(f) - 1;
      cubic_coeffs(r, wa);
    }
  }

  // The input index a tap at i of axis a reads, or `zero` set (zeros
  // padding outside the input).
  int64_t pixel_index(size_t a, int64_t i, bool& zero) const {
    const int64_t d = g_.in[a];
    if (i >= 0 && i < d) return i;
    switch (g_.padding) {
      case Padding::kZeros:
        zero = true;
        return 0;
      case Padding::kBorder:
        return std::clamp<int64_t>(i, 0, d - 1);
      case Padding::kReflection:
        return std::clamp<int64_t>(
            static_cast<int64_t>(reflect(static_cast<double>(i), lo(a), hi(a))), 0, d - 1);
    }
    return 0;
  }

  GridGeo g_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_grid_sample(Ctx& c) {
  c.arity(2, 2, 1);
  const auto& x = c.in[0].dims;
  const auto& gd = c.in[1].dims;
  if (x.size() < 3) c.fail("input X must have rank >= 3 ([N, C, D1, ...])");
  const size_t k = x.size() - 2;
  if (gd.size() != k + 2 || gd[0] != x[0] || gd.back() != static_cast<int64_t>(k))
    c.fail("grid " + dims_str(gd) + " does not match X " + dims_str(x) +
           " (expected [N, O1..Ok, k])");
  GridGeo g;
  g.n = x[0];
  g.c = x[1];
  g.in.assign(x.begin() + 2, x.end());
  for (int64_t d : g.in)
    if (d < 1) c.fail("cannot sample an empty spatial dimension of X " + dims_str(x));
  g.points = product(gd, 1, k + 1);
  std::vector<int64_t> y{x[0], x[1]};
  y.insert(y.end(), gd.begin() + 1, gd.end() - 1);
  c.dims(c.out[0], "output", y);
  const std::string mode = c.v.get_string("mode", "linear");
  if (mode == "nearest")
    g.mode = Mode::kNearest;
  else if (mode == "linear")
    g.mode = Mode::kLinear;
  else if (mode == "cubic")
    g.mode = Mode::kCubic;
  else
    c.fail("attribute 'mode' must be \"linear\", \"nearest\" or \"cubic\", got \"" + mode + "\"");
  const std::string pad = c.v.get_string("padding_mode", "zeros");
  if (pad == "zeros")
    g.padding = Padding::kZeros;
  else if (pad == "border")
    g.padding = Padding::kBorder;
  else if (pad == "reflection")
    g.padding = Padding::kReflection;
  else
    c.fail("attribute 'padding_mode' must be \"zeros\", \"border\" or \"reflection\", got \"" +
           pad + "\"");
  g.align_corners = c.v.get_int("align_corners", 0) != 0;
  return typed<GridSampleKernel>(c, std::move(g));
}

}  // namespace ampx::reference::detail
