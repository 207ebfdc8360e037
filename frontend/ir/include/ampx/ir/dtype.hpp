// Element types of the IR. Values equal the C ABI's ampx_dtype so a DType
// crosses the plugin boundary with a static_cast and nothing else.
#pragma once

#include <ampx/backend_api.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ampx {

enum class DType : int {
  kInvalid = AMPX_DTYPE_INVALID,
  kF32 = AMPX_DTYPE_F32,
  kF16 = AMPX_DTYPE_F16,
  kBF16 = AMPX_DTYPE_BF16,
  kF64 = AMPX_DTYPE_F64,
  kI64 = AMPX_DTYPE_I64,
  kI32 = AMPX_DTYPE_I32,
  kBool = AMPX_DTYPE_BOOL,
  kI8 = AMPX_DTYPE_I8,
  kU8 = AMPX_DTYPE_U8,
  kI16 = AMPX_DTYPE_I16,
  kU16 = AMPX_DTYPE_U16,
  kU32 = AMPX_DTYPE_U32,
  kU64 = AMPX_DTYPE_U64,
};

// "f32", "f16", "bf16", "f64", "i64", "i32", "bool", "i8", "u8", "i16",
// "u16", "u32", "u64".
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
size_t dtype_size(DType t);
inline bool is_float(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
}
inline bool is_16bit_float(DType t) {
  return t == DType::kF16 || t == DType::kBF16;
}
inline bool is_integer(DType t) {
  return t == DType::kI64 || t == DType::kI32 || t == DType::kI16 || t == DType::kI8 ||
         t == DType::kU64 || t == DType::kU32 || t == DType::kU16 || t == DType::kU8;
}
inline bool is_unsigned(DType t) {
  return t == DType::kU64 || t == DType::kU32 || t == DType::kU16 || t == DType::kU8;
}
inline ampx_dtype to_c(DType t) {
  return static_cast<ampx_dtype>(t);
}

}  // namespace ampx
