// ONNX's Loop and Scan, unrolled at import (frontend/onnx/src/onnx_loops.cpp):
// the iteration count comes from a folded trip count or condition; a
// condition computed at run time, too many iterations and bodies that do
// not fit the node are one-line errors naming the node. (The numerics are
// compared with ONNX Runtime by run_onnx_models.py, model 'loops'.)
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <ampx/ir/op_type.hpp>
#include <ampx/onnx/onnx_import.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
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

// Loops nested `trips.size()` deep, the k-th running trips[k] times
// (initializer M<k> of the main graph); the innermost body halves h.
// `inner_if`: the innermost Loop sits in the then-branch of an If whose
// condition comes from the input (both branches are imported).
ModelMaker nested_loops(const std::vector<int64_t>& trips, bool inner_if = false) {
  ModelMaker mm(16);
  mm.input("x", {"2", "3"});
  auto* t = mm.g->add_initializer();
  t->set_name("true");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(1);
  mm.init_scalar("half", 0.5f);
  for (size_t k = 0; k < trips.size(); ++k) mm.init_i64("M" + std::to_string(k), {trips[k]}, true);
  // The graph the next node goes into, and the value it reads.
  onnx::GraphProto* g = mm.g;
  std::string h = "x";
  for (size_t k = 0; k < trips.size(); ++k) {
    const std::string K = std::to_string(k);
    if (inner_if && k + 1 == trips.size()) {
      // cond = ReduceMax(x) > 0, known at run time only.
      auto* r = g->add_node();
      r->set_op_type("ReduceMax");
      r->set_name("/If/ReduceMax");
      r->add_input("x");
      r->add_output("mx");
      auto* less = g->add_node();
      less->set_op_type("Less");
      less->set_name("/If/Less");
      less->add_input("half");
      less->add_input("mx");
      less->add_output("if_cond");
      auto* in = g->add_node();
      in->set_op_type("If");
      in->set_name("/If");
      in->add_input("if_cond");
      in->add_output("if_out");
      auto* els = in->add_attribute();
      els->set_name("else_branch");
      els->set_type(onnx::AttributeProto::GRAPH);
      auto* eg = els->mutable_g();
      eg->set_name("else");
      auto* id = eg->add_node();
      id->set_op_type("Identity");
      id->set_name("/If/else/Identity");
      id->add_input(h);
      id->add_output("else_out");
      typed(eg->add_output(), "else_out", onnx::TensorProto::FLOAT);
      auto* then = in->add_attribute();
      then->set_name("then_branch");
      then->set_type(onnx::AttributeProto::GRAPH);
      g = then->mutable_g();
      g->set_name("then");
      typed(g->add_output(), "l" + K + "_out", onnx::TensorProto::FLOAT);
      // The Loop below writes l<K>_out inside the branch; the graph around
      // the If reads if_out.
    }
    auto* loop = g->add_node();
    loop->set_op_type("Loop");
    loop->set_name("/Loop" + K);
    loop->add_input("M" + K);
    loop->add_input("true");
    loop->add_input(h);
    loop->add_output("l" + K + "_out");
    auto* a = loop->add_attribute();
    a->set_name("body");
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* b = a->mutable_g();
    b->set_name("body" + K);
    typed(b->add_input(), "i" + K, onnx::TensorProto::INT64);
    typed(b->add_input(), "c" + K, onnx::TensorProto::BOOL);
    typed(b->add_input(), "h" + K, onnx::TensorProto::FLOAT);
    auto* c = b->add_node();
    c->set_op_type("Identity");
    c->set_name("/body" + K + "/cond");
    c->add_input("c" + K);
    c->add_output("c" + K + "_out");
    typed(b->add_output(), "c" + K + "_out", onnx::TensorProto::BOOL);
    typed(b->add_output(), "h" + K + "_out", onnx::TensorProto::FLOAT);
    if (k + 1 == trips.size()) {
      auto* mul = b->add_node();
      mul->set_op_type("Mul");
      mul->set_name("/body" + K + "/Mul");
      mul->add_input("h" + K);
      mul->add_input("half");
      mul->add_output("h" + K + "_out");
    }
    g = b;
    h = "h" + K;
    // The next Loop's output is this body's h<K>_out.
    if (k + 1 < trips.size()) {
      const std::string next = std::to_string(k + 1);
      // Loop k+1 writes l<k+1>_out; the body returns it as h<K>_out.
      auto* id = b->add_node();
      id->set_op_type("Identity");
      id->set_name("/body" + K + "/out");
      id->add_input((inner_if && k + 2 == trips.size()) ? "if_out" : "l" + next + "_out");
      id->add_output("h" + K + "_out");
    }
  }
  // Nodes must come in order: each body's Identity "out" reads what the
  // nodes added after it produce. Move it to the end of its body.
  std::function<void(onnx::GraphProto*)> reorder = [&](onnx::GraphProto* gr) {
    for (int i = 0; i < gr->node_size(); ++i) {
      for (auto& at : *gr->mutable_node(i)->mutable_attribute())
        if (at.has_g()) reorder(at.mutable_g());
    }
    for (int i = 0; i + 1 < gr->node_size(); ++i)
      if (gr->node(i).name().ends_with("/out")) {
        for (int j = i; j + 1 < gr->node_size(); ++j) gr->mutable_node()->SwapElements(j, j + 1);
        break;
      }
  };
  reorder(mm.g);
  mm.node("Relu", {"l0_out"}, {"y"}, "/Relu");
  mm.output("y");
  return mm;
}

