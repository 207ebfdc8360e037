// ZeRO-1 (`--shard-optimizer`, docs/DISTRIBUTED.md, "Sharded optimizer")
// under mpirun, on cpu_ref: every test runs on every rank, in the same order.
// The reference is the replicated data-parallel run at the same rank count:
// both sum the same gradients (to the owner, or to every rank) and apply the
// same updates, so the weights agree to the rounding of the sums' order.
#include "train_dist_fixtures.hpp"

#include <ampx/models/builtin_models.hpp>
#include <ampx/train/checkpoint.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

namespace ampx::train {
namespace {

using ::testing::HasSubstr;
using namespace dist_testing;
using testing::synthetic;

std::shared_ptr<DataParallel> join_sharded(DataParallelOptions o = {}) {
  o.sharding = OptimizerSharding::kZero1;
  return join(o);
}

// The weights only (the moments differ in number between the two runs).
std::vector<HostTensor> weights_of(const Trainer& t) {
  std::vector<HostTensor> out;
  const std::vector<HostTensor> all = t.state();
  for (size_t i = 0; i < all.size(); ++i)
    if (t.training_graph().state[i].role == StateRole::kWeight) out.push_back(all[i]);
  return out;
}

struct Case {
  const char* name;
  AmpLevel level;
  OptimizerKind optimizer;
  double clip = 0;
};

class ShardedOptimizerMatchesReplicated : public ::testing::TestWithParam<Case> {};

TEST_P(ShardedOptimizerMatchesReplicated, OnAnMlp) {
  const Case c = GetParam();
  const Dataset data = synthetic(203, 12, 4, 11);
  const Graph model = plain_mlp();
  std::vector<HostTensor> states[2];
  EpochResult last[2];
  std::optional<ShardedMemory> memory;
  for (int sharded = 0; sharded < 2; ++sharded) {
    const auto dp = sharded ? join_sharded({.bucket_mb = 0.001}) : join({.bucket_mb = 0.001});
    Session session(cpu_ref_only());
    TrainerOptions o = options_at(c.level, 8);
    o.graph.optimizer.kind = c.optimizer;
    o.graph.optimizer.momentum = c.optimizer == OptimizerKind::kSgd ? 0.9 : 0.0;
    if (c.optimizer != OptimizerKind::kSgd) o.graph.optimizer.lr = 0.003;
    o.graph.clip_grad_norm = c.clip;
    o.data_parallel = dp;
    Trainer t(session, model, o);
    for (int e = 0; e < 2; ++e) last[sharded] = t.train_epoch(data);
    states[sharded] = weights_of(t);
    if (sharded) memory = t.sharded_memory();
  }
  ASSERT_EQ(states[0].size(), 6u);
  ASSERT_EQ(states[1].size(), 6u);
  EXPECT_TRUE(last[1].data_parallel->sharded_optimizer);
  EXPECT_FALSE(last[0].data_parallel->sharded_optimizer);
  // Every weight is gathered once per step: in f32 at O0; at O2, where
  // the forward reads every weight in 16-bit, as the 16-bit copies the
  // other ranks hold instead of the f32 masters.
  const uint64_t f32_bytes = static_cast<uint64_t>(12 * 32 + 32 + 32 * 24 + 24 + 24 * 4 + 4) * 4;
  EXPECT_EQ(last[1].data_parallel->allgather_bytes_per_step,
            c.level == AmpLevel::kO0 ? f32_bytes : f32_bytes / 2);
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->held_16bit, c.level == AmpLevel::kO0 ? 0 : 6 - memory->owned_weights);
  EXPECT_EQ(memory->master_bytes + 2 * memory->working_copy_bytes, f32_bytes);
  const auto [diff, where] = max_difference(states[1], states[0]);
  EXPECT_LE(diff, 1e-6) << "at " << where;
  // The clipped runs: the global norm, not a rank's share, decides; each
  // step's grad_norm is the same.
  ASSERT_EQ(last[0].records.size(), last[1].records.size());
  for (size_t k = 0; k < last[0].records.size(); ++k)
    EXPECT_NEAR(last[1].records[k].grad_norm, last[0].records[k].grad_norm,
                1e-5 * (1 + last[0].records[k].grad_norm))
        << "step " << k + 1;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ShardedOptimizerMatchesReplicated,
    ::testing::Values(Case{"O0_momentum", AmpLevel::kO0, OptimizerKind::kSgd},
                      Case{"O0_adam_clipped", AmpLevel::kO0, OptimizerKind::kAdam, 0.05},
                      Case{"O2_adamw", AmpLevel::kO2, OptimizerKind::kAdamW},
                      Case{"O2_momentum_clipped", AmpLevel::kO2, OptimizerKind::kSgd, 0.05}),
    [](const auto& info) { return std::string(info.param.name); });

// digits-cnn: BatchNorm's running statistics (replicated, synchronized)
// and convolutions, at O0.
TEST(ShardedOptimizer, MatchesReplicatedOnDigitsCnn) {
  const Dataset data = synthetic(96, std::vector<int64_t>{1, 8, 8}, 10, 7);
  const Graph model = make_builtin_model("digits-cnn");
  std::vector<HostTensor> states[2];
  for (int sharded = 0; sharded < 2; ++sharded) {
    Session session(cpu_ref_only());
    TrainerOptions o = options_at(AmpLevel::kO0, 8);
    o.graph.optimizer.momentum = 0.9;
    o.data_parallel = sharded ? join_sharded() : join();
    Trainer t(session, model, o);
    t.train_epoch(data);
    states[sharded] = t.state();
  }
  ASSERT_LT(states[1].size(), states[0].size());  // the other ranks' moments
  const auto [diff, where] = max_difference_by_name(states[1], states[0]);
  EXPECT_LE(diff, 1e-6) << "at " << where;
}

// Each rank keeps the moments of its own weights: together, the unsharded
// run's, once.
TEST(ShardedOptimizer, EachRankKeepsItsShareOfTheOptimizerState) {
  const auto dp = join_sharded();
  Session session(cpu_ref_only());
  TrainerOptions o = options_at(AmpLevel::kO0, 8);
  o.graph.optimizer.kind = OptimizerKind::kAdam;
  o.graph.optimizer.momentum = 0;
  o.data_parallel = dp;
  Trainer t(session, make_builtin_model("digits-cnn"), o);
  ASSERT_TRUE(t.sharded_memory());
  const ShardedMemory& m = *t.sharded_memory();
  EXPECT_EQ(m.unsharded_optimizer_bytes, 2 * m.weight_bytes);  // Adam: m and v
  EXPECT_EQ(m.optimizer_bytes, 2 * m.owned_weight_bytes);
  std::array<float, 3> totals{static_cast<float>(m.optimizer_bytes),
                              static_cast<float>(m.owned_weights),
                              static_cast<float>(m.owned_weight_bytes)};
  dp->sum(totals);
  EXPECT_EQ(static_cast<uint64_t>(totals[0]), m.unsharded_optimizer_bytes);
  EXPECT_EQ(static_cast<int>(totals[1]), m.weights);
  EXPECT_EQ(static_cast<uint64_t>(totals[2]), m.weight_bytes);
  if (dp->size() > 1) {
    EXPECT_LT(m.state_bytes, m.unsharded_state_bytes);
  }
  EXPECT_GE(m.owned_weights, 1);
  // The step itself holds no update and no moment of another rank's weight.
  int updates = 0;
  for (const Node& n : t.training_graph().step.nodes())
    updates += n.op == OpType::kAdamUpdate ? 1 : 0;
  EXPECT_EQ(updates, m.owned_weights);
}

TEST(ShardedOptimizer, TwoRunsAreBitIdentical) {
  const auto dp = join_sharded({.bucket_mb = 0.001});
  const Dataset data = synthetic(100, 12, 4, 9);
  std::vector<std::vector<std::vector<std::byte>>> runs;
  for (int run = 0; run < 2; ++run) {
    Session session(cpu_ref_only());
    TrainerOptions o = options_at(AmpLevel::kO2, 8);
    o.graph.optimizer.momentum = 0.9;
    o.data_parallel = dp;
    Trainer t(session, plain_mlp(), o);
    t.train_epoch(data);
    runs.push_back(testing::bytes_of(t.state()));
  }
  EXPECT_EQ(runs[0], runs[1]);
}

// Every rank gets here before any goes on.
void barrier(DataParallel& dp) {
  std::array<float, 1> nothing{0};
  dp.sum(nothing);
}

// A directory every rank names alike: rank 0's random number, summed.
std::filesystem::path shared_temp_dir(DataParallel& dp) {
  std::array<float, 1> id{dp.rank() == 0 ? static_cast<float>(std::random_device{}() % 16777216)
                                         : 0.0f};
  dp.sum(id);
  return std::filesystem::temp_directory_path() /
         ("ampx-zero1-test-" + std::to_string(static_cast<uint32_t>(id[0])));
}

// Sharded checkpoints: every rank's shard, rank 0's manifest. Resumed at
// the same rank count, sharded: bit for bit. Resumed replicated at the
// same count, and on one rank at the global batch (another N): the same
// run, to f32 summation tolerance.
// At O2 the ranks hold each other's weights as 16-bit copies: the
// checkpoint gathers the f32 masters, and a resume rounds them again.
class ShardedCheckpoints : public ::testing::TestWithParam<AmpLevel> {};

TEST_P(ShardedCheckpoints, InShardsAndResumedAtAnyRankCount) {
  const AmpLevel level = GetParam();
  const auto dp = join_sharded();
  const std::filesystem::path dir = shared_temp_dir(*dp);
  const int64_t b = 8;
  const Dataset data = synthetic(96, 12, 4, 8);
  const Graph model = plain_mlp();
  TrainerOptions o = options_at(level, b);
  o.graph.optimizer.kind = OptimizerKind::kAdam;
  o.graph.optimizer.momentum = 0;
  o.graph.optimizer.lr = 0.003;
  o.data_parallel = dp;
  Session session(cpu_ref_only());
  Trainer whole(session, model, o);
  whole.train_epoch(data);
  const std::filesystem::path written = whole.save_checkpoint(dir, 1);
  EXPECT_EQ(written.empty(), dp->rank() != 0);
  whole.train_epoch(data);
  whole.save_checkpoint(dir, 1);  // keep 1: epoch 1's manifest and shards go
  barrier(*dp);                   // every rank has written
  for (int r = 0; r < dp->size(); ++r) {
    EXPECT_TRUE(std::filesystem::exists(dir / shard_file_name(2, r, dp->size())));
    EXPECT_FALSE(std::filesystem::exists(dir / shard_file_name(1, r, dp->size())));
  }
  const Checkpoint c2 = read_checkpoint(dir / "epoch-0002.ampxckpt");
  EXPECT_EQ(c2.shards.size(), static_cast<size_t>(dp->size()));
  // Every weight and both Adam moments of each, across the shards.
  int moments = 0;
  for (const HostTensor& t : c2.state)
    moments += t.name.ends_with("/adam_m") || t.name.ends_with("/adam_v") ? 1 : 0;
  EXPECT_EQ(moments, 2 * 6);

  // Resume at epoch 2's checkpoint and train a third epoch three ways.
  whole.train_epoch(data);
  Trainer same(session, model, o);
  same.restore(c2);
  same.train_epoch(data);
  EXPECT_EQ(testing::bytes_of(same.state()), testing::bytes_of(whole.state()));

  TrainerOptions replicated = o;
  replicated.data_parallel = join();
  Trainer unsharded(session, model, replicated);
  unsharded.restore(c2);
  unsharded.train_epoch(data);
  auto [diff, where] = max_difference_by_name(whole.state(), unsharded.state());
  EXPECT_LE(diff, 1e-6) << "at " << where;

  // On one rank, each step's 16-bit roundings differ from the ranks' (as
  // in DataParallel.ResumesAtTheSameAndAnotherRankCount): O0 only.
  if (level == AmpLevel::kO0) {
    TrainerOptions alone = o;
    alone.data_parallel = nullptr;
    alone.batch = b * dp->size();
    Trainer one(session, model, alone);
    one.restore(c2);
    one.train_epoch(data);
    std::tie(diff, where) = max_difference_by_name(whole.state(), one.state());
    EXPECT_LE(diff, 2e-5) << "at " << where;
  }

  // A manifest whose shard is gone is refused, naming the shard.
  barrier(*dp);
  if (dp->rank() == 0) {
    const std::filesystem::path lost = dir / shard_file_name(2, dp->size() - 1, dp->size());
    std::filesystem::rename(lost, dir / "set-aside");
    try {
      read_checkpoint(dir / "epoch-0002.ampxckpt");
      ADD_FAILURE() << "a manifest without its shard was read";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr(lost.filename().string()));
    }
  }
  barrier(*dp);
  if (dp->rank() == 0) std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Levels, ShardedCheckpoints,
                         ::testing::Values(AmpLevel::kO0, AmpLevel::kO2),
                         [](const auto& info) { return std::string(amp_level_name(info.param)); });

