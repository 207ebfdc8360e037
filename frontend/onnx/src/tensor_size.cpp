#include "tensor_size.hpp"

#include <ampx/plugin_support.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace ampx::onnx_io {

namespace {

// "16 GiB", "512 MiB", "1000 bytes": the bound as people write it.
std::string size_text(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0)
    return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

}  // namespace

uint64_t tensor_bytes_limit(uint64_t requested) {
  if (requested != 0) return requested;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kMaxTensorBytes;
  return std::min(kMaxTensorBytes, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page));
}

std::optional<std::string> tensor_size_problem(const TensorType& type, uint64_t limit) {
  // Zero dimensions count as 1: an empty tensor holds nothing, but kernels
  // and plugins still build per-dimension tables (a Pad's index maps), so
  // [0 x 2^56] would cost as much as [2^56] (found by tests/fuzz).
  Shape sized = type.shape;
  for (int64_t& d : sized) d = d == 0 ? 1 : d;
  int64_t count = 0;
  try {
    count = plugin_support::element_count(sized.data(), static_cast<int32_t>(sized.size()));
  } catch (const std::invalid_argument&) {  // a negative dim or an int64 overflow
    count = -1;
  }
  const uint64_t esize = std::max<uint64_t>(1, dtype_size(type.dtype));
  if (count >= 0 && static_cast<uint64_t>(count) <= limit / esize) return std::nullopt;
  for (int64_t d : type.shape)
    if (d < 0) return fmt::format("shape {} has a negative dimension", shape_str(type.shape));
  if (std::find(type.shape.begin(), type.shape.end(), 0) != type.shape.end())
    return fmt::format(
        "{} {} holds no elements, but its other dimensions multiply past the {} a single tensor "
        "may take (--max-tensor-bytes; kernels build tables over them)",
        dtype_name(type.dtype), shape_str(type.shape), size_text(limit));
  return fmt::format("{} {} is larger than the {} a single tensor may take (--max-tensor-bytes)",
                     dtype_name(type.dtype), shape_str(type.shape), size_text(limit));
}

}  // namespace ampx::onnx_io
