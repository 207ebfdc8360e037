// The cost-aware precision choice: exact on problems whose best answer is
// known, equal to brute force on random DAG-shaped problems, and wired into
// the planner (reason `cost`).
#include <ampx/amp/planner.hpp>
#include <ampx/amp/precision_cut.hpp>
#include <ampx/ir/builder.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace ampx;
using P = PrecisionCutProblem;

namespace {

double brute_force(const P& p) {
  const size_t n = p.time_f32.size();
  double best = 1e300;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    std::vector<bool> l(n);
    for (size_t i = 0; i < n; ++i) l[i] = (mask >> i) & 1u;
    best = std::min(best, precision_cut_cost(p, l));
  }
  return best;
}

// in -> A -> B -> C -> out. A and C gain a lot in 16-bit, B (a cheap op)
// loses a little. Deciding node by node (each node with the Casts around it)
// keeps B in f32 and pays two extra Casts; the whole-graph optimum runs B
// in 16-bit too.
TEST(PrecisionCut, ChainWhereGreedyIsWorse) {
  P p;
  p.time_f32 = {10, 1, 10};
  p.time_16 = {2, 1.5, 2};
  p.values = {{P::kFixedF32, {0}, 1, 1},   // input -> A
              {0, {1}, 1, 1},              // A -> B
              {1, {2}, 1, 1},              // B -> C
              {2, {P::kFixedF32}, 1, 1}};  // C -> graph output (f32)
  const auto r = solve_precision_cut(p);
  EXPECT_EQ(r.use_16bit, (std::vector<bool>{true, true, true}));
  EXPECT_DOUBLE_EQ(r.total, 2 + 1.5 + 2 + 1 + 1);
  // Greedy: B alone is better in f32 (1 < 1.5), and then pays Casts.
  EXPECT_DOUBLE_EQ(precision_cut_cost(p, {true, false, true}), 2 + 1 + 2 + 4 * 1);
  EXPECT_LT(r.total, precision_cut_cost(p, {true, false, true}));
}

// One f32 value feeding two 16-bit consumers needs one Cast, not two:
// counted per edge, the Casts (2 x 1.5) would outweigh the gain (2 x 1).
TEST(PrecisionCut, CastIsPaidOncePerValueAndDtype) {
  P p;
  p.time_f32 = {3, 3};
  p.time_16 = {2, 2};
  p.values = {{P::kFixedF32, {0, 1}, 1.5, 1.5},
              {0, {P::kFixedF32}, 0.1, 0.1},
              {1, {P::kFixedF32}, 0.1, 0.1}};
  const auto r = solve_precision_cut(p);
  EXPECT_EQ(r.use_16bit, (std::vector<bool>{true, true}));
  EXPECT_DOUBLE_EQ(r.total, 2 + 2 + 1.5 + 0.2);
}

TEST(PrecisionCut, KeepsF32WhenCastsOutweighTheGain) {
  P p;
  p.time_f32 = {1.0};
  p.time_16 = {0.8};
  p.values = {{P::kFixedF32, {0}, 0.5, 0.5}, {0, {P::kFixedF32}, 0.5, 0.5}};
  EXPECT_EQ(solve_precision_cut(p).use_16bit, std::vector<bool>{false});
}

TEST(PrecisionCut, TiesGoTo16Bit) {
  P p;
  p.time_f32 = {1.0};
  p.time_16 = {1.0};
  p.values = {{P::kFixed16, {0}, 0, 0}};
  EXPECT_EQ(solve_precision_cut(p).use_16bit, std::vector<bool>{true});
}

