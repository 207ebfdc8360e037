// Shared initializers in training (docs/TRAINING.md, "Shared
// initializers"): an exporter merges equal initializers (every fresh
// BatchNorm's zero bias and running mean, a scale of ones read as the
// running variance too); the Trainer gives each reader its own copy, and
// each copy trains on its own.
#include <gtest/gtest.h>
#include <ampx/onnx/onnx_export.hpp>
#include <ampx/train/shared_state.hpp>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <map>

#include "train_fixtures.hpp"

namespace ampx::train {
namespace {

using testing::cpu_ref_only;
using testing::sgd;
using testing::synthetic;

// Two Conv+BatchNorm+Relu blocks reading one conv weight, and both
// BatchNorms reading one scale of ones (also their running variance) and
// one bias of zeros (also their running mean), as torch.onnx exports two
// fresh layers.
Graph shared_blocks() {
  GraphBuilder b("shared-blocks", 5);
  ValueId x = b.input("input", DType::kF32, {8, 2, 4, 4});
  const ValueId w = b.random_weight("conv.weight", {2, 2, 3, 3}, 0.5f);
  const std::vector<float> one(2, 1.0f), zero(2, 0.0f);
  const ValueId scale = b.constant("bn.weight", DType::kF32, {2}, one);
  const ValueId bias = b.constant("bn.bias", DType::kF32, {2}, zero);
  for (const std::string block : {"a", "b"}) {
    x = b.add(OpType::kConv2d, "conv_" + block, {x, w},
              {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    x = b.add(OpType::kBatchNorm, "bn_" + block, {x, scale, bias, bias, scale},
              {{"epsilon", 1e-5}});
    x = b.unary(OpType::kRelu, "relu_" + block, x);
  }
  x = b.add(OpType::kFlatten, "flatten", {x}, {{"axis", int64_t{1}}});
  x = b.dense("fc", x, 3);
  b.output(x);
  return std::move(b).build();
}

std::map<std::string, std::vector<float>> by_name(const std::vector<HostTensor>& state) {
  std::map<std::string, std::vector<float>> out;
  for (const HostTensor& t : state) {
    std::vector<float> v(t.data.size() / 4);
    std::memcpy(v.data(), t.data.data(), t.data.size());
    out[t.name] = std::move(v);
  }
  return out;
}

TEST(SharedState, EachReaderGetsItsOwnCopyNamedAfterValueAndNode) {
  const UntiedModel u = untie_shared_state(shared_blocks(), {});
  std::vector<std::string> names;
  for (const SharedStateCopy& c : u.copies) names.push_back(c.copy);
  EXPECT_EQ(names,
            (std::vector<std::string>{"bn.bias@bn_a/running_mean", "bn.weight@bn_a/running_var",
                                      "conv.weight@conv_b", "bn.weight@bn_b", "bn.bias@bn_b",
                                      "bn.bias@bn_b/running_mean", "bn.weight@bn_b/running_var"}));
  // No two state operands read one value any more.
  std::map<ValueId, int> reads;
  for (const Node& n : u.graph.nodes())
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (state_role_of_use(u.graph, n, i, {})) ++reads[n.inputs[i]];
  for (const auto& [v, count] : reads) EXPECT_EQ(count, 1) << u.graph.value(v).name;
  EXPECT_EQ(describe_shared_copies(u.copies).front(),
            "'bn.bias': 3 copies 'bn.bias@bn_a/running_mean', 'bn.bias@bn_b', "
            "'bn.bias@bn_b/running_mean'");
  // A frozen weight is no state: it stays shared.
  TrainingGraphOptions frozen;
  frozen.freeze = {"conv.weight"};
  for (const SharedStateCopy& c : untie_shared_state(shared_blocks(), frozen).copies)
    EXPECT_NE(c.value, "conv.weight");
}

TEST(SharedState, TheStepRefusesASharedRunningStatistic) {
  try {
    (void)build_training_graph(shared_blocks(), {});
    FAIL() << "a shared running statistic was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'bn.bias' is a running statistic of node 'bn_a'"),
              std::string::npos)
        << e.what();
  }
}

TEST(SharedState, EachCopyTrainsOnItsOwnAndTheTrainedModelKeepsThem) {
  const Dataset data = synthetic(64, {2, 4, 4}, 3, 11);
  Session session(cpu_ref_only());
  Trainer t(session, shared_blocks(), sgd(8));
  EXPECT_EQ(t.shared_copies().size(), 7u);
  const double before = t.evaluate(data).loss;
  for (int e = 0; e < 5; ++e) t.train_epoch(data);
  EXPECT_LT(t.evaluate(data).loss, before);
  auto s = by_name(t.state());
  // Every copy is state of its own, with its own optimizer state.
  for (const SharedStateCopy& c : t.shared_copies()) EXPECT_TRUE(s.contains(c.copy)) << c.copy;
  EXPECT_TRUE(s.contains("conv.weight@conv_b/momentum"));
  // Equal at the start, apart after training: each trained on its own.
  EXPECT_NE(s["conv.weight"], s["conv.weight@conv_b"]);
  EXPECT_NE(s["bn.weight"], s["bn.weight@bn_b"]);
  EXPECT_NE(s["bn.bias"], s["bn.bias@bn_b"]);
  EXPECT_NE(s["bn.bias@bn_a/running_mean"], s["bn.bias@bn_b/running_mean"]);
  EXPECT_NE(s["bn.weight@bn_a/running_var"], s["bn.weight@bn_b/running_var"]);
  // The scale is trained as a weight, not overwritten as the running
  // variance it shared a tensor with.
  EXPECT_NE(s["bn.weight"], s["bn.weight@bn_a/running_var"]);

  // The trained model: each node reads its own trained initializer, and it
  // goes out as a valid ONNX file that loads with the same values.
  const Graph trained = t.trained_model();
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("ampx_shared_" + std::to_string(::getpid()) + ".onnx");
  onnx_io::write_onnx(trained, file.string());
  const Graph back = session.load(file.string());
  std::filesystem::remove(file);
  std::map<std::string, std::vector<float>> loaded;
  for (const Value& v : back.values())
    if (v.is_constant() && v.type.dtype == DType::kF32) {
      std::vector<float> f(v.constant->size() / 4);
      std::memcpy(f.data(), v.constant->data(), v.constant->size());
      loaded[v.name] = std::move(f);
    }
  for (const char* name : {"conv.weight", "conv.weight@conv_b", "bn.bias@bn_b/running_mean"})
    EXPECT_EQ(loaded[name], s[name]) << name;
}

}  // namespace
}  // namespace ampx::train
