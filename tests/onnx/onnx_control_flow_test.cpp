// ONNX's If at import (frontend/onnx/src/onnx_control_flow.cpp): a
// condition that folds takes its branch in place of the node; a run-time
// condition, a branch that reads a value nobody made, and an unsupported op
// inside a branch are one-line errors.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <ampx/ir/op_type.hpp>
#include <ampx/onnx/onnx_import.hpp>

#include <algorithm>
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

// x [2, 3], c a bool input: If(c) then `then_op`(x, k) else x * 3.
ModelMaker runtime_if(const std::string& then_op = "Add") {
  ModelMaker mm;
  mm.input("x", {"2", "3"});
  mm.input("c", {}, onnx::TensorProto::BOOL);
  auto* n = mm.node("If", {"c"}, {"y"}, "/If");
  one_node_branch(add_branch(n, "then_branch"), then_op, "x", "a");
  one_node_branch(add_branch(n, "else_branch"), "Mul", "x", "b");
  mm.output("y");
  return mm;
}

TEST(OnnxIf, ARunTimeConditionRunsBothBranchesAndSelects) {
  TempDir dir;
  const ampx::Graph g = import_onnx(runtime_if().save(dir / "m.onnx"));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"Add", "Mul", "Where"}));
}

TEST(OnnxIf, BranchesOfDifferentTypesAtRunTimeAreOneLine) {
  TempDir dir;
  ModelMaker mm = runtime_if();
  // The then branch's output becomes [6]: Reshape x.
  auto* then_g = mm.g->mutable_node(0)->mutable_attribute(0)->mutable_g();
  auto* r = then_g->add_node();
  r->set_op_type("Reshape");
  r->set_name("then/Reshape");
  r->add_input("a");
  r->add_input("flat");
  r->add_output("a_flat");
  auto* t = then_g->add_initializer();
  t->set_name("flat");
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(1);
  t->add_int64_data(6);
  then_g->mutable_output(0)->set_name("a_flat");
  const std::string msg = import_error(mm.save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg,
                  "node '/If' (If): the condition 'c' is computed at run time and output 0 "
                  "differs between the branches"))
      << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// A branch that cannot be built at these shapes (here: MatMul of [2, 3] by
// a [1] weight) is left out and its outputs are NaN when selected; the
// other branch still runs.
TEST(OnnxIf, ABranchThatCannotBeBuiltBecomesNaN) {
  TempDir dir;
  const ampx::Graph g = import_onnx(runtime_if("MatMul").save(dir / "m.onnx"));
  const std::vector<std::string> ops = op_names(g);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "MatMul"), 0);
  EXPECT_EQ(ops.back(), "Where");
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Mul"), 1);
}

TEST(OnnxIf, ABranchReadingAMissingOuterValueIsRefusedNamingTheNode) {
  TempDir dir;
  const std::string msg = import_error(shape_if(2, "nosuch").save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "then_branch/Add")) << msg;
  EXPECT_TRUE(has(msg, "'nosuch' is not produced")) << msg;
}

TEST(OnnxIf, AtRunTimeTooABranchReadingAMissingValueIsAnError) {
  TempDir dir;
  ModelMaker mm = runtime_if();
  mm.g->mutable_node(0)->mutable_attribute(1)->mutable_g()->mutable_node(0)->set_input(0, "nosuch");
  const std::string msg = import_error(mm.save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "else_branch: node 'else_branch/Mul' (Mul) reads 'nosuch'")) << msg;
}

TEST(OnnxIf, UnsupportedOpsInsideBranchesAreListed) {
  TempDir dir;
  ModelMaker mm = shape_if(2);
  auto* n = mm.g->mutable_node(3);                 // the If
  auto* g = n->mutable_attribute(1)->mutable_g();  // else_branch
  auto* bad = g->add_node();
  bad->set_op_type("StringNormalizer");  // strings are no ampx type
  bad->add_input("x");
  bad->add_output("nz");
  const std::string msg = import_error(mm.save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "StringNormalizer x1")) << msg;
}

}  // namespace
