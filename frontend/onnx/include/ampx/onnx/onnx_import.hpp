// ONNX models in: a .onnx file (opsets 7-28 of the default domain, and the
// ops of ai.onnx.ml and ai.onnx.preview.training docs/ONNX.md lists) becomes
// an ampx Graph with only real compute left. Shapes are static: symbolic
// input dimensions must be pinned by the caller. Everything computable at
// import (shape subgraphs, Constant nodes, all-constant nodes) is folded by
// running the reference kernels, and decomposed LayerNorm/GELU patterns are
// fused back into their IR ops (docs/ONNX.md).
#pragma once

#include <ampx/exec/host_tensor.hpp>
#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace ampx::onnx_io {

// Every import failure; the message is one line naming the file and the
// node, tensor or input at fault.
class OnnxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An import that stops at a constant computed at run time from the graph's
// inputs (a Reshape's shape, Resize's scales, TopK's k, a Loop's condition,
// NonZero's input) whose value it was not given: with the inputs' values
// (ImportOptions::input_values) it may go further. ShapeCachedModel plans
// such a model at its first run, from the run's values.
class ValueNeededError : public OnnxError {
 public:
  using OnnxError::OnnxError;
};

// The opsets of the default domain the importer reads: what ONNX Runtime
// loads (it refuses opsets past the newest it knows, and guarantees nothing
// below 7; docs/ONNX.md has the per-version forms). Another is refused.
inline constexpr int64_t kMinImportOpset = 7;
// A model of opset 1 to 6 is imported as opset 7 when every op in it has,
// at its opset, the definition it has at opset 7 (ONNX's schema registry
// says which); a node of an op that changed at 7 (Add's legacy
// broadcasting, ...) is refused, naming it.
inline constexpr int64_t kMinLegacyOpset = 1;
inline constexpr int64_t kMaxImportOpset = 28;

// How a run gives the model's sequence and optional graph inputs (docs/ONNX.md,
// "Sequences and optionals"): ampx's graphs take tensors, so a sequence
// input NAME of length n is imported as the tensor inputs NAME[0] ...
// NAME[n-1] (each pinned and fed as any input), and an optional input
// given as none is no input at all. A graph output is flattened the same
// way: a sequence's elements are the outputs NAME[0], NAME[1], ...; an
// optional holding a tensor is the output NAME, one holding none no output.
struct CompositeInputs {
  // Every sequence input's length (an optional input holding a sequence too).
  std::map<std::string, int64_t, std::less<>> sequence_lengths;
  // The optional inputs given as none; an optional input not named here
  // holds a value (a tensor input of its own name, or a sequence).
  std::set<std::string, std::less<>> absent;

  bool empty() const { return sequence_lengths.empty() && absent.empty(); }
  auto operator<=>(const CompositeInputs&) const = default;
};

// The name of element `index` of sequence input or output `name` ("x[2]").
std::string sequence_element_name(std::string_view name, int64_t index);

struct ImportOptions {
  // Full shapes for graph inputs by name ("--input-shape x=1x3x224x224"):
  // they replace symbolic dimensions; fixed ones must agree.
  std::map<std::string, Shape, std::less<>> input_shapes;
  // Where a pinned shape came from, for the messages (default
  // "--input-shape"; `ampx run` pins inputs from their --input files). A
  // shape with an origin that names no input of the model is ignored: the
  // caller reports it against the array it read.
  std::map<std::string, std::string, std::less<>> input_shape_origins;
  // Values of graph inputs by name (`ampx run`'s --input arrays, a
  // ShapeCachedModel's run inputs). Where a node needs a constant (a
  // Reshape's shape, Resize's scales or sizes, a Reduce's axes, TopK's k, a
  // Loop's trip count, an If's condition) that is computed at run time from
  // graph inputs, the importer evaluates it from these values with the
  // reference kernels and builds the graph for them; Graph::specialised_on
  // names the inputs it used. Only inputs of at most 64 elements are used
  // so (shape-like values: a condition on an image stays a run-time If).
  // Inputs not needed that way stay inputs.
  std::map<std::string, HostTensor, std::less<>> input_values;
  // The lengths of sequence inputs and the optional inputs given as none
  // (a sequence input without a length is an error naming it).
  CompositeInputs composite_inputs;
  // > 0: a symbolic dimension 0 (the batch) of an input that input_shapes
  // does not name takes this value (`ampx train` passes --batch).
  int64_t batch_size = 0;
  // The largest single tensor accepted, in bytes (--max-tensor-bytes); 0:
  // the default, 16 GiB or the machine's physical memory if that is less
  // (docs/ONNX.md).
  uint64_t max_tensor_bytes = 0;
};

// What import did, for `ampx plan` and the tests.
struct ImportStats {
  int64_t opset = 0;
  std::string producer;    // producer_name and version
  int onnx_nodes = 0;      // nodes converted: the graph's, and those of the If branches taken
  int folded_nodes = 0;    // IR nodes computed at import (became constants)
  int fused_patterns = 0;  // decomposed LayerNorm/GELU recognised
  int ir_nodes = 0;        // nodes of the imported graph
  // Inputs whose values the graph was built for (Graph::specialised_on).
  std::vector<std::string> specialised_on;
};

Graph import_onnx(const std::filesystem::path& path, const ImportOptions& options = {},
                  ImportStats* stats = nullptr);

// True when the path names an ONNX file by its extension (".onnx").
bool is_onnx_path(std::string_view spec);

}  // namespace ampx::onnx_io
