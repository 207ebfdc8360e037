// ZeRO-1's pieces without MPI (train/sharded_optimizer.hpp, the sharded
// training step, the guard's exchange group, sharded checkpoints); the
// ranks together are tested under mpirun (tests/dist).
#include "train_fixtures.hpp"

#include <ampx/exec/value_exchange.hpp>
#include <ampx/train/checkpoint.hpp>
#include <ampx/train/data_parallel.hpp>
#include <ampx/train/sharded_optimizer.hpp>
#include <ampx/train/step_gradients.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include <unistd.h>

namespace ampx::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PlanWeightOwners, ContiguousRunsInBucketOrderEveryRankAtLeastOne) {
  // Bucket order is reverse weight order: rank 0 takes the last weights.
  EXPECT_THAT(plan_weight_owners(std::vector<int64_t>{10, 10, 10, 10}, 2), ElementsAre(1, 1, 0, 0));
  // Balanced by bytes: the large first weight is rank 1's alone.
  EXPECT_THAT(plan_weight_owners(std::vector<int64_t>{100, 10, 10, 10}, 2),
              ElementsAre(1, 0, 0, 0));
  // A huge last weight still leaves every other rank a weight.
  EXPECT_THAT(plan_weight_owners(std::vector<int64_t>{1, 1, 1, 1000}, 3), ElementsAre(2, 2, 1, 0));
  EXPECT_THAT(plan_weight_owners(std::vector<int64_t>{5, 5, 5}, 3), ElementsAre(2, 1, 0));
  EXPECT_THAT(plan_weight_owners(std::vector<int64_t>{5, 5}, 1), ElementsAre(0, 0));
  try {
    plan_weight_owners(std::vector<int64_t>{5, 5}, 3);
    ADD_FAILURE() << "two weights were shared by three ranks";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("each rank must own at least one weight"));
  }
}

TEST(PlanBuckets, ANewBucketWhereTheOwnerChanges) {
  const std::vector<BucketedGradient> g{{"a", 4, DType::kF32, 1},
                                        {"b", 4, DType::kF32, 1},
                                        {"c", 4, DType::kF32, 0},
                                        {"d", 4, DType::kF32, 0}};
  const auto buckets = plan_buckets(g, 1 << 20);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_THAT(buckets[0], ElementsAre(3, 2));
  EXPECT_THAT(buckets[1], ElementsAre(1, 0));
}

// The verdict over the ranks equals one guard over all gradients
// (docs/OPS.md, UpdateGuard): the norm from the ranks' squares, the clip
// factor from it, the skip from any rank's non-finite gradient.
TEST(GuardVerdict, IsOneGuardOverEveryRanksGradients) {
  std::vector<float> hyper{0.1f, 0.5f, 1.0f};
  std::vector<float> stats{1.0f, 3.0f};  // this rank's share: norm 3
  // Another rank's norm 4: the global norm 5, clipped to 1.
  apply_guard_verdict(hyper, stats, 0, 3.0 * 3.0 + 4.0 * 4.0, {.clip_norm = 1.0});
  EXPECT_EQ(stats[0], 1.0f);
  EXPECT_FLOAT_EQ(stats[1], 5.0f);
  EXPECT_FLOAT_EQ(hyper[1], static_cast<float>(0.5 * 1.0 / (5.0 + 1e-6)));
  EXPECT_EQ(hyper[2], 1.0f);
  // Below the clip norm: unchanged.
  hyper = {0.1f, 0.5f, 1.0f};
  apply_guard_verdict(hyper, stats, 0, 25.0, {.clip_norm = 10.0});
  EXPECT_EQ(hyper[1], 0.5f);
  // One rank's non-finite gradient: skipped everywhere, norm infinite.
  hyper = {0.1f, 0.5f, 1.0f};
  stats = {1.0f, 3.0f};
  apply_guard_verdict(hyper, stats, 1, INFINITY, {.clip_norm = 1.0, .skip_nonfinite = true});
  EXPECT_EQ(stats[0], 0.0f);
  EXPECT_TRUE(std::isinf(stats[1]));
  EXPECT_EQ(hyper[2], 0.0f);
  EXPECT_EQ(hyper[1], 0.5f);  // no clipping of a skipped step
}

