// ONNX's Loop and Scan, unrolled at import (frontend/src/onnx/onnx_loops.cpp):
// the iteration count comes from a folded trip count or condition; a
// condition computed at run time, too many iterations and bodies that do
// not fit the node are one-line errors naming the node. (The numerics are
// compared with ONNX Runtime by run_onnx_models.py, model 'loops'.)
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

onnx::ValueInfoProto* typed(onnx::ValueInfoProto* v, const std::string& name, int elem) {
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  return v;
}

// Loop(M, cond, h) whose body is h_out = h * 0.5 and cond_out =
// `cond_op`(cond_in) (Identity passes the condition through; Not makes it
// depend on the iteration before; "Less" compares with x's first element,
// a run-time value).
ModelMaker loop_model(const std::string& m_name, int64_t trips, const std::string& cond_op) {
  ModelMaker mm(16);
  mm.input("x", {"2", "3"});
  if (!m_name.empty()) mm.init_i64(m_name, {trips}, true);
  auto* t = mm.g->add_initializer();
  t->set_name("true");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(1);
  auto* n = mm.node("Loop", {m_name, "true", "x"}, {"h_last"}, "/Loop");
  auto* a = n->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* b = a->mutable_g();
  b->set_name("body");
  typed(b->add_input(), "i", onnx::TensorProto::INT64);
  typed(b->add_input(), "c", onnx::TensorProto::BOOL);
  typed(b->add_input(), "h", onnx::TensorProto::FLOAT);
  auto* half = b->add_initializer();
  half->set_name("half");
  half->set_data_type(onnx::TensorProto::FLOAT);
  half->add_float_data(0.5f);
  auto* mul = b->add_node();
  mul->set_op_type("Mul");
  mul->set_name("/body/Mul");
  mul->add_input("h");
  mul->add_input("half");
  mul->add_output("h_out");
  auto* c = b->add_node();
  c->set_name("/body/cond");
  if (cond_op == "Less") {
    auto* s = b->add_node();  // x's first element > 0, known only at run time
    s->set_op_type("ReduceMax");
    s->set_name("/body/ReduceMax");
    s->add_input("x");
    s->add_output("mx");
    c->set_op_type("Less");
    c->add_input("half");
    c->add_input("mx");
    std::swap(*b->mutable_node(1), *b->mutable_node(2));  // ReduceMax before Less
  } else {
    c->set_op_type(cond_op);
    c->add_input("c");
  }
  b->mutable_node(b->node_size() - 1)->add_output("c_out");
  typed(b->add_output(), "c_out", onnx::TensorProto::BOOL);
  typed(b->add_output(), "h_out", onnx::TensorProto::FLOAT);
  mm.node("Relu", {"h_last"}, {"y"}, "/Relu");
  mm.output("y");
  return mm;
}

size_t count_op(const ampx::Graph& g, ampx::OpType op) {
  return static_cast<size_t>(std::count_if(g.nodes().begin(), g.nodes().end(),
                                           [&](const ampx::Node& n) { return n.op == op; }));
}

TEST(OnnxLoop, AForLoopWithAFoldedTripCountIsUnrolled) {
  TempDir dir;
  const ampx::Graph g = import_onnx(loop_model("M", 5, "Identity").save(dir / "m.onnx"));
  EXPECT_EQ(count_op(g, ampx::OpType::kMul), 5u);
  // The unrolled nodes keep the body's names, one per iteration.
  EXPECT_TRUE(std::any_of(g.nodes().begin(), g.nodes().end(),
                          [](const ampx::Node& n) { return n.name == "/body/Mul_4"; }));
}

TEST(OnnxLoop, AConditionThatFoldsEndsTheLoop) {
  TempDir dir;
  // No trip count; Not flips the folded condition: one iteration runs.
  const ampx::Graph g = import_onnx(loop_model("", 0, "Not").save(dir / "m.onnx"));
  EXPECT_EQ(count_op(g, ampx::OpType::kMul), 1u);
  // A trip count of 0 runs none: the loop-carried value passes through.
  const ampx::Graph none = import_onnx(loop_model("M", 0, "Identity").save(dir / "n.onnx"));
  EXPECT_EQ(count_op(none, ampx::OpType::kMul), 0u);
}

TEST(OnnxLoop, ARunTimeConditionIsAnErrorNamingIt) {
  TempDir dir;
  const std::string msg = import_error(loop_model("M", 3, "Less").save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "/Loop")) << msg;
  EXPECT_TRUE(has(msg, "condition 'c_out' is computed at run time")) << msg;
}

TEST(OnnxLoop, TooManyIterationsAreRefused) {
  TempDir dir;
  const std::string msg = import_error(loop_model("M", 100000, "Identity").save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "100000 iterations")) << msg;
  EXPECT_TRUE(has(msg, "up to 4096")) << msg;
}

TEST(OnnxLoop, ABodyOfTheWrongArityIsRefused) {
  TempDir dir;
  ModelMaker mm = loop_model("M", 2, "Identity");
  mm.g->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_input()->RemoveLast();
  const std::string msg = import_error(mm.save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "the body has 2 inputs, expected 3")) << msg;
}

// Scan over x [T, 2] with a state s [2]: s_out = s + x_t, scan output s_out.
ModelMaker scan_model(int64_t t_x, int64_t t_y) {
  ModelMaker mm(16);
  mm.input("s0", {"2"});
  mm.input("x", {std::to_string(t_x), "2"});
  mm.input("y", {std::to_string(t_y), "2"});
  auto* n = mm.node("Scan", {"s0", "x", "y"}, {"s", "all"}, "/Scan");
  ModelMaker::attr_int(n, "num_scan_inputs", 2);
  auto* a = n->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* b = a->mutable_g();
  b->set_name("body");
  for (const char* in : {"st", "xt", "yt"}) typed(b->add_input(), in, onnx::TensorProto::FLOAT);
  auto* add = b->add_node();
  add->set_op_type("Sum");
  add->set_name("/body/Sum");
  add->add_input("st");
  add->add_input("xt");
  add->add_input("yt");
  add->add_output("st_out");
  auto* id = b->add_node();
  id->set_op_type("Relu");
  id->set_name("/body/Relu");
  id->add_input("st_out");
  id->add_output("scan_out");
  typed(b->add_output(), "st_out", onnx::TensorProto::FLOAT);
  typed(b->add_output(), "scan_out", onnx::TensorProto::FLOAT);
  mm.output("s");
  mm.output("all");
  return mm;
}

TEST(OnnxScan, IsUnrolledOverTheSequence) {
  TempDir dir;
  const ampx::Graph g = import_onnx(scan_model(3, 3).save(dir / "m.onnx"));
  EXPECT_EQ(count_op(g, ampx::OpType::kSum), 3u);
  EXPECT_EQ(count_op(g, ampx::OpType::kGather), 6u);  // one slice per step and input
}

TEST(OnnxScan, ScanInputsOfDifferentLengthsAreRefused) {
  TempDir dir;
  const std::string msg = import_error(scan_model(3, 4).save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "/Scan")) << msg;
  EXPECT_TRUE(has(msg, "scan input 1 has 4 steps, input 0 has 3")) << msg;
}

}  // namespace
