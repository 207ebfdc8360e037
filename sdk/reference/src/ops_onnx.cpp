// Compute ops added for the ONNX importer: ConvTranspose, ReduceMax,
// ReduceMin, ReduceProd, ReduceL2, ReduceSumSquare, ReduceLogSumExp, ArgMax,
// ArgMin and Resize. f32 (16-bit arrives widened; f64 in the float64 mode:
// every kernel is a template on its element type T), direct loops: this
// backend is the numerical oracle, not the fast path.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "ampx/opset/resize_map.hpp"
#include "common.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

// ------------------------------------------------------- ConvTranspose

// Y[n, g*Mg+m, ih*s - pad + kh*d, ...] += X[n, g*Cg+c, ih, iw] * W[g*Cg+c, m, kh, kw]:
// each input pixel scatters its kernel-sized patch. Accumulated in T.
struct ConvTransposeGeo {
  int64_t n, c, h, w, m, oh, ow, kh, kw, group;
  int64_t sh, sw, ph, pw, dh, dw;
  bool bias;
};

template <class T>
class ConvTransposeKernel final : public CpuKernel {
 public:
  explicit ConvTransposeKernel(ConvTransposeGeo g) : g_(g) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    const auto* w = static_cast<const T*>(in[1]);
    const T* b = g_.bias ? static_cast<const T*>(in[2]) : nullptr;
    auto* y = static_cast<T*>(out[0]);
    const int64_t cg = g_.c / g_.group, mg = g_.m / g_.group, plane = g_.oh * g_.ow;
    // One task per (batch, output channel): disjoint outputs, fixed order.
    parallel_for(g_.n * g_.m, threads_for(static_cast<double>(g_.n * g_.m * plane * cg)),
                 [&](int64_t t0, int64_t t1) {
                   for (int64_t t = t0; t < t1; ++t) {
                     const int64_t nn = t / g_.m, oc = t % g_.m, gi = oc / mg, m = oc % mg;
                     T* yp = y + t * plane;
                     std::fill(yp, yp + plane, b ? b[oc] : T(0));
                     for (int64_t ci = 0; ci < cg; ++ci) {
                       const int64_t ic = gi * cg + ci;
                       const T* xp = x + (nn * g_.c + ic) * g_.h * g_.w;
                       const T* wp = w + (ic * mg + m) * g_.kh * g_.kw;
                       for (int64_t ih = 0; ih < g_.h; ++ih)
                         for (int64_t kh = 0; kh < g_.kh; ++kh) {
                           const int64_t oh = ih * g_.sh - g_.ph + kh * g_.dh;
                           if (oh < 0 || oh >= g_.oh) continue;
                           for (int64_t iw = 0; iw < g_.w; ++iw) {
                             const T xv = xp[ih * g_.w + iw];
                             for (int64_t kw = 0; kw < g_.kw; ++kw) {
                               const int64_t ow = iw * g_.sw - g_.pw + kw * g_.dw;
                               if (ow < 0 || ow >= g_.ow) continue;
                               yp[oh * g_.ow + ow] += xv * wp[kh * g_.kw + kw];
                             }
                           }
                         }
                     }
                   }
                 });
  }

 private:
  ConvTransposeGeo g_;
};

// ---------------------------------------- ReduceMax, ReduceMin, ReduceProd,
// ReduceL2, ReduceSumSquare, ReduceLogSumExp

enum class Reduction { kMax, kMin, kProd, kL2, kSumSquare, kLogSumExp };

// Output element o reads the reduced sub-box starting at base(o). Dims and
// strides of the kept and reduced axes, in input order. Accumulated in T,
// in input order (fixed, independent of the thread count).
template <class T>
class ReduceSelectKernel final : public CpuKernel {
 public:
  ReduceSelectKernel(Reduction kind, std::vector<int64_t> kn, std::vector<int64_t> ks,
                     std::vector<int64_t> rn, std::vector<int64_t> rs)
      : kind_(kind),
        kn_(std::move(kn)),
        ks_(std::move(ks)),
        rn_(std::move(rn)),
        rs_(std::move(rs)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    const int64_t outs = product(kn_), count = product(rn_);
    const double cost = kind_ == Reduction::kLogSumExp ? 20 : 1;
    parallel_for(outs, threads_for(static_cast<double>(outs * count) * cost),
                 [&](int64_t o0, int64_t o1) {
                   std::vector<int64_t> idx(rn_.size());
                   for (int64_t o = o0; o < o1; ++o) {
                     int64_t base = 0, rem = o;
                     for (size_t d = kn_.size(); d-- > 0;) {
                       base += (rem % kn_[d]) * ks_[d];
                       rem /= kn_[d];
                     }
                     // Calls fn on every reduced element, in input order.
                     const auto visit = [&](auto&& fn) {
                       std::fill(idx.begin(), idx.end(), 0);
                       int64_t off = 0;
                       for (int64_t i = 0; i < count; ++i) {
                         fn(x[base + off]);
                         for (size_t d = rn_.size(); d-- > 0;) {
                           off += rs_[d];
                           if (++idx[d] < rn_[d]) break;
                           off -= rs_[d] * rn_[d];
                           idx[d] = 0;
                         }
                       }
                     };
                     y[o] = reduce(visit);
                   }
                 });
  }

