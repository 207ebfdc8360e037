// Concat as chunk copies, in the producers' layout.
//
// Every input of a Concat is, per index of the dimensions before the axis,
// one contiguous chunk of the output: plain row-major along any axis, and
// channel-blocked (nChw8c / nChw16c) along the channels when every input's
// channel count is a multiple of the block (no padding). The kernel copies
// those chunks with memcpy. oneDNN 2.6's concat primitive ("simple:any")
// copies element by element and took 10 x ONNX Runtime's time on
// SqueezeNet's fire modules.
//
// With blocked activations on (layout_store.hpp): when every input has a
// current shadow in one such blocked layout, the output is produced in it
// too (a shadow, plain bytes stale), so a conv -> concat -> conv chain
// never goes through plain; otherwise inputs are made plain first.
#pragma once

#include <memory>
#include <vector>

#include "ampx/host_plugin.hpp"
#include "context.hpp"
#include "dnnl_util.hpp"

namespace ampx::onednn {

class ConcatKernel final : public host_plugin::HostCopyKernel {
 public:
  ConcatKernel(std::shared_ptr<Context> ctx, const plugin_support::NodeView& node);

  void run_tracked(std::span<const void* const> inputs, std::span<void* const> outputs,
                   std::span<const bool> staged_output) override;
  std::string implementation() const override { return "loop: chunk copies"; }

 private:
  // The blocked layout every input's shadow is in, when there is one the
  // chunks hold for (srcs_ then holds the shadows' data); empty otherwise.
  memory::desc common_blocked_layout(std::span<const void* const> inputs);
  void copy_chunks(std::span<const std::byte* const> srcs, std::byte* dst, int64_t outer) const;

  std::shared_ptr<Context> ctx_;
  memory::data_type dt_;
  std::vector<dims_t> in_dims_;
  dims_t out_dims_;
  int axis_;
  size_t elem_;
  std::vector<uint64_t> in_bytes_;
  uint64_t out_bytes_;
  std::vector<const std::byte*> srcs_;  // per launch, kept for its capacity
};

}  // namespace ampx::onednn
