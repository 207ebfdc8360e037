// How much work a node is, for cost hints and for sizing probes:
// floating-point operations and bytes read + written.
#pragma once

#include "ampx/backend_api.h"

namespace ampx::opset {

struct WorkEstimate {
  double flops = 0;
  double bytes = 0;
  double elements_16bit = 0;  // 16-bit elements converted to/from f32
};

// Never throws; malformed nodes give zeros.
WorkEstimate estimate_work(const ampx_node_desc& node) noexcept;

}  // namespace ampx::opset
