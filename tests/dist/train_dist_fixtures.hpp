// What the data-parallel Trainer tests share (train_dist_test.cpp,
// sharded_optimizer_test.cpp): models, options and comparisons.
#pragma once

#include "../train/train_fixtures.hpp"

#include <ampx/ir/builder.hpp>
#include <ampx/session/trainer.hpp>
#include <ampx/train/shuffle.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ampx::train::dist_testing {

using testing::cpu_ref_only;

// Dense layers only: no Dropout (whose masks depend on the rows a rank
// holds) and no BatchNorm.
inline Graph plain_mlp() {
  GraphBuilder b("plain-mlp", 5);
  ValueId x = b.input("input", DType::kF32, {8, 12});
  x = b.dense("fc1", x, 32);
  x = b.unary(OpType::kRelu, "relu", x);
  x = b.dense("fc2", x, 24);
  x = b.unary(OpType::kTanh, "act", x);
  x = b.dense("fc3", x, 4);
  b.output(x);
  return std::move(b).build();
}

inline std::shared_ptr<DataParallel> join(DataParallelOptions o = {}) {
  return std::make_shared<DataParallel>(o);
}

inline TrainerOptions options_at(AmpLevel level, int64_t batch) {
  TrainerOptions o = testing::sgd(batch);
  o.policy.level = level;
  // cpu_ref's emulated 16-bit really rounds to 16-bit (as a policy-string
  // framework plans it), so that O2 is not O0 in disguise here.
  o.capability_blind = true;
  // O2's dynamic loss scaling, from a scale that does not overflow at the
  // first steps: which steps overflow at 2^24 depends on the rows a
  // 16-bit gradient sums over, and one skip more moves the whole run.
  if (level == AmpLevel::kO2) o.loss_scale = LossScaleOptions::parse("dynamic:1024,2,1000");
  return o;
}

inline std::vector<HostTensor> train_alone(const Graph& model, TrainerOptions o,
                                           const Dataset& data, int epochs) {
  Session session(cpu_ref_only());
  Trainer t(session, model, std::move(o));
  for (int e = 0; e < epochs; ++e) t.train_epoch(data);
  return t.state();
}

// The largest |a - b| / (1 + |b|) over every weight (not the optimizer's
// moments), and the name of the tensor where it is.
inline std::pair<double, std::string> max_difference(const std::vector<HostTensor>& a,
                                                     const std::vector<HostTensor>& b) {
  std::pair<double, std::string> worst{0.0, ""};
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<double> x = to_doubles(a[i]), y = to_doubles(b[i]);
    for (size_t k = 0; k < x.size(); ++k) {
      const double d = std::abs(x[k] - y[k]) / (1.0 + std::abs(y[k]));
      if (!(d <= worst.first)) worst = {d, a[i].name};
    }
  }
  return worst;
}

// As max_difference, over the tensors of `a` that `b` holds too, matched by
// name (a sharded run's state lacks the other ranks' optimizer moments).
inline std::pair<double, std::string> max_difference_by_name(const std::vector<HostTensor>& a,
                                                             const std::vector<HostTensor>& b) {
  std::vector<HostTensor> x, y;
  for (const HostTensor& t : a)
    for (const HostTensor& u : b)
      if (t.name == u.name) {
        x.push_back(t);
        y.push_back(u);
      }
  return max_difference(x, y);
}

// 64 samples of 12 features in which, at each of `steps` (counted from 0)
// of epoch 1 (seed 3, per-rank batch `b` on `ranks` ranks), the first row
// the last rank reads holds 1e6: beyond f16, infinite once cast, so that
// rank's 16-bit gradients overflow and no other rank's do.
inline Dataset overflowing_on_the_last_rank(std::vector<int64_t> steps, int64_t b, int ranks) {
  Dataset data = testing::synthetic(64, 12, 4, 5);
  const std::vector<int64_t> order =
      detail::shuffled(64, detail::splitmix64(3) ^ static_cast<uint64_t>(1));
  const int64_t global = b * ranks;
  for (int64_t step : steps) {
    const int64_t row = order[static_cast<size_t>(step * global + b * (ranks - 1))];
    reinterpret_cast<float*>(data.inputs.data.data())[row * 12] = 1e6f;
  }
  return data;
}

}  // namespace ampx::train::dist_testing
