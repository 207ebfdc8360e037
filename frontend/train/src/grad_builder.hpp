// Internal to autodiff: emits typed backward nodes into a graph (names made
// unique, output types inferred and checked at once), and the shape helpers
// gradient rules share.
#pragma once

#include <ampx/ir/graph.hpp>

#include <string>
#include <unordered_set>
#include <vector>

namespace ampx::train::detail {

class GradBuilder {
 public:
  explicit GradBuilder(Graph& graph);

  Graph& graph() { return g_; }
  // By value: adding nodes may move the graph's storage.
  TensorType type(ValueId v) const { return g_.value(v).type; }

  // A node named `name` (suffixed "#2", "#3", ... when taken), its outputs
  // typed by shape inference, Node::grad_of set to `grad_of`.
  std::vector<ValueId> add(OpType op, const std::string& name, std::vector<ValueId> inputs,
                           AttrMap attrs, const std::string& grad_of);
  ValueId add1(OpType op, const std::string& name, std::vector<ValueId> inputs, AttrMap attrs,
               const std::string& grad_of) {
    return add(op, name, std::move(inputs), std::move(attrs), grad_of).at(0);
  }

  // A scalar constant (shape []) of a float dtype.
  ValueId scalar(DType dtype, double value, const std::string& name);
  // Zeros of type `t`: a scalar zero expanded to the shape.
  ValueId zeros(TensorType t, const std::string& name, const std::string& grad_of);
  // `grad` summed over the dimensions NumPy broadcasting added or stretched
  // to reach its shape from `target` (then reshaped to `target`).
  ValueId sum_to(ValueId grad, Shape target, const std::string& name, const std::string& grad_of);

 private:
  std::string unique(const std::string& name);
  Graph& g_;
  std::unordered_set<std::string> names_;
};

}  // namespace ampx::train::detail
