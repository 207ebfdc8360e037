// ai.onnx.ml ops imported as op-set ops (docs/ONNX.md, "Other domains"),
// exactly as ONNX's reference (onnx/reference/ops/aionnxml) computes them:
//   Binarizer              Cast(X > threshold) to X's type (NaN gives 0)
//   ArrayFeatureExtractor  Gather on the last axis of the flattened
//                          indices; a 1-D X gives [1, count], as ONNX
//                          Runtime does
// Strings (LabelEncoder's keys, a string X) are not ampx types: such a
// model is refused at its input or initializer.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

using N = onnx::NodeProto;

ValueId scalar_of(Importer& im, DType dt, double value) {
  std::vector<std::byte> bytes(8);
  std::memcpy(bytes.data(), &value, 8);
  const ValueId c = im.constant({DType::kF64, {}}, std::move(bytes));
  if (dt == DType::kF64) return c;
  return im.emit1("Cast", {c}, {{"to", int64_t(to_c(dt))}});
}

}  // namespace

// T: float, double, int64, int32. For an integer X, x > t is x > floor(t)
// (exact for every t), the threshold clamped to the type's range.
void binarizer(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const DType dt = im.type(x).dtype;
  if (!is_float(dt) && dt != DType::kI64 && dt != DType::kI32)
    im.fail(fmt::format("X is {}; Binarizer takes float, double, int64 or int32", dtype_name(dt)));
  double t = im.attr_float_or(n, "threshold", 0.0F);
  if (!is_float(dt)) {
    if (std::isnan(t)) im.fail("threshold is NaN");
    const double lo = dt == DType::kI32 ? -2147483648.0 : -9.2233720368547758e18;
    const double hi = dt == DType::kI32 ? 2147483647.0 : 9.2233720368547748e18;
    t = std::clamp(std::floor(t), lo, hi);
  }
  const ValueId above = im.emit1("Greater", {x, scalar_of(im, dt, t)});
  im.bind(n, 0, im.emit1("Cast", {above}, {{"to", int64_t(to_c(dt))}}));
}

void array_feature_extractor(Importer& im, const N& n) {
  ValueId x = im.input(n, 0), y = im.input(n, 1);
  const Shape xs = im.type(x).shape, ys = im.type(y).shape;
  if (xs.empty()) im.fail("X must have rank >= 1, got a scalar");
  if (im.type(y).dtype != DType::kI64)
    im.fail(fmt::format("Y (the indices) must be int64, got {}", dtype_name(im.type(y).dtype)));
  const int64_t count = element_count(ys);
  if (ys.size() != 1) y = im.emit1("Reshape", {y}, {{"shape", std::vector<int64_t>{count}}});
  const auto last = static_cast<int64_t>(xs.size()) - 1;
  ValueId z = im.emit1("Gather", {x, y}, {{"axis", last}});
  if (xs.size() == 1) z = im.emit1("Reshape", {z}, {{"shape", std::vector<int64_t>{1, count}}});
  im.bind(n, 0, z);
}

}  // namespace ampx::onnx_io
