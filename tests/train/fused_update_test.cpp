// The fused optimizer pass (docs/TRAINING.md, "One optimizer pass"): the
// MultiSgdUpdate / MultiAdamUpdate reference kernel against UpdateGuard,
// the per-tensor updates and the weight Casts it replaces, bit for bit
// (one-pass and two-pass forms, skipped steps, every thread count); the
// lowering of a planned step (one update node, no per-weight Cast, a
// device that does not answer keeps the per-tensor nodes); and training
// runs with and without it on cpu_ref and onednn, bit for bit.
#include <ampx/half.hpp>
#include <ampx/reference/kernels.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/session/trainer.hpp>
#include <ampx/train/fused_update.hpp>

#include <node_builder.hpp>

#include "reference_kernel_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "train_fixtures.hpp"

using namespace ampx;
using namespace ampx::train;
using namespace ampx::train::testing;
using test::NodeBuilder;

namespace {

constexpr ampx_dtype F32 = AMPX_DTYPE_F32;

using namespace test::reference_kernels;

// One configuration of the optimizer and the guard.
struct Config {
  const char* name;
  bool adam = false;
  double momentum = 0, weight_decay = 0;
  bool nesterov = false, decoupled = false;
  double clip = 0;
  bool skip = false;
};

void PrintTo(const Config& c, std::ostream* os) {
  *os << c.name;
}

void set_attrs(NodeBuilder& b, const Config& c) {
  if (c.adam) {
    b.attr_float("beta1", 0.8).attr_float("beta2", 0.95).attr_float("epsilon", 1e-6);
    b.attr_float("weight_decay", c.weight_decay).attr_int("decoupled", c.decoupled ? 1 : 0);
  } else {
    b.attr_float("momentum", c.momentum).attr_int("nesterov", c.nesterov ? 1 : 0);
    b.attr_float("weight_decay", c.weight_decay);
  }
}

// Weights of 70,000 (two of the guard's blocks), 1,000 and 37 elements;
// copies: weight 0 in bf16, weight 2 in f16 and bf16.
const std::vector<int64_t> kSizes{70000, 1000, 37};
const std::vector<std::pair<size_t, ampx_dtype>> kCopies{
    {0, AMPX_DTYPE_BF16}, {2, AMPX_DTYPE_F16}, {2, AMPX_DTYPE_BF16}};

struct Tensors {
  std::vector<std::vector<float>> w, g, s0, s1;
  std::vector<std::vector<uint16_t>> c;
  std::vector<float> hyper, stats = std::vector<float>(2);
};

Tensors make_tensors(const Config& c, bool nonfinite) {
  Tensors t;
  uint64_t seed = 1;
  for (int64_t n : kSizes) {
    const auto un = static_cast<size_t>(n);
    t.w.push_back(randoms(un, seed++));
    // Gradients scaled by a loss scale of 8, undone by grad_scale 1/8.
    std::vector<float> g = randoms(un, seed++, -8.0f, 8.0f);
    t.g.push_back(std::move(g));
    t.s0.push_back(randoms(un, seed++));
    t.s1.push_back(randoms(un, seed++, 0.0f, 1.0f));
  }
  if (nonfinite) t.g[1][500] = INFINITY;
  for (const auto& [w, dt] : kCopies) {
    std::vector<uint16_t> c(t.w[w].size());
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = dt == AMPX_DTYPE_BF16 ? float_to_bf16_bits(t.w[w][i]) : float_to_f16_bits(t.w[w][i]);
    t.c.push_back(std::move(c));
  }
  t.hyper = c.adam ? std::vector<float>{0.05f, 0.125f, 1.0f, 0.2f, 0.05f}
                   : std::vector<float>{0.05f, 0.125f, 1.0f};
  return t;
}

size_t states_of(const Config& c) {
  return c.adam ? 2 : c.momentum > 0 ? 1 : 0;
}

// The per-tensor nodes: UpdateGuard, one update per weight, then a Cast
// per copy from the new weight. Out of place.
Tensors per_tensor(const Config& c, const Tensors& t0) {
  Tensors t = t0;
  NodeBuilder guard("UpdateGuard", "guard");
  guard.input(F32, {static_cast<int64_t>(t.hyper.size())});
  for (int64_t n : kSizes) guard.input(F32, {n});
  guard.output(F32, {static_cast<int64_t>(t.hyper.size())}).output(F32, {2});
  guard.attr_float("clip_norm", c.clip).attr_int("skip_nonfinite", c.skip ? 1 : 0);
  std::vector<const void*> gin{t0.hyper.data()};
  for (const auto& g : t0.g) gin.push_back(g.data());
  std::vector<float> hyper(t.hyper.size());
  run(guard, gin, {hyper.data(), t.stats.data()});
  t.hyper = hyper;
  for (size_t k = 0; k < kSizes.size(); ++k) {
    const int64_t n = kSizes[k];
    NodeBuilder u(c.adam ? "AdamUpdate" : "SgdUpdate", "u");
    set_attrs(u, c);
    if (c.adam) {
      for (int i = 0; i < 4; ++i) u.input(F32, {n});
      u.input(F32, {5});
      for (int i = 0; i < 3; ++i) u.output(F32, {n});
      run(u, {t0.w[k].data(), t0.g[k].data(), t0.s0[k].data(), t0.s1[k].data(), hyper.data()},
          {t.w[k].data(), t.s0[k].data(), t.s1[k].data()});
    } else {
      u.input(F32, {n}).input(F32, {n}).input(F32, {3}).output(F32, {n});
      if (c.momentum > 0) {
        u.input(F32, {n}).output(F32, {n});
        run(u, {t0.w[k].data(), t0.g[k].data(), hyper.data(), t0.s0[k].data()},
            {t.w[k].data(), t.s0[k].data()});
      } else {
        run(u, {t0.w[k].data(), t0.g[k].data(), hyper.data()}, {t.w[k].data()});
      }
    }
  }
  for (size_t j = 0; j < kCopies.size(); ++j) {
    const auto [w, dt] = kCopies[j];
    NodeBuilder cast("Cast", "cast");
    cast.input(F32, {kSizes[w]}).output(dt, {kSizes[w]}).attr_int("to", dt);
    run(cast, {t.w[w].data()}, {t.c[j].data()});
  }
  return t;
}

NodeBuilder multi_node(const Config& c, size_t hyper_len, std::vector<int64_t> copies = {}) {
  NodeBuilder b(c.adam ? "MultiAdamUpdate" : "MultiSgdUpdate", "optimizer");
  const size_t states = states_of(c);
  b.input(F32, {static_cast<int64_t>(hyper_len)});
  for (size_t r = 0; r < 2 + states; ++r)
    for (int64_t n : kSizes) b.input(F32, {n});
  for (const auto& [w, dt] : kCopies) b.input(dt, {kSizes[w]});
  b.output(F32, {static_cast<int64_t>(hyper_len)}).output(F32, {2});
  for (size_t r = 0; r < 1 + states; ++r)
    for (int64_t n : kSizes) b.output(F32, {n});
  for (const auto& [w, dt] : kCopies) b.output(dt, {kSizes[w]});
  set_attrs(b, c);
  b.attr_float("clip_norm", c.clip).attr_int("skip_nonfinite", c.skip ? 1 : 0);
  if (copies.empty())
    for (const auto& [w, dt] : kCopies) copies.push_back(static_cast<int64_t>(w));
  b.attr_ints("copies", copies);
  return b;
}

// In place, as the executor runs it: every output in its input's buffer.
Tensors fused(const Config& c, const Tensors& t0) {
  Tensors t = t0;
  NodeBuilder b = multi_node(c, t.hyper.size());
  const size_t states = states_of(c);
  std::vector<const void*> in{t.hyper.data()};
  std::vector<void*> out{t.hyper.data(), t.stats.data()};
  for (auto& w : t.w) in.push_back(w.data());
  for (auto& g : t.g) in.push_back(g.data());
  for (size_t s = 0; s < states; ++s)
    for (auto& x : s == 0 ? t.s0 : t.s1) in.push_back(x.data());
  for (auto& cp : t.c) in.push_back(cp.data());
  for (auto& w : t.w) out.push_back(w.data());
  for (size_t s = 0; s < states; ++s)
    for (auto& x : s == 0 ? t.s0 : t.s1) out.push_back(x.data());
  for (auto& cp : t.c) out.push_back(cp.data());
  run(b, in, out);
  return t;
}

void expect_same(const Tensors& a, const Tensors& b, const Config& c) {
  const size_t states = states_of(c);
  auto bits = [](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    std::vector<uint8_t> out(v.size() * sizeof(T));
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  };
  EXPECT_EQ(bits(a.hyper), bits(b.hyper)) << c.name << ": hyper'";
  EXPECT_EQ(bits(a.stats), bits(b.stats)) << c.name << ": stats";
  for (size_t k = 0; k < kSizes.size(); ++k) {
    EXPECT_EQ(bits(a.w[k]), bits(b.w[k])) << c.name << ": weight " << k;
    if (states >= 1) EXPECT_EQ(bits(a.s0[k]), bits(b.s0[k])) << c.name << ": state 0 of " << k;
    if (states >= 2) EXPECT_EQ(bits(a.s1[k]), bits(b.s1[k])) << c.name << ": state 1 of " << k;
  }
  for (size_t j = 0; j < kCopies.size(); ++j)
    EXPECT_EQ(bits(a.c[j]), bits(b.c[j])) << c.name << ": copy " << j;
}

const Config kConfigs[] = {
    {"sgd", false, 0, 0},
    {"sgd_momentum", false, 0.9, 0},
    {"sgd_nesterov_decay", false, 0.9, 0.01, true},
    {"sgd_momentum_skip", false, 0.9, 0, false, false, 0, true},
    {"sgd_momentum_clip", false, 0.9, 0.01, false, false, 0.5, true},
    {"adam", true, 0, 0.01},
    {"adamw", true, 0, 0.1, false, true},
    {"adamw_skip_clip", true, 0, 0.1, false, true, 0.5, true},
};

class MultiUpdateKernel : public ::testing::TestWithParam<Config> {};

// The fused node's every output equals the per-tensor nodes' bit for bit,
// at one thread and at four.
TEST_P(MultiUpdateKernel, EqualsTheGuardThePerTensorUpdatesAndTheCasts) {
  const Config c = GetParam();
  const Tensors t0 = make_tensors(c, false);
  const Tensors want = per_tensor(c, t0);
  EXPECT_NE(want.w[0], t0.w[0]);  // it updates
  for (int threads : {1, 4}) {
    reference::set_max_threads(threads);
    expect_same(fused(c, t0), want, c);
  }
  reference::set_max_threads(0);
}

// A non-finite gradient: with skip_nonfinite everything is left as it was
// (weights, states, copies), and the guard's stats say so; without it the
// update goes through as the per-tensor nodes' does.
TEST_P(MultiUpdateKernel, ANonFiniteGradientSkipsOrAppliesAsTheGuardSays) {
  const Config c = GetParam();
  const Tensors t0 = make_tensors(c, true);
  const Tensors got = fused(c, t0);
  expect_same(got, per_tensor(c, t0), c);
  EXPECT_EQ(got.stats[0], 0.0f);
  if (c.skip) {
    Tensors unchanged = t0;
    unchanged.hyper[2] = 0.0f;
    unchanged.stats = got.stats;
    expect_same(got, unchanged, c);
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, MultiUpdateKernel, ::testing::ValuesIn(kConfigs),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MultiUpdateKernel, MalformedNodesAreRefusedNamingWhat) {
  Config c{"sgd_momentum", false, 0.9};
  NodeBuilder b = multi_node(c, 3, {0, 5, 2});
  std::string why;
  EXPECT_FALSE(reference::can_run(b.desc(), &why));
  EXPECT_NE(why.find("copy 1 names weight 5"), std::string::npos) << why;
  NodeBuilder odd("MultiSgdUpdate", "optimizer");
  odd.input(F32, {3}).input(F32, {4}).input(F32, {4}).input(F32, {4});
  odd.output(F32, {3}).output(F32, {2}).output(F32, {4});
  EXPECT_FALSE(reference::can_run(odd.desc(), &why));
  EXPECT_NE(why.find("do not make hyper"), std::string::npos) << why;
}

// ------------------------------------------------------------ the lowering

// A capability source that answers like cpu_ref but refuses the fused ops.
class NoFusedOps final : public CapabilitySource {
 public:
  explicit NoFusedOps(CapabilitySource& inner) : inner_(inner) {}
  std::string device_id() const override { return "nofused:0"; }
  Answer query(const ampx_node_desc& node) override {
    const std::string_view op = node.op_type;
    if (op == "MultiSgdUpdate" || op == "MultiAdamUpdate")
      return {AMPX_SUPPORT_UNSUPPORTED, -1, "no fused optimizer here"};
    return inner_.query(node);
  }

 private:
  CapabilitySource& inner_;
};

int count_op(const Graph& g, OpType op) {
  int n = 0;
  for (const Node& nd : g.nodes()) n += nd.op == op ? 1 : 0;
  return n;
}

// Casts that read a trained weight: the weights' per-step Casts.
int weight_casts(const Graph& g, const TrainingGraph& tg) {
  int n = 0;
  for (const Node& nd : g.nodes())
    for (const StateEntry& e : tg.state)
      n += nd.op == OpType::kCast && e.role == StateRole::kWeight &&
                   g.value(nd.inputs[0]).name == e.name
               ? 1
               : 0;
  return n;
}

TrainerOptions o2_bf16(OptimizerKind kind) {
  TrainerOptions o = sgd(16);
  o.graph.optimizer.kind = kind;
  if (kind != OptimizerKind::kSgd) o.graph.optimizer.momentum = 0;
  o.policy.level = AmpLevel::kO2;
  o.policy.half = DType::kBF16;
  o.capability_blind = true;  // cpu_ref's emulated bf16: the forward really is bf16
  return o;
}

// At O2 the planner plans the per-tensor nodes and a Cast per 16-bit
// weight; the step that runs has one update node, no guard, no per-tensor
// update and no weight Cast: each became a copy the update writes.
TEST(FusedUpdate, AnO2StepHasOneUpdateNodeAndNoWeightCasts) {
  Session session(cpu_ref_only());
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
    Trainer t(session, small_mlp(), o2_bf16(kind));
    const Graph& planned = t.plan().graph;
    const int casts = weight_casts(planned, t.training_graph());
    EXPECT_EQ(casts, 4) << "fc1/fc2 weight and bias feed bf16 Gemms";
    EXPECT_EQ(count_op(planned, OpType::kUpdateGuard), 1);
    const Graph& step = t.step_graph();
    const OpType fused =
        kind == OptimizerKind::kSgd ? OpType::kMultiSgdUpdate : OpType::kMultiAdamUpdate;
    EXPECT_EQ(count_op(step, fused), 1);
    EXPECT_EQ(count_op(step, OpType::kUpdateGuard), 0);
    EXPECT_EQ(count_op(step, OpType::kSgdUpdate) + count_op(step, OpType::kAdamUpdate), 0);
    EXPECT_EQ(weight_casts(step, t.training_graph()), 0);
    EXPECT_EQ(step.inputs().size(), planned.inputs().size() + static_cast<size_t>(casts));
  }
}

// A device that does not answer the fused node keeps the planned nodes,
// and says why.
TEST(FusedUpdate, ADeviceThatDoesNotAnswerKeepsThePerTensorNodes) {
  Session session(cpu_ref_only());
  Trainer t(session, small_mlp(), o2_bf16(OptimizerKind::kSgd));
  DeviceCapabilities cpu(session.host().device("cpu_ref:0"));
  NoFusedOps refusing(cpu);
  CapabilitySource* one[] = {&refusing};
  const LoweredUpdates r = fuse_updates(t.plan().graph, one);
  EXPECT_FALSE(r.fused);
  EXPECT_NE(r.reason.find("nofused:0 does not run MultiSgdUpdate"), std::string::npos) << r.reason;
  CapabilitySource* answering[] = {&cpu};
  EXPECT_TRUE(fuse_updates(t.plan().graph, answering).fused);
}

// ----------------------------------------------------- training, bit for bit

struct RunConfig {
  const char* name;
  const char* device;
  OptimizerKind kind;
  bool nesterov;
  AmpLevel level;
  DType half;
};

void PrintTo(const RunConfig& c, std::ostream* os) {
  *os << c.name;
}

// Two epochs of the small MLP, fused and per-tensor: the same state bytes,
// the same losses, the same guard flags and norms. O2 f16 starts at a loss
// scale of 2^24: its first steps overflow and are skipped.
class FusedTraining : public ::testing::TestWithParam<RunConfig> {};

bool o_blind(const RunConfig& rc) {
  return std::string_view(rc.device) == "cpu_ref:0";
}

TEST_P(FusedTraining, TrainsBitForBitAsThePerTensorNodes) {
  const RunConfig rc = GetParam();
  const Dataset data = synthetic(100, 12, 4, 5);
  SessionOptions so = cpu_ref_only();
  so.devices = rc.device;
  so.fallback = false;
  Session session(so);
  auto train = [&](TrainerOptions::UpdateLowering lowering, int* fused_nodes, int* skipped) {
    TrainerOptions o = sgd(16);
    o.graph.optimizer.kind = rc.kind;
    if (rc.kind != OptimizerKind::kSgd) {
      o.graph.optimizer.momentum = 0;
      o.graph.optimizer.lr = 0.01;
      o.graph.optimizer.weight_decay = 0.01;
    } else if (rc.nesterov) {
      o.graph.optimizer.nesterov = true;
      o.graph.optimizer.weight_decay = 0.001;
    }
    o.policy.level = rc.level;
    o.policy.half = rc.half;
    o.capability_blind = o_blind(rc);
    o.update_lowering = lowering;
    Trainer t(session, small_mlp(), o);
    std::vector<double> record;
    *skipped = 0;
    for (int e = 0; e < 2; ++e)
      for (const StepRecord& r : t.train_epoch(data).records) {
        record.insert(record.end(), {r.loss, r.scale, r.finite ? 1.0 : 0.0, r.grad_norm});
        *skipped += r.finite ? 0 : 1;
      }
    *fused_nodes = count_op(t.step_graph(), OpType::kMultiSgdUpdate) +
                   count_op(t.step_graph(), OpType::kMultiAdamUpdate);
    return std::pair{bytes_of(t.state()), record};
  };
  int fused_nodes = 0, per_tensor_nodes = 0, skipped = 0, skipped_ref = 0;
  const auto got = train(TrainerOptions::UpdateLowering::kFused, &fused_nodes, &skipped);
  const auto want =
      train(TrainerOptions::UpdateLowering::kPerTensor, &per_tensor_nodes, &skipped_ref);
  EXPECT_EQ(fused_nodes, 1);
  EXPECT_EQ(per_tensor_nodes, 0);
  EXPECT_EQ(got.first, want.first) << "state bytes";
  EXPECT_EQ(got.second, want.second) << "losses, scales, finite flags, norms";
  // cpu_ref plans f16 capability-blind: its gradients overflow at 2^24.
  if (rc.level == AmpLevel::kO2 && rc.half == DType::kF16 && o_blind(rc)) EXPECT_GT(skipped, 0);
}

const RunConfig kRuns[] = {
    {"cpu_ref_sgd_O0", "cpu_ref:0", OptimizerKind::kSgd, false, AmpLevel::kO0, DType::kF16},
    {"cpu_ref_nesterov_O2_bf16", "cpu_ref:0", OptimizerKind::kSgd, true, AmpLevel::kO2,
     DType::kBF16},
    {"cpu_ref_adam_O2_f16", "cpu_ref:0", OptimizerKind::kAdam, false, AmpLevel::kO2, DType::kF16},
    {"cpu_ref_adamw_O2_bf16", "cpu_ref:0", OptimizerKind::kAdamW, false, AmpLevel::kO2,
     DType::kBF16},
#ifdef AMPX_TEST_HAVE_ONEDNN
    {"onednn_sgd_O0", "onednn:0", OptimizerKind::kSgd, false, AmpLevel::kO0, DType::kF16},
    {"onednn_sgd_O2_bf16", "onednn:0", OptimizerKind::kSgd, false, AmpLevel::kO2, DType::kBF16},
    {"onednn_nesterov_O2_f16", "onednn:0", OptimizerKind::kSgd, true, AmpLevel::kO2, DType::kF16},
    {"onednn_adamw_O2_bf16", "onednn:0", OptimizerKind::kAdamW, false, AmpLevel::kO2, DType::kBF16},
#endif
};

INSTANTIATE_TEST_SUITE_P(Runs, FusedTraining, ::testing::ValuesIn(kRuns),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
