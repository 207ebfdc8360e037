// The state of one ONNX import: the graph being built, the ONNX name of
// every value, and the helpers each op's converter (onnx_ops.cpp) uses to
// read inputs and attributes and to emit IR nodes, folding those whose
// inputs are all constant.
#pragma once

#include <ampx/onnx/onnx_import.hpp>

#include <onnx/onnx_pb.h>

#include "composite_value.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ampx::onnx_io {

class Importer {
 public:
  Importer(std::filesystem::path path, const ImportOptions& options);
  Graph run(ImportStats* stats);

  // --- for converters; `n` is the node being converted.
  int64_t opset() const { return opset_; }
  // The version the model imports of another domain (ai.onnx.ml,
  // ai.onnx.preview.training); 0 when it imports none.
  int64_t domain_opset(std::string_view domain) const {
    const auto it = domain_opsets_.find(std::string(domain));
    return it == domain_opsets_.end() ? 0 : it->second;
  }
  [[noreturn]] void fail(const std::string& what) const;  // names the current node
  // fail() for a constant computed at run time from the graph's inputs,
  // whose values were not given: ValueNeededError.
  [[noreturn]] void fail_needs_value(const std::string& what) const;
  // `v` as int64, or fail naming `what`: shape arithmetic on an untrusted
  // model's dims is done in 128 bits and checked here.
  int64_t to_i64(__int128 v, std::string_view what) const;

  bool has_input(const onnx::NodeProto& n, int i) const;
  // Whether a value of this ONNX name exists so far (an input, an
  // initializer, an earlier node's output; a tensor, sequence or optional).
  bool has_value(const std::string& name) const {
    return values_.contains(name) || composites_.contains(name);
  }
  // The value of that name so far; kNone when there is none.
  ValueId value_named(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? kNone : it->second;
  }
  // IR nodes in the graph so far (the unroll bound counts them).
  size_t node_count() const { return graph_.num_nodes(); }
  ValueId input(const onnx::NodeProto& n, int i) const;  // required
  const Value& value(ValueId v) const { return graph_.value(v); }
  const TensorType& type(ValueId v) const { return graph_.value(v).type; }
  // A constant integer (i64/i32) input as int64 values; `what` names it.
  // The largest graph input whose given value known_value() uses.
  static constexpr int64_t kMaxSpecialisingElements = 64;
  // The value of v where it is known at import: a constant, or computed
  // from constants and the graph inputs ImportOptions::input_values gives
  // (of at most kMaxSpecialisingElements elements)
  // (evaluated once, by the reference kernels; the inputs used are
  // recorded in Graph::specialised_on). nullptr when it depends on an input
  // whose value is not given.
  ConstantData known_value(ValueId v) const;
  // known_value() of input i, or an error naming it (`what`) and the cure.
  ConstantData required_value(const onnx::NodeProto& n, int i, const char* what) const;
  // known_value() of input i of an op whose output shape depends on that
  // value (NonZero, Compress, Unique, NonMaxSuppression: evaluated or
  // specialised at import), or an error naming it (`what`) and why.
  ConstantData value_for_output_shape(const onnx::NodeProto& n, int i, const char* what) const;
  std::vector<int64_t> const_ints(const onnx::NodeProto& n, int i, const char* what) const;
  std::vector<double> const_floats(const onnx::NodeProto& n, int i, const char* what) const;
  // A constant input that must hold exactly one value (a scalar or [1]).
  double const_scalar(const onnx::NodeProto& n, int i, const char* what) const;
  bool output_used(const onnx::NodeProto& n, int i) const;

  std::optional<int64_t> attr_int(const onnx::NodeProto& n, const char* name) const;
  std::optional<float> attr_float(const onnx::NodeProto& n, const char* name) const;
  std::optional<std::vector<int64_t>> attr_ints(const onnx::NodeProto& n, const char* name) const;
  std::optional<std::vector<float>> attr_floats(const onnx::NodeProto& n, const char* name) const;
  std::optional<std::string> attr_string(const onnx::NodeProto& n, const char* name) const;
  const onnx::TensorProto* attr_tensor(const onnx::NodeProto& n, const char* name) const;
  int64_t attr_int_or(const onnx::NodeProto& n, const char* name, int64_t def) const {
    return attr_int(n, name).value_or(def);
  }
  float attr_float_or(const onnx::NodeProto& n, const char* name, float def) const {
    return attr_float(n, name).value_or(def);
  }
  std::string attr_string_or(const onnx::NodeProto& n, const char* name, std::string def) const {
    return attr_string(n, name).value_or(std::move(def));
  }

