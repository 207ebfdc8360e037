// Graph IR: builder typing, verifier diagnostics, topological order.
#include <ampx/ir/builder.hpp>
#include <ampx/ir/shape_inference.hpp>
#include <ampx/ir/verifier.hpp>
#include <ampx/models/builtin_models.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace ampx;
using ::testing::HasSubstr;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Builder, InfersConvOutputShape) {
  GraphBuilder b("g");
  auto x = b.input("x", DType::kF32, {2, 3, 17, 13});
  auto y = b.conv2d("c", x, 8, 3, 2, 1);
  EXPECT_EQ(b.type(y).shape, (Shape{2, 8, 9, 7}));
  EXPECT_EQ(b.type(y).dtype, DType::kF32);
}

TEST(Builder, RejectsShapeMismatchNamingTheNode) {
  GraphBuilder b("g");
  auto a = b.input("a", DType::kF32, {4, 5});
  auto c = b.input("c", DType::kF32, {6, 7});
  EXPECT_THAT(error_of([&] {
                b.add(OpType::kMatMul, "mm", {a, c});
              }),
              HasSubstr("node 'mm' (MatMul): inner dimensions differ"));
}

TEST(Builder, RejectsBadAttribute) {
  GraphBuilder b("g");
  auto x = b.input("x", DType::kF32, {1, 4});
  EXPECT_THAT(error_of([&] {
                b.add(OpType::kSoftmax, "sm", {x}, {{"axis", int64_t{5}}});
              }),
              HasSubstr("node 'sm' (Softmax): axis 5 is out of range for rank 2"));
  EXPECT_THAT(error_of([&] {
                b.add(OpType::kSoftmax, "sm2", {x}, {{"axis", 1.5}});
              }),
              HasSubstr("attribute 'axis' is FLOAT, expected INT"));
  EXPECT_THAT(error_of([&] {
                b.add(OpType::kRelu, "r", {x}, {{"alpha", 1.0}});
              }),
              HasSubstr("node 'r' (Relu): unknown attribute 'alpha'"));
  EXPECT_THAT(error_of([&] { b.add(OpType::kReshape, "rs", {x}); }),
              HasSubstr("missing required attribute 'shape'"));
}

TEST(Builder, RejectsUnknownOpByName) {
  GraphBuilder b("g");
  auto x = b.input("x", DType::kF32, {3});
  EXPECT_THAT(error_of([&] { b.add("Frobnicate", "f", {x}); }),
              HasSubstr("node 'f': unknown op 'Frobnicate'"));
  EXPECT_EQ(b.type(b.add("Relu", "r", {x})).shape, (Shape{3}));
}

TEST(Builder, RejectsDuplicateNodeNames) {
  GraphBuilder b("g");
  auto x = b.input("x", DType::kF32, {3});
  b.add(OpType::kRelu, "r", {x});
  EXPECT_THAT(error_of([&] { b.add(OpType::kRelu, "r", {x}); }), HasSubstr("duplicate node name"));
}

TEST(Builder, RejectsMixedFloatDtypes) {
  GraphBuilder b("g");
  auto x = b.input("x", DType::kF32, {3});
  auto y = b.input("y", DType::kF16, {3});
  EXPECT_THAT(error_of([&] {
                b.add(OpType::kAdd, "add", {x, y});
              }),
              HasSubstr("input 1 has dtype f16 but input 0 has f32"));
}

TEST(ShapeInference, BroadcastAndReductions) {
  EXPECT_EQ(broadcast_shapes({4, 1, 3}, {5, 1}), (Shape{4, 5, 3}));
  EXPECT_FALSE(broadcast_shapes({4, 2}, {3}).has_value());
  const std::vector<TensorType> in{{DType::kF32, {2, 3, 4}}};
  auto out =
      infer_output_types(OpType::kReduceMean, in,
                         {{"axes", std::vector<int64_t>{-1, 0}}, {"keepdims", int64_t{0}}}, "r");
  EXPECT_EQ(out[0].shape, (Shape{3}));
  out = infer_output_types(OpType::kSlice, in,
                           {{"starts", std::vector<int64_t>{-1}},
                            {"ends", std::vector<int64_t>{-100}},
                            {"axes", std::vector<int64_t>{2}},
                            {"steps", std::vector<int64_t>{-2}}},
                           "s");
  EXPECT_EQ(out[0].shape, (Shape{2, 3, 2}));
  out = infer_output_types(OpType::kReshape, in, {{"shape", std::vector<int64_t>{0, -1}}}, "rs");
  EXPECT_EQ(out[0].shape, (Shape{2, 12}));
  const std::vector<TensorType> g{{DType::kF16, {5, 6}}, {DType::kI64, {2, 3}}};
  out = infer_output_types(OpType::kGather, g, {{"axis", int64_t{1}}}, "ga");
  EXPECT_EQ(out[0], (TensorType{DType::kF16, {5, 2, 3}}));
  const std::vector<TensorType> pool{{DType::kF32, {1, 1, 5, 5}}};
  out = infer_output_types(OpType::kMaxPool, pool,
                           {{"kernel_shape", std::vector<int64_t>{2, 2}},
                            {"strides", std::vector<int64_t>{2, 2}},
                            {"ceil_mode", int64_t{1}}},
                           "mp");
  EXPECT_EQ(out[0].shape, (Shape{1, 1, 3, 3}));
}

