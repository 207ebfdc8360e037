// ONNX forms the importer once refused and now takes as compositions of
// op-set ops (issue 40): numpy's 1-D MatMul, ... Each runs on cpu_ref:0
// against values written out here.
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

template <typename T>
ampx::HostTensor tensor(const std::string& name, ampx::DType dt, ampx::Shape shape,
                        std::vector<T> v) {
  ampx::HostTensor t{name, {dt, std::move(shape)}, std::vector<std::byte>(v.size() * sizeof(T))};
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), v.size() * sizeof(T));
  return t;
}

template <typename T>
std::vector<T> values(const ampx::HostTensor& t) {
  std::vector<T> v(t.data.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

std::vector<ampx::HostTensor> run_model(const fs::path& path,
                                        const std::vector<ampx::HostTensor>& inputs) {
  ampx::Session session{{.devices = "cpu_ref:0", .use_costs = false, .use_tuned = false}};
  ampx::ShapeCachedModel model = session.load_shape_cached(path.string(), {});
  return model.run(inputs);
}

// MatMul with a 1-D operand is numpy's: A [K] a row, B [K] a column, the
// added dimension dropped from the result.
TEST(OnnxNumpyForms, MatMulWithOneDimensionalOperands) {
  TempDir dir;
  struct Case {
    std::vector<std::string> a, b;
    ampx::Shape as, bs, want_shape;
    std::vector<float> want;
  };
  // A holds 1, 2, ...; B holds 1, 2, ... too.
  const std::vector<Case> cases{
      {{"3"}, {"3"}, {3}, {3}, {}, {14}},
      {{"2"}, {"2", "2", "1"}, {2}, {2, 2, 1}, {2, 1}, {5, 11}},
      {{"1", "2", "3"}, {"3"}, {1, 2, 3}, {3}, {1, 2}, {14, 32}},
  };
  for (const Case& c : cases) {
    ModelMaker mm(13);
    mm.input("a", c.a);
    mm.input("b", c.b);
    mm.node("MatMul", {"a", "b"}, {"y"});
    mm.output("y");
    const auto iota1 = [](const ampx::Shape& s) {
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      std::vector<float> v(static_cast<size_t>(n));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
      return v;
    };
    const auto out = run_model(mm.save(dir / "mm.onnx"), {f32_tensor("a", c.as, iota1(c.as)),
                                                          f32_tensor("b", c.bs, iota1(c.bs))});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type.shape, c.want_shape);
    EXPECT_EQ(floats(out[0]), c.want);
  }
}

// Integer Clip (opset 12+) clamps exactly, with either bound absent, and
// min > max gives max.
TEST(OnnxNumpyForms, IntegerClip) {
  TempDir dir;
  struct Case {
    std::vector<std::string> ins;
    std::vector<int8_t> want;
  };
  const std::vector<Case> cases{
      {{"x", "lo", "hi"}, {-5, -5, 0, 7, 7}},
      {{"x", "lo"}, {-5, -5, 0, 100, 127}},
      {{"x", "", "hi"}, {-128, -6, 0, 7, 7}},
      {{"x", "hi", "lo"}, {-5, -5, -5, -5, -5}},  // min 7 > max -5
  };
  for (const Case& c : cases) {
    ModelMaker mm(13);
    mm.input("x", {"5"}, onnx::TensorProto::INT8);
    for (const auto& [name, v] : {std::pair{"lo", -5}, std::pair{"hi", 7}}) {
      auto* t = mm.g->add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::INT8);
      t->add_int32_data(v);
    }
    mm.node("Clip", c.ins, {"y"});
    mm.output("y");
    const auto out =
        run_model(mm.save(dir / "clip.onnx"),
                  {tensor<int8_t>("x", ampx::DType::kI8, {5}, {-128, -6, 0, 100, 127})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(values<int8_t>(out[0]), c.want);
  }
  ModelMaker old(11);
  old.input("x", {"5"}, onnx::TensorProto::INT8);
  old.node("Clip", {"x"}, {"y"});
  old.output("y");
  EXPECT_TRUE(
      has(import_error(old.save(dir / "c11.onnx")), "Clip of integers is defined from opset 12"));
}

// Integer Pow (12+) is ONNX Runtime's std::pow in double converted to the
// base's type: a float exponent is not truncated first, a negative one
// truncates the result toward 0, and a result past the type saturates
// instead of being undefined.
TEST(OnnxNumpyForms, IntegerPow) {
  TempDir dir;
  {
    ModelMaker mm(15);
    mm.input("x", {"6"}, onnx::TensorProto::INT32);
    mm.input("e", {"6"}, onnx::TensorProto::INT32);
    mm.node("Pow", {"x", "e"}, {"y"});
    mm.output("y");
    const auto out =
        run_model(mm.save(dir / "pii.onnx"),
                  {tensor<int32_t>("x", ampx::DType::kI32, {6}, {3, -2, 2, -1, 10, -3}),
                   tensor<int32_t>("e", ampx::DType::kI32, {6}, {4, 3, -1, -3, 12, 31})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(values<int32_t>(out[0]),
              (std::vector<int32_t>{81, -8, 0, -1, std::numeric_limits<int32_t>::max(),
                                    std::numeric_limits<int32_t>::min()}));
  }
  {
    ModelMaker mm(15);
    mm.input("x", {"3"}, onnx::TensorProto::INT64);
    mm.input("e", {"3"});
    mm.node("Pow", {"x", "e"}, {"y"});
    mm.output("y");
    const auto out = run_model(mm.save(dir / "pif.onnx"),
                               {tensor<int64_t>("x", ampx::DType::kI64, {3}, {4, 9, 1 << 20}),
                                f32_tensor("e", {3}, {0.5f, 1.5f, 2.0f})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{2, 27, int64_t{1} << 40}));
  }
}

}  // namespace
