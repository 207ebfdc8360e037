// ONNX export: the built-in models' plans on cpu_ref written as ONNX, read
// back by ampx's own importer and run on the reference kernels, must give
// the outputs of the plan itself; Casts and 16-bit initializers must be
// where the plan puts them.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/exec/host_tensor.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/onnx/onnx_export.hpp>
#include <ampx/onnx/onnx_import.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include "onnx_model_maker.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace ampx;

const plugins::PluginHost& host() {
  static const plugins::PluginHost h([] {
    plugins::PluginHostOptions o;
    o.use_env_path = false;
    o.excluded_plugins = {"onednn", "vulkan", "cuda"};
    return o;
  }());
  return h;
}

struct Case {
  std::string model;
  AmpLevel level;
  DType half;
  bool blind;  // capability-blind: cpu_ref's emulated 16-bit nodes stay 16-bit
  bool fuse;   // export the graph after the executor's fusion (epilogues, bias)
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string s = c.model.substr(c.model.find(':') + 1) + "_" +
                  std::string(amp_level_name(c.level)) + "_" + std::string(dtype_name(c.half));
  if (c.blind) s += "_blind";
  if (c.fuse) s += "_fused";
  return s;
}

class ExportBuiltin : public ::testing::TestWithParam<Case> {};

