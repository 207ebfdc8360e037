// ONNX's sequences and optionals as lists at import (onnx_sequences.cpp,
// composite_io.cpp; docs/ONNX.md, "Sequences and optionals"): the list ops
// give the elements ONNX defines, a sequence graph input is its elements
// as tensor inputs for the length given, a sequence output its elements as
// outputs NAME[i], and what cannot be known at import is a one-line error.
// (The numerics run in ONNX's node suite: tests/onnx/node_suite.)
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <ampx/onnx/onnx_import.hpp>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "onnx_model_maker.hpp"

namespace {

using namespace ampx_onnx_test;
using ampx::Shape;

// A graph input or output of type seq(tensor(float)) of rank-1 elements.
void sequence_value(onnx::ValueInfoProto* v, const std::string& name) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("n");
}

std::vector<std::string> names(const ampx::Graph& g, std::span<const ampx::ValueId> ids) {
  std::vector<std::string> out;
  for (ampx::ValueId v : ids) out.push_back(g.value(v).name);
  return out;
}

const ampx::Value& output(const ampx::Graph& g, const std::string& name) {
  for (ampx::ValueId v : g.outputs())
    if (g.value(v).name == name) return g.value(v);
  ADD_FAILURE() << "no output " << name;
  return g.value(g.outputs()[0]);
}

int64_t constant_i64(const ampx::Graph& g, const ampx::Value& out) {
  // A constant output is a copy (Reshape) of the constant.
  const ampx::Value& c = g.value(g.node(out.producer).inputs.at(0));
  EXPECT_TRUE(c.is_constant());
  int64_t v = 0;
  std::memcpy(&v, c.constant->data(), 8);
  return v;
}

// x [2, 6] split into [2, 2] and [2, 4]; y [2, 3] inserted at the front;
// the last erased: [y, p0]. at = element 1 (p0), len = 2, cat = [2, 5].
ModelMaker list_ops_model() {
  ModelMaker mm(17);
  mm.input("x", {"2", "6"});
  mm.input("y", {"2", "3"});
  mm.init_i64("sizes", {2, 4});
  mm.init_i64("front", {0}, true);
  mm.init_i64("last", {-1}, true);
  mm.init_i64("one", {1}, true);
  auto* split = mm.node("SplitToSequence", {"x", "sizes"}, {"s"}, "/Split");
  ModelMaker::attr_int(split, "axis", 1);
  mm.node("SequenceInsert", {"s", "y", "front"}, {"s2"}, "/Insert");
  mm.node("SequenceErase", {"s2", "last"}, {"s3"}, "/Erase");
  mm.node("SequenceAt", {"s3", "one"}, {"at"}, "/At");
  mm.node("SequenceLength", {"s3"}, {"len"}, "/Length");
  auto* cat = mm.node("ConcatFromSequence", {"s3"}, {"cat"}, "/Concat");
  ModelMaker::attr_int(cat, "axis", 1);
  mm.output("at");
  mm.output("len");
  mm.output("cat");
  return mm;
}

TEST(OnnxSequences, ListOpsGiveTheElementsOnnxDefines) {
  TempDir dir;
  const ampx::Graph g = import_onnx(list_ops_model().save(dir / "m.onnx"));
  EXPECT_EQ(output(g, "at").type.shape, (Shape{2, 2}));  // p0, not y
  EXPECT_EQ(constant_i64(g, output(g, "len")), 2);
  EXPECT_EQ(output(g, "cat").type.shape, (Shape{2, 5}));  // y [2, 3] and p0 [2, 2]
}

TEST(OnnxSequences, APositionOutOfRangeIsOneLine) {
  TempDir dir;
  ModelMaker mm = list_ops_model();
  mm.g->mutable_initializer(3)->set_int64_data(0, 2);  // "one" -> 2, past [y, p0]
  const std::string msg = import_error(mm.save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "/At")) << msg;
  EXPECT_TRUE(has(msg, "position 2 is out of range for a sequence of 2 tensors")) << msg;
}

TEST(OnnxSequences, SplitToSequenceWithoutSplitDropsTheAxisWithoutKeepdims) {
  TempDir dir;
  ModelMaker mm(17);
  mm.input("x", {"3", "4"});
  auto* n = mm.node("SplitToSequence", {"x"}, {"s"});
  ModelMaker::attr_int(n, "keepdims", 0);
  mm.node("ConcatFromSequence", {"s"}, {"stacked"});
  ModelMaker::attr_int(mm.g->mutable_node(1), "axis", 0);
  ModelMaker::attr_int(mm.g->mutable_node(1), "new_axis", 1);
  mm.output("stacked");
  const ampx::Graph g = import_onnx(mm.save(dir / "m.onnx"));
  EXPECT_EQ(output(g, "stacked").type.shape, (Shape{3, 4}));  // 3 parts of [4], stacked
}

