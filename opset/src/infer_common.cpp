#include "infer_common.hpp"

#include "ampx/opset/activation.hpp"

namespace ampx::opset::detail {

Node::Node(const NodeView& view) : v(view) {
  for (size_t i = 0; i < v.num_inputs(); ++i) {
    const ampx_tensor_desc& t = v.input(i);
    in.push_back({t.dtype, Dims(t.dims, t.dims + t.rank)});
  }
  n = static_cast<int>(in.size());
}

int64_t normalize_axis(const Node& c, int64_t axis, int64_t rank, const char* what) {
  const int64_t a = axis < 0 && axis >= -rank ? axis + rank : axis;
  AMPX_CHECK(a >= 0 && a < rank, std::string(what) + " " + std::to_string(axis) +
                                     " is out of range for rank " + std::to_string(rank));
  return a;
}

Dims pair_attr(const Node& c, const char* name, Dims def, size_t n, bool positive) {
  Dims v = c.v.get_ints(name, std::move(def));
  AMPX_CHECK(v.size() == n, std::string("attribute '") + name + "' must have " + std::to_string(n) +
                                " values, got " + std::to_string(v.size()));
  for (int64_t x : v)
    AMPX_CHECK(positive ? x > 0 : x >= 0,
               std::string("attribute '") + name + "' has invalid value " + std::to_string(x));
  return v;
}

bool flag_attr(const Node& c, const char* name) {
  const int64_t v = c.v.get_int(name, 0);
  AMPX_CHECK(v == 0 || v == 1,
             std::string("attribute '") + name + "' must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

void check_epsilon(const Node& c) {
  const double eps = c.v.get_float("epsilon", 1e-5);
  AMPX_CHECK(eps >= 0, "attribute 'epsilon' must be >= 0, got " + std::to_string(eps));
}

void require_float(const Node& c, const TensorSpec& t, const char* what) {
  AMPX_CHECK(is_float_dtype(t.dtype),
             std::string(what) + " must be floating point, got " + dtype_name(t.dtype));
}

void require_same_dtype(const Node& c, std::span<const TensorSpec> ins) {
  for (size_t i = 1; i < ins.size(); ++i)
    AMPX_CHECK(ins[i].dtype == ins[0].dtype, "input " + std::to_string(i) + " has dtype " +
                                                 dtype_name(ins[i].dtype) + " but input 0 has " +
                                                 dtype_name(ins[0].dtype));
}

void check_activation(const Node& c) {
  const std::string act = c.v.get_string("activation", "none");
  // A name outside the op set is one this op set has no kernel for (a newer
  // host's epilogue): unsupported, so the node falls back, not malformed.
  if (!is_activation_name(act))
    throw UnsupportedNode(c.v.where() + ": activation '" + act + "' is not one of " +
                          activation_names_list());
}

int64_t checked_count(const Node& c, const Dims& dims) {
  try {
    return plugin_support::element_count(dims.data(), static_cast<int32_t>(dims.size()));
  } catch (const std::invalid_argument& e) {
    c.fail(e.what());
  }
}

}  // namespace ampx::opset::detail
