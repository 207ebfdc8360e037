// Whole-graph checks. Reports every problem, each naming its node or value,
// so a user fixing an imported model sees the full list at once.
#pragma once

#include <ampx/ir/graph.hpp>

#include <string>
#include <vector>

namespace ampx {

// Empty when the graph is valid.
std::vector<std::string> verify_graph(const Graph& graph);

// Throws GraphError with all problems on one line ("; "-separated).
void verify_graph_or_throw(const Graph& graph);

}  // namespace ampx
