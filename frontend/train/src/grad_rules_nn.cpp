// Gradient rules of the contractions, normalisations, pools, reductions,
// Softmax and the loss.
#include <algorithm>
#include <numeric>

#include "grad_rules.hpp"

namespace ampx::train::detail {
namespace {

void no_fused_epilogue(RuleContext& c) {
  if (c.attr_s("activation", "none") != "none")
    c.fail("a fused activation epilogue has no gradient rule (autodiff runs before fusion)");
}

// Y = conv(X, W) + B: dX = ConvTranspose(dY, W) with the output padding that
// restores X's size, dW = Conv2dGradWeight(dY, X), dB = sum of dY over N, H, W.
void conv2d(RuleContext& c) {
  no_fused_epilogue(c);
  if (c.num_inputs() > 3) c.fail("a fused residual input has no gradient rule");
  const Shape x = c.shape(c.x(0));
  const Shape w = c.shape(c.x(1));
  const Shape y = c.shape(c.y(0));
  const auto strides = c.attr_is("strides", {1, 1});
  const auto pads = c.attr_is("pads", {0, 0, 0, 0});
  const auto dil = c.attr_is("dilations", {1, 1});
  const int64_t group = c.attr_i("group", 1);
  AttrMap geometry{{"strides", strides}, {"pads", pads}, {"dilations", dil}, {"group", group}};
  if (c.needs(0)) {
    std::vector<int64_t> out_pad(2);
    for (size_t i = 0; i < 2; ++i)
      out_pad[i] = x[2 + i] - (strides[i] * (y[2 + i] - 1) + dil[i] * (w[2 + i] - 1) + 1 - pads[i] -
                               pads[i + 2]);
    AttrMap a = geometry;
    a["output_padding"] = out_pad;
    c.give(0, c.op(OpType::kConvTranspose, "dx", {c.dy(), c.x(1)}, std::move(a)));
  }
  if (c.needs(1)) {
    AttrMap a = geometry;
    a["kernel_shape"] = std::vector<int64_t>{w[2], w[3]};
    c.give(1, c.op(OpType::kConv2dGradWeight, "dw", {c.dy(), c.x(0)}, std::move(a)));
  }
  if (c.num_inputs() > 2 && c.needs(2)) {
    c.give(2, c.op(OpType::kReduceSum, "db", {c.dy()},
                   {{"axes", std::vector<int64_t>{0, 2, 3}}, {"keepdims", int64_t{0}}}));
  }
}

// The last two dims swapped.
ValueId transpose_last2(RuleContext& c, ValueId v, const std::string& what) {
  std::vector<int64_t> perm(c.shape(v).size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return c.op(OpType::kTranspose, what, {v}, {{"perm", perm}});
}

// Y = A B (batched, broadcast): dA = dY B^T, dB = A^T dY, each summed over
// the batch dims it was broadcast along.
void matmul(RuleContext& c) {
  no_fused_epilogue(c);
  if (c.needs(0)) {
    const ValueId da = c.op(OpType::kMatMul, "da_full", {c.dy(), transpose_last2(c, c.x(1), "bt")});
    c.give(0, c.sum_to(da, c.shape(c.x(0)), "da"));
  }
  if (c.needs(1)) {
    const ValueId db = c.op(OpType::kMatMul, "db_full", {transpose_last2(c, c.x(0), "at"), c.dy()});
    c.give(1, c.sum_to(db, c.shape(c.x(1)), "db"));
  }
  if (c.num_inputs() > 2 && c.needs(2)) c.give(2, c.sum_to(c.dy(), c.shape(c.x(2)), "dbias"));
}

// Y = alpha op(A) op(B) + beta C, op a transpose where transA/transB say.
void gemm(RuleContext& c) {
  no_fused_epilogue(c);
  const double alpha = c.attr_f("alpha", 1.0), beta = c.attr_f("beta", 1.0);
  const bool ta = c.attr_i("transA", 0) != 0, tb = c.attr_i("transB", 0) != 0;
  auto g = [&](const std::string& what, ValueId a, ValueId b, bool t_a, bool t_b) {
    return c.op(OpType::kGemm, what, {a, b},
                {{"alpha", alpha}, {"transA", int64_t{t_a}}, {"transB", int64_t{t_b}}});
  };
  if (c.needs(0)) {
    // op(A) = A: dA = alpha dY op(B)^T; op(A) = A^T: dA = alpha op(B) dY^T.
    c.give(0, ta ? g("da", c.x(1), c.dy(), tb, true) : g("da", c.dy(), c.x(1), false, !tb));
  }
  if (c.needs(1)) {
    // op(B) = B: dB = alpha op(A)^T dY; op(B) = B^T: dB = alpha dY^T op(A).
    c.give(1, tb ? g("db", c.dy(), c.x(0), true, ta) : g("db", c.x(0), c.dy(), !ta, false));
  }
  if (c.num_inputs() > 2 && c.needs(2)) {
    ValueId dc = c.dy();
    if (beta != 1.0) dc = c.op(OpType::kMul, "beta_dy", {dc, c.scalar(beta, "beta")});
    c.give(2, c.sum_to(dc, c.shape(c.x(2)), "dc"));
  }
}

void batchnorm_training(RuleContext& c) {
  if (c.dy(0) == kNone) return;  // only Y carries a gradient; the statistics do not
  const auto d =
      c.op_multi(OpType::kBatchNormGrad, "bn", {c.dy(0), c.x(0), c.x(1), c.y(3), c.y(4)});
  for (size_t i = 0; i < 3; ++i) c.give(i, d[i]);
}

void layernorm(RuleContext& c) {
  const auto d =
      c.op_multi(OpType::kLayerNormGrad, "ln", {c.dy(), c.x(0), c.x(1)},
                 {{"axis", c.attr_i("axis", -1)}, {"epsilon", c.attr_f("epsilon", 1e-5)}});
  for (size_t i = 0; i < c.num_inputs(); ++i) c.give(i, d[i]);
}

void softmax(RuleContext& c) {
  c.give(0, c.op(OpType::kSoftmaxGrad, "dx", {c.dy(), c.y(0)}, {{"axis", c.attr_i("axis", -1)}}));
}

// Y = X - logsumexp(X): dX = dY - exp(Y) * sum_axis(dY).
void log_softmax(RuleContext& c) {
  const ValueId s =
      c.op(OpType::kReduceSum, "sum", {c.dy()},
           {{"axes", std::vector<int64_t>{c.attr_i("axis", -1)}}, {"keepdims", int64_t{1}}});
  const ValueId p = c.op(OpType::kExp, "p", {c.y(0)});
  c.give(0, c.op(OpType::kSub, "dx", {c.dy(), c.op(OpType::kMul, "p_sum", {p, s})}));
}

AttrMap pool_attrs(const RuleContext& c, bool average) {
  // The gradient ops walk undilated windows only.
  const auto d = c.attr_is("dilations", {1, 1});
  if (std::any_of(d.begin(), d.end(), [](int64_t v) { return v != 1; }))
    c.fail("a dilated pool has no gradient rule");
  AttrMap a{{"kernel_shape", c.attr_is("kernel_shape")},
            {"strides", c.attr_is("strides", {1, 1})},
            {"pads", c.attr_is("pads", {0, 0, 0, 0})},
            {"ceil_mode", c.attr_i("ceil_mode", 0)}};
  if (average) a["count_include_pad"] = c.attr_i("count_include_pad", 0);
  return a;
}

void maxpool(RuleContext& c) {
  c.give(0, c.op(OpType::kMaxPoolGrad, "dx", {c.dy(), c.x(0)}, pool_attrs(c, false)));
}

void avgpool(RuleContext& c) {
  AttrMap a = pool_attrs(c, true);
  a["input_shape"] = c.shape(c.x(0));
  c.give(0, c.op(OpType::kAveragePoolGrad, "dx", {c.dy()}, std::move(a)));
}

// dY [N,C,1,1] spread evenly over H x W.
void global_avgpool(RuleContext& c) {
  const Shape x = c.shape(c.x(0));
  const double count = static_cast<double>(x[2] * x[3]);
  const ValueId share = c.op(OpType::kMul, "share", {c.dy(), c.scalar(1.0 / count, "inv_count")});
  c.give(0, c.op(OpType::kExpand, "dx", {share}, {{"shape", x}}));
}

// dY broadcast back over the reduced axes (ReduceMean: divided by the count).
template <bool kMean>
void reduce(RuleContext& c) {
  const Shape x = c.shape(c.x(0));
  const auto rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = c.attr_is("axes");
  std::vector<bool> reduced(x.size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  Shape kept = x;
  double count = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!reduced[i]) continue;
    kept[i] = 1;
    count *= static_cast<double>(x[i]);
  }
  ValueId g = c.dy();
  if (c.shape(g) != kept) g = c.op(OpType::kReshape, "keepdims", {g}, {{"shape", kept}});
  if (kMean)
    g = c.op(OpType::kMul, "share", {g, c.scalar(count > 0 ? 1.0 / count : 0.0, "inv_count")});
  c.give(0, c.op(OpType::kExpand, "dx", {g}, {{"shape", x}}));
}

void softmax_cross_entropy(RuleContext& c) {
  if (c.dy(1) != kNone) c.fail("a gradient through log_prob (output 1) has no rule");
  if (c.dy(0) == kNone) return;
  c.give(0, c.op(OpType::kSoftmaxCrossEntropyGrad, "dlogits", {c.dy(0), c.y(1), c.x(1)}));
}

void dropout_training(RuleContext& c) {  // dX = dY * mask
  if (c.dy(0) != kNone) c.give(0, c.op(OpType::kMul, "dx", {c.dy(0), c.y(1)}));
}

}  // namespace

GradRule nn_grad_rule(OpType op) {
  switch (op) {
    case OpType::kConv2d:
      return conv2d;
    case OpType::kMatMul:
      return matmul;
    case OpType::kGemm:
      return gemm;
    case OpType::kBatchNormTraining:
      return batchnorm_training;
    case OpType::kLayerNorm:
      return layernorm;
    case OpType::kSoftmax:
      return softmax;
    case OpType::kLogSoftmax:
      return log_softmax;
    case OpType::kMaxPool:
      return maxpool;
    case OpType::kAveragePool:
      return avgpool;
    case OpType::kGlobalAveragePool:
      return global_avgpool;
    case OpType::kReduceMean:
      return reduce<true>;
    case OpType::kReduceSum:
      return reduce<false>;
    case OpType::kSoftmaxCrossEntropy:
      return softmax_cross_entropy;
    case OpType::kDropoutTraining:
      return dropout_training;
    default:
      return nullptr;
  }
}

}  // namespace ampx::train::detail
