// Attention and LinearAttention (docs/OPS.md): shapes and attributes into
// the kernels' parameters (kernels/attention.cu, linear_attention.cu), and
// the f32 scratch each launch borrows from the caching allocator.
#include <algorithm>
#include <cmath>

#include "allocator.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

using In = std::span<const void* const>;
using Out = std::span<void* const>;

// Rows in flight: enough blocks to fill any GPU, fewer when a row's T
// floats of scratch would take more than 256 MiB in all.
int64_t attention_blocks(int64_t rows, int64_t t) {
  constexpr int64_t kMaxBlocks = 4096, kScratchBytes = int64_t{256} << 20;
  const int64_t by_memory = std::max<int64_t>(1, kScratchBytes / (std::max<int64_t>(t, 1) * 4));
  return std::max<int64_t>(1, std::min({rows, kMaxBlocks, by_memory}));
}

class AttentionOp final : public CudaOp {
 public:
  AttentionOp(DeviceContext& dev, ampx_dtype dt, kern::AttentionParams p)
      : dev_(dev), dt_(dt), p_(p) {}
  void launch(In in, Out out) override {
    DeviceMemory scratch(dev_.allocator(),
                         static_cast<uint64_t>(p_.blocks * std::max<int64_t>(p_.T, 1)) * 4);
    check_kernel(
        kern::attention(dt_, p_, in[0], in[1], in[2], p_.has_mask ? in[3] : nullptr,
                        p_.has_len ? in[4] : nullptr, out[0], p_.mode >= 0 ? out[1] : nullptr,
                        static_cast<float*>(scratch.get()), dev_.stream()),
        "attention");
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::AttentionParams p_;
};

class LinearAttentionOp final : public CudaOp {
 public:
  LinearAttentionOp(DeviceContext& dev, ampx_dtype dt, kern::LinearAttentionParams p)
      : dev_(dev), dt_(dt), p_(p) {}
  void launch(In in, Out out) override {
    const int64_t cells = std::max<int64_t>(p_.B * p_.Hkv * p_.dk * p_.dv, 1);
    DeviceMemory state(dev_.allocator(), static_cast<uint64_t>(cells) * sizeof(float));
    const size_t gate = p_.gated ? 4 : 0, beta = p_.gated ? 5 : 4;
    check_kernel(
        kern::linear_attention(dt_, p_, in[0], in[1], in[2], in[3], p_.gated ? in[gate] : nullptr,
                               p_.delta ? in[beta] : nullptr, out[0], out[1],
                               static_cast<float*>(state.get()), dev_.stream()),
        "linear_attention");
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::LinearAttentionParams p_;
};

}  // namespace

kern::AttentionParams attention_params(const plugin_support::NodeView& node,
                                       const std::vector<TensorInfo>& in) {
  // Shapes and attributes were checked by the op set (infer_attention.cpp).
  const auto &q = in[0].dims, &k = in[1].dims, &v = in[2].dims;
  kern::AttentionParams p;
  p.B = q[0], p.Hq = q[1], p.S = q[2], p.E = q[3], p.Hkv = k[1], p.T = k[2], p.Ev = v[3];
  if (in.size() > 3) {
    const TensorInfo& m = in[3];
    p.has_mask = true;
    p.mask_bool = m.dtype == AMPX_DTYPE_BOOL;
    // Right-aligned into [B, Hq, S, Tm]: strides 0 where broadcast.
    std::vector<int64_t> d(4 - m.dims.size(), 1);
    d.insert(d.end(), m.dims.begin(), m.dims.end());
    p.Tm = d[3];
    p.mi = d[2] == 1 ? 0 : d[3];
    p.mh = d[1] == 1 ? 0 : d[2] * d[3];
    p.mb = d[0] == 1 ? 0 : d[1] * d[2] * d[3];
  }
  if (in.size() > 4) {
    p.has_len = true;
    p.len64 = in[4].dtype == AMPX_DTYPE_I64;
  }
  // As the reference: the attributes in double, then the compute type.
  p.scale = static_cast<float>(node.get_float("scale", 1.0 / std::sqrt(double(p.E))));
  p.softcap = static_cast<float>(node.get_float("softcap", 0.0));
  p.causal = node.get_int("is_causal", 0) != 0;
  p.past = node.get_int("past_length", 0);
  p.left = node.get_int("left_window", -1);
  p.right = node.get_int("right_window", -1);
  p.mode = static_cast<int32_t>(node.get_int("qk_output", -1));
  p.softmax_f64 = node.get_int("softmax_f64", 0) != 0;
  p.blocks = attention_blocks(p.B * p.Hq * p.S, p.T);
  return p;
}

kern::LinearAttentionParams linear_attention_params(const plugin_support::NodeView& node,
                                                    const std::vector<TensorInfo>& in) {
  // Shapes and attributes were checked by the op set (infer_attention.cpp).
  kern::LinearAttentionParams p;
  const std::string rule = node.get_string("update_rule", "gated_delta");
  p.gated = rule == "gated" || rule == "gated_delta";
  p.delta = rule == "delta" || rule == "gated_delta";
  p.Hq = node.get_int("q_num_heads", 0);
  p.Hkv = node.get_int("kv_num_heads", 0);
  p.B = in[0].dims[0];
  p.T = in[0].dims[1];
  p.dk = in[0].dims[2] / p.Hq;
  p.dv = in[2].dims[2] / p.Hkv;
  size_t i = 4;
  if (p.gated) p.decay_per_key = in[i++].dims[2] == p.Hkv * p.dk;
  if (p.delta) p.beta_per_head = in[i].dims[2] == p.Hkv;
  const double scale = node.get_float("scale", 0.0);
  p.scale = static_cast<float>(scale == 0.0 ? 1.0 / std::sqrt(static_cast<double>(p.dk)) : scale);
  return p;
}

std::unique_ptr<CudaOp> make_attention(OpContext& c) {
  return std::make_unique<AttentionOp>(c.dev, c.in[0].dtype, attention_params(c.v, c.in));
}

std::unique_ptr<CudaOp> make_linear_attention(OpContext& c) {
  return std::make_unique<LinearAttentionOp>(c.dev, c.in[0].dtype,
                                             linear_attention_params(c.v, c.in));
}

}  // namespace ampx::cuda
