// Training end to end on cpu_ref: the digits reach the issue's accuracy,
// resuming from saved state reproduces the uninterrupted run bit for bit,
// and state stays on the device (updated in place).
#include <ampx/ir/builder.hpp>
#include <ampx/session/trainer.hpp>
#include <ampx/train/checkpoint.hpp>
#include <ampx/train/datasets.hpp>

#include <tolerances.hpp>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "train_fixtures.hpp"

using namespace ampx;
using namespace ampx::train;
using namespace ampx::train::testing;

namespace {

TEST(Trainer, DigitsCnnReachesNinetySevenPercentAtO0) {
  if (!have_digits()) GTEST_SKIP() << "python3-sklearn's digits.csv.gz is not installed";
  const SplitDataset d = load_digits();
  Session session(cpu_ref_only());
  Trainer t(session, session.load("builtin:digits-cnn"), sgd(32));
  for (int e = 0; e < 12; ++e) t.train_epoch(d.train);
  const Evaluation ev = t.evaluate(d.test);
  EXPECT_EQ(ev.samples, 360);
  EXPECT_GE(ev.accuracy, 0.97) << "loss " << ev.loss;
}

class Optimizer : public ::testing::TestWithParam<OptimizerKind> {};

// Two epochs straight against one epoch, its checkpoint restored into a new
// trainer (Trainer::checkpoint(), restore()), and a second epoch: the same
// bytes (Adam's moments and step count, the dropout masks and the data
// order included). 100 samples in batches of 16 end with a partial batch
// of 4.
TEST_P(Optimizer, ResumingFromStateReproducesTheRunBitForBit) {
  const Dataset data = synthetic(100, 12, 4, 5);
  Session session(cpu_ref_only());
  TrainerOptions o = sgd(16);
  o.graph.optimizer.kind = GetParam();
  if (GetParam() != OptimizerKind::kSgd) {
    o.graph.optimizer.momentum = 0;
    o.graph.optimizer.lr = 0.01;
    o.graph.optimizer.weight_decay = 0.01;
  }
  Trainer straight(session, small_mlp(), o);
  const EpochResult first = straight.train_epoch(data);
  straight.train_epoch(data);
  EXPECT_EQ(first.steps, 7);

  Trainer a(session, small_mlp(), o);
  a.train_epoch(data);
  const std::vector<HostTensor> saved = a.state();
  Trainer resumed(session, small_mlp(), o);
  resumed.restore(a.checkpoint());
  resumed.train_epoch(data);
  EXPECT_EQ(bytes_of(resumed.state()), bytes_of(straight.state()));
  EXPECT_NE(bytes_of(saved), bytes_of(straight.state()));
}

INSTANTIATE_TEST_SUITE_P(Kinds, Optimizer,
                         ::testing::Values(OptimizerKind::kSgd, OptimizerKind::kAdam,
                                           OptimizerKind::kAdamW),
                         [](const auto& info) { return std::string(optimizer_name(info.param)); });

// The whole run goes through a checkpoint file and back: a run of two
// epochs against one epoch, Trainer::checkpoint() written, read back and
// restore()d into a new trainer, and a second epoch. The two final
// checkpoints are the same file byte for byte: state, progress, seed,
// options and the dynamic loss scale's state (its window is short enough
// that the scale grows within the run, so a restore that dropped it would
// show).
TEST(Trainer, ACheckpointRestoredThroughAFileContinuesTheRunByteForByte) {
  const Dataset data = synthetic(100, 12, 4, 5);
  Session session(cpu_ref_only());
  TrainerOptions o = sgd(16);
  o.loss_scale = LossScaleOptions::parse("dynamic:1024,2,3");
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ampx_trainer_restore_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Trainer straight(session, small_mlp(), o);
  straight.train_epoch(data);
  straight.train_epoch(data);
  const auto whole = save_checkpoint(dir / "straight", straight.checkpoint());

  Trainer first(session, small_mlp(), o);
  first.train_epoch(data);
  ASSERT_GT(first.loss_scaler().scale(), 1024.0) << "the scale must have grown to test its state";
  const Checkpoint back = read_checkpoint(save_checkpoint(dir / "split", first.checkpoint()));
  Trainer resumed(session, small_mlp(), o);
  resumed.restore(back);
  EXPECT_EQ(resumed.epoch(), 1);
  EXPECT_EQ(resumed.step(), 7);
  EXPECT_EQ(resumed.loss_scaler().state().scale, first.loss_scaler().state().scale);
  resumed.train_epoch(data);
  const auto split = save_checkpoint(dir / "split", resumed.checkpoint());
  const auto slurp = [](const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  EXPECT_TRUE(slurp(whole) == slurp(split)) << "the resumed run ends elsewhere";
  std::filesystem::remove_all(dir);
}

// The options text is what every checkpoint written so far holds (keys,
// order, spelling): a resume compares it byte for byte, so a change here
// would refuse every older checkpoint.
TEST(Trainer, RunOptionsAreTheTextOlderCheckpointsHold) {
  Session session(cpu_ref_only());
  TrainerOptions o = sgd(16);
  o.graph.freeze = {"fc2.*"};
  o.policy.level = AmpLevel::kO2;
  o.policy.half = DType::kBF16;
  EXPECT_EQ(Trainer(session, small_mlp(), o).run_options(),
            R"({"amp":"O2","batch":16,"dtype":"bf16","freeze":["fc2.*"],"loss":"cross-entropy",)"
            R"("lr":0.05,"momentum":0.9,"nesterov":false,"optimizer":"sgd","weight_decay":0.0})");
}

// restore() refuses a checkpoint of another run in one line and changes
// nothing: another model, other options, another seed, another loss-scale
// schedule (unless asked to start it afresh), a fallback layer the model
// lacks, state that does not fit (matched by name: a sharded run's
// checkpoint holds every rank's moments).
TEST(Trainer, RestoreRefusesAnotherRunChangingNothing) {
  const Dataset data = synthetic(32, 12, 4, 5);
  Session session(cpu_ref_only());
  const TrainerOptions o = sgd(16);
  Trainer source(session, small_mlp(), o);
  source.train_epoch(data);
  const Checkpoint good = source.checkpoint();
  Trainer t(session, small_mlp(), o);
  const auto before = bytes_of(t.state());
  const auto refused = [&](const Checkpoint& c, const std::string& what,
                           Trainer::LossScaleOnRestore ls = Trainer::LossScaleOnRestore::kResume) {
    try {
      t.restore(c, ls);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
    EXPECT_EQ(bytes_of(t.state()), before) << what;
    EXPECT_EQ(t.step(), 0) << what;
    EXPECT_TRUE(t.fallbacks().empty()) << what;
  };
  Checkpoint c = good;
  c.model = "another";
  refused(c, "the checkpoint is of another model");
  c = good;
  TrainerOptions other = o;
  other.graph.optimizer.lr = 0.1;
  c.options = Trainer(session, small_mlp(), other).run_options();
  refused(c, "the checkpoint was written with other options ({");
  c = good;
  c.seed = 4;
  refused(c, "the checkpoint was written with --seed 4");
  c = good;
  c.loss_scale_schedule = "fixed:256";
  refused(c, "the checkpoint's loss scale is fixed:256, this run's none");
  c.fallbacks = {{"fc9", "overflow", 1, ""}};
  refused(c, "fallback layer 'fc9' is not a node of model 'small-mlp'",
          Trainer::LossScaleOnRestore::kStartAfresh);
  c = good;
  c.state.pop_back();
  refused(c, "the checkpoint has no tensor 'fc2.bias/momentum' (momentum)");
  c.fallbacks = {{"fc1", "overflow", 1, ""}};  // checked before the layer moves
  refused(c, "the checkpoint has no tensor 'fc2.bias/momentum' (momentum)");
  c = good;
  c.state[1].name = "fc1.bias.renamed";
  refused(c, "the checkpoint has no tensor 'fc1.bias' (weight)");
  c = good;
  c.state.push_back(c.state[0]);
  c.state.back().name = "stray";
  refused(c, "the checkpoint's tensor 'stray' is not state of this training step");
  c = good;
  c.state[0].type.shape.push_back(1);
  refused(c, "state tensor 0 is 'fc1.weight'");
  // Another schedule started afresh: the state and progress are taken up,
  // the scaler is this run's own.
  c = good;
  c.loss_scale_schedule = "fixed:256";
  c.loss_scale.scale = 256;
  t.restore(c, Trainer::LossScaleOnRestore::kStartAfresh);
  EXPECT_EQ(bytes_of(t.state()), bytes_of(source.state()));
  EXPECT_EQ(t.step(), source.step());
  EXPECT_EQ(t.loss_scaler().scale(), 1.0);
}

TEST(Trainer, LearnsASyntheticProblemAndUpdatesWeightsInPlace) {
  const Dataset data = synthetic(400, 12, 4, 9);
  Session session(cpu_ref_only());
  TrainerOptions o = sgd(16);
  Trainer t(session, small_mlp(), o);
  const double before = t.evaluate(data).loss;
  for (int e = 0; e < 10; ++e) t.train_epoch(data);
  const Evaluation after = t.evaluate(data);
  EXPECT_LT(after.loss, before * 0.5);
  EXPECT_GT(after.accuracy, 0.8);
  // Every weight and momentum buffer is written in place by its update.
  const TrainingGraph& tg = t.training_graph();
  EXPECT_EQ(tg.trainable, 4);
  EXPECT_EQ(tg.state.size(), 8u);
}

// The eager step (TrainerOptions::eager: node by node, no fusion, buffers
// per node) trains like the compiled one: the same epoch losses and the same
// state after three epochs, within the plan's tolerance, at O0 and at O2
// really in 16-bit (capability-blind on cpu_ref). The state persists between
// eager steps: the weights move.
class EagerTraining : public ::testing::TestWithParam<AmpLevel> {};

TEST_P(EagerTraining, MatchesTheCompiledStepAndKeepsItsState) {
  const Dataset data = synthetic(64, 12, 4, 5);
  const auto run = [&](bool eager) {
    Session session(cpu_ref_only());
    TrainerOptions o = sgd(16);
    o.policy.level = GetParam();
    o.capability_blind = true;
    o.eager = eager;
    Trainer t(session, small_mlp(), o);
    std::vector<double> losses;
    for (int e = 0; e < 3; ++e) losses.push_back(t.train_epoch(data).loss);
    // Eager launches every planned node (nothing fused or folded).
    EXPECT_EQ(t.step_stats()->kernels == static_cast<int>(t.plan().graph.num_nodes()), eager);
    return std::pair{losses, t.state()};
  };
  const auto [compiled_losses, compiled_state] = run(false);
  const auto [eager_losses, eager_state] = run(true);
  const double tol =
      ampx::test::model_tolerance(GetParam() == AmpLevel::kO0 ? AMPX_DTYPE_F32 : AMPX_DTYPE_F16);
  ASSERT_EQ(eager_losses.size(), compiled_losses.size());
  for (size_t e = 0; e < eager_losses.size(); ++e)
    EXPECT_NEAR(eager_losses[e], compiled_losses[e], tol * std::abs(compiled_losses[e]))
        << "epoch " << e;
  EXPECT_LT(eager_losses.back(), eager_losses.front()) << "the eager steps keep their state";
  ASSERT_EQ(eager_state.size(), compiled_state.size());
  for (size_t i = 0; i < eager_state.size(); ++i)
    EXPECT_LT(max_relative_error(eager_state[i], compiled_state[i]), tol) << eager_state[i].name;
}

INSTANTIATE_TEST_SUITE_P(Levels, EagerTraining, ::testing::Values(AmpLevel::kO0, AmpLevel::kO2));

// Counted at test_native's C ABI (AMPX_TEST_NATIVE_COUNTERS): an eager step
// prepares every kernel again at every step, a compiled one never after it
// is compiled. (On cpu_ref the small MLP fuses nothing, so the kernel count
// above cannot tell a compiled step run under the eager name.)
TEST(EagerTrainingAbi, PreparesItsKernelsAtEveryStep) {
  ::setenv("AMPX_TEST_NATIVE_OPS", "*", 1);
  ::setenv("AMPX_TEST_NATIVE_COUNTERS", "1", 1);
  const auto prepares = [](const plugins::Device& dev) {
    unsigned long long p = 0, a = 0;
    const std::string note = dev.plugin_note();
    if (std::sscanf(note.c_str(), "kernel_prepare=%llu buffer_alloc=%llu", &p, &a) != 2)
      ADD_FAILURE() << "test_native reports no counters: '" << note << "'";
    return p;
  };
  const Dataset data = synthetic(64, 12, 4, 5);  // 4 steps of 16 an epoch
  for (const bool eager : {false, true}) {
    SessionOptions so = cpu_ref_only();
    so.devices = "test_native:0";
    Session session(so);
    TrainerOptions o = sgd(16);
    o.eager = eager;
    Trainer t(session, small_mlp(), o);
    (void)t.train_epoch(data);  // the step compiled (or not) here
    const plugins::Device& dev = session.host().device("test_native:0");
    const unsigned long long before = prepares(dev);
    (void)t.train_epoch(data);
    const unsigned long long per_epoch = prepares(dev) - before;
    const int kernels = t.step_stats()->kernels_per_device.at(0);
    ASSERT_GT(kernels, 0);
    if (eager)
      EXPECT_GE(per_epoch, 4ull * static_cast<unsigned long long>(kernels));
    else
      EXPECT_EQ(per_epoch, 0ull);
  }
  ::unsetenv("AMPX_TEST_NATIVE_COUNTERS");
}

// The Trainer plans its step again for each batch size and plans its
// evaluation (Session::plan with PlanLogging::kQuiet, on the first step's
// device selection): the nodes that fall back are in its plan, not in a
// warning at every plan.
TEST(TrainerPlans, AreQuietWhereNodesFallBack) {
  ::setenv("AMPX_TEST_MISSING_OPS", "Tanh", 1);
  SessionOptions so = cpu_ref_only();
  so.devices = "test_native:0";
  Session session(so);
  ::unsetenv("AMPX_TEST_MISSING_OPS");
  std::ostringstream log;
  const auto saved = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "captured", std::make_shared<spdlog::sinks::ostream_sink_st>(log)));
  int fallbacks = 0;
  {
    Trainer t(session, small_mlp(), sgd(16));
    const Dataset data = synthetic(40, 12, 4, 5);  // a last batch of 8: another plan
    (void)t.train_epoch(data);
    (void)t.evaluate(data);
    fallbacks = t.plan().summary.fallbacks;
  }
  spdlog::set_default_logger(saved);
  EXPECT_GT(fallbacks, 0);
  EXPECT_EQ(log.str().find("fall back"), std::string::npos) << log.str();
}

#ifdef AMPX_TEST_HAVE_ONEDNN
// digits-cnn (conv, BatchNorm in training mode, ReLU, max pool, dense) on
// onednn:0 alone, whose backward primitives then run Conv2dGradWeight,
// BatchNormTraining / BatchNormGrad, ReluGrad and MaxPoolGrad, against
// cpu_ref:0 at O0: three epochs of two steps on the same data give the same
// epoch losses within an f32 model's tolerance (different kernels and
// summation orders, same precision).
TEST(Trainer, DigitsCnnOnOnednnTrainsLikeCpuRef) {
  // Digits-shaped synthetic images (the real ones need python3-sklearn).
  Dataset images = synthetic(64, 64, 10, 21);
  images.inputs.type.shape = {64, 1, 8, 8};
  const auto run = [&](const char* device) {
    SessionOptions so = cpu_ref_only();
    so.devices = device;
    so.fallback = false;  // every node of the step on that device
    Session session(so);
    TrainerOptions o = sgd(32);
    o.policy.level = AmpLevel::kO0;
    Trainer t(session, session.load("builtin:digits-cnn"), o);
    std::vector<double> losses;
    for (int e = 0; e < 3; ++e) losses.push_back(t.train_epoch(images).loss);
    return losses;
  };
  const std::vector<double> ref = run("cpu_ref:0"), got = run("onednn:0");
  ASSERT_EQ(got.size(), ref.size());
  const double err = opset::relative_error(got, ref);
  std::cout << "[ measured ] onednn vs cpu_ref epoch losses: relative error " << err << "\n";
  EXPECT_LE(err, opset::model_tolerance(AMPX_DTYPE_F32));
  EXPECT_LT(ref.back(), ref.front());  // it trains
}
#endif

TEST(Trainer, BadDataIsRefusedNamingTheSample) {
  Dataset d = synthetic(10, 12, 4, 1);
  reinterpret_cast<int64_t*>(d.labels.data.data())[7] = 4;
  EXPECT_THROW(
      {
        try {
          check_dataset(d, "train.npy", 4);
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "train.npy: label 4 of sample 7 is outside [0, 4)");
          throw;
        }
      },
      std::invalid_argument);
  reinterpret_cast<int64_t*>(d.labels.data.data())[7] = 1;
  reinterpret_cast<float*>(d.inputs.data.data())[12 * 3 + 2] = NAN;
  EXPECT_THROW(check_dataset(d, "train.npy", 4), std::invalid_argument);
}

TEST(Trainer, ANonPositiveLearningRateIsRefused) {
  Session session(cpu_ref_only());
  TrainerOptions o = sgd(16);
  o.graph.optimizer.lr = 0;
  EXPECT_THROW(Trainer(session, small_mlp(), o), std::invalid_argument);
}

}  // namespace
