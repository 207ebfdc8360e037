// The LLM building blocks of ONNX opsets 27-28 that are compositions of
// op-set ops (docs/ONNX.md): each is written as ONNX's own function body,
// so every backend runs it and the planner sees each part's AMP category.
//   SwiGLU (28)               Swish_alpha(A) * B: Mul(A, Sigmoid(alpha * A)) * B
//   CausalConvWithState (27)  Concat(past_state or zeros, input) on the time
//                             axis, a depthwise Conv (group = channels, no
//                             padding), SiLU in f32 when asked, and the
//                             present state = the last k - 1 steps of that
//                             concatenation (Slice)
#include <fmt/format.h>

#include <cstring>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

using N = onnx::NodeProto;

ValueId reshape(Importer& im, ValueId v, const Shape& shape) {
  return im.emit1("Reshape", {v}, {{"shape", std::vector<int64_t>(shape.begin(), shape.end())}});
}

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", s[i]);
  return out + "]";
}

// Input i of the type T every input shares: f32, f16 or bf16 (the schema's).
ValueId typed_input(Importer& im, const N& n, int i, const char* name, DType t) {
  const ValueId v = im.input(n, i);
  if (im.type(v).dtype != t)
    im.fail(fmt::format("{} is {}, expected {} (the input's type)", name,
                        dtype_name(im.type(v).dtype), dtype_name(t)));
  return v;
}

void require_shape(Importer& im, ValueId v, const char* name, const Shape& want) {
  if (im.type(v).shape != want)
    im.fail(fmt::format("{} has shape {}, expected {}", name, shape_text(im.type(v).shape),
                        shape_text(want)));
}

}  // namespace

// Y = A * sigmoid(alpha * A) * B, A and B of one shape and type (no
// broadcasting: ONNX's shape inference refuses it).
void swiglu(Importer& im, const N& n) {
  const ValueId a = im.input(n, 0), b = im.input(n, 1);
  const TensorType& ta = im.type(a);
  if (!is_float(ta.dtype))
    im.fail(fmt::format("A is {}, expected a float tensor", dtype_name(ta.dtype)));
  if (im.type(b).dtype != ta.dtype)
    im.fail(fmt::format("B is {}, A is {}: they must have one type", dtype_name(im.type(b).dtype),
                        dtype_name(ta.dtype)));
  require_shape(im, b, "B", ta.shape);
  const ValueId alpha = cast_scalar(im, ta.dtype, im.attr_float_or(n, "alpha", 1.0f));
  const ValueId gate = im.emit1("Mul", {a, im.emit1("Sigmoid", {im.emit1("Mul", {alpha, a})})});
  im.bind(n, 0, im.emit1("Mul", {gate, b}));
}

// input [B, C, L], weight [C, 1, k], bias [C]?, past_state [B, C, k - 1]?
// -> output [B, C, L], present_state [B, C, k - 1].
void causal_conv_with_state(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const DType t = im.type(x).dtype;
  if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16)
    im.fail(fmt::format("input is {}, expected float, float16 or bfloat16", dtype_name(t)));
  const Shape xs = im.type(x).shape;
  if (xs.size() != 3)
    im.fail(fmt::format("input must be 3-D (batch, channels, length), got rank {}", xs.size()));
  const int64_t batch = xs[0], channels = xs[1], length = xs[2];
  const ValueId w = typed_input(im, n, 1, "weight", t);
  const Shape ws = im.type(w).shape;
  if (ws.size() != 3 || ws[0] != channels || ws[1] != 1 || ws[2] < 1)
    im.fail(fmt::format("weight has shape {}, expected [{}, 1, k] with k >= 1", shape_text(ws),
                        channels));
  const int64_t k = ws[2];
  const std::string activation = im.attr_string_or(n, "activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    im.fail(fmt::format("activation '{}' is not one of none, silu, swish", activation));

  // The causal window: past_state (or k - 1 zeros) before the input.
  ValueId padded = x;
  if (im.has_input(n, 3)) {
    const ValueId past = typed_input(im, n, 3, "past_state", t);
    require_shape(im, past, "past_state", {batch, channels, k - 1});
    if (k > 1) padded = im.emit1("Concat", {past, x}, {{"axis", int64_t{2}}});
  } else if (k > 1) {
    padded = im.emit1("Pad", {x},
                      {{"pads", std::vector<int64_t>{0, 0, k - 1, 0, 0, 0}},
                       {"mode", std::string("constant")},
                       {"value", 0.0}});
  }
  const int64_t total = length + k - 1;

  // The depthwise valid convolution, 1-D as the 2-D op over [B, C, 1, L + k - 1].
  std::vector<ValueId> ins{reshape(im, padded, {batch, channels, 1, total}),
                           reshape(im, w, {channels, 1, 1, k})};
  if (im.has_input(n, 2)) {
    const ValueId bias = typed_input(im, n, 2, "bias", t);
    require_shape(im, bias, "bias", {channels});
    ins.push_back(bias);
  }
  ValueId y = im.emit1("Conv2d", std::move(ins),
                       {{"group", channels},
                        {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                        {"strides", std::vector<int64_t>{1, 1}},
                        {"dilations", std::vector<int64_t>{1, 1}}});
  y = reshape(im, y, {batch, channels, length});
  if (activation != "none") {
    // SiLU in f32 and back, as ONNX's function body and reference do.
    ValueId yf = t == DType::kF32 ? y : im.emit1("Cast", {y}, {{"to", int64_t(to_c(DType::kF32))}});
    yf = im.emit1("Mul", {yf, im.emit1("Sigmoid", {yf})});
    y = t == DType::kF32 ? yf : im.emit1("Cast", {yf}, {{"to", int64_t(to_c(t))}});
  }
  im.bind(n, 0, y);

  // The present state: the last k - 1 steps of the window (none for k = 1).
  const TensorType state_type{t, {batch, channels, k - 1}};
  im.check_size(state_type, "present_state");
  ValueId state;
  if (k == 1)
    state = im.constant(state_type, {});
  else
    state = im.emit1("Slice", {padded},
                     {{"starts", std::vector<int64_t>{length}},
                      {"ends", std::vector<int64_t>{total}},
                      {"axes", std::vector<int64_t>{2}}});
  im.bind(n, 1, state);
}

}  // namespace ampx::onnx_io