// ys = SequenceMap(xs) with the body y = Add(x, x): one Add per element.
TEST(OnnxSequences, ASequenceInputIsItsElementsAndAnOutputItsElementsByName) {
  TempDir dir;
  ModelMaker mm(17);
  sequence_value(mm.g->add_input(), "xs");
  sequence_value(mm.g->add_output(), "ys");
  auto* n = mm.node("SequenceMap", {"xs"}, {"ys"}, "/Map");
  auto* a = n->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* body = a->mutable_g();
  body->set_name("body");
  mm.value(body->add_input(), "x", onnx::TensorProto::FLOAT, {"n"});
  mm.value(body->add_output(), "y", onnx::TensorProto::FLOAT, {"n"});
  auto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("x");
  add->add_output("y");
  const fs::path path = mm.save(dir / "m.onnx");

  // Without its length the import stops as for a value it needs.
  try {
    (void)import_onnx(path);
    ADD_FAILURE() << "imported without the length";
  } catch (const ampx::onnx_io::ValueNeededError& e) {
    EXPECT_TRUE(has(e.what(), "input 'xs' is a sequence")) << e.what();
  }
  ImportOptions io;
  io.composite_inputs.sequence_lengths["xs"] = 3;
  io.input_shapes["xs[0]"] = {2};
  io.input_shapes["xs[1]"] = {5};
  io.input_shapes["xs[2]"] = {1};
  const ampx::Graph g = import_onnx(path, io);
  EXPECT_EQ(names(g, g.inputs()), (std::vector<std::string>{"xs[0]", "xs[1]", "xs[2]"}));
  EXPECT_EQ(names(g, g.outputs()), (std::vector<std::string>{"ys[0]", "ys[1]", "ys[2]"}));
  EXPECT_EQ(output(g, "ys[1]").type.shape, (Shape{5}));
  EXPECT_EQ(g.num_nodes(), 3u);

  // An empty sequence has no elements, and the graph then no outputs.
  io.composite_inputs.sequence_lengths["xs"] = 0;
  io.input_shapes.clear();
  EXPECT_TRUE(has(import_error(path, io), "the graph has no outputs"));
  // A length for a name that is no sequence input.
  io.composite_inputs.sequence_lengths["zs"] = 1;
  EXPECT_TRUE(has(import_error(path, io), "'zs', which is not a sequence input"));
}

// Loop (3 iterations) appending Unsqueeze(i) to a sequence it carries:
// three elements, each the iteration's number.
TEST(OnnxSequences, ALoopCarriesAGrowingSequence) {
  TempDir dir;
  ModelMaker mm(17);
  mm.input("x", {"1"}, onnx::TensorProto::INT64);
  mm.init_i64("trips", {3}, true);
  mm.init_i64("zero", {0});
  auto* empty = mm.node("SequenceEmpty", {}, {"s0"});
  ModelMaker::attr_int(empty, "dtype", onnx::TensorProto::INT64);
  auto* loop = mm.node("Loop", {"trips", "", "s0"}, {"s"}, "/Loop");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* body = a->mutable_g();
  body->set_name("body");
  mm.value(body->add_input(), "i", onnx::TensorProto::INT64, {});
  mm.value(body->add_input(), "c", onnx::TensorProto::BOOL, {});
  body->add_input()->set_name("s_in");
  mm.value(body->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  body->add_output()->set_name("s_out");
  auto* id = body->add_node();
  id->set_op_type("Identity");
  id->add_input("c");
  id->add_output("c_out");
  auto* unsq = body->add_node();
  unsq->set_op_type("Unsqueeze");
  unsq->add_input("i");
  unsq->add_input("zero");
  unsq->add_output("u");
  auto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("u");
  add->add_input("x");
  add->add_output("ux");
  auto* ins = body->add_node();
  ins->set_op_type("SequenceInsert");
  ins->add_input("s_in");
  ins->add_input("ux");
  ins->add_output("s_out");
  mm.node("SequenceLength", {"s"}, {"len"});
  mm.node("ConcatFromSequence", {"s"}, {"cat"});
  ModelMaker::attr_int(mm.g->mutable_node(3), "axis", 0);
  mm.output("len");
  mm.output("cat");
  const ampx::Graph g = import_onnx(mm.save(dir / "m.onnx"));
  EXPECT_EQ(constant_i64(g, output(g, "len")), 3);
  EXPECT_EQ(output(g, "cat").type.shape, (Shape{3}));
}

TEST(OnnxSequences, OptionalsAreKnownAtImport) {
  TempDir dir;
  ModelMaker mm(18);
  mm.input("x", {"4"});
  mm.node("Optional", {"x"}, {"o"});
  mm.node("OptionalHasElement", {"o"}, {"has"});
  mm.node("OptionalGetElement", {"o"}, {"got"});
  mm.output("has");
  mm.output("got");
  const ampx::Graph g = import_onnx(mm.save(dir / "m.onnx"));
  const ampx::Value& has_out = output(g, "has");
  EXPECT_EQ(std::to_integer<int>(g.value(g.node(has_out.producer).inputs[0]).constant->at(0)), 1);
  EXPECT_EQ(output(g, "got").type.shape, (Shape{4}));

  // An optional holding none: OptionalGetElement fails, naming it.
  ModelMaker none(18);
  auto* opt = none.node("Optional", {}, {"o"});
  auto* a = opt->add_attribute();
  a->set_name("type");
  a->set_type(onnx::AttributeProto::TYPE_PROTO);
  a->mutable_tp()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  none.node("OptionalGetElement", {"o"}, {"got"}, "/Get");
  none.output("got");
  const std::string msg = import_error(none.save(dir / "none.onnx"));
  EXPECT_TRUE(has(msg, "/Get")) << msg;
  EXPECT_TRUE(has(msg, "the optional 'o' holds none")) << msg;
}

TEST(OnnxSequences, ASequenceWhereATensorIsExpectedIsOneLine) {
  TempDir dir;
  ModelMaker mm(17);
  mm.input("x", {"4"});
  mm.node("SequenceConstruct", {"x", "x"}, {"s"});
  mm.node("Relu", {"s"}, {"y"}, "/Relu");
  mm.output("y");
  const std::string msg = import_error(mm.save(dir / "m.onnx"));
  EXPECT_TRUE(has(msg, "/Relu")) << msg;
  EXPECT_TRUE(has(msg, "('s') is a sequence, where a tensor is expected")) << msg;
}

}  // namespace