 private:
  template <class Visit>
  T reduce(const Visit& visit) const {
    constexpr T inf = std::numeric_limits<T>::infinity();
    // Max and min: NaN, once seen, stays.
    const auto max_of = [&] {
      T m = -inf;
      visit([&](T v) {
        if (v > m || std::isnan(v)) m = v;
      });
      return m;
    };
    switch (kind_) {
      case Reduction::kMax:
        return max_of();
      case Reduction::kMin: {
        T m = inf;
        visit([&](T v) {
          if (v < m || std::isnan(v)) m = v;
        });
        return m;
      }
      case Reduction::kProd: {
        T p = T(1);
        visit([&](T v) { p *= v; });
        return p;
      }
      case Reduction::kL2:
      case Reduction::kSumSquare: {
        T s = T(0);
        visit([&](T v) { s += v * v; });
        return kind_ == Reduction::kL2 ? std::sqrt(s) : s;
      }
      case Reduction::kLogSumExp: {
        // The maximum subtracted: m + log(sum(exp(x - m))). An empty or
        // all -inf reduction gives -inf, a +inf element +inf, NaN NaN.
        const T m = max_of();
        if (std::isinf(m)) return m;
        T s = T(0);
        visit([&](T v) { s += std::exp(v - m); });
        return m + std::log(s);
      }
    }
    return T(0);
  }

  Reduction kind_;
  std::vector<int64_t> kn_, ks_, rn_, rs_;
};

// -------------------------------------------------------------- ArgMax

// ArgMax, and ArgMin with `min`: the first (or last) extreme; the first NaN
// wins either way, as NumPy's argmax and argmin.
template <class T>
class ArgMaxKernel final : public CpuKernel {
 public:
  ArgMaxKernel(int64_t outer, int64_t len, int64_t inner, bool last, bool min)
      : outer_(outer), len_(len), inner_(inner), last_(last), min_(min) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<int64_t*>(out[0]);
    for (int64_t r = 0; r < outer_ * inner_; ++r) {
      const int64_t base = (r / inner_) * len_ * inner_ + r % inner_;
      int64_t best = 0;
      T m = x[base];
      for (int64_t i = 1; i < len_; ++i) {
        const T v = x[base + i * inner_];
        if (std::isnan(m)) break;  // the first NaN is the extreme, as NumPy
        if ((min_ ? v < m : v > m) || (last_ && v == m) || std::isnan(v)) {
          m = v;
          best = i;
        }
      }
      y[r] = best;
    }
  }

 private:
  int64_t outer_, len_, inner_;
  bool last_, min_;
};

// -------------------------------------------------------------- Resize

using AxisMap = opset::ResizeAxisMap;  // opset/resize_map.hpp

// validate() refused other modes already; a refusal here names the node.
AxisMap axis_map(const Ctx& c, int64_t in, int64_t out, bool linear, const std::string& ctm,
                 const std::string& nm) {
  try {
    return opset::resize_axis_map(in, out, linear, ctm, nm);
  } catch (const std::invalid_argument& e) {
    c.fail(e.what());
  }
}

