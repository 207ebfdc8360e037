// A prepared kernel running one oneDNN primitive on host buffers.
//
// At prepare: the primitive is created once; every argument whose layout or
// dtype the primitive wants differently from the ampx tensor gets a reorder
// and a library-allocated staging memory; constant inputs (const_data) that
// need one are reordered once, right there. At launch: the user memories
// take the buffer pointers, input reorders run, the primitive runs on the
// plugin's stream, output reorders run, and the stream is waited for.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ampx/cpu_ref/kernels.hpp"
#include "context.hpp"
#include "dnnl_util.hpp"

namespace ampx::onednn {

class PrimitiveKernel final : public cpu_ref::CpuKernel {
 public:
  // `node` supplies const_data of constant inputs (borrowed for the call).
  // oneDNN errors become StatusError(INTERNAL) naming the node.
  PrimitiveKernel(std::shared_ptr<Context> ctx, const PrimitivePlan& plan,
                  const plugin_support::NodeView& node);

  void run(std::span<const void* const> inputs, std::span<void* const> outputs) override;

 private:
  struct Binding {
    bool output;
    size_t index;
    dnnl::memory user;  // data handle set per launch
  };
  struct Conversion {  // user <-> staging
    dnnl::reorder reorder;
    dnnl::memory from, to;
  };
  std::shared_ptr<Context> ctx_;
  std::string where_;
  dnnl::primitive prim_;
  std::unordered_map<int, dnnl::memory> args_;
  std::vector<Binding> bindings_;
  std::vector<Conversion> pre_, post_;
  size_t scratch_bytes_ = 0;
  dnnl::memory scratch_;  // the Context's scratchpad, handle set per launch
};

}  // namespace ampx::onednn
