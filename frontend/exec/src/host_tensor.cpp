#include <ampx/exec/host_tensor.hpp>
#include <ampx/half.hpp>
#include <ampx/opset/tolerances.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

namespace ampx {
namespace {
template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Element at p of dtype dt, widened to double.
double element_as_double(DType dt, const std::byte* p, const std::string& name) {
  switch (dt) {
    case DType::kF32:
      return load<float>(p);
    case DType::kF64:
      return load<double>(p);
    case DType::kF16:
      return f16_bits_to_float(load<uint16_t>(p));
    case DType::kBF16:
      return bf16_bits_to_float(load<uint16_t>(p));
    case DType::kI64:
      return static_cast<double>(load<int64_t>(p));
    case DType::kI32:
      return load<int32_t>(p);
    case DType::kI8:
      return load<int8_t>(p);
    case DType::kU8:
    case DType::kBool:
      return load<uint8_t>(p);
    case DType::kI16:
      return load<int16_t>(p);
    case DType::kU16:
      return load<uint16_t>(p);
    case DType::kU32:
      return load<uint32_t>(p);
    case DType::kU64:
      return static_cast<double>(load<uint64_t>(p));
    case DType::kInvalid:
      break;
  }
  throw std::invalid_argument("tensor '" + name + "' has no dtype");
}

// The element count, checked against the bytes held.
size_t checked_count(const HostTensor& t) {
  const size_t n = static_cast<size_t>(element_count(t.type.shape));
  if (t.data.size() != n * dtype_size(t.type.dtype))
    throw std::invalid_argument("tensor '" + t.name + "': " + std::to_string(t.data.size()) +
                                " bytes for " + std::string(dtype_name(t.type.dtype)) +
                                shape_str(t.type.shape));
  return n;
}

}  // namespace

std::optional<NonFiniteElement> first_nonfinite(const HostTensor& t) {
  if (!is_float(t.type.dtype)) return std::nullopt;
  const size_t n = checked_count(t);
  const size_t es = dtype_size(t.type.dtype);
  const std::byte* p = t.data.data();
  for (size_t i = 0; i < n; ++i, p += es) {
    const double x = element_as_double(t.type.dtype, p, t.name);
    if (!std::isfinite(x)) return NonFiniteElement{i, std::isnan(x)};
  }
  return std::nullopt;
}

std::vector<double> to_doubles(const HostTensor& t) {
  const size_t n = checked_count(t);
  const size_t es = dtype_size(t.type.dtype);
  std::vector<double> out(n);
  const std::byte* p = t.data.data();
  for (size_t i = 0; i < n; ++i, p += es) out[i] = element_as_double(t.type.dtype, p, t.name);
  return out;
}

std::vector<HostTensor> random_inputs(const Graph& graph, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<HostTensor> out;
  for (ValueId v : graph.inputs()) {
    const Value& val = graph.value(v);
    HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
    const size_t n = static_cast<size_t>(element_count(val.type.shape));
    std::byte* p = t.data.data();
    for (size_t i = 0; i < n; ++i) {
      float f = uni(rng);
      if (f == 0.0f) f = 0.5f;
      const auto small = static_cast<int64_t>(rng() % 8);
      switch (val.type.dtype) {
        case DType::kF32:
          std::memcpy(p + 4 * i, &f, 4);
          break;
        case DType::kF64: {
          const double d = f;
          std::memcpy(p + 8 * i, &d, 8);
          break;
        }
        case DType::kF16: {
          const uint16_t h = float_to_f16_bits(f);
          std::memcpy(p + 2 * i, &h, 2);
          break;
        }
        case DType::kBF16: {
          const uint16_t h = float_to_bf16_bits(f);
          std::memcpy(p + 2 * i, &h, 2);
          break;
        }
        case DType::kI64:
          std::memcpy(p + 8 * i, &small, 8);
          break;
        case DType::kI32: {
          const auto s = static_cast<int32_t>(small);
          std::memcpy(p + 4 * i, &s, 4);
          break;
        }
        case DType::kBool:
          p[i] = std::byte(small & 1);
          break;
        case DType::kI8:
        case DType::kU8:
          p[i] = std::byte(small);
          break;
        case DType::kI16:
        case DType::kU16: {
          const auto s = static_cast<uint16_t>(small);
          std::memcpy(p + 2 * i, &s, 2);
          break;
        }
        case DType::kU32: {
          const auto s = static_cast<uint32_t>(small);
          std::memcpy(p + 4 * i, &s, 4);
          break;
        }
        case DType::kU64:
          std::memcpy(p + 8 * i, &small, 8);
          break;
        case DType::kInvalid:
          throw std::invalid_argument("input '" + val.name + "' has no dtype");
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Element by element, without widening whole tensors (a 1 GiB f32 output
// would take 2 GiB more as doubles, twice).
double max_relative_error(const HostTensor& got, const HostTensor& ref) {
  const size_t n = checked_count(got);
  if (n != checked_count(ref))
    throw std::invalid_argument("cannot compare '" + got.name + "': " + std::to_string(n) + " vs " +
                                std::to_string(checked_count(ref)) + " elements");
  const size_t gs = dtype_size(got.type.dtype), rs = dtype_size(ref.type.dtype);
  // Non-finite elements match only their like, and then add nothing (an
  // infinite reference element must not make every error relative to it
  // zero; a NaN must not drop out of the comparisons), as
  // opset::relative_error(); only the all-zero reference differs (here the
  // absolute error).
  opset::RelativeErrorAccumulator acc;
  for (size_t i = 0; i < n; ++i) {
    const double g = element_as_double(got.type.dtype, got.data.data() + i * gs, got.name);
    const double r = element_as_double(ref.type.dtype, ref.data.data() + i * rs, ref.name);
    if (!acc.add(g, r)) return std::numeric_limits<double>::infinity();
  }
  return acc.max_ref() > 0 ? acc.max_err() / acc.max_ref() : acc.max_err();
}

uint64_t host_tensor_bytes(const Graph& graph) {
  uint64_t bytes = 0;
  for (ValueId v : graph.inputs()) bytes += graph.value(v).byte_size();
  for (ValueId v : graph.outputs()) bytes += graph.value(v).byte_size();
  return bytes;
}

std::vector<HostTensorView> views_of(std::span<const HostTensor> tensors) {
  std::vector<HostTensorView> views;
  views.reserve(tensors.size());
  for (const HostTensor& t : tensors) views.push_back({t.name, t.type, t.data});
  return views;
}

}  // namespace ampx
