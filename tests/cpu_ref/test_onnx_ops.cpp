// The ops added for the ONNX importer against float64 references (floats:
// relative error within tolerance(dtype); integers, bools and data movement:
// exact), and the integer dtypes of the shape-arithmetic ops.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "harness.hpp"

namespace ampx::test {
namespace {

using Ints = std::vector<int64_t>;

class OnnxOps : public ::testing::TestWithParam<ampx_dtype> {
 protected:
  ampx_dtype dt() const { return GetParam(); }
  Rng rng{7};
};

// Random non-zero values in [-scale, scale]; `positive`: their magnitudes.
Tensor input(Rng& rng, ampx_dtype dt, Ints dims, double scale = 3.0, bool positive = false) {
  std::vector<double> v = rng.nonzero_vec(static_cast<size_t>(numel_of(dims)));
  for (auto& x : v) x = (positive ? std::fabs(x) : x) * scale;
  return Tensor::of(dt, std::move(dims), v);
}

void check_unary(Rng& rng, ampx_dtype dt, const char* op, const std::function<double(double)>& f,
                 bool positive = false, const std::function<void(NodeBuilder&)>& attrs = {}) {
  const Ints dims{5, 3, 7};
  const Tensor x = input(rng, dt, dims, 3.0, positive);
  NodeBuilder nb(op, "u");
  add_input(nb, x);
  nb.output(dt, dims);
  if (attrs) attrs(nb);
  std::vector<double> ref;
  for (double v : x.values()) ref.push_back(f(v));
  expect_close(run_node(nb, {&x})[0], ref, op);
}

TEST_P(OnnxOps, UnaryActivationsAndMath) {
  check_unary(
      rng, dt(), "LeakyRelu", [](double x) { return x < 0 ? 0.1 * x : x; }, false,
      [](NodeBuilder& b) { b.attr_float("alpha", 0.1); });
  check_unary(rng, dt(), "LeakyRelu", [](double x) { return x < 0 ? 0.01 * x : x; });
  check_unary(
      rng, dt(), "HardSigmoid", [](double x) { return std::clamp(0.3 * x + 0.4, 0.0, 1.0); }, false,
      [](NodeBuilder& b) { b.attr_float("alpha", 0.3).attr_float("beta", 0.4); });
  check_unary(rng, dt(), "HardSigmoid",
              [](double x) { return std::clamp(0.2 * x + 0.5, 0.0, 1.0); });
  check_unary(rng, dt(), "HardSwish",
              [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); });
  check_unary(rng, dt(), "Erf", [](double x) { return std::erf(x); });
  check_unary(
      rng, dt(), "Sqrt", [](double x) { return std::sqrt(x); }, true);
  check_unary(
      rng, dt(), "Reciprocal", [](double x) { return 1 / x; }, true);
  check_unary(rng, dt(), "Exp", [](double x) { return std::exp(x); });
  check_unary(
      rng, dt(), "Log", [](double x) { return std::log(x); }, true);
  check_unary(rng, dt(), "Neg", [](double x) { return -x; });
}

// Reference for a broadcasting op over any number of inputs.
std::vector<double> broadcast_ref(const std::vector<const Tensor*>& ins, const Ints& out,
                                  const std::function<double(const std::vector<double>&)>& f) {
  std::vector<double> ref;
  for (int64_t i = 0; i < numel_of(out); ++i) {
    const Ints idx = unravel(i, out);
    std::vector<double> args;
    for (const Tensor* t : ins) {
      Ints j(t->dims.size());
      for (size_t d = 0; d < j.size(); ++d)
        j[d] = t->dims[d] == 1 ? 0 : idx[idx.size() - j.size() + d];
      args.push_back(t->get(static_cast<size_t>(ravel(j, t->dims))));
    }
    ref.push_back(f(args));
  }
  return ref;
}

TEST_P(OnnxOps, PowBroadcastsAndTakesAScalarExponent) {
  const Tensor x = input(rng, dt(), {4, 1, 5}, 2.0, true);
  const Tensor y = input(rng, dt(), {3, 1}, 2.0);
  NodeBuilder nb("Pow", "p");
  add_input(nb, x);
  add_input(nb, y);
  nb.output(dt(), {4, 3, 5});
  expect_close(
      run_node(nb, {&x, &y})[0],
      broadcast_ref({&x, &y}, {4, 3, 5}, [](const auto& a) { return std::pow(a[0], a[1]); }),
      "Pow");
  // x^2 with negative bases, as the importer's Pow(x, 2.0) of a variance.
  const Tensor z = input(rng, dt(), {3, 7}), two = Tensor::of(dt(), {}, {2.0});
  NodeBuilder sq("Pow", "sq");
  add_input(sq, z);
  add_input(sq, two);
  sq.output(dt(), {3, 7});
  std::vector<double> ref;
  for (double v : z.values()) ref.push_back(v * v);
  expect_close(run_node(sq, {&z, &two})[0], ref, "Pow square");
}

TEST_P(OnnxOps, PReluPerChannelSlope) {
  const Tensor x = input(rng, dt(), {2, 3, 4, 5}), s = input(rng, dt(), {3, 1, 1}, 0.5);
  NodeBuilder nb("PRelu", "p");
  add_input(nb, x);
  add_input(nb, s);
  nb.output(dt(), {2, 3, 4, 5});
  expect_close(run_node(nb, {&x, &s})[0],
               broadcast_ref({&x, &s}, {2, 3, 4, 5},
                             [](const auto& a) { return a[0] < 0 ? a[0] * a[1] : a[0]; }),
               "PRelu");
}

TEST_P(OnnxOps, EqualAndWhere) {
  // B repeats some elements of A so that both answers occur.
  Tensor a = input(rng, dt(), {4, 5}), b = input(rng, dt(), {5});
  for (size_t i = 0; i < 5; i += 2) b.set(i, a.get(5 + i));
  NodeBuilder eq("Equal", "eq");
  add_input(eq, a);
  add_input(eq, b);
  eq.output(AMPX_DTYPE_BOOL, {4, 5});
  const Tensor m = run_node(eq, {&a, &b})[0];
  const auto want = broadcast_ref({&a, &b}, {4, 5}, [](const auto& v) { return v[0] == v[1]; });
  EXPECT_EQ(m.values(), want);
  EXPECT_GE(std::count(want.begin(), want.end(), 1.0), 3);  // bf16 may tie more

  const Tensor c = Tensor::of(AMPX_DTYPE_BOOL, {3, 1}, {1, 0, 1});
  const Tensor x = input(rng, dt(), {2, 1, 4}), y = input(rng, dt(), {4});
  NodeBuilder w("Where", "w");
  add_input(w, c);
  add_input(w, x);
  add_input(w, y);
  w.output(dt(), {2, 3, 4});
  const Tensor got = run_node(w, {&c, &x, &y})[0];
  EXPECT_EQ(got.values(), broadcast_ref({&c, &x, &y}, {2, 3, 4},
                                        [](const auto& v) { return v[0] != 0 ? v[1] : v[2]; }));
}

TEST_P(OnnxOps, LogSoftmax) {
  for (int64_t axis : {1, -1}) {
    const Tensor x = input(rng, dt(), {3, 4, 5}, 4.0);
    NodeBuilder nb("LogSoftmax", "ls");
    add_input(nb, x);
    nb.output(dt(), {3, 4, 5}).attr_int("axis", axis);
    const Ints d{3, 4, 5};
    const size_t ax = axis < 0 ? 2 : 1;
    std::vector<double> ref;
    for (int64_t i = 0; i < 60; ++i) {
      Ints idx = unravel(i, d);
      double s = 0;
      for (int64_t k = 0; k < d[ax]; ++k) {
        Ints j = idx;
        j[ax] = k;
        s += std::exp(x.get(static_cast<size_t>(ravel(j, d))));
      }
      ref.push_back(x.get(static_cast<size_t>(i)) - std::log(s));
    }
    expect_close(run_node(nb, {&x})[0], ref, "LogSoftmax");
  }
}

TEST_P(OnnxOps, ReduceMax) {
  const Ints d{3, 4, 5};
  const Tensor x = input(rng, dt(), d);
  struct C {
    Ints axes;
    int keep;
    Ints out;
  };
  for (const C& c :
       {C{{1}, 1, {3, 1, 5}}, C{{0, -1}, 0, {4}}, C{{}, 1, {1, 1, 1}}, C{{2, 0}, 1, {1, 4, 1}}}) {
    NodeBuilder nb("ReduceMax", "rm");
    add_input(nb, x);
    nb.output(dt(), c.out).attr_int("keepdims", c.keep);
    if (!c.axes.empty()) nb.attr_ints("axes", c.axes);
    std::vector<bool> red(3, c.axes.empty());
    for (int64_t a : c.axes) red[static_cast<size_t>(a < 0 ? a + 3 : a)] = true;
    Ints kept;
    for (size_t i = 0; i < 3; ++i)
      if (!red[i]) kept.push_back(d[i]);
    std::vector<double> ref(static_cast<size_t>(numel_of(kept)), -INFINITY);
    for (int64_t i = 0; i < 60; ++i) {
      const Ints idx = unravel(i, d);
      Ints k;
      for (size_t j = 0; j < 3; ++j)
        if (!red[j]) k.push_back(idx[j]);
      double& r = ref[static_cast<size_t>(ravel(k, kept))];
      r = std::max(r, x.get(static_cast<size_t>(i)));
    }
    EXPECT_EQ(run_node(nb, {&x})[0].values(), ref);  // max is exact
  }
}

// ArgMax and ArgMin: ties take the first index, or the last with
// select_last_index; then the default axis 0 of a random tensor against a
// scan in f64.
TEST_P(OnnxOps, ArgMaxArgMinFirstAndLastIndex) {
  struct Spec {
    const char* op;
    std::vector<double> rows;  // [2, 4], with ties
    std::vector<double> first, last;
    bool (*better)(double, double);
  };
  const Spec specs[] = {
      {"ArgMax",
       {1, 3, 3, 2, 5, 5, 0, 5},
       {1, 0},
       {2, 3},
       [](double a, double b) { return a > b; }},
      {"ArgMin",
       {1, 0, 0, 2, 5, -5, 0, -5},
       {1, 1},
       {2, 3},
       [](double a, double b) { return a < b; }},
  };
  for (const Spec& sp : specs) {
    SCOPED_TRACE(sp.op);
    const Tensor x = Tensor::of(dt(), {2, 4}, sp.rows);
    for (int last : {0, 1}) {
      NodeBuilder nb(sp.op, "am");
      add_input(nb, x);
      nb.output(AMPX_DTYPE_I64, {2}).attr_int("axis", 1).attr_int("keepdims", 0);
      nb.attr_int("select_last_index", last);
      EXPECT_EQ(run_node(nb, {&x})[0].values(), last ? sp.last : sp.first);
    }
    const Tensor y = input(rng, dt(), {3, 5, 2});
    NodeBuilder nb(sp.op, "am");
    add_input(nb, y);
    nb.output(AMPX_DTYPE_I64, {1, 5, 2});
    std::vector<double> ref;
    for (int64_t j = 0; j < 10; ++j) {
      int64_t best = 0;
      for (int64_t i = 1; i < 3; ++i)
        if (sp.better(y.get(static_cast<size_t>(i * 10 + j)),
                      y.get(static_cast<size_t>(best * 10 + j))))
          best = i;
      ref.push_back(static_cast<double>(best));
    }
    EXPECT_EQ(run_node(nb, {&y})[0].values(), ref);
  }
}

TEST_P(OnnxOps, SplitExpandArePlainCopies) {
  const Tensor x = input(rng, dt(), {2, 7, 3});
  NodeBuilder sp("Split", "sp");
  add_input(sp, x);
  sp.output(dt(), {2, 2, 3}).output(dt(), {2, 0, 3}).output(dt(), {2, 5, 3});
  sp.attr_int("axis", -2).attr_ints("split", {2, 0, 5});
  const auto outs = run_node(sp, {&x});
  ASSERT_EQ(outs.size(), 3u);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t k = 0; k < 7; ++k)
      for (int64_t c = 0; c < 3; ++c) {
        const double want = x.get(static_cast<size_t>((n * 7 + k) * 3 + c));
        const Tensor& o = k < 2 ? outs[0] : outs[2];
        const int64_t kk = k < 2 ? k : k - 2, len = k < 2 ? 2 : 5;
        EXPECT_EQ(o.get(static_cast<size_t>((n * len + kk) * 3 + c)), want);
      }

