// ONNX's Attention (opset 23+) and RotaryEmbedding (23+) as the op set's
// fused ops (docs/OPS.md, docs/ONNX.md). Attention's 3-D inputs are
// reshaped to 4-D [batch, heads, sequence, head size] and Y back; the KV
// cache is a Concat (present_key = past_key ++ K along the sequence), and
// the cache's length aligns the causal and window frontiers; a
// nonpad_kv_seqlen without a mask gets an all-true mask so that the op's
// optional inputs stay positional. LinearAttention (27+) is the op set's
// LinearAttention in ONNX's own packed 3-D layout: an absent past_state
// becomes a zero constant, and a state type other than the activations'
// runs the op in f32 between Casts.
//
// ai.onnx.preview's FlexAttention: without score_mod/prob_mod it is the
// fused Attention op (scale only); with them it is composed as ONNX's
// reference computes it, the modifiers inlined between the products:
//   S = (Q·√s)(K·√s)ᵀ in the inputs' dtype, cast to the softmax dtype
//   (f32; f64 for double inputs; softmax_precision when given),
//   S = score_mod(S), P = Softmax(S), P = prob_mod(P),
//   Y = Cast(P · Cast(V)) to V's dtype.
// Grouped-query heads need no copies: Q's Hq heads regroup as
// [B, Hkv, g·L, E] against K's [B, Hkv, S, E] (query head h reads KV head
// h/g), and the scores and probabilities reshape between that and the
// [B, Hq, L, S] the modifiers see.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {
namespace {

// [B, S, H·D] -> [B, H, S, D].
ValueId to_heads(Importer& im, ValueId x, int64_t heads, const char* what) {
  const Shape s = im.type(x).shape;
  if (heads <= 0 || s[2] % heads != 0)
    im.fail(
        fmt::format("{} has hidden size {}, not a multiple of its {} heads", what, s[2], heads));
  const ValueId r =
      im.emit1("Reshape", {x}, {{"shape", std::vector<int64_t>{s[0], s[1], heads, s[2] / heads}}});
  return im.emit1("Transpose", {r}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
}

const onnx::GraphProto* modifier(Importer& im, const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) {
      if (a.type() != onnx::AttributeProto::GRAPH || !a.has_g())
        im.fail(fmt::format("attribute '{}' is not a graph", name));
      if (a.g().input_size() != 1 || a.g().output_size() != 1)
        im.fail(fmt::format("attribute '{}' must have one input and one output, it has {} and {}",
                            name, a.g().input_size(), a.g().output_size()));
      return &a.g();
    }
  return nullptr;
}

// The modifier applied to x ([B, Hq, L, S]): same shape and dtype out. Its
// values' names take the node's output name and its own as a suffix: both
// modifiers, and those of other FlexAttention nodes, may name theirs alike.
ValueId apply_modifier(Importer& im, const onnx::NodeProto& n, const onnx::GraphProto& g,
                       const char* name, ValueId x) {
  const ValueId y = im.inline_subgraph(g, name, std::span<const ValueId>(&x, 1),
                                       fmt::format("@{}.{}", n.output(0), name))
                        .at(0);
  if (im.type(y).dtype != im.type(x).dtype || im.type(y).shape != im.type(x).shape)
    im.fail(fmt::format("{} must return its input's type {}{}, it returns {}{}", name,
                        dtype_name(im.type(x).dtype), shape_str(im.type(x).shape),
                        dtype_name(im.type(y).dtype), shape_str(im.type(y).shape)));
  return y;
}

ValueId reshaped(Importer& im, ValueId x, std::vector<int64_t> shape) {
  return im.emit1("Reshape", {x}, {{"shape", std::move(shape)}});
}

}  // namespace

