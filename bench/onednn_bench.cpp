// The oneDNN backend's benchmark (issue 3), side by side in one process:
//  1. executor overhead: each built-in model (O0, fused) run by ampx on
//     onednn:0 against the same oneDNN primitives called directly in a loop
//     (pointers bound once, one stream wait per run, views for
//     Reshape/Flatten); 1b. the cnn with activations kept blocked between
//     nodes against blocked_activations=0;
//  2. O0 against effective O2 (`--dtype auto`) and capability-blind O2 (f16
//     forced onto whatever kernels run it, Casts included);
//  3. GEMM and convolution GFLOP/s through ampx in f32 and bf16, next to the
//     peak computed from the ISA, core count and clock.
//  4. an LSTM (seq 64, batch 8, input 128, hidden 256, peepholes) on
//     oneDNN's RNN primitive against the reference loop on onednn:0 (the
//     same node with a clip no value reaches: no oneDNN form) and on
//     cpu_ref:0 (where placement ran it before the primitive).
//  5. what docs/OPS.md's thread-count promise costs: Conv2dGradWeight at
//     the machine's thread count with deterministic=1 (the default: pinned
//     to one thread where the threaded primitive's bits differ) against
//     deterministic=0, and the prepare time the check adds (the node, and
//     the built-in cnn).
// Repetitions of the variants being compared are interleaved, so drifting
// machine load hits them alike. Prints Markdown (docs/benchmarks.md).
// Usage: ampx_onednn_bench [--reps N] [--layouts-only (table 1b alone)]
//                          [--recurrent-only (table 4 alone)]
//                          [--determinism-only (table 5 alone)]
//                          [--reduction-only (table 6 alone)]
//                          [--attention-only (table 7 alone)]
//  6. ReduceSum 32x64x16x16 -> 1x64x1x1 f32 (a convolution's bias
//     gradient): oneDNN's reduction primitive (`ref:any` for these axes)
//     against the plugin's vectorised loop (reduce_loop.hpp) that runs it.
#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/host_plugin.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/reference/kernels.hpp>
#include <ampx/session/device_capabilities.hpp>

#include "bench_timing.hpp"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "context.hpp"
#include "ops.hpp"
#include "reduce_loop.hpp"

using namespace ampx;

namespace {

using bench::Clock;
using bench::median;
using bench::ms_since;

// The calling thread's CPU time in ms: what a one-thread run costs, without
// the time other processes hold the core (a shared, loaded machine).
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Times the variants round-robin, `reps` rounds after one warm-up round;
// returns every round's time per variant in ms (wall clock, or with `cpu`
// the calling thread's CPU time).
std::vector<std::vector<double>> interleaved_rounds(
    const std::vector<std::function<void()>>& variants, int reps, bool cpu = false) {
  for (const auto& f : variants) f();
  std::vector<std::vector<double>> t(variants.size());
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < variants.size(); ++i) {
      if (cpu) {
        const double c0 = thread_cpu_ms();
        variants[i]();
        t[i].push_back(thread_cpu_ms() - c0);
        continue;
      }
      const auto t0 = Clock::now();
      variants[i]();
      t[i].push_back(ms_since(t0));
    }
  return t;
}

// The median per variant of interleaved_rounds().
std::vector<double> interleaved(const std::vector<std::function<void()>>& variants, int reps,
                                bool cpu = false) {
  std::vector<double> out;
  for (auto& v : interleaved_rounds(variants, reps, cpu)) out.push_back(median(v));
  return out;
}

// "median (fastest)": on a shared, loaded machine the fastest round is
// closest to what the code costs, the median what a run met.
std::string median_and_min(std::vector<double> v) {
  const double lo = *std::min_element(v.begin(), v.end());
  return fmt::format("{:.2f} ({:.2f}) ms", median(v), lo);
}

// ------------------------------------------- the direct oneDNN program

