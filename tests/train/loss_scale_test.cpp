// Loss scaling (docs/TRAINING.md, "Loss scaling"): the schedules' rules,
// UpdateGuard on its own, and the step's order of operations end to end on
// cpu_ref: a power-of-two scale changes nothing (the gradients are
// unscaled before they are clipped), an overflowed step leaves the weights
// and the optimizer state bit for bit, the dynamic schedule backs off and
// then trains, and a run that can only overflow stops itself.
#include <ampx/reference/kernels.hpp>
#include <ampx/train/loss_scale.hpp>

#include <node_builder.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "train_fixtures.hpp"

using namespace ampx;
using namespace ampx::train;
using namespace ampx::train::testing;

namespace {

TEST(LossScaleOptions, ParsesEveryScheduleAndWritesItBack) {
  EXPECT_EQ(LossScaleOptions::parse("none"), LossScaleOptions::none());
  EXPECT_EQ(LossScaleOptions::parse("fixed").init, 128.0);
  EXPECT_EQ(LossScaleOptions::parse("fixed:1024").init, 1024.0);
  const LossScaleOptions d = LossScaleOptions::parse("dynamic");
  EXPECT_EQ(d.init, 16777216.0);
  EXPECT_EQ(d.factor, 2.0);
  EXPECT_EQ(d.window, 2000);
  EXPECT_EQ(d.floor, 1.0);
  const LossScaleOptions t = LossScaleOptions::parse("torch");
  EXPECT_EQ(t.init, 65536.0);
  EXPECT_EQ(t.floor, 0.0);
  EXPECT_EQ(LossScaleOptions::parse("dynamic:1024,4,50").window, 50);
  for (const char* text :
       {"none", "fixed:128", "fixed:0.5", "dynamic:16777216,2,2000", "dynamic:1024,4,50", "torch"})
    EXPECT_EQ(LossScaleOptions::parse(text).str(), text);
  EXPECT_TRUE(LossScaleOptions::parse("fixed").skip_nonfinite);
  EXPECT_FALSE(LossScaleOptions::parse("none").skip_nonfinite);
}

TEST(LossScaleOptions, BadSchedulesAreOneLineErrorsNamingTheText) {
  for (const char* text :
       {"fixed:0", "fixed:-2", "fixed:inf", "dynamic:1024,1", "dynamic:8,0.5", "dynamic:8,2,0",
        "dynamic:8,2,1.5", "dynamic:x", "dynamic:1,2,3,4", "torch:5", "sometimes", ""}) {
    try {
      (void)LossScaleOptions::parse(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("'") + text), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

TEST(LossScaleOptions, DefaultsFollowMindSporeAndBf16NeedsNone) {
  std::string why;
  EXPECT_EQ(LossScaleOptions::default_for(AmpLevel::kO2, DType::kF16, &why),
            LossScaleOptions::dynamic());
  EXPECT_NE(why.find("MindSpore"), std::string::npos) << why;
  EXPECT_EQ(LossScaleOptions::default_for(AmpLevel::kO2, DType::kBF16, &why).kind,
            LossScaleKind::kNone);
  EXPECT_NE(why.find("bf16"), std::string::npos) << why;
  for (AmpLevel l : {AmpLevel::kO0, AmpLevel::kO1, AmpLevel::kO3})
    EXPECT_EQ(LossScaleOptions::default_for(l, DType::kF16).kind, LossScaleKind::kNone);
}

TEST(LossScaler, DynamicHalvesOnOverflowGrowsAfterTheWindowAndStopsAtItsFloor) {
  LossScaler s(LossScaleOptions::dynamic(8, 2, 3));
  s.update(false, 1);
  EXPECT_EQ(s.scale(), 4);
  EXPECT_EQ(s.state().last_overflow_step, 1);
  for (int64_t k = 2; k <= 4; ++k) s.update(true, k);
  EXPECT_EQ(s.scale(), 8);  // x2 after 3 clean steps
  s.update(true, 5);
  s.update(false, 6);  // an overflow restarts the window
  EXPECT_EQ(s.scale(), 4);
  EXPECT_EQ(s.state().good_steps, 0);
  for (int64_t k = 7; k <= 9; ++k) s.update(false, k);
  EXPECT_EQ(s.scale(), 1);  // never below 1 (MindSpore)
  EXPECT_TRUE(s.at_floor());
  EXPECT_EQ(s.state().overflow_steps, 5);
  EXPECT_EQ(s.state().steps, 9);
  EXPECT_FALSE(s.given_up());
  for (int64_t k = 10; !s.given_up(); ++k) s.update(false, k);
  EXPECT_EQ(s.state().consecutive_overflows, LossScaler::kMaxOverflowsAtFloor);

  LossScaler torch(LossScaleOptions::torch());
  for (int64_t k = 1; k <= 20; ++k) torch.update(false, k);
  EXPECT_EQ(torch.scale(), 65536.0 / (1 << 20));  // no floor
  LossScaler fixed(LossScaleOptions::fixed(128));
  fixed.update(false, 1);
  EXPECT_EQ(fixed.scale(), 128);
  EXPECT_EQ(fixed.state().consecutive_overflows, 1);  // fixed: always at its floor
}

// UpdateGuard on the reference kernel: the norm of the unscaled gradients,
// the clip factor folded into grad_scale, apply cleared on a non-finite
// gradient (and kept when skipping is off).
TEST(UpdateGuard, ChecksFinitenessAndClipsTheUnscaledNorm) {
  const std::vector<int64_t> sizes{70000, 3, 200};  // the first spans two blocks
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<std::vector<float>> grads;
  double squares = 0;
  for (int64_t n : sizes) {
    grads.emplace_back(static_cast<size_t>(n));
    for (float& g : grads.back()) {
      g = u(rng) * 64.0f;  // scaled by 64
      squares += static_cast<double>(g) * g;
    }
  }
  auto run_guard = [&](double clip, int64_t skip, std::vector<float> hyper) {
    test::NodeBuilder b("UpdateGuard", "guard");
    b.input(AMPX_DTYPE_F32, {static_cast<int64_t>(hyper.size())});
    for (int64_t n : sizes) b.input(AMPX_DTYPE_F32, {n});
    b.output(AMPX_DTYPE_F32, {static_cast<int64_t>(hyper.size())});
    b.output(AMPX_DTYPE_F32, {2});
    b.attr_float("clip_norm", clip).attr_int("skip_nonfinite", skip);
    std::vector<const void*> in{hyper.data()};
    for (const auto& g : grads) in.push_back(g.data());
    std::vector<float> h_out(hyper.size()), stats(2);
    reference::make_kernel(b.desc())->run(in, std::vector<void*>{h_out.data(), stats.data()});
    return std::pair{h_out, stats};
  };
  const double norm = std::sqrt(squares) / 64.0;
  auto [h, st] = run_guard(0.0, 1, {0.1f, 1.0f / 64, 1.0f});
  EXPECT_EQ(h, (std::vector<float>{0.1f, 1.0f / 64, 1.0f}));
  EXPECT_EQ(st[0], 1.0f);
  EXPECT_NEAR(st[1], norm, 1e-5 * norm);
  std::tie(h, st) = run_guard(norm / 4, 1, {0.1f, 1.0f / 64, 1.0f, 0.5f, 0.25f});
  EXPECT_NEAR(h[1], 1.0 / 64 * (norm / 4) / (norm + 1e-6), 1e-6 / 64);
  EXPECT_EQ(h[3], 0.5f);
  std::tie(h, st) = run_guard(norm * 4, 1, {0.1f, 1.0f / 64, 1.0f});
  EXPECT_EQ(h[1], 1.0f / 64);  // under the bound: not clipped
  grads[2][117] = INFINITY;
  std::tie(h, st) = run_guard(norm / 4, 1, {0.1f, 1.0f / 64, 1.0f});
  EXPECT_EQ(h[2], 0.0f);
  EXPECT_EQ(h[1], 1.0f / 64);
  EXPECT_EQ(st[0], 0.0f);
  EXPECT_TRUE(std::isinf(st[1]));
  grads[2][117] = NAN;
  std::tie(h, st) = run_guard(0.0, 0, {0.1f, 1.0f / 64, 1.0f});
  EXPECT_EQ(h[2], 1.0f);  // skip_nonfinite = 0: the update applies
  EXPECT_EQ(st[0], 0.0f);
}

// Everything in f16 (O3), really rounded by cpu_ref's emulation: a loss
// scale of 2^16 or more is already infinite as the backward pass's f16
// seed, so such a step overflows for certain, as on a real f16 device.
TrainerOptions all_f16(TrainerOptions o) {
  o.policy.level = AmpLevel::kO3;
  o.policy.half = DType::kF16;
  o.capability_blind = true;
  return o;
}

TrainerOptions with_scale(TrainerOptions o, LossScaleOptions s, double clip = 0) {
  o.loss_scale = s;
  o.graph.clip_grad_norm = clip;
  return o;
}

// Scale, backward, unscale, clip: scaling by a power of two is exact in
// binary floating point, so the unscaled gradients, the clipped step and the
// weights are the same bits as without scaling. Clipping the scaled
// gradients instead would differ by the scale.
TEST(LossScaling, APowerOfTwoScaleChangesNoBitAndClippingSeesUnscaledGradients) {
  const Dataset data = synthetic(100, 12, 4, 5);
  Session session(cpu_ref_only());
  for (double clip : {0.0, 0.05}) {
    SCOPED_TRACE("clip " + std::to_string(clip));
    Trainer plain(session, small_mlp(), with_scale(sgd(16), LossScaleOptions::none(), clip));
    Trainer scaled(session, small_mlp(), with_scale(sgd(16), LossScaleOptions::fixed(1024), clip));
    const EpochResult a = plain.train_epoch(data);
    const EpochResult b = scaled.train_epoch(data);
    EXPECT_EQ(bytes_of(plain.state()), bytes_of(scaled.state()));
    EXPECT_EQ(a.loss, b.loss);
    EXPECT_EQ(b.overflow_steps, 0);
    ASSERT_EQ(b.records.size(), 7u);
    EXPECT_EQ(b.records[0].scale, 1024);
    EXPECT_EQ(a.records[3].grad_norm, b.records[3].grad_norm);
    if (clip > 0) {
      EXPECT_GT(b.records[0].grad_norm, clip) << "the clip bound never bites";
    }
  }
}

// Every step overflows (a scale f16 cannot hold): each is skipped, and the
// f32 weights and momentum buffers stay as they were, bit for bit; the
// losses are still reported.
TEST(LossScaling, AnOverflowedStepLeavesWeightsAndOptimizerStateBitForBit) {
  const Dataset data = synthetic(64, 12, 4, 5);
  Session session(cpu_ref_only());
  Trainer t(session, small_mlp(), with_scale(all_f16(sgd(16)), LossScaleOptions::fixed(65536)));
  // Trained a little first, so that the momentum buffers are not zeros.
  Trainer warm(session, small_mlp(), sgd(16));
  warm.train_epoch(data);
  t.set_state(warm.state());
  const auto before = bytes_of(t.state());
  const EpochResult r = t.train_epoch(data);
  EXPECT_EQ(r.overflow_steps, 4);
  EXPECT_EQ(bytes_of(t.state()), before);
  for (const StepRecord& s : r.records) {
    EXPECT_FALSE(s.finite);
    EXPECT_TRUE(std::isfinite(s.loss));
  }
  EXPECT_EQ(t.loss_scaler().state().overflow_steps, 4);
  EXPECT_EQ(t.loss_scaler().state().last_overflow_step, 4);
}

// The dynamic schedule from too high a scale: the first steps overflow and
// are skipped while the scale halves, then it trains and grows again after
// each window, overflowing now and then.
TEST(LossScaling, DynamicScalingBacksOffThenTrains) {
  const Dataset data = synthetic(400, 12, 4, 9);
  Session session(cpu_ref_only());
  Trainer t(session, small_mlp(),
            with_scale(all_f16(sgd(16)), LossScaleOptions::dynamic(0x1p20, 2, 10)));
  const double before = t.evaluate(data).loss;
  std::vector<StepRecord> steps;
  for (int e = 0; e < 6; ++e) {
    const EpochResult r = t.train_epoch(data);
    steps.insert(steps.end(), r.records.begin(), r.records.end());
  }
  ASSERT_FALSE(steps.front().finite);
  size_t first_clean = 0;
  while (!steps[first_clean].finite) ++first_clean;
  EXPECT_EQ(first_clean, 5u);  // 2^20 .. 2^16 overflow, 2^15 fits f16
  EXPECT_EQ(steps[first_clean].scale, 32768);
  for (size_t k = 1; k <= first_clean; ++k) EXPECT_EQ(steps[k].scale, steps[k - 1].scale / 2);
  int overflows_later = 0;
  for (size_t k = first_clean + 1; k < steps.size(); ++k) overflows_later += !steps[k].finite;
  EXPECT_GT(overflows_later, 0) << "the scale never grew back into overflow";
  EXPECT_LT(t.evaluate(data).loss, before * 0.5);
}

// Nothing can change: the run stops itself with one line.
TEST(LossScaling, EndlessOverflowAtTheFloorStopsTheRun) {
  const Dataset data = synthetic(16 * 120, 12, 4, 5);
  Session session(cpu_ref_only());
  Trainer t(session, small_mlp(), with_scale(all_f16(sgd(16)), LossScaleOptions::fixed(65536)));
  try {
    t.train_epoch(data);
    FAIL() << "the run did not stop";
  } catch (const TrainingStopped& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("100 steps in a row"), std::string::npos) << msg;
    // The diagnostics turned themselves on after 10 of them: it names the
    // loss, whose f16 gradient the scale 65536 overflows.
    EXPECT_NE(msg.find("the first non-finite tensor was layer 'loss'"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  EXPECT_EQ(t.step(), LossScaler::kMaxOverflowsAtFloor);
}

}  // namespace
