// The bound on a single tensor's bytes (kMaxTensorBytes), checked without
// overflow on any shape an untrusted model can give.
#pragma once

#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace ampx::onnx_io {

// The largest single tensor import accepts, in bytes: every graph input,
// initializer, constant and node output is checked against it (with
// overflow-safe arithmetic) before anything is allocated, so a hostile or
// corrupt model gets a one-line error instead of an allocation failure
// (docs/ONNX.md).
inline constexpr uint64_t kMaxTensorBytes = uint64_t{16} << 30;  // 16 GiB

// Why a tensor of this type cannot be imported (a negative dimension, an
// element count or byte size past kMaxTensorBytes), or nullopt when it can.
std::optional<std::string> tensor_size_problem(const TensorType& type);

}  // namespace ampx::onnx_io
