// Session::load_shape_cached (docs/SESSION.md): an ONNX model with a
// symbolic batch runs at any batch size, each new shape planned once and
// the compiled plans kept in a bounded cache; the outputs are those of the
// model imported at that shape (run unfused, so within f32 rounding).
#include <ampx/exec/executor.hpp>
#include <ampx/exec/host_tensor.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/onnx/onnx_export.hpp>
#include <ampx/onnx/onnx_import.hpp>
#include <ampx/session/session.hpp>

#include <gtest/gtest.h>
#include <unistd.h>
#include <tolerances.hpp>

#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;
using namespace ampx;

// builtin:cnn written as ONNX with its batch symbolic ("N").
fs::path symbolic_cnn() {
  const fs::path p =
      fs::temp_directory_path() / ("ampx_shape_cached_" + std::to_string(::getpid()) + ".onnx");
  onnx_io::ExportOptions eo;
  eo.batch_dim = "N";
  fileio::write_file_atomically(p, onnx_io::export_onnx(make_builtin_model("cnn"), eo));
  return p;
}

std::vector<HostTensor> batch_of(const fs::path& model, int64_t batch, uint64_t seed) {
  onnx_io::ImportOptions io;
  io.batch_size = batch;
  return random_inputs(onnx_io::import_onnx(model, io), seed);
}

class ShapeCachedModelTest : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove(model_); }
  fs::path model_ = symbolic_cnn();
  Session session_{{.devices = "cpu_ref:0", .use_costs = false, .use_tuned = false}};
};

TEST_F(ShapeCachedModelTest, EachNewBatchIsPlannedOnceAndMatchesTheModelAtThatBatch) {
  AmpPolicy policy;
  policy.level = AmpLevel::kO0;
  ShapeCachedModel model =
      session_.load_shape_cached(model_.string(), {.policy = policy}, {}, {.capacity = 2});
  for (int64_t batch : {1, 3, 1, 3, 5, 1}) {
    SCOPED_TRACE(batch);
    const auto inputs = batch_of(model_, batch, 10 + static_cast<uint64_t>(batch));
    const auto got = model.run(inputs);
    // The same model imported at this batch, run directly.
    onnx_io::ImportOptions io;
    io.batch_size = batch;
    const Graph at_batch = onnx_io::import_onnx(model_, io);  // the executor keeps a reference
    Executor want_exec(at_batch, session_.host().device("cpu_ref:0"));
    const auto want = want_exec.run(inputs);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(got[0].type, want[0].type);
    EXPECT_EQ(got[0].type.shape.at(0), batch);
    // The session compiles with fusion (BatchNorm folded, epilogues): f32
    // rounding apart.
    EXPECT_LE(opset::relative_error(to_doubles(got[0]), to_doubles(want[0])), 1e-5);
  }
  // 1, 3 planned; 1, 3 cached; 5 planned (evicts 1); 1 planned again.
  EXPECT_EQ(model.stats().runs, 6);
  EXPECT_EQ(model.stats().plans, 4);
  EXPECT_EQ(model.stats().evictions, 2);
  EXPECT_EQ(model.cached(), 2u);
  EXPECT_GT(model.stats().last_plan_ms, 0.0);
  EXPECT_EQ(model.plan().graph.value(model.plan().graph.inputs()[0]).type.shape.at(0), 1);
}

TEST_F(ShapeCachedModelTest, WrongInputsAreOneLineErrors) {
  ShapeCachedModel model = session_.load_shape_cached(model_.string(), {});
  auto inputs = batch_of(model_, 2, 1);
  auto expect_error = [&](const std::vector<HostTensor>& in, const std::string& want) {
    try {
      (void)model.run(in);
      ADD_FAILURE() << "expected an error naming " << want;
    } catch (const std::exception& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(want), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  };
  // An input the model does not have: the model's own input is then
  // missing, and its symbolic dimension cannot be pinned.
  auto renamed = inputs;
  renamed[0].name = "images";
  expect_error(renamed, "input '" + inputs[0].name + "' dimension 0 is symbolic");
  // A fixed dimension contradicted: the channel count of the cnn's input.
  auto wrong = inputs;
  wrong[0].type.shape[1] += 1;
  wrong[0].data.resize(static_cast<size_t>(element_count(wrong[0].type.shape)) * 4);
  expect_error(wrong, "the run's input '" + inputs[0].name + "'");
  expect_error({}, "input '" + inputs[0].name + "' dimension 0 is symbolic");
  EXPECT_EQ(model.stats().plans, 0);
}

}  // namespace
