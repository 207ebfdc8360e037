#include "ampx/opset/resize_map.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ampx::opset {

ResizeAxisMap resize_axis_map(int64_t in, int64_t out, bool linear, std::string_view ctm,
                              std::string_view nm) {
  ResizeAxisMap m;
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  for (int64_t o = 0; o < out; ++o) {
    const auto od = static_cast<double>(o);
    double x = 0;
    if (ctm == "half_pixel") {
      x = (od + 0.5) / scale - 0.5;
    } else if (ctm == "pytorch_half_pixel") {
      x = out > 1 ? (od + 0.5) / scale - 0.5 : 0.0;
    } else if (ctm == "align_corners") {
      x = out == 1 ? 0.0 : od * static_cast<double>(in - 1) / static_cast<double>(out - 1);
    } else if (ctm == "asymmetric") {
      x = od / scale;
    } else {
      throw std::invalid_argument("attribute 'coordinate_transformation_mode' \"" +
                                  std::string(ctm) + "\" is not supported");
    }
    const auto clampi = [&](double v) {
      return std::clamp<int64_t>(static_cast<int64_t>(v), 0, in - 1);
    };
    if (linear) {
      const double f = std::floor(x);
      m.i0.push_back(clampi(f));
      m.i1.push_back(clampi(f + 1));
      m.w1.push_back(x - f);
    } else {
      double r = 0;
      const double frac = x - std::floor(x);
      if (nm == "floor") {
        r = std::floor(x);
      } else if (nm == "ceil") {
        r = std::ceil(x);
      } else if (nm == "round_prefer_floor") {
        r = frac == 0.5 ? std::floor(x) : std::round(x);
      } else if (nm == "round_prefer_ceil") {
        r = frac == 0.5 ? std::ceil(x) : std::round(x);
      } else {
        throw std::invalid_argument("attribute 'nearest_mode' \"" + std::string(nm) +
                                    "\" is not supported");
      }
      m.i0.push_back(clampi(std::max(r, 0.0)));
      m.i1.push_back(m.i0.back());
      m.w1.push_back(0.0);
    }
  }
  return m;
}

}  // namespace ampx::opset

namespace ampx::opset {
namespace {

double source_coordinate(const ResizeAxisSpec& s, int64_t o, bool& outside) {
  const auto y = static_cast<double>(o), in = static_cast<double>(s.in);
  const double out_w = s.scale * in;  // ONNX's output_width: not rounded
  const std::string_view ctm = s.coordinate_transformation_mode;
  if (ctm == "half_pixel") return (y + 0.5) / s.scale - 0.5;
  if (ctm == "pytorch_half_pixel") return out_w == 1 ? -0.5 : (y + 0.5) / s.scale - 0.5;
  if (ctm == "align_corners") return out_w == 1 ? 0.0 : y * (in - 1) / (out_w - 1);
  if (ctm == "asymmetric") return y / s.scale;
  if (ctm == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(s.out) / out_w;
    const double offset = in / 2 * (1 - adjustment);
    return offset + (y + 0.5) / s.scale - 0.5;
  }
  if (ctm == "tf_crop_and_resize") {
    const double span = s.roi_end - s.roi_start;
    double x = out_w == 1 ? span * (in - 1) / 2 : y * span * (in - 1) / (out_w - 1);
    x += s.roi_start * (in - 1);
    outside = x < 0 || x > in - 1;
    return x;
  }
  throw std::invalid_argument("attribute 'coordinate_transformation_mode' \"" + std::string(ctm) +
                              "\" is not supported");
}

double cubic(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// The weights of taps at offsets first, first+1, ... from the left
// neighbour, for `ratio` in (0, 1] (ONNX's get_coeffs).
std::vector<double> coefficients(const ResizeAxisSpec& s, double ratio) {
  const std::string_view mode = s.mode;
  if (mode == "nearest") {
    const std::string_view nm = s.nearest_mode;
    if (ratio == 1) return {0, 1};
    bool right = false;
    if (nm == "round_prefer_floor")
      right = ratio > 0.5;
    else if (nm == "round_prefer_ceil")
      right = ratio >= 0.5;
    else if (nm == "floor")
      right = false;
    else if (nm == "ceil")
      right = true;
    else
      throw std::invalid_argument("attribute 'nearest_mode' \"" + std::string(nm) +
                                  "\" is not supported");
    return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
  }
  const double a = s.cubic_coeff_a;
  if (mode == "linear" && !s.antialias) return {1 - ratio, ratio};
  if (mode == "cubic" && !s.antialias)
    return {cubic(1 + ratio, a), cubic(ratio, a), cubic(1 - ratio, a), cubic(2 - ratio, a)};
  if (mode != "linear" && mode != "cubic")
    throw std::invalid_argument("attribute 'mode' \"" + std::string(mode) + "\" is not supported");
  // Antialias (shrinking): the filter stretched by 1 / scale, normalised.
  const double sc = std::min(s.scale, 1.0);
  const double support = mode == "linear" ? 1.0 : 2.0;
  const auto start = static_cast<int64_t>(std::floor(-support / sc) + 1);
  std::vector<double> c;
  double sum = 0;
  for (int64_t i = start; i < 2 - start; ++i) {
    const double arg = (static_cast<double>(i) - ratio) * sc;
    c.push_back(mode == "linear" ? std::clamp(1 - std::abs(arg), 0.0, 1.0) : cubic(arg, a));
    sum += c.back();
  }
  for (double& v : c) v /= sum;
  return c;
}

}  // namespace

ResizeAxisTaps resize_axis_taps(const ResizeAxisSpec& s) {
  ResizeAxisTaps t;
  for (int64_t o = 0; o < s.out; ++o) {
    bool outside = false;
    const double x = source_coordinate(s, o, outside);
    const double fl = std::floor(x);
    const bool whole = x == fl;
    // ratio in (0, 1]: a whole coordinate takes the pixel on its left's
    // right neighbour, as ONNX's reference does.
    const double ratio = whole ? 1.0 : x - fl;
    std::vector<double> c = coefficients(s, ratio);
    const auto n = static_cast<int64_t>(c.size());
    if (o == 0) t.taps = n;
    // The n taps nearest x, ties to the smaller index (n is even).
    // Past a few pixels beyond either edge every tap clamps to the edge (or
    // counts as outside) alike, so the index is taken from a bounded floor:
    // a huge or NaN coordinate (an extreme scale or roi) stays defined.
    const double bound = static_cast<double>(s.in) + 8.0;
    const double fl_index = std::isnan(fl) ? 0.0 : std::clamp(fl, -bound, bound);
    const int64_t first = static_cast<int64_t>(fl_index) + (whole ? -n / 2 : 1 - n / 2);
    if (s.exclude_outside) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t idx = first + i;
        if (idx < 0 || idx >= s.in) c[static_cast<size_t>(i)] = 0;
        sum += c[static_cast<size_t>(i)];
      }
      if (sum != 0)
        for (double& v : c) v /= sum;
    }
    for (int64_t i = 0; i < n; ++i) {
      t.index.push_back(std::clamp<int64_t>(first + i, 0, s.in - 1));
      t.weight.push_back(c[static_cast<size_t>(i)]);
    }
    t.outside.push_back(outside ? 1 : 0);
  }
  return t;
}

}  // namespace ampx::opset
