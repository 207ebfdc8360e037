// Conv2d, MatMul, Gemm against naive float64 references.
#include <cmath>
#include <numbers>

#include "harness.hpp"

namespace ampx::test {
namespace {

class Contraction : public ::testing::TestWithParam<ampx_dtype> {
 protected:
  ampx_dtype dt() const { return GetParam(); }
  Rng rng{1234};
};

// ----------------------------------------------------------------- Conv2d

struct ConvCase {
  int64_t N, C, H, W, M, kH, kW, group;
  std::vector<int64_t> strides, pads, dilations;
  bool bias;
};

std::vector<double> conv_ref(const ConvCase& c, const std::vector<double>& x,
                             const std::vector<double>& w, const std::vector<double>& b, int64_t OH,
                             int64_t OW) {
  const int64_t Cg = c.C / c.group, Mg = c.M / c.group;
  std::vector<double> y(static_cast<size_t>(c.N * c.M * OH * OW));
  size_t o = 0;
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = c.bias ? b[static_cast<size_t>(m)] : 0.0;
          const int64_t g = m / Mg;
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t ki = 0; ki < c.kH; ++ki)
              for (int64_t kj = 0; kj < c.kW; ++kj) {
                const int64_t ih = oh * c.strides[0] - c.pads[0] + ki * c.dilations[0];
                const int64_t iw = ow * c.strides[1] - c.pads[1] + kj * c.dilations[1];
                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                acc += x[static_cast<size_t>(((n * c.C + g * Cg + ci) * c.H + ih) * c.W + iw)] *
                       w[static_cast<size_t>(((m * Cg + ci) * c.kH + ki) * c.kW + kj)];
              }
          y[o++] = acc;
        }
  return y;
}

void check_conv(Rng& rng, ampx_dtype dt, const ConvCase& c) {
  const int64_t OH =
      (c.H + c.pads[0] + c.pads[2] - c.dilations[0] * (c.kH - 1) - 1) / c.strides[0] + 1;
  const int64_t OW =
      (c.W + c.pads[1] + c.pads[3] - c.dilations[1] * (c.kW - 1) - 1) / c.strides[1] + 1;
  const Tensor x = random_tensor(rng, dt, {c.N, c.C, c.H, c.W});
  const Tensor w = random_tensor(rng, dt, {c.M, c.C / c.group, c.kH, c.kW});
  const Tensor b = random_tensor(rng, dt, {c.M});
  NodeBuilder nb("Conv2d", "conv");
  add_input(nb, x);
  add_input(nb, w);
  if (c.bias) add_input(nb, b);
  nb.output(dt, {c.N, c.M, OH, OW})
      .attr_ints("strides", c.strides)
      .attr_ints("pads", c.pads)
      .attr_ints("dilations", c.dilations)
      .attr_int("group", c.group);
  const auto out = c.bias ? run_node(nb, {&x, &w, &b}) : run_node(nb, {&x, &w});
  expect_close(out[0], conv_ref(c, x.values(), w.values(), b.values(), OH, OW), "Conv2d");
}

TEST_P(Contraction, Conv2dPadded3x3WithBias) {
  check_conv(rng, dt(), {2, 3, 13, 11, 5, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true});
}
TEST_P(Contraction, Conv2dGroupsStridesDilationsAsymmetricPads) {
  check_conv(rng, dt(), {1, 4, 9, 10, 6, 3, 2, 2, {2, 1}, {1, 0, 2, 1}, {2, 1}, false});
  check_conv(rng, dt(), {2, 6, 7, 13, 9, 2, 3, 3, {1, 2}, {0, 2, 1, 0}, {1, 2}, true});
}
TEST_P(Contraction, Conv2dDepthwiseAndChannelMultiplier) {
  check_conv(rng, dt(), {2, 6, 13, 7, 6, 3, 3, 6, {2, 2}, {1, 1, 1, 1}, {1, 1}, true});
  check_conv(rng, dt(), {1, 3, 11, 12, 6, 3, 5, 3, {1, 2}, {2, 1, 0, 2}, {2, 1}, true});
}
TEST_P(Contraction, Conv2dPointwise) {
  check_conv(rng, dt(), {2, 7, 7, 5, 5, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, true});
}
TEST_P(Contraction, Conv2dLargeEnoughToThread) {
  // Several images (split over threads) and a single big image (threaded GEMM).
  check_conv(rng, dt(), {4, 16, 17, 17, 33, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true});
  check_conv(rng, dt(), {1, 32, 33, 33, 64, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, false});
}

