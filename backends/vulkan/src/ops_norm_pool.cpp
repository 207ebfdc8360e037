// LayerNorm and RMSNorm, BatchNorm, MaxPool/AveragePool, GlobalAveragePool, the
// reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL2, ReduceSumSquare, ReduceLogSumExp) and ArgMax/ArgMin.
#include <algorithm>
#include <iterator>
#include <string_view>

#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

std::string sh(const char* name, Variant var) {
  return std::string(name) + "." + variant_suffix(var);
}

// Reduction of x over `axes` (sorted, distinct, non-negative); `code` is
// reduce.comp's OP. One dispatch (a thread per output walks its reduced
// elements) unless that walk would pass the driver's loop budget: then a
// partial pass (a thread per output and chunk, into the scratch buffer) and
// a final pass combining each output's chunks in order.
OpPlan reduce_plan(const NodeView& v, Variant var, const std::vector<int64_t>& axes, uint32_t code,
                   const PlanTarget& t) {
  const auto x = dims_of(v.input(0));
  const auto s = strides_of(x);
  std::vector<int32_t> kd, ks, rd, rs;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool red = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    (red ? rd : kd).push_back(i32(x[i]));
    (red ? rs : ks).push_back(i32(s[i]));
  }
  int64_t outs = 1, count = 1;
  for (int32_t d : kd) outs *= d;
  for (int32_t d : rd) count *= d;
  const uint32_t es = elem_bytes(v.input(0).dtype);
  std::vector<int32_t> params = {i32(outs), i32(count), static_cast<int32_t>(kd.size()),
                                 static_cast<int32_t>(rd.size())};
  for (const auto* part : {&kd, &ks, &rd, &rs})
    params.insert(params.end(), part->begin(), part->end());
  // Passes per reduced element: the element loop's and at()'s loop over the
  // reduced dims (nr iterations and its exit); log-sum-exp walks twice.
  const uint64_t per_elem = rd.size() + 1;
  const uint64_t walks = code == 7 ? 2 : 1;
  const uint64_t whole = walks * loop_passes(count, per_elem);
  if (t.loop_budget == 0 || whole <= t.loop_budget) {
    Dispatch d = linear_dispatch(sh("reduce", var), static_cast<uint64_t>(outs));
    d.spec = {code, 0};
    d.params = std::move(params);
    d.loop_iterations = whole;
    d.tensors = {in_ref(0, es), out_ref(0, es), in_ref(0, es)};
    return {{d}};
  }
  // Chunks that use at most half the budget; the final pass walks their
  // partials (plan_node() declines it if even that is too long).
  const auto chunk =
      static_cast<int64_t>(std::max<uint64_t>(1, (t.loop_budget / 2 / walks - 1) / (per_elem + 1)));
  const int64_t chunks = (count + chunk - 1) / chunk;
  params.push_back(i32(chunk));
  params.push_back(i32(chunks));
  OpPlan plan;
  Dispatch part = linear_dispatch(sh("reduce", var), static_cast<uint64_t>(outs * chunks));
  part.spec = {code, 1};
  part.params = params;
  part.loop_iterations = walks * loop_passes(chunk, per_elem);
  part.tensors = {in_ref(0, es), out_ref(0, es), scratch_ref()};
  Dispatch fin = linear_dispatch(sh("reduce", var), static_cast<uint64_t>(outs));
  fin.spec = {code, 2};
  fin.params = std::move(params);
  fin.loop_iterations = walks * loop_passes(chunks);
  fin.tensors = {in_ref(0, es), out_ref(0, es), scratch_ref()};
  plan.dispatches = {std::move(part), std::move(fin)};
  plan.scratch_bytes = static_cast<uint64_t>(i32(2 * outs * chunks)) * 4;
  return plan;
}

}  // namespace

