// Shared initializers made separate for training (docs/TRAINING.md,
// "Shared initializers"). An exporter merges initializers of equal value:
// torch.onnx keeps one tensor for every fresh BatchNorm's zero bias and
// running mean, and reads a running variance of ones through an Identity
// of a scale of ones. At inference that is harmless; in training each
// reader updates its own, so each gets its own copy first.
#pragma once

#include <ampx/train/training_graph.hpp>

#include <string>
#include <vector>

namespace ampx::train {

// One operand given its own copy of a shared initializer.
struct SharedStateCopy {
  std::string value;  // the shared initializer, still read by its first reader
  std::string node;   // the node whose operand now reads the copy
  StateRole role;     // what the copy is to that node (state_role_of_use)
  std::string copy;   // "<value>@<node>", "/running_mean" or "/running_var" added for a statistic
};

struct UntiedModel {
  Graph graph;                          // the model, each state operand on its own value
  std::vector<SharedStateCopy> copies;  // in node order; empty when nothing was shared
};

// `forward` where every initializer that becomes training state
// (state_role_of_use) and is read by several nodes, or in two roles by one
// node (a BatchNorm's scale and variance), is read by its first reader in
// topological order and by a copy of the same bytes for each other
// (node, role). Operands of one node in one role keep sharing (a tied
// Mul(w, w)); operands that do not make state are untouched. Names are
// unique in the graph ("#2" appended where one is taken).
UntiedModel untie_shared_state(const Graph& forward, const TrainingGraphOptions& options);

// One line per shared value, its copies in node order:
// "'bn1.bias': 2 copies 'bn1.bias@bn2/running_mean', 'bn1.bias@bn3'".
std::vector<std::string> describe_shared_copies(const std::vector<SharedStateCopy>& copies);

}  // namespace ampx::train