// The automatic FP32 fallback re-plans a sharded step mid-run: a layer's
// weights leave their 16-bit copies for f32 masters on the other ranks.
// Every rank moves at the same step, and ends where the replicated run
// does.
TEST(ShardedOptimizer, FallsBackLikeTheReplicatedRun) {
  const auto probe = join();
  if (probe->size() < 2) GTEST_SKIP() << "needs two ranks";
  const int64_t b = 4;
  const Dataset data = overflowing_on_the_last_rank({0, 1, 2}, b, probe->size());
  std::vector<HostTensor> states[2];
  for (int sharded = 0; sharded < 2; ++sharded) {
    Session session(cpu_ref_only());
    TrainerOptions o = options_at(AmpLevel::kO2, b);
    o.overflow.auto_fallback = true;
    o.overflow.fallback_overflows = 1;
    o.graph.optimizer.momentum = 0.9;
    o.data_parallel = sharded ? join_sharded() : join();
    Trainer t(session, plain_mlp(), o);
    const EpochResult r = t.train_epoch(data);
    ASSERT_EQ(r.fallbacks.size(), 1u);
    EXPECT_EQ(r.fallbacks[0].step, 2);
    states[sharded] = weights_of(t);
  }
  const auto [diff, where] = max_difference(states[1], states[0]);
  EXPECT_LE(diff, 1e-6) << "at " << where;
}

TEST(ShardedOptimizer, MoreRanksThanWeightsAreRefused) {
  const auto dp = join_sharded();
  GraphBuilder g("one-weight", 1);
  ValueId x = g.input("input", DType::kF32, {4, 3});
  x = g.dense("fc", x, 2, /*bias=*/false);
  g.output(x);
  const Graph model = std::move(g).build();
  Session session(cpu_ref_only());
  TrainerOptions o = options_at(AmpLevel::kO0, 4);
  o.graph.loss = LossKind::kMse;
  o.data_parallel = dp;
  if (dp->size() < 2) GTEST_SKIP() << "needs two ranks";
  try {
    Trainer t(session, model, o);
    ADD_FAILURE() << "a one-weight model was sharded over " << dp->size() << " ranks";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("each rank must own at least one weight"));
  }
}

}  // namespace
}  // namespace ampx::train
