// GridSample (opsets 16, 20, 22) as the op set's GridSample; AffineGrid
// (opset 20), the grid GridSample reads, composed at import.
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {

// Opset 16 names the modes bilinear/bicubic and takes 4-D X only; 20 on
// names them linear/cubic and takes any rank >= 3. A grid of another float
// dtype than X's is cast to X's (the op set has one dtype per node).
void grid_sample(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  ValueId grid = im.input(n, 1);
  const DType dt = im.type(x).dtype;
  if (!is_float(dt) || !is_float(im.type(grid).dtype)) im.fail("X and grid must be floating point");
  std::string mode = im.attr_string_or(n, "mode", im.opset() < 20 ? "bilinear" : "linear");
  if (im.opset() < 20) {
    if (im.type(x).shape.size() != 4) im.fail("GridSample before opset 20 takes a 4-D X only");
    if (mode == "bilinear")
      mode = "linear";
    else if (mode == "bicubic")
      mode = "cubic";
    else if (mode != "nearest")
      im.fail("mode '" + mode + "' is not valid");
  } else if (mode != "linear" && mode != "nearest" && mode != "cubic") {
    im.fail("mode '" + mode + "' is not valid");
  }
  const std::string padding = im.attr_string_or(n, "padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    im.fail("padding_mode '" + padding + "' is not valid");
  const int64_t align = im.attr_int_or(n, "align_corners", 0);
  if (align != 0 && align != 1) im.fail("attribute 'align_corners' must be 0 or 1");
  if (im.type(grid).dtype != dt) grid = im.emit1("Cast", {grid}, {{"to", int64_t(to_c(dt))}});
  im.bind(n, 0,
          im.emit1("GridSample", {x, grid},
                   {{"mode", mode}, {"padding_mode", padding}, {"align_corners", align}}));
}

// AffineGrid: grid[n, p] = theta[n] · (x_p, y_p[, z_p], 1) for every
// output point p, the base coordinates normalised to [-1, 1] per axis as
// ONNX's reference builds them (align_corners: the corner pixels' centres,
// i * 2 / (d - 1) - 1, and -1 for a dimension of 1; otherwise the pixels'
// centres, (2i + 1) / d - 1), the last axis first. The size input's value
// must be known at import: the base grid is then a constant [P, k + 1]
// (computed in f64, cast to theta's dtype) and the op is one MatMul with
// theta transposed, as ONNX's reference computes it.
void affine_grid(Importer& im, const onnx::NodeProto& n) {
  im.set_origin("AffineGrid");  // the default black list keeps it f32 (amp/policy.hpp)
  const ValueId theta = im.input(n, 0);
  const TensorType tt = im.type(theta);  // a copy: emit() grows the graph
  if (!is_float(tt.dtype)) im.fail("theta must be floating point");
  const auto size = im.const_ints(n, 1, "size");
  if (size.size() != 4 && size.size() != 5)
    im.fail(fmt::format("size must hold 4 values (N, C, H, W) or 5 (N, C, D, H, W), got {}",
                        size.size()));
  const auto k = static_cast<int64_t>(size.size()) - 2;
  if (tt.shape.size() != 3 || tt.shape[1] != k || tt.shape[2] != k + 1)
    im.fail(fmt::format("theta must be [N, {}, {}] for a {}-D size, got {}", k, k + 1, k,
                        shape_str(tt.shape)));
  if (size[0] != tt.shape[0])
    im.fail(fmt::format("size's N ({}) is not theta's ({})", size[0], tt.shape[0]));
  const int64_t align = im.attr_int_or(n, "align_corners", 0);
  if (align != 0 && align != 1) im.fail("attribute 'align_corners' must be 0 or 1");
  const std::vector<int64_t> dims(size.begin() + 2, size.end());
  __int128 points = 1;
  for (int64_t d : dims) {
    if (d < 1) im.fail(fmt::format("size's spatial dimensions must be >= 1, got {}", d));
    points *= d;
  }
  const int64_t p = im.to_i64(points, "the grid's point count");
  const TensorType base_type{DType::kF64, {p, k + 1}};
  im.check_size(base_type, "the base grid");
  im.check_size({tt.dtype, {tt.shape[0], p, k}}, "the grid");
  std::vector<double> base(static_cast<size_t>(p * (k + 1)));
  for (int64_t i = 0; i < p; ++i) {
    int64_t rest = i;
    double* row = base.data() + i * (k + 1);
    row[k] = 1;
    // Component c is axis k-1-c's coordinate (x is the last axis).
    for (int64_t a = k - 1; a >= 0; --a) {
      const int64_t d = dims[static_cast<size_t>(a)], j = rest % d;
      rest /= d;
      const auto jd = static_cast<double>(j), dd = static_cast<double>(d);
      row[k - 1 - a] = align ? (d == 1 ? -1.0 : jd * 2.0 / (dd - 1) - 1) : (2 * jd + 1) / dd - 1;
    }
  }
  std::vector<std::byte> bytes(base.size() * sizeof(double));
  std::memcpy(bytes.data(), base.data(), bytes.size());
  ValueId b = im.constant(base_type, std::move(bytes));
  if (tt.dtype != DType::kF64) b = im.emit1("Cast", {b}, {{"to", int64_t(to_c(tt.dtype))}});
  const ValueId tt_t = im.emit1("Transpose", {theta}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  const ValueId g = im.emit1("MatMul", {b, tt_t});  // [N, P, k]
  std::vector<int64_t> out{tt.shape[0]};
  out.insert(out.end(), dims.begin(), dims.end());
  out.push_back(k);
  im.bind(n, 0, im.emit1("Reshape", {g}, {{"shape", out}}));
}

}  // namespace ampx::onnx_io
