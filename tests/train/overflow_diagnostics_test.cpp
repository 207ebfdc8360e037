// Per-layer overflow diagnostics and the automatic FP32 fallback
// (docs/TRAINING.md, "Overflow diagnostics"): TensorStats on its own; an
// injected overflow (digits-cnn's conv1 weights times 1e5, so its f16
// activation overflows whatever the loss scale) named by layer and moved to
// f32, after which the run trains; a too-high dynamic scale's gradient
// overflows, which the schedule cures, moving nothing; the fallback kept in
// checkpoints; a skipped step keeping BatchNorm's running statistics.
#include <ampx/reference/kernels.hpp>
#include <ampx/train/checkpoint.hpp>
#include <ampx/train/overflow_diagnostics.hpp>

#include <node_builder.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "train_fixtures.hpp"

using namespace ampx;
using namespace ampx::train;
using namespace ampx::train::testing;

namespace {

uint16_t f16_bits(float f) {
  // Values used below are exact in f16: 1.5, -3, 2^-20 (subnormal), inf.
  if (std::isinf(f)) return f > 0 ? 0x7c00 : 0xfc00;
  if (f == 0x1p-20f) return 0x0010;  // 2^-24 * 16
  if (f == 1.5f) return 0x3e00;
  if (f == -3.0f) return 0xc200;
  return 0;
}

// One f32 tensor over two blocks, one f16 tensor with an infinity and a
// subnormal: each row is [largest finite |x|, non-finite share, share of
// nonzero finite elements below 2^-14], read in the tensor's own dtype.
TEST(TensorStats, ReadsEachTensorInItsOwnDtype) {
  std::vector<float> a(70000);
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : a) v = u(rng);
  a[69999] = -7.25f;  // the largest, in the second block
  for (int i = 0; i < 700; ++i) a[static_cast<size_t>(100 * i)] = 1e-6f;  // below 2^-14
  a[5] = 0.0f;
  std::vector<uint16_t> h{f16_bits(1.5f), f16_bits(-3.0f), f16_bits(INFINITY), f16_bits(0x1p-20f),
                          0};
  test::NodeBuilder b("TensorStats", "probe");
  b.input(AMPX_DTYPE_F32, {70000}).input(AMPX_DTYPE_F16, {5}).output(AMPX_DTYPE_F32, {2, 3});
  std::vector<float> stats(6);
  reference::make_kernel(b.desc())->run(std::vector<const void*>{a.data(), h.data()},
                                        std::vector<void*>{stats.data()});
  EXPECT_EQ(stats[0], 7.25f);
  EXPECT_EQ(stats[1], 0.0f);
  int64_t small = 0;
  for (float v : a) small += v != 0.0f && std::fabs(v) < 0x1p-14f ? 1 : 0;
  EXPECT_GE(small, 700);
  EXPECT_FLOAT_EQ(stats[2], static_cast<float>(small) / 69999.0f);  // a[5] is zero: not counted
  EXPECT_EQ(stats[3], 3.0f);  // the infinity is left out of amax
  EXPECT_FLOAT_EQ(stats[4], 1.0f / 5.0f);
  EXPECT_FLOAT_EQ(stats[5], 1.0f / 3.0f);  // 1.5, -3, 2^-20: one below the normal range
}

// digits-cnn with conv1's weights multiplied: its f16 output overflows
// (BatchNorm after it makes the f32 model train as before).
Graph hot_cnn(Session& session, double factor) {
  Graph g = session.load("builtin:digits-cnn", [] {
    ModelOptions mo;
    mo.batch_size = 32;
    return mo;
  }());
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    Value& val = g.value(v);
    if (val.name != "conv1.weight") continue;
    std::vector<float> w(val.constant->size() / 4);
    std::memcpy(w.data(), val.constant->data(), val.constant->size());
    for (float& x : w) x = static_cast<float>(x * factor);
    auto bytes = std::make_shared<std::vector<std::byte>>(val.constant->size());
    std::memcpy(bytes->data(), w.data(), bytes->size());
    val.constant = std::move(bytes);
  }
  return g;
}

TrainerOptions o2_blind(bool auto_fallback) {
  TrainerOptions o = sgd(32);
  o.graph.optimizer.lr = 0.01;
  o.policy.level = AmpLevel::kO2;
  o.capability_blind = true;  // cpu_ref's f16 really rounds
  // --auto-fallback implies the diagnostics (docs/TRAINING.md): asked for
  // alone, so that the fallback tests fail when it stops implying them.
  o.overflow.diagnose = !auto_fallback;
  o.overflow.auto_fallback = auto_fallback;
  return o;
}