TEST_P(ExportBuiltin, ReimportsAndRunsLikeThePlan) {
  const Case& c = GetParam();
  const auto& dev = host().device("cpu_ref:0");
  DeviceCapabilities caps(dev);
  const Graph g = load_model(c.model);
  AmpPolicy policy;
  policy.level = c.level;
  policy.half = c.half;
  const AmpPlan plan =
      plan_amp(g, policy, caps, {.build_graph = true, .capability_blind = c.blind});
  const Graph planned = c.fuse ? fuse_for_device(plan.graph, caps).graph : plan.graph;

  onnx_io::ExportStats st;
  onnx_io::ExportOptions eo;
  for (ValueId v : g.outputs()) eo.output_names.push_back(g.value(v).name);
  const std::string bytes = onnx_io::export_onnx(planned, eo, &st);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).domain(), "");
  EXPECT_EQ(m.opset_import(0).version(), 17);
  EXPECT_EQ(st.model_bytes, static_cast<int64_t>(bytes.size()));

  // Casts: exactly the plan's on non-constant values; the weight Casts are
  // folded into their initializers.
  int on_values = 0, on_constants = 0;
  for (const CastRecord& r : plan.casts) (r.on_constant ? on_constants : on_values)++;
  int casts = 0;
  for (const auto& n : m.graph().node()) casts += n.op_type() == "Cast";
  EXPECT_EQ(casts, on_values);
  EXPECT_EQ(st.casts, on_values);
  EXPECT_EQ(st.folded_casts, on_constants);
  if (c.blind && c.level != AmpLevel::kO0) {
    EXPECT_GT(on_values, 0) << "a 16-bit plan casts its f32 inputs";
    EXPECT_GT(on_constants, 0) << "and its weights";
    EXPECT_GT(st.nodes_16bit, 0);
  } else if (!c.blind) {
    EXPECT_EQ(plan.casts.size(), 0u) << "cpu_ref only emulates 16-bit: the plan stays f32";
    EXPECT_EQ(st.initializers_16bit, 0);
    EXPECT_EQ(st.nodes_16bit, 0);
  }

  // Each folded weight Cast's output is an initializer of the target
  // dtype, and an f32 master copy used only by that Cast is not written.
  std::map<std::string, int32_t> inits;
  for (const auto& t : m.graph().initializer()) inits[t.name()] = t.data_type();
  std::set<std::string> used;
  for (const auto& n : m.graph().node())
    for (const auto& i : n.input()) used.insert(i);
  int int16_inits = 0;
  for (const auto& [name, type] : inits) {
    EXPECT_TRUE(used.contains(name)) << "initializer " << name << " is used by a node";
    int16_inits += type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
  }
  EXPECT_EQ(st.initializers_16bit, int16_inits);
  const int32_t half_type =
      c.half == DType::kF16 ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::BFLOAT16;
  for (const Node& n : planned.nodes()) {
    if (n.op != OpType::kCast || !planned.value(n.inputs[0]).is_constant()) continue;
    const std::string& out = planned.value(n.outputs[0]).name;
    ASSERT_TRUE(inits.contains(out)) << "folded Cast output " << out;
    EXPECT_EQ(inits[out], half_type) << out;
    EXPECT_FALSE(inits.contains(planned.value(n.inputs[0]).name))
        << "f32 master copy of " << out << " written";
  }
  // Graph inputs and outputs keep their names and dtypes.
  ASSERT_EQ(m.graph().input_size(), static_cast<int>(planned.inputs().size()));
  for (size_t i = 0; i < planned.inputs().size(); ++i) {
    const Value& v = planned.value(planned.inputs()[i]);
    EXPECT_EQ(m.graph().input(static_cast<int>(i)).name(), v.name);
    EXPECT_EQ(m.graph().input(static_cast<int>(i)).type().tensor_type().elem_type(),
              onnx::TensorProto::FLOAT);
  }
  ASSERT_EQ(m.graph().output_size(), static_cast<int>(planned.outputs().size()));
  for (size_t i = 0; i < planned.outputs().size(); ++i) {
    const auto& o = m.graph().output(static_cast<int>(i));
    EXPECT_EQ(o.name(), g.value(g.outputs()[i]).name) << "the source graph's output name";
    EXPECT_EQ(o.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  }
  // Node names kept.
  std::set<std::string> onnx_nodes;
  for (const auto& n : m.graph().node()) onnx_nodes.insert(n.name());
  for (const Node& n : planned.nodes()) {
    if (!(n.op == OpType::kCast && planned.value(n.inputs[0]).is_constant())) {
      EXPECT_TRUE(onnx_nodes.contains(n.name)) << "node " << n.name;
    }
  }

  // Back through the importer and the reference kernels.
  const fs::path file = fs::temp_directory_path() / ("ampx_export_" + case_name({c, 0}) + "_" +
                                                     std::to_string(::getpid()) + ".onnx");
  ampx::fileio::write_file_atomically(file, bytes);
  const Graph back = onnx_io::import_onnx(file);
  fs::remove(file);
  const auto inputs = random_inputs(g, 7);
  Executor want_exec(planned, dev);
  Executor got_exec(back, dev);
  const auto want = want_exec.run(inputs);
  const auto got = got_exec.run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].type, want[i].type);
    // The same ops on the same kernels: identical up to the f32 rounding of
    // a decomposed-and-refused op.
    EXPECT_LE(max_relative_error(got[i], want[i]), 1e-6) << c.model << " output " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Builtin, ExportBuiltin,
    ::testing::Values(Case{"builtin:cnn", AmpLevel::kO0, DType::kF16, false, false},
                      Case{"builtin:cnn", AmpLevel::kO2, DType::kF16, false, false},
                      Case{"builtin:cnn", AmpLevel::kO2, DType::kF16, true, false},
                      Case{"builtin:cnn", AmpLevel::kO0, DType::kF16, false, true},
                      Case{"builtin:mlp", AmpLevel::kO0, DType::kF16, false, false},
                      Case{"builtin:mlp", AmpLevel::kO2, DType::kF16, false, false},
                      Case{"builtin:mlp", AmpLevel::kO2, DType::kBF16, true, false},
                      Case{"builtin:mlp", AmpLevel::kO0, DType::kF16, false, true},
                      Case{"builtin:encoder", AmpLevel::kO0, DType::kF16, false, false},
                      Case{"builtin:encoder", AmpLevel::kO2, DType::kF16, false, false},
                      Case{"builtin:encoder", AmpLevel::kO2, DType::kF16, true, false},
                      Case{"builtin:encoder", AmpLevel::kO0, DType::kF16, false, true}),
    case_name);

// Ops the built-in models lack: the tanh GELU (decomposed, not fused back
// on import), Clip with only a max, a MatMul bias with a tanh-GELU
// epilogue, and the attribute-to-input ops. Re-imported and run on cpu_ref,
// they agree with the IR kernels up to f32 rounding of the decomposition.
// Writes `bytes` (an export of g) to a temporary file, imports it back, and
// runs both on cpu_ref with the same seeded inputs: {g's outputs, the
// re-imported model's}.
std::pair<std::vector<HostTensor>, std::vector<HostTensor>> run_reimported(const Graph& g,
                                                                           const std::string& bytes,
                                                                           const std::string& tag,
                                                                           uint64_t seed) {
  const fs::path file = fs::temp_directory_path() / (tag + std::to_string(::getpid()) + ".onnx");
  ampx::fileio::write_file_atomically(file, bytes);
  const Graph back = onnx_io::import_onnx(file);
  fs::remove(file);
  const auto& dev = host().device("cpu_ref:0");
  const auto inputs = random_inputs(g, seed);
  Executor want_exec(g, dev), got_exec(back, dev);
  return {want_exec.run(inputs), got_exec.run(inputs)};
}

