// Forms of ONNX's node suite the importer takes without a new op-set op:
// opsets 27 and 28 (each op whose schema changed there imported in its new
// form or refused), run on cpu_ref:0 against values written out here.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <ampx/onnx/onnx_import.hpp>
#include <ampx/session/session.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "onnx_model_maker.hpp"

namespace {

using namespace ampx_onnx_test;

// The model's outputs on cpu_ref:0.
std::vector<ampx::HostTensor> run_model(const fs::path& path,
                                        const std::vector<ampx::HostTensor>& inputs) {
  ampx::Session session{{.devices = "cpu_ref:0", .use_costs = false, .use_tuned = false}};
  ampx::ShapeCachedModel model = session.load_shape_cached(path.string(), {});
  return model.run(inputs);
}

std::vector<float> iota_f(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

// --- opsets 27 and 28 ------------------------------------------------------

// SpaceToDepth 28's `mode`: DCR (the default, the only order before) puts
// the block offset outside the channel, CRD inside. Opset 13 has no mode.
TEST(OnnxNodeForms, SpaceToDepth28TakesBothModes) {
  TempDir dir;
  // x [1, 2, 2, 2]: channel c, row h, column w holds 4c + 2h + w.
  const ampx::HostTensor x = f32_tensor("x", {1, 2, 2, 2}, iota_f(8));
  struct Case {
    int64_t opset;
    const char* mode;
    std::vector<float> want;
  };
  const Case cases[] = {
      // DCR: depth (bh * 2 + bw) * C + c.
      {28, "DCR", {0, 4, 1, 5, 2, 6, 3, 7}},
      // CRD: depth c * 4 + bh * 2 + bw.
      {28, "CRD", {0, 1, 2, 3, 4, 5, 6, 7}},
      {28, nullptr, {0, 4, 1, 5, 2, 6, 3, 7}},
      {13, nullptr, {0, 4, 1, 5, 2, 6, 3, 7}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.opset) + (c.mode ? c.mode : " default"));
    ModelMaker mm(c.opset);
    mm.input("x", {"1", "2", "2", "2"});
    auto* n = mm.node("SpaceToDepth", {"x"}, {"y"});
    ModelMaker::attr_int(n, "blocksize", 2);
    if (c.mode) ModelMaker::attr_string(n, "mode", c.mode);
    mm.output("y");
    const auto out = run_model(mm.save(dir / "s2d.onnx"), {x});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type.shape, (ampx::Shape{1, 8, 1, 1}));
    EXPECT_EQ(floats(out[0]), c.want);
  }
}

// Mod 28 defines fmod=0 for floats (the floored quotient, the divisor's
// sign); before 28 it is integers only, as ONNX Runtime refuses it.
TEST(OnnxNodeForms, FloatModFmod0IsOpset28s) {
  TempDir dir;
  for (int64_t opset : {13, 28}) {
    ModelMaker mm(opset);
    mm.input("a", {"4"});
    mm.input("b", {"4"});
    mm.node("Mod", {"a", "b"}, {"y"});
    mm.output("y");
    const fs::path path = mm.save(dir / "mod.onnx");
    if (opset == 13) {
      EXPECT_TRUE(has(import_error(path), "fmod=0 on f32 inputs is defined from opset 28"));
      continue;
    }
    const float inf = std::numeric_limits<float>::infinity();
    const auto out = run_model(path, {f32_tensor("a", {4}, {5.5f, -5.5f, 0.0f, -3}),
                                      f32_tensor("b", {4}, {2, 2, -2, inf})});
    ASSERT_EQ(out.size(), 1u);
    const auto y = floats(out[0]);
    EXPECT_EQ(y[0], 1.5f);
    EXPECT_EQ(y[1], 0.5f);
    EXPECT_TRUE(y[2] == 0 && std::signbit(y[2])) << y[2];
    EXPECT_EQ(y[3], inf);
  }
}

