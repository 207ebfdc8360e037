// Transpose (a reorder from permuted strides) and Cast between f32/f16/bf16
// (a reorder between data types). Concat is concat_kernel.hpp.
#include "ops.hpp"

namespace ampx::onednn {

PrimitivePlan plan_transpose(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc &x = v.input(0), &y = v.output(0);
  const memory::data_type dt = to_dnnl(x.dtype);
  const dims_t xd = dims_of(x), yd = dims_of(y);
  std::vector<int64_t> perm = v.get_ints("perm");
  if (perm.empty())
    for (int64_t i = x.rank - 1; i >= 0; --i) perm.push_back(i);
  // The input seen with the output's dims: y[i...] = x[...] with strides
  // permuted.
  const dims_t xs = dense_strides(xd);
  dims_t src_strides(yd.size());
  for (size_t i = 0; i < yd.size(); ++i)
    src_strides[i] = xs[static_cast<size_t>(normalize_axis(perm[i], x.rank))];
  if (yd.empty()) {
    const memory::desc md = dense_md(yd, dt);
    PrimitivePlan p;
    p.pd = dnnl::reorder::primitive_desc(eng, md, eng, md, plan_attr());
    p.args = {{DNNL_ARG_FROM, false, 0, md}, {DNNL_ARG_TO, true, 0, md}};
    return p;
  }
  dense_md(yd, dt);  // rank and empty-tensor checks
  const memory::desc src_md(yd, dt, src_strides);
  const memory::desc dst_md = dense_md(yd, dt);
  PrimitivePlan p;
  p.pd = dnnl::reorder::primitive_desc(eng, src_md, eng, dst_md, plan_attr());
  p.args = {{DNNL_ARG_FROM, false, 0, src_md}, {DNNL_ARG_TO, true, 0, dst_md}};
  return p;
}

PrimitivePlan plan_cast(const NodeView& v, const dnnl::engine& eng) {
  const memory::desc x_md = dense_md(v.input(0)), y_md = dense_md(v.output(0));
  PrimitivePlan p;
  p.pd = dnnl::reorder::primitive_desc(eng, x_md, eng, y_md, plan_attr());
  p.args = {{DNNL_ARG_FROM, false, 0, x_md}, {DNNL_ARG_TO, true, 0, y_md}};
  // A reorder changes dtype and layout at once: a Cast of a blocked shadow
  // (a bf16 convolution's output before a BatchNorm the black list keeps
  // f32, and that BatchNorm's output after it) writes the other dtype in the
  // same blocked layout, one reorder where a write-back to plain and the
  // Cast were two, and the consumer takes the shadow as it is.
  const memory::data_type y_dt = y_md.data_type();
  p.relayout = [=](const memory::desc& src) -> dnnl::primitive_desc_base {
    const memory::desc like = same_layout(src, src.dims());
    memory::desc dst = like;
    dst.data.data_type = static_cast<dnnl_data_type_t>(y_dt);
    return dnnl::reorder::primitive_desc(eng, src, eng, dst, plan_attr());
  };
  return p;
}

}  // namespace ampx::onednn