TEST(OnnxExport, DecomposedOpsRoundTrip) {
  GraphBuilder b("extra");
  const ValueId x = b.input("x", DType::kF32, {2, 3, 8});
  ValueId h = b.add(OpType::kGelu, "gelu_tanh", {x}, {{"approximate", std::string("tanh")}});
  h = b.add(OpType::kClip, "clip", {h}, {{"max", 0.75}});
  const ValueId w = b.random_weight("w", {8, 8}, 0.5f);
  const ValueId bias = b.random_weight("bias", {8}, 0.5f);
  h = b.add(OpType::kMatMul, "mm", {h, w, bias}, {{"activation", std::string("gelu_tanh")}});
  h = b.add(OpType::kSlice, "slice", {h},
            {{"starts", std::vector<int64_t>{1}},
             {"ends", std::vector<int64_t>{7}},
             {"axes", std::vector<int64_t>{2}},
             {"steps", std::vector<int64_t>{2}}});
  h = b.add(OpType::kPad, "pad", {h},
            {{"pads", std::vector<int64_t>{0, 0, 1, 0, 0, 2}}, {"value", 0.5}});
  h = b.add(OpType::kReduceSum, "sum", {h}, {{"axes", std::vector<int64_t>{1}}});
  h = b.add(OpType::kExpand, "expand", {h}, {{"shape", std::vector<int64_t>{2, 3, 1}}});
  h = b.add(OpType::kReshape, "reshape", {h}, {{"shape", std::vector<int64_t>{0, -1}}});
  b.output(h);
  const Graph g = std::move(b).build();

  onnx_io::ExportStats st;
  const std::string bytes = onnx_io::export_onnx(g, {}, &st);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  std::map<std::string, int> ops;
  for (const auto& n : m.graph().node()) ops[n.op_type()]++;
  EXPECT_EQ(ops["Tanh"], 2) << "two tanh GELUs, decomposed";
  EXPECT_EQ(ops["MatMul"], 1);
  EXPECT_EQ(ops["Add"], 5) << "bias + 2 per GELU";
  EXPECT_EQ(ops.count("Gelu"), 0u) << "no Gelu in opset 17";
  EXPECT_EQ(st.casts, 0);

  const auto [want, got] = run_reimported(g, bytes, "ampx_export_extra_", 11);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type, want[0].type);
  EXPECT_LE(max_relative_error(got[0], want[0]), 1e-5);
}

// RMSNorm has no opset-17 op: it is written as the ops that compute it, and
// the re-imported model computes what RMSNorm does. CumProd (opset 26) has
// no opset-17 form: a one-line error naming the node.
TEST(OnnxExport, RMSNormIsWrittenAsOpset17OpsAndCumProdIsRefused) {
  GraphBuilder b("rms");
  const ValueId x = b.input("x", DType::kF32, {2, 3, 8});
  const ValueId s = b.random_weight("s", {3, 8}, 0.5f);
  b.output(b.add(OpType::kRMSNorm, "rms", {x, s}, {{"axis", int64_t{1}}, {"epsilon", 0.01}}));
  const Graph g = std::move(b).build();
  const std::string bytes = onnx_io::export_onnx(g, {}, nullptr);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  std::map<std::string, int> ops;
  for (const auto& n : m.graph().node()) ops[n.op_type()]++;
  EXPECT_EQ(ops["ReduceMean"], 1);
  EXPECT_EQ(ops["Sqrt"], 1);
  EXPECT_EQ(ops.count("RMSNormalization"), 0u) << "RMSNormalization is opset 23's";
  const auto [want, got] = run_reimported(g, bytes, "ampx_export_rms_", 11);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(max_relative_error(got[0], want[0]), 1e-5);

  GraphBuilder c("cumprod");
  const ValueId y = c.input("y", DType::kF32, {2, 3});
  c.output(c.add(OpType::kCumProd, "cp", {y}, {{"axis", int64_t{1}}}));
  try {
    (void)onnx_io::export_onnx(std::move(c).build(), {}, nullptr);
    ADD_FAILURE() << "CumProd exported";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("CumProd has no ONNX form at opset 17"), std::string::npos)
        << e.what();
  }
}

