// Gemm, MatMul and Conv2d: on GPUs the tiled shared-memory GEMM core
// (gemm_tile.glsl), on CPU drivers the register-blocked kernels
// (gemm_cpu.comp, conv2d_cpu.comp; PlanTarget::blocked_gemm); depthwise
// Conv2d on its own direct kernel.
#include <algorithm>

#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

// Tile edge for a GEMM dimension: 64 when there is enough work, smaller for
// thin matrices so fewer threads idle on padding. Multiple of 16 (the
// workgroup edge); TK stays 16.
uint32_t tile_for(int64_t extent) {
  return extent > 32 ? 64u : extent > 16 ? 32u : 16u;
}

Dispatch gemm_dispatch(std::string shader, int64_t M, int64_t N, int64_t batches) {
  Dispatch d;
  d.shader = std::move(shader);
  const uint32_t tm = tile_for(M), tn = tile_for(N);
  d.spec = {tm, tn, 16u};
  d.groups = {static_cast<uint64_t>((N + tn - 1) / tn), static_cast<uint64_t>((M + tm - 1) / tm),
              static_cast<uint64_t>(batches)};
  return d;
}

std::string sh(const char* name, Variant var) {
  return std::string(name) + "." + variant_suffix(var);
}

// Register-blocked kernels: 8x8 invocations per workgroup, each an 8x8 block
// of the output (RM, RN in gemm_cpu.comp and conv2d_cpu.comp: keep in sync).
constexpr uint32_t kBlockedRM = 8, kBlockedRN = 8;

Dispatch blocked_dispatch(std::string shader, int64_t M, int64_t N, int64_t batches,
                          uint32_t mode) {
  Dispatch d;
  d.shader = std::move(shader);
  const uint32_t rm = kBlockedRM, rn = kBlockedRN;
  d.spec = {rm, rn, mode};  // constant_id 2 = MODE (0, 1 unused: RM, RN are fixed)
  const int64_t bx = (N + rn - 1) / rn, by = (M + rm - 1) / rm;
  d.groups = {static_cast<uint64_t>((bx + 7) / 8), static_cast<uint64_t>((by + 7) / 8),
              static_cast<uint64_t>(batches)};
  return d;
}

// gemm_cpu.comp's MODE: 2 when A rows and B columns are contiguous (a_sk = 1,
// b_sk = 1), 1 when A rows and B rows are (a_sk = 1, b_sn = 1), 3 when A
// columns and B rows are (a_sm = 1, b_sn = 1), else 0.
uint32_t gemm_mode(int64_t a_sm, int64_t a_sk, int64_t b_sk, int64_t b_sn) {
  if (a_sk != 1) return a_sm == 1 && b_sn == 1 ? 3 : 0;
  if (b_sk == 1) return 2;
  return b_sn == 1 ? 1 : 0;
}

Dispatch contraction_dispatch(const PlanTarget& t, Variant var, int64_t M, int64_t N,
                              int64_t batches, int64_t a_sm, int64_t a_sk, int64_t b_sk,
                              int64_t b_sn) {
  if (!t.blocked_gemm) return gemm_dispatch(sh("gemm", var), M, N, batches);
  return blocked_dispatch(sh("gemm_cpu", var), M, N, batches, gemm_mode(a_sm, a_sk, b_sk, b_sn));
}

// Loop passes of one invocation over a K-long contraction. gemm_cpu: the
// 4-wide loop over K/4 (taken or not at run time) and the scalar loop (the
// K % 4 tail, or all of K); its RM/RN loops are unrolled. gemm (tiled): K/TK
// steps, each loading the tiles in 256-strided loops and walking TK with the
// RM/RN register block loops.
uint64_t k_loop_passes(const Dispatch& d, int64_t K) {
  if (d.shader.starts_with("gemm_cpu")) return loop_passes(K / 4) + loop_passes(K);
  const int64_t tm = d.spec[0], tn = d.spec[1], tk = d.spec[2], rm = tm / 16, rn = tn / 16;
  const uint64_t step =
      loop_passes(strided_trips(tk * tm, 256)) + loop_passes(strided_trips(tk * tn, 256)) +
      loop_passes(tk, loop_passes(rm) + loop_passes(rn) + loop_passes(rm, loop_passes(rn)));
  return loop_passes(strided_trips(K, tk), step) + loop_passes(rm * rn) +
         loop_passes(rm, loop_passes(rn));
}

}  // namespace

