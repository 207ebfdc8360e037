// Planner throughput on synthetic graphs of 1k, 10k and 100k nodes: nodes
// planned per second. Planning must be linear; docs/benchmarks.md has results.
#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/planner.hpp>
#include <ampx/capability/calibration.hpp>
#include <ampx/capability/store.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/tune/tuned_plan_key.hpp>

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>

using namespace ampx;

namespace {

// A device that answers instantly: measures the planner, not a plugin.
// `missing`: an op type it cannot run at all (placement tests fallbacks).
class TableDevice final : public CapabilitySource {
 public:
  TableDevice(std::string id, std::string missing)
      : id_(std::move(id)), missing_(std::move(missing)) {}
  std::string device_id() const override { return id_; }
  Answer query(const ampx_node_desc& node) override {
    if (missing_ == node.op_type) return {AMPX_SUPPORT_UNSUPPORTED, -1, ""};
    // A cost hint that makes 16-bit pay (f32 twice as slow), so the cost
    // step keeps the plan's 16-bit nodes.
    const bool f32 = node.num_outputs > 0 && node.outputs[0].dtype == AMPX_DTYPE_F32;
    return {AMPX_SUPPORT_NATIVE, f32 ? 2.0 : 1.0, ""};
  }

 private:
  std::string id_, missing_;
};

class NativeEverywhere final : public CapabilitySource {
 public:
  std::string device_id() const override { return "synthetic:0"; }
  Answer query(const ampx_node_desc&) override { return {AMPX_SUPPORT_NATIVE, -1, ""}; }
};

const Graph& graph_of(int64_t n) {
  static std::map<int64_t, std::unique_ptr<Graph>> cache;
  auto& g = cache[n];
  if (!g) g = std::make_unique<Graph>(make_residual_blocks(n));
  return *g;
}

// Times planning; the plan's destruction happens outside the timed region,
// as in a process that plans once and runs the plan.
// `plan_once` makes one plan of `g`.
template <typename PlanOnce>
void time_plans(benchmark::State& state, const Graph& g, PlanOnce plan_once) {
  int copies = 0;
  for (auto _ : state) {
    AmpPlan plan = plan_once();
    copies = plan.summary.copies;
    benchmark::DoNotOptimize(plan);
    state.PauseTiming();
    plan = AmpPlan{};
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(g.num_nodes()));
  state.counters["nodes"] = static_cast<double>(g.num_nodes());
  if (copies) state.counters["copies"] = copies;
}

void run_planner(benchmark::State& state, const Graph& g, const AmpPolicy& policy,
                 CapabilitySource& caps, bool build_graph = false) {
  time_plans(state, g,
             [&] { return plan_amp(g, policy, caps, PlanOptions{.build_graph = build_graph}); });
}

void BM_PlanO2_TableDevice(benchmark::State& state) {
  const Graph& g = graph_of(state.range(0));
  NativeEverywhere caps;
  AmpPolicy policy;
  policy.level = AmpLevel::kO2;
  run_planner(state, g, policy, caps);
}

// Decisions plus the rewritten graph an Executor runs.
void BM_PlanO2_TableDevice_WithGraph(benchmark::State& state) {
  const Graph& g = graph_of(state.range(0));
  NativeEverywhere caps;
  AmpPolicy policy;
  policy.level = AmpLevel::kO2;
  run_planner(state, g, policy, caps, true);
}

// The same through the C ABI of the real reference plugin.
void BM_PlanO2_CpuRefPlugin(benchmark::State& state) {
  static const plugins::PluginHost host;
  const plugins::Device* dev = host.find_device("cpu_ref:0");
  if (!dev) {
    state.SkipWithError("cpu_ref:0 not found");
    return;
  }
  const Graph& g = graph_of(state.range(0));
  DeviceCapabilities caps(*dev);
  AmpPolicy policy;
  policy.level = AmpLevel::kO2;
  run_planner(state, g, policy, caps);
}

// Placement across three devices (docs/PLACEMENT.md): the first lacks
// LayerNorm, the second Relu, the third (the fallback) runs everything, so
// every block has fallbacks, Casts and copies to decide.
void BM_Place3Devices(benchmark::State& state, bool build_graph) {
  const Graph& g = graph_of(state.range(0));
  TableDevice a("a:0", "LayerNorm"), b("b:0", "Relu"), c("c:0", "");
  const PlanDevice devices[] = {{&a, nullptr, false}, {&b, nullptr, false}, {&c, nullptr, true}};
  AmpPolicy policy;
  policy.level = AmpLevel::kO2;
  time_plans(state, g,
             [&] { return plan_amp(g, policy, devices, PlanOptions{.build_graph = build_graph}); });
}
void BM_Place3Devices_Decisions(benchmark::State& state) {
  BM_Place3Devices(state, false);
}
void BM_Place3Devices_WithGraph(benchmark::State& state) {
  BM_Place3Devices(state, true);
}

// What Session::plan does on top of plan_amp (plan_on_selection): the
// tuned-plan lookup in a capability database (one that holds no tuned plan
// for it; with the graph's content hash where it holds one it could match),
// then a cost-aware plan
// (PlanOptions::cost: the cost step's minimum cut and the predictions)
// whose cost models prefer in-context measurements, as after `ampx tune`:
// a calibration holding the graph's node signatures in f32 and 16-bit,
// over the device's cost hints.
class SessionLikeDevices {
 public:
  SessionLikeDevices(const Graph& g, std::vector<PlanDevice> devices) : devices_(devices) {
    for (PlanDevice& d : devices_) {
      capability::Calibration calibration;
      const double samples[] = {1.0};
      LoweredNode lowered;
      for (const Node& n : g.nodes())
        for (DType d16 : {DType::kF32, DType::kF16}) {
          std::vector<DType> ins, outs;
          ins.assign(n.inputs.size(), d16);
          outs.assign(n.outputs.size(), d16);
          lowered.assign(g, n, ins, outs, false);
          if (calibration.size() < 64) calibration.record(lowered.desc(), samples, "2026-12-05");
        }
      costs_.push_back(std::make_unique<capability::CalibratedCostModel>(
          std::move(calibration), capability::make_hint_cost_model(*d.caps)));
      d.cost = costs_.back().get();
    }
  }
  std::span<const PlanDevice> devices() const { return devices_; }