// The epilogues fusion writes (a residual, BatchNorm's activation, the gated
// and parameterised activations) come out as the ONNX ops they stand for,
// and the re-imported model computes what the fused graph does.
TEST(OnnxExport, FusedEpiloguesRoundTrip) {
  GraphBuilder b("epilogues");
  const ValueId x = b.input("x", DType::kF32, {1, 4, 6, 6});
  auto conv = [&](const std::string& name, ValueId in, std::vector<ValueId> extra, AttrMap a) {
    std::vector<ValueId> ins{in, b.random_weight(name + ".w", {4, 4, 3, 3}, 0.3f),
                             b.random_weight(name + ".b", {4}, 0.1f)};
    ins.insert(ins.end(), extra.begin(), extra.end());
    a["pads"] = std::vector<int64_t>{1, 1, 1, 1};
    return b.add(OpType::kConv2d, name, std::move(ins), std::move(a));
  };
  ValueId h = conv("c1", x, {}, {{"activation", std::string("hardswish")}});
  h = conv("c2", h, {x}, {{"activation", std::string("relu")}});  // residual x
  h = conv("c3", h, {},
           {{"activation", std::string("hardsigmoid")},
            {"activation_alpha", 0.25},
            {"activation_beta", 0.5}});
  h = conv("c4", h, {}, {{"activation", std::string("swish")}});
  h = conv(
      "c5", h, {},
      {{"activation", std::string("clip")}, {"activation_alpha", -0.5}, {"activation_beta", 0.5}});
  const std::vector<float> var{0.5f, 1.0f, 1.5f, 2.0f};
  b.output(
      b.add(OpType::kBatchNorm, "bn",
            {h, b.random_weight("bn.scale", {4}, 1.0f), b.random_weight("bn.bias", {4}, 0.1f),
             b.random_weight("bn.mean", {4}, 0.1f), b.constant("bn.var", DType::kF32, {4}, var)},
            {{"activation", std::string("leaky_relu")}, {"activation_alpha", 0.1}}));
  const Graph g = std::move(b).build();

  const std::string bytes = onnx_io::export_onnx(g, {});
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  std::map<std::string, int> ops;
  for (const auto& n : m.graph().node()) ops[n.op_type()]++;
  EXPECT_EQ(ops["Conv"], 5);
  EXPECT_EQ(ops["HardSwish"], 1);
  EXPECT_EQ(ops["HardSigmoid"], 1);
  EXPECT_EQ(ops["Sigmoid"], 1);
  EXPECT_EQ(ops["Mul"], 1);
  EXPECT_EQ(ops["Clip"], 1);
  EXPECT_EQ(ops["Add"], 1) << "the residual";
  EXPECT_EQ(ops["Relu"], 1);
  EXPECT_EQ(ops["BatchNormalization"], 1);
  EXPECT_EQ(ops["LeakyRelu"], 1);

  const auto [want, got] = run_reimported(g, bytes, "ampx_export_epilogues_", 12);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(max_relative_error(got[0], want[0]), 1e-5);
}

