#include "tensor_proto.hpp"

#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/onnx/onnx_import.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>

#include "tensor_size.hpp"

namespace ampx::onnx_io {

namespace fs = std::filesystem;
using TP = onnx::TensorProto;

std::optional<DType> dtype_from_onnx(int32_t elem_type) {
  switch (elem_type) {
    case TP::FLOAT:
      return DType::kF32;
    case TP::FLOAT16:
      return DType::kF16;
    case TP::BFLOAT16:
      return DType::kBF16;
    case TP::DOUBLE:
      return DType::kF64;
    case TP::INT64:
      return DType::kI64;
    case TP::INT32:
      return DType::kI32;
    case TP::BOOL:
      return DType::kBool;
    case TP::INT8:
      return DType::kI8;
    case TP::UINT8:
      return DType::kU8;
    case TP::INT16:
      return DType::kI16;
    case TP::UINT16:
      return DType::kU16;
    case TP::UINT32:
      return DType::kU32;
    case TP::UINT64:
      return DType::kU64;
    default:
      return std::nullopt;
  }
}

int32_t onnx_elem_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return TP::FLOAT;
    case DType::kF16:
      return TP::FLOAT16;
    case DType::kBF16:
      return TP::BFLOAT16;
    case DType::kF64:
      return TP::DOUBLE;
    case DType::kI64:
      return TP::INT64;
    case DType::kI32:
      return TP::INT32;
    case DType::kBool:
      return TP::BOOL;
    case DType::kI8:
      return TP::INT8;
    case DType::kU8:
      return TP::UINT8;
    case DType::kI16:
      return TP::INT16;
    case DType::kU16:
      return TP::UINT16;
    case DType::kU32:
      return TP::UINT32;
    case DType::kU64:
      return TP::UINT64;
    case DType::kInvalid:
      break;
  }
  return TP::UNDEFINED;
}

std::string onnx_elem_type_name(int32_t elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  return "type " + std::to_string(elem_type);
}

namespace {

[[noreturn]] void fail(std::string_view what, const std::string& msg) {
  throw OnnxError(fmt::format("{}: {}", what, msg));
}

// Copies the elements of a typed repeated field, narrowed to `size` bytes
// each (int32_data holds f16/bf16 bits, bools and 8-bit ints too).
template <typename Field>
void copy_field(const Field& field, size_t elem_size, std::vector<std::byte>& out) {
  out.resize(static_cast<size_t>(field.size()) * elem_size);
  for (int i = 0; i < field.size(); ++i) {
    const auto v = field.Get(i);
    if (elem_size == sizeof(v)) {
      std::memcpy(out.data() + static_cast<size_t>(i) * elem_size, &v, elem_size);
    } else if (elem_size == 1) {
      const auto b = static_cast<uint8_t>(v);
      std::memcpy(out.data() + static_cast<size_t>(i), &b, 1);
    } else if (elem_size == 2) {
      const auto h = static_cast<uint16_t>(v);
      std::memcpy(out.data() + static_cast<size_t>(i) * 2, &h, 2);
    } else if (elem_size == 4) {
      const auto w = static_cast<uint32_t>(v);
      std::memcpy(out.data() + static_cast<size_t>(i) * 4, &w, 4);
    }
  }
}

// The external data file of `location`, which must stay inside the model's
// directory as ONNX Runtime requires: a relative path, and once every `..`
// and symbolic link is resolved still under the directory (so neither
// /etc/passwd nor ../../etc/shadow nor a link to them is read as weights).
fs::path contained_external_file(const std::string& location, const fs::path& base_dir,
                                 std::string_view what) {
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    fail(what, fmt::format("external data location '{}' is an absolute path; it must be relative "
                           "to the model's directory",
                           fileio::printable_path(location)));
  std::error_code ec;
  const fs::path dir = fs::canonical(base_dir.empty() ? fs::path(".") : base_dir, ec);
  if (ec) fail(what, fmt::format("model directory: {}", ec.message()));
  const fs::path file = fs::weakly_canonical(dir / rel, ec);
  if (ec)
    fail(what, fmt::format("external data location '{}': {}", fileio::printable_path(location),
                           ec.message()));
  const auto [d, f] = std::mismatch(dir.begin(), dir.end(), file.begin(), file.end());
  if (d != dir.end() || f == file.end())
    fail(what, fmt::format("external data location '{}' leads outside the model's directory",
                           fileio::printable_path(location)));
  return file;
}

std::vector<std::byte> read_external(const TP& t, const fs::path& base_dir, std::string_view what,
                                     size_t expected) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = std::stoll(kv.value());
      else if (kv.key() == "length")
        length = std::stoll(kv.value());
    } catch (const std::exception&) {
      fail(what, fmt::format("external data '{}' is not a number: '{}'", kv.key(), kv.value()));
    }
  }
  if (location.empty()) fail(what, "external data without a 'location'");
  const fs::path file = contained_external_file(location, base_dir, what);
  if (length < 0) length = static_cast<int64_t>(expected);
  if (static_cast<uint64_t>(length) != expected)
    fail(what,
         fmt::format("external data length {} but the tensor needs {} bytes", length, expected));
  try {
    const fileio::RegularFile in(file);
    if (offset < 0 || static_cast<uint64_t>(offset) > in.size() ||
        expected > in.size() - static_cast<uint64_t>(offset))
      fail(what, fmt::format("external data file '{}' has {} bytes; offset {} + length {} is "
                             "past its end",
                             fileio::printable_path(location), in.size(), offset, length));
    std::vector<std::byte> out(expected);
    in.read_at(static_cast<uint64_t>(offset), out.data(), expected);
    return out;
  } catch (const fileio::FileError& e) {
    fail(what,
         fmt::format("external data file '{}': {}", fileio::printable_path(location), e.reason()));
  }
}

}  // namespace