  const Tensor e = input(rng, dt(), {3, 1});
  NodeBuilder ex("Expand", "ex");
  add_input(ex, e);
  ex.output(dt(), {2, 3, 4}).attr_ints("shape", {2, 1, 4});
  EXPECT_EQ(run_node(ex, {&e})[0].values(),
            broadcast_ref({&e}, {2, 3, 4}, [](const auto& v) { return v[0]; }));
}

TEST_P(OnnxOps, PadModes) {
  const Ints d{2, 3, 4};
  const Tensor x = input(rng, dt(), d);
  // dim 0 unpadded, dim 1 crops one at the end, dim 2 pads 2 / 3.
  const Ints pads{0, 1, 2, 0, -1, 3}, out{2, 3, 9};
  for (const char* mode : {"constant", "reflect", "edge"}) {
    NodeBuilder nb("Pad", "pad");
    add_input(nb, x);
    nb.output(dt(), out).attr_ints("pads", pads).attr_str("mode", mode).attr_float("value", 1.5);
    std::vector<double> ref;
    const std::string m = mode;
    for (int64_t i = 0; i < numel_of(out); ++i) {
      const Ints o = unravel(i, out);
      Ints s(3);
      bool inside = true;
      for (size_t k = 0; k < 3; ++k) {
        int64_t j = o[k] - pads[k];
        if (j < 0 || j >= d[k]) {
          if (m == "constant") inside = false;
          if (m == "edge") j = j < 0 ? 0 : d[k] - 1;
          if (m == "reflect") j = j < 0 ? -j : 2 * d[k] - 2 - j;
        }
        s[k] = j;
      }
      ref.push_back(inside ? x.get(static_cast<size_t>(ravel(s, d))) : 1.5);
    }
    EXPECT_EQ(run_node(nb, {&x})[0].values(), ref) << mode;
  }
}