// ExportOptions::batch_dim: the batch is a symbol on the inputs, outputs
// and intermediates that follow it, a dimension derived from it (B * 6
// after a Reshape to -1) is unknown, and the model re-imported at another
// batch size computes what the graph does there.
TEST(OnnxExport, SymbolicBatchRunsAtAnyBatch) {
  auto build = [](int64_t batch) {
    GraphBuilder b("batch", 3);
    const ValueId x = b.input("x", DType::kF32, {batch, 4});
    ValueId h = b.add(OpType::kMatMul, "mm", {x, b.random_weight("w", {4, 6}, 0.5f)});
    h = b.add(OpType::kRelu, "relu", {h});
    b.output(b.add(OpType::kReshape, "flat", {h}, {{"shape", std::vector<int64_t>{-1}}}));
    b.output(b.add(OpType::kReduceSum, "sum", {h}, {{"axes", std::vector<int64_t>{1}}}));
    return std::move(b).build();
  };
  onnx_io::ExportOptions eo;
  eo.batch_dim = "N";
  const std::string bytes = onnx_io::export_onnx(build(4), eo);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  auto dims = [](const onnx::ValueInfoProto& vi) {
    std::vector<std::string> d;
    for (const auto& dim : vi.type().tensor_type().shape().dim())
      d.push_back(dim.has_dim_param()   ? dim.dim_param()
                  : dim.has_dim_value() ? std::to_string(dim.dim_value())
                                        : "?");
    return d;
  };
  EXPECT_EQ(dims(m.graph().input(0)), (std::vector<std::string>{"N", "4"}));
  EXPECT_EQ(dims(m.graph().output(0)), (std::vector<std::string>{"?"})) << "4 * 6, unknown";
  EXPECT_EQ(dims(m.graph().output(1)), (std::vector<std::string>{"N", "1"}));
  for (const auto& vi : m.graph().value_info()) EXPECT_EQ(dims(vi).at(0), "N") << vi.name();

  // Re-imported at batch 7, it computes what the graph built at 7 does.
  const fs::path file =
      fs::temp_directory_path() / ("ampx_export_batch_" + std::to_string(getpid()));
  fileio::write_file_atomically(file, bytes);
  onnx_io::ImportOptions io;
  io.batch_size = 7;
  const Graph back = onnx_io::import_onnx(file, io);
  fs::remove(file);
  const Graph want = build(7);
  const auto& dev = host().device("cpu_ref:0");
  const auto inputs = random_inputs(want, 5);
  Executor want_exec(want, dev), got_exec(back, dev);
  const auto w = want_exec.run(inputs), g = got_exec.run(inputs);
  ASSERT_EQ(g.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(g[k].type, w[k].type);
    EXPECT_LE(max_relative_error(g[k], w[k]), 1e-6);
  }
}

// Softmax before opset 13 at axis 1 of a rank-3 input is imported as
// Reshape [-1, inner] -> Softmax -> Reshape [-1, d1, d2]: the batch stays
// free, so the import exports with a symbolic batch and the re-import at
// another batch computes what the model imported there does.
TEST(OnnxExport, LegacySoftmaxKeepsTheBatchFree) {
  ampx_onnx_test::TempDir dir;
  ampx_onnx_test::ModelMaker mm(11);
  mm.input("x", {"N", "2", "3"});
  ampx_onnx_test::ModelMaker::attr_int(mm.node("Softmax", {"x"}, {"y"}, "/Softmax"), "axis", 1);
  mm.output("y");
  const fs::path path = mm.save(dir / "softmax11.onnx");
  onnx_io::ImportOptions at4, at3;
  at4.batch_size = 4;
  at3.batch_size = 3;
  onnx_io::ExportOptions eo;
  eo.batch_dim = "N";
  const std::string bytes = onnx_io::export_onnx(onnx_io::import_onnx(path, at4), eo);
  const fs::path exported = dir / "softmax11.symbolic.onnx";
  fileio::write_file_atomically(exported, bytes);
  const Graph want = onnx_io::import_onnx(path, at3), got = onnx_io::import_onnx(exported, at3);
  const auto& dev = host().device("cpu_ref:0");
  const auto inputs = random_inputs(want, 4);
  Executor want_exec(want, dev), got_exec(got, dev);
  const auto w = want_exec.run(inputs), g = got_exec.run(inputs);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].type, w[0].type);
  EXPECT_EQ(g[0].data, w[0].data);
}

// A graph that writes its batch into a Reshape cannot be exported with a
// symbolic batch: one line naming the node.
TEST(OnnxExport, SymbolicBatchOfAFixedBatchNamesTheNode) {
  GraphBuilder b("fixed");
  const ValueId x = b.input("x", DType::kF32, {4, 6});
  b.output(b.add(OpType::kReshape, "pin", {x}, {{"shape", std::vector<int64_t>{4, 2, 3}}}));
  onnx_io::ExportOptions eo;
  eo.batch_dim = "N";
  try {
    onnx_io::export_onnx(std::move(b).build(), eo);
    FAIL() << "expected an error";
  } catch (const onnx_io::OnnxError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'pin'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("fixes its batch size"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(OnnxExport, UnwritablePathIsOneLineError) {
  const Graph g = load_model("builtin:mlp");
  try {
    onnx_io::write_onnx(g, "/nonexistent-dir/x.onnx");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("/nonexistent-dir/x.onnx"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

}  // namespace
