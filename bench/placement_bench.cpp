// Placement numbers for docs/benchmarks.md (a timing main: a few runs per
// configuration, interleaved, medians):
//   1. Fallback cost: each built-in model on one device, and split so that
//      its Relu/Softmax/LayerNorm/BatchNorm nodes run on cpu_ref:0 (pinned,
//      as a backend lacking them would force), with copies per run, bytes,
//      copy time and the ratio to the single-device run.
//        - test_native:0 (the reference kernels behind another plugin): the
//          kernels are identical on both sides, so the ratio is the pure
//          overhead of placement (copies, synchronisation);
//        - onednn:0 and vulkan:0 when present: real devices, where the
//          fallback also swaps fast kernels for reference ones.
//   2. Planning time of synthetic graphs of 1k..100k nodes across three
//      devices (first lacks LayerNorm, second lacks Relu, third runs all):
//      nodes per second must stay flat (linear planning).
// Usage: ampx_placement_bench [--quick]
#include <ampx/amp/planner.hpp>
#include <ampx/exec/device_capabilities.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace ampx;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

const char* const kFallbackOps[] = {"relu*", "bn*", "attn.softmax", "ln*"};

struct Compiled {
  AmpPlan plan;
  FusedGraph fused;
  std::unique_ptr<Executor> exec;
};

Compiled compile(const Graph& g, const std::vector<const plugins::Device*>& devices, bool split) {
  std::vector<std::unique_ptr<DeviceCapabilities>> caps;
  std::vector<PlanDevice> plan_devices;
  std::vector<CapabilitySource*> sources;
  for (const plugins::Device* d : devices) {
    caps.push_back(std::make_unique<DeviceCapabilities>(*d));
    plan_devices.push_back({caps.back().get(), nullptr, false});
    sources.push_back(caps.back().get());
  }
  std::vector<DevicePin> pins;
  if (split) {
    std::set<std::string> names;
    for (const Node& n : g.nodes()) names.insert(n.name);
    for (const char* p : kFallbackOps) {
      const DevicePin pin{p, 1};
      for (const auto& name : names)
        if (pin.matches(name)) {
          pins.push_back(pin);
          break;
        }
    }
  }
  AmpPolicy o0;
  Compiled c;
  c.plan = plan_amp(g, o0, plan_devices, {}, pins);
  c.fused = fuse_placed(c.plan.graph, sources);
  c.exec = std::make_unique<Executor>(c.fused.graph, devices);
  return c;
}

void fallback_table(const plugins::PluginHost& host, bool quick) {
  std::printf(
      "\n| device | model | single ms | split ms | split / single | nodes on cpu_ref | copies "
      "per run | KiB per run | copy ms per run |\n|---|---|---|---|---|---|---|---|---|\n");
  const plugins::Device* ref = host.find_device("cpu_ref:0");
  for (const char* id : {"test_native:0", "onednn:0", "vulkan:0"}) {
    const plugins::Device* dev = host.find_device(id);
    if (!dev || !ref) continue;
    for (const auto name : builtin_model_names()) {
      const Graph g = make_builtin_model(name);
      const auto inputs = random_inputs(g, 7);
      Compiled single = compile(g, {dev}, false);
      Compiled split = compile(g, {dev, ref}, true);
      const int iters = quick ? 3 : 11;
      std::vector<double> t1, t2, tc;
      for (int w = 0; w < 2; ++w) {
        (void)single.exec->run(inputs);
        (void)split.exec->run(inputs);
      }
      for (int i = 0; i < iters; ++i) {  // interleaved: both see the same machine noise
        auto t0 = Clock::now();
        (void)single.exec->run(inputs);
        t1.push_back(ms_since(t0));
        t0 = Clock::now();
        (void)split.exec->run(inputs);
        t2.push_back(ms_since(t0));
        tc.push_back(split.exec->stats().last_run_copy_us / 1000.0);
      }
      const auto& st = split.exec->stats();
      std::printf("| %s | %s | %.3f | %.3f | %.2f | %d of %d | %d | %.1f | %.3f |\n", id,
                  std::string(name).c_str(), median(t1), median(t2), median(t2) / median(t1),
                  split.plan.summary.nodes_per_device[1], split.plan.summary.nodes, st.copies,
                  static_cast<double>(st.copy_bytes) / 1024.0, median(tc));
    }
  }
}

