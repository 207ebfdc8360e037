// Data movement (bit-exact) and Cast.
#include <bit>
#include <cmath>
#include <functional>
#include <limits>

#include "harness.hpp"

namespace ampx::test {
namespace {

class DataMovement : public ::testing::TestWithParam<ampx_dtype> {
 protected:
  ampx_dtype dt() const { return GetParam(); }
  Rng rng{99};
};

// A tensor whose element i holds a distinct value (exact in every dtype).
Tensor iota(ampx_dtype dt, std::vector<int64_t> dims) {
  std::vector<double> v(static_cast<size_t>(numel_of(dims)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(i % 200) - 99.5 * ((i / 200) % 2);
  return Tensor::of(dt, std::move(dims), v);
}

// Builds the expected output by picking input elements: out[i] = in[src(i)].
Tensor pick(const Tensor& in, std::vector<int64_t> dims,
            const std::function<int64_t(int64_t)>& src) {
  Tensor t = Tensor::zeros(in.dtype, std::move(dims));
  const size_t es = elem_size(in.dtype);
  for (int64_t i = 0; i < t.numel(); ++i)
    std::memcpy(t.bytes.data() + i * es, in.bytes.data() + src(i) * es, es);
  return t;
}

Tensor run1(NodeBuilder& nb, const Tensor& x) {
  return run_node(nb, {&x})[0];
}

TEST_P(DataMovement, ReshapeFlattenDropout) {
  const Tensor x = iota(dt(), {2, 3, 5, 7});
  {
    NodeBuilder nb("Reshape", "reshape");
    add_input(nb, x);
    nb.output(dt(), {2, 15, 7}).attr_ints("shape", {0, -1, 7});
    expect_bits_equal(run1(nb, x), pick(x, {2, 15, 7}, [](int64_t i) { return i; }));
  }
  for (const auto& [axis, dims] : std::vector<std::pair<int64_t, std::vector<int64_t>>>{
           {0, {1, 210}}, {2, {6, 35}}, {-1, {30, 7}}, {4, {210, 1}}}) {
    NodeBuilder nb("Flatten", "flatten");
    add_input(nb, x);
    nb.output(dt(), dims).attr_int("axis", axis);
    expect_bits_equal(run1(nb, x), pick(x, dims, [](int64_t i) { return i; }));
  }
  NodeBuilder nb("Dropout", "drop");
  add_input(nb, x);
  nb.output(dt(), x.dims).attr_float("ratio", 0.3);
  expect_bits_equal(run1(nb, x), x);
}

TEST_P(DataMovement, Transpose) {
  const std::vector<int64_t> d{3, 5, 7, 2};
  const Tensor x = iota(dt(), d);
  for (const auto& perm : std::vector<std::vector<int64_t>>{
           {2, 0, 1, 3}, {3, 2, 1, 0}, {0, 2, 1, 3}, {1, 3, 0, 2}, {0, 1, 2, 3}, {}}) {
    const std::vector<int64_t> p = perm.empty() ? std::vector<int64_t>{3, 2, 1, 0} : perm;
    std::vector<int64_t> od(4);
    for (size_t i = 0; i < 4; ++i) od[i] = d[static_cast<size_t>(p[i])];
    NodeBuilder nb("Transpose", "transpose");
    add_input(nb, x);
    nb.output(dt(), od);
    if (!perm.empty()) nb.attr_ints("perm", perm);
    expect_bits_equal(run1(nb, x), pick(x, od, [&](int64_t i) {
                        const auto oi = unravel(i, od);
                        std::vector<int64_t> ii(4);
                        for (size_t k = 0; k < 4; ++k) ii[static_cast<size_t>(p[k])] = oi[k];
                        return ravel(ii, d);
                      }));
  }
}

TEST_P(DataMovement, Concat) {
  const Tensor a = iota(dt(), {2, 3, 4}), b = random_tensor(rng, dt(), {2, 1, 4}),
               c = random_tensor(rng, dt(), {2, 5, 4});
  for (int64_t axis : {1, -2}) {
    NodeBuilder nb("Concat", "concat");
    add_input(nb, a);
    add_input(nb, b);
    add_input(nb, c);
    nb.output(dt(), {2, 9, 4}).attr_int("axis", axis);
    const Tensor y = run_node(nb, {&a, &b, &c})[0];
    const std::vector<int64_t> yd{2, 9, 4};
    const auto A = a.values(), B = b.values(), C = c.values();
    std::vector<double> want;
    for (int64_t i = 0; i < numel_of(yd); ++i) {
      auto idx = unravel(i, yd);
      const int64_t j = idx[1];
      if (j < 3)
        want.push_back(A[static_cast<size_t>(ravel({idx[0], j, idx[2]}, {2, 3, 4}))]);
      else if (j < 4)
        want.push_back(B[static_cast<size_t>(ravel({idx[0], j - 3, idx[2]}, {2, 1, 4}))]);
      else
        want.push_back(C[static_cast<size_t>(ravel({idx[0], j - 4, idx[2]}, {2, 5, 4}))]);
    }
    EXPECT_EQ(y.values(), want);
  }
  // Last axis, and a single input.
  NodeBuilder nb("Concat", "concat");
  add_input(nb, a);
  add_input(nb, a);
  nb.output(dt(), {2, 3, 8}).attr_int("axis", -1);
  const Tensor y = run_node(nb, {&a, &a})[0];
  expect_bits_equal(y, pick(a, {2, 3, 8}, [](int64_t i) { return (i / 8) * 4 + (i % 8) % 4; }));
  NodeBuilder one("Concat", "concat1");
  add_input(one, a);
  one.output(dt(), a.dims).attr_int("axis", 0);
  expect_bits_equal(run_node(one, {&a})[0], a);
}

// ONNX Slice, written independently of the kernel: walk the candidate
// indices of each axis explicitly.
std::vector<int64_t> slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  auto norm = [&](int64_t v, bool is_start) {
    if (v < 0) v = v <= -dim ? (step > 0 || is_start ? 0 : -1) : v + dim;
    if (step > 0) return std::min(v, dim);
    return std::min(v, dim - 1);
  };
  const int64_t s = norm(start, true), e = norm(end, false);
  std::vector<int64_t> r;
  // Advance without overflowing when |step| is huge.
  if (step > 0) {
    for (int64_t i = s; i < e; i = step >= e - i ? e : i + step) r.push_back(i);
  } else {
    for (int64_t i = s; i > e && i >= 0; i = -(step + 1) >= i - e - 1 ? e : i + step)
      r.push_back(i);
  }
  return r;
}

void check_slice(ampx_dtype dt, std::vector<int64_t> starts, std::vector<int64_t> ends,
                 std::vector<int64_t> axes, std::vector<int64_t> steps) {
  const std::vector<int64_t> d{5, 7, 6};
  const Tensor x = iota(dt, d);
  std::vector<std::vector<int64_t>> sel(3);
  for (size_t k = 0; k < 3; ++k)
    for (int64_t i = 0; i < d[k]; ++i) sel[k].push_back(i);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t ax = axes.empty() ? static_cast<int64_t>(i) : axes[i];
    const auto a = static_cast<size_t>(ax < 0 ? ax + 3 : ax);
    sel[a] = slice_axis(d[a], starts[i], ends[i], steps.empty() ? 1 : steps[i]);
  }
  const std::vector<int64_t> od{static_cast<int64_t>(sel[0].size()),
                                static_cast<int64_t>(sel[1].size()),
                                static_cast<int64_t>(sel[2].size())};
  NodeBuilder nb("Slice", "slice");
  add_input(nb, x);
  nb.output(dt, od).attr_ints("starts", starts).attr_ints("ends", ends);
  if (!axes.empty()) nb.attr_ints("axes", axes);
  if (!steps.empty()) nb.attr_ints("steps", steps);
  expect_bits_equal(run1(nb, x), pick(x, od, [&](int64_t i) {
                      const auto oi = unravel(i, od);
                      return ravel(
                          {sel[0][static_cast<size_t>(oi[0])], sel[1][static_cast<size_t>(oi[1])],
                           sel[2][static_cast<size_t>(oi[2])]},
                          d);
                    }));
}

TEST_P(DataMovement, Slice) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  check_slice(dt(), {1, 2}, {4, 6}, {}, {});                     // plain, default axes
  check_slice(dt(), {-3}, {kMax}, {1}, {});                      // negative start to the end
  check_slice(dt(), {0, 1}, {5, 6}, {2, 0}, {2, 3});             // steps, permuted axes
  check_slice(dt(), {-1}, {kMin}, {-2}, {-1});                   // full reverse
  check_slice(dt(), {5, 4}, {1, -7}, {1, 2}, {-2, -1});          // negative steps
  check_slice(dt(), {100, -100}, {-100, 100}, {0, 1}, {-1, 1});  // clamping
  check_slice(dt(), {-100}, {-100}, {2}, {-1});                  // start clamps to 0
  check_slice(dt(), {3}, {3}, {0}, {1});                         // empty
  check_slice(dt(), {2}, {kMax}, {-1}, {kMax});                  // one element, huge step
}

TEST_P(DataMovement, Gather) {
  const std::vector<int64_t> d{4, 5, 3};
  const Tensor x = iota(dt(), d);
  for (ampx_dtype idt : {AMPX_DTYPE_I64, AMPX_DTYPE_I32}) {
    for (int64_t axis : {0, 1, -1}) {
      const auto a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
      const Tensor idx = Tensor::of(idt, {2, 3}, {0, -1, 2, 1, -static_cast<double>(d[a]), 0});
      std::vector<int64_t> od(d.begin(), d.begin() + static_cast<ptrdiff_t>(a));
      od.push_back(2);
      od.push_back(3);
      od.insert(od.end(), d.begin() + static_cast<ptrdiff_t>(a) + 1, d.end());
      NodeBuilder nb("Gather", "gather");
      add_input(nb, x);
      add_input(nb, idx);
      nb.output(dt(), od).attr_int("axis", axis);
      const auto I = idx.values();
      expect_bits_equal(
          run_node(nb, {&x, &idx})[0], pick(x, od, [&](int64_t i) {
            const auto oi = unravel(i, od);
            std::vector<int64_t> ii(oi.begin(), oi.begin() + static_cast<ptrdiff_t>(a));
            auto k = static_cast<int64_t>(I[static_cast<size_t>(oi[a] * 3 + oi[a + 1])]);
            ii.push_back(k < 0 ? k + d[a] : k);
            ii.insert(ii.end(), oi.begin() + static_cast<ptrdiff_t>(a) + 2, oi.end());
            return ravel(ii, d);
          }));
    }
  }
}

TEST_P(DataMovement, GatherIndexOutOfRangeThrowsAtRun) {
  const Tensor x = iota(dt(), {4, 2});
  const Tensor idx = Tensor::of(AMPX_DTYPE_I64, {1}, {4});
  NodeBuilder nb("Gather", "emb");
  add_input(nb, x);
  add_input(nb, idx);
  nb.output(dt(), {1, 2});
  expect_throw_msg([&] { run_node(nb, {&x, &idx}); }, {"node 'emb' (Gather)", "index 4"});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DataMovement,
                         ::testing::Values(AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16,
                                           AMPX_DTYPE_I64),
                         DtypeName());

// ------------------------------------------------------------------- Cast

Tensor cast(const Tensor& x, ampx_dtype to) {
  NodeBuilder nb("Cast", "cast");
  add_input(nb, x);
  nb.output(to, x.dims).attr_int("to", to);
  return run_node(nb, {&x})[0];
}

std::vector<uint16_t> bits16(const Tensor& t) {
  std::vector<uint16_t> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.bytes.data(), v.size() * 2);
  return v;
}

