// The oneDNN plugin's capability policy and kernel factory (plugged into the
// SDK's host-memory plugin, ampx/host_plugin.hpp).
//
// Capability answers are measured: for each node instance the policy builds
// the oneDNN primitive descriptor for exactly its dtypes, shapes and
// attributes and reads which implementation oneDNN picked:
//   - creation fails                          -> unsupported (oneDNN's reason)
//   - a reference implementation (ref, simple) -> emulated ("bf16 MatMul: ref:any only on avx2")
//   - anything else (jit, gemm, brgemm, ...)   -> native  ("jit:avx2")
// Ops run by plain loops (Reshape, Flatten, Dropout, Slice, Gather, non-float
// Cast) are native in f32/integers and emulated in 16-bit. Answers are cached
// by node signature (op, dtypes, dims, attributes).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ampx/host_plugin.hpp"
#include "context.hpp"

namespace ampx::onednn {

// Part of the device fingerprint: a change of what the plugin answers (0.2.0:
// ReduceSum/ReduceMean on the reduction loop, `native` where oneDNN has
// only ref:any) must not reuse a capability database's older answers.
inline constexpr const char* kPluginVersion = "0.2.0";

class OnednnPolicy final : public host_plugin::CapabilityPolicy {
 public:
  explicit OnednnPolicy(const Options& opts);

  host_plugin::CapabilityAnswer answer(const ampx_node_desc& node) const override;
  // can_run: the default, the reference kernels' validation of the op set
  // (docs/OPS.md); oneDNN's own limits come in answer() as `unsupported`.
  std::unique_ptr<reference::CpuKernel> make_kernel(const ampx_node_desc& node) const override;
  void describe_device(ampx_device_props& props) const override;
  std::string library() const override { return "oneDNN " + ctx_->version(); }
  // "ISA avx2, OpenMP runtime, 2 threads, blocked activations"; with
  // debug_counters=1 also "; activation reorders: N (launch L, materialised
  // M)", the recurrent and kernel runs, "; checked C, pinned P" (the
  // thread-count checks, thread_check.hpp; "; unchecked" with
  // deterministic=0) and "; launch threads T" (Context::launch).
  std::string plugin_note() const override;

  // The layout store's hooks (layout_store.hpp).
  void before_read(const unsigned char* p, uint64_t bytes) const override {
    ctx_->layouts().before_read(p, bytes);
  }
  void before_write(const unsigned char* p, uint64_t bytes) const override {
    ctx_->layouts().before_write(p, bytes);
  }
  void released(const unsigned char* p, uint64_t bytes) const override {
    ctx_->layouts().released(p, bytes);
  }
  // Every reorder the plugin ran on this thread (reorder_tally.hpp).
  host_plugin::ConversionTotals conversions() const override;
  // With blocked activations a buffer's bytes may be stale: no host pointer.
  bool host_pointers() const override { return !ctx_->layouts().enabled(); }

  Context& context() const noexcept { return *ctx_; }

 private:
  host_plugin::CapabilityAnswer measure(const ampx_node_desc& node) const;

  std::shared_ptr<Context> ctx_;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, host_plugin::CapabilityAnswer> cache_;
};

// The cache key of a node: op, dtypes and dims of every tensor, attributes.
std::string node_signature(const ampx_node_desc& node);

}  // namespace ampx::onednn
