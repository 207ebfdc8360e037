// ONNX's LSTM, GRU and RNN (opsets 7+; `layout` from 14) as the op set's
// recurrent ops (docs/OPS.md): absent optional inputs become zero constants
// (B, initial_h, initial_c, P), layout 1 is transposed to layout 0 and back,
// and the activation list is joined by commas.
#include <fmt/format.h>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

ValueId zeros(Importer& im, DType dt, Shape shape, const char* what) {
  const TensorType type{dt, std::move(shape)};
  im.check_size(type, what);
  const int64_t n = element_count(type.shape);
  return im.constant(type, std::vector<std::byte>(static_cast<size_t>(n) * dtype_size(dt)));
}

ValueId transpose(Importer& im, ValueId v, std::vector<int64_t> perm) {
  return im.emit1("Transpose", {v}, {{"perm", std::move(perm)}});
}

const onnx::AttributeProto* find(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

}  // namespace

void recurrent(Importer& im, const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  const bool lstm = op == "LSTM", gru = op == "GRU";
  const int gates = lstm ? 4 : gru ? 3 : 1;
  const int64_t layout = im.attr_int_or(n, "layout", 0);
  if (layout != 0 && layout != 1)
    im.fail(fmt::format("attribute 'layout' is {}, it must be 0 or 1", layout));
  ValueId x = im.input(n, 0);
  const ValueId w = im.input(n, 1), r = im.input(n, 2);
  const Shape xs = im.type(x).shape;
  const Shape rs = im.type(r).shape;
  if (xs.size() != 3) im.fail(fmt::format("X must be 3-D, got rank {}", xs.size()));
  if (rs.size() != 3) im.fail(fmt::format("R must be 3-D, got rank {}", rs.size()));
  const DType dt = im.type(x).dtype;
  const std::string direction = im.attr_string_or(n, "direction", "forward");
  const int64_t D = direction == "bidirectional" ? 2 : 1;
  // hidden_size may be absent in old exports: R is [D, gates·H, H].
  const int64_t H = im.attr_int_or(n, "hidden_size", rs[2]);
  if (layout == 1) x = transpose(im, x, {1, 0, 2});
  const int64_t N = im.type(x).shape[1];

  AttrMap attrs{{"hidden_size", H}, {"direction", direction}};
  if (const auto* a = find(n, "activations")) {
    std::string joined;
    for (const auto& s : a->strings()) joined += (joined.empty() ? "" : ",") + s;
    attrs["activations"] = joined;
  }
  for (const char* name : {"activation_alpha", "activation_beta"})
    if (auto v = im.attr_floats(n, name)) attrs[name] = std::vector<double>(v->begin(), v->end());
  if (auto clip = im.attr_float(n, "clip")) attrs["clip"] = double(*clip);
  if (lstm) attrs["input_forget"] = im.attr_int_or(n, "input_forget", 0);
  if (gru) attrs["linear_before_reset"] = im.attr_int_or(n, "linear_before_reset", 0);

  // A state input in layout 1 is [N, D, H].
  auto state = [&](int i, const char* what) {
    if (!im.has_input(n, i)) return zeros(im, dt, {D, N, H}, what);
    const ValueId s = im.input(n, i);
    return layout == 1 ? transpose(im, s, {1, 0, 2}) : s;
  };
  std::vector<ValueId> ins{
      x, w, r,
      im.has_input(n, 3) ? im.input(n, 3) : zeros(im, dt, {D, 2 * gates * H}, "the bias B"),
      state(5, "initial_h")};
  if (lstm) {
    ins.push_back(state(6, "initial_c"));
    ins.push_back(im.has_input(n, 7) ? im.input(n, 7) : zeros(im, dt, {D, 3 * H}, "peepholes P"));
  }
  if (im.has_input(n, 4)) ins.push_back(im.input(n, 4));
  const std::vector<ValueId> outs = im.emit(op, std::move(ins), std::move(attrs));
  // Y [T, D, N, H] (layout 1: [N, T, D, H]); Y_h and Y_c [D, N, H] (layout 1: [N, D, H]).
  for (int i = 0; i < n.output_size() && i < static_cast<int>(outs.size()); ++i) {
    if (!im.output_used(n, i)) continue;
    ValueId v = outs[static_cast<size_t>(i)];
    if (layout == 1)
      v = transpose(im, v,
                    i == 0 ? std::vector<int64_t>{2, 0, 1, 3} : std::vector<int64_t>{1, 0, 2});
    im.bind(n, i, v);
  }
}

}  // namespace ampx::onnx_io
