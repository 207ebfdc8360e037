// Data-parallel training (docs/DISTRIBUTED.md) under mpirun: every test runs
// on every rank, in the same order. The single-process references run on
// each rank alone (no DataParallel), on cpu_ref, so every rank can compare
// its own state with them.
#include "train_dist_fixtures.hpp"

#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/session/trainer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

namespace ampx::train {
namespace {

using testing::cpu_ref_only;
using ::testing::HasSubstr;
using testing::synthetic;
using namespace dist_testing;

struct Level {
  AmpLevel level;
  double tolerance;
};

class DataParallelMatchesOneRank : public ::testing::TestWithParam<Level> {};

// N ranks at batch b against one rank at batch N b: the same global batches
// in the same order, the gradients' sum divided by N against one mean. Only
// the order of summation differs (and, at O2, where 16-bit values round).
// 203 samples: the last global batch is uneven on 2 and 3 ranks.
TEST_P(DataParallelMatchesOneRank, OnAnMlp) {
  const auto dp = join();
  const int64_t b = 8;
  const Dataset data = synthetic(203, 12, 4, 7);
  const Graph model = plain_mlp();
  const std::vector<HostTensor> alone =
      train_alone(model, options_at(GetParam().level, b * dp->size()), data, 2);
  Session session(cpu_ref_only());
  TrainerOptions o = options_at(GetParam().level, b);
  o.data_parallel = dp;
  Trainer t(session, model, o);
  EpochResult r;
  for (int e = 0; e < 2; ++e) r = t.train_epoch(data);
  ASSERT_TRUE(r.data_parallel);
  EXPECT_EQ(r.data_parallel->ranks, dp->size());
  EXPECT_EQ(r.data_parallel->global_batch, b * dp->size());
  EXPECT_EQ(r.steps, (203 + b * dp->size() - 1) / (b * dp->size()));
  // samples/s counts every rank's rows: per step, the global batch's.
  EXPECT_NEAR(r.samples_per_s * r.step_ms / 1000.0, 203.0 / static_cast<double>(r.steps), 1e-6);
  const auto [diff, where] = max_difference(t.state(), alone);
  EXPECT_LE(diff, GetParam().tolerance) << "at " << where;
  // The weights moved: a run that skipped every update would also agree.
  const auto [moved, _] = max_difference(t.state(), Trainer(session, model, o).state());
  EXPECT_GT(moved, 10 * GetParam().tolerance);
}

// digits-cnn has BatchNorm: the ranks' sums make its statistics the global
// batch's (SyncBatchNorm). The one-rank run computes them in the same
// composition (batch_statistics kSynchronized on one process); at O0 also
// against BatchNorm's own kernel (one-pass against two-pass variance).
TEST_P(DataParallelMatchesOneRank, OnDigitsCnnWithBatchNorm) {
  const auto dp = join();
  const int64_t b = 8;
  // At O2 one step: a 16-bit rounding that differs (a rank's partial sums
  // against the whole batch's) can flip a ReLU or a max-pool's arg max, and
  // momentum SGD carries such jumps on (measured on 2 ranks: 2e-4 after 2
  // steps, 1e-2 after 6, 0.2 after 26; one process's local against
  // synchronized BatchNorm differs as much). The MLP covers O2 over epochs.
  const int64_t rows = GetParam().level == AmpLevel::kO0 ? 203 : b * dp->size();
  const int epochs = GetParam().level == AmpLevel::kO0 ? 2 : 1;
  const Dataset data = synthetic(rows, std::vector<int64_t>{1, 8, 8}, 10, 7);
  const Graph model = make_builtin_model("digits-cnn");
  TrainerOptions single = options_at(GetParam().level, b * dp->size());
  single.graph.batch_statistics = BatchStatistics::kSynchronized;
  const std::vector<HostTensor> alone = train_alone(model, single, data, epochs);
  Session session(cpu_ref_only());
  TrainerOptions o = options_at(GetParam().level, b);
  o.data_parallel = dp;
  Trainer t(session, model, o);
  EpochResult r;
  for (int e = 0; e < epochs; ++e) r = t.train_epoch(data);
  EXPECT_EQ(r.data_parallel->synchronized_per_step, 2 * 2);  // two BatchNorms, S and its gradient
  const auto [diff, where] = max_difference(t.state(), alone);
  EXPECT_LE(diff, GetParam().tolerance) << "at " << where;
  if (GetParam().level == AmpLevel::kO0) {
    const std::vector<HostTensor> local =
        train_alone(model, options_at(AmpLevel::kO0, b * dp->size()), data, 2);
    const auto [d, w] = max_difference(t.state(), local);
    EXPECT_LE(d, 1e-3) << "at " << w;
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, DataParallelMatchesOneRank,
                         ::testing::Values(Level{AmpLevel::kO0, 2e-5}, Level{AmpLevel::kO2, 2e-2}),
                         [](const auto& info) {
                           return std::string(amp_level_name(info.param.level));
                         });

TEST(DataParallel, TwoRunsAtTheSameRankCountAreBitIdentical) {
  const auto dp = join({.bucket_mb = 0.001});  // several buckets
  const Dataset data = synthetic(100, 12, 4, 9);
  std::vector<std::vector<std::vector<std::byte>>> runs;
  for (int run = 0; run < 2; ++run) {
    Session session(cpu_ref_only());
    TrainerOptions o = options_at(AmpLevel::kO2, 8);
    o.data_parallel = dp;
    Trainer t(session, plain_mlp(), o);
    const EpochResult r = t.train_epoch(data);
    EXPECT_GT(r.data_parallel->buckets, 1);
    runs.push_back(testing::bytes_of(t.state()));
  }
  EXPECT_EQ(runs[0], runs[1]);
}

std::string sharding_name(const ::testing::TestParamInfo<OptimizerSharding>& info) {
  return info.param == OptimizerSharding::kZero1 ? "Zero1" : "Replicated";
}

// Node by node (--eager): the eager executor hands the gradients over as
// the compiled one does, and the run ends where the compiled one does (to
// the roundings that the compiled step's fusions change at O2); with ZeRO-1
// its step is the same sharded step.
class EagerUnderMpirun : public ::testing::TestWithParam<OptimizerSharding> {};

TEST_P(EagerUnderMpirun, MatchesCompiled) {
  const bool sharded = GetParam() == OptimizerSharding::kZero1;
  const Dataset data = synthetic(64, 12, 4, 6);
  std::vector<HostTensor> states[2];
  for (int eager = 0; eager < 2; ++eager) {
    Session session(cpu_ref_only());
    TrainerOptions o = options_at(AmpLevel::kO2, 8);
    o.eager = eager == 1;
    o.data_parallel = sharded ? join({.sharding = GetParam()}) : join({.bucket_mb = 0.001});
    Trainer t(session, plain_mlp(), o);
    const EpochResult r = t.train_epoch(data);
    if (!sharded) {
      EXPECT_GT(r.data_parallel->buckets, 1);
    }
    states[eager] = t.state();
    // ZeRO-1: the weights (each rank's moments are its own weights').
    if (sharded)
      std::erase_if(states[eager],
                    [](const HostTensor& s) { return s.name.ends_with("/momentum"); });
  }
  const auto [diff, where] = max_difference(states[1], states[0]);
  // Replicated: 1.6e-4 measured (a momentum), 2 and 3 ranks.
  EXPECT_LE(diff, sharded ? 1e-4 : 1e-3) << "at " << where;
  if (sharded) return;
  const auto [moved, _] = max_difference(
      states[1], train_alone(plain_mlp(), options_at(AmpLevel::kO2, 8), synthetic(8, 12, 4, 6), 0));
  EXPECT_GT(moved, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Sharding, EagerUnderMpirun,
                         ::testing::Values(OptimizerSharding::kReplicated,
                                           OptimizerSharding::kZero1),
                         sharding_name);

// Every rank ends each step with the same weights: compared through a hash
// of the state, by the ranks themselves.
TEST(DataParallel, EveryRankHoldsTheSameState) {
  const auto dp = join({.allreduce_dtype = AllreduceDtype::kBF16});
  Session session(cpu_ref_only());
  TrainerOptions o = options_at(AmpLevel::kO2, 8);
  o.data_parallel = dp;
  Trainer t(session, plain_mlp(), o);
  t.train_epoch(synthetic(64, 12, 4, 3));
  std::string text;
  for (const HostTensor& s : t.state())
    text.append(reinterpret_cast<const char*>(s.data.data()), s.data.size());
  EXPECT_NO_THROW(dp->require_agreement("state", text));
}

// 16-bit on the wire halves the bytes and still trains.
TEST(DataParallel, SixteenBitAllReduceHalvesTheBytes) {
  const Dataset data = synthetic(64, 12, 4, 4);
  uint64_t bytes[2] = {0, 0};
  std::vector<HostTensor> states[2];
  int i = 0;
  for (AllreduceDtype d : {AllreduceDtype::kF32, AllreduceDtype::kF16}) {
    const auto dp = join({.allreduce_dtype = d});
    Session session(cpu_ref_only());
    TrainerOptions o = options_at(AmpLevel::kO2, 8);
    o.data_parallel = dp;
    Trainer t(session, plain_mlp(), o);
    const EpochResult r = t.train_epoch(data);
    bytes[i] = r.data_parallel->wire_bytes_per_step;
    EXPECT_EQ(r.data_parallel->allreduce_dtype, allreduce_dtype_name(d));
    states[i++] = t.state();
  }
  EXPECT_EQ(bytes[1] * 2, bytes[0]);
  // Weights as parameters times 4 bytes in f32.
  EXPECT_EQ(bytes[0], static_cast<uint64_t>(12 * 32 + 32 + 32 * 24 + 24 + 24 * 4 + 4) * 4);
  const auto [diff, where] = max_difference(states[1], states[0]);
  EXPECT_LE(diff, 1e-2) << "at " << where;
}

// One sample far beyond f16's range on one rank only: that rank's gradients
// overflow, the sums do too, and every rank skips the step and backs off
// the loss scale together.
class AnOverflowOnOneRank : public ::testing::TestWithParam<OptimizerSharding> {};

TEST_P(AnOverflowOnOneRank, SkipsTheStepEverywhere) {
  const auto dp = join({.sharding = GetParam()});
  if (dp->size() < 2) GTEST_SKIP() << "needs two ranks";
  const int64_t b = 4;
  const Dataset data = overflowing_on_the_last_rank({1}, b, dp->size());  // step 2 only
  Session session(cpu_ref_only());
  TrainerOptions o = options_at(AmpLevel::kO2, b);
  o.data_parallel = dp;
  Trainer t(session, plain_mlp(), o);
  const EpochResult r = t.train_epoch(data);
  ASSERT_GE(r.records.size(), 3u);
  EXPECT_TRUE(r.records[0].finite);
  EXPECT_FALSE(r.records[1].finite) << "on rank " << dp->rank();
  EXPECT_TRUE(r.records[2].finite);
  EXPECT_EQ(r.records[2].scale, 512);
  EXPECT_EQ(r.overflow_steps, 1);
  // ZeRO-1: the owners skipped their updates alike; every rank's weights agree.
  std::string text;
  for (const HostTensor& s : t.state())
    if (!s.name.ends_with("/momentum"))
      text.append(reinterpret_cast<const char*>(s.data.data()), s.data.size());
  EXPECT_NO_THROW(dp->require_agreement("weights", text));
}

INSTANTIATE_TEST_SUITE_P(Sharding, AnOverflowOnOneRank,
                         ::testing::Values(OptimizerSharding::kReplicated,
                                           OptimizerSharding::kZero1),
                         sharding_name);

// The overflow diagnostics and the automatic fallback decide on the ranks'
// reduced statistics: with overflows in the last rank's rows only, every
// rank names the same layer and moves it to f32 at the same step.
TEST(DataParallel, EveryRankFallsBackTheSameLayerAtTheSameStep) {
  const auto dp = join();
  if (dp->size() < 2) GTEST_SKIP() << "needs two ranks";
  const int64_t b = 4;
  const Dataset data = overflowing_on_the_last_rank({0, 1, 2}, b, dp->size());
  Session session(cpu_ref_only());
  TrainerOptions o = options_at(AmpLevel::kO2, b);
  o.overflow.auto_fallback = true;
  o.overflow.fallback_overflows = 1;  // at the second overflowed step
  o.data_parallel = dp;
  Trainer t(session, plain_mlp(), o);
  const EpochResult r = t.train_epoch(data);
  ASSERT_EQ(r.fallbacks.size(), 1u) << "on rank " << dp->rank();
  EXPECT_EQ(r.fallbacks[0].step, 2);
  ASSERT_FALSE(r.overflows.empty());
  std::string decided;
  for (const OverflowEvent& e : r.overflows)
    decided += e.layer + "@" + std::to_string(e.step) + ";";
  for (const FallbackRecord& f : r.fallbacks) decided += f.layer + "@" + std::to_string(f.step);
  EXPECT_NO_THROW(dp->require_agreement("overflow events and fallbacks", decided)) << decided;
}

TEST(DataParallel, RanksThatDisagreeAreRefusedBeforeAnyStep) {
  const auto dp = join();
  if (dp->size() < 2) GTEST_SKIP() << "needs two ranks";
  Session session(cpu_ref_only());
  TrainerOptions o = options_at(AmpLevel::kO0, 8);
  o.data_parallel = dp;
  o.graph.optimizer.lr = dp->rank() == 0 ? 0.05 : 0.01;
  try {
    Trainer t(session, plain_mlp(), o);
    ADD_FAILURE() << "ranks with different learning rates were not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("ranks disagree on the training options"));
  }
  // And a data size that differs, at the first epoch.
  o.graph.optimizer.lr = 0.05;
  Trainer t(session, plain_mlp(), o);
  EXPECT_THROW(t.train_epoch(synthetic(dp->rank() == 0 ? 64 : 65, 12, 4, 1)),
               std::invalid_argument);
}

// A checkpoint of an N-rank run resumed on one rank at N times the batch
// (the global batch kept) continues the same data order: it ends where the
// N-rank run does, to f32 summation tolerance; resumed at N ranks, bit for
// bit.
TEST(DataParallel, ResumesAtTheSameAndAnotherRankCount) {
  const auto dp = join();
  const int64_t b = 8;
  const Dataset data = synthetic(96, 12, 4, 8);
  const Graph model = plain_mlp();
  TrainerOptions o = options_at(AmpLevel::kO0, b);
  o.data_parallel = dp;
  Session session(cpu_ref_only());
  Trainer whole(session, model, o);
  whole.train_epoch(data);
  const Checkpoint after_one = whole.checkpoint();
  whole.train_epoch(data);

  Trainer same(session, model, o);
  same.restore(after_one);
  same.train_epoch(data);
  EXPECT_EQ(testing::bytes_of(same.state()), testing::bytes_of(whole.state()));

  TrainerOptions alone = options_at(AmpLevel::kO0, b * dp->size());
  Trainer other(session, model, alone);
  other.restore(after_one);
  other.train_epoch(data);
  const auto [diff, where] = max_difference(other.state(), whole.state());
  EXPECT_LE(diff, 2e-5) << "at " << where;
}

}  // namespace
}  // namespace ampx::train
