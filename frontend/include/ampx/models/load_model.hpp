// Resolves a MODEL argument: `builtin:NAME` today; ONNX files later.
#pragma once

#include <ampx/ir/graph.hpp>

#include <string_view>

namespace ampx {

// Throws std::invalid_argument naming the argument when it cannot be loaded.
Graph load_model(std::string_view spec);

}  // namespace ampx
