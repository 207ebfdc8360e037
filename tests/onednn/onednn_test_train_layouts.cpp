// Training steps keep activations blocked (issue 37, "Layouts that stay
// blocked through the whole step"): the CIFAR-shaped CNN with BatchNorm in
// training mode, its whole compiled step (forward, backward, SGD) on
// onednn:0, at O0 and at O2 bf16 (bf16 only where the plugin answers it
// native; f32 otherwise). debug_counters=1's reorder counters per step
// (plugin_info.note): no "round trip", i.e. no value that was blocked is
// reordered from plain into a blocked layout again for another primitive
// (LayoutStore::round_trip_source). Also run under ONEDNN_MAX_CPU_ISA=AVX2
// (the .avx2 copies, tests/onednn/CMakeLists.txt).
#include <ampx/amp/planner.hpp>
#include <ampx/exec/device_capabilities.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/train/training_graph.hpp>

#include <cstdio>
#include <cstring>
#include <iostream>

#include "onednn_harness.hpp"

namespace ampx::test {
namespace {

using namespace ampx::train;

struct StepCounts {
  unsigned long long total = 0, launch = 0, materialised = 0, round_trips = 0;
};

StepCounts counts(const plugins::Device& d) {
  const std::string note = d.plugin_note();
  StepCounts c;
  const char* at = std::strstr(note.c_str(), "activation reorders: ");
  EXPECT_NE(at, nullptr) << note;
  if (at) {
    EXPECT_EQ(std::sscanf(at,
                          "activation reorders: %llu (launch %llu, materialised %llu, round "
                          "trips %llu)",
                          &c.total, &c.launch, &c.materialised, &c.round_trips),
              4)
        << note;
  }
  return c;
}

// The MindSpore tutorial's CNN at 32x32 (issue 37): conv3x3 3->32 (no bias),
// BatchNorm, ReLU, max pool 2; conv3x3 32->64 (no bias), BatchNorm, ReLU,
// max pool 2; flatten, dense 512, ReLU, dense 10; batch 32.
Graph cifar_cnn() {
  GraphBuilder b("cifar-cnn", 0xc1fa);
  ValueId x = b.input("input", DType::kF32, {32, 3, 32, 32});
  const AttrMap pool{{"kernel_shape", std::vector<int64_t>{2, 2}},
                     {"strides", std::vector<int64_t>{2, 2}}};
  x = b.conv2d("conv1", x, 32, 3, 1, 1, 1, false);
  x = b.batch_norm("bn1", x);
  x = b.unary(OpType::kRelu, "relu1", x);
  x = b.add(OpType::kMaxPool, "pool1", {x}, pool);
  x = b.conv2d("conv2", x, 64, 3, 1, 1, 1, false);
  x = b.batch_norm("bn2", x);
  x = b.unary(OpType::kRelu, "relu2", x);
  x = b.add(OpType::kMaxPool, "pool2", {x}, pool);
  x = b.add(OpType::kFlatten, "flatten", {x}, {{"axis", int64_t{1}}});
  x = b.dense("fc1", x, 512);
  x = b.unary(OpType::kRelu, "relu3", x);
  x = b.dense("fc2", x, 10);
  b.output(x);
  return std::move(b).build();
}

// Per step (the second of two: the first makes the variants), for `policy`.
StepCounts step_counts(const AmpPolicy& policy, const char* name) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  opts.plugin_options["onednn"] = "debug_counters=1";
  const plugins::PluginHost host(opts);
  const plugins::Device& dev = host.device("onednn:0");
  TrainingGraphOptions to;
  to.optimizer.kind = OptimizerKind::kSgd;
  to.optimizer.lr = 0.01;
  to.optimizer.momentum = 0.9;
  const TrainingGraph tg = build_training_graph(cifar_cnn(), to);
  DeviceCapabilities caps(dev);
  const AmpPlan plan = plan_amp(tg.step, policy, caps);
  const FusedGraph fused = fuse_for_device(plan.graph, caps);
  std::vector<StateBinding> bindings;
  for (const StateEntry& e : tg.state) bindings.push_back(e.binding);
  Executor ex(fused.graph, dev, bindings);
  for (size_t i = 0; i < tg.state.size(); ++i) ex.write_state(i, tg.state[i].initial.data);
  std::vector<HostTensor> inputs = random_inputs(tg.step, 5);
  inputs.resize(tg.data_inputs);
  for (HostTensor& t : inputs) {
    if (t.name == "labels") {
      auto* y = reinterpret_cast<int64_t*>(t.data.data());
      for (size_t i = 0; i < t.data.size() / 8; ++i) y[i] = static_cast<int64_t>(i % 10);
    }
    if (t.name == "hyper") t = hyper_tensor(to.optimizer, 1);
    if (t.name == "loss_scale") t = loss_scale_tensor(1.0);
  }
  ex.run(inputs);
  const StepCounts a = counts(dev);
  const auto out = ex.run(inputs);
  const StepCounts b = counts(dev);
  StepCounts d{b.total - a.total, b.launch - a.launch, b.materialised - a.materialised,
               b.round_trips - a.round_trips};
  std::cout << "[ reorders ] " << name << " (" << dev.plugin_note().substr(0, 24)
            << "...): per step " << d.total << " (launch " << d.launch << ", materialised "
            << d.materialised << "), round trips " << d.round_trips << "\n";
  EXPECT_FALSE(out.empty());
  return d;
}

TEST(OnednnTrainLayouts, CifarCnnStepHasNoPlainRoundTripsAtO0) {
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  EXPECT_EQ(step_counts(o0, "O0 f32").round_trips, 0u);
}

TEST(OnednnTrainLayouts, CifarCnnStepHasNoPlainRoundTripsAtO2Bf16) {
  AmpPolicy o2;
  o2.level = AmpLevel::kO2;
  o2.half = DType::kBF16;
  EXPECT_EQ(step_counts(o2, "O2 bf16").round_trips, 0u);
}

}  // namespace
}  // namespace ampx::test
