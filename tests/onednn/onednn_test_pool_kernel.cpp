// The blocked pooling loop (backends/onednn/src/pool_kernel.hpp) against a
// float64 reference: nChw8c and nChw16c, channel counts that are and are not
// multiples of the block (padded lanes stay zero), padding, strides, ceil_mode
// windows, count_include_pad, a global window, NaN propagation through max,
// and rows split across threads as the kernel splits them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <pool_kernel.hpp>
#include <random.hpp>
#include <tolerances.hpp>

namespace ampx::test {
namespace {

using onednn::PoolGeometry;

int64_t blocks(const PoolGeometry& g, int block) {
  return (g.c + block - 1) / block;
}

// NCHW (n, c, h, w) -> nChw<block>c, padded lanes zero.
std::vector<float> to_blocked(const std::vector<double>& x, int64_t n, int64_t c, int64_t h,
                              int64_t w, int block) {
  const int64_t cb = (c + block - 1) / block;
  std::vector<float> out(static_cast<size_t>(n * cb * h * w * block), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < h * w; ++s)
        out[static_cast<size_t>(((i * cb + ch / block) * h * w + s) * block + ch % block)] =
            static_cast<float>(x[static_cast<size_t>((i * c + ch) * h * w + s)]);
  return out;
}

// The f64 reference of docs/OPS.md's MaxPool / AveragePool, NCHW.
std::vector<double> reference(const PoolGeometry& g, const std::vector<double>& x) {
  std::vector<double> y(static_cast<size_t>(g.n * g.c * g.oh * g.ow));
  for (int64_t p = 0; p < g.n * g.c; ++p)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        const int64_t h0 = oh * g.sh - g.pt, w0 = ow * g.sw - g.pl;
        double acc = g.max ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t count = 0;
        for (int64_t h = std::max<int64_t>(h0, 0); h < std::min(h0 + g.kh, g.h); ++h)
          for (int64_t w = std::max<int64_t>(w0, 0); w < std::min(w0 + g.kw, g.w); ++w) {
            const double v = x[static_cast<size_t>((p * g.h + h) * g.w + w)];
            acc = g.max ? (std::isnan(v) || v > acc ? v : acc) : acc + v;
            ++count;
          }
        if (!g.max) {
          if (g.include_pad)
            count = (std::min(h0 + g.kh, g.h + g.pb) - h0) * (std::min(w0 + g.kw, g.w + g.pr) - w0);
          acc /= static_cast<double>(count);
        }
        y[static_cast<size_t>((p * g.oh + oh) * g.ow + ow)] = acc;
      }
  return y;
}

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, bool ceil) {
  const int64_t span = in + p0 + p1 - k;
  int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (o - 1) * s >= in + p0) --o;  // the last window starts in the padding
  return o;
}

PoolGeometry geometry(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s, int64_t pad,
                      bool ceil, bool max, bool include_pad) {
  PoolGeometry g;
  g.n = n, g.c = c, g.h = h, g.w = w, g.kh = k, g.kw = k, g.sh = s, g.sw = s;
  g.pt = g.pl = g.pb = g.pr = pad;
  g.oh = out_size(h, k, s, pad, pad, ceil);
  g.ow = out_size(w, k, s, pad, pad, ceil);
  g.max = max, g.include_pad = include_pad;
  return g;
}

// Runs the loop (in `parts` row ranges) and returns the NCHW result; checks
// that padded lanes came out zero.
std::vector<double> run(const PoolGeometry& g, int block, const std::vector<float>& src,
                        int parts) {
  const int64_t cb = blocks(g, block), rows = g.n * cb * g.oh;
  std::vector<float> dst(static_cast<size_t>(rows * g.ow * block), -1.0f);
  for (int t = 0; t < parts; ++t)
    onednn::pool_blocked_rows(g, block, src.data(), dst.data(), rows * t / parts,
                              rows * (t + 1) / parts);
  std::vector<double> y(static_cast<size_t>(g.n * g.c * g.oh * g.ow));
  for (int64_t i = 0; i < g.n; ++i)
    for (int64_t ch = 0; ch < cb * block; ++ch)
      for (int64_t s = 0; s < g.oh * g.ow; ++s) {
        const float v = dst[static_cast<size_t>(((i * cb + ch / block) * g.oh * g.ow + s) * block +
                                                ch % block)];
        if (ch < g.c)
          y[static_cast<size_t>((i * g.c + ch) * g.oh * g.ow + s)] = v;
        else
          EXPECT_EQ(v, 0.0f) << "padded lane " << ch;
      }
  return y;
}