// ----------------------------------------------------------------- MatMul

std::vector<double> matmul_ref(const Tensor& a, const Tensor& b,
                               const std::vector<int64_t>& ydims) {
  const auto av = a.values(), bv = b.values();
  const size_t r = ydims.size();
  const int64_t M = ydims[r - 2], N = ydims[r - 1], K = a.dims.back();
  std::vector<double> y(static_cast<size_t>(numel_of(ydims)));
  // Index of a batch element in an operand whose batch dims broadcast.
  auto offset = [&](const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
    const size_t rr = dims.size();
    int64_t off = 0;
    for (size_t d = 0; d + 2 < rr; ++d) {
      const int64_t i = idx[r - rr + d];
      off = off * dims[d] + (dims[d] == 1 ? 0 : i);
    }
    return off * dims[rr - 2] * dims[rr - 1];
  };
  for (int64_t i = 0; i < numel_of(ydims); ++i) {
    const auto idx = unravel(i, ydims);
    const int64_t m = idx[r - 2], n = idx[r - 1];
    const int64_t oa = offset(idx, a.dims), ob = offset(idx, b.dims);
    double acc = 0;
    for (int64_t k = 0; k < K; ++k)
      acc += av[static_cast<size_t>(oa + m * K + k)] * bv[static_cast<size_t>(ob + k * N + n)];
    y[static_cast<size_t>(i)] = acc;
  }
  (void)M;
  return y;
}

void check_matmul(Rng& rng, ampx_dtype dt, std::vector<int64_t> ad, std::vector<int64_t> bd,
                  std::vector<int64_t> yd) {
  const Tensor a = random_tensor(rng, dt, ad), b = random_tensor(rng, dt, bd);
  NodeBuilder nb("MatMul", "mm");
  add_input(nb, a);
  add_input(nb, b);
  nb.output(dt, yd);
  expect_close(run_node(nb, {&a, &b})[0], matmul_ref(a, b, yd), "MatMul");
}

TEST_P(Contraction, MatMul2d) {
  check_matmul(rng, dt(), {7, 13}, {13, 33}, {7, 33});
}
TEST_P(Contraction, MatMulSharedWeightFoldsBatch) {
  check_matmul(rng, dt(), {2, 3, 7, 13}, {13, 5}, {2, 3, 7, 5});
  check_matmul(rng, dt(), {2, 3, 7, 13}, {1, 1, 13, 5}, {2, 3, 7, 5});
}
TEST_P(Contraction, MatMulBroadcastBatch) {
  check_matmul(rng, dt(), {3, 1, 7, 5}, {1, 4, 5, 9}, {3, 4, 7, 9});
  check_matmul(rng, dt(), {7, 5}, {2, 5, 9}, {2, 7, 9});
  check_matmul(rng, dt(), {5, 17, 19}, {5, 19, 8}, {5, 17, 8});
}
TEST_P(Contraction, MatMulThreaded) {
  check_matmul(rng, dt(), {8, 64, 64}, {8, 64, 64}, {8, 64, 64});  // over batches
  check_matmul(rng, dt(), {70, 300}, {300, 130}, {70, 130});       // inside the GEMM
}

// ------------------------------------------------------------------- Gemm

void check_gemm(Rng& rng, ampx_dtype dt, int64_t M, int64_t K, int64_t N, bool ta, bool tb,
                const std::vector<int64_t>* cdims, double alpha, double beta) {
  const Tensor a =
      random_tensor(rng, dt, ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K});
  const Tensor b =
      random_tensor(rng, dt, tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N});
  const Tensor c = random_tensor(rng, dt, cdims ? *cdims : std::vector<int64_t>{1});
  NodeBuilder nb("Gemm", "gemm");
  add_input(nb, a);
  add_input(nb, b);
  if (cdims) add_input(nb, c);
  nb.output(dt, {M, N}).attr_int("transA", ta).attr_int("transB", tb);
  if (alpha != 1.0) nb.attr_float("alpha", alpha);
  if (beta != 1.0) nb.attr_float("beta", beta);
  const auto out = cdims ? run_node(nb, {&a, &b, &c}) : run_node(nb, {&a, &b});
  const auto av = a.values(), bv = b.values(), cv = c.values();
  std::vector<double> ref(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += av[static_cast<size_t>(ta ? k * M + i : i * K + k)] *
               bv[static_cast<size_t>(tb ? j * K + k : k * N + j)];
      double cij = 0;
      if (cdims) {
        std::vector<int64_t> full(2, 1);
        std::copy(cdims->begin(), cdims->end(),
                  full.begin() + static_cast<ptrdiff_t>(2 - cdims->size()));
        cij = cv[static_cast<size_t>((full[0] == 1 ? 0 : i) * full[1] + (full[1] == 1 ? 0 : j))];
      }
      ref[static_cast<size_t>(i * N + j)] = alpha * acc + beta * cij;
    }
  expect_close(out[0], ref, "Gemm");
}

