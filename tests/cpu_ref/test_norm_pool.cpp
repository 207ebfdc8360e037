// BatchNorm, LayerNorm, RMSNorm, Softmax, pooling and reductions against float64
// references.
#include <cmath>
#include <limits>

#include "harness.hpp"

namespace ampx::test {
namespace {

class NormPool : public ::testing::TestWithParam<ampx_dtype> {
 protected:
  ampx_dtype dt() const { return GetParam(); }
  Rng rng{777};
};

// -------------------------------------------------------------- BatchNorm

void check_batchnorm(Rng& rng, ampx_dtype dt, std::vector<int64_t> xd, double eps,
                     bool relu = false) {
  const int64_t C = xd[1];
  const Tensor x = random_tensor(rng, dt, xd, 2.0);
  const Tensor scale = random_tensor(rng, dt, {C}), bias = random_tensor(rng, dt, {C});
  const Tensor mean = random_tensor(rng, dt, {C}, 0.5);
  std::vector<double> vv(static_cast<size_t>(C));
  for (auto& v : vv) v = rng.uniform(0.1, 2.0);
  const Tensor var = Tensor::of(dt, {C}, vv);
  NodeBuilder nb("BatchNorm", "bn");
  for (const Tensor* t : {&x, &scale, &bias, &mean, &var}) add_input(nb, *t);
  nb.output(dt, xd);
  if (eps != 1e-5) nb.attr_float("epsilon", eps);
  if (relu) nb.attr_str("activation", "relu");  // the fused epilogue
  const auto out = run_node(nb, {&x, &scale, &bias, &mean, &var});
  const auto X = x.values(), S = scale.values(), B = bias.values(), Mn = mean.values(),
             V = var.values();
  const int64_t inner = numel_of(xd) / (xd[0] * C);
  std::vector<double> ref(X.size());
  for (size_t i = 0; i < X.size(); ++i) {
    const auto c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % C);
    ref[i] = (X[i] - Mn[c]) / std::sqrt(V[c] + eps) * S[c] + B[c];
    if (relu) ref[i] = std::max(ref[i], 0.0);
  }
  expect_close(out[0], ref, relu ? "BatchNorm+relu" : "BatchNorm");
}

TEST_P(NormPool, BatchNorm) {
  check_batchnorm(rng, dt(), {2, 5, 7, 3}, 1e-5);
  check_batchnorm(rng, dt(), {4, 6}, 1e-3);
  check_batchnorm(rng, dt(), {3, 7, 13}, 0.1);
  check_batchnorm(rng, dt(), {2, 5, 7, 3}, 1e-5, true);
}

// -------------------------------------------------------------- LayerNorm

void check_layernorm(Rng& rng, ampx_dtype dt, std::vector<int64_t> xd, int64_t axis, bool bias,
                     double eps) {
  const int64_t r = static_cast<int64_t>(xd.size());
  const size_t a = static_cast<size_t>(axis < 0 ? axis + r : axis);
  const std::vector<int64_t> nd(xd.begin() + static_cast<ptrdiff_t>(a), xd.end());
  const Tensor x = random_tensor(rng, dt, xd, 3.0);
  const Tensor s = random_tensor(rng, dt, nd), b = random_tensor(rng, dt, nd);
  NodeBuilder nb("LayerNorm", "ln");
  add_input(nb, x);
  add_input(nb, s);
  if (bias) add_input(nb, b);
  nb.output(dt, xd).attr_int("axis", axis);
  if (eps != 1e-5) nb.attr_float("epsilon", eps);
  const auto out = bias ? run_node(nb, {&x, &s, &b}) : run_node(nb, {&x, &s});
  const auto X = x.values(), S = s.values(), B = b.values();
  const int64_t D = numel_of(nd), rows = numel_of(xd) / D;
  std::vector<double> ref(X.size());
  for (int64_t row = 0; row < rows; ++row) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < D; ++i) mean += X[static_cast<size_t>(row * D + i)];
    mean /= static_cast<double>(D);
    for (int64_t i = 0; i < D; ++i) var += std::pow(X[static_cast<size_t>(row * D + i)] - mean, 2);
    var /= static_cast<double>(D);
    for (int64_t i = 0; i < D; ++i) {
      const auto k = static_cast<size_t>(row * D + i);
      ref[k] = (X[k] - mean) / std::sqrt(var + eps) * S[static_cast<size_t>(i)] +
               (bias ? B[static_cast<size_t>(i)] : 0.0);
    }
  }
  expect_close(out[0], ref, "LayerNorm");
}

