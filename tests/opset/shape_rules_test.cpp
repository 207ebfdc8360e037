// The shared shape arithmetic against independent brute-force definitions,
// over random and extreme attribute values (no overflow, no UB).
#include <ampx/opset/shape_rules.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace ampx::opset {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// ONNX Slice, element by element: the indices start, start + step, ... that
// lie inside the clamped range, counted one by one.
SliceAxis slice_brute(int64_t start, int64_t end, int64_t step, int64_t dim) {
  using W = __int128;
  W s = start < 0 ? W(start) + dim : W(start);
  W e = end < 0 ? W(end) + dim : W(end);
  if (step > 0) {
    s = std::clamp<W>(s, 0, dim);
    e = std::clamp<W>(e, 0, dim);
  } else {
    s = std::clamp<W>(s, 0, dim - 1);
    e = std::clamp<W>(e, -1, dim - 1);
  }
  SliceAxis r;
  for (W i = s; step > 0 ? i < e : i > e; i += step) {
    if (r.length == 0) r.start = static_cast<int64_t>(i);
    ++r.length;
  }
  return r;
}

TEST(ShapeRules, SliceAxisMatchesBruteForce) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> small(-12, 12), dims(0, 9);
  for (int trial = 0; trial < 20000; ++trial) {
    const int64_t dim = dims(rng), start = small(rng), end = small(rng);
    int64_t step = small(rng) / 3;
    if (step == 0) step = trial % 2 ? 1 : -1;
    const SliceAxis got = slice_axis(start, end, step, dim),
                    want = slice_brute(start, end, step, dim);
    ASSERT_EQ(got.length, want.length) << start << ":" << end << ":" << step << " of " << dim;
    if (want.length > 0) {
      ASSERT_EQ(got.start, want.start) << start << ":" << end << ":" << step;
    }
  }
}

TEST(ShapeRules, SliceAxisExtremeValues) {
  // What exporters write for "to the end" and "from the end backwards".
  EXPECT_EQ(slice_axis(0, kMax, 1, 5).length, 5);
  EXPECT_EQ(slice_axis(-1, kMin, -1, 5).length, 5);
  EXPECT_EQ(slice_axis(-1, kMin, -1, 5).start, 4);
  EXPECT_EQ(slice_axis(kMin, kMax, kMax, 5).length, 1);
  EXPECT_EQ(slice_axis(kMax, kMin, kMin, 5).length, 1);
  EXPECT_EQ(slice_axis(2, 2, 1, 5).length, 0);
  EXPECT_EQ(slice_axis(0, 5, 1, 0).length, 0);
}

TEST(ShapeRules, WindowOutMatchesBruteForce) {
  // Count the windows one by one: floor mode keeps those that fit in the
  // padded input; ceil mode also one that overhangs it, but never one that
  // starts in the right padding.
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t p = 0; p < k; ++p)
          for (int64_t d = 1; d <= 2; ++d)
            for (bool ceil : {false, true}) {
              const int64_t span = in + 2 * p - (d * (k - 1) + 1);
              int64_t want = 0;
              for (int64_t first = 0; span >= 0; first += s) {
                const bool fits = ceil ? first - s < span : first <= span;
                if (!fits || (ceil && first >= in + p)) break;
                ++want;
              }
              EXPECT_EQ(window_out(in, k, s, p, p, d, ceil), want)
                  << "in " << in << " k " << k << " s " << s << " p " << p << " d " << d << " ceil "
                  << ceil;
            }
  EXPECT_EQ(window_out(kMax, kMax, 1, kMax, kMax, kMax, true), 0);  // no overflow
}

TEST(ShapeRules, BroadcastAndFormat) {
  EXPECT_EQ(broadcast_shapes({2, 1, 4}, {3, 1}), (Dims{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {5}), (Dims{5}));
  EXPECT_FALSE(broadcast_shapes({2, 3}, {4}).has_value());
  EXPECT_EQ(dims_str({1, 3, 32, 32}), "[1x3x32x32]");
  EXPECT_EQ(dims_str({}), "[]");
}

}  // namespace
}  // namespace ampx::opset
