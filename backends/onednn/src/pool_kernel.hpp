// MaxPool, AveragePool and GlobalAveragePool on channel-blocked activations.
//
// oneDNN 2.6's jit pooling on nChw8c took 2.5-3 x ONNX Runtime's time on
// this project's AVX2 machine (ResNet-18's stem max-pool: 1.07 ms against
// 0.34 ms; SqueezeNet's three: 1.6 ms against 0.6 ms), and a plain loop over
// the 8- or 16-channel vectors of the blocked layout runs at ORT's speed. So
// when the input's current shadow (layout_store.hpp) is f32 nChw8c or
// nChw16c, this kernel pools it straight into an output shadow in the same
// layout: every window is a max or sum of whole channel vectors, compiled
// for AVX2 / AVX-512 and chosen at run time. Padded channel lanes (C not a
// multiple of the block) are pooled like the others: oneDNN keeps them zero
// and zero pools to zero. Anything else (plain input, 16-bit, a staged
// output, blocked activations off) runs the oneDNN primitive as before.
#pragma once

#include <memory>

#include "ampx/host_plugin.hpp"
#include "context.hpp"
#include "dnnl_util.hpp"

namespace ampx::onednn {

// One pooling window geometry, in the terms of docs/OPS.md.
struct PoolGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;  // the node's explicit pads
  bool max = true;
  bool include_pad = false;  // AveragePool count_include_pad
};

PoolGeometry pool_geometry(const plugin_support::NodeView& node);

// Pools rows [r0, r1) of the blocked tensor (a row: one output row of one
// channel block of one image; rows = n * ceil(c / block) * oh). `block` is
// 8 or 16. NaN propagates through max, as in cpu_ref.
void pool_blocked_rows(const PoolGeometry& g, int block, const float* src, float* dst, int64_t r0,
                       int64_t r1);

class BlockedPoolKernel final : public host_plugin::HostCopyKernel {
 public:
  // `primitive`: the oneDNN kernel for the node, run whenever the input is
  // not in a blocked f32 shadow.
  BlockedPoolKernel(std::shared_ptr<Context> ctx, const plugin_support::NodeView& node,
                    std::unique_ptr<host_plugin::HostCopyKernel> primitive, int threads);

  void run_tracked(std::span<const void* const> inputs, std::span<void* const> outputs,
                   std::span<const bool> staged_output) override;
  // The last run's: the blocked loop, or the primitive's.
  std::string implementation() const override;

 private:
  std::shared_ptr<Context> ctx_;
  std::unique_ptr<host_plugin::HostCopyKernel> primitive_;
  bool last_ran_loop_ = false;
  PoolGeometry g_;
  bool f32_;
  int threads_;
  dims_t in_dims_, out_dims_;
  uint64_t in_bytes_, out_bytes_;
};

}  // namespace ampx::onednn
