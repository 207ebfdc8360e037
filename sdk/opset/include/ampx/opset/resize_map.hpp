// Resize's source coordinates (docs/OPS.md, Resize), one axis at a time:
// what every backend's Resize kernel reads, computed once here so that
// cpu_ref (the oracle) and the plugins that build index tables on the host
// (vulkan) cannot drift apart.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ampx::opset {

// Per output coordinate of one resized axis: the two source indices and the
// weight of the second (nearest: one index twice, weight 0).
struct ResizeAxisMap {
  std::vector<int64_t> i0, i1;
  std::vector<double> w1;
};

// The map from an axis of `in` elements to one of `out`, for the node's
// mode (linear or nearest), coordinate_transformation_mode and
// nearest_mode. Throws std::invalid_argument naming a mode validate()
// would have refused.
ResizeAxisMap resize_axis_map(int64_t in, int64_t out, bool linear,
                              std::string_view coordinate_transformation_mode,
                              std::string_view nearest_mode);

}  // namespace ampx::opset

namespace ampx::opset {

// One resized axis in the general form (docs/OPS.md, Resize), ONNX's
// reference to the letter: `scale` is the factor ONNX maps coordinates by
// (the `scales` attribute, else out / in), roi_start/roi_end the axis's
// tf_crop_and_resize region (normalised).
struct ResizeAxisSpec {
  int64_t in = 1, out = 1;
  double scale = 1.0;
  std::string_view mode = "nearest", coordinate_transformation_mode = "half_pixel",
                   nearest_mode = "round_prefer_floor";
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false, antialias = false;
  double roi_start = 0.0, roi_end = 1.0;
};

// Per output coordinate o: `taps` source indices index[o*taps + t] (clamped
// to [0, in), as ONNX's edge padding reads) and their weights; outside[o]
// is 1 where tf_crop_and_resize maps o outside the input (the output is
// extrapolation_value).
struct ResizeAxisTaps {
  int64_t taps = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;
};

// Throws std::invalid_argument naming a mode validate() would have refused.
ResizeAxisTaps resize_axis_taps(const ResizeAxisSpec& s);

}  // namespace ampx::opset