// The ONNX Resize reference for one axis: source coordinate of output o.
double source_coord(const std::string& ctm, int64_t o, int64_t in, int64_t out) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  if (ctm == "asymmetric") return static_cast<double>(o) / scale;
  if (ctm == "align_corners")
    return out == 1 ? 0.0 : static_cast<double>(o * (in - 1)) / static_cast<double>(out - 1);
  if (ctm == "pytorch_half_pixel" && out == 1) return 0.0;
  return (static_cast<double>(o) + 0.5) / scale - 0.5;
}

int64_t nearest(const std::string& nm, double x, int64_t in) {
  double r = 0;
  if (nm == "floor") r = std::floor(x);
  if (nm == "ceil") r = std::ceil(x);
  if (nm == "round_prefer_floor") r = x - std::floor(x) == 0.5 ? std::floor(x) : std::round(x);
  if (nm == "round_prefer_ceil") r = x - std::floor(x) == 0.5 ? std::ceil(x) : std::round(x);
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
}

TEST_P(OnnxOps, ResizeNearestAndBilinear) {
  const Ints d{2, 3, 5, 4};
  const Tensor x = input(rng, dt(), d);
  struct C {
    const char* mode;
    const char* ctm;
    const char* nm;
    Ints out;
  };
  const C cases[] = {{"nearest", "asymmetric", "floor", {2, 3, 10, 8}},
                     {"nearest", "half_pixel", "round_prefer_floor", {2, 3, 7, 3}},
                     {"nearest", "align_corners", "round_prefer_ceil", {2, 3, 9, 6}},
                     {"nearest", "pytorch_half_pixel", "ceil", {2, 3, 1, 7}},
                     {"linear", "half_pixel", "round_prefer_floor", {2, 3, 9, 7}},
                     {"linear", "align_corners", "round_prefer_floor", {2, 3, 8, 3}},
                     {"linear", "asymmetric", "round_prefer_floor", {2, 3, 3, 9}},
                     {"linear", "pytorch_half_pixel", "round_prefer_floor", {2, 3, 1, 6}}};
  for (const C& c : cases) {
    NodeBuilder nb("Resize", "rs");
    add_input(nb, x);
    nb.output(dt(), c.out).attr_ints("sizes", c.out).attr_str("mode", c.mode);
    nb.attr_str("coordinate_transformation_mode", c.ctm).attr_str("nearest_mode", c.nm);
    std::vector<double> ref;
    for (int64_t i = 0; i < numel_of(c.out); ++i) {
      const Ints o = unravel(i, c.out);
      const double sy = source_coord(c.ctm, o[2], d[2], c.out[2]);
      const double sx = source_coord(c.ctm, o[3], d[3], c.out[3]);
      auto at = [&](int64_t yy, int64_t xx) {
        yy = std::clamp<int64_t>(yy, 0, d[2] - 1);
        xx = std::clamp<int64_t>(xx, 0, d[3] - 1);
        return x.get(static_cast<size_t>(ravel({o[0], o[1], yy, xx}, d)));
      };
      if (std::string(c.mode) == "nearest") {
        ref.push_back(at(nearest(c.nm, sy, d[2]), nearest(c.nm, sx, d[3])));
      } else {
        const double fy = std::floor(sy), fx = std::floor(sx), ty = sy - fy, tx = sx - fx;
        const auto y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
        ref.push_back((1 - ty) * ((1 - tx) * at(y0, x0) + tx * at(y0, x0 + 1)) +
                      ty * ((1 - tx) * at(y0 + 1, x0) + tx * at(y0 + 1, x0 + 1)));
      }
    }
    expect_close(run_node(nb, {&x})[0], ref, std::string("Resize ") + c.mode + " " + c.ctm);
  }
}

// ONNX's reference Resize along one axis (onnx/reference/ops/op_resize.py,
// _interpolate_1d_with_x), written from the spec rather than from the
// kernel: the n taps are the n indices nearest the source coordinate
// (ties to the smaller), found by sorting; edge values outside.
struct Resize1d {
  std::string mode = "nearest", ctm = "half_pixel", nm = "round_prefer_floor";
  double a = -0.75, roi0 = 0, roi1 = 1, extrapolation = 0;
  bool exclude_outside = false, antialias = false;
};

double cubic_w(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return (a + 2) * x * x * x - (a + 3) * x * x + 1;
  if (x < 2) return a * x * x * x - 5 * a * x * x + 8 * a * x - 4 * a;
  return 0;
}

