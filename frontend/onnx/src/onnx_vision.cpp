// Det (opset 11) and Col2Im (opset 18) as the op set's Det and Col2Im.
#include <fmt/format.h>

#include <vector>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {

void det(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  if (!is_float(im.type(x).dtype)) im.fail("input X must be floating point");
  im.bind(n, 0, im.emit1("Det", {x}));
}

// image_shape and block_shape are inputs in ONNX and attributes in the op
// set: their values must be known at import (constants, or graph inputs
// whose values the session binds).
void col2im(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  if (!is_float(im.type(x).dtype)) im.fail("input must be floating point");
  const auto image = im.const_ints(n, 1, "image_shape");
  const auto block = im.const_ints(n, 2, "block_shape");
  if (image.empty() || image.size() != block.size())
    im.fail(
        fmt::format("image_shape ({} values) and block_shape ({}) must have one value per "
                    "spatial axis",
                    image.size(), block.size()));
  const size_t k = image.size();
  AttrMap attrs{{"image_shape", image}, {"block_shape", block}};
  for (const char* a : {"dilations", "strides"})
    attrs[a] = im.attr_ints(n, a).value_or(std::vector<int64_t>(k, 1));
  attrs["pads"] = im.attr_ints(n, "pads").value_or(std::vector<int64_t>(2 * k, 0));
  im.bind(n, 0, im.emit1("Col2Im", {x}, std::move(attrs)));
}

}  // namespace ampx::onnx_io
