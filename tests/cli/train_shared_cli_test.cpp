// `ampx train` on a model whose exporter shared initializers between nodes
// (docs/TRAINING.md, "Shared initializers").
#include <gmock/gmock.h>
#include <ampx/exec/npy.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <set>

#include "cli_support.hpp"
#include "onnx_model_maker.hpp"

namespace {

using ampx_onnx_test::ModelMaker;
using ampx_onnx_test::TempDir;
using ::testing::HasSubstr;

// As torch.onnx exports two fresh Conv+BatchNorm layers of a model in eval
// mode: equal initializers merged (both BatchNorms read one scale and one
// bias), the running variance an Identity of the scale of ones, the running
// mean one of the bias of zeros; here one conv weight for both convolutions
// too.
std::string shared_model(const TempDir& dir) {
  ModelMaker mm(13);
  mm.input("x", {"batch", "2", "4", "4"});
  mm.init_f32("0.weight", {2, 2, 3, 3}, -0.4f);
  mm.init_f32_values("1.weight", {1.0f, 1.0f});
  mm.init_f32_values("1.bias", {0.0f, 0.0f});
  mm.init_f32("fc.weight", {3, 32}, -0.2f);
  mm.init_f32_values("fc.bias", {0.0f, 0.1f, 0.2f});
  mm.node("Identity", {"1.weight"}, {"1.running_var"}, "/Identity");
  mm.node("Identity", {"1.bias"}, {"1.running_mean"}, "/Identity_1");
  std::string x = "x";
  for (const std::string b : {"a", "b"}) {
    auto* conv = mm.node("Conv", {x, "0.weight"}, {"c" + b}, "/conv_" + b);
    ModelMaker::attr_ints(conv, "pads", {1, 1, 1, 1});
    mm.node("BatchNormalization",
            {"c" + b, "1.weight", "1.bias", "1.running_mean", "1.running_var"}, {"n" + b},
            "/bn_" + b);
    mm.node("Relu", {"n" + b}, {"r" + b}, "/relu_" + b);
    x = "r" + b;
  }
  mm.node("Flatten", {x}, {"flat"}, "/flatten");
  auto* fc = mm.node("Gemm", {"flat", "fc.weight", "fc.bias"}, {"logits"}, "/fc");
  ModelMaker::attr_int(fc, "transB", 1);
  mm.output("logits");
  return mm.save(dir / "shared.onnx").string();
}

// It trains (each reader on its own copy), says which values it copied for
// which nodes, and exports a model whose nodes read their own initializers.
TEST(TrainCli, SharedInitializersAreCopiedPerReaderReportedAndExported) {
  TempDir dir;
  const std::string model = shared_model(dir);
  std::vector<float> xs(32 * 32);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>((i * 29) % 13) / 6.0f - 1.0f;
  std::vector<int64_t> ys(32);
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<int64_t>(i % 3);
  ampx::HostTensor in{
      "x", {ampx::DType::kF32, {32, 2, 4, 4}}, std::vector<std::byte>(xs.size() * 4)};
  std::memcpy(in.data.data(), xs.data(), in.data.size());
  ampx::HostTensor labels{"labels", {ampx::DType::kI64, {32}}, std::vector<std::byte>(32 * 8)};
  std::memcpy(labels.data.data(), ys.data(), labels.data.size());
  ampx::write_npy(dir / "inputs.npy", in);
  ampx::write_npy(dir / "labels.npy", labels);
  const std::string out = (dir / "trained.onnx").string();
  const std::string args = ampx_cli_test::kTestDir + " train " + model +
                           " --device cpu_ref:0 --batch 8 --epochs 2 --momentum 0.9 --data " +
                           (dir / "inputs.npy").string() + "," + (dir / "labels.npy").string() +
                           " --export " + out;

  const auto text = ampx_cli_test::ampx(args);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("shared initializers, each reader given its own copy "
                                  "('<value>@<node>'): '1.bias' 3, '1.weight' 3, '0.weight' 1"));

  const auto json = ampx_cli_test::ampx(args + " --format json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto done = nlohmann::json::parse(json.out.substr(json.out.rfind("{\"amp\"")));
  std::vector<std::string> copies;
  for (const auto& c : done.at("shared_copies")) copies.push_back(c.at("copy"));
  EXPECT_EQ(copies,
            (std::vector<std::string>{"1.bias@/bn_a/running_mean", "1.weight@/bn_a/running_var",
                                      "0.weight@/conv_b", "1.weight@/bn_b", "1.bias@/bn_b",
                                      "1.bias@/bn_b/running_mean", "1.weight@/bn_b/running_var"}));
  EXPECT_EQ(done.at("shared_copies")[0].at("node"), "/bn_a");
  EXPECT_EQ(done.at("shared_copies")[0].at("role"), "running_mean");
  // Every epoch record has each step's time.
  const auto epoch = nlohmann::json::parse(json.out.substr(0, json.out.find('\n')));
  EXPECT_EQ(epoch.at("step_times_ms").size(), 4u);

  // The export is a model of its own: every BatchNorm operand its own
  // initializer, and it runs.
  ampx::onnx_io::ImportOptions pin;
  pin.input_shapes["x"] = {8, 2, 4, 4};
  const ampx::Graph g = ampx::onnx_io::import_onnx(out, pin);
  std::set<std::string> bn_inputs;
  for (const ampx::Node& n : g.nodes())
    if (n.op == ampx::OpType::kBatchNorm)
      for (size_t i = 1; i < n.inputs.size(); ++i) bn_inputs.insert(g.value(n.inputs[i]).name);
  EXPECT_EQ(bn_inputs.size(), 8u);
  EXPECT_TRUE(bn_inputs.contains("1.weight@/bn_b/running_var"));
  const auto run = ampx_cli_test::ampx(ampx_cli_test::kTestDir + " run " + out +
                                       " --device cpu_ref:0 --input-shape x=8x2x4x4");
  EXPECT_EQ(run.code, 0) << run.err;
}

}  // namespace