TEST(Verifier, ReportsEveryProblemWithNames) {
  Graph g;
  g.name = "broken";
  const ValueId x = g.add_input("x", {DType::kF32, {2, 3}});
  // Declared output type disagrees with the op.
  g.add_node("relu", OpType::kRelu, {x}, {{DType::kF32, {3, 2}}});
  // Reads a value nothing defines.
  const ValueId dangling = g.add_constant("w", {DType::kF32, {2}}, std::vector<std::byte>(4));
  g.add_node("add", OpType::kAdd, {x, dangling}, {{DType::kF32, {2, 3}}});
  // Unknown value id.
  g.add_node("bad_ref", OpType::kRelu, {ValueId{99}}, {{DType::kF32, {2, 3}}});
  g.add_output(x);
  const auto problems = verify_graph(g);
  ASSERT_GE(problems.size(), 4u);
  const std::string all = error_of([&] { verify_graph_or_throw(g); });
  EXPECT_THAT(all, HasSubstr("invalid graph 'broken'"));
  EXPECT_THAT(
      all,
      HasSubstr("node 'relu' (Relu): output 'relu' declared f32[3x2] but the op yields f32[2x3]"));
  EXPECT_THAT(all, HasSubstr("node 'add' (Add): shapes [2x3] and [2] do not broadcast"));
  EXPECT_THAT(all, HasSubstr("constant 'w': has 4 bytes"));
  EXPECT_THAT(all, HasSubstr("node 'bad_ref' (Relu): input refers to unknown value #99"));
  EXPECT_EQ(all.find('\n'), std::string::npos) << "one line";
}

TEST(Verifier, DetectsCycles) {
  Graph g;
  const ValueId x = g.add_input("x", {DType::kF32, {2}});
  // a reads b's output, b reads a's output.
  g.add_node("a", OpType::kAdd, {x, ValueId{2}}, {{DType::kF32, {2}}});
  g.add_node("b", OpType::kRelu, {ValueId{1}}, {{DType::kF32, {2}}});
  g.add_output(ValueId{2});
  EXPECT_THAT(error_of([&] { verify_graph_or_throw(g); }), HasSubstr("part of a cycle"));
}

TEST(Graph, TopologicalOrderPutsProducersFirst) {
  Graph g;
  const ValueId x = g.add_input("x", {DType::kF32, {2}});
  // Inserted out of order: consumer first.
  g.add_node("second", OpType::kRelu, {ValueId{2}}, {{DType::kF32, {2}}});
  g.add_node("first", OpType::kSigmoid, {x}, {{DType::kF32, {2}}});
  g.add_output(ValueId{1});
  EXPECT_TRUE(verify_graph(g).empty());
  EXPECT_EQ(g.topological_order(), (std::vector<NodeId>{1, 0}));
}

TEST(BuiltinModels, AllVerifyAndHaveTheDocumentedShapes) {
  for (auto name : builtin_model_names()) {
    const Graph g = make_builtin_model(name);
    EXPECT_TRUE(verify_graph(g).empty()) << name;
  }
  const Graph cnn = make_builtin_model("cnn");
  EXPECT_EQ(cnn.value(cnn.inputs()[0]).type.shape[1], 3);
  EXPECT_EQ(cnn.value(cnn.outputs()[0]).type.shape.back(), 10);
  const Graph enc = make_builtin_model("encoder");
  EXPECT_EQ(enc.value(enc.outputs()[0]).type.shape, (Shape{1, 128, 256}));
  EXPECT_THAT(error_of([] { make_builtin_model("resnet"); }),
              HasSubstr("unknown built-in model 'resnet' (known: cnn, mlp, encoder, digits-cnn)"));
}

}  // namespace
