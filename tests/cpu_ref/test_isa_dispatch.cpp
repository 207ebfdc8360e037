// The loops compiled twice (sdk/reference/src/cpu_dispatch.hpp: the baseline
// ISA and AVX2, chosen at run time) give the same bits either way: every
// TensorStats and UpdateGuard case of the catalogue, and the guard with a
// non-finite gradient, run with the AVX2 copy allowed and refused. On a CPU
// without AVX2 both runs take the baseline loops and the test still holds.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "harness.hpp"
#include "op_cases.hpp"

namespace ampx::test {
namespace {

std::vector<Tensor> run_f32(NodeBuilder& b, const std::vector<Tensor>& inputs) {
  const ampx_node_desc& d = b.desc();
  auto kernel = reference::make_kernel(d);
  std::vector<Tensor> outs;
  for (size_t i = 0; i < d.num_outputs; ++i) {
    const ampx_tensor_desc& o = d.outputs[i];
    outs.push_back(Tensor::zeros(o.dtype, std::vector<int64_t>(o.dims, o.dims + o.rank)));
  }
  std::vector<const void*> in_ptrs;
  for (const Tensor& t : inputs) in_ptrs.push_back(t.bytes.data());
  std::vector<void*> out_ptrs;
  for (Tensor& t : outs) out_ptrs.push_back(t.bytes.data());
  kernel->run(in_ptrs, out_ptrs);
  return outs;
}

void expect_same_bits_with_and_without_avx2(op_cases::Case& c, const std::string& what) {
  reference::allow_avx2(true);
  const std::vector<Tensor> wide = run_f32(c.nb, c.inputs);
  reference::allow_avx2(false);
  const std::vector<Tensor> base = run_f32(c.nb, c.inputs);
  reference::allow_avx2(true);
  ASSERT_EQ(wide.size(), base.size());
  for (size_t i = 0; i < wide.size(); ++i)
    EXPECT_EQ(wide[i].bytes, base[i].bytes) << what << ", output " << i;
}

TEST(IsaDispatch, AvxAndBaselineLoopsGiveTheSameBits) {
  int compared = 0;
  for (const auto& [name, make] : op_cases::cases()) {
    if (name.rfind("TensorStats", 0) != 0 && name.rfind("UpdateGuard", 0) != 0) continue;
    Rng r(23);
    op_cases::Case c;
    make(r, AMPX_DTYPE_F32, c);
    expect_same_bits_with_and_without_avx2(c, name);
    ++compared;
    if (name.rfind("UpdateGuard", 0) == 0) {
      // The same guard with an infinity in its largest gradient, past the
      // first block of 2^16 elements.
      c.inputs[1].set(70000, INFINITY);
      expect_same_bits_with_and_without_avx2(c, name + " with an infinity");
      EXPECT_EQ(run_f32(c.nb, c.inputs)[1].values()[0], 0.0) << "not finite";
    }
  }
  EXPECT_GE(compared, 3);
}

}  // namespace
}  // namespace ampx::test
