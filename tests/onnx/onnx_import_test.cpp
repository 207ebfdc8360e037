// ONNX import: what survives, what is folded or fused, and every error a
// user can meet, each checked on models built here with the ONNX protobuf
// classes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ampx/ir/attr_access.hpp>
#include <ampx/ir/op_type.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/onnx/onnx_import.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "onnx_model_maker.hpp"

namespace {

using namespace ampx_onnx_test;
using ampx::onnx_io::ImportStats;

// x[N,4] -> MatMul(W) -> Relu -> y
ModelMaker small_mlp() {
  ModelMaker mm;
  mm.input("x", {"N", "4"});
  mm.init_f32("W", {4, 3});
  mm.node("MatMul", {"x", "W"}, {"h"}, "/fc/MatMul");
  mm.node("Relu", {"h"}, {"y"}, "/Relu");
  mm.output("y");
  return mm;
}

TEST(OnnxImport, NamesShapesAndPinnedInputsSurvive) {
  TempDir dir;
  const auto path = small_mlp().save(dir / "mlp.onnx");
  ImportOptions opts;
  opts.input_shapes["x"] = {5, 4};
  ImportStats stats;
  const ampx::Graph g = import_onnx(path, opts, &stats);
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.node(0).name, "/fc/MatMul");
  EXPECT_EQ(g.node(1).name, "/Relu");
  EXPECT_EQ(g.value(g.inputs()[0]).type.shape, (ampx::Shape{5, 4}));
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).type.shape, (ampx::Shape{5, 3}));
  EXPECT_EQ(stats.opset, 13);
  EXPECT_EQ(stats.onnx_nodes, 2);
}

TEST(OnnxImport, SymbolicDimensionMustBePinned) {
  TempDir dir;
  const auto path = small_mlp().save(dir / "mlp.onnx");
  const std::string msg = import_error(path);
  EXPECT_TRUE(has(msg, "input 'x' dimension 0 is symbolic ('N')")) << msg;
  EXPECT_TRUE(has(msg, "--input-shape x=")) << msg;
}

// `ampx run --input x=FILE.npy` pins x's symbolic dimensions from the
// array: a contradiction names the array, and an array for a name that is
// no input is left to the caller (which reports it against the array).
TEST(OnnxImport, ShapesPinnedFromArraysNameTheirOrigin) {
  TempDir dir;
  const auto path = small_mlp().save(dir / "mlp.onnx");
  ImportOptions ok;
  ok.input_shapes["x"] = {7, 4};
  ok.input_shape_origins["x"] = "--input x=a.npy";
  ok.input_shapes["nosuch"] = {1};
  ok.input_shape_origins["nosuch"] = "--input nosuch=b.npy";
  const ampx::Graph g = import_onnx(path, ok);
  EXPECT_EQ(g.value(g.inputs()[0]).type.shape, (ampx::Shape{7, 4}));
  ImportOptions bad = ok;
  bad.input_shapes["x"] = {7, 5};
  const std::string msg = import_error(path, bad);
  EXPECT_TRUE(has(msg, "dimension 1 is fixed to 4 in the model, --input x=a.npy says 5")) << msg;
}

TEST(OnnxImport, InputShapeThatContradictsTheModelOrNamesNoInput) {
  TempDir dir;
  const auto path = small_mlp().save(dir / "mlp.onnx");
  ImportOptions bad_dim;
  bad_dim.input_shapes["x"] = {2, 5};
  EXPECT_TRUE(has(import_error(path, bad_dim), "dimension 1 is fixed to 4 in the model"));
  ImportOptions bad_rank;
  bad_rank.input_shapes["x"] = {2, 4, 1};
  EXPECT_TRUE(has(import_error(path, bad_rank), "rank 2"));
  ImportOptions bad_name;
  bad_name.input_shapes["x"] = {2, 4};
  bad_name.input_shapes["images"] = {1};
  const std::string msg = import_error(path, bad_name);
  EXPECT_TRUE(has(msg, "'images', which is not an input of the model (inputs: x)")) << msg;
}

TEST(OnnxImport, TruncatedAndForeignFilesAreOneLine) {
  TempDir dir;
  ModelMaker mm = small_mlp();
  mm.init_f32("big", {64, 64});  // enough bytes to cut in the middle of a tensor
  std::string bytes;
  mm.m.SerializeToString(&bytes);
  const auto cut = dir / "cut.onnx";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_TRUE(has(import_error(cut), "truncated or corrupt"));
  const auto junk = dir / "junk.onnx";
  std::ofstream(junk, std::ios::binary) << std::string("\xff\xfe not protobuf \x01\x02");
  EXPECT_TRUE(has(import_error(junk), "not"));
  const auto empty = dir / "empty.onnx";
  std::ofstream(empty, std::ios::binary).flush();
  EXPECT_TRUE(has(import_error(empty), "not an ONNX model"));
  EXPECT_TRUE(has(import_error(dir / "missing.onnx"), "no such file"));
}

TEST(OnnxImport, EveryUnsupportedOpIsListedWithItsCount) {
  TempDir dir;
  ModelMaker mm;
  mm.input("x", {"2", "5"});
  mm.node("StringNormalizer", {"x"}, {"a"});
  mm.node("StringNormalizer", {"a"}, {"b"});
  mm.node("RegexFullMatch", {"b"}, {"c"});  // strings: never an ampx type
  auto* custom = mm.node("FusedThing", {"x"}, {"d"});
  custom->set_domain("com.example");
  mm.output("c");
  mm.output("d");
  const std::string msg = import_error(mm.save(dir / "u.onnx"));
  EXPECT_TRUE(has(msg, "3 unsupported op types (4 nodes, opset 13)")) << msg;
  EXPECT_TRUE(has(msg, "StringNormalizer x2")) << msg;
  EXPECT_TRUE(has(msg, "RegexFullMatch x1")) << msg;
  EXPECT_TRUE(has(msg, "com.example.FusedThing x1")) << msg;
}

