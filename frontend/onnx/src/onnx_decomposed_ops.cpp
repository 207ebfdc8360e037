// ONNX ops imported as a few op-set ops that every backend already runs
// natively (docs/ONNX.md), rather than as new kernels:
//   InstanceNormalization, GroupNormalization: LayerNorm over the
//     normalised block (a [N, C or G, rest] view, unit scale), then the
//     per-channel scale and bias;
//   DepthToSpace, SpaceToDepth: Reshape - Transpose - Reshape;
//   Tile (constant repeats): Reshape to [1, d0, 1, d1, ...], Expand to
//     [r0, d0, r1, d1, ...], Reshape to [r0·d0, r1·d1, ...].
#include <fmt/format.h>
#include <ampx/half.hpp>

#include <cstring>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

// A constant of `count` elements all equal to `value`, in `dt`.
ValueId filled(Importer& im, DType dt, int64_t count, float value) {
  const TensorType type{dt, {count}};
  im.check_size(type, "a constant");
  std::vector<std::byte> bytes(static_cast<size_t>(count) * dtype_size(dt));
  for (int64_t i = 0; i < count; ++i) {
    std::byte* p = bytes.data() + static_cast<size_t>(i) * dtype_size(dt);
    if (dt == DType::kF32) {
      std::memcpy(p, &value, 4);
    } else if (dt == DType::kF64) {
      const double d = value;
      std::memcpy(p, &d, 8);
    } else if (dt == DType::kF16 || dt == DType::kBF16) {
      const uint16_t h = dt == DType::kF16 ? float_to_f16_bits(value) : float_to_bf16_bits(value);
      std::memcpy(p, &h, 2);
    } else {
      im.fail(fmt::format("X is {}, expected a float tensor", dtype_name(dt)));
    }
  }
  return im.constant(type, std::move(bytes));
}

ValueId reshape(Importer& im, ValueId v, std::vector<int64_t> shape) {
  return im.emit1("Reshape", {v}, {{"shape", std::move(shape)}});
}

// y = x·scale[c] + bias[c] with [C] vectors broadcast over X's channel axis 1.
ValueId channel_affine(Importer& im, ValueId x, ValueId scale, ValueId bias) {
  const Shape xs = im.type(x).shape;
  std::vector<int64_t> view(xs.size() - 1, 1);
  view[0] = xs[1];
  const ValueId y = im.emit1("Mul", {x, reshape(im, scale, view)});
  return im.emit1("Add", {y, reshape(im, bias, view)});
}

// X [N, C, ...] normalised over each of `groups` blocks of its channels and
// all the spatial positions (groups = C: instance norm).
ValueId group_normalise(Importer& im, ValueId x, int64_t groups, double epsilon) {
  const Shape xs = im.type(x).shape;
  const int64_t block = element_count(xs) / (xs[0] * groups);
  const ValueId view = reshape(im, x, {xs[0], groups, block});
  const ValueId ln = im.emit1("LayerNorm", {view, filled(im, im.type(x).dtype, block, 1.0f)},
                              {{"axis", int64_t{-1}}, {"epsilon", epsilon}});
  return reshape(im, ln, std::vector<int64_t>(xs.begin(), xs.end()));
}

void require_rank_at_least(Importer& im, ValueId x, size_t rank) {
  if (im.type(x).shape.size() < rank)
    im.fail(fmt::format("X must have rank >= {}, got {}", rank, im.type(x).shape.size()));
}

void require_vector(Importer& im, ValueId v, int64_t n, const char* what) {
  if (im.type(v).shape != Shape{n}) im.fail(fmt::format("{} must have shape [{}]", what, n));
}

}  // namespace

void instance_norm(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0), scale = im.input(n, 1), bias = im.input(n, 2);
  require_rank_at_least(im, x, 3);
  const int64_t c = im.type(x).shape[1];
  require_vector(im, scale, c, "scale");
  require_vector(im, bias, c, "B");
  const double eps = im.attr_float_or(n, "epsilon", 1e-5f);
  im.bind(n, 0, channel_affine(im, group_normalise(im, x, c, eps), scale, bias));
}