  // Adds IR op `op_name` (folded when every input is constant) and returns
  // its outputs. The first IR node of an ONNX node takes its name.
  std::vector<ValueId> emit(std::string_view op_name, std::vector<ValueId> inputs,
                            AttrMap attrs = {});
  ValueId emit1(std::string_view op_name, std::vector<ValueId> inputs, AttrMap attrs = {}) {
    return emit(op_name, std::move(inputs), std::move(attrs)).at(0);
  }
  ValueId constant(TensorType type, std::vector<std::byte> bytes);
  ValueId constant_i64(std::span<const int64_t> values, Shape shape);
  // Converts a subgraph of the current node (an If branch, one iteration of
  // a Loop or Scan body) into the graph being built, its nodes reading outer
  // values by name and its inputs bound to `inputs` (as many as it
  // declares), and returns its outputs. `what` names it in errors. A
  // subgraph inlined again (the next iteration) shares its initializers,
  // and `suffix` ("@2") keeps its value names unique.
  std::vector<ValueId> inline_subgraph(const onnx::GraphProto& g, const std::string& what,
                                       std::span<const ValueId> inputs = {},
                                       const std::string& suffix = "");
  // The same with inputs and outputs that may be sequences or optionals
  // (composite_value.hpp): If branches and Loop bodies.
  std::vector<HeldValue> inline_subgraph_held(const onnx::GraphProto& g, const std::string& what,
                                              std::span<const HeldValue> inputs = {},
                                              const std::string& suffix = "");
  // Binds ONNX output i of the current node to `v`.
  void bind(const onnx::NodeProto& n, int i, ValueId v);

  // --- sequences and optionals (composite_value.hpp, onnx_sequences.cpp)
  // The sequence or optional of that name; nullptr for a tensor or none.
  const CompositeValue* composite_named(const std::string& name) const;
  // Input i as a sequence or optional, or an error naming it (`what`).
  const CompositeValue& composite_input(const onnx::NodeProto& n, int i, const char* what) const;
  // Input i as what it holds, a tensor or a sequence or optional.
  HeldValue held_input(const onnx::NodeProto& n, int i) const;
  void bind_composite(const onnx::NodeProto& n, int i, CompositeValue v);
  void bind_held(const onnx::NodeProto& n, int i, HeldValue v);
  // Marks the current IR node(s) as coming from a different ONNX op type.
  void set_origin(std::string origin) { origin_ = std::move(origin); }
  // Marks the current node's IR nodes Node::keep_f32 (the planner keeps
  // them f32): integer arithmetic written in f32.
  void set_keep_f32() { keep_f32_ = true; }

  // Fails, naming `what`, when a tensor of this type is past max_tensor_bytes()
  // (or its size overflows): call it before allocating one.
  void check_size(const TensorType& type, std::string_view what) const;

  const std::filesystem::path& base_dir() const { return base_dir_; }
  // The bound on a single tensor's bytes in force (tensor_bytes_limit()).
  uint64_t max_tensor_bytes() const { return max_tensor_bytes_; }
  std::string where_tensor(const std::string& tensor) const;

 private:
  // `what` with the model and, inside a node, the node.
  std::string located(const std::string& what) const;
  void load();
  void read_opset();
  void check_legacy_opset() const;
  void read_initializers();
  void read_inputs();
  // A graph input of sequence or optional type (composite_io.cpp).
  void read_composite_input(const onnx::ValueInfoProto& in, std::vector<std::string>& names);
  // Reads a tensor input's type (pinned shapes, symbols) and adds it.
  ValueId add_tensor_input(const std::string& name, const onnx::TypeProto_Tensor& tt);
  // A graph output holding a sequence or optional: its tensors as outputs.
  void bind_composite_output(const std::string& name, const CompositeValue& c,
                             std::unordered_set<ValueId>& seen);
  void add_output(ValueId v, const std::string& name, std::unordered_set<ValueId>& seen);
  void check_supported() const;
  void convert_nodes();
  void convert_graph_nodes(const onnx::GraphProto& g);
  void bind_outputs();
  ValueId output_copy(ValueId v, const std::string& output);
  Graph finish();
  std::string unique_node_name(const onnx::NodeProto& n, int index);
  void convert_node(const onnx::NodeProto& n);
  [[noreturn]] void fail_in(std::string_view ir_node, std::string_view ir_op,
                            const std::string& what) const;

  std::filesystem::path path_, base_dir_;
  const ImportOptions& options_;
  uint64_t max_tensor_bytes_;
  onnx::ModelProto model_;
  int64_t opset_ = 0;  // of the default domain; 0: not imported (no node of it)
  std::map<std::string, int64_t> domain_opsets_;  // the other domains'
  Graph graph_;
  std::unordered_map<std::string, ValueId> values_;  // ONNX name -> value
  // ONNX name -> sequence or optional (never also in values_).
  std::unordered_map<std::string, CompositeValue> composites_;
  std::unordered_set<std::string> node_names_;
  std::unordered_map<std::string, int> uses_;  // ONNX value name -> consumers (+ graph outputs)
  // The node being converted.
  const onnx::NodeProto* node_ = nullptr;
  std::string node_name_;
  std::string origin_;
  bool keep_f32_ = false;
  // Nodes an ampx export marked integer-exact (model_metadata.hpp).
  std::unordered_set<std::string> keep_f32_nodes_;
  int emitted_ = 0;
  std::unordered_set<ValueId> fresh_;  // values the current node made
  std::string value_suffix_;           // of the iteration being inlined
  // known_value()'s evaluations, and the inputs they read.
  mutable std::unordered_map<ValueId, ConstantData> known_;
  mutable std::vector<std::string> specialised_on_;
  // The initializers of the subgraphs inlined so far, by subgraph and name.
  std::map<std::pair<const onnx::GraphProto*, std::string>, ValueId> subgraph_constants_;
  ImportStats stats_;
};

}  // namespace ampx::onnx_io
