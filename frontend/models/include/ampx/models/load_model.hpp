// Resolves a MODEL argument: `builtin:NAME` or a path to an .onnx file.
#pragma once

#include <ampx/exec/host_tensor.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/onnx/onnx_import.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace ampx {

struct ModelOptions {
  // Shapes of graph inputs by name, pinning symbolic dimensions of ONNX
  // models (`--input-shape NAME=1x3x224x224`).
  std::map<std::string, Shape, std::less<>> input_shapes;
  // Where each came from, for the messages (default "--input-shape").
  std::map<std::string, std::string, std::less<>> input_shape_origins;
  // Values of ONNX graph inputs by name (onnx_io::ImportOptions::
  // input_values): a shape, axes, scales, k... computed from them at run
  // time is evaluated at import, and the graph is built for these values
  // (Graph::specialised_on names the inputs used).
  std::map<std::string, HostTensor, std::less<>> input_values;
  // The lengths of an ONNX model's sequence inputs and its optional inputs
  // given as none (onnx_io::ImportOptions::composite_inputs).
  onnx_io::CompositeInputs composite_inputs;
  // > 0: symbolic batch dimensions (dimension 0) of ONNX inputs take this
  // value (onnx_io::ImportOptions::batch_size).
  int64_t batch_size = 0;
  // The bound on a single tensor of an ONNX model, in bytes; 0: the
  // default (onnx_io::ImportOptions::max_tensor_bytes).
  uint64_t max_tensor_bytes = 0;
};

// Throws std::invalid_argument (a bad argument) or onnx_io::OnnxError (a bad
// file), each one line naming the model and what is wrong.
Graph load_model(std::string_view spec, const ModelOptions& options = {});

// "1x3x224x224" -> {1, 3, 224, 224}; throws std::invalid_argument.
Shape parse_shape(std::string_view dims);

}  // namespace ampx
