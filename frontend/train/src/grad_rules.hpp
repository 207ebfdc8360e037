// Internal to autodiff: the gradient rules, one per differentiable op. A
// rule reads the gradients flowing into its node's outputs and gives a
// gradient to each input that needs one, by emitting backward nodes.
#pragma once

#include <ampx/ir/attr_access.hpp>

#include <functional>
#include <string>
#include <vector>

#include "grad_builder.hpp"

namespace ampx::train::detail {

class RuleContext {
 public:
  RuleContext(GradBuilder& b, const Node& node, std::vector<ValueId> output_grads,
              std::vector<bool> needs, std::function<void(size_t, ValueId)> give)
      : b_(b),
        node_(node),
        dy_(std::move(output_grads)),
        needs_(std::move(needs)),
        give_(std::move(give)) {}

  const Node& node() const { return node_; }
  GradBuilder& builder() { return b_; }
  ValueId x(size_t input) const { return node_.inputs.at(input); }
  ValueId y(size_t output) const { return node_.outputs.at(output); }
  // By value: rules add values to the graph, which may move its storage.
  Shape shape(ValueId v) const { return b_.type(v).shape; }
  DType dtype(ValueId v) const { return b_.type(v).dtype; }
  size_t num_inputs() const { return node_.inputs.size(); }
  // The gradient flowing into output i; kNone when none does.
  ValueId dy(size_t output = 0) const { return dy_.at(output); }
  bool needs(size_t input) const { return input < needs_.size() && needs_[input]; }
  // Input i's gradient (ignored when the input needs none).
  void give(size_t input, ValueId grad) {
    if (needs(input)) give_(input, grad);
  }
  // Attributes of the forward node.
  int64_t attr_i(std::string_view name, int64_t def) const {
    return attr_int(node_.attrs, name, def);
  }
  double attr_f(std::string_view name, double def) const {
    return attr_float(node_.attrs, name, def);
  }
  std::vector<int64_t> attr_is(std::string_view name, std::vector<int64_t> def = {}) const {
    return attr_ints(node_.attrs, name, std::move(def));
  }
  std::string attr_s(std::string_view name, std::string def) const {
    return attr_string(node_.attrs, name, std::move(def));
  }

  // A backward node "<forward>/grad/<what>".
  ValueId op(OpType op, const std::string& what, std::vector<ValueId> inputs, AttrMap attrs = {}) {
    return b_.add1(op, name(what), std::move(inputs), std::move(attrs), node_.name);
  }
  std::vector<ValueId> op_multi(OpType op, const std::string& what, std::vector<ValueId> inputs,
                                AttrMap attrs = {}) {
    return b_.add(op, name(what), std::move(inputs), std::move(attrs), node_.name);
  }
  ValueId scalar(double value, const std::string& what) {
    return b_.scalar(dtype(x(0)), value, name(what));
  }
  ValueId zeros_like(ValueId v, const std::string& what) {
    return b_.zeros(b_.type(v), name(what), node_.name);
  }
  ValueId sum_to(ValueId grad, const Shape& target, const std::string& what) {
    return b_.sum_to(grad, target, name(what), node_.name);
  }
  // "node 'X' (Op): <what>" as a GraphError.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string name(const std::string& what) const { return node_.name + "/grad/" + what; }
  GradBuilder& b_;
  const Node& node_;
  std::vector<ValueId> dy_;
  std::vector<bool> needs_;
  std::function<void(size_t, ValueId)> give_;
};

using GradRule = void (*)(RuleContext&);

// nullptr when the op has no gradient rule.
GradRule find_grad_rule(OpType op);

// The families (one file each); each returns nullptr for ops it lacks.
GradRule elementwise_grad_rule(OpType op);
GradRule nn_grad_rule(OpType op);
GradRule data_grad_rule(OpType op);

}  // namespace ampx::train::detail
