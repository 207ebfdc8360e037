// LinearAttention (docs/OPS.md): ONNX's recurrence (opset 27) token by
// token, one state S [dk, dv] per batch and KV head, in T (f32, or f64 in
// the float64 mode; 16-bit data arrives widened to f32):
//   gated:  S *= exp(g_t)                 (per key row, or one per head)
//   delta:  v_t = beta_t * (v_t - S^T k_t)  (with the decayed S)
//   all:    S += k_t ⊗ v_t
//   read:   o_t = scale * q_t^T S         (each query head of the group)
// Inputs in ONNX's packed layout: query [B, T, Hq*dk], key [B, T, Hkv*dk],
// value [B, T, Hkv*dv], past_state [B, Hkv, dk, dv], then decay
// [B, T, Hkv*dk or Hkv] (gated rules) and beta [B, T, Hkv or 1] (delta
// rules). Query head j reads KV head j / (Hq / Hkv), as ONNX's np.repeat.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

struct LinearGeo {
  int64_t b = 0, t = 0, hq = 0, hkv = 0, dk = 0, dv = 0;
  bool gated = false, delta = false;
  bool decay_per_key = false;  // decay [B, T, Hkv*dk], else [B, T, Hkv]
  bool beta_per_head = false;  // beta [B, T, Hkv], else [B, T, 1]
  double scale = 1;
};