// GroupNormalization 18: scale and bias per group; 21: per channel.
void group_norm(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  ValueId scale = im.input(n, 1), bias = im.input(n, 2);
  require_rank_at_least(im, x, 3);
  const auto groups = im.attr_int(n, "num_groups");
  if (!groups) im.fail("attribute 'num_groups' is required");
  const int64_t c = im.type(x).shape[1];
  if (*groups < 1 || c % *groups != 0)
    im.fail(fmt::format("num_groups {} does not divide the {} channels", *groups, c));
  if (im.attr_int_or(n, "stash_type", 1) != 1)
    im.fail("stash_type other than 1 (float32 statistics) is not supported");
  if (im.opset() < 21) {  // per group: repeat each value for the group's channels
    require_vector(im, scale, *groups, "scale");
    require_vector(im, bias, *groups, "bias");
    auto per_channel = [&](ValueId v) {
      const ValueId e = im.emit1("Expand", {reshape(im, v, {*groups, 1})},
                                 {{"shape", std::vector<int64_t>{*groups, c / *groups}}});
      return reshape(im, e, {c});
    };
    scale = per_channel(scale);
    bias = per_channel(bias);
  } else {
    require_vector(im, scale, c, "scale");
    require_vector(im, bias, c, "bias");
  }
  const double eps = im.attr_float_or(n, "epsilon", 1e-5f);
  im.bind(n, 0, channel_affine(im, group_normalise(im, x, *groups, eps), scale, bias));
}

void depth_to_space(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const Shape s = im.type(x).shape;
  if (s.size() != 4) im.fail("X must be 4-D NCHW");
  const int64_t b = im.attr_int_or(n, "blocksize", 0);
  if (b < 1 || b > s[1] || s[1] % (b * b) != 0)
    im.fail(fmt::format("blocksize {} does not divide the {} channels into squares", b, s[1]));
  const std::string mode = im.attr_string_or(n, "mode", "DCR");
  if (mode != "DCR" && mode != "CRD") im.fail("mode must be DCR or CRD, got '" + mode + "'");
  const int64_t c = s[1] / (b * b);
  const bool dcr = mode == "DCR";
  const ValueId v = dcr ? reshape(im, x, {s[0], b, b, c, s[2], s[3]})
                        : reshape(im, x, {s[0], c, b, b, s[2], s[3]});
  const ValueId t = im.emit1("Transpose", {v},
                             {{"perm", dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2}
                                           : std::vector<int64_t>{0, 1, 4, 2, 5, 3}}});
  im.bind(n, 0, reshape(im, t, {s[0], c, s[2] * b, s[3] * b}));
}

void space_to_depth(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const Shape s = im.type(x).shape;
  if (s.size() != 4) im.fail("X must be 4-D NCHW");
  const int64_t b = im.attr_int_or(n, "blocksize", 0);
  if (b < 1 || s[2] % b != 0 || s[3] % b != 0)
    im.fail(fmt::format("blocksize {} does not divide H {} and W {}", b, s[2], s[3]));
  // Opset 28 added `mode`: DCR (the only order before, the default) puts
  // the block offset before the channel in the output's depth, CRD after.
  const std::string mode = im.opset() >= 28 ? im.attr_string_or(n, "mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") im.fail("mode must be DCR or CRD, got '" + mode + "'");
  const ValueId v = reshape(im, x, {s[0], s[1], s[2] / b, b, s[3] / b, b});
  const ValueId t = im.emit1("Transpose", {v},
                             {{"perm", mode == "DCR" ? std::vector<int64_t>{0, 3, 5, 1, 2, 4}
                                                     : std::vector<int64_t>{0, 1, 3, 5, 2, 4}}});
  im.bind(n, 0, reshape(im, t, {s[0], s[1] * b * b, s[2] / b, s[3] / b}));
}

void tile(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const Shape s = im.type(x).shape;
  const std::vector<int64_t> repeats = im.const_ints(n, 1, "repeats");
  if (repeats.size() != s.size())
    im.fail(fmt::format("repeats has {} values, X has rank {}", repeats.size(), s.size()));
  std::vector<int64_t> split, expanded, out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (repeats[i] < 0) im.fail("repeats must be >= 0");
    split.insert(split.end(), {1, s[i]});
    expanded.insert(expanded.end(), {repeats[i], s[i]});
    out.push_back(im.to_i64(__int128{repeats[i]} * s[i], "the tiled shape"));
  }
  const ValueId e = im.emit1("Expand", {reshape(im, x, split)}, {{"shape", std::move(expanded)}});
  im.bind(n, 0, reshape(im, e, out));
}

}  // namespace ampx::onnx_io
