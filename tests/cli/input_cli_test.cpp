// `ampx tune` and `ampx report` take run's --input (and --input-shape): a
// model whose shapes come from an input's values is imported, tuned and
// measured on the given arrays (issue 36).
#include <ampx/exec/npy.hpp>

#include "cli_support.hpp"
#include "onnx_model_maker.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>

using namespace ampx_cli_test;
using ampx_onnx_test::ModelMaker;
using ampx_onnx_test::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// y = Relu(Reshape(x, shape)): the Reshape's shape is the input `shape`,
// known only from its value.
struct ValueInputModel {
  TempDir dir;
  std::string model, shape;
  ValueInputModel() {
    ModelMaker mm(13);
    mm.input("x", {"2", "6"});
    mm.input("shape", {"2"}, onnx::TensorProto::INT64);
    mm.node("Reshape", {"x", "shape"}, {"r"}, "/Reshape");
    mm.node("Relu", {"r"}, {"y"}, "/Relu");
    mm.output("y");
    model = mm.save(dir / "reshape_by_value.onnx").string();
    ampx::HostTensor t{"shape", {ampx::DType::kI64, {2}}, std::vector<std::byte>(16)};
    const int64_t dims[] = {3, 4};
    std::memcpy(t.data.data(), dims, sizeof dims);
    shape = (dir / "shape.npy").string();
    ampx::write_npy(shape, t);
  }
};

const std::string kQuickTune = " --rounds 2 --iters 1 --profile-runs 1 --no-store";

TEST(InputCli, TuneTakesTheValueInputsOfRun) {
  ValueInputModel m;
  const auto without = ampx_cli_test::ampx(
      kTestDir + " tune " + m.model + " --amp O2 --device test_native:0" + kQuickTune, kNative);
  expect_one_line_error(without, 1, "shape");
  const auto with = ampx_cli_test::ampx(kTestDir + " tune " + m.model +
                                            " --amp O2 --device test_native:0 --format json "
                                            "--input shape=" +
                                            m.shape + kQuickTune,
                                        kNative);
  ASSERT_EQ(with.code, 0) << with.err;
  const auto j = nlohmann::json::parse(with.out);
  EXPECT_EQ(j["schema"], "ampx.tune/1");
  EXPECT_EQ(j["verified"].size(), 3u);
  // A bad --input is a usage error, as for run.
  const auto bad = ampx_cli_test::ampx(kTestDir + " tune " + m.model +
                                           " --device test_native:0 --input shape=" + m.shape +
                                           " --input nope=" + m.shape,
                                       kNative);
  expect_one_line_error(bad, 2, "--input 'nope=");
}

TEST(InputCli, ReportMeasuresOnTheGivenInputs) {
  ValueInputModel m;
  const auto r = ampx_cli_test::ampx("report " + m.model +
                                     " --device cpu_ref:0 --iters 1 --warmup 0 --format json "
                                     "--input shape=" +
                                     m.shape);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"measured_ms\""));
  EXPECT_THAT(r.out, Not(HasSubstr("\"error\"")));
}

}  // namespace
