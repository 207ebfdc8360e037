// Output types of the training ops (docs/OPS.md, "Training ops"): the
// backward kernels, the loss and the optimizer updates. A gradient has the
// shape of what it is the gradient of, and each op checks that its incoming
// gradient has the shape the forward op would have produced.
#include <cmath>

#include "ampx/opset/multi_update.hpp"
#include "infer_common.hpp"

namespace ampx::opset::detail {

namespace {

std::vector<TensorSpec> like(const TensorSpec& t, size_t n = 1) {
  return std::vector<TensorSpec>(n, t);
}

void same_dims(const Node& c, size_t i, const Dims& want, const char* what) {
  AMPX_CHECK(c.in[i].dims == want,
             std::string(what) + " must be " + dims_str(want) + ", got " + dims_str(c.in[i].dims));
}

// An attribute that names the shape of the gradient's target: every
// dimension >= 0, the element count representable.
Dims shape_attr(const Node& c, const char* name) {
  Dims d = c.v.get_ints(name);
  for (int64_t x : d) AMPX_CHECK(x >= 0, std::string(name) + " has a negative dimension");
  (void)checked_count(c, d);
  return d;
}

float unit_interval_attr(const Node& c, const char* name, float def) {
  const float v = c.v.get_float(name, def);
  AMPX_CHECK(v >= 0.0f && v < 1.0f,
             std::string("attribute '") + name + "' = " + std::to_string(v) + " must be in [0, 1)");
  return v;
}

}  // namespace

Outputs infer_training(const Node& c, std::string_view op) {
  const auto& in = c.in;
  if (op == "ReluGrad" || op == "SigmoidGrad" || op == "TanhGrad" || op == "GeluGrad" ||
      op == "ClipGrad" || op == "SoftmaxGrad") {
    require_same_dtype(c, in);
    require_float(c, in[0], "gradient");
    same_dims(c, 1, in[0].dims, "the forward tensor");
    if (op == "GeluGrad") {
      const auto a = c.v.get_string("approximate", "none");
      AMPX_CHECK(a == "none" || a == "tanh",
                 "attribute 'approximate' must be 'none' or 'tanh', got '" + a + "'");
    }
    if (op == "SoftmaxGrad")
      normalize_axis(c, c.v.get_int("axis", -1), static_cast<int64_t>(in[0].dims.size()), "axis");
    return like(in[0]);
  }
  if (op == "LayerNormGrad") {  // dY, X, scale -> dX, dScale, dBias
    check_epsilon(c);
    require_same_dtype(c, in);
    require_float(c, in[0], "gradient");
    same_dims(c, 1, in[0].dims, "X");
    const auto rank = static_cast<int64_t>(in[0].dims.size());
    const int64_t axis = normalize_axis(c, c.v.get_int("axis", -1), rank, "axis");
    const Dims norm(in[0].dims.begin() + axis, in[0].dims.end());
    same_dims(c, 2, norm, "scale");
    return std::vector<TensorSpec>{in[0], in[2], in[2]};
  }
  if (op == "BatchNormTraining" || op == "BatchNormGrad") {
    // Training: X, scale, bias, running_mean, running_var -> Y, running_mean',
    //   running_var', saved_mean, saved_invstd.
    // Grad: dY, X, scale, saved_mean, saved_invstd -> dX, dScale, dBias.
    require_same_dtype(c, in);
    require_float(c, in[0], "input");
    const Dims& x = in[0].dims;
    AMPX_CHECK(x.size() >= 2, "input must have rank >= 2");
    if (op == "BatchNormGrad") same_dims(c, 1, x, "X");
    for (size_t i = 2; i < 5; ++i) same_dims(c, i, Dims{x[1]}, "a per-channel parameter");
    if (op == "BatchNormGrad")
      same_dims(c, 2, Dims{x[1]}, "scale");
    else {
      same_dims(c, 1, Dims{x[1]}, "scale");
      check_epsilon(c);
      (void)unit_interval_attr(c, "momentum", 0.9f);
    }
    const TensorSpec per_channel{in[0].dtype, {x[1]}};
    if (op == "BatchNormGrad") return std::vector<TensorSpec>{in[0], per_channel, per_channel};
    return std::vector<TensorSpec>{in[0], per_channel, per_channel, per_channel, per_channel};
  }
  if (op == "Conv2dGradWeight") {  // dY [N,M,OH,OW], X [N,C,H,W] -> dW [M,C/group,kH,kW]
    require_same_dtype(c, in);
    require_float(c, in[0], "gradient");
    const Dims& dy = in[0].dims;
    const Dims& x = in[1].dims;
    AMPX_CHECK(dy.size() == 4 && x.size() == 4, "gradient and input must be 4-D NCHW");
    const int64_t g = c.v.get_int("group", 1);
    AMPX_CHECK(g >= 1, "attribute 'group' = " + std::to_string(g) + " must be >= 1");
    AMPX_CHECK(x[1] % g == 0 && dy[1] % g == 0,
               "channels must be divisible by group " + std::to_string(g));
    AMPX_CHECK(dy[0] == x[0], "gradient and input batch sizes differ");
    auto k = pair_attr(c, "kernel_shape", {}, 2, true);
    auto s = pair_attr(c, "strides", {1, 1}, 2, true);
    auto p = pair_attr(c, "pads", {0, 0, 0, 0}, 4, false);
    auto d = pair_attr(c, "dilations", {1, 1}, 2, true);
    const int64_t oh = window_out(x[2], k[0], s[0], p[0], p[2], d[0], false);
    const int64_t ow = window_out(x[3], k[1], s[1], p[1], p[3], d[1], false);
    AMPX_CHECK(oh == dy[2] && ow == dy[3], "gradient " + dims_str(dy) +
                                               " does not match the convolution's output [" +
                                               std::to_string(oh) + "x" + std::to_string(ow) + "]");
    std::vector<TensorSpec> out{{in[0].dtype, {dy[1], x[1] / g, k[0], k[1]}}};
    // bias_gradient = 1 adds dB [M], the sum of dY over N, OH, OW: the
    // ReduceSum a biased convolution's gradient needs, made in the same pass
    // (fusion.cpp merges it).
    const int64_t bias = c.v.get_int("bias_gradient", 0);
    AMPX_CHECK(bias == 0 || bias == 1,
               "attribute 'bias_gradient' = " + std::to_string(bias) + " must be 0 or 1");
    if (bias == 1) out.push_back({in[0].dtype, {dy[1]}});
    return out;
  }
  if (op == "MaxPoolGrad") {  // dY, X -> dX
    require_same_dtype(c, in);
    require_float(c, in[0], "gradient");
    same_dims(c, 0, pool_output(c, in[1].dims), "the gradient");
    return like(in[1]);
  }
  if (op == "AveragePoolGrad") {  // dY -> dX [input_shape]
    require_float(c, in[0], "gradient");
    const Dims x = shape_attr(c, "input_shape");
    same_dims(c, 0, pool_output(c, x), "the gradient");
    return std::vector<TensorSpec>{{in[0].dtype, x}};
  }
  if (op == "SliceGrad") {  // dY -> dX [input_shape]
    require_float(c, in[0], "gradient");
    const Dims x = shape_attr(c, "input_shape");
    same_dims(c, 0, slice_output(c, x), "the gradient");
    return std::vector<TensorSpec>{{in[0].dtype, x}};
  }
  if (op == "GatherGrad") {  // dY, indices -> dData [data_shape]
    require_float(c, in[0], "gradient");
    const Dims data = shape_attr(c, "data_shape");
    AMPX_CHECK(!data.empty(), "data_shape must have rank >= 1");
    same_dims(c, 0, gather_output(c, data, in[1]), "the gradient");
    return std::vector<TensorSpec>{{in[0].dtype, data}};
  }
  if (op == "DropoutTraining") {  // X, seed i64 [1] -> Y, mask
    require_float(c, in[0], "input");
    same_dims(c, 1, Dims{1}, "seed");
    AMPX_CHECK(in[1].dtype == AMPX_DTYPE_I64, "seed must be i64");
    (void)unit_interval_attr(c, "ratio", 0.5f);
    return like(in[0], 2);
  }
  if (op == "SoftmaxCrossEntropy") {  // logits [N,C], labels [N] -> loss [], log_prob [N,C]
    require_float(c, in[0], "logits");
    const Dims& x = in[0].dims;
    AMPX_CHECK(x.size() == 2 && x[1] > 0, "logits must be [N, C] with C >= 1, got " + dims_str(x));
    same_dims(c, 1, Dims{x[0]}, "labels");
    AMPX_CHECK(in[1].dtype == AMPX_DTYPE_I64, "labels must be i64");
    return std::vector<TensorSpec>{{in[0].dtype, {}}, in[0]};
  }
  if (op == "SoftmaxCrossEntropyGrad") {  // dLoss [], log_prob [N,C], labels [N] -> dLogits
    require_same_dtype(c, std::span<const TensorSpec>(in).first(2));
    require_float(c, in[1], "log_prob");
    same_dims(c, 0, Dims{}, "the loss gradient");
    const Dims& x = in[1].dims;
    AMPX_CHECK(x.size() == 2 && x[1] > 0,
               "log_prob must be [N, C] with C >= 1, got " + dims_str(x));
    same_dims(c, 2, Dims{x[0]}, "labels");
    AMPX_CHECK(in[2].dtype == AMPX_DTYPE_I64, "labels must be i64");
    return like(in[1]);
  }
  if (op == "SgdUpdate") {  // W, G, hyper [3] (, M) -> W' (, M')
    require_same_dtype(c, in);
    require_float(c, in[0], "weight");
    same_dims(c, 1, in[0].dims, "the gradient");
    same_dims(c, 2, Dims{3}, "hyper (lr, grad_scale, apply)");
    const float momentum = c.v.get_float("momentum", 0.0f);
    AMPX_CHECK(momentum >= 0.0f && momentum < 1.0f, "momentum must be in [0, 1)");
    AMPX_CHECK(c.v.get_float("weight_decay", 0.0f) >= 0.0f, "weight_decay must be >= 0");
    const bool nesterov = flag_attr(c, "nesterov");
    AMPX_CHECK(!nesterov || momentum > 0.0f, "nesterov needs a momentum > 0");
    AMPX_CHECK((c.n == 4) == (momentum > 0.0f),
               "the momentum buffer M is an input exactly when momentum > 0");
    if (c.n == 4) same_dims(c, 3, in[0].dims, "the momentum buffer");
    return like(in[0], static_cast<size_t>(c.n - 2));
  }
  if (op == "AdamUpdate") {  // W, G, M, V, hyper [5] -> W', M', V'
    require_same_dtype(c, in);
    require_float(c, in[0], "weight");
    for (size_t i = 1; i < 4; ++i) same_dims(c, i, in[0].dims, "G, M and V");
    same_dims(c, 4, Dims{5}, "hyper (lr, grad_scale, apply, bias_correction1, bias_correction2)");
    (void)unit_interval_attr(c, "beta1", 0.9f);
    (void)unit_interval_attr(c, "beta2", 0.999f);
    AMPX_CHECK(c.v.get_float("epsilon", 1e-8f) > 0.0f, "epsilon must be > 0");
    AMPX_CHECK(c.v.get_float("weight_decay", 0.0f) >= 0.0f, "weight_decay must be >= 0");
    (void)flag_attr(c, "decoupled");
    return like(in[0], 3);
  }
  if (op == "UpdateGuard") {  // hyper [3 or 5], G1..Gn -> hyper', stats [2]
    require_same_dtype(c, in);
    AMPX_CHECK(in[0].dims == Dims{3} || in[0].dims == Dims{5},
               "hyper must be [3] (SGD) or [5] (Adam), got " + dims_str(in[0].dims));
    for (size_t i = 1; i < in.size(); ++i) require_float(c, in[i], "gradient");
    AMPX_CHECK(c.v.get_float("clip_norm", 0.0f) >= 0.0f, "clip_norm must be >= 0 (0: no clipping)");
    (void)flag_attr(c, "skip_nonfinite");
    return std::vector<TensorSpec>{in[0], {in[0].dtype, Dims{2}}};
  }
  if (is_multi_update(op)) {  // opset/multi_update.hpp
    const bool adam = op == "MultiAdamUpdate";
    const float momentum = adam ? 0.0f : c.v.get_float("momentum", 0.0f);
    const Dims copies = c.v.get_ints("copies");
    const auto l = multi_update_layout(op, in.size(), momentum > 0.0f, copies.size());
    AMPX_CHECK(l.has_value(), std::to_string(in.size()) +
                                  " inputs do not make hyper, W1..Wn, G1..Gn" +
                                  (adam              ? ", M1..Mn, V1..Vn"
                                   : momentum > 0.0f ? ", M1..Mn"
                                                     : "") +
                                  " and " + std::to_string(copies.size()) + " copies");
    const size_t hyper = adam ? 5 : 3;
    AMPX_CHECK(in[0].dtype == AMPX_DTYPE_F32 && in[0].dims == Dims{static_cast<int64_t>(hyper)},
               "hyper must be f32 [" + std::to_string(hyper) + "], got " + dtype_name(in[0].dtype) +
                   " " + dims_str(in[0].dims));
    for (size_t i = 0; i < l->weights; ++i) {
      const TensorSpec& w = in[l->w_in(i)];
      AMPX_CHECK(w.dtype == AMPX_DTYPE_F32, "weight " + std::to_string(i) + " is " +
                                                dtype_name(w.dtype) +
                                                ": master weights and their state are f32");
      AMPX_CHECK(in[l->g_in(i)] == w, "gradient " + std::to_string(i) +
                                          " must be f32 like its weight " + dims_str(w.dims));
      for (size_t s = 0; s < l->states; ++s)
        AMPX_CHECK(in[l->state_in(s, i)] == w, "state " + std::to_string(s) + " of weight " +
                                                   std::to_string(i) + " must be f32 " +
                                                   dims_str(w.dims));
    }
    for (size_t j = 0; j < l->copies; ++j) {
      AMPX_CHECK(copies[j] >= 0 && static_cast<size_t>(copies[j]) < l->weights,
                 "copy " + std::to_string(j) + " names weight " + std::to_string(copies[j]) +
                     ", outside [0, " + std::to_string(l->weights) + ")");
      const TensorSpec& cp = in[l->copy_in(j)];
      AMPX_CHECK((cp.dtype == AMPX_DTYPE_F16 || cp.dtype == AMPX_DTYPE_BF16) &&
                     cp.dims == in[l->w_in(static_cast<size_t>(copies[j]))].dims,
                 "copy " + std::to_string(j) + " must be f16 or bf16 shaped like its weight, got " +
                     dtype_name(cp.dtype) + " " + dims_str(cp.dims));
    }
    if (adam) {
      (void)unit_interval_attr(c, "beta1", 0.9f);
      (void)unit_interval_attr(c, "beta2", 0.999f);
      AMPX_CHECK(c.v.get_float("epsilon", 1e-8f) > 0.0f, "epsilon must be > 0");
      (void)flag_attr(c, "decoupled");
    } else {
      AMPX_CHECK(momentum >= 0.0f && momentum < 1.0f, "momentum must be in [0, 1)");
      const bool nesterov = flag_attr(c, "nesterov");
      AMPX_CHECK(!nesterov || momentum > 0.0f, "nesterov needs a momentum > 0");
    }
    AMPX_CHECK(c.v.get_float("weight_decay", 0.0f) >= 0.0f, "weight_decay must be >= 0");
    AMPX_CHECK(c.v.get_float("clip_norm", 0.0f) >= 0.0f, "clip_norm must be >= 0 (0: no clipping)");
    (void)flag_attr(c, "skip_nonfinite");
    std::vector<TensorSpec> out{in[0], {AMPX_DTYPE_F32, Dims{2}}};
    for (size_t i = 2; i < l->num_outputs(); ++i)
      out.push_back(in[static_cast<size_t>(l->in_place_input(i))]);
    return out;
  }
  if (op == "TensorStats") {  // X1..Xn (each its own float dtype) -> stats f32 [n, 3]
    for (const TensorSpec& x : in) require_float(c, x, "input");
    const float tiny = c.v.get_float("tiny", 0x1p-14f);
    AMPX_CHECK(tiny > 0.0f && std::isfinite(tiny), "tiny must be a positive number");
    return std::vector<TensorSpec>{{AMPX_DTYPE_F32, Dims{static_cast<int64_t>(in.size()), 3}}};
  }
  return std::nullopt;
}

}  // namespace ampx::opset::detail
