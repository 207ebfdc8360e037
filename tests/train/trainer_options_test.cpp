// Each training option against what it promises (docs/OPS.md's SgdUpdate,
// AdamUpdate and UpdateGuard; docs/TRAINING.md): one step from the same
// weights on the same batch, with the option and without, and the
// difference checked against the option's formula. Every test here fails
// when its option is dropped on the way into the step (checked by
// deleting each one's line in training_graph.cpp or trainer.cpp): the
// other training tests set these options alike on both sides, or not at
// all.
#include <ampx/session/trainer.hpp>

#include <tolerances.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "train_fixtures.hpp"

using namespace ampx;
using namespace ampx::train;
using namespace ampx::train::testing;

namespace {

using Weights = std::map<std::string, std::vector<double>>;

// The model's f32 constants (its weights) by name.
Weights weights_of(const Graph& g) {
  Weights w;
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& val = g.value(v);
    if (val.is_constant() && val.type.dtype == DType::kF32)
      w[val.name] = to_doubles(HostTensor{val.name, val.type, *val.constant});
  }
  return w;
}

// All weights, in name order, as one vector.
std::vector<double> flat(const Weights& w) {
  std::vector<double> out;
  for (const auto& [name, values] : w) out.insert(out.end(), values.begin(), values.end());
  return out;
}

std::vector<double> minus(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d(a.size());
  for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return d;
}

