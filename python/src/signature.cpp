// ampx._ampx.model_signature(path): an ONNX model's declared inputs and
// outputs (name, ONNX Runtime's type name, dimensions with their symbols),
// read before any import: ampx.InferenceSession's get_inputs() and
// get_outputs(), and the inputs it pins from a run's arrays when a
// dimension is symbolic. The model itself is imported by Session.plan.
#include "bindings.hpp"

#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/onnx/onnx_import.hpp>

#include <onnx/onnx_pb.h>

#include <nanobind/stl/string.h>

#include <set>

namespace ampx::python {
namespace {

const char* onnx_type_name(int32_t elem) {
  switch (elem) {
    case onnx::TensorProto::FLOAT:
      return "tensor(float)";
    case onnx::TensorProto::FLOAT16:
      return "tensor(float16)";
    case onnx::TensorProto::BFLOAT16:
      return "tensor(bfloat16)";
    case onnx::TensorProto::DOUBLE:
      return "tensor(double)";
    case onnx::TensorProto::INT64:
      return "tensor(int64)";
    case onnx::TensorProto::INT32:
      return "tensor(int32)";
    case onnx::TensorProto::INT16:
      return "tensor(int16)";
    case onnx::TensorProto::INT8:
      return "tensor(int8)";
    case onnx::TensorProto::UINT8:
      return "tensor(uint8)";
    case onnx::TensorProto::UINT16:
      return "tensor(uint16)";
    case onnx::TensorProto::UINT32:
      return "tensor(uint32)";
    case onnx::TensorProto::UINT64:
      return "tensor(uint64)";
    case onnx::TensorProto::BOOL:
      return "tensor(bool)";
    case onnx::TensorProto::STRING:
      return "tensor(string)";
    default:
      return "tensor(unknown)";
  }
}

// ONNX Runtime's type name ("tensor(float)", "seq(tensor(int64))",
// "optional(seq(tensor(float)))"); the innermost tensor type's dimensions
// go to `dims`: a dimension is its value, its symbol, or None.
std::string type_name(const onnx::TypeProto& t, nb::list& dims) {
  if (t.has_sequence_type()) return "seq(" + type_name(t.sequence_type().elem_type(), dims) + ")";
  if (t.has_optional_type())
    return "optional(" + type_name(t.optional_type().elem_type(), dims) + ")";
  if (!t.has_tensor_type()) return "unknown";
  const auto& tt = t.tensor_type();
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value())
      dims.append(d.dim_value());
    else if (d.has_dim_param() && !d.dim_param().empty())
      dims.append(d.dim_param());
    else
      dims.append(nb::none());
  }
  return onnx_type_name(tt.elem_type());
}

// (name, type, dims); a sequence's or optional's dims are its tensors'.
nb::tuple describe(const onnx::ValueInfoProto& v) {
  nb::list dims;
  const std::string type = type_name(v.type(), dims);
  return nb::make_tuple(v.name(), type, dims);
}

nb::tuple model_signature(const std::string& path) {
  onnx::ModelProto model;
  {
    nb::gil_scoped_release release;
    std::string bytes;
    try {
      bytes = fileio::read_regular_file(path);
    } catch (const fileio::FileError& e) {
      throw ModelFailure("model '" + fileio::printable_path(path) + "': " + e.reason());
    }
    if (!model.ParseFromString(bytes) || !model.has_graph())
      throw ModelFailure("model '" + fileio::printable_path(path) +
                         "': not a valid ONNX model (truncated or corrupt protobuf)");
  }
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  nb::list inputs, outputs;
  for (const auto& v : model.graph().input())
    if (!initializers.contains(v.name())) inputs.append(describe(v));
  for (const auto& v : model.graph().output()) outputs.append(describe(v));
  return nb::make_tuple(inputs, outputs);
}

}  // namespace

void register_signature(nb::module_& m) {
  m.def("model_signature", &model_signature, nb::arg("path"),
        "An ONNX model's declared inputs and outputs: (inputs, outputs), each a list of "
        "(name, type, dims) with ONNX Runtime's type names and symbolic dimensions as str.");
  m.def(
      "onnx_opsets",
      [] { return nb::make_tuple(onnx_io::kMinImportOpset, onnx_io::kMaxImportOpset); },
      "The opsets of ONNX's default domain the importer reads: (oldest, newest).");
}

}  // namespace ampx::python
