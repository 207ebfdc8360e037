// Internal to the kernel library: the geometry of the window ops that the
// forward kernels (Conv2d, MaxPool, AveragePool) and their gradients
// (Conv2dGradWeight, MaxPoolGrad, AveragePoolGrad) share, derived once from
// a node's attributes and checked.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common.hpp"

namespace ampx::reference::detail {

inline int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}
inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// An INTS attribute of exactly n values (default `def` each), all >= min.
std::vector<int64_t> positive_ints(const Ctx& c, const char* name, size_t n, int64_t def,
                                   int64_t min);

struct ConvShape {
  int64_t N, C, H, W, M, kH, kW, OH, OW, group, Cg, Mg;
  int64_t sh, sw, pt, pl, dh, dw;
};

// A convolution of X `x` [N,C,H,W] with a weight of dims `w` [M,C/group,kH,kW]
// under the node's strides, pads, dilations and group.
ConvShape conv_shape(const Ctx& c, const std::vector<int64_t>& x, const std::vector<int64_t>& w);

// Output columns ow in [lo, hi) whose input column ow*s - p + off lies in
// [0, W).
inline void valid_range(int64_t W, int64_t OW, int64_t s, int64_t p, int64_t off, int64_t& lo,
                        int64_t& hi) {
  lo = std::clamp<int64_t>(ceil_div(p - off, s), 0, OW);
  hi = std::clamp<int64_t>(floor_div(W - 1 + p - off, s) + 1, lo, OW);
}

// col[(c, ki, kj), (oh, ow)] = x[c, oh*sh - pt + ki*dh, ow*sw - pl + kj*dw]
// or 0, for the Cg channels of one group of one image starting at `xg`.
// T is float or double.
template <class T>
void im2col(const ConvShape& s, const T* xg, T* col);

struct PoolShape {
  int64_t planes, H, W, OH, OW, kH, kW, sh, sw, pt, pl, pb, pr;
  int64_t dh = 1, dw = 1;  // dilations (the forward pools'; 1 for the gradients)
};

// The taps of output (oh, ow)'s window that lie in the input: rows hs,
// hs + dh, ... below he, columns ws, ws + dw, ... below we (hs >= he: none).
// `count` is AveragePool's divisor: count_include_pad counts padding taps
// too, but never the taps of a ceil_mode window that hang past the
// bottom/right padding.
struct PoolWindow {
  int64_t hs, he, ws, we, count;
};
// Taps first, first + d, ... of the window [w0, w0 + (k - 1) * d] in [lo, hi):
// the first tap at or after lo, and how many there are before hi.
struct PoolTaps {
  int64_t first, n;
};
inline PoolTaps pool_taps(int64_t w0, int64_t k, int64_t d, int64_t lo, int64_t hi) {
  const int64_t skip = w0 >= lo ? 0 : ceil_div(lo - w0, d);
  const int64_t first = w0 + skip * d;
  const int64_t last = std::min(k, hi > w0 ? ceil_div(hi - w0, d) : 0);  // taps before hi
  return {first, std::max<int64_t>(last - skip, 0)};
}
inline PoolWindow pool_window(const PoolShape& s, int64_t oh, int64_t ow, bool include_pad) {
  const int64_t h0 = oh * s.sh - s.pt, w0 = ow * s.sw - s.pl;
  const PoolTaps th = pool_taps(h0, s.kH, s.dh, 0, s.H), tw = pool_taps(w0, s.kW, s.dw, 0, s.W);
  PoolWindow w{th.first, th.first + th.n * s.dh, tw.first, tw.first + tw.n * s.dw, 0};
  w.count = include_pad ? pool_taps(h0, s.kH, s.dh, h0, s.H + s.pb).n *
                              pool_taps(w0, s.kW, s.dw, w0, s.W + s.pr).n
                        : th.n * tw.n;
  return w;
}

// A pooling window over X `x` [N,C,H,W] under the node's kernel_shape,
// strides, pads, dilations (when `dilated`: the forward pools), ceil_mode and
// (average pooling, `max` false) count_include_pad, returned in `include_pad`.
PoolShape pool_shape(const Ctx& c, const std::vector<int64_t>& x, bool max, bool& include_pad,
                     bool dilated = false);

}  // namespace ampx::reference::detail
