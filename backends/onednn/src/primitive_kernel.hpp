// A prepared kernel running one oneDNN primitive on host buffers.
//
// At prepare: the primitive is created once; every argument whose layout or
// dtype the primitive wants differently from the ampx tensor gets a reorder
// and a library-allocated staging memory; constant inputs (const_data) that
// need one are reordered once, right there.
//
// At launch, with blocked activations on (layout_store.hpp): an input whose
// current shadow is in the wanted layout is used as is; one whose shadow is
// in another blocked layout of the same tensor is reordered straight from it;
// otherwise the plain bytes (made current first) are reordered in as before.
// An output the primitive writes in a non-plain layout goes to its shadow
// only. Ops that run in any layout (eltwise, BatchNorm, pooling; see
// PrimitivePlan::relayout) get a second primitive for a source shadow's
// layout, made on first sight, so a CNN chain stays blocked. With them off,
// inputs are reordered in and outputs out at every launch. The stream is
// waited for at the end of each launch.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ampx/host_plugin.hpp"
#include "context.hpp"
#include "dnnl_util.hpp"

namespace ampx::onednn {

class PrimitiveKernel final : public host_plugin::HostCopyKernel {
 public:
  // `node` supplies const_data of constant inputs (borrowed for the call).
  // Launched (and its variants created) with `threads`; the plan must have
  // been made under it too, as oneDNN fixes a primitive's threads at
  // creation. oneDNN errors become StatusError(INTERNAL) naming the node.
  PrimitiveKernel(std::shared_ptr<Context> ctx, const PrimitivePlan& plan,
                  const plugin_support::NodeView& node, int threads);

  // The threads a node's primitive is created and launched with: one for
  // small work (an OpenMP fork and join costs more than it saves: the
  // squeeze-excitation 1x1 convolutions, classifier heads, the small test
  // models), else the plugin's count.
  static int threads_for(const Context& ctx, const ampx_node_desc& node);

  void run_tracked(std::span<const void* const> inputs, std::span<void* const> outputs,
                   std::span<const bool> staged_output) override;
  // The last launch's primitive (a variant's, when one ran), and the in-place
  // add after it: "convolution_forward jit:avx2 + binary_add jit:uni".
  std::string implementation() const override;

 private:
  // One non-constant argument of a primitive.
  struct Slot {
    int dnnl_arg;
    bool output;
    size_t index;    // node input / output index
    uint64_t bytes;  // of the plain tensor in the buffer
    memory::desc user_md, want_md;
    dnnl::memory user;      // over the buffer, data handle set per launch
    dnnl::memory staged;    // in want_md when it differs from user_md
    dnnl::reorder convert;  // user -> staged (input) or staged -> user (output)
    // An input's shadow in another layout than want_md: the reorder from it
    // (remade when that layout changes).
    memory::desc shadow_md;
    dnnl::reorder from_shadow;
  };
  // A primitive and its bindings: the node's own, or one for a producer's
  // layout (variant_for).
  struct Prepared {
    dnnl::primitive prim;
    std::unordered_map<int, dnnl::memory> args;
    std::vector<Slot> slots;
    size_t scratch_bytes = 0;
    dnnl::memory scratch;  // the Context's scratchpad, handle set per launch
    std::string impl;      // describe_impl(pd)
  };
  struct Conversion {
    dnnl::reorder* reorder;
    dnnl::memory from, to;
  };

  // Builds the bindings of pd. With `node`, constants that need a reorder are
  // reordered now; without (a variant), they must have the main primitive's
  // layout. Throws dnnl::error.
  std::unique_ptr<Prepared> prepare(const dnnl::primitive_desc_base& pd,
                                    const plugin_support::NodeView* node);
  // The variant for an input (primitive argument `dnnl_arg`) in layout
  // `src`; nullptr when there is none that takes it as it is and is not a
  // reference implementation (remembered).
  Prepared* variant_for(const memory::desc& src, int dnnl_arg);
  void launch(Prepared& p, std::span<const void* const> inputs, std::span<void* const> outputs,
              std::span<const bool> staged_output);

  std::shared_ptr<Context> ctx_;
  int threads_;
  std::string where_;
  std::vector<Arg> args_;
  std::vector<uint64_t> in_bytes_, out_bytes_;
  std::function<dnnl::primitive_desc_base(const memory::desc&)> relayout_;
  std::unordered_map<int, dnnl::memory> constants_;  // reordered at prepare, by DNNL_ARG
  std::unique_ptr<Prepared> main_;
  const Prepared* last_ = nullptr;  // the last launch's: main_ or a variant
  std::vector<std::pair<memory::desc, std::unique_ptr<Prepared>>> variants_;
  std::vector<Conversion> pre_, post_;                     // per launch, kept for their capacity
  std::vector<std::pair<void*, uint64_t>> plain_outputs_;  // per launch, likewise
  // PrimitivePlan::then_add, prepared, and its constant operand.
  dnnl::primitive then_;
  dnnl::memory then_operand_;
  std::string then_impl_;
};

}  // namespace ampx::onednn
