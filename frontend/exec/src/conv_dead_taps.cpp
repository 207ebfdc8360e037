#include "conv_dead_taps.hpp"

#include <ampx/ir/attr_access.hpp>

namespace ampx {
namespace {

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe, int64_t d) {
  return (in + pb + pe - d * (k - 1) - 1) / s + 1;
}

// Tap k reads input row o·s − pb + k·d for output rows o in [0, out): live
// when one of them lands in [0, in).
bool live(int64_t k, int64_t in, int64_t out, int64_t s, int64_t pb, int64_t d) {
  const int64_t lo = -pb + k * d;                 // o = 0
  const int64_t hi = (out - 1) * s - pb + k * d;  // o = out - 1
  if (hi < 0 || lo >= in) return false;
  if (lo >= 0) return true;
  // The first o with o·s + lo >= 0.
  const int64_t o = (-lo + s - 1) / s;
  return o < out && o * s + lo < in;
}

std::optional<LiveTaps> live_taps(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe,
                                  int64_t d) {
  const int64_t out = out_size(in, k, s, pb, pe, d);
  if (out <= 0) return std::nullopt;
  int64_t first = 0, last = k - 1;
  while (first < k && !live(first, in, out, s, pb, d)) ++first;
  if (first == k) return std::nullopt;  // all dead: the output is the bias; left alone
  while (!live(last, in, out, s, pb, d)) --last;
  LiveTaps t{first, last, pb - first * d, pe - (k - 1 - last) * d};
  if (t.pad_begin < 0 || t.pad_end < 0) return std::nullopt;
  if (out_size(in, last - first + 1, s, t.pad_begin, t.pad_end, d) != out) return std::nullopt;
  return t;
}

}  // namespace

std::optional<ConvCrop> crop_dead_taps(const Shape& x, const Shape& w, const AttrMap& attrs) {
  if (x.size() != 4 || w.size() != 4) return std::nullopt;
  const auto s = attr_ints(attrs, "strides", {1, 1});
  const auto p = attr_ints(attrs, "pads", {0, 0, 0, 0});
  const auto d = attr_ints(attrs, "dilations", {1, 1});
  if (s.size() != 2 || p.size() != 4 || d.size() != 2) return std::nullopt;
  const auto h = live_taps(x[2], w[2], s[0], p[0], p[2], d[0]);
  const auto wt = live_taps(x[3], w[3], s[1], p[1], p[3], d[1]);
  if (!h || !wt) return std::nullopt;
  if (h->first == 0 && h->last == w[2] - 1 && wt->first == 0 && wt->last == w[3] - 1)
    return std::nullopt;
  ConvCrop crop{*h, *wt, attrs};
  crop.attrs["pads"] = std::vector<int64_t>{h->pad_begin, wt->pad_begin, h->pad_end, wt->pad_end};
  // A single tap has no dilation left to speak of.
  crop.attrs["dilations"] =
      std::vector<int64_t>{h->first == h->last ? 1 : d[0], wt->first == wt->last ? 1 : d[1]};
  return crop;
}

}  // namespace ampx
