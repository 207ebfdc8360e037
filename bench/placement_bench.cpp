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
// Planning time across three devices is in bench/planner_bench.cpp.
// Usage: ampx_placement_bench [--quick]
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include "bench_timing.hpp"

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
using bench::Clock;
using bench::median;
using bench::ms_since;

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR, AMPX_TEST_PLUGIN_DIR};
  const plugins::PluginHost host(opts);
  std::printf("placement bench: %zu devices loaded\n", host.devices().size());
  fallback_table(host, quick);
  return 0;
}
