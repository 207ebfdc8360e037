// Planning is linear in the graph's size, checked by counting rather than
// timing (docs/benchmarks.md has the times): on graphs of repeated blocks
// of 1k and 10k nodes, the devices and the cost models are asked the same
// number of times (answers and predictions are memoised per node
// signature, so a graph of repeated blocks asks each distinct node once),
// and the planner allocates the same heap bytes per node (a buffer the size
// of the graph made per node, the usual way planning turns quadratic, would
// make it ten times as many). Its own executable: it counts allocations by
// replacing the global operator new.
#include <ampx/amp/planner.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/ir/builder.hpp>

#include <gtest/gtest.h>

#include <ampx/models/builtin_models.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_bytes{0};
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_bytes.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

using namespace ampx;

namespace {

// Native everywhere except `missing`; counts the questions.
class CountingDevice final : public CapabilitySource {
 public:
  CountingDevice(std::string id, std::string missing)
      : id_(std::move(id)), missing_(std::move(missing)) {}
  int queries = 0;
  std::string device_id() const override { return id_; }
  Answer query(const ampx_node_desc& node) override {
    ++queries;
    if (missing_ == node.op_type) return {AMPX_SUPPORT_UNSUPPORTED, -1, ""};
    return {AMPX_SUPPORT_NATIVE, 1.0, ""};
  }

 private:
  std::string id_, missing_;
};

// f32 twice as slow as 16-bit; counts the predictions asked for.
class CountingCost final : public capability::CostModel {
 public:
  int calls = 0;
  double node_us(const ampx_node_desc& node) override {
    ++calls;
    return node.num_outputs > 0 && node.outputs[0].dtype == AMPX_DTYPE_F32 ? 2.0 : 1.0;
  }
  capability::CostEstimate estimate(const ampx_node_desc& node) override {
    return {node_us(node), capability::CostOrigin::kMeasured};
  }
  std::string source() const override { return "counting"; }
  bool measured() const override { return true; }
};

struct Work {
  int queries = 0;      // capability questions, all devices
  int predictions = 0;  // cost model calls, all devices
  double bytes_per_node = 0;
  int casts = 0;
  size_t nodes = 0;
};

enum class Costs { kModel, kNone };

// One O2 plan of `g` (cost-aware with Costs::kModel) on the first
// `n_devices` of: a device lacking LayerNorm, one lacking Relu, and the
// fallback that runs all.
Work plan_counting(const Graph& g, int n_devices, Costs use = Costs::kModel) {
  CountingDevice a("a:0", n_devices > 1 ? "LayerNorm" : ""), b("b:0", "Relu"), c("c:0", "");
  CountingCost ca, cb, cc;
  const bool model = use == Costs::kModel;
  std::vector<PlanDevice> devices = {{&a, model ? &ca : nullptr, false},
                                     {&b, model ? &cb : nullptr, false},
                                     {&c, model ? &cc : nullptr, true}};
  devices.resize(static_cast<size_t>(n_devices));
  AmpPolicy policy;
  policy.level = AmpLevel::kO2;
  g_bytes = 0;
  g_counting = true;
  AmpPlan plan = plan_amp(g, policy, devices, PlanOptions{});
  g_counting = false;
  Work w;
  w.queries = a.queries + b.queries + c.queries;
  w.predictions = ca.calls + cb.calls + cc.calls;
  w.bytes_per_node = static_cast<double>(g_bytes.load()) / static_cast<double>(g.num_nodes());
  w.casts = plan.summary.casts;
  w.nodes = plan.nodes.size();
  return w;
}

void expect_linear(int n_devices) {
  const Graph small = make_residual_blocks(1000), large = make_residual_blocks(10000);
  const Work s = plan_counting(small, n_devices), l = plan_counting(large, n_devices);
  ASSERT_EQ(s.nodes, small.num_nodes());
  ASSERT_EQ(l.nodes, large.num_nodes());
  // The plans are of the sizes the graphs are (Casts around each LayerNorm).
  EXPECT_GT(l.casts, 9 * s.casts);
  EXPECT_GT(s.queries, 0);
  EXPECT_GT(s.predictions, 0);
  EXPECT_EQ(l.queries, s.queries) << "capability questions grew with the graph";
  EXPECT_EQ(l.predictions, s.predictions) << "cost predictions grew with the graph";
  EXPECT_GT(s.bytes_per_node, 0);
  EXPECT_LT(l.bytes_per_node, 1.25 * s.bytes_per_node)
      << "heap bytes per node: " << s.bytes_per_node << " at " << small.num_nodes() << " nodes, "
      << l.bytes_per_node << " at " << large.num_nodes();
}

TEST(PlannerScaling, OneDeviceAsksAndAllocatesTheSamePerNodeAt1kAnd10kNodes) {
  expect_linear(1);
}

TEST(PlannerScaling, ThreeDevicesAskAndAllocateTheSamePerNodeAt1kAnd10kNodes) {
  expect_linear(3);
}

// A cost-aware plan makes two planning passes (the second with the cost
// step's choice), and the cost step, its explanations and the predictions
// ask again: all of them share one memo per planning call, so the devices
// are asked what a plan without cost models asks (nothing is demoted here,
// so both ask the same questions), not that once per pass.
TEST(PlannerScaling, ACostAwarePlanAsksTheDevicesWhatAPlainPlanAsks) {
  const Graph g = make_residual_blocks(1000);
  for (int n_devices : {1, 3}) {
    const Work costed = plan_counting(g, n_devices),
               plain = plan_counting(g, n_devices, Costs::kNone);
    EXPECT_GT(plain.queries, 0);
    EXPECT_EQ(plain.predictions, 0);
    EXPECT_EQ(costed.queries, plain.queries) << n_devices << " devices";
  }
}

}  // namespace