TEST(Cast, F32ToF16RoundsToNearestEven) {
  const double u = std::ldexp(1.0, -10);    // f16 ulp at 1
  const double sub = std::ldexp(1.0, -24);  // smallest f16 subnormal
  const std::vector<double> in = {
      1.0 + u / 2,          // tie -> even (1.0)
      1.0 + 3 * u / 2,      // tie -> even (1 + 2u)
      1.0 + u / 2 + u / 8,  // above the tie -> 1 + u
      65504.0,
      65519.0,  // max, still rounds to max
      65520.0,  // rounds to inf
      -1e6,
      sub,
      sub / 2,     // overflow; smallest subnormal; tie -> 0
      1.5 * sub,   // tie between 1 and 2 subnormal units -> 2
      0.75 * sub,  // above half -> 1 unit
      -0.0,
  };
  const std::vector<uint16_t> want = {0x3c00, 0x3c02, 0x3c01, 0x7bff, 0x7bff, 0x7c00,
                                      0xfc00, 0x0001, 0x0000, 0x0002, 0x0001, 0x8000};
  EXPECT_EQ(bits16(cast(Tensor::of(AMPX_DTYPE_F32, {12}, in), AMPX_DTYPE_F16)), want);
  EXPECT_EQ(bits16(cast(Tensor::of(AMPX_DTYPE_F64, {12}, in), AMPX_DTYPE_F16)), want);
}

