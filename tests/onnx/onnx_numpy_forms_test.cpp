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
      {{"2"}, {"2", "2", "3"}, {2}, {2, 2, 3}, {2, 3}, {9, 12, 15, 27, 30, 33}},
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
    mm.input("x", {"4"}, onnx::TensorProto::INT64);
    mm.input("e", {"4"});
    mm.node("Pow", {"x", "e"}, {"y"});
    mm.output("y");
    const auto out = run_model(mm.save(dir / "pif.onnx"),
                               {tensor<int64_t>("x", ampx::DType::kI64, {4}, {4, 9, 1 << 20, 3}),
                                f32_tensor("e", {4}, {0.5f, 1.5f, 2.0f, 3.0f})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{2, 27, int64_t{1} << 40, 27}));
  }
  {
    // An integer exponent known at import, >= 0: exact by squaring at any
    // size (3^33 is past f32's and 3^41 past int64's range: it wraps, as
    // numpy's power does).
    ModelMaker mm(15);
    mm.input("x", {"3"}, onnx::TensorProto::INT64);
    mm.init_i64("e", {33, 41, 0});
    mm.node("Pow", {"x", "e"}, {"y"});
    mm.output("y");
    const auto out = run_model(mm.save(dir / "pk.onnx"),
                               {tensor<int64_t>("x", ampx::DType::kI64, {3}, {3, 3, -7})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(values<int64_t>(out[0]),
              (std::vector<int64_t>{5559060566555523, -420491770248316829, 1}));
  }
}

// A reduction over an empty axis is its identity: the lowest/highest value
// of an integer type for max/min, -inf for a float max, 0 for a sum (also
// of f64, which the reference ReduceSum does not fold).
TEST(OnnxNumpyForms, ReductionsOverAnEmptyAxisAreTheirIdentity) {
  TempDir dir;
  struct Case {
    const char* op;
    int elem;
    double want;
  };
  for (const Case& c : {Case{"ReduceMax", onnx::TensorProto::INT32, -2147483648.0},
                        Case{"ReduceMin", onnx::TensorProto::INT32, 2147483647.0},
                        Case{"ReduceMax", onnx::TensorProto::FLOAT, -INFINITY},
                        Case{"ReduceSum", onnx::TensorProto::DOUBLE, 0.0}}) {
    ModelMaker mm(20);
    mm.input("x", {"2", "0", "3"}, c.elem);
    mm.init_i64("axes", {1});
    auto* r = mm.node(c.op, {"x", "axes"}, {"y"});
    ModelMaker::attr_int(r, "keepdims", 0);
    mm.output("y");
    const ampx::DType dt = c.elem == onnx::TensorProto::INT32   ? ampx::DType::kI32
                           : c.elem == onnx::TensorProto::FLOAT ? ampx::DType::kF32
                                                                : ampx::DType::kF64;
    const auto out =
        run_model(mm.save(dir / "r.onnx"), {ampx::HostTensor{"x", {dt, {2, 0, 3}}, {}}});
    ASSERT_EQ(out.size(), 1u);
    const ampx::HostTensor& y = out[0];
    EXPECT_EQ(y.type.shape, (ampx::Shape{2, 3}));
    double got = 0;
    if (dt == ampx::DType::kI32) got = values<int32_t>(y)[5];
    if (dt == ampx::DType::kF32) got = values<float>(y)[5];
    if (dt == ampx::DType::kF64) got = values<double>(y)[5];
    EXPECT_EQ(got, c.want) << c.op;
  }
}

// Reshape allowzero=1: a 0 in the shape is a dimension of 0 (X must be
// empty), and -1 beside it is invalid.
TEST(OnnxNumpyForms, ReshapeAllowzeroToAnEmptyShape) {
  TempDir dir;
  for (bool with_minus_one : {false, true}) {
    ModelMaker mm(14);
    mm.input("x", {"0", "3", "4"});
    mm.init_i64("shape",
                with_minus_one ? std::vector<int64_t>{3, -1, 0} : std::vector<int64_t>{3, 4, 0});
    auto* r = mm.node("Reshape", {"x", "shape"}, {"y"});
    ModelMaker::attr_int(r, "allowzero", 1);
    mm.output("y");
    const fs::path path = mm.save(dir / "r.onnx");
    if (with_minus_one) {
      EXPECT_TRUE(has(import_error(path), "both 0 and -1")) << import_error(path);
      continue;
    }
    const ampx::Graph g = import_onnx(path);
    EXPECT_EQ(g.value(g.outputs()[0]).type.shape, (ampx::Shape{3, 4, 0}));
  }
}

// Range 27 of f16: start + i * delta in f32 (stash_type's default), then
// rounded to f16; before 27 Range has no f16.
TEST(OnnxNumpyForms, RangeOfFloat16FromOpset27) {
  TempDir dir;
  for (int64_t opset : {26, 27}) {
    ModelMaker mm(opset);
    for (const auto& [name, v] : {std::pair{"s", 0x3C00}, std::pair{"l", 0x4500},  // 1, 5
                                  std::pair{"d", 0x3E00}}) {                       // 1.5
      auto* t = mm.g->add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::FLOAT16);
      t->add_int32_data(v);
    }
    mm.node("Range", {"s", "l", "d"}, {"y"});
    mm.output("y");
    const fs::path path = mm.save(dir / "r.onnx");
    if (opset == 26) {
      EXPECT_TRUE(has(import_error(path), "Range of f16 is not supported before opset 27"));
      continue;
    }
    const auto out = run_model(path, {});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type.dtype, ampx::DType::kF16);
    EXPECT_EQ(values<uint16_t>(out[0]),
              (std::vector<uint16_t>{0x3C00, 0x4100, 0x4400}));  // 1, 2.5, 4
  }
}

