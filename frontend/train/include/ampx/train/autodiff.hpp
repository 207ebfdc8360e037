// Reverse-mode automatic differentiation over the graph IR. The backward
// pass is more nodes of the same graph, ordinary ops of docs/OPS.md (the
// "Training ops" and the forward ops they are built from), so the AMP
// planner and placement treat it exactly as they treat the forward pass.
#pragma once

#include <ampx/ir/graph.hpp>

#include <span>
#include <vector>

namespace ampx::train {

// Appends to `graph` the nodes that compute d(loss)/d(v) for every v in
// `wrt`, and returns those gradient values in the same order. `loss` is a
// float scalar (shape []) of the graph; `seed` is d(loss)/d(loss), a value
// of the loss's type (a constant 1, or the loss scale). A value the loss
// does not depend on gets a zero gradient.
//
// Every node on a path from a `wrt` value to the loss needs a gradient rule
// (docs/TRAINING.md lists them); one without is a GraphError naming the
// node, never a silent zero. Backward nodes are named
// "<forward node>/grad/<what>" and carry Node::grad_of.
//
// `contributions`, when given, receives every gradient a forward node's
// backward produced for one of its inputs, in backward order: the overflow
// diagnostics (docs/TRAINING.md) probe them to name the layer whose
// backward first went non-finite.
struct GradientContribution {
  NodeId forward;  // the forward node whose gradient rule produced it
  size_t input;    // of that node
  ValueId grad;
};
std::vector<ValueId> append_gradients(Graph& graph, ValueId loss, ValueId seed,
                                      std::span<const ValueId> wrt,
                                      std::vector<GradientContribution>* contributions = nullptr);

}  // namespace ampx::train