TEST(Cast, SpecialValuesF16AndBf16) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = Tensor::of(AMPX_DTYPE_F32, {3}, {inf, -inf, std::nan("")});
  const auto h = bits16(cast(x, AMPX_DTYPE_F16));
  EXPECT_EQ(h[0], 0x7c00);
  EXPECT_EQ(h[1], 0xfc00);
  EXPECT_EQ(h[2] & 0x7c00, 0x7c00);
  EXPECT_NE(h[2] & 0x03ff, 0);
  const auto b = bits16(cast(x, AMPX_DTYPE_BF16));
  EXPECT_EQ(b[0], 0x7f80);
  EXPECT_EQ(b[1], 0xff80);
  EXPECT_EQ(b[2] & 0x7f80, 0x7f80);
  EXPECT_NE(b[2] & 0x007f, 0);
  // bf16 ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7.
  const Tensor t =
      Tensor::of(AMPX_DTYPE_F32, {3}, {1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8, 1.0 + 0x1p-8 + 0x1p-12});
  EXPECT_EQ(bits16(cast(t, AMPX_DTYPE_BF16)), (std::vector<uint16_t>{0x3f80, 0x3f82, 0x3f81}));
}

TEST(Cast, SingleRoundingFromF64AndI64) {
  // Through f32 these would round twice and land on the even neighbour.
  const Tensor d =
      Tensor::of(AMPX_DTYPE_F64, {2}, {1.0 + 0x1p-11 + 0x1p-40, -(1.0 + 0x1p-11 + 0x1p-35)});
  EXPECT_EQ(bits16(cast(d, AMPX_DTYPE_F16)), (std::vector<uint16_t>{0x3c01, 0xbc01}));
  Tensor i = Tensor::zeros(AMPX_DTYPE_I64, {3});
  const int64_t vals[3] = {(int64_t{1} << 40) + (int64_t{1} << 32) + 1, 2049, -2051};
  std::memcpy(i.bytes.data(), vals, sizeof vals);
  const auto b = bits16(cast(i, AMPX_DTYPE_BF16));
  EXPECT_EQ(bf16_bits_to_float(b[0]), std::ldexp(1.0, 40) + std::ldexp(1.0, 33));
  const auto h = bits16(cast(i, AMPX_DTYPE_F16));
  EXPECT_EQ(f16_bits_to_float(h[1]), 2048.0f);   // tie -> even
  EXPECT_EQ(f16_bits_to_float(h[2]), -2052.0f);  // tie -> even
  EXPECT_EQ(h[0], 0x7c00);                       // overflow -> inf
}