TensorData read_tensor(const TP& t, const fs::path& base_dir, std::string_view what,
                       uint64_t max_bytes) {
  TensorData d;
  const auto dtype = dtype_from_onnx(t.data_type());
  if (!dtype)
    fail(what, "element type " + onnx_elem_type_name(t.data_type()) + " is not supported");
  d.type.dtype = *dtype;
  int64_t count = 1;
  for (int64_t dim : t.dims()) {
    if (dim < 0) fail(what, fmt::format("negative dimension {}", dim));
    if (dim > 0 && count > std::numeric_limits<int64_t>::max() / dim)
      fail(what, "dimensions overflow");
    count *= dim;
    d.type.shape.push_back(dim);
  }
  if (auto problem = tensor_size_problem(d.type, max_bytes)) fail(what, *problem);
  const size_t esize = dtype_size(*dtype);
  const size_t expected = static_cast<size_t>(count) * esize;
  if (t.has_segment()) fail(what, "segmented tensors are not supported");
  if (t.data_location() == TP::EXTERNAL) {
    d.bytes = read_external(t, base_dir, what, expected);
    return d;
  }
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != expected)
      fail(what, fmt::format("raw_data has {} bytes, the shape needs {}", raw.size(), expected));
    d.bytes.assign(reinterpret_cast<const std::byte*>(raw.data()),
                   reinterpret_cast<const std::byte*>(raw.data()) + expected);
    return d;
  }
  switch (t.data_type()) {
    case TP::FLOAT:
      copy_field(t.float_data(), esize, d.bytes);
      break;
    case TP::DOUBLE:
      copy_field(t.double_data(), esize, d.bytes);
      break;
    case TP::INT64:
      copy_field(t.int64_data(), esize, d.bytes);
      break;
    case TP::UINT32:  // UINT32 and UINT64 live in uint64_data
    case TP::UINT64:
      copy_field(t.uint64_data(), esize, d.bytes);
      break;
    default:  // INT32, FLOAT16, BFLOAT16, BOOL, (U)INT8, (U)INT16 live in int32_data
      copy_field(t.int32_data(), esize, d.bytes);
      break;
  }
  if (d.bytes.size() != expected)
    fail(what,
         fmt::format("has {} elements of data, the shape needs {}", d.bytes.size() / esize, count));
  return d;
}

void write_tensor(TP& t, const std::string& name, DType dtype, const Shape& shape,
                  std::span<const std::byte> bytes) {
  t.Clear();
  t.set_name(name);
  t.set_data_type(onnx_elem_type(dtype));
  for (int64_t d : shape) t.add_dims(d);
  t.set_raw_data(bytes.data(), bytes.size());
}

}  // namespace ampx::onnx_io
