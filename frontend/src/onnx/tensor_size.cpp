#include "tensor_size.hpp"

#include <ampx/plugin_support.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace ampx::onnx_io {

std::optional<std::string> tensor_size_problem(const TensorType& type) {
  int64_t count = 0;
  try {
    count =
        plugin_support::element_count(type.shape.data(), static_cast<int32_t>(type.shape.size()));
  } catch (const std::invalid_argument&) {  // a negative dim or an int64 overflow
    count = -1;
  }
  const uint64_t esize = std::max<uint64_t>(1, dtype_size(type.dtype));
  if (count >= 0 && static_cast<uint64_t>(count) <= kMaxTensorBytes / esize) return std::nullopt;
  for (int64_t d : type.shape)
    if (d < 0) return fmt::format("shape {} has a negative dimension", shape_str(type.shape));
  return fmt::format("{} {} is larger than the {} GiB a single tensor may take",
                     dtype_name(type.dtype), shape_str(type.shape), kMaxTensorBytes >> 30);
}

}  // namespace ampx::onnx_io
