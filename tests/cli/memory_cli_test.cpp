// A plan larger than the machine, or than --max-memory, is refused before
// anything is allocated: one line with the figures, exit 1, within the
// time an import and a plan take (issue 36: a Relu on [2^31 x 2] ran until
// killed). The models are never run: every refusal here comes before the
// inputs are made, so no test allocates more than a few MB.
#include <ampx/onnx/onnx_import.hpp>

#include "cli_support.hpp"
#include "onnx_model_maker.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace ampx_cli_test;
using ampx_onnx_test::ModelMaker;
using ampx_onnx_test::TempDir;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

namespace {

// The largest tensors the import accepts: [2^31 x 2] f32 is 16 GiB.
const std::string kBig = " --max-tensor-bytes 16GiB";

// y_i = Relu(x) for `outputs` outputs; x is [2^31 x 2] f32 (16 GiB), as is
// every output.
std::string relu_model(const TempDir& dir, int outputs) {
  ModelMaker mm(13);
  mm.input("x", {"2147483648", "2"});
  for (int i = 0; i < outputs; ++i) {
    const std::string y = "y" + std::to_string(i);
    mm.node(i % 2 ? "Neg" : "Relu", {"x"}, {y}, "/act" + std::to_string(i));
    mm.output(y);
  }
  return mm.save(dir / ("relu" + std::to_string(outputs) + ".onnx")).string();
}

// Resize of a [1,1,2,2] input to [1,1,2^e,2^(e')] by `sizes`.
std::string resize_model(const TempDir& dir, int64_t h, int64_t w) {
  ModelMaker mm(13);
  mm.input("x", {"1", "1", "2", "2"});
  mm.init_i64("sizes", {1, 1, h, w});
  mm.node("Resize", {"x", "", "", "sizes"}, {"y"}, "/Resize");
  mm.output("y");
  return mm.save(dir / ("resize_" + std::to_string(h) + "x" + std::to_string(w) + ".onnx"))
      .string();
}

TEST(MemoryCli, ReluOverSixteenGibIsRefusedByMaxMemory) {
  TempDir dir;
  const auto r = ampx_cli_test::ampx("run " + relu_model(dir, 1) + kBig + " --max-memory 8G");
  expect_one_line_error(r, 1, "more than --max-memory allows (8.0 GiB)");
  // The figures: the arena holds x and y (32 GiB), the host the input and
  // output tensors (32 GiB more).
  EXPECT_THAT(r.err, HasSubstr("the plan needs 64.0 GiB in all"));
  EXPECT_THAT(r.err, HasSubstr("cpu_ref:0: 32.0 GiB"));
  EXPECT_THAT(r.err, HasSubstr("input and output tensors: 32.0 GiB"));
}

TEST(MemoryCli, APlanLargerThanTheHostIsRefusedWithoutALimit) {
  // 64 outputs of 16 GiB each: over a TiB, more than any machine the tests
  // run on has available.
  TempDir dir;
  const auto r = ampx_cli_test::ampx("run " + relu_model(dir, 64) + kBig);
  expect_one_line_error(r, 1, "of host memory (cpu_ref:0: arena ");
  EXPECT_THAT(r.err, HasSubstr("this machine has available"));
}

TEST(MemoryCli, ResizeToHugeOutputsIsRefused) {
  TempDir dir;
  for (const auto& [h, w] : {std::pair<int64_t, int64_t>{1 << 13, 1 << 13},     // 2^26 elements
                             std::pair<int64_t, int64_t>{1 << 14, 1 << 14}}) {  // 2^28
    const auto r = ampx_cli_test::ampx("run " + resize_model(dir, h, w) + " --max-memory 64M");
    expect_one_line_error(r, 1, "more than --max-memory allows (64.0 MiB)");
  }
}

TEST(MemoryCli, MaxMemoryRefusesASmallModelAtASmallLimitOnly) {
  const auto small = ampx_cli_test::ampx("run builtin:mlp --iters 1 --warmup 0 --max-memory 4K");
  expect_one_line_error(small, 1, "more than --max-memory allows (4.0 KiB)");
  EXPECT_THAT(small.err, HasSubstr("cpu_ref:0: "));
  const auto large = ampx_cli_test::ampx("run builtin:mlp --iters 1 --warmup 0 --max-memory 1G");
  EXPECT_EQ(large.code, 0) << large.err;
  // The reference run is checked too: it has its own figures.
  const auto bad = ampx_cli_test::ampx("run builtin:mlp --max-memory banana");
  EXPECT_EQ(bad.code, 2) << bad.err;
}

TEST(MemoryCli, TuneAndReportTakeMaxMemory) {
  const auto t =
      ampx_cli_test::ampx(kTestDir +
                              " tune builtin:mlp --device test_native:0 --no-store --rounds 2 "
                              "--iters 1 --profile-runs 1 --max-memory 4K",
                          kNative);
  expect_one_line_error(t, 1, "more than --max-memory allows (4.0 KiB)");
  const auto r = ampx_cli_test::ampx(
      "report builtin:mlp --device cpu_ref:0 --iters 1 --warmup 0 --format json "
      "--max-memory 4K");
  EXPECT_EQ(r.code, 0) << r.err;  // a report records the refusal per level
  EXPECT_THAT(r.out, HasSubstr("more than --max-memory allows (4.0 KiB)"));
}

TEST(MemoryCli, TrainTakesMaxMemory) {
  const auto r = ampx_cli_test::ampx(
      "train builtin:digits-cnn --data builtin:digits --epochs 1 --max-memory 4K");
  expect_one_line_error(r, 1, "more than --max-memory allows (4.0 KiB)");
}

}  // namespace