std::string first_weight(const Graph& model) {
  const TrainingGraph full = build_training_graph(model, {});
  for (const StateEntry& e : full.state)
    if (e.role == StateRole::kWeight) return e.name;
  return "";
}

// The step of a rank that owns one weight: one update, that weight's
// moment only, a neutral guard; the other weights are state it reads and
// leaves as it was.
TEST(ShardedStep, UpdatesOnlyTheOwnedWeights) {
  const Graph model = testing::small_mlp();
  TrainingGraphOptions o;
  o.optimizer.momentum = 0.9;
  o.clip_grad_norm = 1.0;
  o.skip_nonfinite = true;
  const std::string owned = first_weight(model);
  o.owned_weights = std::vector<std::string>{owned};
  const TrainingGraph tg = build_training_graph(model, o);
  int updates = 0, moments = 0, weights = 0;
  for (const Node& n : tg.step.nodes()) {
    updates += n.op == OpType::kSgdUpdate ? 1 : 0;
    if (n.op == OpType::kUpdateGuard) {
      EXPECT_EQ(n.name, kUpdateGuardNode);
      EXPECT_EQ(std::get<double>(n.attrs.at("clip_norm")), 0.0);
      EXPECT_EQ(std::get<int64_t>(n.attrs.at("skip_nonfinite")), 0);
      EXPECT_EQ(n.inputs.size(), 1u + 4u);  // hyper and every gradient
    }
  }
  for (const StateEntry& e : tg.state) {
    moments += e.role == StateRole::kMomentum ? 1 : 0;
    if (e.role != StateRole::kWeight) continue;
    ++weights;
    const ValueId in = tg.step.inputs()[e.binding.input];
    const ValueId out = tg.step.outputs()[e.binding.output];
    EXPECT_EQ(in == out, e.name != owned) << e.name;
  }
  EXPECT_EQ(updates, 1);
  EXPECT_EQ(moments, 1);
  EXPECT_EQ(weights, 4);
  o.owned_weights = std::vector<std::string>{"no-such-weight"};
  EXPECT_THROW(build_training_graph(model, o), std::invalid_argument);
}

// An exchange that writes 1 into grad_scale when the guard's group is
// needed, and records when it was handed what.
class GuardExchange final : public ValueExchange {
 public:
  void produced(size_t i, std::span<std::byte>) override {
    events.push_back("produced " + std::to_string(i));
  }
  void progress() override {}
  void needed(size_t i, std::span<std::byte> bytes) override {
    events.push_back("needed " + std::to_string(i));
    auto* f = reinterpret_cast<float*>(bytes.data());
    if (i == 0) f[1] = 1.0f;   // hyper': grad_scale
    if (i == 1) f[1] = 42.0f;  // stats: the norm (a step output no step reads)
  }
  std::vector<std::string> events;
};

class ShardedStepIn : public ::testing::TestWithParam<ExecutionMode> {};

// Compiled and eager: the owned weight moves, the others stay as they were
// and keep what write_state() put there between runs; the guard's group,
// its stats read by no step, is handed over and written back.
TEST_P(ShardedStepIn, LeavesOtherRanksWeightsAndTakesTheGuardsVerdict) {
  const Graph model = testing::small_mlp();
  TrainingGraphOptions o;
  const std::string owned = first_weight(model);
  o.owned_weights = std::vector<std::string>{owned};
  const TrainingGraph tg = build_training_graph(model, o);
  Session session(testing::cpu_ref_only());
  const PlannedModel planned = session.plan(tg.step, PlanRequest{.logging = PlanLogging::kQuiet});
  CompileOptions compile;
  compile.mode = GetParam();
  for (const StateEntry& e : tg.state) compile.state.push_back(e.binding);
  CompiledModel m = session.compile(planned, compile);
  for (size_t i = 0; i < tg.state.size(); ++i)
    m.executor().write_state(i, tg.state[i].initial.data);
  const Graph& g = *m.execution_plan().graph;
  const auto guard = std::find_if(g.nodes().begin(), g.nodes().end(),
                                  [](const Node& n) { return n.name == kUpdateGuardNode; });
  ASSERT_NE(guard, g.nodes().end());
  GuardExchange exchange;
  const std::vector<ExchangedValue> values{{guard->outputs[0], 7}, {guard->outputs[1], 7}};
  m.executor().set_exchange(values, &exchange);

  // grad_scale 0 in the input: only the exchange's 1 makes the update move.
  const std::vector<HostTensor> in = testing::one_step_inputs(
      tg, testing::synthetic(16, 12, 4, 1), hyper_tensor(o.optimizer, 1, /*grad_scale=*/0.0));
  const std::vector<HostTensor> out = m.run(in);
  EXPECT_THAT(exchange.events, ElementsAre("produced 0", "produced 1", "needed 0", "needed 1"));
  // The stats output is what the exchange left.
  EXPECT_EQ(to_doubles(out.at(tg.output(TrainingOutput::kGuard)))[1], 42.0);
  for (size_t i = 0; i < tg.state.size(); ++i) {
    if (tg.state[i].role != StateRole::kWeight) continue;
    const bool same = m.executor().read_state(i).data == tg.state[i].initial.data;
    EXPECT_EQ(same, tg.state[i].name != owned) << tg.state[i].name;
  }
  // Another rank's weight written between runs is what the next run reads
  // and leaves.
  size_t other = 0;
  while (tg.state[other].role != StateRole::kWeight || tg.state[other].name == owned) ++other;
  std::vector<std::byte> written = tg.state[other].initial.data;
  std::fill(written.begin(), written.end(), std::byte{0});
  m.executor().write_state(other, written);
  m.run(in);
  EXPECT_EQ(m.executor().read_state(other).data, written);
}

