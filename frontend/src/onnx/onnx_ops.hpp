// The ONNX op types ampx imports, and how each becomes IR (docs/ONNX.md).
#pragma once

#include "importer.hpp"

#include <string_view>
#include <vector>

namespace ampx::onnx_io {

struct OpConverter {
  // IR ops the conversion emits: the ONNX op is supported only when all of
  // them are in this build's op set.
  std::vector<std::string_view> ir_ops;
  void (*convert)(Importer&, const onnx::NodeProto&);
};

// nullptr for op types of the default domain ampx does not import.
const OpConverter* find_converter(std::string_view op_type);

// True when the converter exists and every IR op it needs is known.
bool is_supported(std::string_view op_type);

}  // namespace ampx::onnx_io