// The integer element types of ABI 1.5 and the bit ops: a u16 BitShift, a
// u64 initializer in uint64_data (ONNX keeps u32 and u64 there, not in
// int32_data) folding through BitwiseAnd, BitCast of the input's width; a
// BitCast to another width is one line naming the widths.
TEST(OnnxImport, NarrowAndUnsignedIntegersAndTheBitOps) {
  TempDir dir;
  ModelMaker mm(26);
  mm.input("x", {"2", "3"}, onnx::TensorProto::UINT16);
  mm.input("s", {"3"}, onnx::TensorProto::UINT16);
  mm.input("z", {"2"}, onnx::TensorProto::UINT64);
  mm.input("w", {"3"});
  auto* shift = mm.node("BitShift", {"x", "s"}, {"y"});
  ModelMaker::attr_string(shift, "direction", "LEFT");
  auto* k = mm.g->add_initializer();
  k->set_name("k");
  k->set_data_type(onnx::TensorProto::UINT64);
  k->add_dims(2);
  k->add_uint64_data(0xF0F0F0F0F0F0F0F0ull);
  k->add_uint64_data(0xFFull);
  mm.node("BitwiseAnd", {"k", "k"}, {"kk"});  // folds at import
  mm.node("BitwiseXor", {"kk", "z"}, {"y2"});
  auto* cast = mm.node("BitCast", {"w"}, {"f"});
  ModelMaker::attr_int(cast, "to", onnx::TensorProto::INT32);
  mm.output("y");
  mm.output("y2");
  mm.output("f");
  const ampx::Graph g = import_onnx(mm.save(dir / "bits.onnx"));
  ASSERT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(g.node(0).op, ampx::OpType::kBitShift);
  EXPECT_EQ(g.node(1).op, ampx::OpType::kBitwiseXor);
  EXPECT_EQ(g.node(2).op, ampx::OpType::kBitCast);
  EXPECT_EQ(g.value(g.inputs()[0]).type.dtype, ampx::DType::kU16);
  const ampx::Value& kk = g.value(g.node(1).inputs[0]);
  ASSERT_TRUE(kk.is_constant());
  EXPECT_EQ(kk.type.dtype, ampx::DType::kU64);
  uint64_t bits[2];
  std::memcpy(bits, kk.constant->data(), sizeof bits);
  EXPECT_EQ(bits[0], 0xF0F0F0F0F0F0F0F0ull);
  EXPECT_EQ(bits[1], 0xFFull);
  EXPECT_EQ(g.value(g.outputs()[2]).type.dtype, ampx::DType::kI32);

  ModelMaker bad(26);
  bad.input("x", {"3"});
  auto* wide = bad.node("BitCast", {"x"}, {"y"});
  ModelMaker::attr_int(wide, "to", onnx::TensorProto::INT64);
  bad.output("y");
  const std::string msg = import_error(bad.save(dir / "wide.onnx"));
  EXPECT_TRUE(has(msg, "has another width than the f32 input")) << msg;
}

// ampx imports opsets 7 to 28 (each op in the form its version has) and
// refuses the rest in one line naming the opset and the range.
TEST(OnnxImport, OpsetOutsideTheSupportedRange) {
  TempDir dir;
  for (int64_t opset : {29, -3, 100}) {
    ModelMaker mm(opset);
    mm.input("x", {"1"});
    mm.node("Relu", {"x"}, {"y"});
    mm.output("y");
    const std::string msg = import_error(mm.save(dir / "o.onnx"));
    EXPECT_TRUE(has(msg, "opset " + std::to_string(opset) +
                             " is not supported (ampx imports opsets 7 to 28, and 1 to 6 where"))
        << msg;
  }
  for (int64_t opset : {6, 7, 9, 10, 20, 21, 26, 27, 28}) {
    ModelMaker mm(opset);
    mm.input("x", {"1"});
    mm.node("Relu", {"x"}, {"y"});
    mm.output("y");
    ImportStats stats;
    const ampx::Graph g = import_onnx(mm.save(dir / "ok.onnx"), {}, &stats);
    EXPECT_EQ(stats.opset, opset);
    EXPECT_EQ(g.num_nodes(), 1u);
  }
}

