// The vision and linear-algebra ops of issue 40: MaxPoolIndices
// (pool_indices.comp), Col2Im (col2im.comp), GridSample (grid_sample.comp)
// and Det (det.comp). Each shader gives one invocation one output element
// (Det: one matrix) and reproduces cpu_ref's order of operations, so no
// atomics and no cross-invocation reductions.
#include <algorithm>
#include <string>

#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

std::string sh(const char* name, Variant var) {
  return std::string(name) + "." + variant_suffix(var);
}

}  // namespace

// pool.comp's window parameters plus the dilations and storage_order; the
// i64 result is written as pairs of 32-bit words.
OpPlan plan_maxpool_indices(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0)), y = dims_of(v.output(0));
  const auto dil = v.get_ints("dilations", {1, 1});
  Dispatch d = linear_dispatch(sh("pool_indices", var), static_cast<uint64_t>(numel(y)));
  d.params = pool_params(v, x, y, true);
  // The shader's window arithmetic (a dilated window's extent past the
  // padded input) stays in 32-bit ints.
  const auto k = v.get_ints("kernel_shape");
  for (size_t a = 0; a < 2; ++a)
    i32((int64_t{i32(k[a])} - 1) * i32(dil[a]) + 2 * (x[2 + a] + 1) + dil[a]);
  d.params.push_back(i32(dil[0]));
  d.params.push_back(i32(dil[1]));
  d.params.push_back(static_cast<int32_t>(v.get_int("storage_order", 0)));
  d.loop_iterations = loop_passes(k[0], loop_passes(k[1]));  // the window
  i32(2 * numel(y));                                         // the output's words
  d.tensors = {in_ref(0, elem_bytes(v.input(0).dtype)), out_ref(0, 4)};
  return {{d}};
}

// Col2Im over any spatial rank k: the block positions per axis as cpu_ref
// counts them (opset validation has checked that they fit and match L).
OpPlan plan_col2im(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0)), y = dims_of(v.output(0));
  const auto image = v.get_ints("image_shape");
  const size_t k = image.size();
  const auto block = v.get_ints("block_shape");
  const auto strides = v.get_ints("strides", std::vector<int64_t>(k, 1));
  const auto dil = v.get_ints("dilations", std::vector<int64_t>(k, 1));
  const auto pads = v.get_ints("pads", std::vector<int64_t>(2 * k, 0));
  const int64_t cells = numel(image);
  Dispatch d = linear_dispatch(sh("col2im", var), static_cast<uint64_t>(numel(y)));
  // Every block offset, decomposed over the k axes.
  d.loop_iterations = loop_passes(numel(block), loop_passes(static_cast<int64_t>(k)));
  d.params = {i32(numel(y)), i32(cells), i32(numel(block)), i32(x[2]),
              i32(static_cast<int64_t>(k))};
  for (size_t a = 0; a < k; ++a) {
    // The shader's cell + pad - offset * dilation stays in 32-bit ints.
    const int64_t span = i32(image[a]) + int64_t{i32(pads[a])} + i32(pads[a + k]);
    const int64_t reach = int64_t{i32(dil[a])} * (i32(block[a]) - 1) + 1;
    i32(span + reach);
    d.params.insert(d.params.end(), {i32(image[a]), i32(block[a]), i32(strides[a]), i32(dil[a]),
                                     i32(pads[a]), i32((span - reach) / strides[a] + 1)});
  }
  const uint32_t es = elem_bytes(v.input(0).dtype);
  d.tensors = {in_ref(0, es), out_ref(0, es)};
  return {{d}};
}

// GridSample over up to 6 spatial axes (grid_sample.comp's per-axis tap
// arrays); modes and padding modes as parameters.
OpPlan plan_grid_sample(const NodeView& v, Variant var) {
  constexpr size_t kMaxAxes = 6;  // grid_sample.comp's MAXK
  const auto x = dims_of(v.input(0)), y = dims_of(v.output(0));
  const size_t k = x.size() - 2;
  if (k > kMaxAxes)
    throw Unsupported("GridSample over " + std::to_string(k) + " spatial axes (the kernel takes " +
                      std::to_string(kMaxAxes) + ")");
  const std::string mode = v.get_string("mode", "linear");
  const std::string pad = v.get_string("padding_mode", "zeros");
  const int32_t mode_code = mode == "nearest" ? 0 : mode == "linear" ? 1 : 2;
  const int32_t pad_code = pad == "zeros" ? 0 : pad == "border" ? 1 : 2;
  const int64_t points = numel(y) / std::max<int64_t>(1, y[0] * y[1]);
  Dispatch d = linear_dispatch(sh("grid_sample", var), static_cast<uint64_t>(numel(y)));
  d.params = {
      i32(numel(y)), i32(x[1]), i32(std::max<int64_t>(points, 1)),         static_cast<int32_t>(k),
      mode_code,     pad_code,  v.get_int("align_corners", 0) != 0 ? 1 : 0};
  // Spatial sizes are exact in f32 (the coordinate arithmetic) below 2^24.
  for (size_t a = 0; a < k; ++a) {
    if (x[2 + a] > (int64_t{1} << 24))
      throw Unsupported("GridSample: a spatial size above 2^24 is not exact in f32");
    d.params.push_back(i32(x[2 + a]));
  }
  const uint32_t es = elem_bytes(v.input(0).dtype);
  d.tensors = {in_ref(0, es), in_ref(1, es), out_ref(0, es)};
  return {{d}};
}

// Det: one invocation per matrix, an O(M^3) serial loop, so M is bounded;
// the f64 working copies live in the node's scratch buffer, bound whole, so
// it stays within the smallest maxStorageBufferRange Vulkan allows (2^27).
OpPlan plan_det(const NodeView& v, Variant var, const PlanTarget& t) {
  constexpr int64_t kMaxM = 64;
  constexpr int64_t kMaxScratch = int64_t{1} << 27;
  if (!t.float64)
    throw Unsupported("Det: the device has no shaderFloat64 (cpu_ref's LU runs in f64)");
  const auto x = dims_of(v.input(0));
  const int64_t m = x.back(), batch = numel(dims_of(v.output(0)));
  if (m > kMaxM)
    throw Unsupported("Det of " + std::to_string(m) + "x" + std::to_string(m) +
                      " matrices: the kernel's serial LU takes M <= " + std::to_string(kMaxM));
  const int64_t rs = (m + 7) / 8 * 8;  // det.comp's padded row
  const int64_t scratch = batch * m * rs * 8;
  if (scratch > kMaxScratch)
    throw Unsupported("Det: " + std::to_string(batch) + " matrices need " +
                      std::to_string(scratch) + " bytes of f64 scratch (the kernel binds at most " +
                      std::to_string(kMaxScratch) + ")");
  Dispatch d = linear_dispatch(sh("det", var), static_cast<uint64_t>(batch), 64);
  d.params = {i32(batch), i32(m), i32(rs)};
  // The load, then per pivot column the pivot search, the row swap and the
  // eliminations, 8 columns per pass (M = 64: ~46,500 passes).
  const uint64_t row = loop_passes(rs / 8);
  d.loop_iterations =
      loop_passes(m, row) + loop_passes(m, loop_passes(m) + row + loop_passes(m, row));
  const uint32_t es = elem_bytes(v.input(0).dtype);
  d.tensors = {in_ref(0, es), out_ref(0, es), TensorRef{false, 0, 8, true}};
  OpPlan plan{{d}};
  plan.scratch_bytes = static_cast<uint64_t>(std::max<int64_t>(scratch, 8));
  return plan;
}

}  // namespace ampx::vulkan