TEST_P(NormPool, LayerNorm) {
  check_layernorm(rng, dt(), {3, 7, 33}, -1, true, 1e-5);
  check_layernorm(rng, dt(), {3, 7, 33}, 1, false, 1e-5);
  check_layernorm(rng, dt(), {5, 13}, -2, true, 1e-2);
  check_layernorm(rng, dt(), {128, 256}, -1, true, 1e-5);
}

// ---------------------------------------------------------------- RMSNorm

void check_rmsnorm(Rng& rng, ampx_dtype dt, std::vector<int64_t> xd, int64_t axis, double eps) {
  const int64_t r = static_cast<int64_t>(xd.size());
  const size_t a = static_cast<size_t>(axis < 0 ? axis + r : axis);
  const std::vector<int64_t> nd(xd.begin() + static_cast<ptrdiff_t>(a), xd.end());
  const Tensor x = random_tensor(rng, dt, xd, 3.0);
  const Tensor s = random_tensor(rng, dt, nd);
  NodeBuilder nb("RMSNorm", "rms");
  add_input(nb, x);
  add_input(nb, s);
  nb.output(dt, xd).attr_int("axis", axis);
  if (eps != 1e-5) nb.attr_float("epsilon", eps);
  const auto out = run_node(nb, {&x, &s});
  const auto X = x.values(), S = s.values();
  const int64_t D = numel_of(nd), rows = numel_of(xd) / D;
  std::vector<double> ref(X.size());
  for (int64_t row = 0; row < rows; ++row) {
    double sq = 0;
    for (int64_t i = 0; i < D; ++i) sq += std::pow(X[static_cast<size_t>(row * D + i)], 2);
    const double rms = std::sqrt(sq / static_cast<double>(D) + eps);
    for (int64_t i = 0; i < D; ++i) {
      const auto k = static_cast<size_t>(row * D + i);
      ref[k] = X[k] / rms * S[static_cast<size_t>(i)];
    }
  }
  expect_close(out[0], ref, "RMSNorm");
}

TEST_P(NormPool, RMSNorm) {
  check_rmsnorm(rng, dt(), {3, 7, 33}, -1, 1e-5);
  check_rmsnorm(rng, dt(), {3, 7, 33}, 1, 1e-5);
  check_rmsnorm(rng, dt(), {2, 3, 4, 5}, 0, 1e-5);
  check_rmsnorm(rng, dt(), {5, 13}, -2, 0.1);
  check_rmsnorm(rng, dt(), {128, 256}, -1, 1e-5);
}

// ---------------------------------------------------------------- Softmax

void check_softmax(Rng& rng, ampx_dtype dt, std::vector<int64_t> xd, int64_t axis) {
  const Tensor x = random_tensor(rng, dt, xd, 6.0);
  NodeBuilder nb("Softmax", "sm");
  add_input(nb, x);
  nb.output(dt, xd);
  if (axis != -1) nb.attr_int("axis", axis);
  const auto out = run_node(nb, {&x});
  const auto X = x.values();
  const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(xd.size()) : axis);
  std::vector<double> ref(X.size());
  for (int64_t i = 0; i < numel_of(xd); ++i) {
    auto idx = unravel(i, xd);
    double sum = 0;
    for (int64_t k = 0; k < xd[a]; ++k) {
      auto j = idx;
      j[a] = k;
      sum += std::exp(X[static_cast<size_t>(ravel(j, xd))]);  // |x| <= 6: no overflow
    }
    ref[static_cast<size_t>(i)] = std::exp(X[static_cast<size_t>(i)]) / sum;
  }
  expect_close(out[0], ref, "Softmax");
}

TEST_P(NormPool, Softmax) {
  check_softmax(rng, dt(), {3, 7, 33}, -1);
  check_softmax(rng, dt(), {3, 7, 33}, 1);
  check_softmax(rng, dt(), {3, 7, 33}, -3);
  check_softmax(rng, dt(), {13}, 0);
}

TEST_P(NormPool, SoftmaxIsStableForLargeInputs) {
  // exp(1000) overflows without the max subtraction.
  const Tensor x = Tensor::of(dt(), {1, 3}, {1000.0, 999.0, 998.0});
  NodeBuilder nb("Softmax", "sm");
  add_input(nb, x);
  nb.output(dt(), {1, 3});
  const auto X = x.values();
  const double e0 = 1.0, e1 = std::exp(X[1] - X[0]), e2 = std::exp(X[2] - X[0]);
  const double s = e0 + e1 + e2;
  expect_close(run_node(nb, {&x})[0], {e0 / s, e1 / s, e2 / s}, "Softmax large");
}

// ---------------------------------------------------------------- pooling

