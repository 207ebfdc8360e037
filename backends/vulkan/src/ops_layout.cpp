// Data movement on the strided copy kernel (copy.comp): Reshape, Flatten,
// Dropout, Transpose, Slice, Concat, Split, Expand, BitCast; Gather (gather.comp);
// Cast f32 <-> f16 (cast.comp) and integer/bool <-> float (icast.comp). Copies are bit-exact in
// every dtype elem_storage() has: floats in their variant, integers as raw words, bool/i8/u8 as
// bytes.
#include <algorithm>

#include "ampx/opset/shape_rules.hpp"
#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

// dst[dst_base + sum c*dst_str] = src[src_base + sum c*src_str] over `dims`,
// all in tensor elements. An element of several words gets one more,
// innermost dim of `words` contiguous ones, so every dtype is the same copy.
// `src` and `dst` name the tensors; their element size becomes the storage's.
Dispatch copy_dispatch(const ElemStorage& es, std::vector<int64_t> dims, int64_t src_base,
                       std::vector<int64_t> src_str, int64_t dst_base, std::vector<int64_t> dst_str,
                       TensorRef src, TensorRef dst) {
  if (es.words > 1) {
    for (auto* s : {&src_str, &dst_str})
      for (int64_t& x : *s) x *= es.words;
    src_base *= es.words;
    dst_base *= es.words;
    dims.push_back(es.words);
    src_str.push_back(1);
    dst_str.push_back(1);
  }
  src.elem_bytes = dst.elem_bytes = es.bytes;
  const int64_t n = numel(dims);
  Dispatch d = linear_dispatch("copy." + es.suffix, static_cast<uint64_t>(n));
  d.params = {i32(n), static_cast<int32_t>(dims.size()), i32(src_base), i32(dst_base)};
  for (const auto* part : {&dims, &src_str, &dst_str})
    for (int64_t x : *part) d.params.push_back(i32(x));
  d.tensors = {src, dst};
  return d;
}

OpPlan with_variant(OpPlan p, const ElemStorage& es) {
  p.variant = es.variant;
  return p;
}

}  // namespace

OpPlan plan_identity(const NodeView& v, const PlanTarget& t) {
  const ElemStorage es = elem_storage(v.input(0).dtype, t);
  const int64_t n = numel(dims_of(v.input(0)));
  return with_variant({{copy_dispatch(es, {n}, 0, {1}, 0, {1}, in_ref(0, 0), out_ref(0, 0))}}, es);
}

// BitCast: the bytes moved unchanged. Both dtypes must have storage here
// (elem_storage gives the reason when one has not); the copy then runs on
// the raw storage of their common width: words for 4 and 8 bytes (i32 and
// i64's), float16_t moved without arithmetic for 2, bytes for 1.
OpPlan plan_bitcast(const NodeView& v, const PlanTarget& t) {
  const ampx_dtype from = v.input(0).dtype, to = v.output(0).dtype;
  (void)elem_storage(from, t);
  (void)elem_storage(to, t);
  const uint32_t width = elem_bytes(from);
  const ampx_dtype raw = width == 8   ? AMPX_DTYPE_I64
                         : width == 4 ? AMPX_DTYPE_I32
                         : width == 2 ? AMPX_DTYPE_F16
                                      : AMPX_DTYPE_U8;
  const ElemStorage es = elem_storage(raw, t);
  const int64_t n = numel(dims_of(v.input(0)));
  return with_variant({{copy_dispatch(es, {n}, 0, {1}, 0, {1}, in_ref(0, 0), out_ref(0, 0))}}, es);
}