// Random DAG-shaped problems (values flow from lower to higher candidates,
// with fixed f32/16-bit producers and consumers mixed in): the cut's total
// equals the brute-force minimum.
TEST(PrecisionCut, MatchesBruteForceOnRandomDags) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> t(0.1, 10.0), c(0.0, 3.0);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 9);
    P p;
    for (int i = 0; i < n; ++i) {
      p.time_f32.push_back(t(rng));
      p.time_16.push_back(t(rng));
    }
    const int nv = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < nv; ++k) {
      P::ValueTerm v;
      const int r = static_cast<int>(rng() % (n + 2));
      v.producer = r < n ? r : (r == n ? P::kFixedF32 : P::kFixed16);
      const int nc = 1 + static_cast<int>(rng() % 3);
      for (int j = 0; j < nc; ++j) {
        const int q = static_cast<int>(rng() % (n + 2));
        if (q < n && (v.producer < 0 || q > v.producer))
          v.consumers.push_back(q);
        else
          v.consumers.push_back(q % 2 ? P::kFixedF32 : P::kFixed16);
      }
      v.cast_to_16 = c(rng);
      v.cast_to_f32 = c(rng);
      p.values.push_back(std::move(v));
    }
    const auto r = solve_precision_cut(p);
    EXPECT_NEAR(r.total, brute_force(p), 1e-9) << "trial " << trial;
  }
}

// The planner with a cost model: 16-bit native everywhere, but a cost model
// that makes the small MatMul slower in 16-bit than its Casts save.
class TableCaps final : public CapabilitySource {
 public:
  std::string device_id() const override { return "table:0"; }
  Answer query(const ampx_node_desc&) override { return {AMPX_SUPPORT_NATIVE, 1.0, ""}; }
};

class ByOpCost final : public capability::CostModel {
 public:
  double node_us(const ampx_node_desc& n) override {
    const bool half = n.num_outputs && n.outputs[0].dtype != AMPX_DTYPE_F32;
    if (std::strcmp(n.op_type, "Cast") == 0) return 1.0;
    if (std::strcmp(n.op_type, "MatMul") == 0) {
      const bool big = n.inputs[0].dims[n.inputs[0].rank - 1] > 100;
      return big ? (half ? 10.0 : 40.0) : (half ? 1.2 : 1.0);
    }
    return half ? 0.5 : 0.6;
  }
  std::string source() const override { return "test table"; }
  bool measured() const override { return true; }
};

TEST(CostAwarePlanner, KeepsAnUnprofitableNodeF32ForCost) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", DType::kF32, {4, 8});
  const ValueId small = b.add(OpType::kMatMul, "small", {x, b.random_weight("w1", {8, 256}, 0.1f)});
  const ValueId big =
      b.add(OpType::kMatMul, "big", {small, b.random_weight("w2", {256, 256}, 0.1f)});
  b.output(b.unary(OpType::kRelu, "relu", big));
  const Graph g = std::move(b).build();
  TableCaps caps;
  ByOpCost cost;
  AmpPolicy p;
  p.level = AmpLevel::kO3;
  const AmpPlan plan = plan_amp(g, p, caps, {.cost = &cost});
  auto find = [&](const std::string& name) -> const NodePlan& {
    for (const auto& n : plan.nodes)
      if (n.name == name) return n;
    throw std::runtime_error(name);
  };
  // small: 1.0 in f32 against 1.2 in 16-bit plus a Cast in (1.0): f32.
  // Then big pays the Cast: 10 + 1 < 40, so it stays 16-bit, and relu
  // follows it (0.5 + Cast out 1 vs Cast 1 + 0.6).
  EXPECT_EQ(find("small").effective, DType::kF32);
  EXPECT_EQ(find("small").reason(), "cost");
  EXPECT_DOUBLE_EQ(find("small").time_f32_us, 1.0);
  EXPECT_DOUBLE_EQ(find("small").time_16_us, 1.2);
  EXPECT_EQ(find("big").effective, DType::kF16);
  EXPECT_EQ(find("relu").effective, DType::kF16);
  EXPECT_EQ(plan.summary.kept_fp32_cost, 1);
  EXPECT_EQ(plan.summary.kept_fp32_no_native, 0);
  // small (1.0) + Cast (1) + big (10) + relu (0.5) + Cast out (1).
  EXPECT_DOUBLE_EQ(plan.predicted_us, 13.5);
  EXPECT_EQ(plan.cost_source, "test table");
  EXPECT_GT(plan.graph.num_nodes(), 0u);
  // Decisions-only plans drop the graph but keep the predictions.
  const AmpPlan light = plan_amp(g, p, caps, {.build_graph = false, .cost = &cost});
  EXPECT_EQ(light.graph.num_nodes(), 0u);
  EXPECT_DOUBLE_EQ(light.predicted_us, 13.5);
}

}  // namespace
