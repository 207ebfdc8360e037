// GridSample (opsets 16, 20, 22) as the op set's GridSample.
#include <string>

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

}  // namespace ampx::onnx_io
