// The transformer ops: RotaryEmbedding (rotary.comp), Attention
// (attention.comp: a workgroup per query row) and LinearAttention
// (linear_attention.comp: the state's columns walked token by token). All
// arithmetic f32 in every variant, as cpu_ref's (16-bit widened, outputs
// rounded once).
#include <algorithm>
#include <cmath>
#include <string>

#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

std::string sh(const char* name, Variant var) {
  return std::string(name) + "." + variant_suffix(var);
}

// 0 absent, 1 i32, 2 i64: how the shaders read an index input.
int32_t index_kind(const NodeView& v, size_t i, const char* what) {
  if (v.num_inputs() <= i) return 0;
  const ampx_dtype dt = v.input(i).dtype;
  if (dt == AMPX_DTYPE_I64) return 2;
  if (dt == AMPX_DTYPE_I32) return 1;
  throw Unsupported(std::string(what) + " is " + plugin_support::dtype_name(dt) +
                    ": the kernel reads i64 or i32");
}

}  // namespace

OpPlan plan_rotary_embedding(const NodeView& v, Variant var) {
  const auto x = dims_of(v.input(0));
  const bool rank4 = x.size() == 4;
  const int64_t H = rank4 ? x[1] : v.get_int("num_heads", 1);
  const int64_t S = rank4 ? x[2] : x[1];
  const int64_t D = rank4 ? x[3] : x[2] / H;
  const int64_t r = v.get_int("rotary_embedding_dim", 0);
  const int64_t R = r == 0 ? D : r;
  const int32_t pos = index_kind(v, 3, "position_ids");
  const int64_t n = numel(x);
  OpPlan plan;
  if (n == 0) return plan;
  const uint32_t es = elem_bytes(v.input(0).dtype);
  Dispatch d = linear_dispatch(sh("rotary", var), static_cast<uint64_t>(n));
  d.params = {i32(n),
              i32(S),
              i32(H),
              i32(D),
              i32(R),
              rank4 ? 1 : 0,
              v.get_int("interleaved", 0) != 0 ? 1 : 0,
              pos,
              pos ? i32(dims_of(v.input(1))[0]) : 0};
  d.tensors = {in_ref(0, es), in_ref(1, es), in_ref(2, es), pos ? in_ref(3, 4) : in_ref(0, es),
               out_ref(0, es)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

// attention.comp's loop passes for one invocation of a row's workgroup:
// the Q row load, up to three strided passes over the T keys each taking an
// E-long dot product (scores, max, exp-sum), then CHUNK keys at a time their
// weights and the E_v columns of the weighted sum over the chunk; the
// 64-wide trees' passes are a fixed ~30.
uint64_t attention_loop_passes(int64_t T, int64_t E, int64_t Ev) {
  constexpr int64_t kChunk = 2048;  // attention.comp's CHUNK
  const int64_t chunk = std::min(T, kChunk);
  const uint64_t keys = loop_passes(strided_trips(T, 64), loop_passes(E));
  const uint64_t step = loop_passes(strided_trips(chunk, 64), loop_passes(E)) +
                        loop_passes(strided_trips(Ev, 64), loop_passes(chunk));
  return loop_passes(strided_trips(E, 64)) + 3 * keys +
         loop_passes(strided_trips(T, kChunk), step) + 2 * loop_passes(strided_trips(Ev, 64)) + 64;
}

OpPlan plan_attention(const NodeView& v, Variant var, const PlanTarget& t) {
  // Shapes and attributes were checked by the op set (infer_attention.cpp).
  const auto q = dims_of(v.input(0)), k = dims_of(v.input(1)), vd = dims_of(v.input(2));
  const int64_t B = q[0], Hq = q[1], S = q[2], E = q[3], Hkv = k[1], T = k[2], Ev = vd[3];
  const int32_t mode = static_cast<int32_t>(v.get_int("qk_output", -1));
  OpPlan plan;
  const int64_t rows = B * Hq * S;
  if (rows == 0 || (Ev == 0 && (mode < 0 || T == 0))) return plan;  // nothing to write
  if (T == 0 || E == 0 || Ev == 0)
    throw Unsupported("Attention with empty keys or heads: no kernel");
  // attention.comp keeps a Q row and a Y row in shared memory.
  constexpr int64_t kMaxHead = 512;
  if (E > kMaxHead || Ev > kMaxHead)
    throw Unsupported("Attention head size " + std::to_string(std::max(E, Ev)) +
                      " > 512: attention.comp keeps a head in shared memory");
  const bool f64 = v.get_int("softmax_f64", 0) != 0;
  if (f64 && !t.float64) throw Unsupported("Attention softmax_f64: device has no shaderFloat64");
  const bool has_mask = v.num_inputs() > 3;
  const bool mask_bool = has_mask && v.input(3).dtype == AMPX_DTYPE_BOOL;
  if (mask_bool && !t.storage8)
    throw Unsupported("a bool mask: device has no storageBuffer8BitAccess");
  // The mask broadcast into [B, Hq, S, Tm] (right-aligned, as cpu_ref).
  int32_t mb = 0, mh = 0, mi = 0, tm = 0;
  if (has_mask) {
    const auto m = dims_of(v.input(3));
    std::vector<int64_t> d(4 - m.size(), 1);
    d.insert(d.end(), m.begin(), m.end());
    tm = i32(d[3]);
    mi = d[2] == 1 ? 0 : i32(d[3]);
    mh = d[1] == 1 ? 0 : i32(d[2] * d[3]);
    mb = d[0] == 1 ? 0 : i32(d[1] * d[2] * d[3]);
  }
  const int32_t lens = index_kind(v, 4, "nonpad_kv_seqlen");
  const uint32_t es = elem_bytes(v.input(0).dtype);
  // attention_sm64*: the softmax's exp-sum and quotient in f64.
  const std::string name =
      std::string(mask_bool ? "attention_bmask" : "attention") + (f64 ? "_sm64" : "");
  Dispatch d = linear_dispatch(sh(name.c_str(), var), static_cast<uint64_t>(rows), 1);
  d.params = {i32(rows),
              i32(S),
              i32(Hq),
              i32(Hkv),
              i32(T),
              i32(E),
              i32(Ev),
              float_bits(v.get_float("scale", 1.0 / std::sqrt(double(E)))),
              float_bits(v.get_float("softcap", 0.0)),
              v.get_int("is_causal", 0) != 0 ? 1 : 0,
              i32(v.get_int("past_length", 0)),
              i32(v.get_int("left_window", -1)),
              i32(v.get_int("right_window", -1)),
              mode,
              has_mask ? 1 : 0,
              mb,
              mh,
              mi,
              tm,
              lens};
  d.loop_iterations = attention_loop_passes(T, E, Ev);
  d.tensors = {in_ref(0, es),
               in_ref(1, es),
               in_ref(2, es),
               has_mask ? in_ref(3, mask_bool ? 1 : es) : in_ref(0, es),
               lens ? in_ref(4, 4) : in_ref(0, es),
               out_ref(0, es),
               out_ref(mode >= 0 ? 1 : 0, es)};
  plan.dispatches.push_back(std::move(d));
  return plan;
}

OpPlan plan_linear_attention(const NodeView& v, Variant var) {
  // Shapes and attributes were checked by the op set (infer_attention.cpp).
  const std::string rule = v.get_string("update_rule", "gated_delta");
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  const auto q = dims_of(v.input(0)), val = dims_of(v.input(2)), st = dims_of(v.input(3));
  const int64_t B = q[0], T = q[1], Hq = v.get_int("q_num_heads", 0),
                Hkv = v.get_int("kv_num_heads", 0), dk = st[2], dv = st[3];
  const size_t decay = 4, beta = gated ? 5 : 4;
  const bool per_key = gated && dims_of(v.input(decay)).back() == Hkv * dk;
  const bool per_head = delta && dims_of(v.input(beta)).back() == Hkv;
  const double sc = v.get_float("scale", 0.0);
  const int64_t cols = B * Hkv * dv;
  OpPlan plan;
  if (cols == 0) return plan;  // no state, no output
  if (dk == 0) throw Unsupported("LinearAttention with an empty key dimension: no kernel");
  const bool tokens = T > 0 && Hq > 0;
  const uint32_t es = elem_bytes(v.input(0).dtype);
  plan.scratch_bytes = static_cast<uint64_t>(cols * dk) * 4;
  i32(cols * dk);
  const std::vector<int32_t> params = {
      i32(cols),
      i32(T),
      i32(Hq),
      i32(Hkv),
      i32(dk),
      i32(dv),
      gated ? 1 : 0,
      delta ? 1 : 0,
      per_key ? 1 : 0,
      per_head ? 1 : 0,
      float_bits(sc == 0.0 ? 1.0 / std::sqrt(static_cast<double>(dk)) : sc)};
  const TensorRef first = in_ref(tokens ? 0 : 3, es);
  for (uint32_t phase : {0u, 1u, 2u}) {
    if (phase == 1 && !tokens) continue;  // an empty sequence: the state passes through
    Dispatch d = linear_dispatch(sh("linear_attention", var), static_cast<uint64_t>(cols), 64);
    d.spec = {phase};
    d.params = params;
    // Phase 1: every token updates the dk-long state column (decay, delta
    // read, update) and writes the group's outputs; 0 and 2 copy the state.
    const int64_t group = Hq / std::max<int64_t>(Hkv, 1);
    d.loop_iterations =
        phase == 1 ? loop_passes(T, 3 * loop_passes(dk) + loop_passes(group, loop_passes(dk)))
                   : loop_passes(dk);
    if (phase == 1)
      d.tensors = {in_ref(0, es),
                   in_ref(1, es),
                   in_ref(2, es),
                   gated ? in_ref(decay, es) : in_ref(0, es),
                   delta ? in_ref(beta, es) : in_ref(0, es),
                   scratch_ref(),
                   out_ref(0, es)};
    else
      d.tensors = {phase == 0 ? in_ref(3, es) : first,
                   first,
                   first,
                   first,
                   first,
                   scratch_ref(),
                   out_ref(1, es)};
    plan.dispatches.push_back(std::move(d));
  }
  return plan;
}

}  // namespace ampx::vulkan