TEST_P(Contraction, GemmTransposesAndBiasShapes) {
  const std::vector<int64_t> row{33}, col{7, 1}, full{7, 33}, scalar{}, one{1, 1};
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      check_gemm(rng, dt(), 7, 13, 33, ta, tb, &row, 1.0, 1.0);
      check_gemm(rng, dt(), 7, 13, 33, ta, tb, &full, 0.5, -1.5);
    }
  check_gemm(rng, dt(), 7, 13, 33, false, false, &col, 2.0, 0.25);
  check_gemm(rng, dt(), 7, 13, 33, false, true, &scalar, 1.0, 3.0);
  check_gemm(rng, dt(), 7, 13, 33, true, false, &one, -1.0, 1.0);
  check_gemm(rng, dt(), 7, 13, 33, false, false, nullptr, 1.25, 1.0);
}
TEST_P(Contraction, GemmLarge) {
  const std::vector<int64_t> row{96}, col{65, 1};
  check_gemm(rng, dt(), 64, 256, 96, false, true, &row, 1.0, 1.0);
  check_gemm(rng, dt(), 65, 1031, 67, true, false, &col, 1.0, 1.0);
}

// Every output element is computed by one thread in a fixed order, so the
// bits do not depend on the thread count.
TEST_P(Contraction, ResultsDoNotDependOnThreadCount) {
  const Tensor x = random_tensor(rng, dt(), {4, 16, 17, 17}),
               w = random_tensor(rng, dt(), {33, 16, 3, 3});
  const Tensor a = random_tensor(rng, dt(), {8, 64, 96}), b = random_tensor(rng, dt(), {8, 96, 64});
  const Tensor a2 = random_tensor(rng, dt(), {1, 70, 300}),
               b2 = random_tensor(rng, dt(), {300, 130});
  auto run_all = [&] {
    NodeBuilder conv("Conv2d", "conv");
    add_input(conv, x);
    add_input(conv, w);
    conv.output(dt(), {4, 33, 17, 17}).attr_ints("pads", {1, 1, 1, 1});
    NodeBuilder mm("MatMul", "mm");
    add_input(mm, a);
    add_input(mm, b);
    mm.output(dt(), {8, 64, 64});
    NodeBuilder mm2("MatMul", "mm2");
    add_input(mm2, a2);
    add_input(mm2, b2);
    mm2.output(dt(), {1, 70, 130});
    return std::vector<Tensor>{run_node(conv, {&x, &w})[0], run_node(mm, {&a, &b})[0],
                               run_node(mm2, {&a2, &b2})[0]};
  };
  reference::set_max_threads(1);
  const auto one = run_all();
  reference::set_max_threads(3);
  const auto three = run_all();
  reference::set_max_threads(0);
  for (size_t i = 0; i < one.size(); ++i) expect_bits_equal(one[i], three[i]);
}

// ------------------------------------------------------ fused epilogues

double activation_ref(const std::string& act, double x) {
  if (act == "relu") return x < 0 ? 0 : x;
  if (act == "gelu") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (act == "gelu_tanh")
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
  if (act == "clip") return std::min(std::max(x, -0.5), 0.75);  // activation_alpha/_beta below
  if (act == "hardsigmoid") return std::min(std::max(0.3 * x + 0.4, 0.0), 1.0);
  if (act == "hardswish") return x * std::min(std::max(x / 6 + 0.5, 0.0), 1.0);
  if (act == "sigmoid") return 1 / (1 + std::exp(-x));
  if (act == "swish") return x / (1 + std::exp(-x));
  if (act == "tanh") return std::tanh(x);
  if (act == "leaky_relu") return x < 0 ? 0.05 * x : x;
  return x;
}

