// Capability answers: for one node instance on one device, whether this
// plugin runs it and whether that is a fast 16-bit path. Decided from the
// device (compute capability, whether this build has code for it), cuDNN's
// presence and the node; never from a guess about what "usually" works.
#pragma once

#include <string>

#include "ampx/backend_api.h"
#include "cudnn_library.hpp"
#include "device.hpp"

namespace ampx::cuda {

struct Answer {
  ampx_support support = AMPX_SUPPORT_UNSUPPORTED;
  double cost_us = -1;
  std::string note;
};

// Never throws. Malformed nodes are `unsupported` with the op set's validation
// message as the note.
Answer answer(const ampx_node_desc& node, const DeviceInfo& dev,
              const CudnnLibrary& cudnn) noexcept;

}  // namespace ampx::cuda
