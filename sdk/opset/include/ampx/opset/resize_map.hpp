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