// The parameters activation_ref() assumes.
void set_activation_params(NodeBuilder& nb, const std::string& act) {
  if (act == "clip") nb.attr_float("activation_alpha", -0.5).attr_float("activation_beta", 0.75);
  if (act == "hardsigmoid")
    nb.attr_float("activation_alpha", 0.3).attr_float("activation_beta", 0.4);
  if (act == "leaky_relu") nb.attr_float("activation_alpha", 0.05);
}

TEST_P(Contraction, Conv2dWithActivationEpilogue) {
  const ConvCase c{2, 3, 9, 8, 5, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true};
  for (const std::string act : {"relu", "gelu", "gelu_tanh", "clip", "hardsigmoid", "hardswish",
                                "sigmoid", "swish", "tanh", "leaky_relu"}) {
    const Tensor x = random_tensor(rng, dt(), {2, 3, 9, 8});
    const Tensor w = random_tensor(rng, dt(), {5, 3, 3, 3});
    const Tensor b = random_tensor(rng, dt(), {5});
    NodeBuilder nb("Conv2d", "conv");
    add_input(nb, x);
    add_input(nb, w);
    add_input(nb, b);
    nb.output(dt(), {2, 5, 9, 8}).attr_ints("pads", {1, 1, 1, 1}).attr_str("activation", act);
    set_activation_params(nb, act);
    auto ref = conv_ref(c, x.values(), w.values(), b.values(), 9, 8);
    for (double& v : ref) v = activation_ref(act, v);
    expect_close(run_node(nb, {&x, &w, &b})[0], ref, "Conv2d+" + act);
  }
}

TEST_P(Contraction, MatMulWithBiasAndActivation) {
  for (const std::string act : {"none", "relu", "gelu"}) {
    const std::vector<int64_t> yd{2, 7, 9};
    const Tensor a = random_tensor(rng, dt(), {2, 7, 13}), b = random_tensor(rng, dt(), {13, 9});
    const Tensor bias = random_tensor(rng, dt(), {9});
    NodeBuilder nb("MatMul", "mm");
    add_input(nb, a);
    add_input(nb, b);
    add_input(nb, bias);
    nb.output(dt(), yd).attr_str("activation", act);
    auto ref = matmul_ref(a, b, yd);
    const auto bv = bias.values();
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = activation_ref(act, ref[i] + bv[i % 9]);
    expect_close(run_node(nb, {&a, &b, &bias})[0], ref, "MatMul+bias+" + act);
  }
}

TEST_P(Contraction, GemmWithActivation) {
  const Tensor a = random_tensor(rng, dt(), {6, 11}), b = random_tensor(rng, dt(), {5, 11});
  const Tensor c = random_tensor(rng, dt(), {5});
  NodeBuilder nb("Gemm", "gemm");
  add_input(nb, a);
  add_input(nb, b);
  add_input(nb, c);
  nb.output(dt(), {6, 5}).attr_int("transB", 1).attr_str("activation", "gelu_tanh");
  const auto av = a.values(), bv = b.values(), cv = c.values();
  std::vector<double> ref(30);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      double acc = cv[static_cast<size_t>(j)];
      for (int64_t k = 0; k < 11; ++k)
        acc += av[static_cast<size_t>(i * 11 + k)] * bv[static_cast<size_t>(j * 11 + k)];
      ref[static_cast<size_t>(i * 5 + j)] = activation_ref("gelu_tanh", acc);
    }
  expect_close(run_node(nb, {&a, &b, &c})[0], ref, "Gemm+gelu_tanh");
}

TEST(ContractionEpilogue, UnknownActivationIsUnsupported) {
  NodeBuilder nb("MatMul", "mm");
  nb.input(AMPX_DTYPE_F32, {2, 3}).input(AMPX_DTYPE_F32, {3, 4});
  nb.output(AMPX_DTYPE_F32, {2, 4}).attr_str("activation", "mish");
  std::string why;
  EXPECT_FALSE(reference::can_run(nb.desc(), &why));
  EXPECT_NE(why.find("activation 'mish'"), std::string::npos) << why;
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Contraction, float_dtypes(), DtypeName());
// The float64 mode cpu_ref runs (run_node), against the same f64 references.
INSTANTIATE_TEST_SUITE_P(Float64, Contraction, ::testing::Values(AMPX_DTYPE_F64), DtypeName());

}  // namespace
}  // namespace ampx::test
