// ONNX's If at import (frontend/src/onnx/onnx_control_flow.cpp): a
// condition that folds takes its branch in place of the node; a run-time
// condition, a branch that reads a value nobody made, and an unsupported op
// inside a branch are one-line errors.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <ampx/ir/op_type.hpp>
#include <ampx/onnx/onnx_import.hpp>

#include <string>
#include <vector>

#include "onnx_model_maker.hpp"

namespace {

using namespace ampx_onnx_test;

onnx::GraphProto* add_branch(onnx::NodeProto* n, const char* name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* g = a->mutable_g();
  g->set_name(name);
  return g;
}

// A branch of one node reading `in` (an outer value), with one initializer
// of its own, writing `out`.
void one_node_branch(onnx::GraphProto* g, const std::string& op, const std::string& in,
                     const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(g->name() + "/" + op);
  n->add_input(in);
  n->add_input(g->name() + "_k");
  n->add_output(out);
  auto* t = g->add_initializer();
  t->set_name(g->name() + "_k");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(op == "Add" ? 1.0f : 3.0f);
  g->add_output()->set_name(out);
}

// x [2, 3]: If(Shape(x)[0] == `dim`) then x + 1 else x * 3, then Relu.
ModelMaker shape_if(int64_t dim, const std::string& then_in = "x") {
  ModelMaker mm;
  mm.input("x", {"2", "3"});
  mm.init_i64("zero", {0}, true);
  mm.init_i64("dim", {dim}, true);
  mm.node("Shape", {"x"}, {"s"});
  mm.node("Gather", {"s", "zero"}, {"d0"});
  mm.node("Equal", {"d0", "dim"}, {"c"});
  auto* n = mm.node("If", {"c"}, {"r"}, "/If");
  one_node_branch(add_branch(n, "then_branch"), "Add", then_in, "then_out");
  one_node_branch(add_branch(n, "else_branch"), "Mul", "x", "else_out");
  mm.node("Relu", {"r"}, {"y"}, "/Relu");
  mm.output("y");
  return mm;
}

std::vector<std::string> op_names(const ampx::Graph& g) {
  std::vector<std::string> ops;
  for (size_t i = 0; i < g.num_nodes(); ++i)
    ops.emplace_back(ampx::op_name(g.node(static_cast<ampx::NodeId>(i)).op));
  return ops;
}

TEST(OnnxIf, AFoldedConditionTakesItsBranchInPlaceOfTheNode) {
  TempDir dir;
  const ampx::Graph then_g = import_onnx(shape_if(2).save(dir / "then.onnx"));
  EXPECT_EQ(op_names(then_g), (std::vector<std::string>{"Add", "Relu"}));
  const ampx::Graph else_g = import_onnx(shape_if(5).save(dir / "else.onnx"));
  EXPECT_EQ(op_names(else_g), (std::vector<std::string>{"Mul", "Relu"}));
  EXPECT_EQ(else_g.value(else_g.outputs()[0]).type.shape, (ampx::Shape{2, 3}));
}

TEST(OnnxIf, ARunTimeConditionIsOneLineNamingIt) {
  TempDir dir;
  ModelMaker mm;
  mm.input("x", {"2", "3"});
  mm.input("c", {}, onnx::TensorProto::BOOL);
  auto* n = mm.node("If", {"c"}, {"y"}, "/If");
  one_node_branch(add_branch(n, "then_branch"), "Add", "x", "a");
  one_node_branch(add_branch(n, "else_branch"), "Mul", "x", "b");
  mm.output("y");
  const std::string msg = import_error(mm.save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "node '/If' (If): the condition 'c' is computed at run time")) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(OnnxIf, ABranchReadingAMissingOuterValueIsRefusedNamingTheNode) {
  TempDir dir;
  const std::string msg = import_error(shape_if(2, "nosuch").save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "then_branch/Add")) << msg;
  EXPECT_TRUE(has(msg, "'nosuch' is not produced")) << msg;
}

TEST(OnnxIf, UnsupportedOpsInsideBranchesAreListed) {
  TempDir dir;
  ModelMaker mm = shape_if(2);
  auto* n = mm.g->mutable_node(3);                 // the If
  auto* g = n->mutable_attribute(1)->mutable_g();  // else_branch
  auto* bad = g->add_node();
  bad->set_op_type("NonZero");
  bad->add_input("x");
  bad->add_output("nz");
  const std::string msg = import_error(mm.save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "NonZero x1")) << msg;
}

}  // namespace
