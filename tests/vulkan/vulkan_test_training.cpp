// Training on vulkan:0 (docs/TRAINING.md) at O0 against the same steps on
// cpu_ref:0: builtin:digits-cnn with SGD and momentum (convolutions,
// BatchNorm in training mode, max pooling), and a small MLP with dropout
// and Adam. The losses agree (close, not identical: the reductions run in
// another order), and every backward, loss and update node with a Vulkan
// kernel is placed on vulkan:0, not on the fallback.
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/opset/catalogue.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/trainer.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include "../train/train_fixtures.hpp"

namespace ampx {
namespace {

using namespace ampx::train;

bool have_vulkan() {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  return plugins::PluginHost(opts).find_device("vulkan:0") != nullptr;
}

SessionOptions session_on(const char* devices) {
  SessionOptions o;
  o.devices = devices;
  o.plugin_dirs = {AMPX_PLUGIN_BUILD_DIR};
  o.use_costs = false;
  o.use_tuned = false;
  o.trust_plugins = true;
  return o;
}

// The training ops the Vulkan plugin has kernels for (backends/vulkan).
// Every training op, and ConvTranspose (a convolution's input gradient).
bool vulkan_training_kernel(std::string_view op) {
  return opset::is_training_op(op) || op == "ConvTranspose";
}

// Trains `epochs` epochs of `data` on vulkan:0 and on cpu_ref:0 with the
// same options and checks the per-epoch losses and the final evaluation;
// returns how many nodes of each training op the Vulkan plan has.
std::map<std::string, int> train_both(const Graph& model, const TrainerOptions& o,
                                      const Dataset& data, int epochs) {
  Session vk_session(session_on("vulkan:0")), ref_session(session_on("cpu_ref:0"));
  Trainer vk(vk_session, model, o), ref(ref_session, model, o);
  std::map<std::string, int> placed;
  const AmpPlan& plan = vk.plan();
  for (const NodePlan& n : plan.nodes) {
    const std::string op(op_name(n.op));
    if (plan.devices.at(static_cast<size_t>(n.device)) != "vulkan:0")
      std::cout << "[ fallback ] " << n.name << " (" << op << "): " << n.placement_text() << "\n";
    if (!vulkan_training_kernel(op)) continue;
    ++placed[op];
    EXPECT_EQ(plan.devices.at(static_cast<size_t>(n.device)), "vulkan:0")
        << n.name << " (" << op << "): " << n.placement_text();
  }
  for (int e = 0; e < epochs; ++e) {
    const EpochResult a = vk.train_epoch(data), b = ref.train_epoch(data);
    std::cout << "[ loss     ] epoch " << e + 1 << ": vulkan:0 " << a.loss << ", cpu_ref:0 "
              << b.loss << "\n";
    EXPECT_EQ(a.steps, b.steps);
    EXPECT_TRUE(std::isfinite(a.loss));
    EXPECT_NEAR(a.loss, b.loss, 1e-3 * std::abs(b.loss)) << "epoch " << e + 1;
  }
  const Evaluation a = vk.evaluate(data), b = ref.evaluate(data);
  EXPECT_NEAR(a.loss, b.loss, 1e-3 * std::abs(b.loss));
  return placed;
}

TEST(VulkanTraining, DigitsCnnWithSgdMatchesCpuRefAtO0) {
  if (!have_vulkan()) GTEST_SKIP() << "no vulkan:0 on this machine";
  TrainerOptions o;
  o.batch = 32;
  o.seed = 3;
  o.policy.level = AmpLevel::kO0;
  o.graph.optimizer.kind = OptimizerKind::kSgd;
  o.graph.optimizer.lr = 0.05;
  o.graph.optimizer.momentum = 0.9;
  const auto placed =
      train_both(make_builtin_model("digits-cnn"), o, testing::synthetic(96, {1, 8, 8}, 10, 21), 2);
  for (const char* op : {"BatchNormTraining", "BatchNormGrad", "ReluGrad", "MaxPoolGrad",
                         "Conv2dGradWeight", "SoftmaxCrossEntropy", "SoftmaxCrossEntropyGrad",
                         "SgdUpdate", "UpdateGuard", "ConvTranspose"})
    EXPECT_GT(placed.count(op), 0u) << op << " not in the step";
}

TEST(VulkanTraining, MlpWithDropoutAndAdamMatchesCpuRefAtO0) {
  if (!have_vulkan()) GTEST_SKIP() << "no vulkan:0 on this machine";
  TrainerOptions o;
  o.batch = 16;
  o.seed = 5;
  o.policy.level = AmpLevel::kO0;
  o.graph.optimizer.kind = OptimizerKind::kAdam;
  o.graph.optimizer.lr = 0.01;
  o.graph.optimizer.momentum = 0;
  o.graph.optimizer.weight_decay = 0.01;
  const auto placed = train_both(testing::small_mlp(), o, testing::synthetic(80, 12, 4, 9), 3);
  for (const char* op :
       {"DropoutTraining", "TanhGrad", "SoftmaxCrossEntropyGrad", "AdamUpdate", "UpdateGuard"})
    EXPECT_GT(placed.count(op), 0u) << op << " not in the step";
}

// --diagnose-overflow's probe runs on the device (a TensorStats kernel per
// input, no copies to the host), and its per-layer figures are cpu_ref's.
TEST(VulkanTraining, OverflowDiagnosticsRunOnTheDeviceAndMatchCpuRef) {
  if (!have_vulkan()) GTEST_SKIP() << "no vulkan:0 on this machine";
  TrainerOptions o;
  o.batch = 32;
  o.seed = 3;
  o.graph.optimizer.lr = 0.05;
  o.overflow.diagnose = true;
  Session vk_session(session_on("vulkan:0")), ref_session(session_on("cpu_ref:0"));
  const Graph model = make_builtin_model("digits-cnn");
  Trainer vk(vk_session, model, o), ref(ref_session, model, o);
  bool probed = false;
  for (const NodePlan& n : vk.plan().nodes)
    if (n.op == OpType::kTensorStats) {
      probed = true;
      EXPECT_EQ(vk.plan().devices.at(static_cast<size_t>(n.device)), "vulkan:0")
          << n.placement_text();
      EXPECT_EQ(n.reason(), "probe");
    }
  ASSERT_TRUE(probed);
  const Dataset data = testing::synthetic(64, {1, 8, 8}, 10, 21);
  vk.train_epoch(data);
  ref.train_epoch(data);
  const auto a = vk.overflow_diagnostics()->summary(), b = ref.overflow_diagnostics()->summary();
  ASSERT_EQ(a.size(), b.size());
  std::map<std::string, LayerOverflowSummary> by_name;
  for (const auto& l : b) by_name[l.layer] = l;
  for (const auto& l : a) {
    SCOPED_TRACE(l.layer);
    const LayerOverflowSummary& r = by_name.at(l.layer);
    EXPECT_NEAR(l.activation_amax, r.activation_amax, 1e-3 * r.activation_amax);
    EXPECT_NEAR(l.gradient_amax, r.gradient_amax, 1e-3 * r.gradient_amax);
    EXPECT_NEAR(l.underflow_share, r.underflow_share, 1e-3);
    EXPECT_EQ(l.first_overflows, 0);
  }
}

}  // namespace
}  // namespace ampx
