// ONNX's If. A condition that is a constant after folding (exporters emit
// shape checks that static shapes settle at import): the branch taken is
// converted in place of the node, the other is dropped. A condition known
// only at run time: both branches, and a Where per output (if_select).
#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <limits>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

// A NaN scalar of a float dtype (Where broadcasts it).
ValueId nan_scalar(Importer& im, DType dt) {
  std::vector<std::byte> bytes(dtype_size(dt));
  if (dt == DType::kF32) {
    const float f = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(bytes.data(), &f, 4);
  } else if (dt == DType::kF64) {
    const double d = std::numeric_limits<double>::quiet_NaN();
    std::memcpy(bytes.data(), &d, 8);
  } else {  // f16 0x7e00, bf16 0x7fc0
    const uint16_t h = dt == DType::kF16 ? 0x7e00 : 0x7fc0;
    std::memcpy(bytes.data(), &h, 2);
  }
  return im.constant(TensorType{dt, {}}, std::move(bytes));
}

const onnx::GraphProto* branch(Importer& im, const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) {
      if (a.type() != onnx::AttributeProto::GRAPH || !a.has_g())
        im.fail(fmt::format("attribute '{}' is not a graph", name));
      return &a.g();
    }
  im.fail(fmt::format("attribute '{}' is required", name));
}

// A run-time condition: both branches become part of the graph (planned
// and placed as any other nodes) and each output is Where(cond, then,
// else). Both run at every run, so their outputs must have one type; ampx
// has no run-time control flow in its executor yet.
//
// A branch that cannot be built at the pinned shapes (Silero VAD's 8 kHz
// graph given a 16 kHz frame: its LSTM input comes out 5-D) cannot run at
// those shapes in ONNX Runtime either; it fails there when selected. Here
// the other branch is kept and the failing one's outputs are NaN, so
// selecting it shows, never passes for a result; a warning names it.
// Every value a branch's nodes read is its own (an initializer, an earlier
// node's output) or an outer one: a malformed branch is an error, never a
// branch "that cannot be built at these shapes".
void check_references(Importer& im, const onnx::GraphProto& g, const char* what) {
  std::unordered_set<std::string> own;
  for (const auto& t : g.initializer()) own.insert(t.name());
  for (const auto& node : g.node()) {
    for (const auto& in : node.input())
      if (!in.empty() && !own.contains(in) && !im.has_value(in))
        im.fail(
            fmt::format("{}: node '{}' ({}) reads '{}', which neither the branch nor the "
                        "graph around it produces",
                        what, node.name(), node.op_type(), in));
    for (const auto& out : node.output()) own.insert(out);
  }
}

void if_select(Importer& im, const onnx::NodeProto& n, ValueId cond) {
  if (im.type(cond).dtype != DType::kBool || element_count(im.type(cond).shape) != 1)
    im.fail(fmt::format("the condition '{}' must be one bool", n.input(0)));
  // Sequences and optionals are lists known at import: a branch that
  // gives one needs its condition there.
  for (const auto& out : branch(im, n, "then_branch")->output())
    if (out.type().has_sequence_type() || out.type().has_optional_type())
      im.fail_needs_value(fmt::format(
          "the condition '{}' is computed at run time and the branches give a sequence or "
          "optional ('{}'), which ampx builds at import",
          n.input(0), out.name()));
  check_references(im, *branch(im, n, "then_branch"), "then_branch");
  check_references(im, *branch(im, n, "else_branch"), "else_branch");
  std::vector<ValueId> outs[2];
  std::string why[2];
  std::exception_ptr failure[2];
  const char* names[2] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    try {
      outs[b] = im.inline_subgraph(*branch(im, n, names[b]), names[b]);
    } catch (const OnnxError& e) {
      why[b] = e.what();
      failure[b] = std::current_exception();
    }
  }
  // As it was thrown (a ValueNeededError stays one).
  if (failure[0] && failure[1]) std::rethrow_exception(failure[0]);
  for (int b = 0; b < 2; ++b)
    if (!why[b].empty())
      spdlog::warn(
          "If '{}': {} cannot be built at these shapes, so its outputs are NaN when the "
          "condition selects it ({})",
          n.name(), names[b], why[b]);
  const std::vector<ValueId>& any = why[0].empty() ? outs[0] : outs[1];
  if (static_cast<int>(any.size()) != n.output_size() ||
      (why[0].empty() && why[1].empty() && outs[1].size() != outs[0].size()))
    im.fail(fmt::format("the branches have {} and {} outputs, the node has {}", outs[0].size(),
                        outs[1].size(), n.output_size()));
  for (int i = 0; i < n.output_size(); ++i) {
    ValueId v[2];
    for (int b = 0; b < 2; ++b) {
      if (why[b].empty()) {
        v[b] = outs[b][static_cast<size_t>(i)];
        continue;
      }
      const TensorType& t = im.type(any[static_cast<size_t>(i)]);
      if (!is_float(t.dtype))
        im.fail(
            fmt::format("{} cannot be built at these shapes ({}), and output {} is not a "
                        "float to mark it",
                        names[b], why[b], i));
      v[b] = nan_scalar(im, t.dtype);
    }
    if (why[0].empty() && why[1].empty() && !(im.type(v[0]) == im.type(v[1])))
      im.fail_needs_value(fmt::format(
          "the condition '{}' is computed at run time and output {} differs between the branches "
          "({} {} and {} {}): ampx runs such an If only when both branches give one type",
          n.input(0), i, dtype_name(im.type(v[0]).dtype), shape_str(im.type(v[0]).shape),
          dtype_name(im.type(v[1]).dtype), shape_str(im.type(v[1]).shape)));
    im.bind(n, i, im.emit1("Where", {cond, v[0], v[1]}));
  }
}

}  // namespace

void if_op(Importer& im, const onnx::NodeProto& n) {
  const ValueId cond = im.input(n, 0);
  const Value& v = im.value(cond);
  const ConstantData known = im.known_value(cond);
  if (!known) return if_select(im, n, cond);
  if (element_count(v.type.shape) != 1)
    im.fail(fmt::format("the condition '{}' has {} elements, expected 1", n.input(0),
                        element_count(v.type.shape)));
  bool taken = false;
  const std::byte* p = known->data();
  switch (v.type.dtype) {
    case DType::kBool:
    case DType::kI8:
    case DType::kU8:
      taken = std::to_integer<int>(p[0]) != 0;
      break;
    default:
      im.fail(fmt::format("the condition '{}' is {}, expected bool", n.input(0),
                          dtype_name(v.type.dtype)));
  }
  const char* name = taken ? "then_branch" : "else_branch";
  const onnx::GraphProto* g = branch(im, n, name);
  (void)branch(im, n, taken ? "else_branch" : "then_branch");  // both must be there
  std::vector<HeldValue> outs = im.inline_subgraph_held(*g, name);
  if (static_cast<int>(outs.size()) != n.output_size())
    im.fail(fmt::format("{} has {} outputs, the node has {}", name, outs.size(), n.output_size()));
  for (int i = 0; i < n.output_size(); ++i)
    im.bind_held(n, i, std::move(outs[static_cast<size_t>(i)]));
}

}  // namespace ampx::onnx_io
