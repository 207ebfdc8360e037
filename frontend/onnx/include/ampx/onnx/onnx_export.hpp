// ONNX models out: a graph (normally an AmpPlan's effective graph, with its
// Casts and 16-bit nodes) written as an opset-17 ONNX model of the default
// domain. IR ops without an ONNX twin are decomposed (Gelu -> Erf form,
// fused epilogues -> the op after), attributes that opset 17 wants as
// inputs become i64 initializers, and Casts of constants are folded: the
// initializer is stored converted and no Cast node is emitted
// (docs/ONNX.md).
#pragma once

#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ampx::onnx_io {

struct ExportOptions {
  std::string producer_version = "0.1.0";
  // Model doc_string: what the graph is (e.g. "ampx plan O2 f16 on cpu_ref:0").
  std::string doc;
  // Names for the graph outputs, in order (empty: the graph's own). A plan
  // whose output is computed in 16-bit ends in a Cast back whose value the
  // planner names "y.to_f32"; the source graph's names put "y" back on the
  // model's output, and the 16-bit value inside is renamed.
  std::vector<std::string> output_names;
  // When non-empty, the batch dimension is written as this symbolic
  // dimension (dim_param) instead of its value, so ONNX Runtime runs the
  // model at any batch size: dimension 0 of every graph input, and every
  // dimension of another value that follows it. Which ones follow it is
  // found by inferring the graph's types again with another batch size:
  // a dimension equal to the batch becomes the symbol, any other that
  // changed is left unknown. A graph that fixes its batch (a Reshape to a
  // literal batch) throws OnnxError naming the node.
  std::string batch_dim;
};

// What export wrote, for `ampx export --format json` and the tests.
struct ExportStats {
  int nodes = 0;               // ONNX nodes
  int nodes_16bit = 0;         // non-Cast nodes with a 16-bit float output
  int casts = 0;               // Cast nodes (on non-constant values)
  int folded_casts = 0;        // Casts of constants, stored converted instead
  int initializers = 0;        // all initializers (weights and op inputs)
  int initializers_16bit = 0;  // f16/bf16 ones
  int64_t initializer_bytes = 0;
  int64_t initializer_16bit_bytes = 0;
  int64_t model_bytes = 0;  // the serialised model
};

// The model as serialised bytes, checked by the ONNX checker and strict
// shape inference (types included). Throws OnnxError, one line naming the
// node, for anything it cannot express.
std::string export_onnx(const Graph& graph, const ExportOptions& options = {},
                        ExportStats* stats = nullptr);

// export_onnx() written atomically to `path`.
void write_onnx(const Graph& graph, const std::string& path, const ExportOptions& options = {},
                ExportStats* stats = nullptr);

}  // namespace ampx::onnx_io
