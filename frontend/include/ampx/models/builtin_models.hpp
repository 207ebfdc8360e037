// Models built with the C++ builder, deterministic random weights: the
// workloads every command and test can use without a model file.
#pragma once

#include <ampx/ir/graph.hpp>

#include <string_view>
#include <vector>

namespace ampx {

// "cnn", "mlp", "encoder".
std::vector<std::string_view> builtin_model_names();
// Throws std::invalid_argument listing the known names for an unknown one.
Graph make_builtin_model(std::string_view name);

}  // namespace ampx
