// The unary elementwise ops (unary.comp); Add, Sub, Mul, Div, Pow, PRelu
// (binary.comp), Min, Max, Sum, Mean (variadic.comp), Equal, Less, Greater,
// LessOrEqual, GreaterOrEqual, And, Or, Not (equal.comp) and Where
// (where.comp) with broadcasting (broadcast.glsl); the bit ops (bitwise.comp);
// Softmax and LogSoftmax (softmax.comp).
#include <iterator>
#include <limits>
#include <string_view>

#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

std::string sh(const char* name, Variant var) {
  return std::string(name) + "." + variant_suffix(var);
}

// broadcast.glsl's parameters: n, rank, the output dims, then for each
// input its element strides aligned right against the output, 0 along the
// dims it repeats (a missing leading dim or a 1). `inputs` lists the node's
// inputs in the kernel's order (default: all of them, in order). Output dims
// of 1 are dropped and neighbouring dims merged where every input is
// contiguous across them (as cpu_ref's broadcast plan), so a same-shape or
// trailing-bias operation costs the kernel one or two divisions per element
// instead of one per dim (they are slow on CPU drivers).
std::vector<int32_t> broadcast_params(const NodeView& v, std::vector<size_t> inputs = {}) {
  if (inputs.empty())
    for (size_t k = 0; k < v.num_inputs(); ++k) inputs.push_back(k);
  const auto y = dims_of(v.output(0));
  const size_t rank = y.size();
  std::vector<std::vector<int64_t>> full;  // per input, strides against y
  for (size_t k : inputs) {
    const auto d = dims_of(v.input(k));
    const auto s = strides_of(d);
    std::vector<int64_t> out(rank, 0);
    for (size_t i = 0; i < d.size(); ++i) out[rank - d.size() + i] = d[i] == 1 ? 0 : s[i];
    full.push_back(std::move(out));
  }
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> str(full.size());
  for (size_t i = 0; i < rank; ++i) {
    if (y[i] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; k < full.size() && merge; ++k) merge = str[k].back() == full[k][i] * y[i];
    if (merge) {
      dims.back() *= y[i];
      for (size_t k = 0; k < full.size(); ++k) str[k].back() = full[k][i];
    } else {
      dims.push_back(y[i]);
      for (size_t k = 0; k < full.size(); ++k) str[k].push_back(full[k][i]);
    }
  }
  std::vector<int32_t> p = {i32(numel(y)), static_cast<int32_t>(dims.size())};
  for (int64_t x : dims) p.push_back(i32(x));
  for (const auto& sk : str)
    for (int64_t x : sk) p.push_back(i32(x));
  return p;
}

// unary.comp's codes of the ops without attributes from Erf on (0: none).
uint32_t simple_unary_code(std::string_view op) {
  constexpr std::string_view kOps[] = {"Erf",  "Sqrt",  "Reciprocal", "Exp",   "Log",      "Neg",
                                       "Abs",  "Floor", "Ceil",       "Round", "Softplus", "Mish",
                                       "Sin",  "Cos",   "Tan",        "Asin",  "Acos",     "Atan",
                                       "Sinh", "Cosh",  "Asinh",      "Acosh", "Atanh"};
  for (uint32_t k = 0; k < std::size(kOps); ++k)
    if (op == kOps[k]) return 9 + k;
  return 0;
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
  } else if (op == "HardSigmoid") {
    code = 6;  // the two parameters carry alpha and beta
    lo = v.get_float("alpha", 0.2);
    hi = v.get_float("beta", 0.5);
  } else if (op == "HardSwish") {
    code = 7;
  } else if (op == "LeakyRelu") {
    code = 8;
    lo = v.get_float("alpha", 0.01);
  } else if (const uint32_t c = simple_unary_code(op)) {
    code = c;
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
  const uint32_t code = op == "Add"                 ? 0
                        : op == "Sub"               ? 1
                        : op == "Mul"               ? 2
                        : op == "Div"               ? 3
                        : op == "Pow"               ? 4
                        : op == "PRelu"             ? 5
                        : v.get_int("fmod", 0) != 0 ? 6   // Mod: C's fmod
                                                    : 7;  // Mod: floored (ONNX Mod 28)
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d =
      linear_dispatch(sh("binary", var), static_cast<uint64_t>(numel(dims_of(v.output(0)))));
  d.spec = {code};
  d.params = broadcast_params(v);
  d.tensors = {in_ref(0, es), in_ref(1, es), out_ref(0, es)};
  return {{d}};
}

