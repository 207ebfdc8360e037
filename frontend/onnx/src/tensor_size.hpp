// The bound on a single tensor's bytes (kMaxTensorBytes), checked without
// overflow on any shape an untrusted model can give.
#pragma once

#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace ampx::onnx_io {

// The default bound on a single tensor's bytes, and the most any bound may
// be: every graph input, initializer, constant and node output is checked
// against the bound in force (with overflow-safe arithmetic) before
// anything is allocated, so a hostile or corrupt model gets a one-line
// error instead of an allocation failure (docs/ONNX.md). It also keeps the
// double-to-int64 casts of Resize and Range in range.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{16} << 30;  // 16 GiB

// The bound in force: `requested` (ImportOptions::max_tensor_bytes) when it
// is not 0, else kMaxTensorBytes or the machine's physical memory if less.
uint64_t tensor_bytes_limit(uint64_t requested);

// Why a tensor of this type cannot be imported (a negative dimension, an
// element count or byte size past `limit`, counting zero dimensions as 1),
// or nullopt when it can.
std::optional<std::string> tensor_size_problem(const TensorType& type, uint64_t limit);

}  // namespace ampx::onnx_io