// The fused graph's nodes as a hand-written oneDNN program would run them:
// the same primitive descriptors as the plugin (onednn::plan_primitive), the
// same reorders into the layouts the primitives pick, weights reordered once,
// every pointer bound once, one stream and one wait per run. Reshape,
// Flatten and Dropout are views; Slice/Gather run the same loop kernels the
// plugin uses.
class DirectProgram {
 public:
  DirectProgram(const Graph& g, std::shared_ptr<onednn::Context> ctx) : ctx_(std::move(ctx)) {
    const auto& eng = ctx_->engine();
    ptr_.assign(g.num_values(), nullptr);
    for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
      const Value& val = g.value(v);
      if (val.is_constant())
        ptr_[static_cast<size_t>(v)] = const_cast<std::byte*>(val.constant->data());
    }
    for (ValueId v : g.inputs()) ptr_[static_cast<size_t>(v)] = alloc(g.value(v).byte_size());
    for (NodeId id : g.topological_order()) {
      const Node& n = g.node(id);
      const LoweredNode lowered(g, id);
      const plugin_support::NodeView view(lowered.desc());
      const ValueId y = n.outputs[0];
      if (n.op == OpType::kReshape || n.op == OpType::kFlatten || n.op == OpType::kDropout) {
        ptr_[static_cast<size_t>(y)] = ptr_[static_cast<size_t>(n.inputs[0])];
        continue;
      }
      for (ValueId o : n.outputs) ptr_[static_cast<size_t>(o)] = alloc(g.value(o).byte_size());
      Step step;
      for (ValueId i : n.inputs) step.ins.push_back(ptr_[static_cast<size_t>(i)]);
      for (ValueId o : n.outputs) step.outs.push_back(ptr_[static_cast<size_t>(o)]);
      if (onednn::runs_as_loop(view)) {
        step.loop = reference::make_kernel(lowered.desc());
        steps_.push_back(std::move(step));
        continue;
      }
      const onednn::PrimitivePlan plan = onednn::plan_primitive(view, eng);
      step.prim = dnnl::primitive(plan.pd.get());
      // The plugin's builders ask for a user scratchpad: one shared buffer,
      // as the plugin does per stream.
      if (const size_t sp = plan.pd.scratchpad_desc().get_size(); sp > 0) {
        if (scratch_.size() * 64 < sp) scratch_.resize((sp + 63) / 64);
        step.scratch_bytes = sp;
        step.args.emplace(DNNL_ARG_SCRATCHPAD,
                          dnnl::memory(plan.pd.scratchpad_desc(), eng, DNNL_MEMORY_NONE));
      }
      for (const onednn::Arg& a : plan.args) {
        void* p = a.output ? step.outs[a.index] : const_cast<void*>(step.ins[a.index]);
        dnnl::memory user(a.user_md, eng, p);
        dnnl::memory::desc want = plan.pd.query_md(dnnl::query::exec_arg_md, a.dnnl_arg);
        if (want == dnnl::memory::desc() || want == a.user_md) {
          step.args.emplace(a.dnnl_arg, user);
          continue;
        }
        dnnl::memory staged(want, eng);
        step.args.emplace(a.dnnl_arg, staged);
        const bool constant = !a.output && g.value(n.inputs[a.index]).is_constant();
        if (constant) {
          ctx_->run([&] {
            dnnl::reorder(user, staged).execute(ctx_->stream(), user, staged);
            ctx_->stream().wait();
          });
        } else if (a.output) {
          step.post.push_back({dnnl::reorder(staged, user), staged, user});
        } else {
          step.pre.push_back({dnnl::reorder(user, staged), user, staged});
        }
      }
      steps_.push_back(std::move(step));
    }
    for (ValueId v : g.inputs()) inputs_.push_back(ptr_[static_cast<size_t>(v)]);
  }

  void set_inputs(const std::vector<HostTensor>& in) {
    for (size_t i = 0; i < in.size(); ++i)
      std::memcpy(inputs_[i], in[i].data.data(), in[i].data.size());
  }

  void run() {
    ctx_->run([&] {
      dnnl::stream& s = ctx_->stream();
      for (Step& st : steps_) {
        if (st.loop) {
          s.wait();
          st.loop->run(st.ins, st.outs);
          continue;
        }
        if (st.scratch_bytes) st.args.at(DNNL_ARG_SCRATCHPAD).set_data_handle(scratch_.data());
        for (auto& c : st.pre) c.r.execute(s, c.from, c.to);
        st.prim.execute(s, st.args);
        for (auto& c : st.post) c.r.execute(s, c.from, c.to);
      }
      s.wait();
    });
  }

 private:
  struct Conversion {
    dnnl::reorder r;
    dnnl::memory from, to;
  };
  struct Step {
    std::unique_ptr<reference::CpuKernel> loop;
    dnnl::primitive prim;
    std::unordered_map<int, dnnl::memory> args;
    std::vector<Conversion> pre, post;
    size_t scratch_bytes = 0;
    std::vector<const void*> ins;
    std::vector<void*> outs;
  };
  void* alloc(size_t bytes) {
    storage_.emplace_back((bytes + 63) / 64);
    return storage_.back().data();
  }
  struct alignas(64) Line {
    std::byte b[64];
  };
  std::shared_ptr<onednn::Context> ctx_;
  std::vector<void*> ptr_;
  std::vector<void*> inputs_;
  std::vector<std::vector<Line>> storage_;
  std::vector<Line> scratch_;
  std::vector<Step> steps_;
};