// Opsets 1 to 6: imported as opset 7 where every op (subgraphs included)
// has its opset-7 definition (Not-1, Relu-6), refused naming the first op
// that changed at 7 (Relu-1's consumed_inputs, Add-6's legacy broadcast).
TEST(OnnxImport, LegacyOpsetsImportWhereEveryOpKeepsItsOpset7Form) {
  TempDir dir;
  {
    ModelMaker mm(1);
    mm.input("x", {"2"}, onnx::TensorProto::BOOL);
    mm.node("Not", {"x"}, {"y"});
    mm.output("y");
    ImportStats stats;
    const ampx::Graph g = import_onnx(mm.save(dir / "not.onnx"), {}, &stats);
    EXPECT_EQ(stats.opset, 1);
    ASSERT_EQ(g.num_nodes(), 1u);
    EXPECT_EQ(g.node(0).op, ampx::OpType::kNot);
  }
  const auto refused = [&](int64_t opset, const char* op, int inputs, const std::string& want) {
    ModelMaker mm(opset);
    mm.input("x", {"2"});
    mm.input("x2", {"2"});
    mm.node("Not", {"b"}, {"nb"});  // unchanged since 1: not the one named
    mm.input("b", {"2"}, onnx::TensorProto::BOOL);
    mm.node(op, inputs == 1 ? std::vector<std::string>{"x"} : std::vector<std::string>{"x", "x2"},
            {"y"});
    mm.output("y");
    mm.output("nb");
    const std::string msg = import_error(mm.save(dir / "r.onnx"));
    EXPECT_TRUE(has(msg, want)) << msg;
  };
  refused(1, "Relu", 1, "Relu at opset 1 is Relu-1, which opset 7 changed");
  refused(6, "Add", 2, "Add at opset 6 is Add-6, which opset 7 changed");
  refused(3, "Gelu", 1, "Gelu is not defined at opset 3");
}

// An op ampx imports, in a model whose opset does not define it (ONNX
// Runtime refuses such a node too): listed with the opsets that do.
TEST(OnnxImport, OpsNotInTheModelsOpsetAreListedWithTheirOpsets) {
  TempDir dir;
  ModelMaker mm(17);
  mm.input("x", {"1", "2", "2", "2"});
  mm.init_f32("scales", {4}, 1.0f);
  mm.node("Gelu", {"x"}, {"a"});
  mm.node("Gelu", {"a"}, {"b"});
  mm.node("Upsample", {"b", "scales"}, {"y"});
  mm.output("y");
  const std::string msg = import_error(mm.save(dir / "g.onnx"));
  EXPECT_TRUE(has(msg, "2 unsupported op types (3 nodes, opset 17)")) << msg;
  EXPECT_TRUE(has(msg, "Gelu x2 (defined from opset 20)")) << msg;
  EXPECT_TRUE(has(msg, "Upsample x1 (defined in opsets 7 to 9)")) << msg;
}

// The legacy forms of opsets 7 to 10 import as the IR's attributes.
TEST(OnnxImport, AttributeFormsOfOldOpsetsImport) {
  TempDir dir;
  ModelMaker mm(9);
  mm.input("x", {"1", "2", "4", "6"});
  auto* sl = mm.node("Slice", {"x"}, {"s"});
  ModelMaker::attr_ints(sl, "starts", {1, -4});
  ModelMaker::attr_ints(sl, "ends", {3, 100});
  ModelMaker::attr_ints(sl, "axes", {2, 3});  // [1,2,2,4]
  auto* pd = mm.node("Pad", {"s"}, {"p"});
  ModelMaker::attr_ints(pd, "pads", {0, 0, 1, 0, 0, 0, 0, 2});  // [1,2,3,6]
  ModelMaker::attr_float(pd, "value", 0.5f);
  auto* up = mm.node("Upsample", {"p", "scales"}, {"u"});
  mm.init_f32_values("scales", {1, 1, 2, 3});
  ModelMaker::attr_string(up, "mode", "nearest");
  auto* cl = mm.node("Clip", {"u"}, {"y"});
  ModelMaker::attr_float(cl, "min", -0.5f);
  mm.output("y");
  const ampx::Graph g = import_onnx(mm.save(dir / "o9.onnx"));
  ASSERT_EQ(g.num_nodes(), 4u);
  EXPECT_EQ(ampx::op_name(g.node(0).op), "Slice");
  EXPECT_EQ(ampx::op_name(g.node(1).op), "Pad");
  EXPECT_EQ(ampx::op_name(g.node(2).op), "Resize");
  EXPECT_EQ(g.value(g.node(2).outputs[0]).type.shape, (ampx::Shape{1, 2, 6, 18}));
  EXPECT_EQ(ampx::op_name(g.node(3).op), "Clip");
}

