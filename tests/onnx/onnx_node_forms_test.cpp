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

ampx::HostTensor f32_tensor(const std::string& name, ampx::Shape shape, std::vector<float> v) {
  ampx::HostTensor t{
      name, {ampx::DType::kF32, std::move(shape)}, std::vector<std::byte>(v.size() * 4)};
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), v.size() * 4);
  return t;
}

std::vector<float> floats(const ampx::HostTensor& t) {
  std::vector<float> v(t.data.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

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

}  // namespace
