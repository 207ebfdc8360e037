#include "op_plan.hpp"

#include <cstring>
#include <limits>

namespace ampx::vulkan {

const char* variant_suffix(Variant v) noexcept {
  switch (v) {
    case Variant::kF32:
      return "f32";
    case Variant::kF16:
      return "f16";
    case Variant::kF16S:
      return "f16s";
  }
  return "f32";
}

Variant variant_for(ampx_dtype dt, const PlanTarget& t) {
  switch (dt) {
    case AMPX_DTYPE_F32:
      return Variant::kF32;
    case AMPX_DTYPE_F16:
      if (!t.storage16) throw Unsupported("f16: device has no storageBuffer16BitAccess");
      return t.float16 ? Variant::kF16 : Variant::kF16S;
    case AMPX_DTYPE_BF16:
      throw Unsupported("bf16: no bf16 kernels (device has no usable BF16 extension)");
    default:
      throw Unsupported(std::string("no kernel for dtype ") + plugin_support::dtype_name(dt));
  }
}

ElemStorage elem_storage(ampx_dtype dt, const PlanTarget& t) {
  switch (dt) {
    case AMPX_DTYPE_F32:
    case AMPX_DTYPE_F16: {
      const Variant var = variant_for(dt, t);
      return {variant_suffix(var), var, 1, elem_bytes(dt)};
    }
    case AMPX_DTYPE_I64:
    case AMPX_DTYPE_F64:  // moved, never computed on: raw words are exact
      return {"u32", Variant::kF32, 2, 4};
    case AMPX_DTYPE_I32:
      return {"u32", Variant::kF32, 1, 4};
    case AMPX_DTYPE_BOOL:
    case AMPX_DTYPE_I8:
    case AMPX_DTYPE_U8:
      // Words would need read-modify-write of neighbouring tensors' bytes.
      if (!t.storage8)
        throw Unsupported(std::string(plugin_support::dtype_name(dt)) +
                          " tensors: device has no storageBuffer8BitAccess");
      return {"u8", Variant::kF32, 1, 1};
    default:
      variant_for(dt, t);  // throws with the reason (bf16)
      throw Unsupported(std::string("no kernel for dtype ") + plugin_support::dtype_name(dt));
  }
}

uint32_t elem_bytes(ampx_dtype dt) {
  return static_cast<uint32_t>(plugin_support::dtype_size(dt));
}

std::vector<int64_t> dims_of(const ampx_tensor_desc& t) {
  return std::vector<int64_t>(t.dims, t.dims + t.rank);
}

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}

AxisSplit split_at_axis(const std::vector<int64_t>& d, int64_t axis) {
  const auto rank = static_cast<int64_t>(d.size());
  if (axis < 0) axis += rank;
  AxisSplit s;
  for (int64_t i = 0; i < axis; ++i) s.outer *= d[static_cast<size_t>(i)];
  s.len = d[static_cast<size_t>(axis)];
  for (int64_t i = axis + 1; i < rank; ++i) s.inner *= d[static_cast<size_t>(i)];
  return s;
}

std::vector<int32_t> pool_params(const NodeView& v, const std::vector<int64_t>& x,
                                 const std::vector<int64_t>& y, bool is_max) {
  const auto k = v.get_ints("kernel_shape");
  const auto st = v.get_ints("strides", {1, 1});
  const auto pads = v.get_ints("pads", {0, 0, 0, 0});
  std::vector<int32_t> p = {
      i32(x[0] * x[1]), i32(x[2]),
      i32(x[3]),        i32(y[2]),
      i32(y[3]),        i32(k[0]),
      i32(k[1]),        i32(st[0]),
      i32(st[1]),       i32(pads[0]),
      i32(pads[1]),     i32(pads[2]),
      i32(pads[3]),     is_max ? 0 : static_cast<int32_t>(v.get_int("count_include_pad", 0))};
  (void)i32(numel(x));  // the shader indexes the input with 32-bit ints
  return p;
}

int32_t i32(int64_t v) {
  if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min())
    throw Unsupported("size " + std::to_string(v) + " exceeds the kernels' 32-bit indexing");
  return static_cast<int32_t>(v);
}

int32_t float_bits(double v) {
  const float f = static_cast<float>(v);
  int32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

uint64_t loop_passes(int64_t n, uint64_t body) {
  if (n <= 0) return 1;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max() / 4;
  const auto un = static_cast<uint64_t>(n);
  if (body >= kMax / un) return kMax;
  return un * (1 + body) + 1;
}

int64_t strided_trips(int64_t len, int64_t step) {
  return len <= 0 ? 0 : (len + step - 1) / step;
}

Dispatch linear_dispatch(std::string shader, uint64_t items, uint64_t per_group) {
  Dispatch d;
  d.shader = std::move(shader);
  d.linear = true;
  d.groups = {(items + per_group - 1) / per_group, 1, 1};
  return d;
}

}  // namespace ampx::vulkan
