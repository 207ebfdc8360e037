// libFuzzer target: an ONNX file through import (parsing, shape inference,
// constant folding, pattern fusion, verification) and AMP planning with
// placement on cpu_ref, as `ampx plan FILE --device cpu_ref:0` does.
// Symbolic input dimensions are pinned to 1, as --input-shape would.
#include <ampx/amp/planner.hpp>
#include <ampx/onnx/onnx_import.hpp>
#include <ampx/session/session.hpp>

#include <onnx/onnx_pb.h>

#include <memory>

#include "fuzz_support.hpp"

namespace {

// What a user would pass: --input-shape pinning every symbolic dimension
// of a graph input to 1 (the input is parsed once more for that; a file
// protobuf cannot parse gets no shapes, and import rejects it).
ampx::onnx_io::ImportOptions import_options(const uint8_t* data, size_t size) {
  ampx::onnx_io::ImportOptions options;
  // Small enough that no input makes the fuzzer run out of memory, large
  // enough for every seed: the bound itself is what is being exercised.
  options.max_tensor_bytes = 64ull << 20;
  onnx::ModelProto model;
  if (size > static_cast<size_t>(INT32_MAX) || !model.ParseFromArray(data, static_cast<int>(size)))
    return options;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) continue;
    const onnx::TensorShapeProto& proto = input.type().tensor_type().shape();
    ampx::Shape shape;
    bool symbolic = false;
    for (const onnx::TensorShapeProto_Dimension& d : proto.dim()) {
      symbolic = symbolic || !d.has_dim_value();
      shape.push_back(d.has_dim_value() ? d.dim_value() : 1);
    }
    if (symbolic) options.input_shapes[input.name()] = shape;
  }
  return options;
}

ampx::AmpPolicy policy(ampx::AmpLevel level, ampx::DType half) {
  ampx::AmpPolicy p;
  p.level = level;
  p.half = half;
  return p;
}

std::unique_ptr<ampx::Session> g_session;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ampx::fuzz::quiet_logs();
  g_session = std::make_unique<ampx::Session>(ampx::SessionOptions{
      .devices = "cpu_ref:0",
      .use_costs = false,
      .use_tuned = false,
      .db_path = (ampx::fuzz::scratch_dir().parent_path() / "ampx-fuzz-unused.db").string(),
      .trust_plugins = true});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = ampx::fuzz::write_input(data, size, "model.onnx");
  const ampx::onnx_io::ImportOptions options = import_options(data, size);
  ampx::fuzz::expect_clean_rejection([&] {
    const ampx::Graph graph = ampx::onnx_io::import_onnx(path, options);
    (void)g_session->plan(graph, {.policy = policy(ampx::AmpLevel::kO2, ampx::DType::kF16)});
    (void)g_session->plan(graph, {.policy = policy(ampx::AmpLevel::kO1, ampx::DType::kBF16)});
  });
  return 0;
}
