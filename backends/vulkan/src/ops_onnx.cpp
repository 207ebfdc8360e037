// Pad (pad.comp: constant, edge, reflect; bit-exact in any dtype
// elem_storage() has), Resize (resize.comp: nearest and linear over the
// last two axes, with cpu_ref's coordinate maps computed here),
// GatherElements, GatherND and ScatterND (gather_elements.comp,
// gather_nd.comp, scatter_nd.comp: any dtype; ScatterND's reductions on
// f32/i64/i32), CumSum and TopK (cumsum.comp, topk.comp: floats).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "ampx/half.hpp"
#include "ampx/opset/resize_map.hpp"
#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

// cpu_ref's Pad value in dtype `dt` (its encode_scalar): floats rounded once
// (to f32 with round-to-odd, then to 16 bits to nearest even), integers
// truncated toward zero and saturated, bool v != 0. Returned as pad.comp's
// parameter words: raw words for integers, f32 bits of the rounded value for
// floats (widening a 16-bit value to f32 and back is exact), a byte.
template <class T>
int64_t to_int(double d) {
  if (std::isnan(d)) return 0;
  if (d <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<int64_t>(static_cast<T>(d));
}

std::vector<int32_t> pad_value_words(ampx_dtype dt, double v) {
  switch (dt) {
    case AMPX_DTYPE_F32:
      return {float_bits(v)};
    case AMPX_DTYPE_F16: {
      const float h = f16_bits_to_float(float_to_f16_bits(to_float_round_odd(v)));
      return {float_bits(h)};
    }
    case AMPX_DTYPE_I64: {
      const auto u = static_cast<uint64_t>(to_int<int64_t>(v));
      return {static_cast<int32_t>(static_cast<uint32_t>(u)),
              static_cast<int32_t>(static_cast<uint32_t>(u >> 32))};
    }
    case AMPX_DTYPE_I32:
      return {static_cast<int32_t>(to_int<int32_t>(v))};
    case AMPX_DTYPE_I8:
      return {static_cast<int32_t>(static_cast<uint8_t>(to_int<int8_t>(v)))};
    case AMPX_DTYPE_U8:
      return {static_cast<int32_t>(to_int<uint8_t>(v))};
    case AMPX_DTYPE_BOOL:
      return {v != 0 ? 1 : 0};
    default:
      throw Unsupported(std::string("Pad on ") + plugin_support::dtype_name(dt) + ": no kernel");
  }
}

// One resized axis: cpu_ref's own index map (opset/resize_map.hpp).
using AxisMap = opset::ResizeAxisMap;

AxisMap axis_map(int64_t in, int64_t out, bool linear, const std::string& ctm,
                 const std::string& nm) {
  try {
    return opset::resize_axis_map(in, out, linear, ctm, nm);
  } catch (const std::invalid_argument& e) {
    throw Unsupported(std::string("Resize: ") + e.what());
  }
}

void push_map(std::vector<int32_t>& p, const AxisMap& m) {
  for (size_t i = 0; i < m.i0.size(); ++i) {
    p.push_back(i32(m.i0[i]));
    p.push_back(i32(m.i1[i]));
    p.push_back(float_bits(static_cast<float>(m.w1[i])));
  }
}

}  // namespace

