// The conformance kit's and the tests' node builder: the SDK's owning
// node-description writer (ampx/node_desc_builder.hpp).
//
//   ampx::check::NodeBuilder b("Conv2d", "conv1");
//   b.input(AMPX_DTYPE_F32, {1, 3, 8, 8}).input(AMPX_DTYPE_F32, {4, 3, 3, 3})
//    .output(AMPX_DTYPE_F32, {1, 4, 6, 6}).attr_ints("strides", {1, 1});
//   const ampx_node_desc& d = b.desc();  // valid until the builder changes
#pragma once

#include "ampx/node_desc_builder.hpp"

namespace ampx::check {

using NodeBuilder = plugin_support::NodeDescBuilder;

}  // namespace ampx::check