const NodePlan& node_plan(const AmpPlan& plan, const std::string& name) {
  for (const NodePlan& n : plan.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

TEST(OverflowDiagnostics, NamesTheInjectedLayerAndTheFallbackMovesItToF32) {
  Session session(cpu_ref_only());
  const Dataset data = synthetic(320, {1, 8, 8}, 10, 4);
  {
    // Diagnostics only: every step overflows in conv1's activation; the
    // dynamic scale backs off to its floor for nothing, and the run stops
    // naming conv1.
    Trainer t(session, hot_cnn(session, 1e5), o2_blind(false));
    EXPECT_EQ(node_plan(t.plan(), "conv1").effective, DType::kF16);
    try {
      for (int e = 0; e < 20; ++e) t.train_epoch(data);
      FAIL() << "the run did not stop";
    } catch (const TrainingStopped& e) {
      EXPECT_NE(std::string(e.what()).find("layer 'conv1' (Conv2d)'s activation"),
                std::string::npos)
          << e.what();
    }
    ASSERT_FALSE(t.overflow_diagnostics()->events().empty());
    for (const OverflowEvent& e : t.overflow_diagnostics()->events()) {
      EXPECT_EQ(e.layer, "conv1");
      EXPECT_EQ(e.kind, OverflowProbe::Kind::kActivation);
      EXPECT_EQ(e.dtype, DType::kF16);
      EXPECT_EQ(e.dtype_max, 65504.0);
    }
    const auto summary = t.overflow_diagnostics()->summary();
    EXPECT_EQ(summary.front().layer, "conv1");
    EXPECT_GT(summary.front().activation_amax, 0.0);
  }
  // With the fallback: conv1 moves to f32 after its third overflow, with
  // reason overflow-fallback, and the run trains like the f32 one.
  Trainer t(session, hot_cnn(session, 1e5), o2_blind(true));
  const EpochResult first = t.train_epoch(data);
  ASSERT_EQ(first.fallbacks.size(), 1u);
  EXPECT_EQ(first.fallbacks[0].layer, "conv1");
  EXPECT_EQ(first.fallbacks[0].cause, "overflow");
  EXPECT_EQ(first.fallbacks[0].step, 3);
  EXPECT_EQ(t.fallbacks(), first.fallbacks);
  const NodePlan& conv1 = node_plan(t.plan(), "conv1");
  EXPECT_EQ(conv1.effective, DType::kF32);
  EXPECT_EQ(conv1.reason(), "overflow-fallback");
  EXPECT_EQ(node_plan(t.plan(), "conv2").effective, DType::kF16) << "only conv1 moved";
  for (int e = 0; e < 3; ++e) {
    const EpochResult r = t.train_epoch(data);
    EXPECT_TRUE(r.overflows.empty());
    EXPECT_TRUE(std::isfinite(r.loss));
  }
  const Evaluation after = t.evaluate(data);
  EXPECT_TRUE(std::isfinite(after.loss)) << "the skipped steps left the running statistics";
  TrainerOptions f32 = o2_blind(false);
  f32.policy.level = AmpLevel::kO0;
  Trainer reference(session, hot_cnn(session, 1e5), f32);
  for (int e = 0; e < 4; ++e) reference.train_epoch(data);
  const double want = reference.evaluate(data).loss;
  EXPECT_LT(want, 2.2) << "the f32 run does not learn";
  // It trains: 11 of its 40 steps were skipped (3 in conv1, 8 while the
  // scale backed off from 2^24), so it trails the f32 run a little.
  EXPECT_LT(after.loss, want + 0.25);
  EXPECT_LT(after.loss, 2.15);
}

// The first steps of MindSpore's 2^24 overflow in the gradients by design:
// the schedule backs off, and nothing is moved to f32.
TEST(OverflowDiagnostics, GradientOverflowsTheScaleCuresMoveNothing) {
  Session session(cpu_ref_only());
  const Dataset data = synthetic(320, {1, 8, 8}, 10, 4);
  Trainer t(session, hot_cnn(session, 1.0), o2_blind(true));
  const EpochResult r = t.train_epoch(data);
  EXPECT_GT(r.overflow_steps, 3);
  ASSERT_FALSE(r.overflows.empty());
  for (const OverflowEvent& e : r.overflows) {
    EXPECT_EQ(e.kind, OverflowProbe::Kind::kGradient);
    EXPECT_FALSE(e.counts);
  }
  EXPECT_TRUE(t.fallbacks().empty());
}

// A skipped step changes no state at all: BatchNorm's running statistics
// included, even when its forward overflowed.
TEST(OverflowDiagnostics, ASkippedStepKeepsTheRunningStatisticsBitForBit) {
  Session session(cpu_ref_only());
  const Dataset data = synthetic(32, {1, 8, 8}, 10, 4);
  Trainer t(session, hot_cnn(session, 1e5), o2_blind(false));
  const auto before = bytes_of(t.state());
  const EpochResult r = t.train_epoch(data);
  EXPECT_EQ(r.overflow_steps, 1);
  EXPECT_EQ(bytes_of(t.state()), before);
}

// The fallback is part of the run: a checkpoint keeps it, and a trainer
// given it plans the layer f32 from the start.
TEST(OverflowDiagnostics, TheFallbackIsKeptInCheckpointsAndReplanned) {
  Checkpoint c;
  c.model = "00";
  c.options = "{}";
  c.fallbacks = {{"conv1", "overflow", 3, "named first at 3 overflowed steps in the last 200"}};
  const auto file = std::filesystem::temp_directory_path() / "ampx-fallback.ampxckpt";
  write_checkpoint(file, c);
  EXPECT_EQ(read_checkpoint(file).fallbacks, c.fallbacks);
  std::filesystem::remove(file);

  Session session(cpu_ref_only());
  Trainer t(session, hot_cnn(session, 1.0), o2_blind(false));
  const auto state = t.state();
  t.set_fallbacks(c.fallbacks);
  EXPECT_EQ(node_plan(t.plan(), "conv1").reason(), "overflow-fallback");
  EXPECT_EQ(bytes_of(t.state()), bytes_of(state)) << "re-planning keeps the state";
  try {
    t.set_fallbacks({{"conv9", "overflow", 1, ""}});
    FAIL() << "an unknown layer was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'conv9'"), std::string::npos) << e.what();
  }
}

