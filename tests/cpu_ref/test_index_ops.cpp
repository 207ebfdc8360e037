// Mod, CumSum, CumProd, TopK, GatherElements, GatherND and ScatterND against
// references written out here: ONNX's sign rules, tie order, NaN, batch
// dims, repeated scatter indices, and out-of-range indices as errors
// naming the node and the position.
#include <cmath>
#include <limits>

#include "harness.hpp"

namespace ampx::test {
namespace {

using Ints = std::vector<int64_t>;

Tensor run1(NodeBuilder& nb, std::initializer_list<const Tensor*> ins) {
  return run_node(nb, ins)[0];
}

TEST(IndexOps, ModFollowsTheDivisorsSignAndFmodTheDividends) {
  for (ampx_dtype dt : {AMPX_DTYPE_I64, AMPX_DTYPE_I32}) {
    const Tensor a = Tensor::of(dt, {6}, {7, -7, 7, -7, 0, 5});
    const Tensor b = Tensor::of(dt, {6}, {3, 3, -3, -3, 4, 0});
    NodeBuilder m("Mod", "m");
    add_input(m, a);
    add_input(m, b);
    m.output(dt, {6});
    EXPECT_EQ(run1(m, {&a, &b}).values(), (std::vector<double>{1, 2, -2, -1, 0, 0}));
    NodeBuilder f("Mod", "f");
    add_input(f, a);
    add_input(f, b);
    f.output(dt, {6}).attr_int("fmod", 1);
    EXPECT_EQ(run1(f, {&a, &b}).values(), (std::vector<double>{1, -1, 1, -1, 0, 0}));
  }
  const Tensor x = Tensor::of(AMPX_DTYPE_F32, {3}, {5.5, -5.5, 7.25});
  const Tensor y = Tensor::of(AMPX_DTYPE_F32, {1}, {2});
  NodeBuilder f("Mod", "f");
  add_input(f, x);
  add_input(f, y);
  f.output(AMPX_DTYPE_F32, {3}).attr_int("fmod", 1);
  EXPECT_EQ(run1(f, {&x, &y}).values(), (std::vector<double>{1.5, -1.5, 1.25}));
}

// ONNX Mod 28's fmod=0 on floats: A - floor(A / B) * B with its special
// cases (a zero takes the divisor's sign; x finite and y infinite of the
// other sign gives y; infinite x, zero y or NaN give NaN).
TEST(IndexOps, FloatModFloorsTheQuotientWithOpset28sSpecialCases) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x =
      Tensor::of(AMPX_DTYPE_F32, {11}, {5.5, -5.5, 0.0, -0.0, inf, 1, 3, -3, nan, 3, 6});
  const Tensor y = Tensor::of(AMPX_DTYPE_F32, {11}, {2, 2, -2, 2, 2, 0, inf, inf, 1, -inf, -3});
  const std::vector<double> want = {1.5, 0.5, -0.0, 0.0, nan, nan, 3, inf, nan, -inf, -0.0};
  for (ampx_dtype dt : {AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_F64}) {
    const Tensor a = Tensor::of(dt, {11}, x.values());
    const Tensor b = Tensor::of(dt, {11}, y.values());
    NodeBuilder m("Mod", "m");
    add_input(m, a);
    add_input(m, b);
    m.output(dt, {11});
    const auto got = run1(m, {&a, &b}).values();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << i << ": " << got[i];
        continue;
      }
      EXPECT_EQ(got[i], want[i]) << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << i << ": the sign of zero";
    }
  }
}

