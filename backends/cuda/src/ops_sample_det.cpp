// GridSample and Det (docs/OPS.md): shapes and attributes into the kernels'
// parameters (kernels/grid_sample.cu, det.cu).
#include <algorithm>

#include "allocator.hpp"
#include "fn_op.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

using In = std::span<const void* const>;
using Out = std::span<void* const>;

class DetOp final : public CudaOp {
 public:
  DetOp(DeviceContext& dev, ampx_dtype dt, int64_t batch, int64_t m)
      : dev_(dev), dt_(dt), batch_(batch), m_(m) {}
  void launch(In in, Out out) override {
    // Each matrix's double working copy, overwritten by the elimination.
    DeviceMemory a(dev_.allocator(),
                   static_cast<uint64_t>(std::max<int64_t>(batch_ * m_ * m_, 1)) * sizeof(double));
    check_kernel(
        kern::det(dt_, batch_, m_, in[0], out[0], static_cast<double*>(a.get()), dev_.stream()),
        "det");
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  int64_t batch_, m_;
};

}  // namespace

kern::GridSampleParams grid_sample_params(const plugin_support::NodeView& node,
                                          const std::vector<TensorInfo>& in) {
  // Shapes and attributes were checked by the op set (infer_index.cpp);
  // rank <= kMaxRank by the answer, so at most kGridMaxAxes axes.
  const auto& x = in[0].dims;
  const auto& g = in[1].dims;
  kern::GridSampleParams p;
  p.N = x[0];
  p.C = x[1];
  p.axes = static_cast<int32_t>(x.size() - 2);
  for (int32_t a = 0; a < p.axes; ++a) p.in[a] = x[static_cast<size_t>(a) + 2];
  p.points = product(g, 1, g.size() - 1);
  const std::string mode = node.get_string("mode", "linear");
  p.mode = mode == "nearest" ? 0 : mode == "linear" ? 1 : 2;
  const std::string pad = node.get_string("padding_mode", "zeros");
  p.padding = pad == "zeros" ? 0 : pad == "border" ? 1 : 2;
  p.align_corners = node.get_int("align_corners", 0) != 0;
  return p;
}

std::unique_ptr<CudaOp> make_grid_sample(OpContext& c) {
  const kern::GridSampleParams p = grid_sample_params(c.v, c.in);
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("grid_sample",
               [=](In in, Out out) { return kern::grid_sample(dt, p, in[0], in[1], out[0], s); });
}

std::unique_ptr<CudaOp> make_det(OpContext& c) {
  // X [*, M, M] (the op set checked it); M <= kDetMaxM (the answer).
  const auto& x = c.in[0].dims;
  return std::make_unique<DetOp>(c.dev, c.in[0].dtype, product(x, 0, x.size() - 2), x.back());
}

}  // namespace ampx::cuda