OpPlan plan_transpose(const NodeView& v, const PlanTarget& t) {
  const auto x = dims_of(v.input(0)), y = dims_of(v.output(0));
  std::vector<int64_t> perm = v.get_ints("perm");
  if (perm.empty())
    for (size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  const auto xs = strides_of(x);
  std::vector<int64_t> src(y.size());
  for (size_t d = 0; d < y.size(); ++d) src[d] = xs[static_cast<size_t>(perm[d])];
  const ElemStorage es = elem_storage(v.input(0).dtype, t);
  return with_variant(
      {{copy_dispatch(es, y, 0, src, 0, strides_of(y), in_ref(0, 0), out_ref(0, 0))}}, es);
}

OpPlan plan_slice(const NodeView& v, const PlanTarget& t) {
  const auto x = dims_of(v.input(0)), y = dims_of(v.output(0));
  const auto starts = v.get_ints("starts"), ends = v.get_ints("ends");
  std::vector<int64_t> axes = v.get_ints("axes");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  const auto steps = v.get_ints("steps", std::vector<int64_t>(starts.size(), 1));
  const auto xs = strides_of(x);
  std::vector<int64_t> src = xs;
  int64_t base = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < 0) a += static_cast<int64_t>(x.size());
    const int64_t dim = x[static_cast<size_t>(a)], step = steps[i];
    // ONNX's normalisation: from the end if negative, then clamped.
    const int64_t s = opset::slice_axis(starts[i], ends[i], step, dim).start;
    if (y[static_cast<size_t>(a)] > 0) base += s * xs[static_cast<size_t>(a)];
    // |step| may be huge when at most one element is taken.
    src[static_cast<size_t>(a)] =
        y[static_cast<size_t>(a)] > 1 ? step * xs[static_cast<size_t>(a)] : 0;
  }
  const ElemStorage es = elem_storage(v.input(0).dtype, t);
  return with_variant(
      {{copy_dispatch(es, y, base, src, 0, strides_of(y), in_ref(0, 0), out_ref(0, 0))}}, es);
}

OpPlan plan_concat(const NodeView& v, const PlanTarget& t) {
  const auto y = dims_of(v.output(0));
  int64_t axis = v.get_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(y.size());
  const auto ys = strides_of(y);
  const ElemStorage es = elem_storage(v.output(0).dtype, t);
  OpPlan plan;
  int64_t at = 0;
  for (size_t i = 0; i < v.num_inputs(); ++i) {
    const auto x = dims_of(v.input(i));
    if (numel(x) > 0)
      plan.dispatches.push_back(copy_dispatch(es, x, 0, strides_of(x),
                                              at * ys[static_cast<size_t>(axis)], ys,
                                              in_ref(static_cast<uint32_t>(i), 0), out_ref(0, 0)));
    at += x[static_cast<size_t>(axis)];
  }
  return with_variant(std::move(plan), es);
}

// Expand: a copy over the output reading the input with stride 0 along the
// dims it repeats (aligned right, as broadcasting).
OpPlan plan_expand(const NodeView& v, const PlanTarget& t) {
  const auto x = dims_of(v.input(0)), y = dims_of(v.output(0));
  const auto xs = strides_of(x);
  std::vector<int64_t> src(y.size(), 0);
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != 1) src[y.size() - x.size() + i] = xs[i];
  const ElemStorage es = elem_storage(v.input(0).dtype, t);
  return with_variant(
      {{copy_dispatch(es, y, 0, src, 0, strides_of(y), in_ref(0, 0), out_ref(0, 0))}}, es);
}

// Concat backwards: output i is the window of the input that starts at the
// sum of the sizes before it along `axis`; one dispatch per non-empty output.
OpPlan plan_split(const NodeView& v, const PlanTarget& t) {
  const auto x = dims_of(v.input(0));
  int64_t axis = v.get_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(x.size());
  const auto xs = strides_of(x);
  const ElemStorage es = elem_storage(v.input(0).dtype, t);
  OpPlan plan;
  int64_t at = 0;
  for (size_t i = 0; i < v.num_outputs(); ++i) {
    const auto y = dims_of(v.output(i));
    if (numel(y) > 0)
      plan.dispatches.push_back(copy_dispatch(es, y, at * xs[static_cast<size_t>(axis)], xs, 0,
                                              strides_of(y), in_ref(0, 0),
                                              out_ref(static_cast<uint32_t>(i), 0)));
    at += y[static_cast<size_t>(axis)];
  }
  return with_variant(std::move(plan), es);
}