TEST(Cast, F16AndBf16RoundTripEveryPattern) {
  Tensor h = Tensor::zeros(AMPX_DTYPE_F16, {65536});
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto v = static_cast<uint16_t>(i);
    std::memcpy(h.bytes.data() + 2 * i, &v, 2);
  }
  const auto horig = bits16(h);
  for (ampx_dtype wide : {AMPX_DTYPE_F32, AMPX_DTYPE_F64}) {
    const auto back = bits16(cast(cast(h, wide), AMPX_DTYPE_F16));
    for (size_t i = 0; i < 65536; ++i) {
      if ((horig[i] & 0x7c00) == 0x7c00 && (horig[i] & 0x3ff)) {
        EXPECT_TRUE((back[i] & 0x7c00) == 0x7c00 && (back[i] & 0x3ff)) << i;  // NaN stays NaN
      } else {
        ASSERT_EQ(back[i], horig[i]) << dtype_str(wide) << " pattern " << i;
      }
    }
  }
  Tensor b = h;
  b.dtype = AMPX_DTYPE_BF16;
  const auto back = bits16(cast(cast(b, AMPX_DTYPE_F32), AMPX_DTYPE_BF16));
  const auto orig = bits16(b);
  for (size_t i = 0; i < 65536; ++i) {
    if ((orig[i] & 0x7f80) == 0x7f80 && (orig[i] & 0x7f)) {
      EXPECT_EQ(back[i] & 0x7fc0, 0x7fc0) << i;  // NaN stays a (quiet) NaN
    } else {
      ASSERT_EQ(back[i], orig[i]) << i;
    }
  }
  // f16 subnormals widen exactly.
  const Tensor f = cast(h, AMPX_DTYPE_F32);
  float v;
  std::memcpy(&v, f.bytes.data() + 2 * 4, 4);  // pattern 0x0002
  EXPECT_EQ(v, std::ldexp(1.0f, -23));
}

