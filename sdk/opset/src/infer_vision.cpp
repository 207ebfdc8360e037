// Output types of the linear-algebra and vision ops (docs/OPS.md): Det and
// Col2Im, with ONNX's shape rules.
#include <string>

#include "infer_common.hpp"

namespace ampx::opset::detail {
namespace {

// Det: X [*, M, M] -> Y [*], a float dtype.
Outputs det(const Node& c) {
  const TensorSpec& x = c.in[0];
  require_float(c, x, "input");
  AMPX_CHECK(x.dims.size() >= 2, "input must be [*, M, M] (rank >= 2), got " + dims_str(x.dims));
  const size_t r = x.dims.size();
  AMPX_CHECK(
      x.dims[r - 1] == x.dims[r - 2],
      "input's last two dimensions must be equal (square matrices), got " + dims_str(x.dims));
  return std::vector<TensorSpec>{{x.dtype, Dims(x.dims.begin(), x.dims.end() - 2)}};
}

// Col2Im: X [N, C * prod(block_shape), L] -> Y [N, C, image_shape...], L
// the number of block positions the image, pads, dilations and strides
// give (ONNX Col2Im 18).
Outputs col2im(const Node& c) {
  const TensorSpec& x = c.in[0];
  require_float(c, x, "input");
  AMPX_CHECK(x.dims.size() == 3,
             "input must be [N, C * prod(block_shape), L], got " + dims_str(x.dims));
  const Dims image = c.v.get_ints("image_shape", {});
  const size_t k = image.size();
  AMPX_CHECK(k >= 1, "attribute 'image_shape' must have at least one value");
  const Dims block = pair_attr(c, "block_shape", {}, k, true);
  for (int64_t d : image)
    AMPX_CHECK(d > 0, "attribute 'image_shape' has invalid value " + std::to_string(d));
  const Dims strides = pair_attr(c, "strides", Dims(k, 1), k, true);
  const Dims dilations = pair_attr(c, "dilations", Dims(k, 1), k, true);
  const Dims pads = pair_attr(c, "pads", Dims(2 * k, 0), 2 * k, false);
  const int64_t cells = checked_count(c, block);
  AMPX_CHECK(x.dims[1] % cells == 0, "input's dimension 1 (" + std::to_string(x.dims[1]) +
                                         ") is not a multiple of the block's cells (" +
                                         std::to_string(cells) + ")");
  __int128 blocks = 1;
  for (size_t i = 0; i < k; ++i) {
    const __int128 span = __int128{image[i]} + pads[i] + pads[i + k];
    const __int128 reach = __int128{dilations[i]} * (block[i] - 1) + 1;
    AMPX_CHECK(span >= reach, "the block (" + std::to_string(block[i]) + " dilated by " +
                                  std::to_string(dilations[i]) + ") does not fit image axis " +
                                  std::to_string(i) + " with its pads");
    blocks *= (span - reach) / strides[i] + 1;
    AMPX_CHECK(blocks <= x.dims[2],
               "input's L (" + std::to_string(x.dims[2]) + ") is fewer than the block positions");
  }
  AMPX_CHECK(blocks == x.dims[2], "input's L is " + std::to_string(x.dims[2]) + ", the image has " +
                                      std::to_string(static_cast<int64_t>(blocks)) +
                                      " block positions");
  Dims y{x.dims[0], x.dims[1] / cells};
  y.insert(y.end(), image.begin(), image.end());
  (void)checked_count(c, y);
  return std::vector<TensorSpec>{{x.dtype, y}};
}

}  // namespace

Outputs infer_vision(const Node& c, std::string_view op) {
  if (op == "Det") return det(c);
  if (op == "Col2Im") return col2im(c);
  return std::nullopt;
}

}  // namespace ampx::opset::detail