// ------------------------------------------------------------ helpers

struct Planned {
  AmpPlan plan;
  FusedGraph fused;
};

Planned plan_for(const Graph& g, AmpPolicy policy, CapabilitySource& caps, bool blind) {
  AmpPlan plan = plan_amp(g, policy, caps, {.build_graph = true, .capability_blind = blind});
  FusedGraph fused = fuse_for_device(plan.graph, caps);
  return {std::move(plan), std::move(fused)};
}

// f32 FLOPs per cycle per core from the ISA oneDNN uses: FMA units x lanes
// x 2. Two 256-bit FMA pipes for AVX2 (Zen 2+, Haswell+), two 512-bit for
// AVX-512 server parts.
double flops_per_cycle(const std::string& isa) {
  if (isa.find("avx512") != std::string::npos) return 2 * 16 * 2;
  if (isa.find("avx2") != std::string::npos) return 2 * 8 * 2;
  if (isa.find("avx") != std::string::npos) return 8 * 2;
  return 4 * 2;
}

// One node as a graph, run through ampx on `dev`.
double node_gflops(const plugins::Device& dev, const Graph& g, double flops, int reps) {
  Executor exec(g, dev);
  const auto in = random_inputs(g, 1);
  const auto t = interleaved({[&] { (void)exec.run(in); }}, reps);
  return flops / (t[0] * 1e-3) / 1e9;
}

Graph gemm_graph(int64_t n, DType dt) {
  GraphBuilder b("gemm");
  const ValueId a = b.input("a", dt, {n, n});
  const ValueId w = b.random_weight("w", {n, n}, 0.1f, dt);
  b.output(b.add(OpType::kMatMul, "mm", {a, w}));
  return std::move(b).build();
}

Graph conv_graph(int64_t batch, int64_t c, int64_t hw, int64_t m, int64_t k, DType dt) {
  GraphBuilder b("conv");
  const ValueId x = b.input("x", dt, {batch, c, hw, hw});
  const ValueId w = b.random_weight("w", {m, c, k, k}, 0.1f, dt);
  b.output(b.add(OpType::kConv2d, "conv", {x, w}, {{"pads", std::vector<int64_t>(4, k / 2)}}));
  return std::move(b).build();
}

// One LSTM node: X [T, N, I], initial_h/c inputs; W, R, B, P weights
// (scaled as exporters initialise them); `clip` 0 for none.
// A weight gradient: dY [batch, m, hw, hw] and X [batch, c, hw, hw] (3x3,
// pads 1) to dW [m, c, 3, 3].
Graph conv_grad_weight_graph(int64_t batch, int64_t c, int64_t hw, int64_t m) {
  GraphBuilder b("dw");
  const ValueId dy = b.input("dy", DType::kF32, {batch, m, hw, hw});
  const ValueId x = b.input("x", DType::kF32, {batch, c, hw, hw});
  b.output(
      b.add(OpType::kConv2dGradWeight, "dw", {dy, x},
            {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>(4, 1)}}));
  return std::move(b).build();
}