TEST(OnednnBlockedPool, MatchesFloat64Reference) {
  struct Case {
    int64_t k, s, pad;
    bool ceil, max, include_pad;
  };
  const Case cases[] = {
      {3, 2, 0, false, true, false}, {3, 2, 0, true, true, false},   {3, 2, 1, false, true, false},
      {2, 2, 0, true, true, false},  {3, 1, 1, false, true, false},  {3, 2, 1, true, false, false},
      {3, 2, 1, true, false, true},  {2, 2, 0, false, false, false}, {5, 3, 2, true, false, true},
      {5, 3, 2, true, true, false},
  };
  Rng rng(11);
  for (int block : {8, 16})
    for (int64_t c : {12, 16, 24})
      for (const Case& k : cases) {
        const PoolGeometry g =
            geometry(2, c, 13, 11, k.k, k.s, k.pad, k.ceil, k.max, k.include_pad);
        const std::vector<double> x = rng.nonzero_vec(static_cast<size_t>(g.n * c * g.h * g.w));
        std::vector<double> xf(x.size());  // the f32 values the kernel sees
        for (size_t i = 0; i < x.size(); ++i) xf[i] = static_cast<float>(x[i]);
        const auto src = to_blocked(xf, g.n, c, g.h, g.w, block);
        const auto ref = reference(g, xf);
        for (int parts : {1, 3}) {
          EXPECT_LT(relative_error(run(g, block, src, parts), ref), tolerance(AMPX_DTYPE_F32))
              << "block " << block << " c " << c << " k " << k.k << " s " << k.s << " pad " << k.pad
              << " ceil " << k.ceil << " max " << k.max << " include_pad " << k.include_pad
              << " parts " << parts;
        }
      }
}

TEST(OnednnBlockedPool, GlobalWindowAverages) {
  Rng rng(12);
  for (int block : {8, 16}) {
    PoolGeometry g = geometry(1, 20, 7, 9, 1, 1, 0, false, false, false);
    g.kh = g.h, g.kw = g.w, g.oh = g.ow = 1;
    const std::vector<double> x = rng.nonzero_vec(static_cast<size_t>(g.c * g.h * g.w));
    std::vector<double> xf(x.begin(), x.end());
    for (double& v : xf) v = static_cast<float>(v);
    EXPECT_LT(
        relative_error(run(g, block, to_blocked(xf, 1, g.c, g.h, g.w, block), 1), reference(g, xf)),
        tolerance(AMPX_DTYPE_F32))
        << block;
  }
}

TEST(OnednnBlockedPool, NaNPropagatesThroughMax) {
  Rng rng(13);
  const PoolGeometry g = geometry(1, 8, 6, 6, 2, 2, 0, false, true, false);
  std::vector<double> x = rng.nonzero_vec(static_cast<size_t>(g.c * g.h * g.w));
  for (double& v : x) v = static_cast<float>(v);
  x[static_cast<size_t>((3 * g.h + 1) * g.w + 4)] = std::numeric_limits<double>::quiet_NaN();
  const auto y = run(g, 8, to_blocked(x, 1, g.c, g.h, g.w, 8), 1);
  for (int64_t ch = 0; ch < g.c; ++ch)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow)
        EXPECT_EQ(std::isnan(y[static_cast<size_t>((ch * g.oh + oh) * g.ow + ow)]),
                  ch == 3 && oh == 0 && ow == 2)
            << ch << " " << oh << " " << ow;
}

}  // namespace
}  // namespace ampx::test
