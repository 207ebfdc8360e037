// Output types of the elementwise and comparison ops.
#include <algorithm>
#include <limits>
#include <numeric>

#include "infer_common.hpp"

namespace ampx::opset::detail {

namespace {
// Sin ... Atanh: float in, float out, IEEE (NaN outside the domain).
bool is_trigonometric(std::string_view op) {
  for (std::string_view o :
       {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"})
    if (op == o) return true;
  return false;
}
}  // namespace

Outputs infer_elementwise(const Node& c, std::string_view op) {
  const auto& in = c.in;
  const TensorSpec& x = in[0];
  if (op == "Clip") {
    require_float(c, x, "input");
    const double lo = c.v.get_float("min", -std::numeric_limits<double>::infinity());
    const double hi = c.v.get_float("max", std::numeric_limits<double>::infinity());
    AMPX_CHECK(lo <= hi, "min must not exceed max");
    return std::vector<TensorSpec>{x};
  }
  if (op == "Gelu") {
    require_float(c, x, "input");
    const auto mode = c.v.get_string("approximate", "none");
    AMPX_CHECK(mode == "none" || mode == "tanh",
               "attribute 'approximate' must be 'none' or 'tanh', got '" + mode + "'");
    return std::vector<TensorSpec>{x};
  }
  if (op == "Dropout") return std::vector<TensorSpec>{x};  // data movement: any dtype
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh") {
    require_float(c, x, "input");
    return std::vector<TensorSpec>{x};
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    require_same_dtype(c, in);
    auto s = broadcast_shapes(in[0].dims, in[1].dims);
    AMPX_CHECK(s.has_value(), "shapes " + dims_str(in[0].dims) + " and " + dims_str(in[1].dims) +
                                  " do not broadcast");
    return std::vector<TensorSpec>{{x.dtype, *s}};
  }
  if (op == "LeakyRelu" || op == "HardSigmoid" || op == "HardSwish" || op == "Erf" ||
      op == "Sqrt" || op == "Reciprocal" || op == "Exp" || op == "Log") {
    require_float(c, x, "input");
    return std::vector<TensorSpec>{x};
  }
  if (op == "Floor" || op == "Ceil" || op == "Round" || op == "Softplus" || op == "Mish" ||
      is_trigonometric(op)) {
    require_float(c, x, "input");
    return std::vector<TensorSpec>{x};
  }
  if (op == "Neg" || op == "Abs") {
    AMPX_CHECK(is_float_dtype(x.dtype) || plugin_support::is_integer_dtype(x.dtype),
               "input must be a float or an integer, got " + std::string(dtype_name(x.dtype)));
    return std::vector<TensorSpec>{x};
  }
  if (op == "PRelu") {
    require_same_dtype(c, in);
    require_float(c, x, "input");
    auto s = broadcast_shapes(x.dims, in[1].dims);
    AMPX_CHECK(s && *s == x.dims, "slope " + dims_str(in[1].dims) +
                                      " does not broadcast to the input " + dims_str(x.dims));
    return std::vector<TensorSpec>{x};
  }
  if (op == "Pow") {
    require_same_dtype(c, in);
    require_float(c, x, "input");
    auto s = broadcast_shapes(in[0].dims, in[1].dims);
    AMPX_CHECK(s.has_value(), "shapes " + dims_str(in[0].dims) + " and " + dims_str(in[1].dims) +
                                  " do not broadcast");
    return std::vector<TensorSpec>{{x.dtype, *s}};
  }
  if (op == "BitShift" || op == "BitwiseAnd" || op == "BitwiseOr" || op == "BitwiseXor") {
    require_same_dtype(c, in);
    AMPX_CHECK(plugin_support::is_integer_dtype(x.dtype),
               "inputs must be integers, got " + std::string(dtype_name(x.dtype)));
    if (op == "BitShift") {
      const std::string dir = c.v.get_string("direction", "");
      AMPX_CHECK(dir == "LEFT" || dir == "RIGHT",
                 "attribute 'direction' must be LEFT or RIGHT, got '" + dir + "'");
    }
    auto s = broadcast_shapes(in[0].dims, in[1].dims);
    AMPX_CHECK(s.has_value(), "shapes " + dims_str(in[0].dims) + " and " + dims_str(in[1].dims) +
                                  " do not broadcast");
    return std::vector<TensorSpec>{{x.dtype, *s}};
  }
  if (op == "BitwiseNot") {
    AMPX_CHECK(plugin_support::is_integer_dtype(x.dtype),
               "input must be an integer, got " + std::string(dtype_name(x.dtype)));
    return std::vector<TensorSpec>{x};
  }
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
      op == "GreaterOrEqual") {
    require_same_dtype(c, in);
    auto s = broadcast_shapes(in[0].dims, in[1].dims);
    AMPX_CHECK(s.has_value(), "shapes " + dims_str(in[0].dims) + " and " + dims_str(in[1].dims) +
                                  " do not broadcast");
    return std::vector<TensorSpec>{{AMPX_DTYPE_BOOL, *s}};
  }
  if (op == "Where") {
    AMPX_CHECK(x.dtype == AMPX_DTYPE_BOOL,
               "condition must be bool, got " + std::string(dtype_name(x.dtype)));
    AMPX_CHECK(in[1].dtype == in[2].dtype, "X is " + std::string(dtype_name(in[1].dtype)) +
                                               " but Y is " + std::string(dtype_name(in[2].dtype)));
    auto s = broadcast_shapes(in[0].dims, in[1].dims);
    if (s) s = broadcast_shapes(*s, in[2].dims);
    AMPX_CHECK(s.has_value(), "shapes " + dims_str(in[0].dims) + ", " + dims_str(in[1].dims) +
                                  " and " + dims_str(in[2].dims) + " do not broadcast");
    return std::vector<TensorSpec>{{in[1].dtype, *s}};
  }
  if (op == "Not") {
    AMPX_CHECK(x.dtype == AMPX_DTYPE_BOOL,
               "input must be bool, got " + std::string(dtype_name(x.dtype)));
    return std::vector<TensorSpec>{x};
  }
  if (op == "And" || op == "Or") {
    for (const TensorSpec& t : in)
      AMPX_CHECK(t.dtype == AMPX_DTYPE_BOOL,
                 "inputs must be bool, got " + std::string(dtype_name(t.dtype)));
    auto s = broadcast_shapes(in[0].dims, in[1].dims);
    AMPX_CHECK(s.has_value(), "shapes " + dims_str(in[0].dims) + " and " + dims_str(in[1].dims) +
                                  " do not broadcast");
    return std::vector<TensorSpec>{{AMPX_DTYPE_BOOL, *s}};
  }
  if (op == "Min" || op == "Max" || op == "Sum" || op == "Mean") {
    require_same_dtype(c, in);
    if (op == "Sum" || op == "Mean")
      require_float(c, x, "input");
    else
      AMPX_CHECK(is_float_dtype(x.dtype) || plugin_support::is_integer_dtype(x.dtype),
                 "inputs must be float or integer, got " + std::string(dtype_name(x.dtype)));
    std::optional<Dims> s = x.dims;
    for (size_t i = 1; i < in.size() && s; ++i) s = broadcast_shapes(*s, in[i].dims);
    if (!s) {
      std::string shapes;
      for (const TensorSpec& t : in) shapes += (shapes.empty() ? "" : ", ") + dims_str(t.dims);
      c.fail("shapes " + shapes + " do not broadcast");
    }
    return std::vector<TensorSpec>{{x.dtype, *s}};
  }
  return std::nullopt;
}

}  // namespace ampx::opset::detail
