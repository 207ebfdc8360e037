// NonMaxSuppression, evaluated at import (docs/ONNX.md): its output's
// length depends on the boxes' and scores' values, and ampx plans fixed
// shapes, so like NonZero it is computed here where every input is known
// (a constant, a value that folds, or a small graph input whose value the
// caller gives) and becomes a constant; otherwise the import is refused.
// The selection is ONNX's reference (and ONNX Runtime's): per batch and
// class, candidates above score_threshold in decreasing score (ties: the
// lower box index first), each kept unless its IoU with a kept box exceeds
// iou_threshold, in float32 arithmetic as they compute it.
#include <fmt/format.h>
#include <ampx/exec/host_tensor.hpp>

#include <algorithm>
#include <cmath>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

// The most IoU tests one node may cost at import (a few seconds at most):
// boxes from an untrusted model's constants are bounded by the file only.
constexpr __int128 kMaxIouTests = __int128{1} << 30;

struct Thresholds {
  int64_t max_per_class = 0;  // absent: 0, nothing is selected (as ONNX's reference)
  float iou = 0.0f;
  bool has_score = false;
  float score = 0.0f;
};

// The corners (x_min, x_max, y_min, y_max) of a box in either encoding.
struct Extent {
  float x0, x1, y0, y1;
};

Extent extent(const float* b, bool center) {
  if (center) {
    const float hw = b[2] / 2, hh = b[3] / 2;
    return {b[0] - hw, b[0] + hw, b[1] - hh, b[1] + hh};
  }
  // [y1, x1, y2, x2], either corner pair in either order.
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

// ONNX's suppress_by_iou: whether box a's IoU with box b exceeds the threshold.
bool suppresses(const float* a, const float* b, bool center, float iou_threshold) {
  const Extent p = extent(a, center), q = extent(b, center);
  const float ix0 = std::max(p.x0, q.x0), ix1 = std::min(p.x1, q.x1);
  if (!(ix1 > ix0)) return false;
  const float iy0 = std::max(p.y0, q.y0), iy1 = std::min(p.y1, q.y1);
  if (!(iy1 > iy0)) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  if (!(inter > 0)) return false;
  const float area_p = (p.x1 - p.x0) * (p.y1 - p.y0), area_q = (q.x1 - q.x0) * (q.y1 - q.y0);
  const float uni = area_p + area_q - inter;
  if (!(area_p > 0) || !(area_q > 0) || !(uni > 0)) return false;
  return inter / uni > iou_threshold;
}

std::vector<float> known_floats(Importer& im, const onnx::NodeProto& n, int i, const char* what) {
  const ValueId x = im.input(n, i);
  const TensorType& t = im.type(x);
  // ONNX defines float32; f16 and bf16 widen exactly (a float64 value
  // past float32's range would not narrow: refused).
  if (t.dtype != DType::kF32 && t.dtype != DType::kF16 && t.dtype != DType::kBF16)
    im.fail(fmt::format("{} ('{}') must be float32 (or float16, bfloat16), got {}", what,
                        n.input(i), dtype_name(t.dtype)));
  const ConstantData known = im.value_for_output_shape(n, i, what);
  std::vector<float> out;
  for (double d : to_doubles(HostTensor{"", t, *known})) out.push_back(static_cast<float>(d));
  return out;
}

// An optional one-value input ([] or [1]); nullopt when absent or empty.
std::optional<float> optional_float(Importer& im, const onnx::NodeProto& n, int i,
                                    const char* what) {
  if (!im.has_input(n, i)) return std::nullopt;
  const auto v = known_floats(im, n, i, what);
  if (v.empty()) return std::nullopt;
  if (v.size() != 1) im.fail(fmt::format("{} must hold one value, it has {}", what, v.size()));
  return v[0];
}

Thresholds thresholds(Importer& im, const onnx::NodeProto& n) {
  Thresholds t;
  if (im.has_input(n, 2)) {
    const auto m = im.const_ints(n, 2, "max_output_boxes_per_class");
    if (m.size() > 1)
      im.fail(fmt::format("max_output_boxes_per_class must hold one value, it has {}", m.size()));
    if (!m.empty()) t.max_per_class = std::max<int64_t>(m[0], 0);
  }
  t.iou = optional_float(im, n, 3, "iou_threshold").value_or(0.0f);
  const auto s = optional_float(im, n, 4, "score_threshold");
  t.has_score = s.has_value();
  t.score = s.value_or(0.0f);
  return t;
}

// One batch and class: the selected box indices, in selection order.
std::vector<int64_t> select(const float* boxes, const float* scores, int64_t count, bool center,
                            const Thresholds& t) {
  std::vector<int64_t> candidates;
  for (int64_t b = 0; b < count; ++b)
    if (!t.has_score || scores[b] > t.score) candidates.push_back(b);
  // Decreasing score, then increasing index. NaN scores go last (a strict
  // weak order; ONNX's reference leaves their place to Python's sort).
  std::stable_sort(candidates.begin(), candidates.end(), [&](int64_t a, int64_t b) {
    const float sa = scores[a], sb = scores[b];
    if (std::isnan(sa) || std::isnan(sb)) return !std::isnan(sa) && std::isnan(sb);
    return sa > sb;
  });
  std::vector<int64_t> kept;
  for (int64_t c : candidates) {
    if (static_cast<int64_t>(kept.size()) >= t.max_per_class) break;
    const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
      return suppresses(boxes + 4 * c, boxes + 4 * k, center, t.iou);
    });
    if (!suppressed) kept.push_back(c);
  }
  return kept;
}

}  // namespace

void non_max_suppression(Importer& im, const onnx::NodeProto& n) {
  const int64_t center = im.attr_int_or(n, "center_point_box", 0);
  if (center != 0 && center != 1)
    im.fail(fmt::format("center_point_box must be 0 or 1, got {}", center));
  const Shape bs = im.type(im.input(n, 0)).shape, ss = im.type(im.input(n, 1)).shape;
  if (bs.size() != 3 || bs[2] != 4)
    im.fail(fmt::format("boxes must be [batches, boxes, 4], got {}", shape_str(bs)));
  if (ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    im.fail(fmt::format("scores must be [batches, classes, boxes] = [{}, classes, {}], got {}",
                        bs[0], bs[1], shape_str(ss)));
  const int64_t batches = bs[0], classes = ss[1], count = bs[1];
  const Thresholds t = thresholds(im, n);
  if (__int128{batches} * classes * count * std::min(count, t.max_per_class) > kMaxIouTests)
    im.fail(fmt::format("{} batches x {} classes x {} boxes is too much to evaluate at import",
                        batches, classes, count));
  const auto boxes = known_floats(im, n, 0, "boxes");
  const auto scores = known_floats(im, n, 1, "scores");
  std::vector<int64_t> out;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c)
      for (int64_t k : select(boxes.data() + b * count * 4,
                              scores.data() + (b * classes + c) * count, count, center == 1, t))
        out.insert(out.end(), {b, c, k});
  const auto selected = static_cast<int64_t>(out.size() / 3);
  im.bind(n, 0, im.constant_i64(out, {selected, 3}));
}

}  // namespace ampx::onnx_io
