// ai.onnx.preview.training's optimizers imported as their element-wise
// update formulas in op-set ops (docs/ONNX.md, "Other domains"), exactly
// as ONNX's reference (onnx/reference/ops/aionnx_preview_training)
// writes them. Inputs: R (the learning rate) and T (the step, int64), then
// the n tensors X, their gradients G and each optimizer's state; outputs:
// the n new X, then the n new states of each kind. Each tensor's update is
// computed in its own float type; the step-dependent factors are computed
// at run time (Where on T > 0), so one plan serves every step.
//   Adagrad   r' = R / (1 + T·decay_factor); g = norm_coefficient·X + G;
//             H' = H + g²; X' = X - r'·g / (√H' + epsilon)
//   Adam      g as above; V' = alpha·V + (1 - alpha)·g;
//             H' = beta·H + (1 - beta)·g²; r' = R·√(1 - beta^T) /
//             (1 - alpha^T) when T > 0, else R;
//             X' = (1 - norm_coefficient_post)·(X - r'·V' / (√H' + epsilon))
//   Momentum  g as above; V' = alpha·V + b·g (b = beta when T > 0, else
//             1); X' = X - R·V' (standard) or X - R·(g + alpha·V')
//             (nesterov)
#include <fmt/format.h>

#include <cstring>
#include <map>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

using N = onnx::NodeProto;

ValueId cast_to(Importer& im, ValueId v, DType dt) {
  if (im.type(v).dtype == dt) return v;
  return im.emit1("Cast", {v}, {{"to", int64_t(to_c(dt))}});
}

ValueId mul(Importer& im, ValueId a, ValueId b) {
  return im.emit1("Mul", {a, b});
}
ValueId add(Importer& im, ValueId a, ValueId b) {
  return im.emit1("Add", {a, b});
}
ValueId sub(Importer& im, ValueId a, ValueId b) {
  return im.emit1("Sub", {a, b});
}
ValueId div(Importer& im, ValueId a, ValueId b) {
  return im.emit1("Div", {a, b});
}

// The optimizer node's inputs: R, T and `groups` runs of n tensors each
// (X, G, then the states), checked: R a float scalar, T an int64 scalar,
// every tensor of a group of its X's float type and shape.
struct Operands {
  ValueId r = kNone, t = kNone;
  int64_t n = 0;
  // tensor(k, i): the i-th tensor of run k (0: X, 1: G, 2...: states).
  std::vector<ValueId> all;
  ValueId tensor(int64_t k, int64_t i) const { return all[static_cast<size_t>(k * n + i)]; }
};

Operands operands(Importer& im, const N& n, int64_t groups, int64_t outputs_per_tensor) {
  Operands o;
  const int64_t tensors = n.input_size() - 2;
  if (tensors < groups || tensors % groups != 0)
    im.fail(fmt::format("takes R, T and {} runs of tensors of one length; it has {} inputs", groups,
                        n.input_size()));
  o.n = tensors / groups;
  if (n.output_size() != o.n * outputs_per_tensor)
    im.fail(fmt::format("has {} outputs; {} tensors give {}", n.output_size(), o.n,
                        o.n * outputs_per_tensor));
  o.r = im.input(n, 0);
  o.t = im.input(n, 1);
  const TensorType rt = im.type(o.r), tt = im.type(o.t);
  if (!is_float(rt.dtype) || element_count(rt.shape) != 1 || rt.shape.size() > 1)
    im.fail(fmt::format("R must be a float scalar, got {} {}", dtype_name(rt.dtype),
                        shape_str(rt.shape)));
  if (tt.dtype != DType::kI64 || element_count(tt.shape) != 1 || tt.shape.size() > 1)
    im.fail(fmt::format("T must be an int64 scalar, got {} {}", dtype_name(tt.dtype),
                        shape_str(tt.shape)));
  for (int i = 2; i < n.input_size(); ++i) o.all.push_back(im.input(n, i));
  for (int64_t i = 0; i < o.n; ++i) {
    const TensorType xt = im.type(o.tensor(0, i));
    if (!is_float(xt.dtype))
      im.fail(fmt::format("input {} ('{}') is {}, expected a float tensor", 2 + i,
                          n.input(static_cast<int>(2 + i)), dtype_name(xt.dtype)));
    for (int64_t k = 1; k < groups; ++k) {
      const int input = static_cast<int>(2 + k * o.n + i);
      if (!(im.type(o.tensor(k, i)) == xt))
        im.fail(fmt::format(
            "input {} ('{}') is {} {}, but its X ('{}') is {} {}", input, n.input(input),
            dtype_name(im.type(o.tensor(k, i)).dtype), shape_str(im.type(o.tensor(k, i)).shape),
            n.input(static_cast<int>(2 + i)), dtype_name(xt.dtype), shape_str(xt.shape)));
    }
  }
  return o;
}

// A value computed once per float type that the node's tensors have.
template <typename F>
ValueId per_dtype(std::map<DType, ValueId>& cache, DType dt, F make) {
  const auto it = cache.find(dt);
  if (it != cache.end()) return it->second;
  return cache[dt] = make();
}

// T > 0, a bool scalar (every optimizer's first step differs).
ValueId after_first_step(Importer& im, const Operands& o) {
  const std::vector<int64_t> zero{0};
  return im.emit1("Greater", {o.t, im.constant_i64(zero, im.type(o.t).shape)});
}

// norm_coefficient·X + G.
ValueId regularized(Importer& im, const Operands& o, int64_t i, double norm) {
  const ValueId x = o.tensor(0, i);
  const DType dt = im.type(x).dtype;
  return add(im, mul(im, cast_scalar(im, dt, norm), x), o.tensor(1, i));
}

}  // namespace

