// Which nodes the executor evaluates once at load instead of every run: those
// whose inputs are all weights or computed from weights only (the weight
// Casts of a 16-bit plan). Plans price them at 0, the run description counts
// the rest.
#pragma once

#include <ampx/ir/graph.hpp>

#include <vector>

namespace ampx {

// By NodeId: true for a node evaluated at load.
std::vector<bool> load_time_nodes(const Graph& g);

}  // namespace ampx
