// Shapes computed from input *values* (ImportOptions::input_values): a
// TopK whose k is a graph input is built for the value given, the graph
// names the inputs it was built for, and a ShapeCachedModel keys its plans
// by those values too. Without the values the import says what to give.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <ampx/onnx/onnx_import.hpp>
#include <ampx/session/session.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "onnx_model_maker.hpp"

namespace {

using namespace ampx_onnx_test;

// y, i = TopK(x [2, 5], k + 1), k an i64 [1] input.
ModelMaker topk_model() {
  ModelMaker mm(13);
  mm.input("x", {"2", "5"});
  mm.input("k", {"1"}, onnx::TensorProto::INT64);
  mm.init_i64("one", {1});
  mm.node("Add", {"k", "one"}, {"k1"});
  mm.node("TopK", {"x", "k1"}, {"y", "i"}, "/TopK");
  mm.output("y");
  return mm;
}

ampx::HostTensor k_tensor(int64_t k) {
  ampx::HostTensor t{"k", {ampx::DType::kI64, {1}}, std::vector<std::byte>(8)};
  std::memcpy(t.data.data(), &k, 8);
  return t;
}

ampx::HostTensor x_tensor() {
  ampx::HostTensor t{"x", {ampx::DType::kF32, {2, 5}}, std::vector<std::byte>(40)};
  const float v[10] = {0.5f, -2, 3.5f, 1.25f, -0.75f, 4, 2.5f, -1, 0.25f, 3};
  std::memcpy(t.data.data(), v, 40);
  return t;
}

TEST(OnnxValueInputs, WithoutTheValueTheImportSaysWhatToGive) {
  TempDir dir;
  const std::string msg = import_error(topk_model().save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "/TopK")) << msg;
  EXPECT_TRUE(has(msg, "K ('k1') must be a constant")) << msg;
  EXPECT_TRUE(has(msg, "--input")) << msg;
}

TEST(OnnxValueInputs, TheGraphIsBuiltForTheGivenValue) {
  TempDir dir;
  ampx::onnx_io::ImportOptions io;
  io.input_values["k"] = k_tensor(2);
  io.input_values["x"] = x_tensor();
  ampx::onnx_io::ImportStats stats;
  const ampx::Graph g = import_onnx(topk_model().save(dir / "m.onnx"), io, &stats);
  EXPECT_EQ(g.specialised_on, std::vector<std::string>{"k"});  // x is still an input
  EXPECT_EQ(stats.specialised_on, std::vector<std::string>{"k"});
  EXPECT_EQ(g.value(g.outputs()[0]).type.shape, (ampx::Shape{2, 3}));
  // A value of another type than the input's is not used.
  io.input_values["k"].type.shape = {2};
  EXPECT_TRUE(has(import_error(dir / "m.onnx", io), "from an input whose value is not given"));
}

TEST(OnnxValueInputs, OnlySmallInputsSpecialiseTheGraph) {
  // k taken from a 65-element input: data, not a shape-like value.
  TempDir dir;
  ModelMaker mm(13);
  mm.input("x", {"65"});
  mm.input("big", {"65"}, onnx::TensorProto::INT64);
  mm.init_i64("zero", {0}, true);
  mm.init_i64("one", {1});
  mm.node("Gather", {"big", "zero"}, {"k0"});
  mm.node("Reshape", {"k0", "one"}, {"k"});
  mm.node("TopK", {"x", "k"}, {"y", "i"}, "/TopK");
  mm.output("y");
  ampx::onnx_io::ImportOptions io;
  io.input_values["big"] = {"big", {ampx::DType::kI64, {65}}, std::vector<std::byte>(65 * 8)};
  const std::string msg = import_error(mm.save(dir / "m.onnx"), io);
  EXPECT_TRUE(has(msg, "or has more than 64 elements")) << msg;
}

TEST(OnnxValueInputs, AShapeCachedModelPlansOncePerValue) {
  TempDir dir;
  const auto path = topk_model().save(dir / "m.onnx");
  ampx::Session session{{.devices = "cpu_ref:0", .use_costs = false, .use_tuned = false}};
  ampx::ShapeCachedModel model = session.load_shape_cached(path.string(), {});
  const std::vector<float> want3 = {3.5f, 1.25f, 0.5f, 4, 3, 2.5f};
  for (int64_t k : {2, 1, 2}) {
    SCOPED_TRACE(k);
    const std::vector<ampx::HostTensor> in{x_tensor(), k_tensor(k)};
    const auto out = model.run(in);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].type.shape, (ampx::Shape{2, k + 1}));
    const auto* y = reinterpret_cast<const float*>(out[0].data.data());
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t j = 0; j <= k; ++j)
        EXPECT_EQ(y[r * (k + 1) + j], want3[static_cast<size_t>(r * 3 + j)]);
  }
  EXPECT_EQ(model.stats().runs, 3);
  EXPECT_EQ(model.stats().plans, 2);  // k = 2, k = 1; k = 2 again is cached
}

}  // namespace

// prepare(): without the values the TopK model cannot be imported (nothing
// is cached, the first run plans it); a model that needs none is planned
// at once, and its runs use that plan whatever their values.
TEST(OnnxValueInputs, PrepareDefersOnlyAGraphBuiltFromValues) {
  TempDir dir;
  ampx::Session session{{.devices = "cpu_ref:0", .use_costs = false, .use_tuned = false}};
  const auto topk = topk_model().save(dir / "topk.onnx");
  ampx::ShapeCachedModel by_value = session.load_shape_cached(topk.string(), {});
  const std::vector<ampx::HostTensorView> types{{"x", {ampx::DType::kF32, {2, 5}}, {}},
                                                {"k", {ampx::DType::kI64, {1}}, {}}};
  EXPECT_FALSE(by_value.prepare(types));
  EXPECT_EQ(by_value.stats().plans, 0);

  ModelMaker mm(13);
  mm.input("x", {"2", "5"});
  mm.node("Relu", {"x"}, {"y"});
  mm.output("y");
  const auto plain = mm.save(dir / "plain.onnx");
  ampx::ShapeCachedModel fixed = session.load_shape_cached(plain.string(), {});
  const std::vector<ampx::HostTensorView> x_type{types[0]};
  EXPECT_TRUE(fixed.prepare(x_type));
  EXPECT_EQ(fixed.stats().plans, 1);
  ampx::HostTensor x = x_tensor();
  for (float sign : {1.0f, -1.0f}) {
    auto* v = reinterpret_cast<float*>(x.data.data());
    for (int i = 0; i < 10; ++i) v[i] *= sign;
    const auto out = fixed.run(std::vector<ampx::HostTensor>{x});
    ASSERT_EQ(out.size(), 1u);
    const auto* y = reinterpret_cast<const float*>(out[0].data.data());
    for (int i = 0; i < 10; ++i) EXPECT_EQ(y[i], std::max(v[i], 0.0f));
  }
  EXPECT_EQ(fixed.stats().runs, 2);
  EXPECT_EQ(fixed.stats().plans, 1);

  // A model ampx refuses whatever the values: the import's own error.
  ModelMaker bad(13);
  bad.input("x", {"2", "5"});
  bad.node("NoSuchOp", {"x"}, {"y"});
  bad.output("y");
  ampx::ShapeCachedModel refused =
      session.load_shape_cached(bad.save(dir / "bad.onnx").string(), {});
  EXPECT_THROW((void)refused.prepare(x_type), ampx::onnx_io::OnnxError);
}