std::vector<double> resize_1d(const std::vector<double>& data, double scale, int64_t out,
                              const Resize1d& s) {
  const auto in = static_cast<int64_t>(data.size());
  const double in_d = static_cast<double>(in), out_w = scale * in_d;
  std::vector<double> y;
  for (int64_t o = 0; o < out; ++o) {
    const auto yo = static_cast<double>(o);
    double x = 0;
    if (s.ctm == "align_corners") x = out_w == 1 ? 0 : yo * (in_d - 1) / (out_w - 1);
    if (s.ctm == "asymmetric") x = yo / scale;
    if (s.ctm == "half_pixel") x = (yo + 0.5) / scale - 0.5;
    if (s.ctm == "pytorch_half_pixel") x = out_w == 1 ? -0.5 : (yo + 0.5) / scale - 0.5;
    if (s.ctm == "half_pixel_symmetric")
      x = in_d / 2 * (1 - static_cast<double>(out) / out_w) + (yo + 0.5) / scale - 0.5;
    if (s.ctm == "tf_crop_and_resize") {
      x = (out_w == 1 ? (s.roi1 - s.roi0) * (in_d - 1) / 2
                      : yo * (s.roi1 - s.roi0) * (in_d - 1) / (out_w - 1)) +
          s.roi0 * (in_d - 1);
      if (x < 0 || x > in_d - 1) {
        y.push_back(s.extrapolation);
        continue;
      }
    }
    const double ratio = x == std::floor(x) ? 1.0 : x - std::floor(x);
    std::vector<double> c;
    if (s.mode == "nearest") {
      const bool right = ratio == 1                     ? true
                         : s.nm == "round_prefer_floor" ? ratio > 0.5
                         : s.nm == "round_prefer_ceil"  ? ratio >= 0.5
                                                        : s.nm == "ceil";
      c = {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
    } else if (!s.antialias) {
      c = s.mode == "linear"
              ? std::vector<double>{1 - ratio, ratio}
              : std::vector<double>{cubic_w(1 + ratio, s.a), cubic_w(ratio, s.a),
                                    cubic_w(1 - ratio, s.a), cubic_w(2 - ratio, s.a)};
    } else {
      const double sc = std::min(scale, 1.0), support = s.mode == "linear" ? 1 : 2;
      const auto lo = static_cast<int64_t>(std::floor(-support / sc) + 1);
      double sum = 0;
      for (int64_t i = lo; i < 2 - lo; ++i) {
        const double arg = (static_cast<double>(i) - ratio) * sc;
        c.push_back(s.mode == "linear" ? std::max(0.0, 1 - std::fabs(arg)) : cubic_w(arg, s.a));
        sum += c.back();
      }
      for (double& v : c) v /= sum;
    }
    const auto n = static_cast<int64_t>(c.size());
    std::vector<int64_t> idx;
    for (int64_t i = -n; i < in + n; ++i) idx.push_back(i);
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
      return std::fabs(x - static_cast<double>(p)) < std::fabs(x - static_cast<double>(q));
    });
    idx.resize(static_cast<size_t>(n));
    std::sort(idx.begin(), idx.end());
    if (s.exclude_outside) {
      double sum = 0;
      for (size_t i = 0; i < c.size(); ++i) {
        if (idx[i] < 0 || idx[i] >= in) c[i] = 0;
        sum += c[i];
      }
      for (double& v : c) v /= sum;
    }
    double acc = 0;
    for (size_t i = 0; i < c.size(); ++i)
      acc += c[i] * data[static_cast<size_t>(std::clamp<int64_t>(idx[i], 0, in - 1))];
    y.push_back(acc);
  }
  return y;
}

TEST_P(OnnxOps, ResizeGeneralFormsAgainstOnnxReference) {
  const Ints d{2, 1, 6, 5};
  const Tensor x = input(rng, dt(), d);
  struct C {
    const char* what;
    Resize1d s;
    double sy, sx;  // ONNX's scales; 0: sizes / in
    Ints out;
    std::vector<double> roi;  // tf_crop_and_resize: H then W starts, H then W ends
  };
  Resize1d cubic;
  cubic.mode = "cubic";
  Resize1d cubic_ex = cubic;
  cubic_ex.a = -0.5;
  cubic_ex.exclude_outside = true;
  Resize1d cubic_aa = cubic;
  cubic_aa.antialias = true;
  cubic_aa.ctm = "align_corners";
  Resize1d linear_aa;
  linear_aa.mode = "linear";
  linear_aa.antialias = true;
  Resize1d crop;
  crop.mode = "linear";
  crop.ctm = "tf_crop_and_resize";
  crop.extrapolation = -4.0;
  Resize1d sym;
  sym.ctm = "half_pixel_symmetric";
  Resize1d nearest_asym;
  nearest_asym.ctm = "asymmetric";
  nearest_asym.nm = "floor";
  Resize1d cubic_asym = cubic;
  cubic_asym.ctm = "asymmetric";
  const C cases[] = {
      {"cubic fractional scales", cubic, 1.7, 0.6, {2, 1, 10, 3}, {}},
      {"cubic sizes", cubic, 0, 0, {2, 1, 9, 8}, {}},
      {"cubic asymmetric", cubic_asym, 0, 0, {2, 1, 12, 10}, {}},
      {"cubic A=-0.5 exclude_outside", cubic_ex, 0.8, 1.6, {2, 1, 4, 8}, {}},
      {"cubic antialias align_corners", cubic_aa, 0.6, 0.6, {2, 1, 3, 3}, {}},
      {"linear antialias", linear_aa, 0, 0, {2, 1, 2, 3}, {}},
      {"tf_crop_and_resize", crop, 0, 0, {2, 1, 4, 7}, {0.2, -0.1, 0.9, 1.3}},
      {"half_pixel_symmetric", sym, 0.7, 1.5, {2, 1, 4, 7}, {}},
      {"nearest fractional scales", nearest_asym, 0.6, 1.3, {2, 1, 3, 6}, {}},
  };
  for (const C& c : cases) {
    NodeBuilder nb("Resize", "rs");
    add_input(nb, x);
    nb.output(dt(), c.out).attr_ints("sizes", c.out).attr_str("mode", c.s.mode);
    nb.attr_str("coordinate_transformation_mode", c.s.ctm).attr_str("nearest_mode", c.s.nm);
    if (c.sy > 0) nb.attr_floats("scales", {1, 1, c.sy, c.sx});
    if (c.s.mode == "cubic") nb.attr_float("cubic_coeff_a", c.s.a);
    if (c.s.exclude_outside) nb.attr_int("exclude_outside", 1);
    if (c.s.antialias) nb.attr_int("antialias", 1);
    if (!c.roi.empty()) {
      nb.attr_floats("roi", {0, 0, c.roi[0], c.roi[1], 1, 1, c.roi[2], c.roi[3]});
      nb.attr_float("extrapolation_value", c.s.extrapolation);
    }
    const double sy = c.sy > 0 ? c.sy : static_cast<double>(c.out[2]) / static_cast<double>(d[2]);
    const double sx = c.sx > 0 ? c.sx : static_cast<double>(c.out[3]) / static_cast<double>(d[3]);
    Resize1d along_h = c.s, along_w = c.s;
    if (!c.roi.empty()) {
      along_h.roi0 = c.roi[0], along_h.roi1 = c.roi[2];
      along_w.roi0 = c.roi[1], along_w.roi1 = c.roi[3];
    }
    // Separable, H first, as ONNX's reference runs it.
    std::vector<double> ref(static_cast<size_t>(numel_of(c.out)));
    for (int64_t p = 0; p < d[0]; ++p) {
      std::vector<std::vector<double>> cols(static_cast<size_t>(d[3]));
      for (int64_t j = 0; j < d[3]; ++j) {
        std::vector<double> col;
        for (int64_t i = 0; i < d[2]; ++i)
          col.push_back(x.get(static_cast<size_t>(ravel({p, 0, i, j}, d))));
        cols[static_cast<size_t>(j)] = resize_1d(col, sy, c.out[2], along_h);
      }
      for (int64_t i = 0; i < c.out[2]; ++i) {
        std::vector<double> row;
        for (int64_t j = 0; j < d[3]; ++j)
          row.push_back(cols[static_cast<size_t>(j)][static_cast<size_t>(i)]);
        const std::vector<double> r = resize_1d(row, sx, c.out[3], along_w);
        for (int64_t j = 0; j < c.out[3]; ++j)
          ref[static_cast<size_t>(ravel({p, 0, i, j}, c.out))] = r[static_cast<size_t>(j)];
      }
    }
    expect_close(run_node(nb, {&x})[0], ref, std::string("Resize ") + c.what);
  }
}

