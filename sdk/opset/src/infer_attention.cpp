// Output types of Attention, RotaryEmbedding and LinearAttention
// (docs/OPS.md), with ONNX's shape rules in the op set's 4-D form of
// Attention and ONNX's packed 3-D form of LinearAttention.
#include <cmath>
#include <string>

#include "infer_common.hpp"

namespace ampx::opset::detail {
namespace {

bool is_int(ampx_dtype dt) {
  return dt == AMPX_DTYPE_I64 || dt == AMPX_DTYPE_I32;
}

void window_attr(const Node& c, const char* name) {
  const int64_t w = c.v.get_int(name, -1);
  AMPX_CHECK(w >= -1, std::string("attribute '") + name + "' is " + std::to_string(w) +
                          ", expected -1 (unbounded) or >= 0");
}

// Q [B, Hq, S, E], K [B, Hkv, T, E], V [B, Hkv, T, Ev], optional mask
// (bool or Q's dtype, rank 1 to 4, broadcast right-aligned to
// [B, Hq, S, <= T]), optional nonpad_kv_seqlen [B] (needs the mask).
Outputs attention(const Node& c) {
  const TensorSpec &q = c.in[0], &k = c.in[1], &v = c.in[2];
  require_float(c, q, "Q");
  for (const auto* t : {&q, &k, &v})
    AMPX_CHECK(t->dims.size() == 4,
               "Q, K and V must be 4-D [batch, heads, sequence, head size], "
               "got " +
                   dims_str(q.dims) + ", " + dims_str(k.dims) + ", " + dims_str(v.dims));
  const int64_t B = q.dims[0], Hq = q.dims[1], S = q.dims[2], E = q.dims[3];
  const int64_t Hkv = k.dims[1], T = k.dims[2];
  AMPX_CHECK(k.dims[0] == B && v.dims[0] == B,
             "Q, K and V differ in batch size: " + dims_str(q.dims) + ", " + dims_str(k.dims) +
                 ", " + dims_str(v.dims));
  AMPX_CHECK(k.dims[3] == E, "K's head size " + std::to_string(k.dims[3]) + " differs from Q's " +
                                 std::to_string(E));
  AMPX_CHECK(v.dims[1] == Hkv && v.dims[2] == T,
             "V has shape " + dims_str(v.dims) + ", expected [" + std::to_string(B) + ", " +
                 std::to_string(Hkv) + ", " + std::to_string(T) + ", *] as K");
  AMPX_CHECK(Hkv > 0 && Hq % Hkv == 0, "Q's " + std::to_string(Hq) +
                                           " heads are not a multiple of K's and V's " +
                                           std::to_string(Hkv));
  require_same_dtype(c, std::span(c.in).subspan(0, 3));
  if (c.n > 3) {
    const TensorSpec& m = c.in[3];
    AMPX_CHECK(m.dtype == AMPX_DTYPE_BOOL || m.dtype == q.dtype,
               std::string("the mask is ") + dtype_name(m.dtype) + ", expected bool or " +
                   dtype_name(q.dtype) + " as Q");
    AMPX_CHECK(!m.dims.empty() && m.dims.size() <= 4,
               "the mask has shape " + dims_str(m.dims) + ", expected rank 1 to 4");
    const Dims want{B, Hq, S, T};
    for (size_t i = 0; i < m.dims.size(); ++i) {
      const int64_t d = m.dims[m.dims.size() - 1 - i], w = want[3 - i];
      const bool ok = i == 0 ? d <= w : d == 1 || d == w;
      AMPX_CHECK(ok, "the mask has shape " + dims_str(m.dims) +
                         ", which does not broadcast to [batch, q heads, q sequence, <= kv "
                         "sequence] = " +
                         dims_str(want));
    }
  }
  if (c.n > 4) {
    const TensorSpec& len = c.in[4];
    AMPX_CHECK(is_int(len.dtype), std::string("nonpad_kv_seqlen is ") + dtype_name(len.dtype) +
                                      ", expected i64 or i32");
    AMPX_CHECK(len.dims == Dims{B},
               "nonpad_kv_seqlen has shape " + dims_str(len.dims) + ", expected " + dims_str({B}));
  }
  if (c.v.has_attr("scale")) {
    const double s = c.v.get_float("scale", 1.0);
    AMPX_CHECK(s > 0 && s < 1e30, "attribute 'scale' must be positive and finite");
  }
  AMPX_CHECK(c.v.get_float("softcap", 0.0) >= 0, "attribute 'softcap' must be >= 0");
  (void)flag_attr(c, "is_causal");
  (void)flag_attr(c, "softmax_f64");
  const int64_t past = c.v.get_int("past_length", 0);
  AMPX_CHECK(past >= 0 && past <= T, "attribute 'past_length' is " + std::to_string(past) +
                                         ", expected 0 to the keys' " + std::to_string(T));
  window_attr(c, "left_window");
  window_attr(c, "right_window");
  const int64_t mode = c.v.get_int("qk_output", -1);
  AMPX_CHECK(mode >= -1 && mode <= 3,
             "attribute 'qk_output' is " + std::to_string(mode) + ", expected -1 to 3");
  std::vector<TensorSpec> out{{q.dtype, {B, Hq, S, v.dims[3]}}};
  if (mode >= 0) out.push_back({q.dtype, {B, Hq, S, T}});
  return out;
}

// X [B, H, S, D] or [B, S, H·D] (num_heads H); cos and sin [B, S, R/2], or
// [positions, R/2] with position_ids [B, S].
Outputs rotary_embedding(const Node& c) {
  const TensorSpec &x = c.in[0], &cs = c.in[1], &sn = c.in[2];
  require_float(c, x, "X");
  require_same_dtype(c, std::span(c.in).subspan(0, 3));
  AMPX_CHECK(x.dims.size() == 3 || x.dims.size() == 4,
             "X has shape " + dims_str(x.dims) +
                 ", expected [batch, heads, sequence, head size] "
                 "or [batch, sequence, hidden]");
  const int64_t B = x.dims[0];
  const int64_t S = x.dims.size() == 4 ? x.dims[2] : x.dims[1];
  int64_t D = 0;
  if (x.dims.size() == 4) {
    D = x.dims[3];
  } else {
    const int64_t h = c.v.get_int("num_heads", 0);
    AMPX_CHECK(h > 0 && x.dims[2] % h == 0,
               "a 3-D X needs attribute 'num_heads' > 0 dividing its hidden size " +
                   std::to_string(x.dims[2]));
    D = x.dims[2] / h;
  }
  (void)flag_attr(c, "interleaved");
  const int64_t R =
      c.v.get_int("rotary_embedding_dim", 0) == 0 ? D : c.v.get_int("rotary_embedding_dim", 0);
  AMPX_CHECK(R > 0 && R <= D && R % 2 == 0, "rotary_embedding_dim " + std::to_string(R) +
                                                " must be even and at most the head size " +
                                                std::to_string(D));
  if (c.n > 3) {
    const TensorSpec& pos = c.in[3];
    AMPX_CHECK(is_int(pos.dtype),
               std::string("position_ids is ") + dtype_name(pos.dtype) + ", expected i64 or i32");
    AMPX_CHECK(pos.dims == (Dims{B, S}),
               "position_ids has shape " + dims_str(pos.dims) + ", expected " + dims_str({B, S}));
    AMPX_CHECK(cs.dims.size() == 2 && cs.dims[1] == R / 2 && sn.dims == cs.dims,
               "with position_ids, cos_cache and sin_cache must be [positions, " +
                   std::to_string(R / 2) + "], got " + dims_str(cs.dims) + " and " +
                   dims_str(sn.dims));
  } else {
    const Dims want{B, S, R / 2};
    AMPX_CHECK(cs.dims == want && sn.dims == want,
               "without position_ids, cos_cache and sin_cache must be " + dims_str(want) +
                   ", got " + dims_str(cs.dims) + " and " + dims_str(sn.dims));
  }
  return std::vector<TensorSpec>{x};
}

// query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv],
// past_state [B, Hkv, dk, dv], then decay [B, T, Hkv*dk or Hkv] for the
// gated rules and beta [B, T, Hkv or 1] for the delta rules, one float
// dtype -> output [B, T, Hq*dv], present_state [B, Hkv, dk, dv].
Outputs linear_attention(const Node& c) {
  const TensorSpec &q = c.in[0], &k = c.in[1], &v = c.in[2], &s = c.in[3];
  require_float(c, q, "query");
  require_same_dtype(c, c.in);
  const std::string rule = c.v.get_string("update_rule", "gated_delta");
  AMPX_CHECK(rule == "linear" || rule == "gated" || rule == "delta" || rule == "gated_delta",
             "update_rule must be 'linear', 'gated', 'delta' or 'gated_delta', got '" + rule + "'");
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  const size_t want_n = 4 + (gated ? 1 : 0) + (delta ? 1 : 0);
  AMPX_CHECK(c.n == want_n, "update_rule '" + rule + "' takes " + std::to_string(want_n) +
                                " inputs (query, key, value, past_state" +
                                (gated ? ", decay" : "") + (delta ? ", beta" : "") + "), got " +
                                std::to_string(c.n));
  const int64_t hq = c.v.get_int("q_num_heads", 0), hkv = c.v.get_int("kv_num_heads", 0);
  AMPX_CHECK(hq > 0 && hkv > 0 && hq % hkv == 0,
             "q_num_heads (" + std::to_string(hq) +
                 ") must be a positive multiple of kv_num_heads (" + std::to_string(hkv) + ")");
  for (const auto* t : {&q, &k, &v})
    AMPX_CHECK(t->dims.size() == 3,
               "query, key and value must be 3-D [batch, sequence, heads * "
               "head size], got " +
                   dims_str(q.dims) + ", " + dims_str(k.dims) + ", " + dims_str(v.dims));
  const int64_t B = q.dims[0], T = q.dims[1];
  AMPX_CHECK(k.dims[0] == B && k.dims[1] == T && v.dims[0] == B && v.dims[1] == T,
             "query, key and value differ in batch or sequence: " + dims_str(q.dims) + ", " +
                 dims_str(k.dims) + ", " + dims_str(v.dims));
  AMPX_CHECK(q.dims[2] % hq == 0 && v.dims[2] % hkv == 0,
             "query's last dimension must be a multiple of q_num_heads and value's of "
             "kv_num_heads, got " +
                 dims_str(q.dims) + " and " + dims_str(v.dims));
  // Head sizes >= 1: also bounds the head counts by the dims (no overflow
  // in hq * dv from a huge attribute).
  AMPX_CHECK(q.dims[2] >= hq && v.dims[2] >= hkv,
             "query and value need head sizes >= 1, got " + dims_str(q.dims) + " for " +
                 std::to_string(hq) + " heads and " + dims_str(v.dims) + " for " +
                 std::to_string(hkv));
  const int64_t dk = q.dims[2] / hq, dv = v.dims[2] / hkv;
  AMPX_CHECK(k.dims[2] == hkv * dk, "key has shape " + dims_str(k.dims) + ", expected [" +
                                        std::to_string(B) + ", " + std::to_string(T) + ", " +
                                        std::to_string(hkv * dk) + "]");
  const Dims state{B, hkv, dk, dv};
  AMPX_CHECK(s.dims == state,
             "past_state has shape " + dims_str(s.dims) + ", expected " + dims_str(state));
  size_t i = 4;
  if (gated) {
    const Dims& d = c.in[i++].dims;
    AMPX_CHECK(d.size() == 3 && d[0] == B && d[1] == T && (d[2] == hkv || d[2] == hkv * dk),
               "decay has shape " + dims_str(d) + ", expected [" + std::to_string(B) + ", " +
                   std::to_string(T) + ", " + std::to_string(hkv) + " or " +
                   std::to_string(hkv * dk) + "]");
  }
  if (delta) {
    const Dims& d = c.in[i].dims;
    AMPX_CHECK(d.size() == 3 && d[0] == B && d[1] == T && (d[2] == hkv || d[2] == 1),
               "beta has shape " + dims_str(d) + ", expected [" + std::to_string(B) + ", " +
                   std::to_string(T) + ", " + std::to_string(hkv) + " or 1]");
  }
  const double scale = c.v.get_float("scale", 0.0);
  AMPX_CHECK(std::isfinite(scale), "attribute 'scale' must be finite");
  return std::vector<TensorSpec>{{q.dtype, {B, T, hq * dv}}, {q.dtype, state}};
}

}  // namespace

Outputs infer_attention(const Node& c, std::string_view op) {
  if (op == "Attention") return attention(c);
  if (op == "RotaryEmbedding") return rotary_embedding(c);
  if (op == "LinearAttention") return linear_attention(c);
  return std::nullopt;
}

}  // namespace ampx::opset::detail