struct PoolCase {
  std::vector<int64_t> xd, k, s, pads;
  int64_t ceil_mode, include_pad;
  std::vector<int64_t> d = {1, 1};  // dilations
  int64_t storage_order = 0;        // MaxPoolIndices'
};

// Output size: floor or ceil; in ceil mode a window that would start in the
// bottom/right padding is dropped (ONNX, PyTorch).
int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, bool ceil) {
  const double v = static_cast<double>(in + p0 + p1 - k) / static_cast<double>(s);
  int64_t o = static_cast<int64_t>(ceil ? std::ceil(v) : std::floor(v)) + 1;
  if (ceil && (o - 1) * s >= in + p0) --o;
  return o;
}

// A pool node (MaxPool, AveragePool, MaxPoolIndices) of x under c.
NodeBuilder pool_node(const std::string& op, const Tensor& x, const PoolCase& c, int64_t OH,
                      int64_t OW) {
  NodeBuilder nb(op, "pool");
  add_input(nb, x);
  nb.output(op == "MaxPoolIndices" ? AMPX_DTYPE_I64 : x.dtype, {c.xd[0], c.xd[1], OH, OW})
      .attr_ints("kernel_shape", c.k)
      .attr_ints("strides", c.s)
      .attr_ints("pads", c.pads)
      .attr_int("ceil_mode", c.ceil_mode);
  if (c.d != std::vector<int64_t>{1, 1}) nb.attr_ints("dilations", c.d);
  if (op == "AveragePool") nb.attr_int("count_include_pad", c.include_pad);
  if (op == "MaxPoolIndices") nb.attr_int("storage_order", c.storage_order);
  return nb;
}

// The pool of `x` by its definition, tap by tap in f64; MaxPool's also
// checks MaxPoolIndices (the window's first maximum, as a flat index).
void check_pool(Rng& rng, ampx_dtype dt, bool is_max, const PoolCase& c) {
  const int64_t H = c.xd[2], W = c.xd[3];
  const int64_t eh = (c.k[0] - 1) * c.d[0] + 1, ew = (c.k[1] - 1) * c.d[1] + 1;
  const int64_t OH = pool_out(H, eh, c.s[0], c.pads[0], c.pads[2], c.ceil_mode);
  const int64_t OW = pool_out(W, ew, c.s[1], c.pads[1], c.pads[3], c.ceil_mode);
  const Tensor x = random_tensor(rng, dt, c.xd);
  NodeBuilder nb = pool_node(is_max ? "MaxPool" : "AveragePool", x, c, OH, OW);
  const auto out = run_node(nb, {&x});
  const auto X = x.values();
  std::vector<double> ref, ref_index;
  for (int64_t p = 0; p < c.xd[0] * c.xd[1]; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t n_in = 0, n_pad = 0, best_at = -1;
        for (int64_t i = 0; i < c.k[0]; ++i)
          for (int64_t j = 0; j < c.k[1]; ++j) {
            const int64_t h = oh * c.s[0] - c.pads[0] + i * c.d[0];
            const int64_t w = ow * c.s[1] - c.pads[1] + j * c.d[1];
            const bool in_padded = h < H + c.pads[2] && w < W + c.pads[3];  // h, w >= -pad always
            if (h >= 0 && h < H && w >= 0 && w < W) {
              const double v = X[static_cast<size_t>((p * H + h) * W + w)];
              if (v > best) {
                best = v;
                best_at = p * H * W + (c.storage_order ? w * H + h : h * W + w);
              }
              sum += v;
              ++n_in;
              ++n_pad;
            } else if (in_padded) {
              ++n_pad;
            }
          }
        ref.push_back(is_max ? best : sum / static_cast<double>(c.include_pad ? n_pad : n_in));
        ref_index.push_back(static_cast<double>(best_at));
      }
  expect_close(out[0], ref, is_max ? "MaxPool" : "AveragePool");
  if (!is_max) return;
  NodeBuilder ni = pool_node("MaxPoolIndices", x, c, OH, OW);
  const auto indices = run_node(ni, {&x});
  EXPECT_EQ(indices[0].values(), ref_index) << "MaxPoolIndices";
}

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      {{2, 3, 13, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 0, 0},
      {{2, 3, 13, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 1, 0},
      {{1, 2, 7, 13}, {2, 3}, {1, 2}, {0, 1, 1, 0}, 1, 1},
      {{1, 2, 7, 13}, {2, 3}, {3, 2}, {1, 2, 0, 1}, 1, 1},
      {{1, 3, 8, 9}, {3, 2}, {2, 3}, {2, 1, 2, 1}, 0, 1},
      {{2, 4, 32, 32}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 0},
      // dilated windows; MaxPoolIndices column-major in the last two
      {{1, 2, 9, 8}, {3, 2}, {2, 1}, {2, 1, 1, 2}, 1, 0, {2, 3}},
      {{2, 3, 10, 7}, {2, 3}, {1, 2}, {1, 0, 0, 2}, 0, 1, {3, 2}},
      {{1, 2, 6, 11}, {2, 2}, {3, 2}, {2, 2, 2, 2}, 1, 1, {3, 4}, 1},
      {{1, 1, 5, 5}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1, 0, {2, 2}, 1},
  };
  return cases;
}