// ReduceLogSumExp 28 dropped the integer types.
TEST(OnnxNodeForms, IntegerReduceLogSumExpIsRefusedFromOpset28) {
  TempDir dir;
  ModelMaker mm(28);
  mm.input("x", {"2", "3"}, onnx::TensorProto::INT64);
  mm.node("ReduceLogSumExp", {"x"}, {"y"});
  mm.output("y");
  EXPECT_TRUE(has(import_error(mm.save(dir / "r.onnx")),
                  "ReduceLogSumExp of i64 is not defined from opset 28"));
}

// --- CastLike ----------------------------------------------------------------

// CastLike (opset 15+) is a Cast to the element type of its second input.
TEST(OnnxNodeForms, CastLikeCastsToTheTargetsElementType) {
  TempDir dir;
  ModelMaker mm(21);
  mm.input("x", {"4"});
  mm.init_i64("like", {7});
  mm.node("CastLike", {"x", "like"}, {"y"});
  mm.output("y");
  const auto out =
      run_model(mm.save(dir / "cl.onnx"), {f32_tensor("x", {4}, {1.75f, -2.5f, 3, 0})});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].type.dtype, ampx::DType::kI64);
  std::vector<int64_t> y(4);
  std::memcpy(y.data(), out[0].data.data(), 32);
  EXPECT_EQ(y, (std::vector<int64_t>{1, -2, 3, 0}));

  ModelMaker old(13);
  old.input("x", {"4"});
  old.init_i64("like", {7});
  old.node("CastLike", {"x", "like"}, {"y"});
  old.output("y");
  EXPECT_TRUE(has(import_error(old.save(dir / "old.onnx")), "CastLike x1 (defined from opset 15)"));
}

// --- graph outputs no node computes -----------------------------------------