void attention(Importer& im, const onnx::NodeProto& n) {
  ValueId q = im.input(n, 0), k = im.input(n, 1), v = im.input(n, 2);
  const size_t rank = im.type(q).shape.size();
  if (rank != 3 && rank != 4) im.fail(fmt::format("Q must be 3-D or 4-D, got rank {}", rank));
  if (im.type(k).shape.size() != rank || im.type(v).shape.size() != rank)
    im.fail("Q, K and V must have the same rank");
  if (rank == 3) {
    const auto qh = im.attr_int(n, "q_num_heads"), kvh = im.attr_int(n, "kv_num_heads");
    if (!qh || !kvh) im.fail("3-D inputs need attributes 'q_num_heads' and 'kv_num_heads'");
    q = to_heads(im, q, *qh, "Q");
    k = to_heads(im, k, *kvh, "K");
    v = to_heads(im, v, *kvh, "V");
  } else {
    // 4-D: the heads are the inputs' dim 1; the attributes, if given, agree.
    for (const auto& [name, x] : {std::pair{"q_num_heads", q}, std::pair{"kv_num_heads", k}})
      if (const auto h = im.attr_int(n, name); h && *h != im.type(x).shape[1])
        im.fail(fmt::format("attribute '{}' is {}, but the 4-D input has {} heads", name, *h,
                            im.type(x).shape[1]));
  }
  AttrMap attrs;
  const bool has_past = im.has_input(n, 4) || im.has_input(n, 5);
  if (has_past) {
    if (!im.has_input(n, 4) || !im.has_input(n, 5))
      im.fail("past_key and past_value must be given together");
    const ValueId pk = im.input(n, 4), pv = im.input(n, 5);
    if (im.type(pk).shape.size() != 4 || im.type(pv).shape.size() != 4)
      im.fail("past_key and past_value must be 4-D");
    attrs["past_length"] = im.type(pk).shape[2];
    k = im.emit1("Concat", {pk, k}, {{"axis", int64_t{2}}});
    v = im.emit1("Concat", {pv, v}, {{"axis", int64_t{2}}});
  }
  const bool has_len = im.has_input(n, 6);
  if (has_len && has_past)
    im.fail("nonpad_kv_seqlen cannot be combined with past_key and past_value");
  if (const auto s = im.attr_float(n, "scale")) attrs["scale"] = double(*s);
  if (const auto s = im.attr_float(n, "softcap"); s && *s != 0) attrs["softcap"] = double(*s);
  if (im.attr_int_or(n, "is_causal", 0) != 0) attrs["is_causal"] = int64_t{1};
  // Opset 25's sliding window: -1 unbounded.
  for (const auto& [onnx_name, name] : {std::pair{"left_window_size", "left_window"},
                                        std::pair{"right_window_size", "right_window"}})
    if (const auto w = im.attr_int(n, onnx_name); w && *w != -1) attrs[name] = *w;
  // Every kernel computes the softmax in f32 at least (f64 in the
  // reference's float64 mode): a float, float16 or bfloat16 request is met;
  // double is asked of the kernel (softmax_f64).
  if (const auto p = im.attr_int(n, "softmax_precision"); p && *p != 0) {
    if (*p == 11)
      attrs["softmax_f64"] = int64_t{1};
    else if (*p != 1 && *p != 10 && *p != 16)
      im.fail(
          fmt::format("softmax_precision {} is not a float type (float, float16, bfloat16 "
                      "or double)",
                      *p));
  }
  const bool want_qk = n.output_size() > 3 && im.output_used(n, 3);
  if (want_qk) {
    const int64_t mode = im.attr_int_or(n, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
      im.fail(fmt::format("qk_matmul_output_mode is {}, expected 0 to 3", mode));
    attrs["qk_output"] = mode;
  }
  std::vector<ValueId> ins{q, k, v};
  if (im.has_input(n, 3)) {
    ins.push_back(im.input(n, 3));
  } else if (has_len) {
    const int64_t t = im.type(k).shape[2];
    ins.push_back(im.constant({DType::kBool, {t}},
                              std::vector<std::byte>(static_cast<size_t>(t), std::byte{1})));
  }
  if (has_len) ins.push_back(im.input(n, 6));
  const std::vector<ValueId> outs = im.emit("Attention", std::move(ins), std::move(attrs));
  ValueId y = outs[0];
  if (rank == 3) {
    const Shape ys = im.type(y).shape;  // [B, H, S, Dv] -> [B, S, H·Dv]
    y = im.emit1("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    y = im.emit1("Reshape", {y}, {{"shape", std::vector<int64_t>{ys[0], ys[2], ys[1] * ys[3]}}});
  }
  im.bind(n, 0, y);
  if (n.output_size() > 1 && im.output_used(n, 1)) im.bind(n, 1, k);
  if (n.output_size() > 2 && im.output_used(n, 2)) im.bind(n, 2, v);
  if (want_qk) im.bind(n, 3, outs[1]);
}

void flex_attention(Importer& im, const onnx::NodeProto& n) {
  const ValueId q = im.input(n, 0), k = im.input(n, 1), v = im.input(n, 2);
  const DType dt = im.type(q).dtype;
  if (!is_float(dt)) im.fail(fmt::format("Q is {}, expected a float tensor", dtype_name(dt)));
  if (im.type(k).dtype != dt || im.type(v).dtype != dt)
    im.fail("Q, K and V must have the same element type");
  const Shape qs = im.type(q).shape, ks = im.type(k).shape, vs = im.type(v).shape;
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4)
    im.fail(fmt::format("Q, K and V must be 4-D, got ranks {}, {} and {}", qs.size(), ks.size(),
                        vs.size()));
  const int64_t b = qs[0], hq = qs[1], l = qs[2], e = qs[3];
  const int64_t hkv = ks[1], s = ks[2], ev = vs[3];
  if (ks[0] != b || vs[0] != b) im.fail("Q, K and V must have the same batch size");
  if (vs[1] != hkv || vs[2] != s) im.fail("K and V must have the same heads and sequence length");
  if (ks[3] != e) im.fail(fmt::format("Q's head size is {}, K's {}", e, ks[3]));
  if (hkv <= 0 || hq % hkv != 0)
    im.fail(fmt::format("Q's {} heads are not a multiple of K's {}", hq, hkv));
  const double scale = im.attr_float(n, "scale").value_or(1.0 / std::sqrt(double(e)));
  // ONNX's reference multiplies Q and K by √scale each.
  if (!std::isfinite(scale) || scale < 0)
    im.fail(fmt::format("scale is {}, expected a finite value >= 0", scale));
  const onnx::GraphProto* score_mod = modifier(im, n, "score_mod");
  const onnx::GraphProto* prob_mod = modifier(im, n, "prob_mod");
  // The softmax's dtype, which the modifiers see: ONNX's default is f32
  // (f64 for double inputs).
  DType sdt = dt == DType::kF64 ? DType::kF64 : DType::kF32;
  const auto precision = im.attr_int(n, "softmax_precision");
  if (precision) {
    const auto p = dtype_from_onnx(int32_t(*precision));
    if (!p || !is_float(*p))
      im.fail(
          fmt::format("softmax_precision {} is not a float type (float, float16, bfloat16 "
                      "or double)",
                      *precision));
    sdt = *p;
  }
  if (!score_mod && !prob_mod && scale > 0 && (sdt == DType::kF32 || sdt == DType::kF64)) {
    // Attention computes in f32 (f64 with softmax_f64), which is the
    // softmax dtype asked for; its scale must be positive.
    AttrMap attrs{{"scale", scale}};
    if (sdt == DType::kF64) attrs["softmax_f64"] = int64_t{1};
    im.bind(n, 0, im.emit1("Attention", {q, k, v}, std::move(attrs)));
    return;
  }
  // ONNX's reference scales Q and K by √scale, taken in f32 and rounded to
  // the inputs' dtype.
  const ValueId root = cast_scalar(im, dt, double(std::sqrt(static_cast<float>(scale))));
  const int64_t g = hq / hkv;
  const ValueId qg = reshaped(im, im.emit1("Mul", {q, root}), {b, hkv, g * l, e});
  const ValueId kt = im.emit1("Transpose", {im.emit1("Mul", {k, root})},
                              {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  ValueId scores = reshaped(im, im.emit1("MatMul", {qg, kt}), {b, hq, l, s});
  if (sdt != dt) scores = im.emit1("Cast", {scores}, {{"to", int64_t(to_c(sdt))}});
  if (score_mod) scores = apply_modifier(im, n, *score_mod, "score_mod", scores);
  ValueId probs = im.emit1("Softmax", {scores}, {{"axis", int64_t{-1}}});
  if (prob_mod) probs = apply_modifier(im, n, *prob_mod, "prob_mod", probs);
  const ValueId vc = sdt != dt ? im.emit1("Cast", {v}, {{"to", int64_t(to_c(sdt))}}) : v;
  ValueId y = im.emit1("MatMul", {reshaped(im, probs, {b, hkv, g * l, s}), vc});
  y = reshaped(im, y, {b, hq, l, ev});
  if (sdt != dt) y = im.emit1("Cast", {y}, {{"to", int64_t(to_c(dt))}});
  im.bind(n, 0, y);
}

void rotary_embedding(Importer& im, const onnx::NodeProto& n) {
  std::vector<ValueId> ins{im.input(n, 0), im.input(n, 1), im.input(n, 2)};
  if (im.has_input(n, 3)) ins.push_back(im.input(n, 3));
  AttrMap attrs;
  for (const char* name : {"interleaved", "rotary_embedding_dim", "num_heads"})
    if (const auto a = im.attr_int(n, name)) attrs[name] = *a;
  im.bind(n, 0, im.emit1("RotaryEmbedding", std::move(ins), std::move(attrs)));
}

// query, key, value [B, T, H*D], past_state? [B, Hkv, dk, dv], decay?, beta?
// -> output [B, T, Hq*dv], present_state. The op set checks the shapes.
void linear_attention(Importer& im, const onnx::NodeProto& n) {
  const ValueId q = im.input(n, 0);
  const DType t = im.type(q).dtype;
  if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16)
    im.fail(fmt::format("query is {}, expected float, float16 or bfloat16", dtype_name(t)));
  const std::string rule = im.attr_string_or(n, "update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    im.fail(fmt::format("update_rule '{}' is not one of linear, gated, delta, gated_delta", rule));
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  if (gated != im.has_input(n, 4))
    im.fail(fmt::format("update_rule '{}' {} the decay input", rule, gated ? "needs" : "forbids"));
  if (delta != im.has_input(n, 5))
    im.fail(fmt::format("update_rule '{}' {} the beta input", rule, delta ? "needs" : "forbids"));
  const auto hq = im.attr_int(n, "q_num_heads"), hkv = im.attr_int(n, "kv_num_heads");
  if (!hq || !hkv) im.fail("attributes 'q_num_heads' and 'kv_num_heads' are required");
  if (*hq <= 0 || *hkv <= 0 || *hq % *hkv != 0)
    im.fail(fmt::format("q_num_heads ({}) must be a positive multiple of kv_num_heads ({})", *hq,
                        *hkv));
  const float scale = im.attr_float_or(n, "scale", 0.0f);
  if (!std::isfinite(scale)) im.fail("attribute 'scale' must be finite");

  std::vector<ValueId> ins{q, im.input(n, 1), im.input(n, 2)};
  for (int i : {1, 2})
    if (im.type(ins[static_cast<size_t>(i)]).dtype != t)
      im.fail(fmt::format("{} is {}, query is {}: they must have one type",
                          i == 1 ? "key" : "value",
                          dtype_name(im.type(ins[static_cast<size_t>(i)]).dtype), dtype_name(t)));
  const Shape qs = im.type(q).shape, vs = im.type(ins[2]).shape;
  if (qs.size() != 3 || vs.size() != 3)
    im.fail("query, key and value must be 3-D [batch, sequence, heads * head size]");
  if (qs[2] % *hq != 0 || vs[2] % *hkv != 0)
    im.fail(
        fmt::format("query's last dimension {} is not a multiple of q_num_heads {}, or "
                    "value's {} of kv_num_heads {}",
                    qs[2], *hq, vs[2], *hkv));
  // The state's type S (past_state's, else T's): another than T runs the op
  // in f32, as ONNX's reference computes, and casts each output back.
  DType s = t;
  ValueId state;
  if (im.has_input(n, 3)) {
    state = im.input(n, 3);
    s = im.type(state).dtype;
    if (s != DType::kF32 && s != DType::kF16 && s != DType::kBF16)
      im.fail(fmt::format("past_state is {}, expected float, float16 or bfloat16", dtype_name(s)));
  } else {
    const TensorType zeros{t, {qs[0], *hkv, qs[2] / *hq, vs[2] / *hkv}};
    im.check_size(zeros, "the zero past_state");
    state = im.constant(
        zeros,
        std::vector<std::byte>(static_cast<size_t>(element_count(zeros.shape)) * dtype_size(t)));
  }
  ins.push_back(state);
  for (int i : {4, 5}) {
    if (!im.has_input(n, i)) continue;
    const ValueId x = im.input(n, i);
    if (im.type(x).dtype != t)
      im.fail(fmt::format("{} is {}, query is {}: they must have one type",
                          i == 4 ? "decay" : "beta", dtype_name(im.type(x).dtype), dtype_name(t)));
    ins.push_back(x);
  }
  const DType compute = s == t ? t : DType::kF32;
  const auto cast = [&](ValueId v, DType to) {
    return im.type(v).dtype == to ? v : im.emit1("Cast", {v}, {{"to", int64_t(to_c(to))}});
  };
  for (ValueId& v : ins) v = cast(v, compute);
  AttrMap attrs{{"update_rule", rule},
                {"scale", static_cast<double>(scale)},
                {"q_num_heads", *hq},
                {"kv_num_heads", *hkv}};
  const auto outs = im.emit("LinearAttention", std::move(ins), std::move(attrs));
  im.bind(n, 0, cast(outs.at(0), t));
  im.bind(n, 1, cast(outs.at(1), s));
}

}  // namespace ampx::onnx_io