// Min, Max, Sum, Mean over up to 7 inputs (a dispatch binds 8 tensors);
// float only (integer Min/Max: no kernel).
OpPlan plan_variadic(const NodeView& v, Variant var) {
  const std::string_view op = v.op_type();
  const size_t k = v.num_inputs();
  if (k > 7) throw Unsupported(std::string(op) + " of more than 7 inputs: no kernel");
  const uint32_t code = op == "Min" ? 0 : op == "Max" ? 1 : op == "Sum" ? 2 : 3;
  const uint32_t es = elem_bytes(v.output(0).dtype);
  Dispatch d =
      linear_dispatch(sh("variadic", var), static_cast<uint64_t>(numel(dims_of(v.output(0)))));
  d.spec = {code, static_cast<uint32_t>(k)};
  d.params = broadcast_params(v);
  for (uint32_t i = 0; i < 7; ++i) d.tensors.push_back(in_ref(i < k ? i : 0, es));
  d.tensors.push_back(out_ref(0, es));
  return {{d}};
}

// i64/i32 Add, Sub, Mul, Div, Mod, Min, Max (1 or 2 inputs), Neg, Abs on
// raw words (iarith.comp).
OpPlan plan_int_arith(const NodeView& v, const PlanTarget& t) {
  const std::string_view op = v.op_type();
  const ampx_dtype dt = v.output(0).dtype;
  const ElemStorage es = elem_storage(dt, t);
  if (v.num_inputs() > 2)
    throw Unsupported(std::string(op) + " of more than 2 integer inputs: no kernel");
  constexpr std::string_view kOps[] = {"Add", "Sub", "Mul", "Div", "Min", "Max", "Neg", "Abs"};
  uint32_t code = 0;
  while (code < std::size(kOps) && kOps[code] != op) ++code;
  if (op == "Mod")
    code = v.get_int("fmod", 0) != 0 ? 8 : 9;
  else if (code == std::size(kOps))
    throw Unsupported("no integer kernel for " + std::string(op));
  const bool unary = v.num_inputs() == 1;  // B is A again
  Dispatch d =
      linear_dispatch("iarith." + es.suffix, static_cast<uint64_t>(numel(dims_of(v.output(0)))));
  d.spec = {es.words, code};
  d.params = unary ? broadcast_params(v, {0, 0}) : broadcast_params(v);
  for (size_t k = 0; k < v.num_inputs(); ++k) i32(numel(dims_of(v.input(k))) * es.words);
  i32(numel(dims_of(v.output(0))) * es.words);
  d.tensors = {in_ref(0, es.bytes), in_ref(unary ? 0 : 1, es.bytes), out_ref(0, es.bytes)};
  return {{d}};
}

// BitShift, BitwiseAnd/Or/Xor (broadcast), BitwiseNot on raw words (i32, i64)
// or bytes (i8, u8: 8-bit storage) in bitwise.comp. The other integer types
// have no storage here (elem_storage throws their reason).
OpPlan plan_bitwise(const NodeView& v, const PlanTarget& t) {
  const std::string_view op = v.op_type();
  const ampx_dtype dt = v.output(0).dtype;
  const ElemStorage es = elem_storage(dt, t);
  if (dt != AMPX_DTYPE_I64 && dt != AMPX_DTYPE_I32 && dt != AMPX_DTYPE_I8 && dt != AMPX_DTYPE_U8)
    throw Unsupported(std::string(op) + " on " + plugin_support::dtype_name(dt) + ": no kernel");
  // bitwise.comp's OP; BitShift's direction was validated (LEFT or RIGHT).
  const uint32_t code = op == "BitwiseAnd"                        ? 0
                        : op == "BitwiseOr"                       ? 1
                        : op == "BitwiseXor"                      ? 2
                        : op == "BitwiseNot"                      ? 3
                        : v.get_string("direction", "") == "LEFT" ? 4
                                                                  : 5;
  const bool unary = v.num_inputs() == 1;  // Not: B is A again, unread
  Dispatch d =
      linear_dispatch("bitwise." + es.suffix, static_cast<uint64_t>(numel(dims_of(v.output(0)))));
  d.spec = {es.words, code, plugin_support::is_unsigned_dtype(dt) ? 0u : 1u};
  d.params = unary ? broadcast_params(v, {0, 0}) : broadcast_params(v);
  for (size_t k = 0; k < v.num_inputs(); ++k) i32(numel(dims_of(v.input(k))) * es.words);
  i32(numel(dims_of(v.output(0))) * es.words);  // word indices
  d.tensors = {in_ref(0, es.bytes), in_ref(unary ? 0 : 1, es.bytes), out_ref(0, es.bytes)};
  return {{d}};
}