// Pad 'wrap' (19+) repeats the axis circularly, as often as the pads need
// (numpy's np.pad mode='wrap'); a negative pad crops first.
TEST(OnnxNumpyForms, WrapPad) {
  TempDir dir;
  struct Case {
    std::vector<int64_t> pads;
    ampx::Shape want_shape;
    std::vector<float> want;
  };
  for (const Case& c : {Case{{0, 4, 0, 2}, {1, 9}, {2, 0, 1, 2, 0, 1, 2, 0, 1}},
                        Case{{0, -1, 0, 2}, {1, 4}, {1, 2, 1, 2}},
                        Case{{1, 0, 0, 0}, {2, 3}, {0, 1, 2, 0, 1, 2}}}) {
    ModelMaker mm(19);
    mm.input("x", {"1", "3"});
    mm.init_i64("pads", c.pads);
    ModelMaker::attr_string(mm.node("Pad", {"x", "pads"}, {"y"}), "mode", "wrap");
    mm.output("y");
    const auto out = run_model(mm.save(dir / "p.onnx"), {f32_tensor("x", {1, 3}, {0, 1, 2})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type.shape, c.want_shape);
    EXPECT_EQ(floats(out[0]), c.want);
  }
  // An untrusted model's huge pads: one line, before allocating anything.
  ModelMaker big(19);
  big.input("x", {"1", "3"});
  big.init_i64("pads", {0, int64_t{1} << 40, 0, 0});
  ModelMaker::attr_string(big.node("Pad", {"x", "pads"}, {"y"}), "mode", "wrap");
  big.output("y");
  const std::string msg = import_error(big.save(dir / "big.onnx"));
  EXPECT_TRUE(has(msg, "wrap indices")) << msg;
}

// BatchNormalization training_mode=1 (14+): normalised with the batch's
// mean and population variance per channel; the running statistics mix the
// inputs' with the batch's by momentum.
TEST(OnnxNumpyForms, BatchNormTrainingMode) {
  TempDir dir;
  ModelMaker mm(15);
  mm.input("x", {"2", "1", "2"});
  mm.init_f32_values("s", {2});
  mm.init_f32_values("b", {1});
  mm.init_f32_values("m", {10});
  mm.init_f32_values("v", {4});
  auto* bn = mm.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "rm", "rv"});
  ModelMaker::attr_int(bn, "training_mode", 1);
  ModelMaker::attr_float(bn, "epsilon", 0);
  ModelMaker::attr_float(bn, "momentum", 0.75f);
  mm.output("y");
  mm.output("rm");
  mm.output("rv");
  // The batch: 1, 3, 5, 7 (mean 4, variance 5).
  const auto out = run_model(mm.save(dir / "bn.onnx"), {f32_tensor("x", {2, 1, 2}, {1, 3, 5, 7})});
  ASSERT_EQ(out.size(), 3u);
  const float r5 = std::sqrt(5.0f);
  const auto y = floats(out[0]);
  const std::vector<float> want{-6 / r5 + 1, -2 / r5 + 1, 2 / r5 + 1, 6 / r5 + 1};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], want[i], 1e-6) << i;
  EXPECT_NEAR(floats(out[1])[0], 10 * 0.75f + 4 * 0.25f, 1e-6);
  EXPECT_NEAR(floats(out[2])[0], 4 * 0.75f + 5 * 0.25f, 1e-6);
}

// ReverseSequence (10+): per batch, the first sequence_lens[b] time steps
// reversed, the rest kept; either axis order; a length past T is an error.
TEST(OnnxNumpyForms, ReverseSequence) {
  TempDir dir;
  for (int64_t batch_axis : {0, 1}) {
    ModelMaker mm(10);
    mm.input("x", {"3", "3"});
    mm.init_i64("lens", {0, 2, 3});
    auto* r = mm.node("ReverseSequence", {"x", "lens"}, {"y"});
    ModelMaker::attr_int(r, "batch_axis", batch_axis);
    ModelMaker::attr_int(r, "time_axis", 1 - batch_axis);
    mm.output("y");
    const auto out =
        run_model(mm.save(dir / "rs.onnx"), {f32_tensor("x", {3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})});
    ASSERT_EQ(out.size(), 1u);
    const std::vector<float> want = batch_axis == 0 ? std::vector<float>{0, 1, 2, 4, 3, 5, 8, 7, 6}
                                                    : std::vector<float>{0, 4, 8, 3, 1, 5, 6, 7, 2};
    EXPECT_EQ(floats(out[0]), want);
  }
  ModelMaker bad(10);
  bad.input("x", {"2", "2"});
  bad.init_i64("lens", {3, 1});
  bad.node("ReverseSequence", {"x", "lens"}, {"y"});
  bad.output("y");
  EXPECT_TRUE(has(import_error(bad.save(dir / "bad.onnx")), "value 3 is outside [0, 2]"));
}

