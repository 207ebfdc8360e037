// One oneDNN CPU engine + stream per plugin instance, the thread count the
// plugin's kernels run with, and the facts about the library and CPU that
// the device properties report.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "ampx/plugin_glue.hpp"
#include "layout_store.hpp"

namespace ampx::onednn {

// Plugin options, from ampx_plugin_create_args::options ("key=value;...").
struct Options {
  int threads = 0;  // threads=N; 0: all cores (the library default)
  // blocked_activations=0|1: activations stay in the layout the producing
  // primitive chose between oneDNN nodes (layout_store.hpp); 0 reorders to
  // plain NCHW and back around every primitive, as before.
  bool blocked_activations = true;
  // debug_counters=1: plugin_info.note also reports the per-launch
  // activation reorders so far (tests, benchmark).
  bool debug_counters = false;
};
// The documented keys (the AMPX_EXTENSION_OPTIONS extension and README.md).
inline constexpr plugin_support::OptionSpec kOptions[] = {
    {"threads", "0..4096", "oneDNN threads; 0 or absent: all cores"},
    {"blocked_activations", "0|1",
     "1 (default): activations stay in the blocked layout oneDNN chose between its nodes"},
    {"debug_counters", "0|1", "1: plugin_info.note also counts activation reorders"}};

// Reads the options; a bad value throws std::invalid_argument (plugin_create
// then fails with that message). Other keys were dropped by the glue.
Options parse_options(const plugin_support::PluginOptions& options);

class Context {
 public:
  explicit Context(const Options& opts);

  const dnnl::engine& engine() const noexcept { return engine_; }
  dnnl::stream& stream() noexcept { return stream_; }
  // Runs fn with this plugin's thread count. Debian's libdnnl uses the
  // OpenMP runtime (libgomp): the count is set on the calling thread for the
  // call and restored after, so the host's own OpenMP use is untouched.
  // `threads` > 0: that many instead (a small primitive's single thread).
  void run(const std::function<void()>& fn, int threads = 0);

  // The stream's scratchpad: one buffer, grown to the largest request, that
  // every primitive of this plugin instance uses in turn (launches on the
  // stream are sequential). The pointer is valid until the next call.
  void* scratchpad(size_t bytes);

  int threads() const noexcept { return threads_; }
  LayoutStore& layouts() noexcept { return *layouts_; }
  bool debug_counters() const noexcept { return debug_counters_; }
  // Effective ISA (respects ONEDNN_MAX_CPU_ISA), e.g. "avx2".
  const std::string& isa() const noexcept { return isa_; }
  // "2.6.3"
  const std::string& version() const noexcept { return version_; }
  // "OpenMP", "TBB", "sequential", ...
  const std::string& runtime() const noexcept { return runtime_; }
  bool openmp() const noexcept { return omp_; }

  // The recurrent ops' runs (rnn_kernel.hpp) on oneDNN's RNN primitive and
  // on the reference loop, for debug_counters=1's note.
  void count_recurrent_run(bool primitive) noexcept {
    (primitive ? rnn_primitive_runs_ : rnn_loop_runs_).fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t recurrent_primitive_runs() const noexcept { return rnn_primitive_runs_.load(); }
  uint64_t recurrent_loop_runs() const noexcept { return rnn_loop_runs_.load(); }
  // Launches of PrimitiveKernel (one oneDNN primitive) and of LoopKernel
  // (a reference kernel), for debug_counters=1's note: which of the two a
  // node's kernel is.
  void count_kernel_run(bool primitive) noexcept {
    (primitive ? primitive_runs_ : loop_runs_).fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t primitive_runs() const noexcept { return primitive_runs_.load(); }
  uint64_t loop_runs() const noexcept { return loop_runs_.load(); }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  int threads_ = 0;
  bool omp_ = false;
  bool debug_counters_ = false;
  std::unique_ptr<LayoutStore> layouts_;
  std::string isa_, version_, runtime_;
  std::atomic<uint64_t> rnn_primitive_runs_{0}, rnn_loop_runs_{0};
  std::atomic<uint64_t> primitive_runs_{0}, loop_runs_{0};
  struct alignas(64) Line {
    std::byte b[64];
  };
  std::vector<Line> scratch_;
};

}  // namespace ampx::onednn
