// The importer ops' CUDA kernels (Attention, LinearAttention, GridSample,
// Det) run on the host through a small emulation of CUDA (emu/common.cuh:
// std::threads for a block's threads, a barrier for __syncthreads), with
// the plugin's own parameter code (ops_attention.cpp, ops_sample_det.cpp),
// against cpu_ref on every catalogue case of those ops, in f32. No GPU
// needed: this checks the kernels' index arithmetic and control flow where
// nothing can run them on a device; CudaOps.* is the check on a GPU.
#include <set>
#include <span>

#include "harness.hpp"
#include "op_cases.hpp"
#include "ops.hpp"

namespace ampx::cuda::kern_emu {
// The emulated launch functions (tests/cuda/CMakeLists.txt generates them
// from backends/cuda/src/kernels/*.cu).
cudaError_t attention(ampx_dtype dt, const kern::AttentionParams& p, const void* q, const void* k,
                      const void* v, const void* mask, const void* lens, void* y, void* qk,
                      float* scratch, cudaStream_t stream);
cudaError_t linear_attention(ampx_dtype dt, const kern::LinearAttentionParams& p, const void* q,
                             const void* k, const void* v, const void* past, const void* decay,
                             const void* beta, void* y, void* present, float* state,
                             cudaStream_t stream);
cudaError_t grid_sample(ampx_dtype dt, const kern::GridSampleParams& p, const void* x,
                        const void* grid, void* y, cudaStream_t stream);
cudaError_t det(ampx_dtype dt, int64_t batch, int64_t m, const void* x, void* y, double* scratch,
                cudaStream_t stream);
}  // namespace ampx::cuda::kern_emu

namespace ampx::test {
namespace {

std::vector<cuda::TensorInfo> infos(const ampx_node_desc& d) {
  std::vector<cuda::TensorInfo> in;
  for (size_t i = 0; i < d.num_inputs; ++i) {
    cuda::TensorInfo t;
    t.dtype = d.inputs[i].dtype;
    t.dims.assign(d.inputs[i].dims, d.inputs[i].dims + d.inputs[i].rank);
    t.numel = plugin_support::element_count(d.inputs[i]);
    in.push_back(std::move(t));
  }
  return in;
}

// Runs the emulated kernel of the case's op; outputs shaped as the node's.
// `attention_blocks` > 0 caps Attention's grid: blocks then walk several
// rows each (the grid-stride loop, a scratch row reused).
std::vector<Tensor> run_emulated(op_cases::Case& c, int64_t attention_blocks = 0) {
  const ampx_node_desc& d = c.nb.desc();
  const plugin_support::NodeView v(d);
  const std::vector<cuda::TensorInfo> in = infos(d);
  std::vector<Tensor> out;
  for (size_t i = 0; i < d.num_outputs; ++i)
    out.push_back(Tensor::zeros(d.outputs[i].dtype,
                                {d.outputs[i].dims, d.outputs[i].dims + d.outputs[i].rank}));
  std::vector<const void*> x;
  for (const Tensor& t : c.inputs) x.push_back(t.bytes.data());
  const auto o = [&](size_t i) -> void* { return i < out.size() ? out[i].bytes.data() : nullptr; };
  const ampx_dtype dt = in[0].dtype;
  cudaError_t e = cudaErrorInvalidValue;
  const std::string op(v.op_type());
  if (op == "Attention") {
    cuda::kern::AttentionParams p = cuda::attention_params(v, in);
    if (attention_blocks > 0) p.blocks = std::min(p.blocks, attention_blocks);
    std::vector<float> scratch(static_cast<size_t>(p.blocks * std::max<int64_t>(p.T, 1)));
    e = cuda::kern_emu::attention(dt, p, x[0], x[1], x[2], p.has_mask ? x[3] : nullptr,
                                  p.has_len ? x[4] : nullptr, o(0), p.mode >= 0 ? o(1) : nullptr,
                                  scratch.data(), nullptr);
  } else if (op == "LinearAttention") {
    const cuda::kern::LinearAttentionParams p = cuda::linear_attention_params(v, in);
    std::vector<float> state(static_cast<size_t>(p.B * p.Hkv * p.dk * p.dv));
    e = cuda::kern_emu::linear_attention(dt, p, x[0], x[1], x[2], x[3], p.gated ? x[4] : nullptr,
                                         p.delta ? x[p.gated ? 5 : 4] : nullptr, o(0), o(1),
                                         state.data(), nullptr);
  } else if (op == "GridSample") {
    e = cuda::kern_emu::grid_sample(dt, cuda::grid_sample_params(v, in), x[0], x[1], o(0), nullptr);
  } else if (op == "Det") {
    const auto& dims = in[0].dims;
    const int64_t m = dims.back(), batch = in[0].numel / std::max<int64_t>(m * m, 1);
    std::vector<double> scratch(static_cast<size_t>(std::max<int64_t>(batch * m * m, 1)));
    e = cuda::kern_emu::det(dt, batch, m, x[0], o(0), scratch.data(), nullptr);
  }
  EXPECT_EQ(e, cudaSuccess);
  return out;
}

// cpu_ref's kernel in its default (f32) mode: the arithmetic the CUDA
// kernels port, coordinate roundings included.
std::vector<Tensor> run_ref(op_cases::Case& c) {
  const ampx_node_desc& d = c.nb.desc();
  auto kernel = reference::make_kernel(d, {});
  std::vector<Tensor> outs;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (size_t i = 0; i < d.num_outputs; ++i)
    outs.push_back(Tensor::zeros(d.outputs[i].dtype,
                                 {d.outputs[i].dims, d.outputs[i].dims + d.outputs[i].rank}));
  for (const Tensor& t : c.inputs) in_ptrs.push_back(t.bytes.data());
  for (Tensor& t : outs) out_ptrs.push_back(t.bytes.data());
  kernel->run(in_ptrs, out_ptrs);
  return outs;
}

TEST(CudaEmulatedKernels, MatchCpuRef) {
  const std::set<std::string> ops = {"Attention", "LinearAttention", "GridSample", "Det"};
  int checked = 0;
  for (const auto& [name, make] : op_cases::cases()) {
    Rng rng(17);
    op_cases::Case c;
    make(rng, AMPX_DTYPE_F32, c);
    if (ops.count(c.nb.op_type()) == 0) continue;
    SCOPED_TRACE(name);
    const std::vector<Tensor> want = run_ref(c);
    const std::vector<Tensor> got = run_emulated(c);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i].values(), name);
    if (c.nb.op_type() == "Attention") {
      const std::vector<Tensor> two = run_emulated(c, 2);
      for (size_t i = 0; i < two.size(); ++i) EXPECT_EQ(two[i].bytes, got[i].bytes) << name;
    }
    ++checked;
  }
  EXPECT_GE(checked, 15) << "the catalogue's cases of these ops";
}

}  // namespace
}  // namespace ampx::test
