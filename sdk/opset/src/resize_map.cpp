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
