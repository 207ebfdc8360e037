#include "window.hpp"

#include <climits>

namespace ampx::reference::detail {

std::vector<int64_t> positive_ints(const Ctx& c, const char* name, size_t n, int64_t def,
                                   int64_t min) {
  std::vector<int64_t> v = c.ints_n(name, n, std::vector<int64_t>(n, def));
  for (int64_t x : v) {
    if (x < min) {
      c.fail("attribute '" + std::string(name) + "' " + dims_str(v) +
             " must be >= " + std::to_string(min));
    }
  }
  return v;
}

ConvShape conv_shape(const Ctx& c, const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  ConvShape s{};
  s.N = x[0], s.C = x[1], s.H = x[2], s.W = x[3];
  s.M = w[0], s.kH = w[2], s.kW = w[3];
  s.group = c.v.get_int("group", 1);
  if (s.group < 1) c.fail("attribute 'group' = " + std::to_string(s.group) + " must be >= 1");
  if (s.C % s.group != 0 || s.M % s.group != 0) {
    c.fail("input channels " + std::to_string(s.C) + " and output channels " + std::to_string(s.M) +
           " must be divisible by group " + std::to_string(s.group));
  }
  s.Cg = s.C / s.group;
  s.Mg = s.M / s.group;
  if (w[1] != s.Cg) {
    c.fail("weight has shape " + dims_str(w) + ": dim 1 must be C/group = " + std::to_string(s.Cg));
  }
  if (s.kH < 1 || s.kW < 1) c.fail("weight has an empty kernel " + dims_str(w));
  const auto st = positive_ints(c, "strides", 2, 1, 1);
  const auto pads = positive_ints(c, "pads", 4, 0, 0);
  const auto dil = positive_ints(c, "dilations", 2, 1, 1);
  s.sh = st[0], s.sw = st[1], s.pt = pads[0], s.pl = pads[1], s.dh = dil[0], s.dw = dil[1];
  const int64_t span_h = s.H + pads[0] + pads[2] - s.dh * (s.kH - 1) - 1;
  const int64_t span_w = s.W + pads[1] + pads[3] - s.dw * (s.kW - 1) - 1;
  if (span_h < 0 || span_w < 0) {
    c.fail("dilated kernel " + dims_str({s.kH, s.kW}) + " is larger than the padded input " +
           dims_str(x));
  }
  s.OH = span_h / s.sh + 1;
  s.OW = span_w / s.sw + 1;
  return s;
}

template <class T>
void im2col(const ConvShape& s, const T* xg, T* col) {
  for (int64_t c = 0; c < s.Cg; ++c) {
    const T* xc = xg + c * s.H * s.W;
    for (int64_t ki = 0; ki < s.kH; ++ki) {
      for (int64_t kj = 0; kj < s.kW; ++kj) {
        int64_t lo, hi;
        valid_range(s.W, s.OW, s.sw, s.pl, kj * s.dw, lo, hi);
        for (int64_t oh = 0; oh < s.OH; ++oh) {
          T* dst = col + oh * s.OW;
          const int64_t ih = oh * s.sh - s.pt + ki * s.dh;
          if (ih < 0 || ih >= s.H) {
            std::fill_n(dst, s.OW, T(0));
            continue;
          }
          // Input column of output column ow: base + ow * sw (never
          // negative for ow >= lo, so no pointer before xc is formed).
          const int64_t base = ih * s.W - s.pl + kj * s.dw;
          std::fill_n(dst, lo, T(0));
          if (s.sw == 1) {
            if (hi > lo) std::copy(xc + (base + lo), xc + (base + hi), dst + lo);
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = xc[base + ow * s.sw];
          }
          std::fill(dst + hi, dst + s.OW, T(0));
        }
        col += s.OH * s.OW;
      }
    }
  }
}
template void im2col<float>(const ConvShape& s, const float* xg, float* col);
template void im2col<double>(const ConvShape& s, const double* xg, double* col);

PoolShape pool_shape(const Ctx& c, const std::vector<int64_t>& d, bool max, bool& include_pad,
                     bool dilated) {
  c.v.require_attr("kernel_shape");
  const auto k = positive_ints(c, "kernel_shape", 2, 1, 1);
  const auto st = positive_ints(c, "strides", 2, 1, 1);
  const auto pads = positive_ints(c, "pads", 4, 0, 0);
  const auto dil = dilated ? positive_ints(c, "dilations", 2, 1, 1) : std::vector<int64_t>{1, 1};
  const int64_t ceil_mode = c.v.get_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1) c.fail("attribute 'ceil_mode' must be 0 or 1");
  include_pad = false;
  if (!max) {
    const int64_t cip = c.v.get_int("count_include_pad", 0);
    if (cip != 0 && cip != 1) c.fail("attribute 'count_include_pad' must be 0 or 1");
    include_pad = cip == 1;
  }
  PoolShape s{d[0] * d[1], d[2],    d[3],    0,       0,       k[0],   k[1],  st[0],
              st[1],       pads[0], pads[1], pads[2], pads[3], dil[0], dil[1]};
  // The dilated window's extent (attribute values are untrusted: clamped).
  auto extent = [](int64_t kk, int64_t dd) {
    return static_cast<int64_t>(std::min<__int128>((__int128{kk} - 1) * dd + 1, INT64_MAX / 4));
  };
  const int64_t eh = extent(s.kH, s.dh), ew = extent(s.kW, s.dw);
  // Every window must overlap the input: no window of padding only.
  if (s.pt >= eh || s.pb >= eh || s.pl >= ew || s.pr >= ew) {
    c.fail("attribute 'pads' " + dims_str(pads) + " must be smaller than the (dilated) kernel " +
           dims_str(k));
  }
  auto out_size = [&](int64_t in, int64_t kk, int64_t ss, int64_t p0, int64_t p1) -> int64_t {
    const int64_t span = in + p0 + p1 - kk;
    if (span < 0) {
      c.fail("window " + dims_str(k) + " is larger than the padded input " + dims_str(d));
    }
    if (!ceil_mode) return span / ss + 1;
    int64_t o = ceil_div(span, ss) + 1;
    // ONNX/PyTorch: a ceil_mode window starting in the bottom/right padding is dropped.
    if ((o - 1) * ss >= in + p0) --o;
    return o;
  };
  s.OH = out_size(s.H, eh, s.sh, s.pt, s.pb);
  s.OW = out_size(s.W, ew, s.sw, s.pl, s.pr);
  return s;
}

}  // namespace ampx::reference::detail