// Resize's ONNX forms past sizes = in * scale: a fractional in * scale
// floors the size and carries ONNX's scales (the coordinates map by them),
// keep_aspect_ratio_policy rounds one scale half up, tf_crop_and_resize
// carries its roi over all dimensions, cubic its coefficient.
TEST(OnnxImport, ResizeFormsCarryOnnxScalesAndRoi) {
  TempDir dir;
  const auto resize_of = [&](const ampx::Graph& g) -> const ampx::Node& {
    for (size_t i = 0; i < g.num_nodes(); ++i)
      if (g.node(i).op == ampx::OpType::kResize) return g.node(i);
    ADD_FAILURE() << "no Resize";
    return g.node(0);
  };
  {
    ModelMaker mm(13);
    mm.input("x", {"1", "2", "3", "4"});
    mm.init_f32_values("sc", {1, 1, 1.75f, 0.6f});  // 5.25 -> 5, 2.4 -> 2
    ModelMaker::attr_string(mm.node("Resize", {"x", "", "sc"}, {"y"}), "mode", "cubic");
    mm.output("y");
    const ampx::Graph g = import_onnx(mm.save(dir / "f.onnx"));
    const ampx::Node& n = resize_of(g);
    EXPECT_EQ(g.value(n.outputs[0]).type.shape, (ampx::Shape{1, 2, 5, 2}));
    EXPECT_EQ(std::get<std::vector<double>>(n.attrs.at("scales")),
              (std::vector<double>{1, 1, double(1.75f), double(0.6f)}));
    EXPECT_EQ(std::get<double>(n.attrs.at("cubic_coeff_a")), -0.75);
  }
  {
    ModelMaker mm(18);
    mm.input("x", {"1", "2", "3", "4"});
    mm.init_i64("sz", {6, 5});
    auto* r = mm.node("Resize", {"x", "", "", "sz"}, {"y"});
    ModelMaker::attr_string(r, "keep_aspect_ratio_policy", "not_larger");
    ModelMaker::attr_ints(r, "axes", {2, 3});
    mm.output("y");
    const ampx::Graph g = import_onnx(mm.save(dir / "k.onnx"));
    const ampx::Node& n = resize_of(g);
    // min(6/3, 5/4) = 1.25: 3.75 -> 4, 5 -> 5.
    EXPECT_EQ(g.value(n.outputs[0]).type.shape, (ampx::Shape{1, 2, 4, 5}));
    EXPECT_EQ(std::get<std::vector<double>>(n.attrs.at("scales")),
              (std::vector<double>{1, 1, 1.25, 1.25}));
  }
  {
    ModelMaker mm(18);
    mm.input("x", {"1", "2", "3", "4"});
    mm.init_f32_values("roi", {0.1f, 0.2f, 0.9f, 0.7f});
    mm.init_i64("sz", {5, 5});
    auto* r = mm.node("Resize", {"x", "roi", "", "sz"}, {"y"});
    ModelMaker::attr_string(r, "coordinate_transformation_mode", "tf_crop_and_resize");
    ModelMaker::attr_ints(r, "axes", {3, 2});
    ModelMaker::attr_float(r, "extrapolation_value", 7.0f);
    mm.output("y");
    const ampx::Graph g = import_onnx(mm.save(dir / "c.onnx"));
    const ampx::Node& n = resize_of(g);
    EXPECT_EQ(
        std::get<std::vector<double>>(n.attrs.at("roi")),
        (std::vector<double>{0, 0, double(0.2f), double(0.1f), 1, 1, double(0.7f), double(0.9f)}));
    EXPECT_EQ(std::get<double>(n.attrs.at("extrapolation_value")), 7.0);
    EXPECT_FALSE(n.attrs.contains("scales"));
  }
}

// 1-D pooling and ConvTranspose run as the 2-D op over [N, C, 1, L], the
// attributes lifted (a 1 or a 0 for the added H); LpPool is
// (K * AveragePool(|x|^p, count_include_pad=1))^(1/p).
TEST(OnnxImport, OneDimensionalWindowsAndLpPoolLiftToTwoDimensions) {
  TempDir dir;
  using Ints = std::vector<int64_t>;
  const auto ops_of = [](const ampx::Graph& g) {
    std::vector<std::string> ops;
    for (size_t i = 0; i < g.num_nodes(); ++i) ops.emplace_back(ampx::op_name(g.node(i).op));
    return ops;
  };
  {
    ModelMaker mm(17);
    mm.input("x", {"1", "2", "9"});
    auto* p = mm.node("AveragePool", {"x"}, {"y"});
    ModelMaker::attr_ints(p, "kernel_shape", {3});
    ModelMaker::attr_ints(p, "strides", {2});
    ModelMaker::attr_ints(p, "pads", {1, 2});
    ModelMaker::attr_int(p, "count_include_pad", 1);
    mm.output("y");
    const ampx::Graph g = import_onnx(mm.save(dir / "a.onnx"));
    ASSERT_EQ(ops_of(g), (std::vector<std::string>{"Reshape", "AveragePool", "Reshape"}));
    const ampx::Node& n = g.node(1);
    EXPECT_EQ(std::get<Ints>(n.attrs.at("kernel_shape")), (Ints{1, 3}));
    EXPECT_EQ(std::get<Ints>(n.attrs.at("strides")), (Ints{1, 2}));
    EXPECT_EQ(std::get<Ints>(n.attrs.at("pads")), (Ints{0, 1, 0, 2}));
    EXPECT_EQ(std::get<int64_t>(n.attrs.at("count_include_pad")), 1);
    EXPECT_EQ(g.value(g.node(2).outputs[0]).type.shape,
              (ampx::Shape{1, 2, 5}));  // (9 + 3 - 3) / 2 + 1
  }
  {
    ModelMaker mm(17);
    mm.input("x", {"1", "2", "5"});
    mm.init_f32("w", {2, 3, 4});
    auto* c = mm.node("ConvTranspose", {"x", "w"}, {"y"});
    ModelMaker::attr_ints(c, "strides", {3});
    ModelMaker::attr_ints(c, "output_padding", {1});
    mm.output("y");
    const ampx::Graph g = import_onnx(mm.save(dir / "t.onnx"));
    // The weight's Reshape folds.
    ASSERT_EQ(ops_of(g), (std::vector<std::string>{"Reshape", "ConvTranspose", "Reshape"}));
    const ampx::Node& n = g.node(1);
    EXPECT_EQ(std::get<Ints>(n.attrs.at("strides")), (Ints{1, 3}));
    EXPECT_EQ(std::get<Ints>(n.attrs.at("output_padding")), (Ints{0, 1}));
    // (5 - 1) * 3 + 4 + 1 = 17
    EXPECT_EQ(g.value(g.node(2).outputs[0]).type.shape, (ampx::Shape{1, 3, 17}));
  }
  {
    ModelMaker mm(18);
    mm.input("x", {"1", "2", "4", "4"});
    auto* p = mm.node("LpPool", {"x"}, {"y"});
    ModelMaker::attr_ints(p, "kernel_shape", {2, 3});
    ModelMaker::attr_int(p, "p", 3);
    mm.output("y");
    const ampx::Graph g = import_onnx(mm.save(dir / "l.onnx"));
    const auto ops = ops_of(g);
    ASSERT_EQ(ops, (std::vector<std::string>{"Abs", "Pow", "AveragePool", "Mul", "Pow"}));
    EXPECT_EQ(std::get<int64_t>(g.node(2).attrs.at("count_include_pad")), 1);
  }
}