double l2(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

struct OneStep {
  Weights before, after;
  StepRecord record;
};

// One step of `o` on one full batch of `data` (small_mlp, cpu_ref).
OneStep one_step(TrainerOptions o, const Dataset& data) {
  Session session(cpu_ref_only());
  o.batch = data.size();
  Trainer t(session, small_mlp(), o);
  OneStep s;
  s.before = weights_of(t.trained_model());
  const EpochResult r = t.train_epoch(data);
  EXPECT_EQ(r.steps, 1);
  s.record = r.records.at(0);
  s.after = weights_of(t.trained_model());
  return s;
}

TrainerOptions plain_sgd() {
  TrainerOptions o = sgd(16);
  o.graph.optimizer.momentum = 0;
  return o;
}

// f32 weights updated by a step of about 1e-2 of their size: the difference
// of two such updates is exact to about 1e-5 of the step.
constexpr double kStepTolerance = 1e-4;

// --clip-grad-norm C: a step whose unscaled gradients have a global norm
// above C moves the weights by lr times a gradient of norm C (PyTorch's
// clip_grad_norm_, docs/OPS.md UpdateGuard).
TEST(TrainerOptions, AClippedStepHasTheClipNorm) {
  const Dataset data = synthetic(16, 12, 4, 5);
  const OneStep free = one_step(plain_sgd(), data);
  const double norm = free.record.grad_norm;
  ASSERT_GT(norm, 0);
  const double lr = plain_sgd().graph.optimizer.lr;
  EXPECT_NEAR(l2(minus(flat(free.after), flat(free.before))) / lr, norm, norm * kStepTolerance);

  TrainerOptions o = plain_sgd();
  o.graph.clip_grad_norm = norm / 4;
  const OneStep clipped = one_step(o, data);
  EXPECT_EQ(clipped.record.grad_norm, norm) << "the guard reports the norm before clipping";
  const std::vector<double> step = minus(flat(clipped.after), flat(clipped.before));
  EXPECT_NEAR(l2(step) / lr, norm / 4, norm / 4 * kStepTolerance);
  // The direction is the unclipped step's.
  std::vector<double> want = minus(flat(free.after), flat(free.before));
  for (double& x : want) x *= (norm / 4) / (norm + 1e-6);
  EXPECT_LE(opset::relative_error(step, want), kStepTolerance);
}

// --nesterov: the first step from zero momentum moves by lr·(g + μ·g)
// instead of lr·g (docs/OPS.md SgdUpdate: M' = g, W' = W − lr·(g + μ·M')).
TEST(TrainerOptions, NesterovsFirstStepIsOnePlusMomentumTimesPlainMomentums) {
  const Dataset data = synthetic(16, 12, 4, 5);
  TrainerOptions o = sgd(16);
  const double mu = o.graph.optimizer.momentum;
  ASSERT_GT(mu, 0);
  const OneStep plain = one_step(o, data);
  o.graph.optimizer.nesterov = true;
  const OneStep nesterov = one_step(o, data);
  std::vector<double> want = minus(flat(plain.after), flat(plain.before));
  for (double& x : want) x *= 1 + mu;
  EXPECT_LE(opset::relative_error(minus(flat(nesterov.after), flat(nesterov.before)), want),
            kStepTolerance);
}

// --weight-decay D: SGD adds D·W to the gradient, AdamW multiplies W by
// 1 − lr·D before its step; either way the step with decay is the step
// without it less lr·D·W (the gradient at W and Adam's moments are the
// same on both sides). Adam's L2 decay goes through the moments: it only
// has to change the step.
TEST(TrainerOptions, WeightDecayShrinksTheWeightsByLrTimesDecay) {
  const Dataset data = synthetic(16, 12, 4, 5);
  constexpr double kDecay = 0.2;
  for (const OptimizerKind kind :
       {OptimizerKind::kSgd, OptimizerKind::kAdamW, OptimizerKind::kAdam}) {
    SCOPED_TRACE(std::string(optimizer_name(kind)));
    TrainerOptions o = plain_sgd();
    o.graph.optimizer.kind = kind;
    if (kind != OptimizerKind::kSgd) o.graph.optimizer.lr = 0.01;
    const double lr = o.graph.optimizer.lr;
    const OneStep plain = one_step(o, data);
    o.graph.optimizer.weight_decay = kDecay;
    const OneStep decayed = one_step(o, data);
    const std::vector<double> w0 = flat(plain.before);
    const std::vector<double> got = minus(flat(decayed.after), flat(plain.after));
    std::vector<double> want(w0.size());
    for (size_t i = 0; i < w0.size(); ++i) want[i] = -lr * kDecay * w0[i];
    if (kind == OptimizerKind::kAdam)
      EXPECT_GT(opset::relative_error(got, std::vector<double>(got.size(), 0.0)), 0.0);
    else
      EXPECT_LE(opset::relative_error(got, want), 1e-3);  // a difference of two f32 updates
  }
}

// --freeze PATTERN: the weights it names are not trained: bit-identical
// after a step, and not in the state; the others move.
TEST(TrainerOptions, AFrozenWeightIsBitIdenticalAfterAStep) {
  const Dataset data = synthetic(16, 12, 4, 5);
  TrainerOptions o = sgd(16);
  o.graph.freeze = {"fc1*"};
  Session session(cpu_ref_only());
  Trainer t(session, small_mlp(), o);
  EXPECT_EQ(t.training_graph().trainable, 2);
  for (const HostTensor& s : t.state()) EXPECT_NE(s.name.rfind("fc1", 0), 0u) << s.name;
  const Weights before = weights_of(t.trained_model());
  t.train_epoch(data);
  const Weights after = weights_of(t.trained_model());
  for (const char* frozen : {"fc1.weight", "fc1.bias"}) {
    ASSERT_TRUE(after.count(frozen)) << frozen;
    EXPECT_EQ(after.at(frozen), before.at(frozen)) << frozen;
  }
  for (const char* trained : {"fc2.weight", "fc2.bias"})
    EXPECT_NE(after.at(trained), before.at(trained)) << trained;
}

// The per-step losses of an epoch.
std::vector<double> step_losses(const EpochResult& r) {
  std::vector<double> out;
  for (const StepRecord& s : r.records) out.push_back(s.loss);
  return out;
}

Graph mlp_without_dropout() {
  GraphBuilder b("mlp", 11);
  ValueId x = b.input("input", DType::kF32, {16, 12});
  x = b.unary(OpType::kTanh, "act", b.dense("fc1", x, 24));
  b.output(b.dense("fc2", x, 4));
  return std::move(b).build();
}

// TrainerOptions::seed fixes the data order: without dropout, an epoch's
// per-step losses follow the order alone. The same seed gives the same
// losses, another seed others.
TEST(TrainerOptions, TheSeedFixesTheDataOrder) {
  const Dataset data = synthetic(32, 12, 4, 5);
  const auto losses = [&](uint64_t seed) {
    Session session(cpu_ref_only());
    TrainerOptions o = sgd(8);
    o.seed = seed;
    Trainer t(session, mlp_without_dropout(), o);
    return step_losses(t.train_epoch(data));
  };
  const std::vector<double> a = losses(1);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(losses(1), a);
  EXPECT_NE(losses(2), a);
}

// TrainerOptions::seed fixes the dropout masks: with one sample there is
// one order, so the losses of three steps differ between seeds only by
// the masks drawn.
TEST(TrainerOptions, TheSeedFixesTheDropoutMasks) {
  const Dataset data = synthetic(1, 12, 4, 5);
  const auto losses = [&](uint64_t seed) {
    Session session(cpu_ref_only());
    TrainerOptions o = sgd(1);
    o.seed = seed;
    Trainer t(session, small_mlp(), o);
    std::vector<double> out;
    for (int e = 0; e < 3; ++e) out.push_back(t.train_epoch(data).loss);
    return out;
  };
  const std::vector<double> a = losses(1);
  EXPECT_EQ(losses(1), a);
  EXPECT_NE(losses(2), a);
}

}  // namespace