// Resizes the last two axes (H, W) of [planes, H, W]: bilinear is the
// product of the two axis interpolations, nearest their index maps.
template <class T>
class ResizeKernel final : public CpuKernel {
 public:
  ResizeKernel(int64_t planes, int64_t h, int64_t w, AxisMap my, AxisMap mx)
      : planes_(planes), h_(h), w_(w), my_(std::move(my)), mx_(std::move(mx)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    const auto oh = static_cast<int64_t>(my_.i0.size()), ow = static_cast<int64_t>(mx_.i0.size());
    parallel_for(planes_, threads_for(static_cast<double>(planes_ * oh * ow) * 8),
                 [&](int64_t p0, int64_t p1) {
                   for (int64_t p = p0; p < p1; ++p) {
                     const T* xp = x + p * h_ * w_;
                     T* yp = y + p * oh * ow;
                     for (int64_t i = 0; i < oh; ++i) {
                       const auto ui = static_cast<size_t>(i);
                       const T* r0 = xp + my_.i0[ui] * w_;
                       const T* r1 = xp + my_.i1[ui] * w_;
                       const auto wy = static_cast<T>(my_.w1[ui]);
                       for (int64_t j = 0; j < ow; ++j) {
                         const auto uj = static_cast<size_t>(j);
                         const int64_t a = mx_.i0[uj], b = mx_.i1[uj];
                         const auto wx = static_cast<T>(mx_.w1[uj]);
                         const T top = r0[a] + wx * (r0[b] - r0[a]);
                         const T bot = r1[a] + wx * (r1[b] - r1[a]);
                         yp[i * ow + j] = top + wy * (bot - top);
                       }
                     }
                   }
                 });
  }

 private:
  int64_t planes_, h_, w_;
  AxisMap my_, mx_;
};

// The general form (cubic, antialias, ONNX's scales, tf_crop_and_resize):
// y[i, j] = sum over the taps of wy * wx * x[iy, ix], or extrapolation_value
// where either axis maps outside the crop. Accumulated in T.
template <class T>
class ResizeTapsKernel final : public CpuKernel {
 public:
  ResizeTapsKernel(int64_t planes, int64_t h, int64_t w, opset::ResizeAxisTaps my,
                   opset::ResizeAxisTaps mx, double extrapolation)
      : planes_(planes),
        h_(h),
        w_(w),
        my_(std::move(my)),
        mx_(std::move(mx)),
        extrapolation_(extrapolation) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    auto* y = static_cast<T*>(out[0]);
    const auto oh = static_cast<int64_t>(my_.outside.size()),
               ow = static_cast<int64_t>(mx_.outside.size());
    const int64_t ty = my_.taps, tx = mx_.taps;
    parallel_for(
        planes_, threads_for(static_cast<double>(planes_ * oh * ow * ty * tx) * 2),
        [&](int64_t p0, int64_t p1) {
          for (int64_t p = p0; p < p1; ++p) {
            const T* xp = x + p * h_ * w_;
            T* yp = y + p * oh * ow;
            for (int64_t i = 0; i < oh; ++i)
              for (int64_t j = 0; j < ow; ++j) {
                if (my_.outside[static_cast<size_t>(i)] || mx_.outside[static_cast<size_t>(j)]) {
                  yp[i * ow + j] = static_cast<T>(extrapolation_);
                  continue;
                }
                T acc = 0;
                for (int64_t a = 0; a < ty; ++a) {
                  const auto ua = static_cast<size_t>(i * ty + a);
                  const T* row = xp + my_.index[ua] * w_;
                  T r = 0;
                  for (int64_t b = 0; b < tx; ++b) {
                    const auto ub = static_cast<size_t>(j * tx + b);
                    r += static_cast<T>(mx_.weight[ub]) * row[mx_.index[ub]];
                  }
                  acc += static_cast<T>(my_.weight[ua]) * r;
                }
                yp[i * ow + j] = acc;
              }
          }
        });
  }

 private:
  int64_t planes_, h_, w_;
  opset::ResizeAxisTaps my_, mx_;
  double extrapolation_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_conv_transpose(Ctx& c) {
  c.arity(2, 3, 1);
  c.rank(c.in[0], "input X", 4);
  c.rank(c.in[1], "weight W", 4);
  const auto& x = c.in[0].dims;
  const auto& w = c.in[1].dims;
  const int64_t group = c.v.get_int("group", 1);
  if (group < 1 || x[1] % group != 0) c.fail("attribute 'group' must divide the input channels");
  if (w[0] != x[1]) {
    c.fail("weight W " + dims_str(w) + " must have " + std::to_string(x[1]) +
           " (input channel) rows");
  }
  const int64_t m = w[1] * group;
  if (c.in.size() == 3) c.dims(c.in[2], "bias B", {m});
  const auto s = c.ints_n("strides", 2, {1, 1});
  const auto p = c.ints_n("pads", 4, {0, 0, 0, 0});
  const auto d = c.ints_n("dilations", 2, {1, 1});
  const auto op = c.ints_n("output_padding", 2, {0, 0});
  std::vector<int64_t> want{x[0], m, 0, 0};
  for (size_t i = 0; i < 2; ++i) {
    if (s[i] < 1 || d[i] < 1) c.fail("strides and dilations must be >= 1");
    if (p[i] < 0 || p[i + 2] < 0 || op[i] < 0) c.fail("pads and output_padding must be >= 0");
    want[2 + i] = s[i] * (x[2 + i] - 1) + op[i] + (w[2 + i] - 1) * d[i] + 1 - p[i] - p[i + 2];
  }
  c.dims(c.out[0], "output", want);
  return typed<ConvTransposeKernel>(
      c, ConvTransposeGeo{x[0], x[1], x[2], x[3], m, want[2], want[3], w[2], w[3], group, s[0],
                          s[1], p[0], p[1], d[0], d[1], c.in.size() == 3});
}

