// The reference loops the oneDNN plugin runs (ops without a primitive, the
// optimizer updates, the finite check), on oneDNN's own OpenMP pool.
//
// The reference kernels fork fresh std::threads for each parallel step. Right
// after a oneDNN primitive, libgomp's workers still spin waiting for the next
// region (GOMP_SPINCOUNT), so fresh threads get about half of a 2-core
// machine: the MLP's finite check (a 16 MB read) and its SGD updates took
// 1.7x and 1.4x their cpu_ref times. Run on the pool, they take the
// spinning workers instead. The thread count is the plugin's (threads=N),
// which the loops ignored before.
#pragma once

#include <memory>

#include "ampx/reference/kernels.hpp"
#include "context.hpp"

namespace ampx::onednn {

// Makes this plugin's copy of the reference kernels run their fork-join
// steps on the OpenMP pool (reference::set_parallel_runner). Idempotent; a
// no-op unless oneDNN uses the OpenMP runtime.
void run_reference_loops_on_openmp(const Context& ctx);

// A reference kernel run under the context's thread count.
class LoopKernel final : public reference::CpuKernel {
 public:
  LoopKernel(std::shared_ptr<Context> ctx, std::unique_ptr<reference::CpuKernel> loop)
      : ctx_(std::move(ctx)), loop_(std::move(loop)) {}
  void run(std::span<const void* const> in, std::span<void* const> out) override {
    ctx_->count_kernel_run(false);
    ctx_->launch([&] { loop_->run(in, out); });
  }

 private:
  std::shared_ptr<Context> ctx_;
  std::unique_ptr<reference::CpuKernel> loop_;
};

}  // namespace ampx::onednn