OpPlan plan_pad(const NodeView& v, const PlanTarget& t) {
  const auto x = dims_of(v.input(0)), y = dims_of(v.output(0));
  const ampx_dtype dt = v.input(0).dtype;
  const ElemStorage es = elem_storage(dt, t);
  const std::string mode = v.get_string("mode", "constant");
  const int32_t m = mode == "constant" ? 0 : mode == "edge" ? 1 : mode == "reflect" ? 2 : -1;
  if (m < 0) throw Unsupported("Pad mode \"" + mode + "\": no kernel");
  const auto pads = v.get_ints("pads");
  const size_t r = x.size();
  const int64_t n = numel(y);
  OpPlan plan;
  plan.variant = es.variant;
  if (n == 0) return plan;  // nothing to write
  i32(numel(x) * es.words);
  i32(n * es.words);
  Dispatch d = linear_dispatch("pad." + es.suffix, static_cast<uint64_t>(n));
  d.spec = {es.words};
  d.params = {i32(n), static_cast<int32_t>(r), m, 0};
  for (int64_t k : y) d.params.push_back(i32(k));
  for (int64_t k : x) d.params.push_back(i32(k));
  for (size_t k = 0; k < r; ++k) d.params.push_back(i32(pads[k]));
  for (int64_t k : strides_of(x)) d.params.push_back(i32(k));
  const auto value = pad_value_words(dt, v.get_float("value", 0.0));
  d.params.insert(d.params.end(), value.begin(), value.end());
  d.tensors = {in_ref(0, es.bytes), out_ref(0, es.bytes)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

OpPlan plan_resize(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0)), y = dims_of(v.output(0));
  const size_t r = x.size(), sp = std::min<size_t>(2, r);
  const std::string mode = v.get_string("mode", "nearest");
  // resize.comp reads two taps per axis at out/in: the general form
  // (cubic, ONNX's scales, antialias, the crop) has no kernel here.
  if (mode != "nearest" && mode != "linear")
    throw Unsupported("Resize mode \"" + mode + "\": no kernel");
  if (v.has_attr("scales") || v.has_attr("roi") || v.get_int("antialias", 0) != 0 ||
      v.get_int("exclude_outside", 0) != 0)
    throw Unsupported("Resize with scales, roi, antialias or exclude_outside: no kernel");
  const bool linear = mode == "linear";
  const std::string ctm = v.get_string("coordinate_transformation_mode", "half_pixel");
  const std::string nm = v.get_string("nearest_mode", "round_prefer_floor");
  const int64_t h = sp == 2 ? x[r - 2] : 1, oh = sp == 2 ? y[r - 2] : 1;
  const int64_t w = x[r - 1], ow = y[r - 1];
  const AxisMap my = axis_map(h, oh, linear, ctm, nm), mx = axis_map(w, ow, linear, ctm, nm);
  const int64_t n = numel(y);
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d =
      linear_dispatch("resize." + std::string(variant_suffix(var)), static_cast<uint64_t>(n));
  d.params = {i32(n), i32(h), i32(w), i32(oh), i32(ow)};
  push_map(d.params, my);
  push_map(d.params, mx);
  d.tensors = {in_ref(0, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_gather_elements(const NodeView& v, const PlanTarget& t) {
  const auto x = dims_of(v.input(0)), idx = dims_of(v.input(1));
  const ampx_dtype it = v.input(1).dtype;
  if (it != AMPX_DTYPE_I64 && it != AMPX_DTYPE_I32)
    throw Unsupported("GatherElements indices must be i32 or i64");
  const ElemStorage es = elem_storage(v.input(0).dtype, t);
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = v.get_int("axis", 0);
  if (axis < 0) axis += rank;
  const int64_t n = numel(idx);
  OpPlan plan;
  plan.variant = es.variant;
  if (n == 0) return plan;
  i32(numel(x) * es.words);
  i32(n * es.words);
  i32(2 * n);  // i64 index words
  Dispatch d = linear_dispatch("gather_elements." + es.suffix, static_cast<uint64_t>(n));
  d.spec = {es.words};
  d.params = {i32(n), static_cast<int32_t>(rank), static_cast<int32_t>(axis),
              i32(x[static_cast<size_t>(axis)]), it == AMPX_DTYPE_I64 ? 1 : 0};
  for (int64_t k : idx) d.params.push_back(i32(k));
  for (int64_t k : strides_of(x)) d.params.push_back(i32(k));
  d.tensors = {in_ref(0, es.bytes), in_ref(1, 4), out_ref(0, es.bytes)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

OpPlan plan_cumsum(const NodeView& v, Variant var) {
  const auto [outer, len, inner] = split_at_axis(dims_of(v.input(0)), v.get_int("axis", 0));
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d = linear_dispatch("cumsum." + std::string(variant_suffix(var)),
                               static_cast<uint64_t>(outer * inner));
  d.spec = {v.op_type() == "CumProd" ? 1u : 0u};
  d.params = {i32(outer * inner), i32(len), i32(inner),
              static_cast<int32_t>(v.get_int("exclusive", 0)),
              static_cast<int32_t>(v.get_int("reverse", 0))};
  d.loop_iterations = loop_passes(len);  // one invocation walks the row
  d.tensors = {in_ref(0, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_gather_nd(const NodeView& v, const PlanTarget& t) {
  const auto d = dims_of(v.input(0)), q = dims_of(v.input(1));
  const ampx_dtype it = v.input(1).dtype;
  if (it != AMPX_DTYPE_I64 && it != AMPX_DTYPE_I32)
    throw Unsupported("GatherND indices must be i32 or i64");
  const ElemStorage es = elem_storage(v.input(0).dtype, t);
  const auto b = static_cast<size_t>(v.get_int("batch_dims", 0));
  const auto depth = static_cast<size_t>(q.back());
  const auto prod = [](const std::vector<int64_t>& x, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; ++i) p *= x[i];
    return p;
  };
  const int64_t w = es.words;
  const int64_t slice = prod(d, b + depth, d.size()) * w;
  const int64_t tuples = prod(q, b, q.size() - 1);
  const int64_t n = numel(dims_of(v.output(0))) * w;
  OpPlan plan;
  plan.variant = es.variant;
  if (n == 0) return plan;
  i32(numel(d) * w);
  i32(2 * numel(q));  // i64 index words
  const auto ds = strides_of(d);
  Dispatch disp = linear_dispatch("gather_nd." + es.suffix, static_cast<uint64_t>(n));
  disp.params = {i32(n),
                 i32(slice),
                 i32(tuples),
                 i32(prod(d, b, d.size()) * w),
                 static_cast<int32_t>(depth),
                 it == AMPX_DTYPE_I64 ? 1 : 0};
  for (size_t k = 0; k < depth; ++k) disp.params.push_back(i32(d[b + k]));
  for (size_t k = 0; k < depth; ++k) disp.params.push_back(i32(ds[b + k] * w));
  disp.tensors = {in_ref(0, es.bytes), in_ref(1, 4), out_ref(0, es.bytes)};
  plan.dispatches.push_back(std::move(disp));
  return plan;
}

// Two dispatches: data copied into the output (copy.comp), then the
// updates scattered (scatter_nd.comp). Reductions on f32 and i64/i32
// (wrapping), as cpu_ref; none in any dtype.
OpPlan plan_scatter_nd(const NodeView& v, const PlanTarget& t) {
  const auto d = dims_of(v.input(0)), q = dims_of(v.input(1));
  const ampx_dtype dt = v.input(0).dtype, it = v.input(1).dtype;
  if (it != AMPX_DTYPE_I64 && it != AMPX_DTYPE_I32)
    throw Unsupported("ScatterND indices must be i32 or i64");
  const ElemStorage es = elem_storage(dt, t);
  const std::string reduction = v.get_string("reduction", "none");
  const int32_t red = reduction == "none"  ? 0
                      : reduction == "add" ? 1
                      : reduction == "mul" ? 2
                      : reduction == "max" ? 3
                      : reduction == "min" ? 4
                                           : -1;
  if (red < 0) throw Unsupported("ScatterND reduction \"" + reduction + "\": no kernel");
  // Reductions on f32, i64, i32 only, as cpu_ref's (f64 has no arithmetic
  // here).
  if (red > 0 && dt != AMPX_DTYPE_F32 && dt != AMPX_DTYPE_I64 && dt != AMPX_DTYPE_I32)
    throw Unsupported("ScatterND reduction on " + std::string(plugin_support::dtype_name(dt)) +
                      ": no kernel (f32, i64 and i32 only, as cpu_ref)");
  const auto depth = static_cast<size_t>(q.back());
  int64_t slice = 1;
  for (size_t i = depth; i < d.size(); ++i) slice *= d[i];
  const int64_t tuples = numel(q) / static_cast<int64_t>(std::max<size_t>(depth, 1));
  const int64_t n = numel(d), w = es.words;
  OpPlan plan;
  plan.variant = es.variant;
  if (n == 0) return plan;
  i32(n * w);
  i32(tuples * slice * w);
  i32(2 * numel(q));  // i64 index words
  Dispatch copy = linear_dispatch("copy." + es.suffix, static_cast<uint64_t>(n * w));
  copy.params = {i32(n * w), 1, 0, 0, i32(n * w), 1, 1};
  copy.tensors = {in_ref(0, es.bytes), out_ref(0, es.bytes)};
  plan.dispatches.push_back(std::move(copy));
  if (tuples * slice == 0) return plan;
  const auto ds = strides_of(d);
  Dispatch sc = linear_dispatch("scatter_nd." + es.suffix, static_cast<uint64_t>(tuples * slice));
  sc.spec = {es.words};
  sc.params = {i32(tuples * slice),          i32(slice), i32(tuples), static_cast<int32_t>(depth),
               it == AMPX_DTYPE_I64 ? 1 : 0, red};
  for (size_t k = 0; k < depth; ++k) sc.params.push_back(i32(d[k]));
  for (size_t k = 0; k < depth; ++k) sc.params.push_back(i32(ds[k]));
  sc.tensors = {in_ref(1, 4), in_ref(2, es.bytes), out_ref(0, es.bytes)};
  plan.dispatches.push_back(std::move(sc));
  return plan;
}

// TopK by rank: O(L) work per element, so rows longer than this are left to
// cpu_ref (a sort per row would be the kernel for those).
constexpr int64_t kTopKMaxRow = 4096;

OpPlan plan_topk(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0));
  const auto [outer, L, inner] = split_at_axis(x, v.get_int("axis", -1));
  if (L > kTopKMaxRow)
    throw Unsupported("TopK over " + std::to_string(L) + " elements: the Vulkan kernel takes " +
                      std::to_string(kTopKMaxRow) + " at most");
  const int64_t n = numel(x);
  OpPlan plan;
  const int64_t k = v.get_int("k", 0);
  if (n == 0 || k == 0) return plan;
  i32(2 * numel(dims_of(v.output(1))));  // the indices' words
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d =
      linear_dispatch("topk." + std::string(variant_suffix(var)), static_cast<uint64_t>(n));
  d.params = {i32(n), i32(L), i32(inner), i32(k), v.get_int("largest", 1) != 0 ? 1 : 0};
  d.loop_iterations = loop_passes(L);  // an element compares itself with its row
  d.tensors = {in_ref(0, es), out_ref(0, es), out_ref(1, 4)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

}  // namespace ampx::vulkan
