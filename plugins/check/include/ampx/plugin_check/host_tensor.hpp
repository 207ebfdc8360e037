// A dense host tensor (dtype, dims, bytes) with exact element access, and
// random non-zero tensors: the inputs and results of the conformance cases.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ampx/half.hpp"
#include "ampx/plugin_support.hpp"
#include "random.hpp"

namespace ampx::check {

inline const char* dtype_str(ampx_dtype dt) {
  return plugin_support::dtype_name(dt);
}
inline size_t elem_size(ampx_dtype dt) {
  return plugin_support::dtype_size(dt);
}

inline int64_t numel_of(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A dense host tensor.
struct Tensor {
  ampx_dtype dtype = AMPX_DTYPE_F32;
  std::vector<int64_t> dims;
  std::vector<unsigned char> bytes;

  int64_t numel() const { return numel_of(dims); }

  static Tensor zeros(ampx_dtype dt, std::vector<int64_t> dims) {
    Tensor t;
    t.dtype = dt;
    t.dims = std::move(dims);
    t.bytes.assign(static_cast<size_t>(t.numel()) * elem_size(dt), 0);
    return t;
  }

  // Stores `v` converted to the dtype (floats rounded to nearest even).
  static Tensor of(ampx_dtype dt, std::vector<int64_t> dims, const std::vector<double>& v) {
    Tensor t = zeros(dt, std::move(dims));
    for (size_t i = 0; i < v.size(); ++i) t.set(i, v[i]);
    return t;
  }

  void set(size_t i, double v) {
    unsigned char* p = bytes.data() + i * elem_size(dtype);
    switch (dtype) {
      case AMPX_DTYPE_F32: {
        const float f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
        break;
      }
      case AMPX_DTYPE_F16: {
        const uint16_t h = float_to_f16_bits(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case AMPX_DTYPE_BF16: {
        const uint16_t h = float_to_bf16_bits(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case AMPX_DTYPE_F64:
        std::memcpy(p, &v, 8);
        break;
      case AMPX_DTYPE_I64: {
        const auto x = static_cast<int64_t>(v);
        std::memcpy(p, &x, 8);
        break;
      }
      case AMPX_DTYPE_I32: {
        const auto x = static_cast<int32_t>(v);
        std::memcpy(p, &x, 4);
        break;
      }
      case AMPX_DTYPE_I8: {
        const auto x = static_cast<int8_t>(v);
        std::memcpy(p, &x, 1);
        break;
      }
      case AMPX_DTYPE_I16: {
        const auto x = static_cast<int16_t>(v);
        std::memcpy(p, &x, 2);
        break;
      }
      case AMPX_DTYPE_U16: {
        const auto x = static_cast<uint16_t>(v);
        std::memcpy(p, &x, 2);
        break;
      }
      case AMPX_DTYPE_U32: {
        const auto x = static_cast<uint32_t>(v);
        std::memcpy(p, &x, 4);
        break;
      }
      case AMPX_DTYPE_U64: {
        const auto x = static_cast<uint64_t>(v);
        std::memcpy(p, &x, 8);
        break;
      }
      default: {
        const auto x = static_cast<uint8_t>(v);
        std::memcpy(p, &x, 1);
        break;
      }
    }
  }

  // Exact value of element i as a double.
  double get(size_t i) const {
    const unsigned char* p = bytes.data() + i * elem_size(dtype);
    switch (dtype) {
      case AMPX_DTYPE_F32: {
        float f;
        std::memcpy(&f, p, 4);
        return f;
      }
      case AMPX_DTYPE_F16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        return f16_bits_to_float(h);
      }
      case AMPX_DTYPE_BF16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        return bf16_bits_to_float(h);
      }
      case AMPX_DTYPE_F64: {
        double d;
        std::memcpy(&d, p, 8);
        return d;
      }
      case AMPX_DTYPE_I64: {
        int64_t x;
        std::memcpy(&x, p, 8);
        return static_cast<double>(x);
      }
      case AMPX_DTYPE_I32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        return x;
      }
      case AMPX_DTYPE_I8: {
        int8_t x;
        std::memcpy(&x, p, 1);
        return x;
      }
      case AMPX_DTYPE_I16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        return x;
      }
      case AMPX_DTYPE_U16: {
        uint16_t x;
        std::memcpy(&x, p, 2);
        return x;
      }
      case AMPX_DTYPE_U32: {
        uint32_t x;
        std::memcpy(&x, p, 4);
        return x;
      }
      case AMPX_DTYPE_U64: {
        uint64_t x;
        std::memcpy(&x, p, 8);
        return static_cast<double>(x);
      }
      default: {
        uint8_t x;
        std::memcpy(&x, p, 1);
        return x;
      }
    }
  }

  std::vector<double> values() const {
    std::vector<double> v(static_cast<size_t>(numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = get(i);
    return v;
  }
};

// Random nonzero values in [-scale, -scale*min_abs] U [scale*min_abs, scale],
// stored in `dt` (so already rounded for 16-bit).
inline Tensor random_tensor(Rng& rng, ampx_dtype dt, std::vector<int64_t> dims,
                            double scale = 1.0) {
  std::vector<double> v = rng.nonzero_vec(static_cast<size_t>(numel_of(dims)));
  for (auto& x : v) x *= scale;
  return Tensor::of(dt, std::move(dims), v);
}

}  // namespace ampx::check