TEST(Cast, FloatToIntegerAndBool) {
  const double nan = std::nan("");
  const Tensor x = Tensor::of(AMPX_DTYPE_F32, {8}, {2.9, -2.9, 0.0, nan, 3e9, -3e9, 0.5, -0.0});
  EXPECT_EQ(cast(x, AMPX_DTYPE_I32).values(),
            (std::vector<double>{2, -2, 0, 0, 2147483647.0, -2147483648.0, 0, 0}));
  EXPECT_EQ(cast(x, AMPX_DTYPE_I64).values(), (std::vector<double>{2, -2, 0, 0, 3e9, -3e9, 0, 0}));
  EXPECT_EQ(cast(x, AMPX_DTYPE_BOOL).values(), (std::vector<double>{1, 1, 0, 1, 1, 1, 1, 0}));
  const Tensor f16 = cast(x, AMPX_DTYPE_F16);
  EXPECT_EQ(cast(f16, AMPX_DTYPE_I64).values()[0], 2.0);  // via f16 2.9 -> 2.900390625
}

TEST(Cast, IntegerAndBoolConversions) {
  const Tensor i = Tensor::of(AMPX_DTYPE_I64, {5}, {0, 1, -7, 300, 1 << 20});
  EXPECT_EQ(cast(i, AMPX_DTYPE_F32).values(), (std::vector<double>{0, 1, -7, 300, 1 << 20}));
  EXPECT_EQ(cast(i, AMPX_DTYPE_I32).values(), (std::vector<double>{0, 1, -7, 300, 1 << 20}));
  EXPECT_EQ(cast(i, AMPX_DTYPE_BOOL).values(), (std::vector<double>{0, 1, 1, 1, 1}));
  EXPECT_EQ(cast(i, AMPX_DTYPE_BF16).values(), (std::vector<double>{0, 1, -7, 300, 1 << 20}));
  const Tensor b = Tensor::of(AMPX_DTYPE_BOOL, {3}, {1, 0, 1});
  EXPECT_EQ(cast(b, AMPX_DTYPE_F16).values(), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(cast(b, AMPX_DTYPE_I64).values(), (std::vector<double>{1, 0, 1}));
  const Tensor same = Tensor::of(AMPX_DTYPE_I32, {2}, {5, -5});
  EXPECT_EQ(cast(same, AMPX_DTYPE_I32).bytes, same.bytes);
}

TEST(Cast, EveryPairOfDtypesRuns) {
  const ampx_dtype all[] = {AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16, AMPX_DTYPE_F64,
                            AMPX_DTYPE_I64, AMPX_DTYPE_I32, AMPX_DTYPE_BOOL};
  for (ampx_dtype from : all)
    for (ampx_dtype to : all) {
      const Tensor x = Tensor::of(from, {4}, {0, 1, 1, 0});
      EXPECT_EQ(cast(x, to).values(), (std::vector<double>{0, 1, 1, 0}))
          << dtype_str(from) << " -> " << dtype_str(to);
    }
}

}  // namespace
}  // namespace ampx::test