// A resumed run moves the layer at the step the uninterrupted run does:
// the windows travel with the checkpoint (Trainer::checkpoint() and
// restore(), through a file, as the CLI does).
TEST(OverflowDiagnostics, AResumedRunFallsBackAtTheSameStep) {
  Session session(cpu_ref_only());
  const Dataset data = synthetic(64, {1, 8, 8}, 10, 4);  // 2 steps an epoch
  TrainerOptions o = o2_blind(true);
  o.overflow.fallback_overflows = 3;  // the fourth named overflow moves conv1
  Trainer whole(session, hot_cnn(session, 1e5), o);
  for (int e = 0; e < 3; ++e) whole.train_epoch(data);
  ASSERT_EQ(whole.fallbacks().size(), 1u);
  EXPECT_EQ(whole.fallbacks()[0].step, 4);

  Trainer first(session, hot_cnn(session, 1e5), o);
  first.train_epoch(data);
  const Checkpoint c = first.checkpoint();
  ASSERT_EQ(c.fallback_windows.size(), 1u);
  EXPECT_EQ(c.fallback_windows[0].first, (std::vector<int64_t>{1, 2}));
  const auto file = std::filesystem::temp_directory_path() / "ampx-windows.ampxckpt";
  write_checkpoint(file, c);
  const Checkpoint back = read_checkpoint(file);
  std::filesystem::remove(file);
  EXPECT_EQ(back.fallback_windows, c.fallback_windows);

  Trainer resumed(session, hot_cnn(session, 1e5), o);
  resumed.restore(back);
  EXPECT_EQ(resumed.step(), 2);
  for (int e = 1; e < 3; ++e) resumed.train_epoch(data);
  EXPECT_EQ(resumed.fallbacks(), whole.fallbacks());
  EXPECT_EQ(bytes_of(resumed.state()), bytes_of(whole.state()));
}

TEST(OverflowDiagnostics, BadFallbackOptionsAreOneLineErrors) {
  Session session(cpu_ref_only());
  for (auto bad : {+[](OverflowOptions& o) { o.fallback_window = 0; },
                   +[](OverflowOptions& o) { o.fallback_overflows = -1; },
                   +[](OverflowOptions& o) { o.fallback_underflow = 1.5; }}) {
    TrainerOptions o = o2_blind(true);
    bad(o.overflow);
    EXPECT_THROW(Trainer(session, small_mlp(), o), std::invalid_argument);
  }
}

// Moving a layer to f32 re-plans and recompiles the step: the weights and
// optimizer state trained so far carry over, bit for bit (a recompiled step
// starting from the model's initial weights would still train, and the
// fallback tests above would not notice).
TEST(OverflowDiagnostics, MovingALayerToF32KeepsTheTrainedState) {
  Session session(cpu_ref_only());
  TrainerOptions o = sgd(16);
  o.policy.level = AmpLevel::kO2;
  o.capability_blind = true;
  o.loss_scale = LossScaleOptions::none();  // no step skipped: the weights move
  Trainer t(session, small_mlp(), o);
  const auto initial = bytes_of(t.state());
  t.train_epoch(synthetic(48, 12, 4, 5));
  const auto trained = bytes_of(t.state());
  ASSERT_NE(trained, initial);
  t.set_fallbacks({{"fc1", "overflow", t.step(), "set by the test"}});
  EXPECT_EQ(node_plan(t.plan(), "fc1").effective, DType::kF32);
  EXPECT_EQ(bytes_of(t.state()), trained);
}

}  // namespace
