// The graph IR: values (typed, shaped, possibly constant) and nodes (op,
// attributes, input and output values). Nodes refer to values by index, so a
// planner can rewrite a copy of the graph (insert Casts, copies, backward
// nodes) without pointer fix-ups, and per-node side tables (precision,
// placement) are plain vectors indexed by NodeId.
#pragma once

#include <ampx/ir/attribute.hpp>
#include <ampx/ir/dtype.hpp>
#include <ampx/ir/op_type.hpp>
#include <ampx/ir/shape.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampx {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr int32_t kNone = -1;

// Raised for any malformed graph; the message names the node or value.
class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TensorType {
  DType dtype = DType::kInvalid;
  Shape shape;
  friend bool operator==(const TensorType&, const TensorType&) = default;
};

// Immutable, shared bytes of a constant (weights are shared between a graph
// and the plans made from it, never copied).
using ConstantData = std::shared_ptr<const std::vector<std::byte>>;

struct Value {
  std::string name;
  TensorType type;
  NodeId producer = kNone;  // kNone for graph inputs and constants
  ConstantData constant;    // non-null for constants (weights)
  bool is_constant() const { return constant != nullptr; }
  size_t byte_size() const;
};

struct Node {
  std::string name;
  OpType op;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  AttrMap attrs;
  // Where the node came from when it is not an IR op of its own: the ONNX
  // op type it was imported from ("Squeeze" for a Reshape), or the ops of a
  // fused pattern ("ReduceMean+Sub+Pow+..."). Empty for builder graphs and
  // for ONNX ops that map one to one. Shown in plans and reports.
  std::string origin;
  // A backward node (frontend/train): the name of the forward node it
  // differentiates. The planner gives it that node's intended precision
  // (docs/PLANNER.md, "Training"). Empty for forward nodes.
  std::string grad_of;
  // The node computes integer values in f32 (an ONNX quantization op's
  // composition, frontend/onnx): exact only there, so the planner keeps it
  // f32 at every level (intent reason `integer-exact`, docs/PLANNER.md).
  // A training step's synchronized BatchNorm marks its statistics so too
  // (train/sync_batch_norm.hpp; reason `batch-statistics`).
  bool keep_f32 = false;
  // Placement: the index of the device the node runs on, into the device
  // list of the plan that produced the graph (AmpPlan::devices). 0 for
  // single-device plans and for graphs no planner has seen.
  int32_t device = 0;
};

class Graph {
 public:
  ValueId add_input(std::string name, TensorType type);
  ValueId add_constant(std::string name, TensorType type, std::vector<std::byte> bytes);
  ValueId add_constant(std::string name, TensorType type, ConstantData bytes);
  // Adds a node with already-typed outputs; returns its id. No checking here:
  // the builder infers types and the verifier checks whole graphs.
  NodeId add_node(std::string name, OpType op, std::vector<ValueId> inputs,
                  std::vector<TensorType> output_types, AttrMap attrs = {});
  void add_output(ValueId v);
  // Points graph output `index` at another value (rewrites that replace the
  // producer of an output).
  void set_output(size_t index, ValueId v) { outputs_.at(index) = v; }
  // Capacity for a graph of about this size: rewriting passes know it.
  void reserve(size_t nodes, size_t values) {
    nodes_.reserve(nodes);
    values_.reserve(values);
  }

  const Value& value(ValueId id) const { return values_.at(static_cast<size_t>(id)); }
  Value& value(ValueId id) { return values_.at(static_cast<size_t>(id)); }
  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  Node& node(NodeId id) { return nodes_.at(static_cast<size_t>(id)); }

  std::span<const Value> values() const { return values_; }
  std::span<const Node> nodes() const { return nodes_; }
  std::span<const ValueId> inputs() const { return inputs_; }
  std::span<const ValueId> outputs() const { return outputs_; }
  size_t num_values() const { return values_.size(); }
  size_t num_nodes() const { return nodes_.size(); }

  std::string name;
  // Graph inputs whose *values* the graph was built for (the ONNX importer
  // evaluated a shape, axes, scales, k... from them: ImportOptions::
  // input_values): running it with other values needs a new import.
  std::vector<std::string> specialised_on;

  // Nodes in an order where every producer precedes its consumers (stable:
  // insertion order where it already is one). Throws GraphError on a cycle.
  std::vector<NodeId> topological_order() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
};

// Adds a copy of `from`'s node `n` to `out` for a graph rewrite: its inputs
// are map[input] (values of `out`), its outputs keep their types and names
// and are recorded in map[output]; device, origin, grad_of and keep_f32
// are kept. Returns the new node.
NodeId copy_node(Graph& out, const Graph& from, const Node& n, std::vector<ValueId>& map);

}  // namespace ampx