// Equal, Less, Greater, LessOrEqual, GreaterOrEqual (f32/f16, i64/i32), And,
// Or, Not (bool). The result is bool, so the kernel needs 8-bit storage
// whatever A and B are.
OpPlan plan_equal(const NodeView& v, const PlanTarget& t) {
  const std::string_view op = v.op_type();
  const ampx_dtype dt = v.input(0).dtype;
  if (dt == AMPX_DTYPE_F64)
    throw Unsupported(std::string(op) + " on f64: no f64 arithmetic in the Vulkan kernels");
  const ElemStorage es = elem_storage(dt, t);
  const bool logic = op == "And" || op == "Or" || op == "Not";
  if ((es.suffix == "u8") != logic)
    throw Unsupported(std::string(op) + " on " + plugin_support::dtype_name(dt) + ": no kernel");
  const uint32_t code = op == "Equal"            ? 0
                        : op == "Less"           ? 1
                        : op == "Greater"        ? 2
                        : op == "LessOrEqual"    ? 3
                        : op == "GreaterOrEqual" ? 4
                        : op == "And"            ? 5
                        : op == "Or"             ? 6
                                                 : 7;  // Not
  const ElemStorage out = elem_storage(AMPX_DTYPE_BOOL, t);
  Dispatch d =
      linear_dispatch("equal." + es.suffix, static_cast<uint64_t>(numel(dims_of(v.output(0)))));
  d.spec = {es.words, code};
  const bool unary = v.num_inputs() == 1;  // Not: B is A again, unread
  d.params = unary ? broadcast_params(v, {0, 0}) : broadcast_params(v);
  for (size_t k = 0; k < v.num_inputs(); ++k)
    i32(numel(dims_of(v.input(k))) * es.words);  // word indices
  d.tensors = {in_ref(0, es.bytes), in_ref(unary ? 0 : 1, es.bytes), out_ref(0, out.bytes)};
  OpPlan p{{d}};
  p.variant = es.variant;
  return p;
}

// Selection only: X, Y and Z move bit-exactly in any dtype elem_storage() has
// words for; the bool condition needs 8-bit storage.
OpPlan plan_where(const NodeView& v, const PlanTarget& t) {
  const ElemStorage cond = elem_storage(v.input(0).dtype, t);
  const ElemStorage es = elem_storage(v.output(0).dtype, t);
  if (es.suffix == "u8") throw Unsupported("Where on byte tensors: no kernel");
  Dispatch d =
      linear_dispatch("where." + es.suffix, static_cast<uint64_t>(numel(dims_of(v.output(0)))));
  d.spec = {es.words};
  d.params = broadcast_params(v);
  for (size_t k = 1; k < 3; ++k) i32(numel(dims_of(v.input(k))) * es.words);  // word indices
  i32(numel(dims_of(v.output(0))) * es.words);
  d.tensors = {in_ref(0, cond.bytes), in_ref(1, es.bytes), in_ref(2, es.bytes),
               out_ref(0, es.bytes)};
  OpPlan p{{d}};
  p.variant = es.variant;
  return p;
}

OpPlan plan_softmax(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0));
  const auto [outer, L, inner] = split_at_axis(x, v.get_int("axis", -1));
  const uint32_t es = elem_bytes(v.input(0).dtype);
  // One workgroup per row.
  Dispatch d = linear_dispatch(sh("softmax", var), static_cast<uint64_t>(outer * inner), 1);
  d.spec = {v.op_type() == "LogSoftmax" ? 1u : 0u};
  d.params = {i32(outer * inner), i32(L), i32(inner)};
  // Max, sum and write passes, each strided over the row by 64 invocations.
  d.loop_iterations = 3 * loop_passes(strided_trips(L, 64));
  i32(numel(x));
  d.tensors = {in_ref(0, es), out_ref(0, es)};
  return {{d}};
}

}  // namespace ampx::vulkan