// Each refusal of a version-specific form names the node and the reason.
TEST(OnnxImport, OldAndNewFormsAmpxDoesNotImportAreNamed) {
  TempDir dir;
  struct Case {
    const char* what;
    int64_t opset;
    std::string expect;
    void (*build)(ModelMaker&);
  };
  const Case cases[] = {
      {"BatchNormalization spatial=0", 7, "spatial=0 (statistics per activation",
       [](ModelMaker& mm) {
         for (const char* t : {"s", "b", "m", "v"}) mm.init_f32(t, {2});
         ModelMaker::attr_int(mm.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}),
                              "spatial", 0);
       }},
      {"BatchNormalization-9 training output used", 9,
       "output 3 ('sm') is a training output (saved_mean)",
       [](ModelMaker& mm) {
         for (const char* t : {"s", "b", "m", "v"}) mm.init_f32(t, {2});
         mm.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "", "", "sm"});
         mm.output("sm");
       }},
      {"BatchNormalization-15 training_mode=2", 15, "training_mode is 2, it must be 0 or 1",
       [](ModelMaker& mm) {
         for (const char* t : {"s", "b", "m", "v"}) mm.init_f32(t, {2});
         ModelMaker::attr_int(mm.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}),
                              "training_mode", 2);
       }},
      {"Dropout-12 training_mode=true", 12, "training_mode=true is not supported",
       [](ModelMaker& mm) {
         auto* t = mm.g->add_initializer();
         t->set_name("train");
         t->set_data_type(onnx::TensorProto::BOOL);
         t->add_int32_data(1);
         mm.init_scalar("ratio", 0.5f);
         mm.node("Dropout", {"x", "ratio", "train"}, {"y"});
       }},
      {"Dropout-12 training_mode computed", 13, "training_mode ('t') must be a constant",
       [](ModelMaker& mm) {
         mm.input("t", {}, onnx::TensorProto::BOOL);
         mm.node("Dropout", {"x", "", "t"}, {"y"});
       }},
      {"Dropout-7 is_test=0", 7, "is_test=0 (training) is not supported",
       [](ModelMaker& mm) {
         ModelMaker::attr_int(mm.node("Dropout", {"x"}, {"y"}), "is_test", 0);
       }},
      {"Add with opset 1-6 broadcast", 7, "attribute 'broadcast' is opset 1-6 broadcasting",
       [](ModelMaker& mm) {
         mm.init_f32("b", {2});
         auto* n = mm.node("Add", {"x", "b"}, {"y"});
         ModelMaker::attr_int(n, "broadcast", 1);
         ModelMaker::attr_int(n, "axis", 1);
       }},
      {"Slice-1 without starts", 9, "attributes 'starts' and 'ends' are required",
       [](ModelMaker& mm) { ModelMaker::attr_ints(mm.node("Slice", {"x"}, {"y"}), "ends", {1}); }},
      {"Pad-2 without pads", 10, "attribute 'pads' is required (Pad before opset 11)",
       [](ModelMaker& mm) { mm.node("Pad", {"x"}, {"y"}); }},
      {"Upsample that shrinks", 9, "is below 1 (Upsample only enlarges)",
       [](ModelMaker& mm) {
         mm.init_f32_values("sc", {1, 1, 1, 0.5f});
         mm.node("Upsample", {"x", "sc"}, {"y"});
       }},
      {"Upsample-7 without scales", 7, "attribute 'scales' is required",
       [](ModelMaker& mm) { mm.node("Upsample", {"x"}, {"y"}); }},
      {"Resize-10 growing and shrinking", 10, "grow one dimension and shrink another",
       [](ModelMaker& mm) {
         mm.init_f32_values("sc", {1, 1, 2, 0.5f});
         mm.node("Resize", {"x", "sc"}, {"y"});
       }},
      {"Resize tf_crop_and_resize without roi", 13, "tf_crop_and_resize needs the roi input",
       [](ModelMaker& mm) {
         mm.init_i64("sz", {1, 2, 6, 8});
         ModelMaker::attr_string(mm.node("Resize", {"x", "", "", "sz"}, {"y"}),
                                 "coordinate_transformation_mode", "tf_crop_and_resize");
       }},
      {"Resize-18 keep_aspect_ratio_policy", 18, "keep_aspect_ratio_policy 'fit' is not valid",
       [](ModelMaker& mm) {
         mm.init_i64("sz", {1, 2, 6, 8});
         ModelMaker::attr_string(mm.node("Resize", {"x", "", "", "sz"}, {"y"}),
                                 "keep_aspect_ratio_policy", "fit");
       }},
  };
  for (const Case& c : cases) {
    ModelMaker mm(c.opset);
    mm.input("x", {"1", "2", "3", "4"});
    c.build(mm);
    mm.output("y");
    const std::string msg = import_error(mm.save(dir / "c.onnx"));
    EXPECT_TRUE(has(msg, c.expect)) << c.what << ": " << msg;
  }
}

// x[1x4] MatMul W[4x2], W an f32 initializer in external data with these
// key/value pairs, saved as `file`.
fs::path save_external_matmul(const fs::path& file,
                              std::initializer_list<std::pair<const char*, std::string>> kvs) {
  ModelMaker mm;
  mm.input("x", {"1", "4"});
  auto* t = mm.g->add_initializer();
  t->set_name("W");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->add_dims(2);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [k, v] : kvs) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  mm.node("MatMul", {"x", "W"}, {"y"});
  mm.output("y");
  return mm.save(file);
}

