#include <ampx/exec/host_tensor.hpp>
#include <ampx/half.hpp>

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
}  // namespace

std::vector<double> to_doubles(const HostTensor& t) {
  const size_t n = static_cast<size_t>(element_count(t.type.shape));
  const size_t es = dtype_size(t.type.dtype);
  if (t.data.size() != n * es)
    throw std::invalid_argument("tensor '" + t.name + "': " + std::to_string(t.data.size()) +
                                " bytes for " + std::string(dtype_name(t.type.dtype)) +
                                shape_str(t.type.shape));
  std::vector<double> out(n);
  const std::byte* p = t.data.data();
  for (size_t i = 0; i < n; ++i, p += es) {
    switch (t.type.dtype) {
      case DType::kF32:
        out[i] = load<float>(p);
        break;
      case DType::kF64:
        out[i] = load<double>(p);
        break;
      case DType::kF16:
        out[i] = f16_bits_to_float(load<uint16_t>(p));
        break;
      case DType::kBF16:
        out[i] = bf16_bits_to_float(load<uint16_t>(p));
        break;
      case DType::kI64:
        out[i] = static_cast<double>(load<int64_t>(p));
        break;
      case DType::kI32:
        out[i] = load<int32_t>(p);
        break;
      case DType::kI8:
        out[i] = load<int8_t>(p);
        break;
      case DType::kU8:
      case DType::kBool:
        out[i] = load<uint8_t>(p);
        break;
      case DType::kInvalid:
        throw std::invalid_argument("tensor '" + t.name + "' has no dtype");
    }
  }
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
        case DType::kInvalid:
          throw std::invalid_argument("input '" + val.name + "' has no dtype");
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

double max_relative_error(const HostTensor& got, const HostTensor& ref) {
  const auto g = to_doubles(got);
  const auto r = to_doubles(ref);
  if (g.size() != r.size())
    throw std::invalid_argument("cannot compare '" + got.name + "': " + std::to_string(g.size()) +
                                " vs " + std::to_string(r.size()) + " elements");
  constexpr double inf = std::numeric_limits<double>::infinity();
  double max_err = 0, max_ref = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    // Non-finite elements match only their like, and then add nothing (an
    // infinite reference element must not make every error relative to it
    // zero; a NaN must not drop out of the comparisons), as
    // opset::relative_error().
    if (std::isnan(g[i]) || std::isnan(r[i])) {
      if (std::isnan(g[i]) != std::isnan(r[i])) return inf;
      continue;
    }
    if (std::isinf(g[i]) || std::isinf(r[i])) {
      if (g[i] != r[i]) return inf;
      continue;
    }
    max_err = std::max(max_err, std::abs(g[i] - r[i]));
    max_ref = std::max(max_ref, std::abs(r[i]));
  }
  return max_ref > 0 ? max_err / max_ref : max_err;
}

}  // namespace ampx