// ONNX's reference GridSample (onnx/reference/ops/op_grid_sample.py),
// ported as it is written: the coordinate denormalised and held in f32,
// moved inside by the padding mode, then interpolated recursively over the
// leading axis, each 1-D tap read through the padding mode.
struct GridRef {
  std::string mode, padding;
  bool align = false;
  std::vector<int64_t> dims;  // spatial

  double lo(size_t a) const { return align ? 0.0 : -0.5; }
  double hi(size_t a) const {
    return align ? static_cast<double>(dims[a]) - 1 : static_cast<double>(dims[a]) - 0.5;
  }
  static double reflect(double x, double x_min, double x_max) {
    const double rng = x_max - x_min;
    if (x < x_min) {
      const double dx = x_min - x;
      const auto n = static_cast<int64_t>(dx / rng);
      const double r = dx - static_cast<double>(n) * rng;
      return n % 2 == 0 ? x_min + r : x_max - r;
    }
    if (x > x_max) {
      const double dx = x - x_max;
      const auto n = static_cast<int64_t>(dx / rng);
      const double r = dx - static_cast<double>(n) * rng;
      return n % 2 == 0 ? x_max - r : x_min + r;
    }
    return x;
  }
  double interp(const std::vector<double>& data, size_t a, int64_t base,
                const std::vector<double>& x) const {
    const int64_t d = dims[a];
    int64_t stride = 1;
    for (size_t b = a + 1; b < dims.size(); ++b) stride *= dims[b];
    const auto value_at = [&](int64_t i) {
      if (padding == "zeros" && (i < 0 || i >= d)) return 0.0;
      if (padding == "border") i = std::clamp<int64_t>(i, 0, d - 1);
      if (padding == "reflection")
        i = static_cast<int64_t>(reflect(static_cast<double>(i), lo(a), hi(a)));
      const int64_t off = base + i * stride;
      return a + 1 == dims.size() ? data[static_cast<size_t>(off)] : interp(data, a + 1, off, x);
    };
    if (mode == "nearest") return value_at(static_cast<int64_t>(x[a]));
    const auto x0 = static_cast<int64_t>(std::floor(x[a]));
    const double t = x[a] - static_cast<double>(x0);
    if (mode == "linear") return (1 - t) * value_at(x0) + t * value_at(x0 + 1);
    double w[4];
    const double A = -0.75;
    const auto outer = [&](double v) { return ((A * v - 5 * A) * v + 8 * A) * v - 4 * A; };
    const auto inner = [&](double v) { return ((A + 2) * v - (A + 3)) * v * v + 1; };
    w[0] = outer(t + 1);
    w[1] = inner(t);
    w[2] = inner(1 - t);
    w[3] = outer(2 - t);
    double acc = 0;
    for (int64_t j = 0; j < 4; ++j) acc += w[j] * value_at(x0 - 1 + j);
    return acc;
  }
};

TEST_P(OnnxOps, GridSampleAgainstOnnxReference) {
  struct C {
    const char* mode;
    const char* padding;
    int align;
    Ints x, grid;
  };
  const C cases[] = {
      {"linear", "zeros", 0, {2, 3, 5, 4}, {2, 3, 6, 2}},
      {"linear", "reflection", 1, {1, 2, 4, 3}, {1, 4, 4, 2}},
      {"nearest", "zeros", 0, {1, 2, 5, 6}, {1, 3, 5, 2}},
      {"nearest", "reflection", 0, {1, 1, 4, 5}, {1, 6, 3, 2}},
      {"nearest", "border", 1, {1, 2, 3, 4}, {1, 2, 5, 2}},
      {"cubic", "zeros", 0, {1, 2, 5, 4}, {1, 3, 4, 2}},
      {"cubic", "border", 1, {2, 1, 6, 5}, {2, 2, 3, 2}},
      {"cubic", "reflection", 0, {1, 2, 4, 6}, {1, 5, 3, 2}},
      {"linear", "border", 0, {1, 2, 3, 4, 5}, {1, 2, 3, 2, 3}},
      {"nearest", "zeros", 1, {1, 1, 4, 3, 5}, {1, 3, 2, 2, 3}},
  };
  for (const C& c : cases) {
    const Tensor x = input(rng, dt(), c.x);
    const Tensor g = input(rng, dt(), c.grid, 1.4);
    const size_t k = c.x.size() - 2;
    Ints yd{c.x[0], c.x[1]};
    yd.insert(yd.end(), c.grid.begin() + 1, c.grid.end() - 1);
    NodeBuilder nb("GridSample", "gs");
    add_input(nb, x);
    add_input(nb, g);
    nb.output(dt(), yd).attr_str("mode", c.mode).attr_str("padding_mode", c.padding);
    nb.attr_int("align_corners", c.align);
    GridRef ref{c.mode, c.padding, c.align != 0, Ints(c.x.begin() + 2, c.x.end())};
    const std::vector<double> xv = x.values(), gv = g.values();
    // ONNX's reference holds coordinates in f32; the float64 mode in f64.
    const auto held = [&](double v) {
      return dt() == AMPX_DTYPE_F64 ? v : static_cast<double>(static_cast<float>(v));
    };
    int64_t plane = 1, points = 1;
    for (size_t a = 0; a < k; ++a) plane *= c.x[2 + a], points *= c.grid[1 + a];
    std::vector<double> want;
    for (int64_t n = 0; n < c.x[0]; ++n)
      for (int64_t ch = 0; ch < c.x[1]; ++ch) {
        const std::vector<double> data(xv.begin() + (n * c.x[1] + ch) * plane,
                                       xv.begin() + (n * c.x[1] + ch + 1) * plane);
        for (int64_t p = 0; p < points; ++p) {
          std::vector<double> xs(k);
          for (size_t a = 0; a < k; ++a) {
            const double nv =
                gv[static_cast<size_t>((n * points + p) * static_cast<int64_t>(k)) + (k - 1 - a)];
            const auto d = static_cast<double>(ref.dims[a]);
            double v = held(ref.align ? (nv + 1) / 2.0 * (d - 1) : ((nv + 1) * d - 1) / 2.0);
            if (ref.mode == "nearest") v = std::nearbyint(v);
            if (v < ref.lo(a) || v > ref.hi(a)) {
              if (ref.padding == "border") v = std::clamp(v, 0.0, d - 1);
              if (ref.padding == "reflection") v = GridRef::reflect(v, ref.lo(a), ref.hi(a));
            }
            xs[a] = held(v);
          }
          want.push_back(ref.interp(data, 0, 0, xs));
        }
      }
    expect_close(run_node(nb, {&x, &g})[0], want,
                 std::string("GridSample ") + c.mode + " " + c.padding);
  }
}