 private:
  std::vector<PlanDevice> devices_;
  std::vector<std::unique_ptr<capability::CalibratedCostModel>> costs_;
};

// A capability database of its own (removed at exit). `tuned_elsewhere`:
// it holds a tuned plan of another model for the same devices and options,
// so a lookup must hash the graph to know that it does not match.
class BenchDb {
 public:
  explicit BenchDb(const char* name, bool tuned_elsewhere)
      : path_(std::filesystem::temp_directory_path() / (std::string("ampx_planner_bench_") + name +
                                                        "_" + std::to_string(::getpid()) + ".db")) {
    auto store = capability::Store::open(path_);
    if (tuned_elsewhere)
      for (const char* devices : {"fp0", "fp0,fp1,fp2"})
        store.put_tuned_plan({"0000000000000000", devices, kOptions, "another-model",
                              "2026-12-05T00:00:00Z",
                              R"({"schema":"ampx.tuned/1","kept":"tuned","f32_nodes":[]})"});
  }
  ~BenchDb() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }
  static constexpr const char* kOptions = "amp=O2;dtype=f16";

 private:
  std::filesystem::path path_;
};

const std::string& empty_db() {
  static const BenchDb db("empty", false);
  static const std::string path = db.path();
  return path;
}
const std::string& tuned_elsewhere_db() {
  static const BenchDb db("tuned", true);
  static const std::string path = db.path();
  return path;
}

// As plan_on_selection: the tuned-plan lookup's key without the model hash
// (find_tuned_plan hashes the graph only when the database holds a plan it
// could match), then the cost-aware plan.
AmpPlan plan_as_session(const Graph& g, const AmpPolicy& policy,
                        std::span<const PlanDevice> devices, const std::string& fingerprints,
                        const std::string& db) {
  TunedPlanKey key;
  key.devices = fingerprints;
  key.options = BenchDb::kOptions;
  if (find_tuned_plan(g, g.name, key, db))
    throw std::logic_error("the benchmark's database holds a tuned plan for this graph");
  return plan_amp(g, policy, devices, PlanOptions{});
}

void session_plan_1device(benchmark::State& state, const std::string& db) {
  const Graph& g = graph_of(state.range(0));
  NativeEverywhere caps;
  const SessionLikeDevices devices(g, {{&caps, nullptr, false}});
  AmpPolicy policy;
  policy.level = AmpLevel::kO2;
  time_plans(state, g, [&] { return plan_as_session(g, policy, devices.devices(), "fp0", db); });
}

void session_plan_3devices(benchmark::State& state, const std::string& db) {
  const Graph& g = graph_of(state.range(0));
  TableDevice a("a:0", "LayerNorm"), b("b:0", "Relu"), c("c:0", "");
  const SessionLikeDevices devices(
      g, {{&a, nullptr, false}, {&b, nullptr, false}, {&c, nullptr, true}});
  AmpPolicy policy;
  policy.level = AmpLevel::kO2;
  time_plans(state, g,
             [&] { return plan_as_session(g, policy, devices.devices(), "fp0,fp1,fp2", db); });
}

void BM_SessionPlan_1Device(benchmark::State& state) {
  session_plan_1device(state, empty_db());
}
void BM_SessionPlan_3Devices(benchmark::State& state) {
  session_plan_3devices(state, empty_db());
}
// The database holds a tuned plan for these devices and options (of another
// model): the lookup hashes the graph.
void BM_SessionPlan_1Device_TunedDb(benchmark::State& state) {
  session_plan_1device(state, tuned_elsewhere_db());
}
void BM_SessionPlan_3Devices_TunedDb(benchmark::State& state) {
  session_plan_3devices(state, tuned_elsewhere_db());
}

BENCHMARK(BM_SessionPlan_1Device)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SessionPlan_3Devices)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SessionPlan_1Device_TunedDb)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SessionPlan_3Devices_TunedDb)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Place3Devices_Decisions)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Place3Devices_WithGraph)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanO2_TableDevice)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanO2_TableDevice_WithGraph)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanO2_CpuRefPlugin)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
