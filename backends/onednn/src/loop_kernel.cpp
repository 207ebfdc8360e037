#include "loop_kernel.hpp"

#include <algorithm>

#ifdef AMPX_ONEDNN_HAVE_OPENMP
#include <omp.h>
#endif

namespace ampx::onednn {

#ifdef AMPX_ONEDNN_HAVE_OPENMP
namespace {

// Every chunk once, on at most the calling thread's OpenMP thread count
// (Context::run sets it); a chunk's result does not depend on its thread.
void openmp_runner(int64_t chunks, void* ctx, void (*chunk)(void* ctx, int64_t i)) {
  const int threads = static_cast<int>(std::min<int64_t>(chunks, omp_get_max_threads()));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < chunks; ++i) chunk(ctx, i);
}

}  // namespace
#endif

void run_reference_loops_on_openmp([[maybe_unused]] const Context& ctx) {
#ifdef AMPX_ONEDNN_HAVE_OPENMP
  if (ctx.openmp()) reference::set_parallel_runner(&openmp_runner);
#endif
}

}  // namespace ampx::onednn