// A graph output that is a constant (Shape, folded at import), a graph
// input passed through (Identity) or another output's tensor is the
// output of a copy the device runs, named as the model names it.
TEST(OnnxNodeForms, OutputsThatAreConstantsInputsOrRepeatsAreCopied) {
  TempDir dir;
  ModelMaker mm(21);
  mm.input("x", {"2", "3"});
  mm.node("Shape", {"x"}, {"s"});
  mm.node("Identity", {"x"}, {"i"});
  mm.node("Relu", {"x"}, {"r"});
  mm.node("Identity", {"r"}, {"r2"});
  for (const char* o : {"s", "i", "r", "r2"}) mm.output(o);
  const fs::path path = mm.save(dir / "outs.onnx");
  const ampx::Graph g = import_onnx(path, {});
  ASSERT_EQ(g.outputs().size(), 4u);
  const char* names[] = {"s", "i", "r", "r2"};
  for (size_t k = 0; k < 4; ++k) {
    const ampx::Value& v = g.value(g.outputs()[k]);
    EXPECT_EQ(v.name, names[k]);
    EXPECT_NE(v.producer, ampx::kNone) << names[k] << " is a node's output";
  }
  EXPECT_EQ(g.value(g.inputs()[0]).name, "x");
  const std::vector<float> x = {-1, 2, -3, 4, 5, -6};
  const auto out = run_model(path, {f32_tensor("x", {2, 3}, x)});
  ASSERT_EQ(out.size(), 4u);
  std::vector<int64_t> s(2);
  ASSERT_EQ(out[0].data.size(), 16u);
  std::memcpy(s.data(), out[0].data.data(), 16);
  EXPECT_EQ(s, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(floats(out[1]), x);
  const std::vector<float> relu = {0, 2, 0, 4, 5, 0};
  EXPECT_EQ(floats(out[2]), relu);
  EXPECT_EQ(floats(out[3]), relu);
}

// Dropout 12+ with training_mode from a graph input whose value is given:
// false, or true with ratio 0, is the identity with an all-true mask;
// true with another ratio is random and refused.
TEST(OnnxNodeForms, DropoutWithAKnownTrainingModeInput) {
  TempDir dir;
  ModelMaker mm(13);
  mm.input("x", {"3"});
  mm.input("r", {}, onnx::TensorProto::FLOAT);
  mm.input("t", {}, onnx::TensorProto::BOOL);
  mm.node("Dropout", {"x", "r", "t"}, {"y", "mask"});
  mm.output("y");
  mm.output("mask");
  const fs::path path = mm.save(dir / "drop.onnx");
  const auto bool_tensor = [](bool b) {
    return ampx::HostTensor{"t", {ampx::DType::kBool, {}}, std::vector<std::byte>{std::byte{b}}};
  };
  const std::vector<float> x = {0.5f, -1, 2};
  for (const auto& [ratio, train] : {std::pair{0.5f, false}, std::pair{0.0f, true}}) {
    SCOPED_TRACE(std::to_string(ratio) + (train ? " training" : " inference"));
    const auto out = run_model(
        path, {f32_tensor("x", {3}, x), f32_tensor("r", {}, {ratio}), bool_tensor(train)});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(floats(out[0]), x);
    ASSERT_EQ(out[1].type, (ampx::TensorType{ampx::DType::kBool, {3}}));
    EXPECT_EQ(out[1].data, std::vector<std::byte>(3, std::byte{1}));
  }
  ampx::onnx_io::ImportOptions io;
  io.input_values["r"] = f32_tensor("r", {}, {0.5f});
  io.input_values["t"] = bool_tensor(true);
  EXPECT_TRUE(has(import_error(path, io), "training_mode=true is not supported with ratio 0.5"));
}

// --- empty inputs ------------------------------------------------------------

// A graph input with a 0 dimension has one value, the empty tensor: it
// stays an input (fed, unused) and the nodes read it as that constant. An
// empty `axes` means no axes: ReduceSum reduces everything, or passes X
// through with noop_with_empty_axes=1; CastLike reads only its type.
TEST(OnnxNodeForms, EmptyInputsAreConstants) {
  TempDir dir;
  const ampx::HostTensor x = f32_tensor("x", {2, 2}, {1, 2, 3, 4.5f});
  const ampx::HostTensor axes{"axes", {ampx::DType::kI64, {0}}, {}};
  for (int64_t noop : {0, 1}) {
    SCOPED_TRACE(noop);
    ModelMaker mm(18);
    mm.input("x", {"2", "2"});
    mm.input("axes", {"0"}, onnx::TensorProto::INT64);
    ModelMaker::attr_int(mm.node("ReduceSum", {"x", "axes"}, {"y"}), "noop_with_empty_axes", noop);
    mm.output("y");
    const fs::path path = mm.save(dir / "rs.onnx");
    const ampx::Graph g = import_onnx(path, {});
    ASSERT_EQ(g.inputs().size(), 2u);
    EXPECT_EQ(g.value(g.inputs()[1]).type.shape, (ampx::Shape{0}));
    const auto out = run_model(path, {x, axes});
    ASSERT_EQ(out.size(), 1u);
    if (noop == 0) {
      EXPECT_EQ(out[0].type.shape, (ampx::Shape{1, 1}));
      EXPECT_EQ(floats(out[0]), std::vector<float>{10.5f});
    } else {
      EXPECT_EQ(floats(out[0]), floats(x));
    }
  }
  ModelMaker cl(21);
  cl.input("x", {"2", "2"});
  cl.input("like", {"0"}, onnx::TensorProto::INT64);
  cl.node("CastLike", {"x", "like"}, {"y"});
  cl.output("y");
  const auto out = run_model(cl.save(dir / "cl.onnx"),
                             {x, ampx::HostTensor{"like", {ampx::DType::kI64, {0}}, {}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, (ampx::TensorType{ampx::DType::kI64, {2, 2}}));
  std::vector<int64_t> y(4);
  std::memcpy(y.data(), out[0].data.data(), 32);
  EXPECT_EQ(y, (std::vector<int64_t>{1, 2, 3, 4}));
  ModelMaker neg(18);
  neg.input("x", {"2", "n"});
  neg.node("Relu", {"x"}, {"y"});
  neg.output("y");
  ampx::onnx_io::ImportOptions io;
  io.input_shapes["x"] = {2, -1};
  EXPECT_TRUE(has(import_error(neg.save(dir / "neg.onnx"), io), "negative dimension"));
}

}  // namespace
