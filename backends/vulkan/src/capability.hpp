// Capability answers from the device's real features (docs/PLUGINS.md:
// never assume, never lie):
//   - the node must pass op set's validation (opset::validate) and have a plan here
//     (op_plan.hpp), else `unsupported` with the reason;
//   - f32: `native`;
//   - 16-bit: `native` only with shaderFloat16 AND storageBuffer16BitAccess
//     (the V_F16 kernels); 16-bit storage alone runs the V_F16S kernels (f16
//     storage, f32 arithmetic): `emulated`; bf16: `unsupported`.
#pragma once

#include <string>

#include "ampx/backend_api.h"
#include "op_plan.hpp"

namespace ampx::vulkan {

struct Answer {
  ampx_support support = AMPX_SUPPORT_UNSUPPORTED;
  std::string note;
};

Answer answer_node(const ampx_node_desc& node, const PhysicalDevice& dev);
// The plan for prepare: validates like answer_node and throws StatusError
// UNSUPPORTED / INVALID_ARGUMENT with "node '<name>' (<op>): ..." messages.
OpPlan plan_for_prepare(const ampx_node_desc& node, const PhysicalDevice& dev);

}  // namespace ampx::vulkan