TEST_P(OnnxOps, ConvTransposeStridedGroupedPaddedDilated) {
  const Ints xd{2, 4, 5, 4}, wd{4, 3, 3, 2}, yd{2, 6, 9, 12};
  const Tensor x = input(rng, dt(), xd, 1.0), w = input(rng, dt(), wd, 1.0),
               b = input(rng, dt(), {6}, 1.0);
  const int64_t sh = 2, sw = 3, pt = 1, pl = 0, dh = 1, dw = 2, g = 2;
  for (bool bias : {true, false}) {
    NodeBuilder nb("ConvTranspose", "ct");
    add_input(nb, x);
    add_input(nb, w);
    if (bias) add_input(nb, b);
    nb.output(dt(), yd)
        .attr_ints("strides", {sh, sw})
        .attr_ints("pads", {pt, pl, 2, 0})
        .attr_ints("dilations", {dh, dw})
        .attr_ints("output_padding", {1, 0})
        .attr_int("group", g);
    std::vector<double> ref(static_cast<size_t>(numel_of(yd)), 0.0);
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t m = 0; m < 6; ++m)
        for (int64_t oh = 0; oh < 9; ++oh)
          for (int64_t ow = 0; ow < 12; ++ow) {
            double s = bias ? b.get(static_cast<size_t>(m)) : 0.0;
            const int64_t gi = m / 3;
            for (int64_t c = gi * 2; c < gi * 2 + 2; ++c)
              for (int64_t kh = 0; kh < 3; ++kh)
                for (int64_t kw = 0; kw < 2; ++kw) {
                  const int64_t th = oh + pt - kh * dh, tw = ow + pl - kw * dw;
                  if (th < 0 || tw < 0 || th % sh || tw % sw) continue;
                  const int64_t ih = th / sh, iw = tw / sw;
                  if (ih >= 5 || iw >= 4) continue;
                  s += x.get(static_cast<size_t>(ravel({n, c, ih, iw}, xd))) *
                       w.get(static_cast<size_t>(ravel({c, m % 3, kh, kw}, wd)));
                }
            ref[static_cast<size_t>(ravel({n, m, oh, ow}, yd))] = s;
          }
    const std::vector<const Tensor*> ins =
        bias ? std::vector<const Tensor*>{&x, &w, &b} : std::vector<const Tensor*>{&x, &w};
    std::vector<Tensor> got;
    if (bias)
      got = run_node(nb, {&x, &w, &b});
    else
      got = run_node(nb, {&x, &w});
    expect_close(got[0], ref, bias ? "ConvTranspose bias" : "ConvTranspose");
  }
}

// ------------------------------------------- the later ONNX ops (issue 20)

double softplus_ref(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

TEST_P(OnnxOps, RoundingAbsAndSmoothActivations) {
  check_unary(rng, dt(), "Floor", [](double x) { return std::floor(x); });
  check_unary(rng, dt(), "Ceil", [](double x) { return std::ceil(x); });
  // Halves to even (x.5 values are representable in every dtype here).
  check_unary(rng, dt(), "Round", [](double x) { return std::nearbyint(x); });
  const Tensor halves = Tensor::of(dt(), {6}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5});
  NodeBuilder r("Round", "r");
  add_input(r, halves);
  r.output(dt(), {6});
  EXPECT_EQ(run_node(r, {&halves})[0].values(), (std::vector<double>{0, 2, 2, -0, -2, -2}));
  check_unary(rng, dt(), "Abs", [](double x) { return std::fabs(x); });
  check_unary(rng, dt(), "Softplus", softplus_ref);
  check_unary(rng, dt(), "Mish", [](double x) { return x * std::tanh(softplus_ref(x)); });
  // Softplus does not overflow where e^x does.
  const Tensor big = Tensor::of(dt(), {2}, {100.0, -100.0});
  NodeBuilder sp("Softplus", "sp");
  add_input(sp, big);
  sp.output(dt(), {2});
  expect_close(run_node(sp, {&big})[0], {100.0, softplus_ref(-100.0)}, "Softplus large");
}

TEST_P(OnnxOps, ComparisonsAndLogic) {
  Tensor a = input(rng, dt(), {4, 5}), b = input(rng, dt(), {5});
  for (size_t i = 0; i < 5; i += 2) b.set(i, a.get(5 + i));  // ties
  const std::vector<std::pair<const char*, std::function<bool(double, double)>>> ops = {
      {"Less", std::less<>()},
      {"Greater", std::greater<>()},
      {"LessOrEqual", std::less_equal<>()},
      {"GreaterOrEqual", std::greater_equal<>()}};
  for (const auto& [op, f] : ops) {
    NodeBuilder nb(op, "cmp");
    add_input(nb, a);
    add_input(nb, b);
    nb.output(AMPX_DTYPE_BOOL, {4, 5});
    EXPECT_EQ(run_node(nb, {&a, &b})[0].values(),
              broadcast_ref({&a, &b}, {4, 5}, [&](const auto& v) { return f(v[0], v[1]); }))
        << op;
  }
  const Tensor p = Tensor::of(AMPX_DTYPE_BOOL, {2, 3}, {1, 0, 1, 0, 1, 0});
  const Tensor q = Tensor::of(AMPX_DTYPE_BOOL, {3}, {1, 1, 0});
  for (const char* op : {"And", "Or"}) {
    NodeBuilder nb(op, "logic");
    add_input(nb, p);
    add_input(nb, q);
    nb.output(AMPX_DTYPE_BOOL, {2, 3});
    const bool is_and = std::string(op) == "And";
    EXPECT_EQ(run_node(nb, {&p, &q})[0].values(),
              broadcast_ref({&p, &q}, {2, 3},
                            [&](const auto& v) {
                              return is_and ? (v[0] != 0 && v[1] != 0) : (v[0] != 0 || v[1] != 0);
                            }))
        << op;
  }
  NodeBuilder nb("Not", "not");
  add_input(nb, p);
  nb.output(AMPX_DTYPE_BOOL, {2, 3});
  EXPECT_EQ(run_node(nb, {&p})[0].values(), (std::vector<double>{0, 1, 0, 1, 0, 1}));
}

