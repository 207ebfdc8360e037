// The three built-in models at O0, every node on onednn:0, against the same
// plan on cpu_ref:0, through the PluginHost, planner and executor.
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>
#include <ampx/train/training_graph.hpp>

#include <tolerances.hpp>

#include <gtest/gtest.h>

#include <functional>

namespace ampx {
namespace {

class OnednnModel : public ::testing::TestWithParam<std::string> {};

TEST_P(OnednnModel, O0MatchesCpuRef) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  const plugins::PluginHost host(opts);
  const auto& ref_dev = host.device("cpu_ref:0");
  const auto& dev = host.device("onednn:0");
  const Graph g = make_builtin_model(GetParam());
  const auto inputs = random_inputs(g, 11);
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  DeviceCapabilities ref_caps(ref_dev), caps(dev);
  const AmpPlan ref_plan = plan_amp(g, o0, ref_caps);
  const AmpPlan plan = plan_amp(g, o0, caps);
  const auto ref = Executor(ref_plan.graph, ref_dev).run(inputs);
  const auto out = Executor(plan.graph, dev).run(inputs);
  ASSERT_EQ(out.size(), ref.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const double err = max_relative_error(out[i], ref[i]);
    EXPECT_LT(err, ampx::test::model_tolerance(AMPX_DTYPE_F32)) << GetParam();
  }
}

// Fusion (BatchNorm folding, bias and activation epilogues as oneDNN
// post-ops) on and off give the same results, and it does fuse.
TEST_P(OnednnModel, FusionOnAndOffAgree) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  const plugins::PluginHost host(opts);
  const auto& dev = host.device("onednn:0");
  const Graph g = make_builtin_model(GetParam());
  const auto inputs = random_inputs(g, 12);
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  DeviceCapabilities caps(dev);
  const AmpPlan plan = plan_amp(g, o0, caps);
  const FusedGraph fused = fuse_for_device(plan.graph, caps);
  EXPECT_GT(fused.absorbed_nodes(), 0) << GetParam();
  EXPECT_LT(fused.graph.num_nodes(), plan.graph.num_nodes());
  const auto off = Executor(plan.graph, dev).run(inputs);
  const auto on = Executor(fused.graph, dev).run(inputs);
  ASSERT_EQ(on.size(), off.size());
  for (size_t i = 0; i < on.size(); ++i)
    EXPECT_LT(max_relative_error(on[i], off[i]), ampx::test::model_tolerance(AMPX_DTYPE_F32))
        << GetParam();
}

INSTANTIATE_TEST_SUITE_P(All, OnednnModel, ::testing::Values("cnn", "mlp", "encoder"));

// Answers as `inner` does, except that a node with bias_gradient (the
// fused weight and bias gradient) is unsupported, as on Vulkan and CUDA.
class RefusesBiasGradient final : public CapabilitySource {
 public:
  explicit RefusesBiasGradient(CapabilitySource& inner) : inner_(inner) {}
  std::string device_id() const override { return inner_.device_id(); }
  Answer query(const ampx_node_desc& node) override {
    for (size_t i = 0; i < node.num_attrs; ++i)
      if (std::string(node.attrs[i].name) == "bias_gradient") return {AMPX_SUPPORT_UNSUPPORTED};
    return inner_.query(node);
  }

 private:
  CapabilitySource& inner_;
};

int count_nodes(const Graph& g, const std::function<bool(const Node&)>& pred) {
  int n = 0;
  for (const Node& node : g.nodes()) n += pred(node) ? 1 : 0;
  return n;
}

// builtin:cnn's training step at O0 on onednn:0: its two biased
// convolutions' bias gradients come from their weight gradients' primitives
// (fusion.cpp, bias_gradient), while the plan keeps the unfused nodes; the
// step computes what the unfused one does. A device that does not answer
// the fused node keeps the ReduceSums.
TEST(OnednnTrainingStep, BiasGradientsComeFromTheWeightGradientPrimitives) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  const plugins::PluginHost host(opts);
  const auto& dev = host.device("onednn:0");
  const train::TrainingGraph tg = train::build_training_graph(make_builtin_model("cnn"), {});
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  DeviceCapabilities caps(dev);
  const AmpPlan plan = plan_amp(tg.step, o0, caps);
  const auto with_bias = [](const Node& n) {
    return n.op == OpType::kConv2dGradWeight && n.outputs.size() == 2;
  };
  const auto sums = [](const Node& n) { return n.op == OpType::kReduceSum; };
  EXPECT_EQ(count_nodes(plan.graph, with_bias), 0);  // the planner sees the unfused nodes
  const int planned_sums = count_nodes(plan.graph, sums);

  const FusedGraph fused = fuse_for_device(plan.graph, caps);
  EXPECT_EQ(count_nodes(fused.graph, with_bias), 2);
  EXPECT_EQ(count_nodes(fused.graph, sums), planned_sums - 2);

  RefusesBiasGradient refusing(caps);
  const FusedGraph kept = fuse_for_device(plan.graph, refusing);
  EXPECT_EQ(count_nodes(kept.graph, with_bias), 0);
  EXPECT_EQ(count_nodes(kept.graph, sums), planned_sums);
  EXPECT_EQ(kept.graph.num_nodes() - fused.graph.num_nodes(), 2u);

  const auto inputs = random_inputs(plan.graph, 13);
  const auto on = Executor(fused.graph, dev).run(inputs);
  const auto off = Executor(kept.graph, dev).run(inputs);
  ASSERT_EQ(on.size(), off.size());
  for (size_t i = 0; i < on.size(); ++i)
    EXPECT_LT(max_relative_error(on[i], off[i]), ampx::test::model_tolerance(AMPX_DTYPE_F32))
        << "step output " << i;
}

}  // namespace
}  // namespace ampx