void adagrad(Importer& im, const N& n) {
  const Operands o = operands(im, n, 3, 2);
  const double decay = im.attr_float_or(n, "decay_factor", 0.0F);
  const double eps = im.attr_float_or(n, "epsilon", 0.0F);
  const double norm = im.attr_float_or(n, "norm_coefficient", 0.0F);
  std::map<DType, ValueId> rates;
  for (int64_t i = 0; i < o.n; ++i) {
    const ValueId x = o.tensor(0, i), h = o.tensor(2, i);
    const DType dt = im.type(x).dtype;
    const ValueId rate = per_dtype(rates, dt, [&] {
      const ValueId t = cast_to(im, o.t, dt);
      const ValueId denom =
          add(im, cast_scalar(im, dt, 1.0), mul(im, t, cast_scalar(im, dt, decay)));
      return div(im, cast_to(im, o.r, dt), denom);
    });
    const ValueId g = regularized(im, o, i, norm);
    const ValueId h_new = add(im, h, mul(im, g, g));
    const ValueId h_sqrt = add(im, im.emit1("Sqrt", {h_new}), cast_scalar(im, dt, eps));
    im.bind(n, static_cast<int>(i), sub(im, x, div(im, mul(im, rate, g), h_sqrt)));
    im.bind(n, static_cast<int>(o.n + i), h_new);
  }
}

void adam(Importer& im, const N& n) {
  const Operands o = operands(im, n, 4, 3);
  const double alpha = im.attr_float_or(n, "alpha", 0.9F);
  const double beta = im.attr_float_or(n, "beta", 0.999F);
  const double eps = im.attr_float_or(n, "epsilon", 0.0F);
  const double norm = im.attr_float_or(n, "norm_coefficient", 0.0F);
  const double post = im.attr_float_or(n, "norm_coefficient_post", 0.0F);
  const ValueId later = after_first_step(im, o);
  std::map<DType, ValueId> rates;
  for (int64_t i = 0; i < o.n; ++i) {
    const ValueId x = o.tensor(0, i), v = o.tensor(2, i), h = o.tensor(3, i);
    const DType dt = im.type(x).dtype;
    // R·√(1 - beta^T) / (1 - alpha^T) from the second step on; R at the
    // first, where that is 0/0 (Where picks R, the NaN is not read).
    const ValueId rate = per_dtype(rates, dt, [&] {
      const ValueId r = cast_to(im, o.r, dt), t = cast_to(im, o.t, dt);
      const ValueId one = cast_scalar(im, dt, 1.0);
      const ValueId beta_t = im.emit1("Pow", {cast_scalar(im, dt, beta), t});
      const ValueId alpha_t = im.emit1("Pow", {cast_scalar(im, dt, alpha), t});
      const ValueId corrected =
          div(im, mul(im, r, im.emit1("Sqrt", {sub(im, one, beta_t)})), sub(im, one, alpha_t));
      return im.emit1("Where", {later, corrected, r});
    });
    const ValueId g = regularized(im, o, i, norm);
    const ValueId v_new = add(im, mul(im, cast_scalar(im, dt, alpha), v),
                              mul(im, cast_scalar(im, dt, 1.0 - alpha), g));
    const ValueId h_new = add(im, mul(im, cast_scalar(im, dt, beta), h),
                              mul(im, cast_scalar(im, dt, 1.0 - beta), mul(im, g, g)));
    const ValueId h_sqrt = add(im, im.emit1("Sqrt", {h_new}), cast_scalar(im, dt, eps));
    const ValueId x_new = sub(im, x, mul(im, rate, div(im, v_new, h_sqrt)));
    im.bind(n, static_cast<int>(i), mul(im, cast_scalar(im, dt, 1.0 - post), x_new));
    im.bind(n, static_cast<int>(o.n + i), v_new);
    im.bind(n, static_cast<int>(2 * o.n + i), h_new);
  }
}

void momentum(Importer& im, const N& n) {
  const Operands o = operands(im, n, 3, 2);
  const auto alpha = im.attr_float(n, "alpha"), beta = im.attr_float(n, "beta"),
             norm = im.attr_float(n, "norm_coefficient");
  const auto mode = im.attr_string(n, "mode");
  if (!alpha || !beta || !norm || !mode)
    im.fail("attributes 'alpha', 'beta', 'mode' and 'norm_coefficient' are required");
  if (*mode != "standard" && *mode != "nesterov")
    im.fail(fmt::format("mode '{}' is not 'standard' or 'nesterov'", *mode));
  const ValueId later = after_first_step(im, o);
  std::map<DType, ValueId> betas, rates;
  for (int64_t i = 0; i < o.n; ++i) {
    const ValueId x = o.tensor(0, i), v = o.tensor(2, i);
    const DType dt = im.type(x).dtype;
    // The gradient's coefficient is 1 at the first step.
    const ValueId b = per_dtype(betas, dt, [&] {
      return im.emit1("Where", {later, cast_scalar(im, dt, *beta), cast_scalar(im, dt, 1.0)});
    });
    const ValueId r = per_dtype(rates, dt, [&] { return cast_to(im, o.r, dt); });
    const ValueId g = regularized(im, o, i, *norm);
    const ValueId a = cast_scalar(im, dt, *alpha);
    const ValueId v_new = add(im, mul(im, a, v), mul(im, b, g));
    const ValueId step = *mode == "standard" ? v_new : add(im, g, mul(im, a, v_new));
    im.bind(n, static_cast<int>(i), sub(im, x, mul(im, r, step)));
    im.bind(n, static_cast<int>(o.n + i), v_new);
  }
}

}  // namespace ampx::onnx_io