INSTANTIATE_TEST_SUITE_P(Modes, ShardedStepIn,
                         ::testing::Values(ExecutionMode::kCompiled, ExecutionMode::kEager));

Checkpoint small_checkpoint(int epoch, std::vector<HostTensor> state) {
  Checkpoint c;
  c.epoch = epoch;
  c.step = 10 * epoch;
  c.model = "m";
  c.options = "{}";
  c.state = std::move(state);
  return c;
}

HostTensor tensor(const std::string& name, float v) {
  HostTensor t{name, {DType::kF32, {1}}, std::vector<std::byte>(4)};
  std::memcpy(t.data.data(), &v, 4);
  return t;
}

// A manifest and its shards read as one checkpoint; a shard of another
// step, or a shard list naming a path, is refused; an old manifest's
// shards go with it.
TEST(ShardedCheckpoint, ReadsItsShardsAndRefusesOthers) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ampx_sharded_ckpt_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  make_checkpoint_dir(dir);
  for (int epoch = 1; epoch <= 2; ++epoch) {
    write_checkpoint(dir / shard_file_name(epoch, 0, 2),
                     small_checkpoint(epoch, {tensor("w0", 1)}));
    write_checkpoint(dir / shard_file_name(epoch, 1, 2),
                     small_checkpoint(epoch, {tensor("w1", 2)}));
    Checkpoint manifest = small_checkpoint(epoch, {tensor("bn.mean", 3)});
    manifest.shards = {shard_file_name(epoch, 0, 2), shard_file_name(epoch, 1, 2)};
    save_checkpoint(dir, manifest, 1);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / shard_file_name(1, 0, 2)));
  EXPECT_FALSE(std::filesystem::exists(dir / "epoch-0001.ampxckpt"));
  const Checkpoint c = read_checkpoint(dir / "epoch-0002.ampxckpt");
  ASSERT_EQ(c.state.size(), 3u);
  EXPECT_EQ(c.state[0].name, "bn.mean");
  EXPECT_EQ(c.state[1].name, "w0");
  EXPECT_EQ(c.state[2].name, "w1");
  // A shard of another step.
  write_checkpoint(dir / shard_file_name(2, 1, 2), small_checkpoint(3, {tensor("w1", 2)}));
  try {
    read_checkpoint(dir / "epoch-0002.ampxckpt");
    ADD_FAILURE() << "a shard of another step was read";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("epoch-0002.shard-1-of-2.ampxckpt: the shard is of another"));
  }
  // A shard list that names a file elsewhere.
  Checkpoint bad = small_checkpoint(4, {tensor("bn.mean", 3)});
  bad.shards = {"../epoch-0004.shard-0-of-1.ampxckpt"};
  write_checkpoint(dir / "epoch-0004.ampxckpt", bad);
  EXPECT_THROW(read_checkpoint(dir / "epoch-0004.ampxckpt"), std::runtime_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ampx::train
