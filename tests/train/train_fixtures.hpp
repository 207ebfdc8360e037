// Shared by the training tests: a cpu_ref-only session, SGD options, a
// synthetic learnable dataset, a small MLP with dropout, the state's bytes.
#pragma once

#include <ampx/ir/builder.hpp>
#include <ampx/session/trainer.hpp>
#include <ampx/train/datasets.hpp>

#include <filesystem>
#include <random>

namespace ampx::train::testing {

#ifdef AMPX_TEST_PLUGIN_DIR
inline SessionOptions cpu_ref_only() {
  SessionOptions o;
  o.devices = "cpu_ref:0";
  o.plugin_dirs = {AMPX_TEST_PLUGIN_DIR};
  o.use_costs = false;
  o.use_tuned = false;
  o.trust_plugins = true;
  return o;
}

#endif

inline TrainerOptions sgd(int64_t batch) {
  TrainerOptions o;
  o.batch = batch;
  o.graph.optimizer.kind = OptimizerKind::kSgd;
  o.graph.optimizer.lr = 0.05;
  o.graph.optimizer.momentum = 0.9;
  o.seed = 3;
  return o;
}

inline bool have_digits() {
  return std::filesystem::exists(digits_csv_path());
}

// A synthetic, learnable problem: `n` samples of `sample` shape, normal
// inputs; the label is the arg max of a fixed linear map of the input.
inline Dataset synthetic(int64_t n, const std::vector<int64_t>& sample, int64_t classes,
                         uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  int64_t features = 1;
  for (int64_t d : sample) features *= d;
  std::vector<float> w(static_cast<size_t>(features * classes));
  for (float& v : w) v = g(rng);
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), sample.begin(), sample.end());
  Dataset d;
  d.inputs = {
      "input", {DType::kF32, dims}, std::vector<std::byte>(static_cast<size_t>(n * features) * 4)};
  d.labels = {"labels", {DType::kI64, {n}}, std::vector<std::byte>(static_cast<size_t>(n) * 8)};
  auto* x = reinterpret_cast<float*>(d.inputs.data.data());
  auto* y = reinterpret_cast<int64_t*>(d.labels.data.data());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t f = 0; f < features; ++f) x[i * features + f] = g(rng);
    int64_t best = 0;
    float best_v = -1e30f;
    for (int64_t c = 0; c < classes; ++c) {
      float s = 0;
      for (int64_t f = 0; f < features; ++f)
        s += x[i * features + f] * w[static_cast<size_t>(f * classes + c)];
      if (s > best_v) best_v = s, best = c;
    }
    y[i] = best;
  }
  return d;
}

inline Dataset synthetic(int64_t n, int64_t features, int64_t classes, uint64_t seed) {
  return synthetic(n, std::vector<int64_t>{features}, classes, seed);
}

inline Graph small_mlp() {
  GraphBuilder b("small-mlp", 11);
  ValueId x = b.input("input", DType::kF32, {16, 12});
  x = b.dense("fc1", x, 24);
  x = b.add(OpType::kDropout, "drop", {x}, {{"ratio", 0.1}});
  x = b.unary(OpType::kTanh, "act", x);
  x = b.dense("fc2", x, 4);
  b.output(x);
  return std::move(b).build();
}

// The inputs of one training step of `tg` on all of `data` (batch = its
// rows): samples, labels, `hyper`, loss scale 1 and zero dropout seeds.
inline std::vector<HostTensor> one_step_inputs(const TrainingGraph& tg, const Dataset& data,
                                               HostTensor hyper) {
  std::vector<HostTensor> in(tg.data_inputs);
  const auto put = [&](TrainingInput slot, size_t k, HostTensor t) {
    const size_t i = tg.input(slot, k);
    t.name = tg.step.value(tg.step.inputs()[i]).name;
    in[i] = std::move(t);
  };
  put(TrainingInput::kData, 0, data.inputs);
  put(TrainingInput::kLabels, 0, data.labels);
  put(TrainingInput::kHyper, 0, std::move(hyper));
  put(TrainingInput::kLossScale, 0, loss_scale_tensor(1.0));
  for (size_t d = 0; d < tg.input_count(TrainingInput::kDropoutSeed); ++d)
    put(TrainingInput::kDropoutSeed, d,
        HostTensor{"", {DType::kI64, {1}}, std::vector<std::byte>(8)});
  return in;
}

inline std::vector<std::vector<std::byte>> bytes_of(const std::vector<HostTensor>& state) {
  std::vector<std::vector<std::byte>> out;
  for (const auto& t : state) out.push_back(t.data);
  return out;
}

}  // namespace ampx::train::testing