namespace {

std::unique_ptr<CpuKernel> make_reduce_select(Ctx& c, Reduction kind) {
  c.arity(1, 1, 1);
  const auto& d = c.in[0].dims;
  const auto [reduced, keep] = reduced_axes(c);
  const std::vector<int64_t> s = dense_strides(d);
  std::vector<int64_t> want, kn, ks, rn, rs;
  for (size_t i = 0; i < d.size(); ++i) {
    if (reduced[i]) {
      if (d[i] == 0 && (kind == Reduction::kMax || kind == Reduction::kMin))
        c.fail(std::string(c.v.op_type()) + " over the empty axis " + std::to_string(i));
      rn.push_back(d[i]);
      rs.push_back(s[i]);
      if (keep) want.push_back(1);
    } else {
      kn.push_back(d[i]);
      ks.push_back(s[i]);
      want.push_back(d[i]);
    }
  }
  c.dims(c.out[0], "output", want);
  return typed<ReduceSelectKernel>(c, kind, std::move(kn), std::move(ks), std::move(rn),
                                   std::move(rs));
}

std::unique_ptr<CpuKernel> make_arg_extreme(Ctx& c, bool min) {
  c.arity(1, 1, 1);
  const auto& x = c.in[0].dims;
  const auto r = static_cast<int64_t>(x.size());
  if (r == 0) c.fail("input X is a scalar; " + std::string(c.v.op_type()) + " needs rank >= 1");
  const auto axis = static_cast<size_t>(c.axis(c.v.get_int("axis", 0), r, "axis"));
  const int64_t keep = c.v.get_int("keepdims", 1);
  const int64_t last = c.v.get_int("select_last_index", 0);
  if (keep != 0 && keep != 1) c.fail("attribute 'keepdims' must be 0 or 1");
  if (last != 0 && last != 1) c.fail("attribute 'select_last_index' must be 0 or 1");
  if (x[axis] == 0) c.fail(std::string(c.v.op_type()) + " over an empty axis");
  std::vector<int64_t> want = x;
  if (keep)
    want[axis] = 1;
  else
    want.erase(want.begin() + static_cast<ptrdiff_t>(axis));
  c.dims(c.out[0], "output", want);
  return typed<ArgMaxKernel>(c, product(x, 0, axis), x[axis], product(x, axis + 1), last != 0, min);
}

}  // namespace

std::unique_ptr<CpuKernel> make_reduce_max(Ctx& c) {
  return make_reduce_select(c, Reduction::kMax);
}
std::unique_ptr<CpuKernel> make_reduce_min(Ctx& c) {
  return make_reduce_select(c, Reduction::kMin);
}
std::unique_ptr<CpuKernel> make_reduce_prod(Ctx& c) {
  return make_reduce_select(c, Reduction::kProd);
}
std::unique_ptr<CpuKernel> make_reduce_l2(Ctx& c) {
  return make_reduce_select(c, Reduction::kL2);
}
std::unique_ptr<CpuKernel> make_reduce_sum_square(Ctx& c) {
  return make_reduce_select(c, Reduction::kSumSquare);
}
std::unique_ptr<CpuKernel> make_reduce_log_sum_exp(Ctx& c) {
  return make_reduce_select(c, Reduction::kLogSumExp);
}
std::unique_ptr<CpuKernel> make_argmax(Ctx& c) {
  return make_arg_extreme(c, false);
}
std::unique_ptr<CpuKernel> make_argmin(Ctx& c) {
  return make_arg_extreme(c, true);
}