// The planner's synthetic graph (bench/planner_bench.cpp): residual blocks
// MatMul -> Add -> Relu, a LayerNorm every fifth block.
Graph synthetic_graph(int64_t target_nodes) {
  GraphBuilder b("synthetic", 1);
  ValueId x = b.input("x", DType::kF32, {8, 16});
  const ValueId w = b.random_weight("w", {16, 16}, 0.1f);
  int64_t nodes = 0;
  for (int64_t i = 0; nodes < target_nodes; ++i) {
    std::string p = "b";
    p += std::to_string(i);
    const ValueId h = b.add(OpType::kMatMul, p + ".mm", {x, w});
    const ValueId r = b.add(OpType::kAdd, p + ".add", {h, x});
    x = b.unary(OpType::kRelu, p + ".relu", r);
    nodes += 3;
    if (i % 5 == 4) {
      x = b.layer_norm(p + ".ln", x);
      ++nodes;
    }
  }
  b.output(x);
  return std::move(b).build();
}

// Answers instantly (the planner is measured, not a plugin): native for
// everything but `missing`.
class TableDevice final : public CapabilitySource {
 public:
  TableDevice(std::string id, std::string missing)
      : id_(std::move(id)), missing_(std::move(missing)) {}
  std::string device_id() const override { return id_; }
  Answer query(const ampx_node_desc& node) override {
    if (missing_ == node.op_type) return {AMPX_SUPPORT_UNSUPPORTED, -1, ""};
    return {AMPX_SUPPORT_NATIVE, 1.0, ""};
  }

 private:
  std::string id_, missing_;
};

void planning_table(bool quick) {
  std::printf(
      "\n| nodes | 1 device ms | 3 devices ms | 3 devices, graph built ms | nodes/s (3 devices) | "
      "fallbacks | copies |\n|---|---|---|---|---|---|---|\n");
  TableDevice a("a:0", "LayerNorm"), b("b:0", "Relu"), c("c:0", "");
  const PlanDevice one[] = {{&c, nullptr, false}};
  const PlanDevice three[] = {{&a, nullptr, false}, {&b, nullptr, false}, {&c, nullptr, true}};
  AmpPolicy o2;
  o2.level = AmpLevel::kO2;
  for (int64_t n : {1000, 10000, 100000}) {
    const Graph g = synthetic_graph(n);
    const int iters = quick ? 2 : (n >= 100000 ? 5 : 11);
    std::vector<double> t1, t3, t3g;
    AmpPlan last;
    for (int i = 0; i < iters; ++i) {
      auto t0 = Clock::now();
      AmpPlan p1 = plan_amp(g, o2, one, PlanOptions{.build_graph = false});
      t1.push_back(ms_since(t0));
      t0 = Clock::now();
      AmpPlan p3 = plan_amp(g, o2, three, PlanOptions{.build_graph = false});
      t3.push_back(ms_since(t0));
      t0 = Clock::now();
      last = plan_amp(g, o2, three, PlanOptions{.build_graph = true});
      t3g.push_back(ms_since(t0));
    }
    std::printf("| %lld | %.2f | %.2f | %.2f | %.2f M | %d | %d |\n",
                static_cast<long long>(g.num_nodes()), median(t1), median(t3), median(t3g),
                static_cast<double>(g.num_nodes()) / median(t3) / 1000.0, last.summary.fallbacks,
                last.summary.copies);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR, AMPX_TEST_PLUGIN_DIR};
  const plugins::PluginHost host(opts);
  std::printf("placement bench: %zu devices loaded\n", host.devices().size());
  fallback_table(host, quick);
  planning_table(quick);
  return 0;
}
