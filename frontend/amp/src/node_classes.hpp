// Internal to the planner (frontend/amp/src): the source graph's nodes
// grouped once per planning call by everything a device's answer or a cost
// model's prediction depends on, so that each query afterwards is a table
// lookup instead of a lowering and a signature key per question.
#pragma once

#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <vector>

namespace ampx::planner_detail {

// Two nodes are in one class when their op, every input's and output's
// dtype and shape, and every attribute are equal: then the node lowered with
// any dtype substitution (dtypes_as) has one signature_key for both, so a
// memoised answer for one is the answer for the other. (The converse need
// not hold: two classes may share a signature; the memo below them keeps
// that to one question.) Values are grouped by shape the same way, for the
// Casts of a value, whose description is its shape and the two dtypes.
class NodeClasses {
 public:
  // One pass over the graph: a key and a hash lookup per node, a shape
  // lookup per output of a node of a new class (and per value no node
  // produces, or produced later in a graph out of order).
  explicit NodeClasses(const Graph& g);

  int32_t of(NodeId id) const { return node_class_[static_cast<size_t>(id)]; }
  int32_t shape_of(ValueId v) const { return value_shape_[static_cast<size_t>(v)]; }
  size_t classes() const { return classes_; }
  size_t shapes() const { return shapes_; }

 private:
  std::vector<int32_t> node_class_;
  std::vector<int32_t> value_shape_;  // -1: unknown (asked the slow way)
  size_t classes_ = 0, shapes_ = 0;
};

// The float dtypes a plan substitutes, as table columns; -1: any other
// (asked the slow way).
inline constexpr int kDTypeSlots = 3;
inline int dtype_slot(DType d) {
  switch (d) {
    case DType::kF32:
      return 0;
    case DType::kF16:
      return 1;
    case DType::kBF16:
      return 2;
    default:
      return -1;
  }
}

}  // namespace ampx::planner_detail
