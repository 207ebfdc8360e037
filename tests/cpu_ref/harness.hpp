// Shared by the cpu_ref kernel tests: host tensors in any dtype, running one
// node through make_kernel(), N-d index helpers, and the tolerance check.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "ampx/cpu_ref/kernels.hpp"
#include "ampx/half.hpp"
#include "ampx/plugin_support.hpp"
#include "node_builder.hpp"
#include "random.hpp"
#include "tolerances.hpp"

namespace ampx::test {

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

// Adds `t` as the next input of `b`.
inline NodeBuilder& add_input(NodeBuilder& b, const Tensor& t) {
  return b.input(t.dtype, t.dims);
}

// Runs the node once through make_kernel(); outputs are shaped and typed
// from the builder's output descriptions.
inline std::vector<Tensor> run_node(NodeBuilder& b, std::initializer_list<const Tensor*> inputs) {
  const ampx_node_desc& d = b.desc();
  auto kernel = cpu_ref::make_kernel(d);
  std::vector<Tensor> outs;
  for (size_t i = 0; i < d.num_outputs; ++i) {
    const ampx_tensor_desc& o = d.outputs[i];
    outs.push_back(Tensor::zeros(o.dtype, std::vector<int64_t>(o.dims, o.dims + o.rank)));
  }
  std::vector<const void*> in_ptrs;
  for (const Tensor* t : inputs) in_ptrs.push_back(t->bytes.data());
  std::vector<void*> out_ptrs;
  for (auto& t : outs) out_ptrs.push_back(t.bytes.data());
  kernel->run(in_ptrs, out_ptrs);
  return outs;
}

// EXPECTs relative_error(got, ref) <= tolerance(got.dtype).
inline void expect_close(const Tensor& got, const std::vector<double>& ref,
                         const std::string& what = "") {
  const std::vector<double> g = got.values();
  const double err = relative_error(g, ref);
  EXPECT_LE(err, tolerance(got.dtype))
      << what << " dtype " << dtype_str(got.dtype) << ": normwise relative error " << err;
}

inline void expect_bits_equal(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.dims, want.dims);
  EXPECT_EQ(got.bytes, want.bytes);
}

// Row-major index helpers for references.
inline std::vector<int64_t> unravel(int64_t i, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = i % dims[d];
    i /= dims[d];
  }
  return idx;
}
inline int64_t ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t i = 0;
  for (size_t d = 0; d < dims.size(); ++d) i = i * dims[d] + idx[d];
  return i;
}

// The float dtypes every op is tested in.
inline auto float_dtypes() {
  return ::testing::Values(AMPX_DTYPE_F32, AMPX_DTYPE_F16, AMPX_DTYPE_BF16);
}
struct DtypeName {
  std::string operator()(const ::testing::TestParamInfo<ampx_dtype>& info) const {
    return dtype_str(info.param);
  }
};

// Expects `fn` to throw E with a message containing every one of `parts`.
template <class E = std::invalid_argument, class Fn>
void expect_throw_msg(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace ampx::test