OpPlan plan_layernorm(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0));
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = v.get_int("axis", -1);
  if (axis < 0) axis += rank;
  int64_t rows = 1, L = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : L) *= x[static_cast<size_t>(i)];
  const bool has_bias = v.num_inputs() > 2;
  const bool rms = v.op_type() == "RMSNorm";  // layernorm.comp with the mean taken as 0
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d = linear_dispatch(sh("layernorm", var), static_cast<uint64_t>(rows), 1);
  d.params = {i32(rows), i32(L), float_bits(v.get_float("epsilon", 1e-5)), has_bias ? 1 : 0,
              rms ? 1 : 0};
  i32(rows * L);
  // Mean, variance and write passes, strided over the row by 64 invocations.
  d.loop_iterations = 3 * loop_passes(strided_trips(L, 64));
  d.tensors = {in_ref(0, es), in_ref(1, es), in_ref(has_bias ? 2 : 0, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_batchnorm(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0));
  int64_t inner = 1;
  for (size_t i = 2; i < x.size(); ++i) inner *= x[i];
  const int64_t n = numel(x);
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d = linear_dispatch(sh("batchnorm", var), static_cast<uint64_t>(n));
  d.params = {i32(n), i32(x[1]), i32(inner), float_bits(v.get_float("epsilon", 1e-5))};
  d.tensors = {in_ref(0, es), in_ref(1, es), in_ref(2, es),
               in_ref(3, es), in_ref(4, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_pool(const NodeView& v, Variant var) {
  const bool is_max = v.op_type() == "MaxPool";
  if (v.has_attr("dilations") && v.get_ints("dilations") != std::vector<int64_t>{1, 1})
    throw Unsupported("no dilated pooling kernel");
  const auto x = dims_of(v.input(0)), y = dims_of(v.output(0));
  const int64_t n = numel(y);
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d = linear_dispatch(sh("pool", var), static_cast<uint64_t>(n));
  d.spec = {is_max ? 0u : 1u};
  d.params = pool_params(v, x, y, is_max);
  // One invocation walks its window's rows and columns (clipped: at most
  // the kernel's, and the input's).
  const auto k = v.get_ints("kernel_shape");
  d.loop_iterations = loop_passes(std::min(k[0], x[2]), loop_passes(std::min(k[1], x[3])));
  d.tensors = {in_ref(0, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_global_pool(const NodeView& v, Variant var, const PlanTarget& t) {
  return reduce_plan(v, var, {2, 3}, 1, t);
}

OpPlan plan_reduce(const NodeView& v, Variant var, const PlanTarget& t) {
  const int64_t rank = v.input(0).rank;
  std::vector<int64_t> axes = v.get_ints("axes");
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  for (auto& a : axes)
    if (a < 0) a += rank;
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  i32(numel(dims_of(v.input(0))));
  const std::string_view op = v.op_type();
  constexpr std::string_view kOps[] = {"ReduceSum",       "ReduceMean",     "ReduceMax",
                                       "ReduceMin",       "ReduceProd",     "ReduceL2",
                                       "ReduceSumSquare", "ReduceLogSumExp"};
  uint32_t code = 0;
  while (code < std::size(kOps) && kOps[code] != op) ++code;
  if (code == std::size(kOps)) throw Unsupported("no reduction kernel for " + std::string(op));
  return reduce_plan(v, var, axes, code, t);
}

// ArgMax, ArgMin: one thread per (outer, inner) position; the i64 result is
// written as pairs of 32-bit words.
OpPlan plan_argmax(const NodeView& v, Variant var) {
  const auto [outer, len, inner] = split_at_axis(dims_of(v.input(0)), v.get_int("axis", 0));
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d = linear_dispatch(sh("argmax", var), static_cast<uint64_t>(outer * inner));
  d.spec = {v.op_type() == "ArgMin" ? 1u : 0u};
  d.params = {i32(outer * inner), i32(len), i32(inner),
              static_cast<int32_t>(v.get_int("select_last_index", 0))};
  i32(2 * numel(dims_of(v.output(0))));  // the output's words
  d.loop_iterations = loop_passes(len);  // one invocation walks the row
  d.tensors = {in_ref(0, es), out_ref(0, 4)};
  return {{d}};
}

}  // namespace ampx::vulkan
