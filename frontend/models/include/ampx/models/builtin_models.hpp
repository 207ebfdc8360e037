// Models built with the C++ builder, deterministic random weights: the
// workloads every command and test can use without a model file.
#pragma once

#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace ampx {

// "cnn", "mlp", "encoder".
std::vector<std::string_view> builtin_model_names();
// Throws std::invalid_argument listing the known names for an unknown one.
Graph make_builtin_model(std::string_view name);

// The planner's workload (bench/planner_bench.cpp, the planner scaling
// test): residual blocks MatMul -> Add -> Relu with a LayerNorm
// (black-listed under O2) every fifth block, so a plan has Casts to place;
// at least `target_nodes` nodes, small tensors (planning cost does not
// depend on them).
Graph make_residual_blocks(int64_t target_nodes);

}  // namespace ampx