TEST(IndexOps, CumSumInclusiveExclusiveAndReverse) {
  const Tensor x = Tensor::of(AMPX_DTYPE_F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::vector<std::tuple<int, int, std::vector<double>>> want = {{0, 0, {1, 3, 6, 4, 9, 15}},
                                                                       {1, 0, {0, 1, 3, 0, 4, 9}},
                                                                       {0, 1, {6, 5, 3, 15, 11, 6}},
                                                                       {1, 1, {5, 3, 0, 11, 6, 0}}};
  for (const auto& [exclusive, reverse, w] : want) {
    NodeBuilder nb("CumSum", "c");
    add_input(nb, x);
    nb.output(AMPX_DTYPE_F32, {2, 3})
        .attr_int("axis", -1)
        .attr_int("exclusive", exclusive)
        .attr_int("reverse", reverse);
    EXPECT_EQ(run1(nb, {&x}).values(), w) << exclusive << reverse;
  }
  const Tensor i = Tensor::of(AMPX_DTYPE_I64, {2, 2}, {1, 2, 3, 4});
  NodeBuilder nb("CumSum", "ci");
  add_input(nb, i);
  nb.output(AMPX_DTYPE_I64, {2, 2}).attr_int("axis", 0);
  EXPECT_EQ(run1(nb, {&i}).values(), (std::vector<double>{1, 2, 4, 6}));
}

TEST(IndexOps, CumProdInclusiveExclusiveAndReverse) {
  const Tensor x = Tensor::of(AMPX_DTYPE_F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::vector<std::tuple<int, int, std::vector<double>>> want = {
      {0, 0, {1, 2, 6, 4, 20, 120}},
      {1, 0, {1, 1, 2, 1, 4, 20}},
      {0, 1, {6, 6, 3, 120, 30, 6}},
      {1, 1, {6, 3, 1, 30, 6, 1}}};
  for (const auto& [exclusive, reverse, w] : want) {
    NodeBuilder nb("CumProd", "c");
    add_input(nb, x);
    nb.output(AMPX_DTYPE_F32, {2, 3})
        .attr_int("axis", -1)
        .attr_int("exclusive", exclusive)
        .attr_int("reverse", reverse);
    EXPECT_EQ(run1(nb, {&x}).values(), w) << exclusive << reverse;
  }
  for (ampx_dtype dt : {AMPX_DTYPE_I64, AMPX_DTYPE_I32}) {
    const Tensor i = Tensor::of(dt, {2, 2}, {-1, 2, 3, -4});
    NodeBuilder nb("CumProd", "ci");
    add_input(nb, i);
    nb.output(dt, {2, 2}).attr_int("axis", 0);
    EXPECT_EQ(run1(nb, {&i}).values(), (std::vector<double>{-1, 2, -3, -8}));
  }
}

// CumProd's floats multiply in double: one rounding per output, so the f32
// result is the double product rounded once, the f64 one is it exactly.
TEST(IndexOps, CumProdAgreesWithAFloat64Product) {
  Rng rng(5);
  for (ampx_dtype dt : {AMPX_DTYPE_F32, AMPX_DTYPE_F64, AMPX_DTYPE_F16, AMPX_DTYPE_BF16}) {
    const Tensor x = random_tensor(rng, dt, {4, 9, 3}, 2.0);
    NodeBuilder nb("CumProd", "c");
    add_input(nb, x);
    nb.output(dt, {4, 9, 3}).attr_int("axis", 1);
    const auto X = x.values();
    std::vector<double> ref(X.size());
    for (int64_t o = 0; o < 4; ++o)
      for (int64_t in = 0; in < 3; ++in) {
        double acc = 1;
        for (int64_t j = 0; j < 9; ++j) {
          const auto k = static_cast<size_t>((o * 9 + j) * 3 + in);
          acc *= X[k];
          ref[k] = acc;
        }
      }
    expect_close(run1(nb, {&x}), ref, "CumProd");
  }
}

TEST(IndexOps, TopKKeepsTheLowerIndexOnTiesAndPutsNanFirst) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = Tensor::of(AMPX_DTYPE_F32, {2, 5}, {3, 1, 3, nan, 2, 0, -1, 0, 5, 0});
  NodeBuilder nb("TopK", "t");
  add_input(nb, x);
  nb.output(AMPX_DTYPE_F32, {2, 3}).output(AMPX_DTYPE_I64, {2, 3}).attr_int("k", 3);
  const auto y = run_node(nb, {&x});
  EXPECT_EQ(y[1].values(), (std::vector<double>{3, 0, 2, 3, 0, 2}));
  EXPECT_TRUE(std::isnan(y[0].get(0)));
  EXPECT_EQ(y[0].get(1), 3);
  NodeBuilder lo("TopK", "lo");
  add_input(lo, x);
  lo.output(AMPX_DTYPE_F32, {2, 2})
      .output(AMPX_DTYPE_I64, {2, 2})
      .attr_int("k", 2)
      .attr_int("largest", 0);
  const auto z = run_node(lo, {&x});
  EXPECT_EQ(z[0].values(), (std::vector<double>{1, 2, -1, 0}));
  EXPECT_EQ(z[1].values(), (std::vector<double>{1, 4, 1, 0}));
  NodeBuilder big("TopK", "big");
  add_input(big, x);
  big.output(AMPX_DTYPE_F32, {2, 6}).output(AMPX_DTYPE_I64, {2, 6}).attr_int("k", 6);
  std::string why;
  EXPECT_FALSE(reference::can_run(big.desc(), &why));
  EXPECT_NE(why.find("k = 6 is outside [0, 5]"), std::string::npos) << why;
}

TEST(IndexOps, GatherElementsAndGatherND) {
  const Tensor x = Tensor::of(AMPX_DTYPE_F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor idx = Tensor::of(AMPX_DTYPE_I64, {2, 2}, {2, -3, 0, 1});
  NodeBuilder ge("GatherElements", "ge");
  add_input(ge, x);
  add_input(ge, idx);
  ge.output(AMPX_DTYPE_F32, {2, 2}).attr_int("axis", 1);
  EXPECT_EQ(run1(ge, {&x, &idx}).values(), (std::vector<double>{3, 1, 4, 5}));

  // data [2, 2, 3], batch_dims 1, one coordinate per tuple: rows of data[b].
  const Tensor d = Tensor::of(AMPX_DTYPE_I32, {2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const Tensor t = Tensor::of(AMPX_DTYPE_I32, {2, 1}, {1, 0});
  NodeBuilder nd("GatherND", "nd");
  add_input(nd, d);
  add_input(nd, t);
  nd.output(AMPX_DTYPE_I32, {2, 3}).attr_int("batch_dims", 1);
  EXPECT_EQ(run1(nd, {&d, &t}).values(), (std::vector<double>{4, 5, 6, 7, 8, 9}));
  // No batch dims, full coordinates: elements.
  const Tensor full = Tensor::of(AMPX_DTYPE_I64, {2, 3}, {1, 1, 2, 0, -1, 0});
  NodeBuilder el("GatherND", "el");
  add_input(el, d);
  add_input(el, full);
  el.output(AMPX_DTYPE_I32, {2});
  EXPECT_EQ(run1(el, {&d, &full}).values(), (std::vector<double>{12, 4}));
}

TEST(IndexOps, ScatterNDWritesSlicesAndReducesRepeats) {
  const Tensor d = Tensor::of(AMPX_DTYPE_F32, {3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor idx = Tensor::of(AMPX_DTYPE_I64, {2, 1}, {2, 0});
  const Tensor upd = Tensor::of(AMPX_DTYPE_F32, {2, 2}, {10, 20, 30, 40});
  NodeBuilder s("ScatterND", "s");
  add_input(s, d);
  add_input(s, idx);
  add_input(s, upd);
  s.output(AMPX_DTYPE_F32, {3, 2});
  EXPECT_EQ(run1(s, {&d, &idx, &upd}).values(), (std::vector<double>{30, 40, 3, 4, 10, 20}));
  const Tensor rep = Tensor::of(AMPX_DTYPE_I64, {2, 1}, {1, 1});
  NodeBuilder mul("ScatterND", "mul");
  add_input(mul, d);
  add_input(mul, rep);
  add_input(mul, upd);
  mul.output(AMPX_DTYPE_F32, {3, 2}).attr_str("reduction", "mul");
  EXPECT_EQ(run1(mul, {&d, &rep, &upd}).values(), (std::vector<double>{1, 2, 900, 3200, 5, 6}));
  NodeBuilder mx("ScatterND", "mx");
  add_input(mx, d);
  add_input(mx, rep);
  add_input(mx, upd);
  mx.output(AMPX_DTYPE_F32, {3, 2}).attr_str("reduction", "max");
  EXPECT_EQ(run1(mx, {&d, &rep, &upd}).values(), (std::vector<double>{1, 2, 30, 40, 5, 6}));
  // A reduction in 16-bit has no kernel here: unsupported, not wrong.
  const Tensor h = Tensor::of(AMPX_DTYPE_F16, {3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor hu = Tensor::of(AMPX_DTYPE_F16, {2, 2}, {1, 2, 3, 4});
  NodeBuilder hs("ScatterND", "hs");
  add_input(hs, h);
  add_input(hs, rep);
  add_input(hs, hu);
  hs.output(AMPX_DTYPE_F16, {3, 2}).attr_str("reduction", "add");
  std::string why;
  EXPECT_FALSE(reference::can_run(hs.desc(), &why));
  EXPECT_NE(why.find("reduction 'add' on f16"), std::string::npos) << why;
}

TEST(IndexOps, AnIndexOutOfRangeNamesTheNodeAndThePosition) {
  const Tensor x = Tensor::of(AMPX_DTYPE_F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor idx = Tensor::of(AMPX_DTYPE_I64, {2, 2}, {0, 1, 3, 0});
  NodeBuilder ge("GatherElements", "ge");
  add_input(ge, x);
  add_input(ge, idx);
  ge.output(AMPX_DTYPE_F32, {2, 2}).attr_int("axis", 1);
  expect_throw_msg(
      [&] {
        (void)run1(ge, {&x, &idx});
      },
      {"ge", "index 3 at position 2", "axis length 3"});
  const Tensor nd_idx = Tensor::of(AMPX_DTYPE_I64, {1, 2}, {-3, 0});
  NodeBuilder nd("GatherND", "nd");
  add_input(nd, x);
  add_input(nd, nd_idx);
  nd.output(AMPX_DTYPE_F32, {1});
  expect_throw_msg([&] { (void)run1(nd, {&x, &nd_idx}); }, {"nd", "index -3 at position 0"});
  const Tensor upd = Tensor::of(AMPX_DTYPE_F32, {1, 3}, {7, 8, 9});
  const Tensor s_idx = Tensor::of(AMPX_DTYPE_I64, {1, 1}, {2});
  NodeBuilder s("ScatterND", "sc");
  add_input(s, x);
  add_input(s, s_idx);
  add_input(s, upd);
  s.output(AMPX_DTYPE_F32, {2, 3});
  expect_throw_msg([&] { (void)run1(s, {&x, &s_idx, &upd}); }, {"sc", "index 2 at position 0"});
}

}  // namespace
}  // namespace ampx::test
