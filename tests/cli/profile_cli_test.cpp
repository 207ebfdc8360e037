// `ampx train --profile-step N` and `--trace FILE` (docs/TRAINING.md,
// "Profiling a step"): one step of the run profiled per node, with the
// kernel each node ran on and the reorders it caused, as a table, as JSON
// and as a Chrome trace; a step the run does not have is refused before
// training starts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "cli_support.hpp"

namespace ampx_cli_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

// 8 samples shaped for builtin:cnn ([3, 32, 32], 10 classes): with --batch
// 4, two steps an epoch.
fs::path cnn_data() {
  const fs::path d = fresh_dir("data");
  constexpr int64_t kN = 8;
  std::vector<float> x(static_cast<size_t>(kN * 3 * 32 * 32));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 17) / 16.0f;
  write_npy(d / "inputs.npy", "<f4", {kN, 3, 32, 32}, x.data(), x.size() * 4);
  std::vector<int64_t> labels{1, 2, 3, 4, 5, 6, 7, 8};
  write_npy(d / "labels.npy", "<i8", {kN}, labels.data(), labels.size() * 8);
  return d;
}

std::string train_args(const fs::path& data) {
  return "train builtin:cnn --device onednn:0 --amp O0 --epochs 2 --batch 4 --data " +
         data.string();
}

// The JSON line of one event.
json event(const std::string& out, const std::string& name) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '{') continue;
    json j = json::parse(line);
    if (j["event"] == name) return j;
  }
  ADD_FAILURE() << "no '" << name << "' event in:\n" << out;
  return {};
}

bool onednn_missing(const Result& r) {
  return r.code != 0 && r.err.find("onednn") != std::string::npos &&
         r.err.find("no device") != std::string::npos;
}

TEST(ProfileCli, TrainProfilesOneStepPerNodeWithItsKernels) {
  const fs::path data = cnn_data();
  const Result text = ampx(train_args(data) + " --profile-step 2", kOnednnLsanEnv);
  if (onednn_missing(text)) GTEST_SKIP() << "no onednn:0 here: " << text.err;
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("profile of step 2 (epoch 1, 4 samples):"));
  EXPECT_THAT(text.out, HasSubstr("implementation"));
  EXPECT_THAT(text.out, HasSubstr("reorders"));
  // A convolution's backward-weights primitive, named as oneDNN names its
  // implementation, and a row of the plugin's own loops.
  EXPECT_THAT(text.out, HasSubstr("convolution_backward_weights "));
  EXPECT_THAT(text.out, HasSubstr("loop: "));

  const Result r = ampx(train_args(data) + " --profile-step 2 --format json", kOnednnLsanEnv);
  ASSERT_EQ(r.code, 0) << r.err;
  const json p = event(r.out, "profile");
  EXPECT_EQ(p["step"], 2);
  EXPECT_EQ(p["epoch"], 1);
  EXPECT_EQ(p["rows"], 4);
  const json& steps = p["per_node"]["steps"];
  ASSERT_FALSE(steps.empty());
  bool conv = false;
  for (const json& s : steps) {
    if (s["op"] == "Copy") continue;
    // Every kernel of the onednn plugin says what it ran on.
    ASSERT_TRUE(s.contains("implementation")) << s.dump();
    const std::string impl = s["implementation"];
    EXPECT_FALSE(impl.empty()) << s.dump();
    EXPECT_GE(s["reorder_us"].get<double>(), 0.0);
    EXPECT_LE(s["reorder_us"].get<double>(), s["measured_us"].get<double>() + 1.0) << s.dump();
    // A kernel with a variant per producer layout names the one it ran:
    // one batch-normalization primitive, not every variant's.
    if (s["op"] == "BatchNormTraining" || s["op"] == "BatchNormGrad")
      EXPECT_EQ(impl.find(" + "), std::string::npos) << impl;
    if (s["op"] == "Conv2d") {
      conv = true;
      EXPECT_EQ(impl.rfind("convolution_forward", 0), 0u) << impl;
    }
  }
  EXPECT_TRUE(conv);
  // The profiled step's wall time stays out of the timed steps.
  EXPECT_GT(event(r.out, "epoch")["step_ms"].get<double>(), 0.0);
}

TEST(ProfileCli, TraceHoldsOneEventPerStepOfTheProfiledRun) {
  const fs::path data = cnn_data();
  const fs::path dir = fresh_dir("trace");
  const std::string trace = (dir / "step.json").string();
  // --trace alone: step 3, after two warm-up steps.
  const Result r = ampx(train_args(data) + " --trace " + trace + " --format json", kOnednnLsanEnv);
  if (onednn_missing(r)) GTEST_SKIP() << "no onednn:0 here: " << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const json p = event(r.out, "profile");
  EXPECT_EQ(p["step"], 3);
  EXPECT_EQ(event(r.out, "done")["trace"], trace);
  const json t = json::parse(slurp(trace));
  size_t complete = 0, with_impl = 0;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++complete;
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    if (e["args"].contains("implementation")) {
      ++with_impl;
      EXPECT_FALSE(e["args"]["implementation"].get<std::string>().empty());
      EXPECT_TRUE(e["args"].contains("reorders"));
      EXPECT_TRUE(e["args"].contains("reorder_us"));
    }
  }
  EXPECT_EQ(complete, p["per_node"]["steps"].size());
  EXPECT_EQ(with_impl, complete) << "every step is a kernel of the onednn plugin";
  // A run shorter than 3 steps profiles its last.
  const Result one =
      ampx("train builtin:cnn --device onednn:0 --amp O0 --epochs 1 --batch 4 --data " +
               data.string() + " --trace " + trace + " --format json",
           kOnednnLsanEnv);
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(event(one.out, "profile")["step"], 2);
}

TEST(ProfileCli, AStepTheRunDoesNotHaveIsRefusedBeforeTraining) {
  const fs::path data = cnn_data();
  const fs::path dir = fresh_dir("bad");
  const std::string trace = (dir / "never.json").string();
  // cpu_ref: the refusal comes before any device work, so any device does.
  const std::string args =
      "train builtin:cnn --device cpu_ref:0 --epochs 2 --batch 4 --data " + data.string();
  expect_one_line_error(ampx(args + " --profile-step 0"), 2,
                        "--profile-step 0: steps count from 1");
  expect_one_line_error(ampx(args + " --profile-step 5 --trace " + trace), 2,
                        "--profile-step 5: the run has 4 steps (2 epochs of 2)");
  EXPECT_FALSE(fs::exists(trace));
  const Result no_epoch = ampx(args + " --profile-step 5");
  EXPECT_THAT(no_epoch.out, ::testing::Not(HasSubstr("epoch 1/2"))) << "refused before training";
  expect_one_line_error(ampx(args + " --trace " + (dir / "no" / "dir.json").string()), 2,
                        "--trace '");
}

}  // namespace
}  // namespace ampx_cli_test