TEST(OnnxImport, ExternalDataIsReadAndAMissingFileNamed) {
  TempDir dir;
  const auto path = save_external_matmul(
      dir / "ext.onnx", {{"location", "weights.bin"}, {"offset", "16"}, {"length", "32"}});
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + static_cast<float>(i);
  std::ofstream(dir / "weights.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(w.data()), 48);
  const ampx::Graph g = import_onnx(path);
  const ampx::Value& wv = g.value(g.node(0).inputs[1]);
  ASSERT_TRUE(wv.is_constant());
  float first = 0;
  std::memcpy(&first, wv.constant->data(), 4);
  EXPECT_EQ(first, w[4]);  // offset 16 bytes = 4 floats

  fs::remove(dir / "weights.bin");
  const std::string msg = import_error(path);
  EXPECT_TRUE(has(msg, "tensor 'W'")) << msg;
  EXPECT_TRUE(has(msg, "weights.bin")) << msg;
  std::ofstream(dir / "weights.bin", std::ios::binary) << std::string(20, 'x');
  EXPECT_TRUE(has(import_error(path), "past its end"));
}

// External data stays inside the model's directory (as ONNX Runtime
// requires): an absolute location, a `..` that leaves it and a symbolic link
// out of it are each refused with the tensor and the location named, and
// nothing is read; a FIFO as the weights file is refused, not waited on.
TEST(OnnxImport, ExternalDataOutsideTheModelDirectoryIsRefused) {
  TempDir outer;
  const fs::path dir = outer / "model";
  fs::create_directories(dir);
  std::vector<float> w(8, 1.5f);
  std::ofstream(outer / "outside.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(w.data()), 32);
  fs::create_symlink(outer / "outside.bin", dir / "link.bin");
  ASSERT_EQ(::mkfifo((dir / "fifo.bin").c_str(), 0600), 0);
  const auto model_with = [&](const std::string& location) {
    return save_external_matmul(dir / "ext.onnx", {{"location", location}});
  };
  const std::string absolute = import_error(model_with((outer / "outside.bin").string()));
  EXPECT_TRUE(has(absolute, "tensor 'W'")) << absolute;
  EXPECT_TRUE(has(absolute, "is an absolute path")) << absolute;
  EXPECT_TRUE(has(import_error(model_with("/etc/passwd")), "is an absolute path"));
  const std::string up = import_error(model_with("../outside.bin"));
  EXPECT_TRUE(has(up, "'../outside.bin' leads outside the model's directory")) << up;
  EXPECT_TRUE(has(import_error(model_with("sub/../../outside.bin")), "leads outside"));
  const std::string link = import_error(model_with("link.bin"));
  EXPECT_TRUE(has(link, "'link.bin' leads outside the model's directory")) << link;
  const std::string fifo = import_error(model_with("fifo.bin"));
  EXPECT_TRUE(has(fifo, "is a FIFO, not a regular file")) << fifo;
  EXPECT_TRUE(has(import_error(model_with(".")), "leads outside")) << import_error(model_with("."));
}

// A model path that is no regular file is named for what it is.
TEST(OnnxImport, AModelThatIsNoRegularFileIsRefused) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "m.onnx").c_str(), 0600), 0);
  try {
    ampx::load_model((dir / "m.onnx").string());
    ADD_FAILURE() << "a FIFO was loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(has(e.what(), "is a FIFO, not a regular file")) << e.what();
  }
  try {
    ampx::load_model((dir / "none.onnx").string());
    ADD_FAILURE() << "a missing file was loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(has(e.what(), "no such file")) << e.what();
  }
}

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as torch.flatten traces:
// only the Reshape is left, with its target shape as an attribute.
TEST(OnnxImport, ShapeSubgraphsAreFolded) {
  TempDir dir;
  ModelMaker mm;
  mm.input("x", {"2", "3", "4"});
  mm.init_i64("zero", {0}, true);
  mm.init_i64("axes", {0});
  mm.init_i64("minus1", {-1});
  mm.node("Shape", {"x"}, {"s"});
  ModelMaker::attr_int(mm.node("Gather", {"s", "zero"}, {"n"}), "axis", 0);
  mm.node("Unsqueeze", {"n", "axes"}, {"n1"});
  ModelMaker::attr_int(mm.node("Concat", {"n1", "minus1"}, {"shape"}), "axis", 0);
  mm.node("Reshape", {"x", "shape"}, {"flat"}, "/Reshape");
  mm.node("Identity", {"flat"}, {"y"});
  mm.output("y");
  ImportStats stats;
  const ampx::Graph g = import_onnx(mm.save(dir / "f.onnx"), {}, &stats);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(ampx::op_name(g.node(0).op), "Reshape");
  EXPECT_EQ(g.value(g.outputs()[0]).type.shape, (ampx::Shape{2, 12}));
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_GE(stats.folded_nodes, 3);
}

