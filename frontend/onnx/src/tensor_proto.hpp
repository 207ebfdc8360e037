// onnx::TensorProto <-> ampx tensors: dtype mapping, every data field the
// ONNX spec allows (raw_data, the typed repeated fields, external data
// files), and writing tensors back for export.
#pragma once

#include <ampx/ir/graph.hpp>

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ampx::onnx_io {

// nullopt for element types ampx has no dtype for (strings, complex, ...).
std::optional<DType> dtype_from_onnx(int32_t elem_type);
int32_t onnx_elem_type(DType dtype);
// "FLOAT16", "STRING", ... for messages.
std::string onnx_elem_type_name(int32_t elem_type);

struct TensorData {
  TensorType type;
  std::vector<std::byte> bytes;  // dense, row-major, little-endian
};

// `base_dir`: where external data locations are relative to. `what` names
// the tensor in errors (OnnxError). `max_bytes`: the bound on its size
// (tensor_bytes_limit()), checked before anything is read.
TensorData read_tensor(const onnx::TensorProto& t, const std::filesystem::path& base_dir,
                       std::string_view what, uint64_t max_bytes);

// Fills `t` (name, dims, data_type, raw_data).
void write_tensor(onnx::TensorProto& t, const std::string& name, DType dtype, const Shape& shape,
                  std::span<const std::byte> bytes);

}  // namespace ampx::onnx_io