Graph lstm_graph(int64_t T, int64_t N, int64_t I, int64_t H, double clip) {
  GraphBuilder b("lstm");
  const ValueId x = b.input("x", DType::kF32, {T, N, I});
  const ValueId w = b.random_weight("w", {1, 4 * H, I}, 0.1f);
  const ValueId r = b.random_weight("r", {1, 4 * H, H}, 0.1f);
  const ValueId bias = b.random_weight("b", {1, 8 * H}, 0.1f);
  const ValueId h0 = b.input("h0", DType::kF32, {1, N, H});
  const ValueId c0 = b.input("c0", DType::kF32, {1, N, H});
  const ValueId p = b.random_weight("p", {1, 3 * H}, 0.1f);
  AttrMap attrs{{"hidden_size", H}};
  if (clip > 0) attrs.emplace("clip", clip);
  for (ValueId y : b.add_multi(OpType::kLSTM, "lstm", {x, w, r, bias, h0, c0, p}, attrs))
    b.output(y);
  return std::move(b).build();
}

// One Attention node: Q [B, H, S, E], K and V [B, H, T, E], optionally
// causal.
Graph attention_graph(int64_t B, int64_t H, int64_t S, int64_t T, int64_t E, bool causal,
                      DType dt) {
  GraphBuilder b("attention");
  const ValueId q = b.input("q", dt, {B, H, S, E});
  const ValueId k = b.input("k", dt, {B, H, T, E});
  const ValueId v = b.input("v", dt, {B, H, T, E});
  b.output(b.add(OpType::kAttention, "attn", {q, k, v}, {{"is_causal", int64_t{causal}}}));
  return std::move(b).build();
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 30;
  bool layouts_only = false, recurrent_only = false, determinism_only = false,
       reduction_only = false, attention_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "--layouts-only") layouts_only = true;
    if (std::string(argv[i]) == "--recurrent-only") recurrent_only = true;
    if (std::string(argv[i]) == "--determinism-only") determinism_only = true;
    if (std::string(argv[i]) == "--reduction-only") reduction_only = true;
    if (std::string(argv[i]) == "--attention-only") attention_only = true;
  }

  plugins::PluginHostOptions opts;
  const plugins::PluginHost host(opts);
  const plugins::Device* dev = host.find_device("onednn:0");
  if (!dev) {
    fmt::print(stderr, "onednn:0 not found (is the oneDNN plugin built?)\n");
    return 1;
  }
  DeviceCapabilities caps(*dev);
  auto ctx = std::make_shared<onednn::Context>(onednn::Options{});
  const std::string cpu = host_plugin::cpu_model_name();
  const double mhz = std::atof(host_plugin::cpuinfo_field("cpu MHz").c_str());
  const unsigned cores = std::thread::hardware_concurrency();
  fmt::print(
      "CPU: {} ({} threads, {:.0f} MHz per /proc/cpuinfo); oneDNN {} ({}), ISA {}; "
      "{} rounds per variant, interleaved\n\n",
      cpu, cores, mhz, ctx->version(), ctx->runtime(), ctx->isa(), reps);

  // 1b. Activations kept in the producer's blocked layout between oneDNN
  // nodes (the default) against plain NCHW reordered in and out around every
  // primitive (blocked_activations=0), each in its own plugin instance. Also
  // at one thread: on a loaded machine OpenMP's barriers make the two-thread
  // times swing far more than the reorders weigh.
  auto layouts = [&] {
    fmt::print("\n### 1b. cnn: blocked activations between nodes vs plain NCHW (O0 f32)\n\n");
    fmt::print(
        "| plan | threads | blocked (default) | plain (`blocked_activations=0`) | plain / "
        "blocked |\n");
    fmt::print("|---|---|---|---|---|\n");
    const Graph g = make_builtin_model("cnn");
    const Planned p = plan_for(g, AmpPolicy{}, caps, false);
    const auto in = random_inputs(g, 7);
    for (const unsigned threads : {cores, 1u}) {
      const std::string t_opt = ";threads=" + std::to_string(threads);
      plugins::PluginHostOptions on_opts, off_opts;
      on_opts.plugin_options["onednn"] = "blocked_activations=1" + t_opt;
      off_opts.plugin_options["onednn"] = "blocked_activations=0" + t_opt;
      const plugins::PluginHost on_host(on_opts), off_host(off_opts);
      for (const bool fused : {true, false}) {
        const Graph& graph = fused ? p.fused.graph : p.plan.graph;
        Executor on(graph, on_host.device("onednn:0")), off(graph, off_host.device("onednn:0"));
        // At one thread oneDNN runs on the calling thread, so its CPU time
        // is the whole cost: the steadier measure here.
        for (const bool cpu : {false, true}) {
          if (cpu && threads != 1) continue;
          const auto t =
              interleaved({[&] { (void)on.run(in); }, [&] { (void)off.run(in); }}, reps, cpu);
          fmt::print("| {} ({} nodes) | {}{} | {:.3f} ms | {:.3f} ms | {:.2f} |\n",
                     fused ? "fused" : "unfused", graph.num_nodes(), threads,
                     cpu ? ", thread CPU time" : "", t[0], t[1], t[1] / t[0]);
        }
      }
    }
  };
  if (layouts_only) {
    layouts();
    return 0;
  }

  // 4. LSTM: oneDNN's RNN primitive against the reference loop, on onednn:0
  // (a clip of 1e30, which no pre-activation reaches, has no oneDNN form:
  // the same computation on the loop) and on cpu_ref:0.
  auto recurrent = [&] {
    fmt::print("\n### 4. LSTM on oneDNN's RNN primitive vs the reference loop (f32)\n\n");
    fmt::print(
        "| LSTM (seq, batch, input, hidden) | threads | onednn:0 primitive | onednn:0 loop | "
        "loop / primitive | cpu_ref:0 loop | cpu_ref / primitive |\n");
    fmt::print("|---|---|---|---|---|---|---|\n");
    struct Size {
      int64_t T, N, I, H;
    };
    for (const Size z : {Size{64, 8, 128, 256}, Size{16, 1, 64, 64}}) {
      const Graph fits = lstm_graph(z.T, z.N, z.I, z.H, 0);
      const Graph loops = lstm_graph(z.T, z.N, z.I, z.H, 1e30);
      const auto in = random_inputs(fits, 7);
      for (const unsigned threads : {cores, 1u}) {
        // Both plugins at the same thread count (cpu_ref: AMPX_CPU_REF_THREADS
        // is read per process, so only its default is compared).
        plugins::PluginHostOptions o;
        o.plugin_options["onednn"] = "threads=" + std::to_string(threads);
        const plugins::PluginHost h(o);
        const plugins::Device* ref = h.find_device("cpu_ref:0");
        Executor prim(fits, h.device("onednn:0")), loop(loops, h.device("onednn:0"));
        std::unique_ptr<Executor> cpu = ref ? std::make_unique<Executor>(fits, *ref) : nullptr;
        std::vector<std::function<void()>> v = {[&] { (void)prim.run(in); },
                                                [&] { (void)loop.run(in); }};
        if (cpu) v.push_back([&] { (void)cpu->run(in); });
        const auto t = interleaved(v, reps);
        fmt::print("| {}, {}, {}, {} | {} | {:.3f} ms | {:.3f} ms | {:.2f} | {} | {} |\n", z.T, z.N,
                   z.I, z.H, threads, t[0], t[1], t[1] / t[0],
                   cpu ? fmt::format("{:.3f} ms", t[2]) : "—",
                   cpu ? fmt::format("{:.2f}", t[2] / t[0]) : "—");
      }
    }
  };
  if (recurrent_only) {
    recurrent();
    return 0;
  }

  // 5. The thread-count promise (deterministic=1, the default) against the
  // threaded primitive unchecked (deterministic=0), at the machine's
  // thread count. Prepare: an Executor made (every kernel prepared, the
  // check included) and dropped.
  auto determinism = [&] {
    fmt::print("\n### 5. What the thread-count promise costs (f32, {} threads)\n\n", cores);
    fmt::print("Median (fastest) of the rounds; ratio of the medians.\n\n");
    fmt::print(
        "| workload | run, `deterministic=1` | run, `deterministic=0` | ratio | prepare, "
        "`deterministic=1` | prepare, `deterministic=0` |\n");
    fmt::print("|---|---|---|---|---|---|\n");
    // The plugin logs each node it pins to one thread (info, on stderr).
    const std::string t_opt = ";threads=" + std::to_string(cores);
    plugins::PluginHostOptions det_opts, fast_opts;
    det_opts.plugin_options["onednn"] = "deterministic=1" + t_opt;
    fast_opts.plugin_options["onednn"] = "deterministic=0" + t_opt;
    const plugins::PluginHost det_host(det_opts), fast_host(fast_opts);
    const plugins::Device &det = det_host.device("onednn:0"), &fast = fast_host.device("onednn:0");
    struct Work {
      std::string name;
      Graph graph;
    };
    std::vector<Work> work;
    work.push_back(
        {"Conv2dGradWeight 16x32x14x14 -> 32x16x3x3", conv_grad_weight_graph(16, 16, 14, 32)});
    work.push_back(
        {"Conv2dGradWeight 32x64x28x28 -> 64x64x3x3", conv_grad_weight_graph(32, 64, 28, 64)});
    work.push_back({"cnn (built-in, O0 fused)",
                    plan_for(make_builtin_model("cnn"), AmpPolicy{}, caps, false).fused.graph});
    for (const Work& w : work) {
      const auto in = random_inputs(w.graph, 7);
      const auto prep = interleaved_rounds(
          {[&] { Executor e(w.graph, det); }, [&] { Executor e(w.graph, fast); }}, reps);
      Executor a(w.graph, det), b(w.graph, fast);
      const auto t = interleaved_rounds({[&] { (void)a.run(in); }, [&] { (void)b.run(in); }}, reps);
      fmt::print("| {} | {} | {} | {:.2f} | {} | {} |\n", w.name, median_and_min(t[0]),
                 median_and_min(t[1]), median(t[0]) / median(t[1]), median_and_min(prep[0]),
                 median_and_min(prep[1]));
    }
  };
  if (determinism_only) {
    determinism();
    return 0;
  }

  // 6. The bias gradient's reduction: oneDNN's primitive against the loop,
  // both called directly (no executor), at the machine's thread count and
  // at one.
  auto reduction = [&] {
    fmt::print("\n### 6. ReduceSum 32x64x16x16 -> 1x64x1x1 f32 (a conv bias gradient)\n\n");
    fmt::print("| threads | oneDNN reduction primitive | vectorised loop | primitive / loop |\n");
    fmt::print("|---|---|---|---|\n");
    GraphBuilder b("reduce");
    const ValueId x = b.input("x", DType::kF32, {32, 64, 16, 16});
    b.output(b.add(OpType::kReduceSum, "db", {x},
                   {{"axes", std::vector<int64_t>{0, 2, 3}}, {"keepdims", int64_t{1}}}));
    const Graph g = std::move(b).build();
    const LoweredNode node(g, 0);
    const plugin_support::NodeView v(node.desc());
    std::vector<float> src(32 * 64 * 16 * 16), dst(64);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i % 17) * 0.25f;
    for (const unsigned threads : {cores, 1u}) {
      onednn::Options o;
      o.threads = static_cast<int>(threads);
      auto c = std::make_shared<onednn::Context>(o);
      using dnnl::memory;
      const memory::desc xs({32, 64, 16, 16}, memory::data_type::f32, memory::format_tag::abcd);
      const memory::desc ys({1, 64, 1, 1}, memory::data_type::f32, memory::format_tag::abcd);
      dnnl::reduction prim;
      std::string impl;
      c->run([&] {
        const dnnl::reduction::primitive_desc pd(
            dnnl::reduction::desc(dnnl::algorithm::reduction_sum, xs, ys, 0.0f, 0.0f), c->engine());
        impl = pd.impl_info_str();
        prim = dnnl::reduction(pd);
      });
      memory xm(xs, c->engine(), src.data()), ym(ys, c->engine(), dst.data());
      onednn::ReduceLoopKernel loop(c, v, static_cast<int>(threads));
      const void* in[] = {src.data()};
      void* out[] = {dst.data()};
      const auto t =
          interleaved({[&] {
                         c->run([&] {
                           prim.execute(c->stream(), {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}});
                           c->stream().wait();
                         });
                       },
                       [&] { loop.run(in, out); }},
                      reps);
      fmt::print("| {} | {:.3f} ms (`{}`) | {:.3f} ms | {:.1f} |\n", threads, t[0], impl, t[1],
                 t[0] / t[1]);
    }
  };
  if (reduction_only) {
    reduction();
    return 0;
  }

  // 7. Attention on the plugin's kernel (two matmul primitives around the
  // f32 softmax loop: backends/onednn/src/attention_kernel.hpp) against
  // the reference loop that ran it before (cpu_ref:0's kernel is the same
  // code), at the same thread count.
  auto attention = [&] {
    fmt::print("\n### 7. Attention on two matmuls vs the reference loop\n\n");
    fmt::print(
        "One thread: the calling thread's CPU time (median of the rounds); {} threads: wall "
        "time, median (fastest).\n\n",
        cores);
    fmt::print(
        "| Attention (B, H, S=T, E) | dtype | threads | onednn:0 | cpu_ref:0 loop | loop / "
        "onednn |\n");
    fmt::print("|---|---|---|---|---|---|\n");
    for (const bool causal : {false, true})
      for (const DType dt : {DType::kF32, DType::kBF16}) {
        const Graph g = attention_graph(1, 8, 512, 512, 64, causal, dt);
        const auto in = random_inputs(g, 7);
        for (const unsigned threads : {1u, cores}) {
          plugins::PluginHostOptions o;
          o.plugin_options["onednn"] = "threads=" + std::to_string(threads);
          o.plugin_options["cpu_ref"] = "threads=" + std::to_string(threads);
          const plugins::PluginHost h(o);
          const plugins::Device& one = h.device("onednn:0");
          const plugins::Device* ref = h.find_device("cpu_ref:0");
          if (threads == 1 && !causal) {  // the answer, once per dtype
            const LoweredNode node(g, 0);
            fmt::print("| kernel | {} | | `{}` | | |\n", dtype_name(dt),
                       DeviceCapabilities(one).query(node.desc()).note);
          }
          Executor a(g, one);
          std::unique_ptr<Executor> b = ref ? std::make_unique<Executor>(g, *ref) : nullptr;
          std::vector<std::function<void()>> v = {[&] { (void)a.run(in); }};
          if (b) v.push_back([&] { (void)b->run(in); });
          const bool cpu_time = threads == 1;
          const auto t = interleaved_rounds(v, std::max(3, reps / 5), cpu_time);
          const auto shown = [&](const std::vector<double>& x) {
            return cpu_time ? fmt::format("{:.2f} ms", median(x)) : median_and_min(x);
          };
          fmt::print("| 1, 8, 512, 64{} | {} | {} | {} | {} | {} |\n", causal ? ", causal" : "",
                     dtype_name(dt), threads, shown(t[0]), b ? shown(t[1]) : "—",
                     b ? fmt::format("{:.1f}", median(t[1]) / median(t[0])) : "—");
        }
      }
  };
  if (attention_only) {
    attention();
    return 0;
  }

  // 1. Executor overhead.
  fmt::print("### 1. Executor overhead (O0 f32, fused plan)\n\n");
  fmt::print("| model | ampx on onednn:0 | same primitives, direct loop | overhead |\n");
  fmt::print("|---|---|---|---|\n");
  for (const std::string name : {"cnn", "mlp", "encoder"}) {
    const Graph g = make_builtin_model(name);
    const Planned p = plan_for(g, AmpPolicy{}, caps, false);
    Executor exec(p.fused.graph, *dev);
    DirectProgram direct(p.fused.graph, ctx);
    const auto in = random_inputs(g, 7);
    const auto t = interleaved({[&] { (void)exec.run(in); },
                                [&] {
                                  direct.set_inputs(in);
                                  direct.run();
                                }},
                               reps);
    fmt::print("| {} | {:.3f} ms | {:.3f} ms | {:+.1f} % |\n", name, t[0], t[1],
               100.0 * (t[0] / t[1] - 1.0));
  }

  layouts();
  determinism();
  reduction();

  // 2. O0, effective O2 (--dtype auto), capability-blind O2 (f16).
  fmt::print("\n### 2. O0 vs effective O2 vs capability-blind O2 on onednn:0\n\n");
  fmt::print(
      "| model | O0 | O2 `--dtype auto` (16-bit nodes) | ratio | capability-blind O2 f16 "
      "(16-bit nodes, Casts) | ratio |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (const std::string name : {"cnn", "mlp", "encoder"}) {
    const Graph g = make_builtin_model(name);
    AmpPolicy o2;
    o2.level = AmpLevel::kO2;
    const HalfChoice choice = choose_half_dtype(g, o2, caps);
    AmpPolicy o2_auto = o2;
    o2_auto.half = choice.half;
    const Planned p0 = plan_for(g, AmpPolicy{}, caps, false);
    const Planned pa = plan_for(g, o2_auto, caps, false);
    const Planned pb = plan_for(g, o2, caps, true);
    Executor e0(p0.fused.graph, *dev), ea(pa.fused.graph, *dev), eb(pb.fused.graph, *dev);
    const auto in = random_inputs(g, 7);
    const auto t = interleaved(
        {[&] { (void)e0.run(in); }, [&] { (void)ea.run(in); }, [&] { (void)eb.run(in); }}, reps);
    fmt::print("| {} | {:.2f} ms | {:.2f} ms ({} {}) | {:.2f} | {:.2f} ms ({}, {}) | {:.2f} |\n",
               name, t[0], t[1], pa.plan.summary.effective_16bit,
               choice.any_native ? std::string(dtype_name(choice.half)) : "none native",
               t[1] / t[0], t[2], pb.plan.summary.effective_16bit, pb.plan.summary.casts,
               t[2] / t[0]);
  }

  // 3. Throughput against peak.
  const double peak = flops_per_cycle(ctx->isa()) * mhz * 1e6 * cores / 1e9;
  fmt::print("\n### 3. GEMM and convolution throughput through ampx (onednn:0)\n\n");
  fmt::print(
      "Peak f32: {:.0f} FLOP/cycle/core ({}) x {:.2f} GHz x {} cores = **{:.0f} GFLOP/s**.\n\n",
      flops_per_cycle(ctx->isa()), ctx->isa(), mhz / 1000, cores, peak);
  fmt::print(
      "| workload | GFLOP | f32 GFLOP/s | % of peak | bf16 GFLOP/s |\n|---|---|---|---|---|\n");
  struct Work {
    std::string label;
    std::function<Graph(DType)> make;
    double flops;
  };
  const std::vector<Work> work = {
      {"MatMul 256³", [](DType d) { return gemm_graph(256, d); }, 2.0 * 256 * 256 * 256},
      {"MatMul 512³", [](DType d) { return gemm_graph(512, d); }, 2.0 * 512 * 512 * 512},
      {"MatMul 1024³", [](DType d) { return gemm_graph(1024, d); }, 2.0 * 1024 * 1024 * 1024},
      {"Conv 3x3 64→64, 56², batch 1", [](DType d) { return conv_graph(1, 64, 56, 64, 3, d); },
       2.0 * 64 * 64 * 9 * 56 * 56},
      {"Conv 3x3 128→128, 28², batch 4", [](DType d) { return conv_graph(4, 128, 28, 128, 3, d); },
       2.0 * 4 * 128 * 128 * 9 * 28 * 28},
      {"Conv 1x1 256→64, 56², batch 1", [](DType d) { return conv_graph(1, 256, 56, 64, 1, d); },
       2.0 * 256 * 64 * 56 * 56},
  };
  for (const Work& w : work) {
    const Graph g32 = w.make(DType::kF32);
    const double f32 = node_gflops(*dev, g32, w.flops, std::max(5, reps / 3));
    const Graph g16 = w.make(DType::kBF16);
    const LoweredNode node(g16, 0);
    const auto answer = caps.query(node.desc());
    std::string bf16 = "—";
    if (answer.support == AMPX_SUPPORT_NATIVE) {
      bf16 = fmt::format("{:.1f}", node_gflops(*dev, g16, w.flops, std::max(5, reps / 3)));
    } else {
      bf16 = answer.support == AMPX_SUPPORT_EMULATED ? "emulated only" : "unsupported";
    }
    fmt::print("| {} | {:.2f} | {:.1f} | {:.0f} % | {} |\n", w.label, w.flops / 1e9, f32,
               100.0 * f32 / peak, bf16);
  }

  recurrent();
  attention();
  return 0;
}