TEST(OnnxImport, ConstantNodesAreWeightsAndSqueezeKeepsItsOrigin) {
  TempDir dir;
  ModelMaker mm(11);
  mm.input("x", {"1", "2", "1"});
  auto* c = mm.node("Constant", {}, {"W"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(2);
  a->mutable_t()->add_dims(2);
  for (float v : {1.f, 2.f, 3.f, 4.f}) a->mutable_t()->add_float_data(v);
  ModelMaker::attr_ints(mm.node("Squeeze", {"x"}, {"xs"}, "/Squeeze"), "axes", {2});
  mm.node("MatMul", {"xs", "W"}, {"y"}, "/MatMul");
  mm.output("y");
  const ampx::Graph g = import_onnx(mm.save(dir / "c.onnx"));
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(ampx::op_name(g.node(0).op), "Reshape");
  EXPECT_EQ(g.node(0).origin, "Squeeze");
  EXPECT_TRUE(g.value(g.node(1).inputs[1]).is_constant());
}

TEST(OnnxImport, UnusedOutputsOfMultiOutputOpsAreFineUsedOnesAreNot) {
  TempDir dir;
  ModelMaker mm;
  mm.input("x", {"1", "4"});
  mm.node("Dropout", {"x"}, {"y", "mask"});
  mm.node("Relu", {"y"}, {"z"});
  mm.output("z");
  const ampx::Graph g = import_onnx(mm.save(dir / "d.onnx"));
  EXPECT_EQ(g.num_nodes(), 1u);  // Dropout is an identity at inference
  ModelMaker pool;
  pool.input("x", {"1", "1", "2", "2"});
  ModelMaker::attr_ints(pool.node("MaxPool", {"x"}, {"y", "i"}), "kernel_shape", {2, 2});
  pool.output("y");
  (void)import_onnx(pool.save(dir / "p.onnx"));
  pool.output("i");
  const ampx::Graph gi = import_onnx(pool.save(dir / "p2.onnx"));
  bool indices = false;
  for (size_t i = 0; i < gi.num_nodes(); ++i)
    indices =
        indices || ampx::op_name(gi.node(static_cast<ampx::NodeId>(i)).op) == "MaxPoolIndices";
  EXPECT_TRUE(indices);
  EXPECT_EQ(gi.value(gi.outputs()[1]).type.dtype, ampx::DType::kI64);
  // A 3-D pool's Indices is not its two 2-D pools' (onnx_ops.cpp): refused.
  ModelMaker pool3;
  pool3.input("x", {"1", "1", "2", "2", "2"});
  ModelMaker::attr_ints(pool3.node("MaxPool", {"x"}, {"y", "i"}), "kernel_shape", {2, 2, 2});
  pool3.output("y");
  pool3.output("i");
  EXPECT_TRUE(
      has(import_error(pool3.save(dir / "p3.onnx")), "the Indices output of a 3-D MaxPool"));
}

TEST(OnnxImport, NonConstantShapeInputIsNamed) {
  TempDir dir;
  ModelMaker mm;
  mm.input("x", {"2", "3"});
  mm.input("shape", {"2"}, onnx::TensorProto::INT64);
  mm.node("Reshape", {"x", "shape"}, {"y"}, "/dyn/Reshape");
  mm.output("y");
  const std::string msg = import_error(mm.save(dir / "r.onnx"));
  EXPECT_TRUE(has(msg, "node '/dyn/Reshape' (Reshape)")) << msg;
  EXPECT_TRUE(has(msg, "shape ('shape') must be a constant")) << msg;
}

TEST(OnnxImport, UndefinedInputIsNamed) {
  TempDir dir;
  ModelMaker mm;
  mm.input("x", {"2"});
  mm.node("Add", {"x", "nowhere"}, {"y"}, "/Add");
  mm.output("y");
  const std::string msg = import_error(mm.save(dir / "u.onnx"));
  EXPECT_TRUE(has(msg, "input 'nowhere' is not produced")) << msg;
}

// RMSNormalization (23) is the fused RMSNorm, its axis normalised and a
// smaller scale expanded to the normalised dims; what ampx does not compute
// is refused in one line.
TEST(OnnxImport, RMSNormalizationIsOneNodeWithItsScaleExpanded) {
  TempDir dir;
  ModelMaker mm(23);
  mm.input("x", {"2", "3", "4"});
  mm.init_f32("s", {1, 4});
  auto* n = mm.node("RMSNormalization", {"x", "s"}, {"y"}, "/rms");
  ModelMaker::attr_int(n, "axis", -2);
  ModelMaker::attr_float(n, "epsilon", 0.25f);
  mm.output("y");
  const ampx::Graph g = import_onnx(mm.save(dir / "r.onnx"));
  ASSERT_EQ(g.num_nodes(), 1u);  // the Expand of a constant scale folds
  const ampx::Node& rms = g.node(0);
  EXPECT_EQ(ampx::op_name(rms.op), "RMSNorm");
  EXPECT_EQ(ampx::attr_int(rms.attrs, "axis", 0), 1);
  EXPECT_FLOAT_EQ(static_cast<float>(ampx::attr_float(rms.attrs, "epsilon", 0)), 0.25f);
  EXPECT_EQ(g.value(rms.inputs[1]).type.shape, (ampx::Shape{3, 4}));

  ModelMaker bad(23);
  bad.input("x", {"2", "3", "4"});
  bad.init_f32("s", {2, 4});
  bad.node("RMSNormalization", {"x", "s"}, {"y"}, "/rms");
  bad.output("y");
  std::string msg = import_error(bad.save(dir / "b.onnx"));
  EXPECT_TRUE(has(msg, "scale of shape [2x4] does not broadcast to the normalised dims [4]"))
      << msg;
  ModelMaker stash(23);
  stash.input("x", {"2", "4"});
  stash.init_f32("s", {4});
  ModelMaker::attr_int(stash.node("RMSNormalization", {"x", "s"}, {"y"}, "/rms"), "stash_type", 11);
  stash.output("y");
  msg = import_error(stash.save(dir / "st.onnx"));
  EXPECT_TRUE(has(msg, "stash_type 11 is not supported")) << msg;
  ModelMaker old(22);  // RMSNormalization is opset 23's
  old.input("x", {"2", "4"});
  old.init_f32("s", {4});
  old.node("RMSNormalization", {"x", "s"}, {"y"}, "/rms");
  old.output("y");
  msg = import_error(old.save(dir / "o.onnx"));
  EXPECT_TRUE(has(msg, "RMSNormalization")) << msg;
}

// LayerNormalization's Mean and InvStdDev: Y stays the fused LayerNorm,
// the statistics are computed beside it in f32 and keep the reduced dims.
TEST(OnnxImport, LayerNormalizationStatisticsOutputs) {
  TempDir dir;
  ModelMaker mm(17);
  mm.input("x", {"2", "3", "4"});
  mm.init_f32("s", {3, 4});
  ModelMaker::attr_int(mm.node("LayerNormalization", {"x", "s"}, {"y", "mean", "isd"}, "/ln"),
                       "axis", 1);
  mm.output("y");
  mm.output("mean");
  mm.output("isd");
  const ampx::Graph g = import_onnx(mm.save(dir / "l.onnx"));
  EXPECT_EQ(ampx::op_name(g.node(0).op), "LayerNorm");
  ASSERT_EQ(g.outputs().size(), 3u);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(g.value(g.outputs()[i]).type.shape, (ampx::Shape{2, 1, 1})) << i;
    EXPECT_EQ(g.value(g.outputs()[i]).type.dtype, ampx::DType::kF32) << i;
  }
  ModelMaker only_y(17);  // without readers of the statistics: one node
  only_y.input("x", {"2", "4"});
  only_y.init_f32("s", {4});
  only_y.node("LayerNormalization", {"x", "s"}, {"y", "mean", "isd"}, "/ln");
  only_y.output("y");
  EXPECT_EQ(import_onnx(only_y.save(dir / "y.onnx")).num_nodes(), 1u);
}

// LayerNorm and GELU as exporters spell them out become one IR node each.
TEST(OnnxImport, DecomposedLayerNormAndGeluAreFused) {
  TempDir dir;
  ModelMaker mm;
  mm.input("x", {"2", "3", "8"});
  for (auto [n, v] :
       {std::pair{"two", 2.f}, {"eps", 1e-5f}, {"sqrt2", 1.4142135f}, {"one", 1.f}, {"half", 0.5f}})
    mm.init_scalar(n, v);
  mm.init_f32("gamma", {8}, 0.75f);
  mm.init_f32("beta", {8}, -0.25f);
  const std::string p = "/encoder/LayerNorm";
  ModelMaker::attr_ints(mm.node("ReduceMean", {"x"}, {"m"}, p + "/ReduceMean"), "axes", {-1});
  mm.node("Sub", {"x", "m"}, {"c"}, p + "/Sub");
  mm.node("Pow", {"c", "two"}, {"p"}, p + "/Pow");
  ModelMaker::attr_ints(mm.node("ReduceMean", {"p"}, {"v"}, p + "/ReduceMean_1"), "axes", {-1});
  mm.node("Add", {"v", "eps"}, {"ve"}, p + "/Add");
  mm.node("Sqrt", {"ve"}, {"s"}, p + "/Sqrt");
  mm.node("Div", {"c", "s"}, {"n"}, p + "/Div");
  mm.node("Mul", {"n", "gamma"}, {"ng"}, p + "/Mul");
  mm.node("Add", {"ng", "beta"}, {"ln"}, p + "/Add_1");
  const std::string q = "/encoder/act";
  mm.node("Div", {"ln", "sqrt2"}, {"d"}, q + "/Div");
  mm.node("Erf", {"d"}, {"e"}, q + "/Erf");
  mm.node("Add", {"e", "one"}, {"e1"}, q + "/Add");
  mm.node("Mul", {"ln", "e1"}, {"g"}, q + "/Mul");
  mm.node("Mul", {"g", "half"}, {"y"}, q + "/Mul_1");
  mm.output("y");
  ImportStats stats;
  const ampx::Graph g = import_onnx(mm.save(dir / "p.onnx"), {}, &stats);
  EXPECT_EQ(stats.fused_patterns, 2);
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(ampx::op_name(g.node(0).op), "LayerNorm");
  EXPECT_EQ(g.node(0).name, p);
  EXPECT_EQ(g.node(0).origin, "ReduceMean+Sub+Pow+ReduceMean+Add+Sqrt+Div+Mul+Add");
  EXPECT_EQ(ampx::op_name(g.node(1).op), "Gelu");
  EXPECT_EQ(g.node(1).name, q);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
}

TEST(OnnxImport, LoadModelRoutesByExtensionAndRejectsShapesForBuiltins) {
  EXPECT_THROW((void)ampx::load_model("model.txt"), std::invalid_argument);
  ampx::ModelOptions o;
  o.input_shapes["x"] = {1};
  EXPECT_THROW((void)ampx::load_model("builtin:mlp", o), std::invalid_argument);
  EXPECT_EQ(ampx::parse_shape("1x3x224x224"), (ampx::Shape{1, 3, 224, 224}));
  for (const char* bad : {"", "1x", "x1", "1x-2", "1xa", "0"})
    EXPECT_THROW((void)ampx::parse_shape(bad), std::invalid_argument) << bad;
}

}  // namespace
