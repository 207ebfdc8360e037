// The probe's node instances, which must outlive the builder calls (query,
// prepare) and carry their own shapes, attributes and weights: the SDK's
// owning node-description writer (ampx/node_desc_builder.hpp).
#pragma once

#include <ampx/node_desc_builder.hpp>

namespace ampx::capability {

using NodeSpec = plugin_support::NodeDescBuilder;

}  // namespace ampx::capability
