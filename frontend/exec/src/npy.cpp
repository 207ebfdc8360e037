#include <ampx/exec/npy.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/half.hpp>

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

namespace ampx {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw NpyError(fmt::format("'{}': {}", path.string(), what));
}

// NumPy's descr strings, little-endian (or byte-order free for 1-byte types).
std::optional<DType> dtype_from_descr(std::string_view d) {
  if (d == "<f4") return DType::kF32;
  if (d == "<f2") return DType::kF16;
  if (d == "<f8") return DType::kF64;
  if (d == "<i8") return DType::kI64;
  if (d == "<i4") return DType::kI32;
  if (d == "|i1" || d == "<i1") return DType::kI8;
  if (d == "|u1" || d == "<u1") return DType::kU8;
  if (d == "|b1" || d == "<b1") return DType::kBool;
  if (d == "<i2") return DType::kI16;
  if (d == "<u2") return DType::kU16;
  if (d == "<u4") return DType::kU32;
  if (d == "<u8") return DType::kU64;
  return std::nullopt;
}

const char* descr(DType t) {
  switch (t) {
    case DType::kF32:
      return "<f4";
    case DType::kF16:
      return "<f2";
    case DType::kF64:
      return "<f8";
    case DType::kI64:
      return "<i8";
    case DType::kI32:
      return "<i4";
    case DType::kI8:
      return "|i1";
    case DType::kU8:
      return "|u1";
    case DType::kBool:
      return "|b1";
    case DType::kI16:
      return "<i2";
    case DType::kU16:
      return "<u2";
    case DType::kU32:
      return "<u4";
    case DType::kU64:
      return "<u8";
    default:
      return nullptr;
  }
}

// The value of 'key' in the header dict, as its raw text.
std::string dict_value(const fs::path& path, const std::string& header, const std::string& key) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) fail(path, "header has no '" + key + "'");
  auto colon = header.find(':', k);
  if (colon == std::string::npos) fail(path, "malformed header");
  ++colon;
  while (colon < header.size() && header[colon] == ' ') ++colon;
  if (header[colon] == '(') {
    const auto close = header.find(')', colon);
    if (close == std::string::npos) fail(path, "malformed shape in header");
    return header.substr(colon, close - colon + 1);
  }
  if (header[colon] == '\'') {
    const auto close = header.find('\'', colon + 1);
    if (close == std::string::npos) fail(path, "malformed header");
    return header.substr(colon + 1, close - colon - 1);
  }
  const auto end = header.find_first_of(",}", colon);
  return header.substr(colon, end - colon);
}

}  // namespace

HostTensor read_npy(const fs::path& path) {
  // A regular file only: a FIFO would block, /dev/zero would never end.
  const std::string bytes = [&] {
    try {
      return fileio::read_regular_file(path);
    } catch (const fileio::FileError& e) {
      fail(path, e.reason());
    }
  }();
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    fail(path, "not a .npy file (no NUMPY magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(path, "truncated header");
    for (int i = 0; i < 4; ++i)
      header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    fail(path, fmt::format("unsupported .npy format version {}", major));
  }
  if (offset + header_len > bytes.size()) fail(path, "truncated header");
  const std::string header = bytes.substr(offset, header_len);
  const std::string d = dict_value(path, header, "descr");
  const auto dtype = dtype_from_descr(d);
  if (!dtype)
    fail(path, fmt::format("dtype '{}' is not supported (float32, float16, float64, int64, int32, "
                           "int8, uint8, bool; little-endian)",
                           d));
  if (dict_value(path, header, "fortran_order").find("True") != std::string::npos)
    fail(path, "Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  const std::string shape_text = dict_value(path, header, "shape");
  if (shape_text.empty() || shape_text.front() != '(')
    fail(path, "malformed shape " + shape_text + " in header (expected a tuple)");
  const size_t data_at = offset + header_len;
  const size_t available = bytes.size() - data_at;
  // Dimensions and their product are checked against the data there is, so
  // no count can overflow and nothing is allocated beyond the file's size.
  Shape shape;
  size_t elements = 1;
  bool beyond = false;  // the product exceeds the data, whatever follows
  size_t pos = 1;
  while (pos < shape_text.size()) {
    while (pos < shape_text.size() && (shape_text[pos] == ' ' || shape_text[pos] == ',')) ++pos;
    if (pos >= shape_text.size() || shape_text[pos] == ')') break;
    size_t used = 0;
    int64_t dim = -1;
    try {
      dim = std::stoll(shape_text.substr(pos), &used);
    } catch (const std::exception&) {
      fail(path, "malformed shape " + shape_text);
    }
    if (dim < 0) fail(path, fmt::format("negative dimension {} in shape {}", dim, shape_text));
    shape.push_back(dim);
    if (dim == 0) {
      elements = 0;
      beyond = false;
    } else if (!beyond && elements != 0) {
      beyond = static_cast<uint64_t>(dim) > available / elements;
      if (!beyond) elements *= static_cast<size_t>(dim);
    }
    pos += used;
  }
  // elements <= available here unless `beyond`: the byte count cannot wrap.
  const size_t element_size = dtype_size(*dtype);
  if (beyond || elements * element_size != available)
    fail(path, fmt::format("has {} bytes of data, but shape {} of {} needs {}", available,
                           shape_text, dtype_name(*dtype),
                           beyond ? "more" : std::to_string(elements * element_size)));
  HostTensor t;
  t.name = path.stem().string();
  t.type = {*dtype, shape};
  t.data.resize(available);
  if (available > 0) std::memcpy(t.data.data(), bytes.data() + data_at, available);
  return t;
}

void write_npy(const fs::path& path, const HostTensor& tensor) {
  HostTensor widened;
  const HostTensor* t = &tensor;
  if (tensor.type.dtype == DType::kBF16) {  // no NumPy dtype: exact f32
    widened.type = {DType::kF32, tensor.type.shape};
    const size_t n = tensor.data.size() / 2;
    widened.data.resize(n * 4);
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, tensor.data.data() + 2 * i, 2);
      const float f = bf16_bits_to_float(h);
      std::memcpy(widened.data.data() + 4 * i, &f, 4);
    }
    t = &widened;
  }
  const char* d = descr(t->type.dtype);
  if (!d) fail(path, fmt::format("dtype {} has no .npy form", dtype_name(t->type.dtype)));
  std::string shape = "(";
  for (int64_t dim : t->type.shape) shape += std::to_string(dim) + ", ";
  if (t->type.shape.size() > 1) shape.resize(shape.size() - 2);
  if (t->type.shape.size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", d, shape);
  // Version 1: data 64-byte aligned, header ends with a newline.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(t->data.data()), t->data.size());
  fileio::write_file_atomically(path, out);
}

}  // namespace ampx