namespace {
// Whether a Resize needs the general form (more than the two-tap map of
// resize_axis_map that the other backends share).
bool resize_general_form(const NodeView& v, const std::string& mode, const std::string& ctm) {
  return mode == "cubic" || v.has_attr("scales") || v.has_attr("roi") ||
         v.get_int("antialias", 0) != 0 || v.get_int("exclude_outside", 0) != 0 ||
         ctm == "tf_crop_and_resize" || ctm == "half_pixel_symmetric";
}
}  // namespace

std::unique_ptr<CpuKernel> make_resize(Ctx& c) {
  c.arity(1, 1, 1);
  c.v.require_attr("sizes");
  const auto& x = c.in[0].dims;
  const std::vector<int64_t> sizes = c.v.get_ints("sizes");
  if (sizes.size() != x.size()) {
    c.fail("attribute 'sizes' has " + std::to_string(sizes.size()) + " values, the input rank is " +
           std::to_string(x.size()));
  }
  if (x.empty()) c.fail("input X is a scalar; Resize needs rank >= 1");
  const std::string mode = c.v.get_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    c.fail("attribute 'mode' must be \"nearest\", \"linear\" or \"cubic\", got \"" + mode + "\"");
  const bool linear = mode == "linear";
  if (mode != "nearest" && x.size() != 4) c.fail("mode \"" + mode + "\" needs a 4-D NCHW input");
  const size_t r = x.size(), sp = std::min<size_t>(2, r);
  for (size_t i = 0; i < r; ++i) {
    if (i < r - sp && sizes[i] != x[i])
      c.fail("attribute 'sizes' " + dims_str(sizes) +
             " resizes a dimension other than the last two");
    if (i >= r - sp && (sizes[i] < 1 || x[i] < 1))
      c.fail("resized dimensions must be >= 1, got " + dims_str(sizes) + " from " + dims_str(x));
  }
  c.dims(c.out[0], "output", sizes);
  const std::string ctm = c.v.get_string("coordinate_transformation_mode", "half_pixel");
  const std::string nm = c.v.get_string("nearest_mode", "round_prefer_floor");
  const int64_t h = sp == 2 ? x[r - 2] : 1, oh = sp == 2 ? sizes[r - 2] : 1;
  if (resize_general_form(c.v, mode, ctm)) {
    const std::vector<double> scales = c.v.get_floats("scales");
    const std::vector<double> roi = c.v.get_floats("roi");
    if (!scales.empty() && scales.size() != r)
      c.fail("attribute 'scales' has " + std::to_string(scales.size()) + " values, expected " +
             std::to_string(r));
    if (ctm == "tf_crop_and_resize" && roi.size() != 2 * r)
      c.fail("attribute 'roi' must have " + std::to_string(2 * r) + " values (tf_crop_and_resize)");
    const auto taps = [&](size_t d, int64_t in, int64_t out) {
      opset::ResizeAxisSpec s;
      s.in = in;
      s.out = out;
      s.scale = scales.empty() ? static_cast<double>(out) / static_cast<double>(in) : scales[d];
      if (!(s.scale > 0)) c.fail("attribute 'scales' must be positive");
      s.mode = mode;
      s.coordinate_transformation_mode = ctm;
      s.nearest_mode = nm;
      s.cubic_coeff_a = c.v.get_float("cubic_coeff_a", -0.75);
      s.exclude_outside = c.v.get_int("exclude_outside", 0) != 0;
      s.antialias = c.v.get_int("antialias", 0) != 0;
      if (!roi.empty()) {
        s.roi_start = roi[d];
        s.roi_end = roi[d + r];
      }
      try {
        return opset::resize_axis_taps(s);
      } catch (const std::invalid_argument& e) {
        c.fail(e.what());
      }
    };
    opset::ResizeAxisTaps ty =
        sp == 2 ? taps(r - 2, h, oh) : opset::resize_axis_taps(opset::ResizeAxisSpec{});
    opset::ResizeAxisTaps tx = taps(r - 1, x[r - 1], sizes[r - 1]);
    return typed<ResizeTapsKernel>(c, product(x, 0, r - sp), h, x[r - 1], std::move(ty),
                                   std::move(tx), c.v.get_float("extrapolation_value", 0.0));
  }
  AxisMap my = axis_map(c, h, oh, linear, ctm, nm);
  AxisMap mx = axis_map(c, x[r - 1], sizes[r - 1], linear, ctm, nm);
  return typed<ResizeKernel>(c, product(x, 0, r - sp), h, x[r - 1], std::move(my), std::move(mx));
}

}  // namespace ampx::reference::detail