TEST_P(OnnxOps, VariadicMinMaxSumMean) {
  const Tensor x = input(rng, dt(), {2, 3, 4}), y = input(rng, dt(), {3, 1}),
               z = input(rng, dt(), {4});
  const Ints out{2, 3, 4};
  const auto run3 = [&](const char* op) {
    NodeBuilder nb(op, "v");
    add_input(nb, x);
    add_input(nb, y);
    add_input(nb, z);
    nb.output(dt(), out);
    return run_node(nb, {&x, &y, &z})[0];
  };
  EXPECT_EQ(run3("Min").values(), broadcast_ref({&x, &y, &z}, out, [](const auto& v) {
              return std::min({v[0], v[1], v[2]});
            }));
  EXPECT_EQ(run3("Max").values(), broadcast_ref({&x, &y, &z}, out, [](const auto& v) {
              return std::max({v[0], v[1], v[2]});
            }));
  expect_close(run3("Sum"),
               broadcast_ref({&x, &y, &z}, out, [](const auto& v) { return v[0] + v[1] + v[2]; }),
               "Sum");
  expect_close(
      run3("Mean"),
      broadcast_ref({&x, &y, &z}, out, [](const auto& v) { return (v[0] + v[1] + v[2]) / 3; }),
      "Mean");
  // One input: a copy.
  NodeBuilder one("Sum", "one");
  add_input(one, y);
  one.output(dt(), {3, 1});
  EXPECT_EQ(run_node(one, {&y})[0].values(), y.values());
}

TEST_P(OnnxOps, MoreReductions) {
  const Ints d{3, 4, 5};
  const Tensor x = input(rng, dt(), d, 1.5);
  // Products of up to 60 factors: magnitudes near 1, so that the product
  // stays within f16's range.
  Tensor near1 = x;
  for (size_t i = 0; i < static_cast<size_t>(x.numel()); ++i)
    near1.set(i, std::copysign(0.9 + 0.1 * std::fabs(x.get(i)), x.get(i)));
  struct C {
    Ints axes;
    int keep;
    Ints out;
  };
  struct R {
    const char* op;
    std::function<double(const std::vector<double>&)> f;
  };
  const std::vector<R> reds = {
      {"ReduceMin", [](const auto& v) { return *std::min_element(v.begin(), v.end()); }},
      {"ReduceProd",
       [](const auto& v) {
         double p = 1;
         for (double e : v) p *= e;
         return p;
       }},
      {"ReduceL2",
       [](const auto& v) {
         double s = 0;
         for (double e : v) s += e * e;
         return std::sqrt(s);
       }},
      {"ReduceSumSquare",
       [](const auto& v) {
         double s = 0;
         for (double e : v) s += e * e;
         return s;
       }},
      {"ReduceLogSumExp", [](const auto& v) {
         double s = 0;
         for (double e : v) s += std::exp(e);
         return std::log(s);
       }}};
  for (const R& red : reds)
    for (const C& c :
         {C{{1}, 1, {3, 1, 5}}, C{{0, -1}, 0, {4}}, C{{}, 1, {1, 1, 1}}, C{{2, 0}, 1, {1, 4, 1}}}) {
      const Tensor& xr = std::string(red.op) == "ReduceProd" ? near1 : x;
      NodeBuilder nb(red.op, "r");
      add_input(nb, xr);
      nb.output(dt(), c.out).attr_int("keepdims", c.keep);
      if (!c.axes.empty()) nb.attr_ints("axes", c.axes);
      std::vector<bool> reduced(3, c.axes.empty());
      for (int64_t a : c.axes) reduced[static_cast<size_t>(a < 0 ? a + 3 : a)] = true;
      Ints kept;
      for (size_t i = 0; i < 3; ++i)
        if (!reduced[i]) kept.push_back(d[i]);
      std::vector<std::vector<double>> groups(static_cast<size_t>(numel_of(kept)));
      for (int64_t i = 0; i < numel_of(d); ++i) {
        const Ints idx = unravel(i, d);
        Ints k;
        for (size_t j = 0; j < 3; ++j)
          if (!reduced[j]) k.push_back(idx[j]);
        groups[static_cast<size_t>(ravel(k, kept))].push_back(xr.get(static_cast<size_t>(i)));
      }
      std::vector<double> ref;
      for (const auto& g : groups) ref.push_back(red.f(g));
      expect_close(run_node(nb, {&xr})[0], ref, red.op);
    }
  // An empty reduction: the product's 1, log-sum-exp's -inf; a min of
  // nothing is refused.
  const Tensor e = Tensor::zeros(dt(), {2, 0});
  NodeBuilder prod("ReduceProd", "p");
  add_input(prod, e);
  prod.output(dt(), {2, 1}).attr_ints("axes", {1});
  EXPECT_EQ(run_node(prod, {&e})[0].values(), (std::vector<double>{1, 1}));
  NodeBuilder lse("ReduceLogSumExp", "lse");
  add_input(lse, e);
  lse.output(dt(), {2}).attr_ints("axes", {1}).attr_int("keepdims", 0);
  EXPECT_EQ(run_node(lse, {&e})[0].values(), (std::vector<double>{-INFINITY, -INFINITY}));
  NodeBuilder mn("ReduceMin", "mn");
  add_input(mn, e);
  mn.output(dt(), {2, 1}).attr_ints("axes", {1});
  EXPECT_FALSE(reference::can_run(mn.desc(), nullptr));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, OnnxOps, float_dtypes(), DtypeName());
// The float64 mode cpu_ref runs (run_node), against the same f64 references.
INSTANTIATE_TEST_SUITE_P(Float64, OnnxOps, ::testing::Values(AMPX_DTYPE_F64), DtypeName());

// ------------------------------------------------------ integer dtypes

class IntOps : public ::testing::TestWithParam<ampx_dtype> {
 protected:
  ampx_dtype dt() const { return GetParam(); }
};

Tensor run1(NodeBuilder& nb, std::initializer_list<const Tensor*> ins) {
  return run_node(nb, ins)[0];
}

TEST_P(IntOps, ArithmeticTruncatesAndWraps) {
  const Tensor a = Tensor::of(dt(), {2, 3}, {7, -7, 9, 0, 100, -5});
  const Tensor b = Tensor::of(dt(), {3}, {2, 2, -4});
  const Tensor zero = Tensor::of(dt(), {}, {0});
  const std::vector<std::pair<const char*, std::vector<double>>> want = {
      {"Add", {9, -5, 5, 2, 102, -9}},
      {"Sub", {5, -9, 13, -2, 98, -1}},
      {"Mul", {14, -14, -36, 0, 200, 20}},
      {"Div", {3, -3, -2, 0, 50, 1}}};  // toward zero, as ONNX
  for (const auto& [op, w] : want) {
    NodeBuilder nb(op, "b");
    add_input(nb, a);
    add_input(nb, b);
    nb.output(dt(), {2, 3});
    EXPECT_EQ(run1(nb, {&a, &b}).values(), w) << op;
  }
  // Division by zero is defined here (0), and the minimum wraps.
  NodeBuilder dz("Div", "dz");
  add_input(dz, a);
  add_input(dz, zero);
  dz.output(dt(), {2, 3});
  EXPECT_EQ(run1(dz, {&a, &zero}).values(), std::vector<double>(6, 0.0));
  const double lo = dt() == AMPX_DTYPE_I64 ? static_cast<double>(INT64_MIN) : INT32_MIN;
  Tensor mn = Tensor::zeros(dt(), {1});
  if (dt() == AMPX_DTYPE_I64) {
    const int64_t v = INT64_MIN;
    std::memcpy(mn.bytes.data(), &v, 8);
  } else {
    mn.set(0, lo);
  }
  NodeBuilder ng("Neg", "neg");
  add_input(ng, mn);
  ng.output(dt(), {1});
  EXPECT_EQ(run1(ng, {&mn}).get(0), lo);
  const Tensor v = Tensor::of(dt(), {3}, {4, -3, 0});
  NodeBuilder n2("Neg", "neg2");
  add_input(n2, v);
  n2.output(dt(), {3});
  EXPECT_EQ(run1(n2, {&v}).values(), (std::vector<double>{-4, 3, 0}));
}