template <class T>
class LinearAttentionKernel final : public CpuKernel {
 public:
  explicit LinearAttentionKernel(LinearGeo g) : g_(g) {}

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* past = static_cast<const T*>(in[3]);
    auto* state = static_cast<T*>(out[1]);
    const int64_t cells = g_.dk * g_.dv;
    std::copy(past, past + g_.b * g_.hkv * cells, state);
    const double work = static_cast<double>(g_.t * g_.b * g_.hq * cells) * 8;
    // One task per (batch, KV head): its state and its query heads' outputs
    // are its own.
    parallel_for(g_.b * g_.hkv, threads_for(work), [&](int64_t p0, int64_t p1) {
      std::vector<T> vt(static_cast<size_t>(g_.dv));
      for (int64_t p = p0; p < p1; ++p) step_all(in, out, p / g_.hkv, p % g_.hkv, vt);
    });
  }

 private:
  // Every token of batch n, KV head h.
  void step_all(std::span<const void* const> in, std::span<void* const> out, int64_t n, int64_t h,
                std::vector<T>& vt) const {
    const auto* q = static_cast<const T*>(in[0]);
    const auto* k = static_cast<const T*>(in[1]);
    const auto* v = static_cast<const T*>(in[2]);
    const T* decay = g_.gated ? static_cast<const T*>(in[4]) : nullptr;
    const T* beta = g_.delta ? static_cast<const T*>(in[g_.gated ? 5 : 4]) : nullptr;
    auto* y = static_cast<T*>(out[0]);
    T* s = static_cast<T*>(out[1]) + (n * g_.hkv + h) * g_.dk * g_.dv;
    const int64_t group = g_.hq / g_.hkv;
    const auto scale = static_cast<T>(g_.scale);
    for (int64_t t = 0; t < g_.t; ++t) {
      const int64_t row = n * g_.t + t;  // the token's row of the packed inputs
      const T* kt = k + (row * g_.hkv + h) * g_.dk;
      const T* vin = v + (row * g_.hkv + h) * g_.dv;
      if (decay) {
        const int64_t width = g_.decay_per_key ? g_.hkv * g_.dk : g_.hkv;
        const T* gt = decay + row * width + (g_.decay_per_key ? h * g_.dk : h);
        for (int64_t i = 0; i < g_.dk; ++i) {
          const T f = std::exp(gt[g_.decay_per_key ? i : 0]);
          for (int64_t m = 0; m < g_.dv; ++m) s[i * g_.dv + m] *= f;
        }
      }
      for (int64_t m = 0; m < g_.dv; ++m) vt[static_cast<size_t>(m)] = vin[m];
      if (beta) {
        const T bt = beta[row * (g_.beta_per_head ? g_.hkv : 1) + (g_.beta_per_head ? h : 0)];
        for (int64_t m = 0; m < g_.dv; ++m) {
          T got = 0;  // (S^T k)[m]
          for (int64_t i = 0; i < g_.dk; ++i) got += s[i * g_.dv + m] * kt[i];
          vt[static_cast<size_t>(m)] = bt * (vin[m] - got);
        }
      }
      for (int64_t i = 0; i < g_.dk; ++i)
        for (int64_t m = 0; m < g_.dv; ++m) s[i * g_.dv + m] += kt[i] * vt[static_cast<size_t>(m)];
      for (int64_t j = h * group; j < (h + 1) * group; ++j) {
        const T* qt = q + (row * g_.hq + j) * g_.dk;
        T* yt = y + (row * g_.hq + j) * g_.dv;
        for (int64_t m = 0; m < g_.dv; ++m) {
          T acc = 0;
          for (int64_t i = 0; i < g_.dk; ++i) acc += qt[i] * s[i * g_.dv + m];
          yt[m] = scale * acc;
        }
      }
    }
  }

  LinearGeo g_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_linear_attention(Ctx& c) {
  c.arity(4, 6, 2);
  LinearGeo g;
  const std::string rule = c.v.get_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    c.fail("update_rule must be 'linear', 'gated', 'delta' or 'gated_delta', got '" + rule + "'");
  g.gated = rule == "gated" || rule == "gated_delta";
  g.delta = rule == "delta" || rule == "gated_delta";
  const size_t want = 4 + (g.gated ? 1 : 0) + (g.delta ? 1 : 0);
  if (c.in.size() != want)
    c.fail("update_rule '" + rule + "' takes " + std::to_string(want) + " inputs, got " +
           std::to_string(c.in.size()));
  g.hq = c.v.get_int("q_num_heads", 0);
  g.hkv = c.v.get_int("kv_num_heads", 0);
  if (g.hq <= 0 || g.hkv <= 0 || g.hq % g.hkv != 0)
    c.fail("q_num_heads must be a positive multiple of kv_num_heads");
  c.rank(c.in[0], "query", 3);
  c.rank(c.in[2], "value", 3);
  g.b = c.in[0].dims[0];
  g.t = c.in[0].dims[1];
  if (c.in[0].dims[2] % g.hq != 0 || c.in[2].dims[2] % g.hkv != 0)
    c.fail("query's last dimension must be a multiple of q_num_heads, value's of kv_num_heads");
  g.dk = c.in[0].dims[2] / g.hq;
  g.dv = c.in[2].dims[2] / g.hkv;
  c.dims(c.in[1], "key", {g.b, g.t, g.hkv * g.dk});
  c.dims(c.in[2], "value", {g.b, g.t, g.hkv * g.dv});
  c.dims(c.in[3], "past_state", {g.b, g.hkv, g.dk, g.dv});
  size_t i = 4;
  if (g.gated) {
    const auto& d = c.in[i++].dims;
    g.decay_per_key = d.size() == 3 && d[2] == g.hkv * g.dk;
    c.dims(c.in[i - 1], "decay", {g.b, g.t, g.decay_per_key ? g.hkv * g.dk : g.hkv});
  }
  if (g.delta) {
    const auto& d = c.in[i].dims;
    g.beta_per_head = d.size() == 3 && d[2] == g.hkv;
    c.dims(c.in[i], "beta", {g.b, g.t, g.beta_per_head ? g.hkv : 1});
  }
  c.dims(c.out[0], "output", {g.b, g.t, g.hq * g.dv});
  c.dims(c.out[1], "present_state", {g.b, g.hkv, g.dk, g.dv});
  const double scale = c.v.get_float("scale", 0.0);
  if (!std::isfinite(scale)) c.fail("attribute 'scale' must be finite");
  g.scale = scale == 0.0 ? 1.0 / std::sqrt(static_cast<double>(g.dk)) : scale;
  return typed<LinearAttentionKernel>(c, g);
}

}  // namespace ampx::reference::detail