// Gather in any dtype elem_storage() has: an element of several words is
// `words` more inner elements.
OpPlan plan_gather(const NodeView& v, const PlanTarget& t) {
  const auto x = dims_of(v.input(0));
  const ampx_tensor_desc& idx = v.input(1);
  if (idx.dtype != AMPX_DTYPE_I64 && idx.dtype != AMPX_DTYPE_I32)
    throw Unsupported("Gather indices must be i32 or i64");
  const ElemStorage es = elem_storage(v.input(0).dtype, t);
  int64_t axis = v.get_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(x.size());
  int64_t inner = es.words;
  for (size_t i = static_cast<size_t>(axis) + 1; i < x.size(); ++i) inner *= x[i];
  const int64_t ni = numel(dims_of(idx));
  const int64_t n = numel(dims_of(v.output(0))) * es.words;
  i32(numel(x) * es.words);
  Dispatch d = linear_dispatch("gather." + es.suffix, static_cast<uint64_t>(n));
  d.params = {i32(n), i32(x[static_cast<size_t>(axis)]), i32(inner), i32(ni),
              idx.dtype == AMPX_DTYPE_I64 ? 1 : 0};
  // Indices are bound as 32-bit words (i64: low word of each).
  d.tensors = {in_ref(0, es.bytes), in_ref(1, 4), out_ref(0, es.bytes)};
  return with_variant({{d}}, es);
}

namespace {

// The dtypes icast.comp has variants for (named as dtype_name() spells them).
bool has_icast_variant(ampx_dtype dt) {
  return dt == AMPX_DTYPE_F32 || dt == AMPX_DTYPE_F16 || dt == AMPX_DTYPE_I64 ||
         dt == AMPX_DTYPE_I32 || dt == AMPX_DTYPE_BOOL;
}

}  // namespace

OpPlan plan_cast(const NodeView& v, const PlanTarget& t) {
  const ampx_dtype from = v.input(0).dtype, to = v.output(0).dtype;
  const bool f32_f16 = from == AMPX_DTYPE_F32 && to == AMPX_DTYPE_F16;
  const bool f16_f32 = from == AMPX_DTYPE_F16 && to == AMPX_DTYPE_F32;
  if (from == to) return plan_identity(v, t);  // a copy, in any dtype elem_storage() has
  const int64_t n = numel(dims_of(v.input(0)));
  const auto unsupported = [&] {
    return Unsupported(std::string("Cast ") + plugin_support::dtype_name(from) + " -> " +
                       plugin_support::dtype_name(to) + ": no Vulkan kernel");
  };
  OpPlan p;
  if (f32_f16 || f16_f32) {
    p.variant = variant_for(AMPX_DTYPE_F16, t);  // checks 16-bit storage
    Dispatch d =
        linear_dispatch(f32_f16 ? "cast.f32_f16" : "cast.f16_f32", static_cast<uint64_t>(n));
    d.params = {i32(n)};
    d.tensors = {in_ref(0, elem_bytes(from)), out_ref(0, elem_bytes(to))};
    p.dispatches.push_back(std::move(d));
    return p;
  }
  // Integer/bool <-> float, and between integer widths (icast.comp); not
  // float <-> float (bf16, f64) nor i8/u8.
  const bool float_a = from == AMPX_DTYPE_F32 || from == AMPX_DTYPE_F16;
  const bool float_b = to == AMPX_DTYPE_F32 || to == AMPX_DTYPE_F16;
  if (!has_icast_variant(from) || !has_icast_variant(to) || (float_a && float_b))
    throw unsupported();
  // Storage: 16-bit for f16, 8-bit for bool (elem_storage() says why not).
  for (ampx_dtype dt : {from, to}) {
    const ElemStorage es = elem_storage(dt, t);
    if (dt == AMPX_DTYPE_F16) p.variant = es.variant;
  }
  const auto bytes = [](ampx_dtype dt) {
    return dt == AMPX_DTYPE_I64 ? 4u : elem_bytes(dt);  // an i64 is two words
  };
  i32(2 * n);  // i64 words
  Dispatch d = linear_dispatch(std::string("icast.") + plugin_support::dtype_name(from) + "_" +
                                   plugin_support::dtype_name(to),
                               static_cast<uint64_t>(n));
  d.params = {i32(n)};
  d.tensors = {in_ref(0, bytes(from)), out_ref(0, bytes(to))};
  p.dispatches.push_back(std::move(d));
  return p;
}

}  // namespace ampx::vulkan