TEST_P(IntOps, EqualWhereAndDataMovement) {
  const Tensor a = Tensor::of(dt(), {4}, {1, 5, -2, 5});
  const Tensor s = Tensor::of(dt(), {}, {5});
  NodeBuilder eq("Equal", "eq");
  add_input(eq, a);
  add_input(eq, s);
  eq.output(AMPX_DTYPE_BOOL, {4});
  const Tensor m = run1(eq, {&a, &s});
  EXPECT_EQ(m.values(), (std::vector<double>{0, 1, 0, 1}));
  NodeBuilder wh("Where", "w");
  add_input(wh, m);
  add_input(wh, a);
  add_input(wh, Tensor::of(dt(), {}, {-1}));
  const Tensor minus1 = Tensor::of(dt(), {}, {-1});
  wh.output(dt(), {4});
  EXPECT_EQ(run1(wh, {&m, &a, &minus1}).values(), (std::vector<double>{-1, 5, -1, 5}));

  // The shape-subgraph data ops: Gather, Concat, Slice, Reshape (also as
  // Unsqueeze), Expand.
  const Tensor shape = Tensor::of(dt(), {4}, {2, 3, 5, 7});
  const Tensor idx = Tensor::of(AMPX_DTYPE_I64, {2}, {-1, 1});
  NodeBuilder g("Gather", "g");
  add_input(g, shape);
  add_input(g, idx);
  g.output(dt(), {2});
  EXPECT_EQ(run1(g, {&shape, &idx}).values(), (std::vector<double>{7, 3}));
  NodeBuilder cat("Concat", "cat");
  add_input(cat, shape);
  add_input(cat, a);
  cat.output(dt(), {8}).attr_int("axis", 0);
  EXPECT_EQ(run1(cat, {&shape, &a}).values(), (std::vector<double>{2, 3, 5, 7, 1, 5, -2, 5}));
  NodeBuilder sl("Slice", "sl");
  add_input(sl, shape);
  sl.output(dt(), {2}).attr_ints("starts", {1}).attr_ints("ends", {-1});
  EXPECT_EQ(run1(sl, {&shape}).values(), (std::vector<double>{3, 5}));
  NodeBuilder un("Reshape", "unsqueeze");
  add_input(un, shape);
  un.output(dt(), {1, 4}).attr_ints("shape", {1, 4});
  EXPECT_EQ(run1(un, {&shape}).values(), shape.values());
  NodeBuilder ex("Expand", "ex");
  add_input(ex, s);
  ex.output(dt(), {2, 2}).attr_ints("shape", {2, 2});
  EXPECT_EQ(run1(ex, {&s}).values(), (std::vector<double>(4, 5.0)));
}

TEST_P(IntOps, AbsMinMaxAndComparisons) {
  const Tensor a = Tensor::of(dt(), {2, 3}, {7, -7, 9, 0, 100, -5});
  const Tensor b = Tensor::of(dt(), {3}, {2, -7, 50});
  NodeBuilder abs("Abs", "abs");
  add_input(abs, a);
  abs.output(dt(), {2, 3});
  EXPECT_EQ(run1(abs, {&a}).values(), (std::vector<double>{7, 7, 9, 0, 100, 5}));
  NodeBuilder mn("Min", "mn");
  add_input(mn, a);
  add_input(mn, b);
  mn.output(dt(), {2, 3});
  EXPECT_EQ(run1(mn, {&a, &b}).values(), (std::vector<double>{2, -7, 9, 0, -7, -5}));
  NodeBuilder mx("Max", "mx");
  add_input(mx, a);
  add_input(mx, b);
  mx.output(dt(), {2, 3});
  EXPECT_EQ(run1(mx, {&a, &b}).values(), (std::vector<double>{7, -7, 50, 2, 100, 50}));
  NodeBuilder le("LessOrEqual", "le");
  add_input(le, a);
  add_input(le, b);
  le.output(AMPX_DTYPE_BOOL, {2, 3});
  EXPECT_EQ(run1(le, {&a, &b}).values(), (std::vector<double>{0, 1, 1, 1, 0, 1}));
  NodeBuilder gt("Greater", "gt");
  add_input(gt, a);
  add_input(gt, b);
  gt.output(AMPX_DTYPE_BOOL, {2, 3});
  EXPECT_EQ(run1(gt, {&a, &b}).values(), (std::vector<double>{1, 0, 0, 0, 1, 0}));
}

INSTANTIATE_TEST_SUITE_P(Ints, IntOps, ::testing::Values(AMPX_DTYPE_I64, AMPX_DTYPE_I32),
                         DtypeName());

TEST(IntOps, CastBetweenShapeDtypes) {
  const std::vector<ampx_dtype> all = {AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16,
                                       AMPX_DTYPE_I64, AMPX_DTYPE_I32, AMPX_DTYPE_BOOL};
  const std::vector<double> v{0, 1, -3, 7, 64};
  for (ampx_dtype from : all)
    for (ampx_dtype to : all) {
      const Tensor x =
          Tensor::of(from, {5}, from == AMPX_DTYPE_BOOL ? std::vector<double>{0, 1, 1, 0, 1} : v);
      NodeBuilder nb("Cast", "c");
      add_input(nb, x);
      nb.output(to, {5}).attr_int("to", to);
      std::vector<double> want = x.values();
      if (to == AMPX_DTYPE_BOOL)
        for (double& w : want) w = w != 0 ? 1 : 0;
      EXPECT_EQ(run1(nb, {&x}).values(), want) << dtype_str(from) << "->" << dtype_str(to);
    }
}

TEST(IntOps, FloatOnlyOpsRejectIntegers) {
  const Tensor x = Tensor::of(AMPX_DTYPE_I64, {3}, {1, 2, 3});
  NodeBuilder nb("Exp", "e");
  add_input(nb, x);
  nb.output(AMPX_DTYPE_I64, {3});
  std::string why;
  EXPECT_FALSE(reference::can_run(nb.desc(), &why));
  EXPECT_NE(why.find("input 0 is i64"), std::string::npos) << why;
}

}  // namespace
}  // namespace ampx::test
