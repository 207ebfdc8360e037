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

#include "ampx/host_plugin.hpp"
#include "ampx/plugin_glue.hpp"
#include "layout_store.hpp"

namespace ampx::onednn {

// Whether a node's bits may depend on the plugin's thread count.
enum class Determinism {
  kThreadCountFree,  // deterministic=1: never (docs/OPS.md, "Determinism")
  kFastest,          // deterministic=0: the threaded primitive, unchecked
};

// Plugin options, from ampx_plugin_create_args::options ("key=value;...").
struct Options {
  int threads = 0;  // threads=N; 0: all cores (the library default)
  // blocked_activations=0|1: activations stay in the layout the producing
  // primitive chose between oneDNN nodes (layout_store.hpp); 0 reorders to
  // plain NCHW and back around every primitive, as before.
  bool blocked_activations = true;
  // debug_counters=1: plugin_info.note also reports the per-launch
  // activation reorders, kernel runs and reference launches so far (tests,
  // benchmark).
  bool debug_counters = false;
  // deterministic=0|1: 1 (default) keeps docs/OPS.md's promise that a
  // node's bits do not depend on the thread count (thread_check.hpp); 0
  // runs every primitive on the threads it was given, unchecked.
  Determinism determinism = Determinism::kThreadCountFree;
  // selfcheck_perturb=1 (tests only): the thread-count check sees the
  // threaded kernel's output with one bit flipped, so every checked node is
  // pinned to one thread on any CPU.
  bool selfcheck_perturb = false;
  // The host's log level (ampx_plugin_create_args::log_level).
  int32_t log_level = 2;
};
// The documented keys (the AMPX_EXTENSION_OPTIONS extension and README.md).
inline constexpr plugin_support::OptionSpec kOptions[] = {
    {"threads", "0..4096", "oneDNN threads; 0 or absent: all cores"},
    {"blocked_activations", "0|1",
     "1 (default): activations stay in the blocked layout oneDNN chose between its nodes"},
    {"debug_counters", "0|1",
     "1: plugin_info.note also counts activation reorders, kernel runs, reference launches and "
     "launch threads"},
    {"deterministic", "0|1",
     "1 (default): bits independent of the thread count (a threaded primitive that differs "
     "from its one-thread run at prepare runs on one thread); 0: threaded primitives unchecked"},
    {"selfcheck_perturb", "0|1",
     "tests only: 1 makes the thread-count check fail, pinning every checked node to one "
     "thread"}};

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
  // A kernel launch: run(), and with debug_counters=1 also the size of the
  // OpenMP team a parallel region gets under that setting, which is the
  // team oneDNN's and the loops' regions get (last_launch_threads).
  void launch(const std::function<void()>& fn, int threads = 0);

  // The stream's scratchpad: one buffer, grown to the largest request, that
  // every primitive of this plugin instance uses in turn (launches on the
  // stream are sequential). The pointer is valid until the next call.
  void* scratchpad(size_t bytes);

  int threads() const noexcept { return threads_; }
  LayoutStore& layouts() noexcept { return *layouts_; }
  // Every reorder the plugin ran around its kernels (reorder_tally.hpp).
  host_plugin::ConversionTotals& reorder_totals() noexcept { return reorder_totals_; }
  bool debug_counters() const noexcept { return debug_counters_; }
  Determinism determinism() const noexcept { return determinism_; }
  bool selfcheck_perturb() const noexcept { return selfcheck_perturb_; }
  int32_t log_level() const noexcept { return log_level_; }
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
    if (!counting()) return;
    (primitive ? rnn_primitive_runs_ : rnn_loop_runs_).fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t recurrent_primitive_runs() const noexcept { return rnn_primitive_runs_.load(); }
  uint64_t recurrent_loop_runs() const noexcept { return rnn_loop_runs_.load(); }
  // Launches of PrimitiveKernel (one oneDNN primitive) and of LoopKernel
  // (a reference kernel), for debug_counters=1's note: which of the two a
  // node's kernel is.
  void count_kernel_run(bool primitive) noexcept {
    if (!counting()) return;
    (primitive ? primitive_runs_ : loop_runs_).fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t primitive_runs() const noexcept { return primitive_runs_.load(); }
  uint64_t loop_runs() const noexcept { return loop_runs_.load(); }
  // With debug_counters=1, every primitive a launch executes (the kernel's
  // own, its reorders, the layout store's write-backs) passes through here,
  // and those that are a reference implementation (is_reference_impl) are
  // counted: a hot path should execute none (the loops run those nodes).
  void count_executed(const dnnl::primitive& p) noexcept;
  uint64_t reference_launches() const noexcept { return reference_launches_.load(); }
  // The OpenMP team size of the last counted launch (launch()), with
  // debug_counters=1; 0 before any, or without the OpenMP runtime.
  int last_launch_threads() const noexcept { return last_launch_threads_.load(); }
  // The thread-count checks at prepare (thread_check.hpp): kernels checked,
  // and those of them pinned to one thread because the bits differed.
  void count_thread_check(bool pinned) noexcept {
    checked_.fetch_add(1, std::memory_order_relaxed);
    if (pinned) pinned_.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t thread_checks() const noexcept { return checked_.load(); }
  uint64_t pinned_to_one_thread() const noexcept { return pinned_.load(); }
  // While one lives, launches count nowhere (kernel runs, recurrent runs,
  // activation reorders, launch threads): the thread-count check's runs at
  // prepare are not the node's.
  class Uncounted {
   public:
    explicit Uncounted(Context& c) : c_(c) { c_.quiet_.fetch_add(1); }
    ~Uncounted() { c_.quiet_.fetch_sub(1); }
    Uncounted(const Uncounted&) = delete;
    Uncounted& operator=(const Uncounted&) = delete;

   private:
    Context& c_;
  };
  bool counting() const noexcept { return quiet_.load(std::memory_order_relaxed) == 0; }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  int threads_ = 0;
  bool omp_ = false;
  bool debug_counters_ = false;
  Determinism determinism_ = Determinism::kThreadCountFree;
  bool selfcheck_perturb_ = false;
  int32_t log_level_ = 2;
  std::unique_ptr<LayoutStore> layouts_;
  std::string isa_, version_, runtime_;
  std::atomic<uint64_t> rnn_primitive_runs_{0}, rnn_loop_runs_{0};
  std::atomic<uint64_t> primitive_runs_{0}, loop_runs_{0};
  std::atomic<uint64_t> reference_launches_{0};
  host_plugin::ConversionTotals reorder_totals_;
  std::atomic<uint64_t> checked_{0}, pinned_{0};
  std::atomic<int> last_launch_threads_{0};
  std::atomic<int> quiet_{0};
  struct alignas(64) Line {
    std::byte b[64];
  };
  std::vector<Line> scratch_;
};

}  // namespace ampx::onednn
