// The later ONNX ops' CUDA kernels (src/ops_onnx.cpp) on paths the shared
// catalogue does not reach: integer CumProd (wrapping, every width),
// BitShift edges on narrow and unsigned types, BitwiseNot of u64, BitCast
// of integers into floats, RotaryEmbedding 4-D halves with i32 positions
// and 3-D interleaved with neither, RMSNorm rows past 1024 threads, Col2Im
// on a 3-D image, MaxPoolIndices with a NaN; and a position out of range as
// a status with the node. Against cpu_ref; integers bit for bit. Without a
// GPU every test skips with the plugin's reason.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cuda_harness.hpp"
#include "cuda_onnx_ops.hpp"
#include "op_cases.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;

TEST(CudaOnnxOps, MorePathsMatchCpuRef) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin cuda(plugin_path("cuda")), ref(plugin_path("cpu_ref"));
  const bool bf16 = compute_capability(cuda) >= 80;
  for (const OnnxExtraCase& e : onnx_extra_cases()) {
    for (ampx_dtype dt : {F32, F16, BF16}) {
      if (dt != F32 && !e.float_case) break;
      if (dt == BF16 && !bf16) break;
      SCOPED_TRACE(e.name + " " + dtype_str(dt));
      Rng rng(23);
      Case c;
      e.make(rng, dt, c);
      const ampx_capability cap = cuda.capability(c.nb);
      ASSERT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
      const auto got = run_on(cuda, c.nb, c.inputs);
      const auto want = run_on(ref, c.nb, c.inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].dtype, want[i].dtype);
        if (plugin_support::is_integer_dtype(got[i].dtype) || c.nb.op_type() == "BitCast") {
          expect_bits_equal(got[i], want[i]);
        } else {
          expect_close(got[i], want[i].values(), e.name);
        }
      }
    }
  }
}

TEST(CudaOnnxOps, APositionOutOfRangeIsAStatusWithTheNode) {
  AMPX_REQUIRE_CUDA_DEVICE();
  Plugin cuda(plugin_path("cuda"));
  Rng r(41);
  Case c;
  c.nb = NodeBuilder("RotaryEmbedding", "rope1");
  in(c, rnd(r, F32, {1, 1, 3, 4}));
  in(c, rnd(r, F32, {5, 2}));
  in(c, rnd(r, F32, {5, 2}));
  in(c, Tensor::of(I64, {1, 3}, {0, 5, 1}));
  c.nb.output(F32, {1, 1, 3, 4});
  try {
    check::run_node(*cuda.api, cuda.plugin, 0, c.nb.desc(), c.inputs);
    ADD_FAILURE() << "a position out of range ran";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node 'rope1'"), std::string::npos) << what;
    EXPECT_NE(what.find("position_ids"), std::string::npos) << what;
  }
  // The device runs the next node.
  Case relu;
  relu.nb = NodeBuilder("Relu", "r");
  in(relu, Tensor::of(F32, {3}, {-1.0, 0.5, 2.0}));
  relu.nb.output(F32, {3});
  EXPECT_EQ(run_on(cuda, relu.nb, relu.inputs)[0].values(), (std::vector<double>{0.0, 0.5, 2.0}));
}

}  // namespace
}  // namespace ampx::test
