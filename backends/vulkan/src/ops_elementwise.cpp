// Relu, Sigmoid, Tanh, Gelu, Clip (unary.comp); Add, Sub, Mul, Div with
// broadcasting (binary.comp); Softmax (softmax.comp).
#include <limits>

#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

std::string sh(const char* name, Variant var) {
  return std::string(name) + "." + variant_suffix(var);
}

}  // namespace

OpPlan plan_unary(const NodeView& v, Variant var) {
  const std::string_view op = v.op_type();
  uint32_t code = 0;
  double lo = -std::numeric_limits<double>::infinity(), hi = -lo;
  if (op == "Relu")
    code = 0;
  else if (op == "Sigmoid")
    code = 1;
  else if (op == "Tanh")
    code = 2;
  else if (op == "Gelu")
    code = v.get_string("approximate", "none") == "tanh" ? 4 : 3;
  else if (op == "Clip") {
    code = 5;
    lo = v.get_float("min", lo);
    hi = v.get_float("max", hi);
  } else {
    throw Unsupported("no unary kernel for " + std::string(op));
  }
  const uint32_t es = elem_bytes(v.input(0).dtype);
  const int64_t n = numel(dims_of(v.input(0)));
  Dispatch d = linear_dispatch(sh("unary", var), static_cast<uint64_t>(n));
  d.spec = {code};
  d.params = {i32(n), float_bits(lo), float_bits(hi)};
  d.tensors = {in_ref(0, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_binary(const NodeView& v, Variant var) {
  const std::string_view op = v.op_type();
  const uint32_t code = op == "Add" ? 0 : op == "Sub" ? 1 : op == "Mul" ? 2 : 3;
  const auto y = dims_of(v.output(0));
  const size_t rank = y.size();
  // Strides of an input broadcast to y's shape: 0 along repeated dims.
  auto bstrides = [&](const ampx_tensor_desc& t) {
    const auto d = dims_of(t);
    const auto s = strides_of(d);
    std::vector<int32_t> out(rank, 0);
    for (size_t i = 0; i < d.size(); ++i) {
      const size_t k = rank - d.size() + i;
      out[k] = d[i] == 1 ? 0 : i32(s[i]);
    }
    return out;
  };
  const uint32_t es = elem_bytes(v.input(0).dtype);
  const int64_t n = numel(y);
  Dispatch d = linear_dispatch(sh("binary", var), static_cast<uint64_t>(n));
  d.spec = {code};
  d.params = {i32(n), static_cast<int32_t>(rank)};
  for (int64_t x : y) d.params.push_back(i32(x));
  const auto sa = bstrides(v.input(0)), sb = bstrides(v.input(1));
  d.params.insert(d.params.end(), sa.begin(), sa.end());
  d.params.insert(d.params.end(), sb.begin(), sb.end());
  d.tensors = {in_ref(0, es), in_ref(1, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_softmax(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0));
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = v.get_int("axis", -1);
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x[static_cast<size_t>(i)];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= x[static_cast<size_t>(i)];
  const int64_t L = x[static_cast<size_t>(axis)];
  const uint32_t es = elem_bytes(v.input(0).dtype);
  // One workgroup per row.
  Dispatch d = linear_dispatch(sh("softmax", var), static_cast<uint64_t>(outer * inner), 1);
  d.params = {i32(outer * inner), i32(L), i32(inner)};
  i32(numel(x));
  d.tensors = {in_ref(0, es), out_ref(0, es)};
  return {{d}};
}

}  // namespace ampx::vulkan