OpPlan plan_gemm(const NodeView& v, Variant var, const PlanTarget& t) {
  const ampx_tensor_desc& a = v.input(0);
  const ampx_tensor_desc& b = v.input(1);
  const bool ta = v.get_int("transA", 0) != 0, tb = v.get_int("transB", 0) != 0;
  const int64_t M = ta ? a.dims[1] : a.dims[0], K = ta ? a.dims[0] : a.dims[1];
  const int64_t N = tb ? b.dims[0] : b.dims[1];
  const uint32_t es = elem_bytes(a.dtype);
  int64_t c_sm = 0, c_sn = 0;
  const bool has_c = v.num_inputs() > 2;
  if (has_c) {
    const auto cd = dims_of(v.input(2));
    // Unidirectional broadcast of C to [M, N]: a dim of 1 (or missing) repeats.
    const int64_t cm = cd.size() == 2 ? cd[0] : 1;
    const int64_t cn = cd.empty() ? 1 : cd.back();
    c_sm = cm == 1 ? 0 : cn;
    c_sn = cn == 1 ? 0 : 1;
  }
  Dispatch d =
      contraction_dispatch(t, var, M, N, 1, ta ? 1 : K, ta ? M : 1, tb ? 1 : N, tb ? K : 1);
  d.params = {i32(M),
              i32(N),
              i32(K),
              i32(ta ? 1 : K),
              i32(ta ? M : 1),
              i32(tb ? 1 : N),
              i32(tb ? K : 1),
              i32(c_sm),
              i32(c_sn),
              has_c ? 1 : 0,
              float_bits(v.get_float("alpha", 1.0)),
              float_bits(v.get_float("beta", 1.0)),
              1,
              0,
              0};
  d.loop_iterations = k_loop_passes(d, K);
  d.tensors = {in_ref(0, es), in_ref(1, es), in_ref(has_c ? 2 : 0, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_matmul(const NodeView& v, Variant var, const PlanTarget& t) {
  const auto ad = dims_of(v.input(0)), bd = dims_of(v.input(1)), yd = dims_of(v.output(0));
  const uint32_t es = elem_bytes(v.input(0).dtype);
  const int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
  // Batch offsets of A and B for every output batch index (NumPy broadcast of
  // the leading dims, right-aligned).
  const std::vector<int64_t> ybatch(yd.begin(), yd.end() - 2);
  const int64_t batches = numel(ybatch);
  auto offsets = [&](const std::vector<int64_t>& dims, int64_t mat) {
    const std::vector<int64_t> bdims(dims.begin(), dims.end() - 2);
    const auto bstr = strides_of(bdims);
    std::vector<int32_t> out(static_cast<size_t>(batches));
    for (int64_t z = 0; z < batches; ++z) {
      int64_t rest = z, off = 0;
      for (size_t k = ybatch.size(); k-- > 0;) {
        const int64_t c = rest % ybatch[k];
        rest /= ybatch[k];
        const ptrdiff_t j =
            static_cast<ptrdiff_t>(k) - static_cast<ptrdiff_t>(ybatch.size() - bdims.size());
        if (j >= 0 && bdims[static_cast<size_t>(j)] != 1) off += c * bstr[static_cast<size_t>(j)];
      }
      out[static_cast<size_t>(z)] = i32(off * mat);
    }
    return out;
  };
  Dispatch d = contraction_dispatch(t, var, M, N, batches, K, 1, N, 1);
  d.params = {i32(M), i32(N), i32(K),          i32(K),          1,           i32(N), 1, 0,
              0,      0,      float_bits(1.0), float_bits(0.0), i32(batches)};
  const auto ao = offsets(ad, M * K), bo = offsets(bd, K * N);
  d.params.insert(d.params.end(), ao.begin(), ao.end());
  d.params.insert(d.params.end(), bo.begin(), bo.end());
  d.loop_iterations = k_loop_passes(d, K);
  d.tensors = {in_ref(0, es), in_ref(1, es), in_ref(0, es), out_ref(0, es)};
  return {{d}};
}

OpPlan plan_conv2d(const NodeView& v, Variant var, const PlanTarget& tg) {
  const auto x = dims_of(v.input(0)), w = dims_of(v.input(1)), y = dims_of(v.output(0));
  const uint32_t es = elem_bytes(v.input(0).dtype);
  const auto st = v.get_ints("strides", {1, 1});
  const auto pads = v.get_ints("pads", {0, 0, 0, 0});
  const auto dil = v.get_ints("dilations", {1, 1});
  const int64_t group = v.get_int("group", 1);
  const bool has_bias = v.num_inputs() > 2;
  std::vector<int32_t> p = {i32(x[0]),  i32(x[1]),       i32(x[2]),    i32(x[3]),   i32(y[1]),
                            i32(y[2]),  i32(y[3]),       i32(w[2]),    i32(w[3]),   i32(st[0]),
                            i32(st[1]), i32(pads[0]),    i32(pads[1]), i32(dil[0]), i32(dil[1]),
                            i32(group), has_bias ? 1 : 0};
  const std::vector<TensorRef> t = {in_ref(0, es), in_ref(1, es), in_ref(has_bias ? 2 : 0, es),
                                    out_ref(0, es)};
  const int64_t cg = x[1] / group;
  if (group > 1 && cg == 1) {  // depthwise: a GEMM with K = kH*kW is mostly padding
    const int64_t n = numel(y);
    Dispatch d = linear_dispatch(sh("conv_depthwise", var), static_cast<uint64_t>(n));
    p.push_back(i32(n));
    d.params = p;
    d.loop_iterations = loop_passes(w[2], loop_passes(w[3]));  // the window
    d.tensors = t;
    return {{d}};
  }
  i32(cg * w[2] * w[3]);
  const int64_t gm = y[1] / group, gn = y[0] * y[2] * y[3];
  Dispatch d = tg.blocked_gemm ? blocked_dispatch(sh("conv2d_cpu", var), gm, gn, group, 0)
                               : gemm_dispatch(sh("conv2d", var), gm, gn, group);
  // conv2d_cpu walks Cg x kH x kW directly; conv2d is the tiled GEMM's K.
  d.loop_iterations = tg.blocked_gemm ? loop_passes(cg, loop_passes(w[2], loop_passes(w[3])))
                                      : k_loop_passes(d, cg * w[2] * w[3]);
  if (tg.blocked_gemm) d.spec.pop_back();  // conv2d_cpu has no MODE
  d.params = p;
  d.tensors = t;
  return {{d}};
}

// ConvTranspose: GPUs one invocation per output element
// (conv_transpose.comp), a gather over the taps that reach it and the
// group's input channels; CPU drivers (PlanTarget::blocked_gemm) blocks of
// 8 output channels x 8 pixels per invocation (conv_transpose_cpu.comp).
OpPlan plan_conv_transpose(const NodeView& v, Variant var, const PlanTarget& tg) {
  const auto x = dims_of(v.input(0)), w = dims_of(v.input(1)), y = dims_of(v.output(0));
  const uint32_t es = elem_bytes(v.input(0).dtype);
  const auto st = v.get_ints("strides", {1, 1});
  const auto pads = v.get_ints("pads", {0, 0, 0, 0});
  const auto dil = v.get_ints("dilations", {1, 1});
  const int64_t group = v.get_int("group", 1);
  const bool has_bias = v.num_inputs() > 2;
  const int64_t n = numel(y);
  Dispatch d;
  if (tg.blocked_gemm) {
    d = blocked_dispatch(sh("conv_transpose_cpu", var), y[1] / group, y[0] * y[2] * y[3], group, 0);
    d.spec.pop_back();  // no MODE
  } else {
    d = linear_dispatch(sh("conv_transpose", var), static_cast<uint64_t>(n));
  }
  d.params = {i32(x[0]),    i32(x[1]),   i32(x[2]),   i32(x[3]),  i32(y[1]),        i32(y[2]),
              i32(y[3]),    i32(w[2]),   i32(w[3]),   i32(st[0]), i32(st[1]),       i32(pads[0]),
              i32(pads[1]), i32(dil[0]), i32(dil[1]), i32(group), has_bias ? 1 : 0, i32(n)};
  // Every tap of the window, and the group's input channels at each.
  d.loop_iterations = loop_passes(w[2], loop_passes(w[3], loop_passes(x[1] / group)));
  d.tensors = {in_ref(0, es), in_ref(1, es), in_ref(has_bias ? 2 : 0, es), out_ref(0, es)};
  return {{d}};
}

}  // namespace ampx::vulkan
