#include <ampx/ir/dtype.hpp>

#include <array>
#include <utility>

namespace ampx {
namespace {
constexpr std::array<std::pair<DType, std::string_view>, 13> kNames{{
    {DType::kF32, "f32"},
    {DType::kF16, "f16"},
    {DType::kBF16, "bf16"},
    {DType::kF64, "f64"},
    {DType::kI64, "i64"},
    {DType::kI32, "i32"},
    {DType::kBool, "bool"},
    {DType::kI8, "i8"},
    {DType::kU8, "u8"},
    {DType::kI16, "i16"},
    {DType::kU16, "u16"},
    {DType::kU32, "u32"},
    {DType::kU64, "u64"},
}};
}  // namespace

std::string_view dtype_name(DType t) {
  for (const auto& [d, n] : kNames)
    if (d == t) return n;
  return "invalid";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& [d, n] : kNames)
    if (n == name) return d;
  return std::nullopt;
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF64:
    case DType::kI64:
    case DType::kU64:
      return 8;
    case DType::kF32:
    case DType::kI32:
    case DType::kU32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
    case DType::kU16:
      return 2;
    case DType::kBool:
    case DType::kI8:
    case DType::kU8:
      return 1;
    case DType::kInvalid:
      break;
  }
  return 0;
}

}  // namespace ampx
