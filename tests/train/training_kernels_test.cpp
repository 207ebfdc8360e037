// The reference training kernels on their own: the optimizer updates
// against a float64 implementation of PyTorch's formulas, skipped steps bit
// for bit, in-place updates, the dropout draw, the loss's data checks.
#include <ampx/reference/kernels.hpp>

#include <node_builder.hpp>

#include <tolerances.hpp>
#include "reference_kernel_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace ampx;
using test::NodeBuilder;

namespace {

using namespace test::reference_kernels;

NodeBuilder adam_node(int64_t n, bool decoupled, double wd) {
  NodeBuilder b("AdamUpdate", "adam");
  for (int i = 0; i < 4; ++i) b.input(AMPX_DTYPE_F32, {n});
  b.input(AMPX_DTYPE_F32, {5});
  for (int i = 0; i < 3; ++i) b.output(AMPX_DTYPE_F32, {n});
  b.attr_float("beta1", 0.8).attr_float("beta2", 0.95).attr_float("epsilon", 1e-6);
  b.attr_float("weight_decay", wd).attr_int("decoupled", decoupled ? 1 : 0);
  return b;
}

class AdamVariant : public ::testing::TestWithParam<bool> {};

// Three steps of Adam (L2 decay) or AdamW (decoupled) against float64.
TEST_P(AdamVariant, MatchesFloat64PyTorchFormulaOverSteps) {
  const bool decoupled = GetParam();
  const int64_t n = 37;
  const double b1 = 0.8, b2 = 0.95, eps = 1e-6, wd = 0.1, lr = 0.05, scale = 0.5;
  std::vector<float> w = randoms(n, 1), m(n, 0.0f), v(n, 0.0f);
  std::vector<double> rw(w.begin(), w.end()), rm(n, 0.0), rv(n, 0.0);
  NodeBuilder b = adam_node(n, decoupled, wd);
  for (int t = 1; t <= 3; ++t) {
    const std::vector<float> g = randoms(n, 10 + t);
    const float bc1 = static_cast<float>(1 - std::pow(b1, t));
    const float bc2 = static_cast<float>(1 - std::pow(b2, t));
    const std::vector<float> hyper{static_cast<float>(lr), static_cast<float>(scale), 1.0f, bc1,
                                   bc2};
    // In place: every output in its state input's buffer.
    run(b, {w.data(), g.data(), m.data(), v.data(), hyper.data()}, {w.data(), m.data(), v.data()});
    for (int64_t i = 0; i < n; ++i) {
      double gi = g[i] * scale;
      if (!decoupled)
        gi += wd * rw[i];
      else
        rw[i] *= 1 - lr * wd;
      rm[i] = b1 * rm[i] + (1 - b1) * gi;
      rv[i] = b2 * rv[i] + (1 - b2) * gi * gi;
      rw[i] -= lr / (1 - std::pow(b1, t)) * rm[i] /
               (std::sqrt(rv[i]) / std::sqrt(1 - std::pow(b2, t)) + eps);
    }
  }
  std::vector<double> got(w.begin(), w.end());
  EXPECT_LE(opset::relative_error(got, rw), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Adam, AdamVariant, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "AdamW" : "Adam"; });

TEST(SgdUpdate, NesterovMomentumWithDecayMatchesFloat64) {
  const int64_t n = 29;
  const double mu = 0.9, wd = 0.01, lr = 0.1;
  std::vector<float> w = randoms(n, 2), m(n, 0.0f);
  std::vector<double> rw(w.begin(), w.end()), rm(n, 0.0);
  NodeBuilder b("SgdUpdate", "sgd");
  b.input(AMPX_DTYPE_F32, {n}).input(AMPX_DTYPE_F32, {n}).input(AMPX_DTYPE_F32, {3});
  b.input(AMPX_DTYPE_F32, {n}).output(AMPX_DTYPE_F32, {n}).output(AMPX_DTYPE_F32, {n});
  b.attr_float("momentum", mu).attr_int("nesterov", 1).attr_float("weight_decay", wd);
  for (int t = 0; t < 3; ++t) {
    const std::vector<float> g = randoms(n, 20 + t);
    const std::vector<float> hyper{static_cast<float>(lr), 1.0f, 1.0f};
    std::vector<float> w2(n), m2(n);  // out of place this time
    run(b, {w.data(), g.data(), hyper.data(), m.data()}, {w2.data(), m2.data()});
    w = w2;
    m = m2;
    for (int64_t i = 0; i < n; ++i) {
      const double gi = g[i] + wd * rw[i];
      rm[i] = mu * rm[i] + gi;
      rw[i] -= lr * (gi + mu * rm[i]);
    }
  }
  std::vector<double> got(w.begin(), w.end());
  EXPECT_LE(opset::relative_error(got, rw), 1e-5);
}

// apply = 0 (a skipped step) leaves weights and state bit for bit, in place
// and out of place, even with a NaN gradient.
TEST(OptimizerUpdate, ASkippedStepChangesNothingBitForBit) {
  const int64_t n = 16;
  std::vector<float> w = randoms(n, 3), m = randoms(n, 4), v = randoms(n, 5, 0.0f, 1.0f);
  const std::vector<float> w0 = w, m0 = m, v0 = v;
  std::vector<float> g(n, NAN);
  const std::vector<float> hyper{0.1f, 1.0f, 0.0f, 0.5f, 0.5f};
  NodeBuilder b = adam_node(n, true, 0.1);
  run(b, {w.data(), g.data(), m.data(), v.data(), hyper.data()}, {w.data(), m.data(), v.data()});
  EXPECT_EQ(std::memcmp(w.data(), w0.data(), n * 4), 0);
  EXPECT_EQ(std::memcmp(m.data(), m0.data(), n * 4), 0);
  EXPECT_EQ(std::memcmp(v.data(), v0.data(), n * 4), 0);
  std::vector<float> w2(n), m2(n), v2(n);
  run(b, {w.data(), g.data(), m.data(), v.data(), hyper.data()}, {w2.data(), m2.data(), v2.data()});
  EXPECT_EQ(std::memcmp(w2.data(), w0.data(), n * 4), 0);
  EXPECT_EQ(std::memcmp(v2.data(), v0.data(), n * 4), 0);
}

TEST(OptimizerUpdate, A16BitUpdateIsUnsupported) {
  NodeBuilder b("SgdUpdate", "sgd");
  b.input(AMPX_DTYPE_F16, {4}).input(AMPX_DTYPE_F16, {4}).input(AMPX_DTYPE_F16, {3});
  b.output(AMPX_DTYPE_F16, {4});
  std::string why;
  EXPECT_FALSE(reference::can_run(b.desc(), &why));
  EXPECT_NE(why.find("master weights"), std::string::npos) << why;
}

NodeBuilder dropout_node(int64_t n, double ratio) {
  NodeBuilder b("DropoutTraining", "drop");
  b.input(AMPX_DTYPE_F32, {n}).input(AMPX_DTYPE_I64, {1});
  b.output(AMPX_DTYPE_F32, {n}).output(AMPX_DTYPE_F32, {n});
  b.attr_float("ratio", ratio);
  return b;
}

// The mask is a function of (seed, index): the same seed gives the same
// mask, another seed another one, and the kept share is 1 - ratio.
TEST(DropoutTraining, TheMaskIsSeededAndKeepsOneMinusRatio) {
  const int64_t n = 20000;
  const double ratio = 0.3;
  const std::vector<float> x = randoms(n, 6);
  auto mask_for = [&](int64_t seed) {
    NodeBuilder b = dropout_node(n, ratio);
    std::vector<float> y(n), mask(n);
    run(b, {x.data(), &seed}, {y.data(), mask.data()});
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[i], x[i] * mask[i]);
    return mask;
  };
  const auto a = mask_for(42), a2 = mask_for(42), c = mask_for(43);
  EXPECT_EQ(a, a2);
  EXPECT_NE(a, c);
  int64_t kept = 0;
  for (float m : a) {
    EXPECT_TRUE(m == 0.0f || m == static_cast<float>(1.0 / (1.0 - ratio)));
    kept += m != 0.0f;
  }
  // Binomial(20000, 0.7): standard deviation ~65; 5 sigma.
  EXPECT_NEAR(static_cast<double>(kept), 0.7 * n, 325.0);
}

