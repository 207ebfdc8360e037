// DeformConv (opsets 19, 22), 2-D, composed at import: every kernel tap's
// sampling positions (output pixel * stride - pad + tap * dilation, plus
// the learned offset) are sampled bilinearly from X with the op set's
// GridSample (zeros outside), scaled by the mask, and the taps, stacked as
// an im2col tensor, are contracted with W by one batched MatMul.
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {

namespace {

// An f64 constant of `shape` cast to `dt` (the op set has one dtype per node).
ValueId float_constant(Importer& im, const std::vector<double>& v, Shape shape, DType dt) {
  std::vector<std::byte> bytes(v.size() * sizeof(double));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  ValueId c = im.constant({DType::kF64, std::move(shape)}, std::move(bytes));
  if (dt != DType::kF64) c = im.emit1("Cast", {c}, {{"to", int64_t(to_c(dt))}});
  return c;
}

std::vector<int64_t> pair_attr(Importer& im, const onnx::NodeProto& n, const char* name,
                               std::vector<int64_t> def, size_t count, int64_t min) {
  const auto v = im.attr_ints(n, name).value_or(std::move(def));
  if (v.size() != count)
    im.fail(fmt::format("attribute '{}' must hold {} values for a 2-D DeformConv, got {}", name,
                        count, v.size()));
  for (int64_t x : v)
    if (x < min || x > (int64_t{1} << 30))
      im.fail(fmt::format("attribute '{}' values must be in [{}, 2^30], got {}", name, min, x));
  return v;
}

}  // namespace

// With align_corners 0, GridSample reads pixel coordinate p of an axis of
// size d at the normalised g = (2p + 1) / d - 1 (valid for any d >= 1,
// unlike ONNX's reference, which divides by d - 1): g = offset * 2 / d +
// (2 * base + 1) / d - 1, the base positions a constant. Offset groups are
// folded into the batch, so GridSample runs once over [N * og, C / og, H, W]
// with a grid of [N * og, kh * kw * oh, ow, 2].
void deform_conv(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0), w = im.input(n, 1), off = im.input(n, 2);
  const TensorType xt = im.type(x), wt = im.type(w), ot = im.type(off);
  const DType dt = xt.dtype;
  if (!is_float(dt)) im.fail("X must be floating point");
  if (wt.dtype != dt || ot.dtype != dt) im.fail("W and offset must have X's dtype");
  if (xt.shape.size() != 4)
    im.fail(fmt::format("only 2-D DeformConv (4-D X) is supported, got X {}", shape_str(xt.shape)));
  if (wt.shape.size() != 4 || ot.shape.size() != 4)
    im.fail(fmt::format("W and offset must be 4-D, got {} and {}", shape_str(wt.shape),
                        shape_str(ot.shape)));
  const int64_t nb = xt.shape[0], c = xt.shape[1], h = xt.shape[2], wd = xt.shape[3];
  const int64_t oc = wt.shape[0], kh = wt.shape[2], kw = wt.shape[3];
  const auto ks = pair_attr(im, n, "kernel_shape", {kh, kw}, 2, 1);
  if (ks[0] != kh || ks[1] != kw)
    im.fail(fmt::format("kernel_shape {}x{} differs from W's {}x{}", ks[0], ks[1], kh, kw));
  const auto strides = pair_attr(im, n, "strides", {1, 1}, 2, 1);
  const auto dil = pair_attr(im, n, "dilations", {1, 1}, 2, 1);
  const auto pads = pair_attr(im, n, "pads", {0, 0, 0, 0}, 4, 0);
  const int64_t group = im.attr_int_or(n, "group", 1);
  const int64_t og = im.attr_int_or(n, "offset_group", 1);
  if (group < 1 || og < 1) im.fail("attributes 'group' and 'offset_group' must be >= 1");
  if (h < 1 || wd < 1 || c < 1 || oc < 1 || kh < 1 || kw < 1)
    im.fail("X and W must have no zero-sized dimension");
  if (c % group != 0 || wt.shape[1] * group != c || oc % group != 0)
    im.fail(fmt::format("X {} and W {} do not fit group {}", shape_str(xt.shape),
                        shape_str(wt.shape), group));
  if (c % og != 0)
    im.fail(fmt::format("X's {} channels are not divisible by offset_group {}", c, og));
  const int64_t kk = kh * kw, oh = ot.shape[2], ow = ot.shape[3];
  if (ot.shape[0] != nb || ot.shape[1] != og * kk * 2)
    im.fail(fmt::format("offset must be [{}, {}, oh, ow], got {}", nb, og * kk * 2,
                        shape_str(ot.shape)));
  const int64_t want_oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) / strides[0] + 1;
  const int64_t want_ow = (wd + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) / strides[1] + 1;
  if (oh != want_oh || ow != want_ow || oh < 1 || ow < 1)
    im.fail(fmt::format("offset's spatial shape {}x{} is not the output's {}x{}", oh, ow, want_oh,
                        want_ow));
  ValueId mask = kNone, bias = kNone;
  if (im.has_input(n, 4)) {
    mask = im.input(n, 4);
    const TensorType& mt = im.type(mask);
    if (mt.dtype != dt || mt.shape != Shape{nb, og * kk, oh, ow})
      im.fail(fmt::format("mask must be [{}, {}, {}, {}] of X's dtype, got {}", nb, og * kk, oh, ow,
                          shape_str(mt.shape)));
  }
  if (im.has_input(n, 3)) {
    bias = im.input(n, 3);
    const TensorType& bt = im.type(bias);
    if (bt.dtype != dt || bt.shape != Shape{oc})
      im.fail(fmt::format("B must be [{}] of X's dtype, got {}", oc, shape_str(bt.shape)));
  }
  const int64_t ohw = im.to_i64(__int128(oh) * ow, "the output's size");
  const int64_t taps = im.to_i64(__int128(kk) * ohw, "the sampling point count");
  im.check_size({dt, {nb, og, kk, 2, oh, ow}}, "the sampling grid");
  im.check_size({dt, {nb, c, taps}}, "the sampled columns");
  im.check_size({DType::kF64, {kk, 2, oh, ow}}, "the base positions");

  // base[t, 0 (y) / 1 (x), i, j], normalised; the offset scale per axis.
  std::vector<double> base(static_cast<size_t>(kk * 2 * ohw));
  for (int64_t t = 0; t < kk; ++t)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const double py = double(i * strides[0] - pads[0] + (t / kw) * dil[0]);
        const double px = double(j * strides[1] - pads[1] + (t % kw) * dil[1]);
        base[size_t((t * 2 + 0) * ohw + i * ow + j)] = (2 * py + 1) / double(h) - 1;
        base[size_t((t * 2 + 1) * ohw + i * ow + j)] = (2 * px + 1) / double(wd) - 1;
      }
  const ValueId base_c = float_constant(im, base, {1, 1, kk, 2, oh, ow}, dt);
  const ValueId scale = float_constant(im, {2.0 / double(h), 2.0 / double(wd)}, {2, 1, 1}, dt);
  auto reshape = [&](ValueId v, std::vector<int64_t> s) {
    return im.emit1("Reshape", {v}, {{"shape", std::move(s)}});
  };
  ValueId g = reshape(off, {nb, og, kk, 2, oh, ow});
  g = im.emit1("Add", {im.emit1("Mul", {g, scale}), base_c});
  // [N, og, kk, oh, ow, (y, x)] -> GridSample's (x, y) order
  g = im.emit1("Transpose", {g}, {{"perm", std::vector<int64_t>{0, 1, 2, 4, 5, 3}}});
  const std::vector<int64_t> xy{1, 0};
  g = im.emit1("Gather", {g, im.constant_i64(xy, {2})}, {{"axis", int64_t{5}}});
  g = reshape(g, {nb * og, kk * oh, ow, 2});
  const ValueId xg = reshape(x, {nb * og, c / og, h, wd});
  ValueId cols = im.emit1("GridSample", {xg, g},
                          {{"mode", std::string("linear")},
                           {"padding_mode", std::string("zeros")},
                           {"align_corners", int64_t{0}}});  // [N*og, C/og, kk*oh, ow]
  if (mask != kNone) {
    cols = reshape(cols, {nb, og, c / og, kk, ohw});
    cols = im.emit1("Mul", {cols, reshape(mask, {nb, og, 1, kk, ohw})});
  }
  // [N, C, kk, ohw] = [N, group, C/group * kk, ohw], against W [group, oc/group, C/group * kk]
  cols = reshape(cols, {nb, group, c / group * kk, ohw});
  const ValueId wg = reshape(w, {group, oc / group, c / group * kk});
  ValueId y = reshape(im.emit1("MatMul", {wg, cols}), {nb, oc, oh, ow});
  if (bias != kNone) y = im.emit1("Add", {y, reshape(bias, {1, oc, 1, 1})});
  im.bind(n, 0, y);
}

}  // namespace ampx::onnx_io