// TensorScatter (24+): the update's rows written along `axis` at each
// batch's write index, wrapping in circular mode; linear must fit.
TEST(OnnxNumpyForms, TensorScatter) {
  TempDir dir;
  for (const char* mode : {"circular", "linear"}) {
    ModelMaker mm(24);
    mm.input("past", {"2", "3", "1"});
    mm.input("upd", {"2", "2", "1"});
    mm.init_i64("at", {2, 0});
    auto* t = mm.node("TensorScatter", {"past", "upd", "at"}, {"y"});
    ModelMaker::attr_string(t, "mode", mode);
    ModelMaker::attr_int(t, "axis", 1);
    mm.output("y");
    const fs::path path = mm.save(dir / "ts.onnx");
    if (std::string(mode) == "linear") {
      EXPECT_TRUE(has(import_error(path), "does not fit")) << import_error(path);
      continue;
    }
    const auto out = run_model(path, {f32_tensor("past", {2, 3, 1}, {0, 1, 2, 3, 4, 5}),
                                      f32_tensor("upd", {2, 2, 1}, {10, 11, 12, 13})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(floats(out[0]), (std::vector<float>{11, 1, 10, 12, 13, 5}));
  }
}

// Scan 8 (the opset-8 form): sequence_lens first, a batch axis 0 on every
// input and output that the body does not see, `directions`.
TEST(OnnxNumpyForms, Scan8RunsEachBatchElement) {
  TempDir dir;
  ModelMaker mm(8);
  mm.input("init", {"2", "1"});
  mm.input("x", {"2", "3", "1"});
  mm.init_i64("lens", {3, 3});
  auto* scan = mm.node("Scan", {"lens", "init", "x"}, {"final", "ys"});
  ModelMaker::attr_int(scan, "num_scan_inputs", 1);
  ModelMaker::attr_ints(scan, "directions", {1});
  auto* a = scan->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = a->mutable_g();
  body->set_name("body");
  for (const char* in : {"s", "xi"}) {
    auto* v = body->add_input();
    v->set_name(in);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
  }
  auto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("s");
  add->add_input("xi");
  add->add_output("s2");
  auto* id = body->add_node();
  id->set_op_type("Identity");
  id->add_input("s2");
  id->add_output("y");
  body->add_output()->set_name("s2");
  body->add_output()->set_name("y");
  mm.output("final");
  mm.output("ys");
  const auto out = run_model(
      mm.save(dir / "scan8.onnx"),
      {f32_tensor("init", {2, 1}, {0, 100}), f32_tensor("x", {2, 3, 1}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(floats(out[0]), (std::vector<float>{6, 115}));
  EXPECT_EQ(out[1].type.shape, (ampx::Shape{2, 3, 1}));
  // Scanned backwards: 3, 3+2, 3+2+1.
  EXPECT_EQ(floats(out[1]), (std::vector<float>{3, 5, 6, 106, 111, 115}));
}

// Einsum with a label repeated inside one input: its diagonal (numpy's
// einsum), also apart ('iji->j') and summed ('ii->', the trace).
TEST(OnnxNumpyForms, EinsumDiagonals) {
  TempDir dir;
  struct Case {
    const char* eq;
    std::vector<std::string> dims;
    ampx::Shape shape;
    std::vector<float> want;
  };
  // x holds 0, 1, 2, ... in row-major order.
  const std::vector<Case> cases{
      {"...ii->...i", {"2", "2", "2"}, {2, 2, 2}, {0, 3, 4, 7}},
      {"iji->j", {"2", "3", "2"}, {2, 3, 2}, {0 + 7, 2 + 9, 4 + 11}},
      {"ii->", {"3", "3"}, {3, 3}, {0 + 4 + 8}},
  };
  for (const Case& c : cases) {
    ModelMaker mm(12);
    mm.input("x", c.dims);
    ModelMaker::attr_string(mm.node("Einsum", {"x"}, {"y"}), "equation", c.eq);
    mm.output("y");
    int64_t count = 1;
    for (int64_t d : c.shape) count *= d;
    std::vector<float> x(static_cast<size_t>(count));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    const auto out = run_model(mm.save(dir / "e.onnx"), {f32_tensor("x", c.shape, x)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(floats(out[0]), c.want) << c.eq;
  }
}

}  // namespace