TEST(SoftmaxCrossEntropy, ALabelOutOfRangeIsAnErrorNamingTheRow) {
  NodeBuilder b("SoftmaxCrossEntropy", "loss");
  b.input(AMPX_DTYPE_F32, {3, 4}).input(AMPX_DTYPE_I64, {3});
  b.output(AMPX_DTYPE_F32, {}).output(AMPX_DTYPE_F32, {3, 4});
  const std::vector<float> x = randoms(12, 7);
  const std::vector<int64_t> labels{1, 4, 0};
  float loss = 0;
  std::vector<float> lp(12);
  try {
    run(b, {x.data(), labels.data()}, {&loss, lp.data()});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("label 4 of row 1 is outside [0, 4)"), std::string::npos)
        << e.what();
  }
}

TEST(SoftmaxCrossEntropy, MatchesFloat64) {
  const int64_t n = 6, c = 5;
  NodeBuilder b("SoftmaxCrossEntropy", "loss");
  b.input(AMPX_DTYPE_F32, {n, c}).input(AMPX_DTYPE_I64, {n});
  b.output(AMPX_DTYPE_F32, {}).output(AMPX_DTYPE_F32, {n, c});
  // Large logits: the max must be subtracted.
  std::vector<float> x = randoms(n * c, 8, -80.0f, 80.0f);
  const std::vector<int64_t> labels{0, 4, 2, 2, 1, 3};
  float loss = 0;
  std::vector<float> lp(n * c);
  run(b, {x.data(), labels.data()}, {&loss, lp.data()});
  double ref = 0;
  for (int64_t r = 0; r < n; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < c; ++k) m = std::max(m, static_cast<double>(x[r * c + k]));
    for (int64_t k = 0; k < c; ++k) s += std::exp(x[r * c + k] - m);
    ref -= x[r * c + labels[r]] - m - std::log(s);
  }
  ref /= n;
  const std::vector<double> got{loss}, want{ref};
  EXPECT_LE(opset::relative_error(got, want), opset::tolerance(AMPX_DTYPE_F32));
}

}  // namespace