TEST(OnnxLoop, NestedLoopsWithinTheBoundAreUnrolled) {
  TempDir dir;
  const ampx::Graph g = import_onnx(nested_loops({16, 16}).save(dir / "m.onnx"));
  EXPECT_EQ(count_op(g, ampx::OpType::kMul), 256u);
}

TEST(OnnxLoop, NestedLoopsPastTheBoundAreRefusedBeforeUnrolling) {
  TempDir dir;
  // 4000 x 4000 (each loop under the 4096 iterations a Loop may have):
  // refused at the outer Loop, naming the product, before anything unrolls.
  const std::string msg = import_error(nested_loops({4000, 4000}).save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "node '/Loop0' (Loop)")) << msg;
  EXPECT_TRUE(has(msg, "4000 iterations of a body of 8003 nodes")) << msg;
  EXPECT_TRUE(has(msg, "unroll into 32012000 nodes")) << msg;
  EXPECT_TRUE(has(msg, "up to 100000 nodes in a model")) << msg;
  // 64 x 64 x 64: 262,144 Muls.
  const std::string three = import_error(nested_loops({64, 64, 64}).save(dir / "t.onnx"));
  EXPECT_TRUE(has(three, "node '/Loop0' (Loop)")) << three;
  EXPECT_TRUE(has(three, "64 iterations of a body of")) << three;
}

TEST(OnnxLoop, BothBranchesOfARunTimeIfCountInTheBound) {
  TempDir dir;
  // 300 iterations of an If whose then-branch runs a Loop of 400: the If
  // imports both branches every iteration, 120,000 Muls in all.
  const std::string msg = import_error(nested_loops({300, 400}, true).save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "node '/Loop0' (Loop)")) << msg;
  EXPECT_TRUE(has(msg, "300 iterations of a body of")) << msg;
}

// If nodes nested `depth` deep, each with a constant condition, the
// innermost branch a Relu: protobuf's recursion limit (100 messages) is
// passed at about 33.
ModelMaker nested_ifs(int depth) {
  ModelMaker mm(16);
  mm.input("x", {"2"});
  auto* t = mm.g->add_initializer();
  t->set_name("true");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(1);
  onnx::GraphProto* g = mm.g;
  for (int k = 0; k < depth; ++k) {
    const std::string out = k == 0 ? "y" : "o" + std::to_string(k);
    auto* n = g->add_node();
    n->set_op_type("If");
    n->set_name("/If" + std::to_string(k));
    n->add_input("true");
    n->add_output(out);
    for (const char* branch : {"else_branch", "then_branch"}) {
      auto* a = n->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      a->mutable_g()->set_name(branch);
      typed(a->mutable_g()->add_output(), "o" + std::to_string(k + 1), onnx::TensorProto::FLOAT);
    }
    auto* els = n->mutable_attribute(0)->mutable_g();
    auto* id = els->add_node();
    id->set_op_type("Neg");
    id->set_name("/else" + std::to_string(k));
    id->add_input("x");
    id->add_output("o" + std::to_string(k + 1));
    g = n->mutable_attribute(1)->mutable_g();
  }
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("/Relu");
  relu->add_input("x");
  relu->add_output("o" + std::to_string(depth));
  mm.output("y");
  return mm;
}

TEST(OnnxIf, NestingPastProtobufsLimitIsToldSo) {
  TempDir dir;
  EXPECT_NO_THROW((void)import_onnx(nested_ifs(20).save(dir / "ok.onnx")));
  const std::string msg = import_error(nested_ifs(40).save(dir / "deep.onnx"));
  EXPECT_TRUE(has(msg, "nests messages deeper than protobuf's limit of 100")) << msg;
  EXPECT_FALSE(has(msg, "corrupt")) << msg;
  // A truncated file is still called that.
  const std::string bytes = nested_ifs(2).m.SerializeAsString();
  std::ofstream(dir / "cut.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_TRUE(has(import_error(dir / "cut.onnx"), "truncated or corrupt protobuf"));
}

}  // namespace
