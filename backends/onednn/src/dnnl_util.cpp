#include "dnnl_util.hpp"

#include <oneapi/dnnl/dnnl_debug.h>

#include <span>

namespace ampx::onednn {

memory::data_type to_dnnl(ampx_dtype dt) {
  switch (dt) {
    case AMPX_DTYPE_F32:
      return memory::data_type::f32;
    case AMPX_DTYPE_F16:
      return memory::data_type::f16;
    case AMPX_DTYPE_BF16:
      return memory::data_type::bf16;
    case AMPX_DTYPE_I32:
      return memory::data_type::s32;
    case AMPX_DTYPE_I8:
      return memory::data_type::s8;
    case AMPX_DTYPE_U8:
      return memory::data_type::u8;
    default:
      throw NoPrimitive(std::string("oneDNN has no ") + plugin_support::dtype_name(dt) +
                        " data type");
  }
}

dims_t dims_of(const ampx_tensor_desc& t) {
  return dims_t(t.dims, t.dims + t.rank);
}

dims_t dense_strides(const dims_t& dims) {
  dims_t s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * std::max<int64_t>(dims[i], 1);
  return s;
}

dims_t reduced_dims(const ampx_tensor_desc& x, std::span<const int64_t> axes) {
  dims_t yd = dims_of(x);
  if (axes.empty()) {
    std::fill(yd.begin(), yd.end(), 1);
  } else {
    for (int64_t a : axes) yd[static_cast<size_t>(normalize_axis(a, x.rank))] = 1;
  }
  return yd;
}

memory::desc dense_md(const dims_t& dims, memory::data_type dt) {
  if (dims.empty()) return memory::desc({1}, dt, dims_t{1});
  if (dims.size() > DNNL_MAX_NDIMS) {
    throw NoPrimitive("rank " + std::to_string(dims.size()) + " exceeds oneDNN's " +
                      std::to_string(DNNL_MAX_NDIMS));
  }
  for (int64_t d : dims)
    if (d == 0) throw NoPrimitive("empty tensors are not run by oneDNN here");
  return memory::desc(dims, dt, dense_strides(dims));
}

memory::desc dense_md(const ampx_tensor_desc& t) {
  return dense_md(dims_of(t), to_dnnl(t.dtype));
}

dims_t pad_rank(const dims_t& dims, size_t rank) {
  dims_t r(rank > dims.size() ? rank - dims.size() : 0, 1);
  r.insert(r.end(), dims.begin(), dims.end());
  return r;
}

dims_t eltwise_dims(const dims_t& dims) {
  if (dims.size() >= 2 && dims.size() <= 5) return dims;
  return {1, product(dims)};
}

memory::desc eltwise_md(const ampx_tensor_desc& t) {
  return dense_md(eltwise_dims(dims_of(t)), to_dnnl(t.dtype));
}

int64_t product(const dims_t& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < dims.size() && i < to; ++i) p *= dims[i];
  return p;
}

int normalize_axis(int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) {
    throw NoPrimitive("axis " + std::to_string(axis) + " out of range");
  }
  return static_cast<int>(axis);
}

bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  const std::string impl = pd.impl_info_str();
  // Most "simple" implementations are generic C++ loops (the "simple:any"
  // reorder, the plain-layout poolings), but simple_layer_normalization is
  // oneDNN's optimised path: it runs jit statistics and data kernels (it is
  // the only CPU layer norm).
  if (impl.rfind("simple_layer_normalization", 0) == 0) return false;
  return impl.rfind("ref", 0) == 0 || impl.find("ref:") != std::string::npos ||
         impl.find("simple") != std::string::npos;
}

dnnl::primitive_attr plan_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // f32 means f32: without this, ONEDNN_DEFAULT_FPMATH_MODE=BF16 (or ANY)
  // in the environment lets an f32 convolution or matmul compute in bf16 on
  // AVX512-BF16/AMX CPUs, and the plan would claim f32 for a bf16 result.
  attr.set_fpmath_mode(dnnl::fpmath_mode::strict);
  return attr;
}

memory::desc same_layout(const memory::desc& layout, const dims_t& dims) {
  using tag = memory::format_tag;
  const dims_t ld = layout.dims();
  if (ld.size() == dims.size()) {
    static constexpr tag k4[] = {tag::abcd, tag::acdb, tag::aBcd8b, tag::aBcd16b};
    static constexpr tag k3[] = {tag::abc, tag::acb, tag::aBc8b, tag::aBc16b};
    static constexpr tag k2[] = {tag::ab, tag::ba};
    std::span<const tag> tags;
    if (dims.size() == 4) tags = k4;
    if (dims.size() == 3) tags = k3;
    if (dims.size() == 2) tags = k2;
    for (tag t : tags)
      if (memory::desc(ld, layout.data_type(), t) == layout)
        return memory::desc(dims, layout.data_type(), t);
  }
  throw NoPrimitive("no layout like the source's");
}

}  // namespace ampx::onednn

namespace ampx::onednn {

std::string describe_impl(const dnnl::primitive_desc_base& pd) {
  std::string kind = dnnl_prim_kind2str(static_cast<dnnl_primitive_kind_t>(pd.get_kind()));
  dnnl_prop_kind_t prop = dnnl_prop_kind_undef;
  // Kinds without a propagation kind (reorder, binary, sum ...) answer
  // unimplemented: the kind alone.
  if (dnnl_primitive_desc_query(pd.get(), dnnl_query_prop_kind, 0, &prop) == dnnl_success &&
      prop != dnnl_prop_kind_undef) {
    // Inference and scoring are one forward pass; training keeps its name
    // (batch normalization and pooling do more work in it).
    kind += prop == dnnl_forward_inference ? std::string("_forward")
                                           : "_" + std::string(dnnl_prop_kind2str(prop));
  }
  return kind + " " + pd.impl_info_str();
}

}  // namespace ampx::onednn
