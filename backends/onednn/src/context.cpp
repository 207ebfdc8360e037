#include "context.hpp"

#include "ampx/plugin_support.hpp"

#include "dnnl_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <thread>

#ifdef AMPX_ONEDNN_HAVE_OPENMP
#include <omp.h>
#endif

namespace ampx::onednn {
namespace {

std::string isa_name(dnnl::cpu_isa isa) {
  using I = dnnl::cpu_isa;
  switch (isa) {
    case I::all:
      return "all";
    case I::sse41:
      return "sse41";
    case I::avx:
      return "avx";
    case I::avx2:
      return "avx2";
    case I::avx2_vnni:
      return "avx2_vnni";
    case I::avx512_mic:
      return "avx512_mic";
    case I::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case I::avx512_core:
      return "avx512_core";
    case I::avx512_core_vnni:
      return "avx512_core_vnni";
    case I::avx512_core_bf16:
      return "avx512_core_bf16";
    case I::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "isa_" + std::to_string(static_cast<int>(isa));
  }
}

std::string runtime_name(unsigned rt) {
  switch (rt) {
    case DNNL_RUNTIME_OMP:
      return "OpenMP";
    case DNNL_RUNTIME_TBB:
      return "TBB";
    case DNNL_RUNTIME_SEQ:
      return "sequential";
    case DNNL_RUNTIME_THREADPOOL:
      return "threadpool";
    default:
      return "runtime_" + std::to_string(rt);
  }
}

}  // namespace

Options parse_options(const plugin_support::PluginOptions& options) {
  Options o;
  o.threads = static_cast<int>(options.integer("threads", 0, 0, 4096));
  o.blocked_activations = options.integer("blocked_activations", 1, 0, 1) != 0;
  o.debug_counters = options.integer("debug_counters", 0, 0, 1) != 0;
  o.determinism = options.integer("deterministic", 1, 0, 1) != 0 ? Determinism::kThreadCountFree
                                                                 : Determinism::kFastest;
  o.selfcheck_perturb = options.integer("selfcheck_perturb", 0, 0, 1) != 0;
  o.log_level = options.log_level();
  return o;
}

Context::Context(const Options& opts)
    : engine_(dnnl::engine::kind::cpu, 0),
      stream_(engine_),
      threads_(opts.threads),
      debug_counters_(opts.debug_counters),
      determinism_(opts.determinism),
      selfcheck_perturb_(opts.selfcheck_perturb),
      log_level_(opts.log_level),
      layouts_(std::make_unique<LayoutStore>(*this, opts.blocked_activations)) {
  const dnnl_version_t* v = dnnl_version();
  version_ =
      std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  runtime_ = runtime_name(v->cpu_runtime);
  isa_ = isa_name(dnnl::get_effective_cpu_isa());
#ifdef AMPX_ONEDNN_HAVE_OPENMP
  omp_ = v->cpu_runtime == DNNL_RUNTIME_OMP;
#endif
  if (threads_ <= 0) threads_ = static_cast<int>(std::thread::hardware_concurrency());
  if (threads_ <= 0) threads_ = 1;
}

void Context::run(const std::function<void()>& fn, int threads) {
#ifdef AMPX_ONEDNN_HAVE_OPENMP
  if (omp_) {
    const int prev = omp_get_max_threads();
    omp_set_num_threads(threads > 0 ? std::min(threads, threads_) : threads_);
    try {
      fn();
    } catch (...) {
      omp_set_num_threads(prev);
      throw;
    }
    omp_set_num_threads(prev);
    return;
  }
#endif
  fn();
}

void Context::launch(const std::function<void()>& fn, int threads) {
  if (!debug_counters_ || !counting()) return run(fn, threads);
  // First an empty region under the launch's setting: its team is the one
  // oneDNN's parallel() and the loops' runner get (both take the default).
  run(
      [&] {
        int team = 0;
#ifdef AMPX_ONEDNN_HAVE_OPENMP
        if (omp_) {
#pragma omp parallel
          {
#pragma omp master
            team = omp_get_num_threads();
          }
        }
#endif
        last_launch_threads_.store(team, std::memory_order_relaxed);
        fn();
      },
      threads);
}

void Context::count_executed(const dnnl::primitive& p) noexcept {
  if (!debug_counters_ || !counting()) return;
  if (is_reference_impl(p)) reference_launches_.fetch_add(1, std::memory_order_relaxed);
}

void* Context::scratchpad(size_t bytes) {
  const size_t lines = (bytes + sizeof(Line) - 1) / sizeof(Line);
  if (scratch_.size() < lines) scratch_.resize(lines);
  return scratch_.data();
}

}  // namespace ampx::onednn