TEST_P(NormPool, MaxPool) {
  for (const auto& c : pool_cases()) check_pool(rng, dt(), true, c);
}
TEST_P(NormPool, AveragePool) {
  for (const auto& c : pool_cases()) check_pool(rng, dt(), false, c);
  for (auto c : pool_cases()) {
    c.include_pad = 1 - c.include_pad;
    check_pool(rng, dt(), false, c);
  }
}

TEST_P(NormPool, GlobalAveragePool) {
  const Tensor x = random_tensor(rng, dt(), {2, 5, 7, 9});
  NodeBuilder nb("GlobalAveragePool", "gap");
  add_input(nb, x);
  nb.output(dt(), {2, 5, 1, 1});
  const auto X = x.values();
  std::vector<double> ref(10, 0.0);
  for (size_t i = 0; i < X.size(); ++i) ref[i / 63] += X[i] / 63.0;
  expect_close(run_node(nb, {&x})[0], ref, "GlobalAveragePool");
}

// ------------------------------------------------------------- reductions

void check_reduce(Rng& rng, ampx_dtype dt, bool mean, std::vector<int64_t> xd,
                  std::vector<int64_t> axes, int64_t keep) {
  const int64_t r = static_cast<int64_t>(xd.size());
  std::vector<bool> red(xd.size(), axes.empty());
  for (int64_t a : axes) red[static_cast<size_t>(a < 0 ? a + r : a)] = true;
  std::vector<int64_t> yd, yd_keep;
  for (size_t i = 0; i < xd.size(); ++i) {
    yd_keep.push_back(red[i] ? 1 : xd[i]);
    if (!red[i] || keep) yd.push_back(red[i] ? 1 : xd[i]);
  }
  const Tensor x = random_tensor(rng, dt, xd);
  NodeBuilder nb(mean ? "ReduceMean" : "ReduceSum", "reduce");
  add_input(nb, x);
  nb.output(dt, yd).attr_int("keepdims", keep);
  if (!axes.empty()) nb.attr_ints("axes", axes);
  const auto out = run_node(nb, {&x});
  const auto X = x.values();
  std::vector<double> ref(static_cast<size_t>(numel_of(yd_keep)), 0.0);
  int64_t count = 1;
  for (size_t i = 0; i < xd.size(); ++i) count *= red[i] ? xd[i] : 1;
  for (int64_t i = 0; i < numel_of(xd); ++i) {
    auto idx = unravel(i, xd);
    for (size_t d = 0; d < idx.size(); ++d)
      if (red[d]) idx[d] = 0;
    ref[static_cast<size_t>(ravel(idx, yd_keep))] += X[static_cast<size_t>(i)];
  }
  if (mean)
    for (auto& v : ref) v /= static_cast<double>(count);
  expect_close(out[0], ref, mean ? "ReduceMean" : "ReduceSum");
}

TEST_P(NormPool, ReduceMeanAndSum) {
  for (bool mean : {true, false}) {
    check_reduce(rng, dt(), mean, {3, 4, 5, 6}, {1, 3}, 1);
    check_reduce(rng, dt(), mean, {3, 4, 5, 6}, {-1}, 0);
    check_reduce(rng, dt(), mean, {3, 4, 5, 6}, {0, 2}, 0);
    check_reduce(rng, dt(), mean, {3, 4, 5, 6}, {}, 0);
    check_reduce(rng, dt(), mean, {7, 13}, {-2}, 1);
    check_reduce(rng, dt(), mean, {2, 33, 1, 5}, {1, 2, 3}, 1);
    check_reduce(rng, dt(), mean, {64, 1031}, {}, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, NormPool, float_dtypes(), DtypeName());
// The float64 mode cpu_ref runs (run_node), against the same f64 references.
INSTANTIATE_TEST_SUITE_P(Float64, NormPool, ::testing::Values(AMPX_DTYPE_F64), DtypeName());

}  // namespace
}  // namespace ampx::test
