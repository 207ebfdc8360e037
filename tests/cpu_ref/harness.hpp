// Shared by the cpu_ref kernel tests: host tensors in any dtype, running one
// node through make_kernel(), N-d index helpers, and the tolerance check.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <ampx/plugin_check/host_tensor.hpp>
#include "ampx/half.hpp"
#include "ampx/plugin_support.hpp"
#include "ampx/reference/kernels.hpp"
#include "node_builder.hpp"
#include "random.hpp"
#include "tolerances.hpp"

namespace ampx::test {

// Adds `t` as the next input of `b`.
inline NodeBuilder& add_input(NodeBuilder& b, const Tensor& t) {
  return b.input(t.dtype, t.dims);
}

// Runs the node once through make_kernel() in the float64 mode cpu_ref runs
// (f64 for every float op; nothing else changes); outputs are shaped and
// typed from the builder's output descriptions.
inline std::vector<Tensor> run_node(NodeBuilder& b, std::span<const Tensor* const> inputs) {
  const ampx_node_desc& d = b.desc();
  auto kernel = reference::make_kernel(d, {.f64_compute = true});
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
inline std::vector<Tensor> run_node(NodeBuilder& b, std::initializer_list<const Tensor*> inputs) {
  return run_node(b, std::span<const Tensor* const>(inputs.begin(), inputs.size()));
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
