// Unary and broadcasting binary elementwise ops against float64 references.
#include <cmath>
#include <functional>
#include <numbers>

#include "harness.hpp"

namespace ampx::test {
namespace {

class Elementwise : public ::testing::TestWithParam<ampx_dtype> {
 protected:
  ampx_dtype dt() const { return GetParam(); }
  Rng rng{42};
};

void check_unary(Rng& rng, ampx_dtype dt, const char* op, const std::function<double(double)>& f,
                 const std::function<void(NodeBuilder&)>& attrs = {}) {
  const std::vector<int64_t> dims{7, 13, 3};
  const Tensor x = random_tensor(rng, dt, dims, 4.0);
  NodeBuilder nb(op, "unary");
  add_input(nb, x);
  nb.output(dt, dims);
  if (attrs) attrs(nb);
  const auto X = x.values();
  std::vector<double> ref(X.size());
  for (size_t i = 0; i < X.size(); ++i) ref[i] = f(X[i]);
  expect_close(run_node(nb, {&x})[0], ref, op);
}

TEST_P(Elementwise, Relu) {
  check_unary(rng, dt(), "Relu", [](double x) { return std::max(0.0, x); });
}
TEST_P(Elementwise, Sigmoid) {
  check_unary(rng, dt(), "Sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}
TEST_P(Elementwise, Tanh) {
  check_unary(rng, dt(), "Tanh", [](double x) { return std::tanh(x); });
}
TEST_P(Elementwise, GeluErf) {
  auto gelu = [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); };
  check_unary(rng, dt(), "Gelu", gelu);
  check_unary(rng, dt(), "Gelu", gelu, [](NodeBuilder& b) { b.attr_str("approximate", "none"); });
}
TEST_P(Elementwise, GeluTanh) {
  check_unary(
      rng, dt(), "Gelu",
      [](double x) {
        const double k = std::sqrt(2.0 / std::numbers::pi);
        return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
      },
      [](NodeBuilder& b) { b.attr_str("approximate", "tanh"); });
}
TEST_P(Elementwise, Clip) {
  check_unary(
      rng, dt(), "Clip", [](double x) { return std::min(std::max(x, -0.3), 0.5); },
      [](NodeBuilder& b) { b.attr_float("min", -0.3).attr_float("max", 0.5); });
  check_unary(
      rng, dt(), "Clip", [](double x) { return std::max(x, 0.25); },
      [](NodeBuilder& b) { b.attr_float("min", 0.25); });
  check_unary(
      rng, dt(), "Clip", [](double x) { return std::min(x, -1.0); },
      [](NodeBuilder& b) { b.attr_int("max", -1); });
  check_unary(rng, dt(), "Clip", [](double x) { return x; });
}
TEST_P(Elementwise, ReluKeepsNaN) {
  const Tensor x = Tensor::of(dt(), {3}, {std::nan(""), -1.0, 2.0});
  NodeBuilder nb("Relu", "relu");
  add_input(nb, x);
  nb.output(dt(), {3});
  const auto y = run_node(nb, {&x})[0].values();
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0.0);
  EXPECT_EQ(y[2], 2.0);
}

// ------------------------------------------------------------------ binary

std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> y(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    y[i] = da == 1 ? db : da;
  }
  return y;
}

// Index into an operand broadcast against output index `idx`.
int64_t operand_index(const std::vector<int64_t>& idx, const std::vector<int64_t>& d) {
  int64_t k = 0;
  for (size_t i = 0; i < d.size(); ++i)
    k = k * d[i] + (d[i] == 1 ? 0 : idx[idx.size() - d.size() + i]);
  return k;
}

void check_binary(Rng& rng, ampx_dtype dt, const char* op, std::vector<int64_t> ad,
                  std::vector<int64_t> bd) {
  const Tensor a = random_tensor(rng, dt, ad, 2.0), b = random_tensor(rng, dt, bd, 2.0);
  const auto yd = broadcast(ad, bd);
  NodeBuilder nb(op, "binary");
  add_input(nb, a);
  add_input(nb, b);
  nb.output(dt, yd);
  const auto out = run_node(nb, {&a, &b});
  const auto A = a.values(), B = b.values();
  const std::string o = op;
  std::vector<double> ref(static_cast<size_t>(numel_of(yd)));
  for (int64_t i = 0; i < numel_of(yd); ++i) {
    const auto idx = unravel(i, yd);
    const double x = A[static_cast<size_t>(operand_index(idx, ad))];
    const double y = B[static_cast<size_t>(operand_index(idx, bd))];
    ref[static_cast<size_t>(i)] = o == "Add"   ? x + y
                                  : o == "Sub" ? x - y
                                  : o == "Mul" ? x * y
                                               : x / y;
  }
  expect_close(out[0], ref,
               o + " " + ::testing::PrintToString(ad) + " " + ::testing::PrintToString(bd));
}

TEST_P(Elementwise, BinaryBroadcastPatterns) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{7, 13}, {7, 13}},            // same shape
      {{7, 13}, {}},                 // scalar B
      {{}, {7, 13}},                 // scalar A
      {{7, 13}, {13}},               // trailing bias
      {{2, 5, 3, 4}, {1, 5, 1, 1}},  // per-channel
      {{5, 1, 1}, {2, 5, 3, 4}},     // per-channel on the left
      {{3, 1, 5}, {1, 4, 1}},        // both broadcast
      {{4, 1}, {3}},                 // rank differs
      {{1, 1}, {1}},                 // all ones
      {{2, 1, 33}, {2, 7, 33}},      // middle broadcast
  };
  for (const char* op : {"Add", "Sub", "Mul", "Div"})
    for (const auto& [a, b] : shapes) check_binary(rng, dt(), op, a, b);
  // Large enough to split over threads.
  check_binary(rng, dt(), "Mul", {1000, 1100}, {1100});
  check_binary(rng, dt(), "Div", {1100, 1000}, {1100, 1000});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Elementwise, float_dtypes(), DtypeName());
// The float64 mode cpu_ref runs (run_node), against the same f64 references.
INSTANTIATE_TEST_SUITE_P(Float64, Elementwise, ::testing::Values(AMPX_DTYPE_F64), DtypeName());

// f64 is accepted by the elementwise ops (computed in f64).
TEST(ElementwiseF64, UnaryAndBinary) {
  Rng rng(5);
  check_unary(rng, AMPX_DTYPE_F64, "Tanh", [](double x) { return std::tanh(x); });
  check_unary(rng, AMPX_DTYPE_F64, "Gelu",
              [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); });
  check_binary(rng, AMPX_DTYPE_F64, "Div", {2, 5, 3}, {5, 1});
  check_binary(rng, AMPX_DTYPE_F64, "Mul", {7}, {3, 7});
}

}  // namespace
}  // namespace ampx::test
